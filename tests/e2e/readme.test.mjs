// README.md stays true: its marked figures (package and model sizes, the index format version)
// match the files (scripts/readme_figures.mjs), and its JS API example runs as written, in Node
// against the built packages (pkg/, pkg-minilm/, models/: after `npm run build`).
//   node --test tests/e2e/readme.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkFigures, README } from '../../scripts/readme_figures.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test("the README's marked figures are the files' real values (within 2 %)", () => {
  const results = checkFigures();
  const off = results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.why}`);
  assert.deepEqual(off, [], `${off.join('\n')}\n(node scripts/readme_figures.mjs --write rewrites them)`);
  assert.ok(results.length >= 6, `${results.length} figures checked`);
});

test('the figure check notices a stale figure', () => {
  const readme = fs.readFileSync(README, 'utf8');
  const stale = readme.replace(/(<!-- fig:static-table -->)[^<]*/, '$17.0 MB').replace(/(<!-- fig:format-version -->)[^<]*/, '$13');
  // the figures that pass on the real README and fail on the stale one
  const okBefore = new Set(checkFigures(readme).filter((r) => r.ok).map((r) => r.name));
  const off = checkFigures(stale).filter((r) => !r.ok && okBefore.has(r.name)).map((r) => r.name);
  assert.deepEqual(off.sort(), ['format-version', 'static-table']);
});

/** The README's code block that follows its "## The JS API" heading. */
function jsApiExample() {
  const readme = fs.readFileSync(README, 'utf8');
  const section = readme.slice(readme.indexOf('## The JS API'));
  const m = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(m, 'README.md has a ```js block under "## The JS API"');
  return m[1];
}

/**
 * fetch as a page served from the repository's root sees it: a relative URL or a file: URL reads
 * the repository's file (a .wasm with its content type, as a server sends it).
 */
function repositoryFetch(url) {
  const u = new URL(String(url instanceof Request ? url.url : url), pathToFileURL(`${repoRoot}/`));
  if (u.protocol !== 'file:') throw new Error(`the README example fetched ${u}, outside the repository`);
  const file = fileURLToPath(u);
  if (!fs.existsSync(file)) return Promise.resolve(new Response('not found', { status: 404 }));
  const type = file.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
  return Promise.resolve(new Response(fs.readFileSync(file), { headers: { 'Content-Type': type } }));
}

test('the JS API example runs as written against the built packages', { timeout: 300_000 }, async () => {
  // The example's module, in a folder where its relative imports (./pkg/…, ./pkg-minilm/…) lead
  // to the repository's packages; its top-level names are exported for the checks below.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-readme-'));
  for (const p of ['pkg', 'pkg-minilm']) fs.symlinkSync(path.join(repoRoot, p), path.join(dir, p));
  const file = path.join(dir, 'example.mjs');
  fs.writeFileSync(file, `${jsApiExample()}\nexport { engine, hits, next, texts, model };\n`);
  const realFetch = globalThis.fetch;
  const logged = [];
  const realLog = console.log;
  globalThis.fetch = repositoryFetch;
  console.log = (...a) => logged.push(a.join(' '));
  let ex;
  try {
    ex = await import(pathToFileURL(file).href);
  } finally {
    globalThis.fetch = realFetch;
    console.log = realLog;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // What the example states in its comments, checked on what it computed.
  assert.equal(ex.hits[0].id, 'p1', 'BM25 finds Paris for "capital of France"');
  assert.equal(ex.texts.length, 4, 'p1, the two JSONL passages and the Markdown paragraph');
  assert.equal(ex.model.dims, 384);
  assert.ok(logged.some((l) => /^\w[\w-]* \d+\/\d+$/.test(l)), `build progress logged: ${logged.slice(0, 3)}`);
  assert.throws(() => ex.engine.stats(), 'the example frees the first engine at its end');
  assert.equal(ex.next.stats().passages, 0);
  assert.ok(ex.next.availableMethods().includes('dense'), 'emptyLike keeps the static embedder');
});
