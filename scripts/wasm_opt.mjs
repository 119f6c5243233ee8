#!/usr/bin/env node
// Optimise a wasm file in place with Binaryen's wasm-opt (the npm package `binaryen`, a
// devDependency), through a cache keyed by content: the same input bytes, flags and Binaryen
// version give the cached output without running wasm-opt again.
//
//   node scripts/wasm_opt.mjs FILE.wasm [wasm-opt flags...]     # default flags: -O3
//
// The cache is target/wasm-opt-cache/<sha256>.wasm (the newest 8 files are kept; the environment
// variable CAIRN_WASM_OPT_CACHE names another folder). wasm-pack's own
// wasm-opt step is off (Cargo.toml, [package.metadata.wasm-pack.profile.release]) and the
// `build:wasm*` scripts run this after it. CAIRN_WASM_OPT=0 skips optimising (the file is left as
// wasm-bindgen wrote it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CACHE_DIR = process.env.CAIRN_WASM_OPT_CACHE || path.join(repoRoot, 'target', 'wasm-opt-cache');
const KEEP = 8;
export const DEFAULT_FLAGS = ['-O3'];

function binaryen() {
  const dir = path.join(repoRoot, 'node_modules', 'binaryen');
  const bin = path.join(dir, 'bin', 'wasm-opt');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run npm ci (binaryen is a devDependency)`);
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return { bin, version };
}

function prune() {
  const files = fs
    .readdirSync(CACHE_DIR)
    .filter((f) => f.endsWith('.wasm'))
    .map((f) => ({ f, t: fs.statSync(path.join(CACHE_DIR, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { f } of files.slice(KEEP)) fs.rmSync(path.join(CACHE_DIR, f), { force: true });
}

/**
 * Optimise `file` in place with `flags`. Returns `{cached, ms, before, after}` (sizes in bytes).
 * Throws when wasm-opt fails (the file is then left unchanged).
 */
export function wasmOpt(file, flags = DEFAULT_FLAGS) {
  const t0 = Date.now();
  const input = fs.readFileSync(file);
  const { bin, version } = binaryen();
  const key = crypto
    .createHash('sha256')
    .update(`binaryen ${version}\n${flags.join(' ')}\n`)
    .update(input)
    .digest('hex');
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const cached = path.join(CACHE_DIR, `${key}.wasm`);
  if (fs.existsSync(cached)) {
    fs.copyFileSync(cached, file);
    const now = new Date();
    fs.utimesSync(cached, now, now);
    return { cached: true, ms: Date.now() - t0, before: input.length, after: fs.statSync(file).size };
  }
  const tmp = `${cached}.${process.pid}.tmp`;
  const run = spawnSync(process.execPath, [bin, file, '-o', tmp, ...flags], { stdio: 'inherit' });
  if (run.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`wasm-opt ${flags.join(' ')} ${file} failed (${run.error ? run.error.message : `exit ${run.status}`})`);
  }
  fs.renameSync(tmp, cached);
  fs.copyFileSync(cached, file);
  prune();
  return { cached: false, ms: Date.now() - t0, before: input.length, after: fs.statSync(file).size };
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const [file, ...rest] = process.argv.slice(2);
  if (!file || file === '-h' || file === '--help') {
    console.error('usage: node scripts/wasm_opt.mjs FILE.wasm [wasm-opt flags...]   (default -O3)');
    process.exit(file ? 0 : 2);
  }
  if (process.env.CAIRN_WASM_OPT === '0') {
    console.error(`[wasm-opt] skipped for ${file} (CAIRN_WASM_OPT=0)`);
    process.exit(0);
  }
  const flags = rest.length ? rest : DEFAULT_FLAGS;
  try {
    const r = wasmOpt(file, flags);
    const mb = (n) => (n / 1e6).toFixed(2);
    console.error(
      `[wasm-opt] ${file} ${flags.join(' ')}: ${mb(r.before)} MB -> ${mb(r.after)} MB, ` +
        `${r.cached ? 'from the cache' : 'optimised'} in ${(r.ms / 1000).toFixed(1)} s`,
    );
  } catch (err) {
    console.error(`wasm_opt.mjs: ${err.message}`);
    process.exit(1);
  }
}
