// scripts/wasm_opt.mjs: wasm-opt really optimises (a constant add folds to a constant, checked by
// running the module), the same input, flags and Binaryen version come from the cache with the same
// bytes, and other flags or other input miss it.
//   node --test tests/scripts/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-wasm-opt-'));
process.env.CAIRN_WASM_OPT_CACHE = path.join(tmp, 'cache');
const { wasmOpt } = await import('../../scripts/wasm_opt.mjs');

// (module (func (export "f") (result i32) (i32.add (i32.const 1) (i32.const N))))
const moduleAdding = (n) =>
  Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f,
    0x03, 0x02, 0x01, 0x00,
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00,
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x41, 0x01, 0x41, n, 0x6a, 0x0b,
  ]);

async function run(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes);
  return instance.exports.f();
}

test('optimises, then serves the same input from the cache; other flags or input miss it', { timeout: 120_000 }, async () => {
  const file = path.join(tmp, 'm.wasm');
  const input = moduleAdding(2);
  assert.equal(await run(input), 3);

  fs.writeFileSync(file, input);
  const first = wasmOpt(file, ['-O3']);
  const optimised = fs.readFileSync(file);
  assert.equal(first.cached, false);
  assert.equal(first.before, input.length);
  assert.ok(optimised.length < input.length, `-O3 should fold 1 + 2: ${optimised.length} >= ${input.length} bytes`);
  assert.equal(await run(optimised), 3);

  fs.writeFileSync(file, input);
  const second = wasmOpt(file, ['-O3']);
  assert.equal(second.cached, true);
  assert.deepEqual(fs.readFileSync(file), optimised);

  fs.writeFileSync(file, input);
  assert.equal(wasmOpt(file, ['-O1']).cached, false, 'other flags are another key');

  fs.writeFileSync(file, moduleAdding(5));
  assert.equal(wasmOpt(file, ['-O3']).cached, false, 'other input is another key');
  assert.equal(await run(fs.readFileSync(file)), 6);
  assert.equal(fs.readdirSync(process.env.CAIRN_WASM_OPT_CACHE).filter((f) => f.endsWith('.wasm')).length, 3);
});

test('a wasm-opt failure leaves the file unchanged and caches nothing', { timeout: 60_000 }, () => {
  const file = path.join(tmp, 'broken.wasm');
  const bytes = Buffer.from('not a wasm module');
  fs.writeFileSync(file, bytes);
  const before = fs.readdirSync(process.env.CAIRN_WASM_OPT_CACHE).length;
  assert.throws(() => wasmOpt(file, ['-O3']), /wasm-opt -O3 .* failed/);
  assert.deepEqual(fs.readFileSync(file), bytes);
  assert.equal(fs.readdirSync(process.env.CAIRN_WASM_OPT_CACHE).length, before);
});
