// The npm package in somebody's own project: a fresh project installs pkg/ (`npm install
// --install-links`, so npm packs it as it would a published tarball), type-checks
// examples/web-app with tsc against the package's cairn.d.ts, bundles it with webpack, and runs
// it in Chromium twice, bundled and as plain <script type="module"> ES modules; the package's
// README example runs too. Each page searches the same passages directly, after saveIndex →
// loadIndex and inside a Web Worker.
//
// Needs pkg/ (`npm run build:wasm`). Run alone: node --test tests/e2e/examples.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = path.join(repo, 'examples', 'web-app');
const bin = (name) => path.join(repo, 'node_modules', '.bin', name);
let app;
let server;
let browser;

/** Run `cmd args` in the app's folder; the result, or an assertion error with its output. */
function run(cmd, args, { expectFail = false } = {}) {
  const r = spawnSync(cmd, args, { cwd: app, encoding: 'utf8' });
  if (!expectFail) assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r;
}

before(async () => {
  for (const f of ['cairn.js', 'cairn_bg.wasm', 'cairn.d.ts', 'package.json']) {
    if (!fs.existsSync(path.join(repo, 'pkg', f))) throw new Error(`pkg/${f} is missing: run \`npm run build:wasm\``);
  }
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-app-'));
  for (const f of ['src', 'plain', 'index.html', 'webpack.config.cjs', 'tsconfig.json']) {
    fs.cpSync(path.join(example, f), path.join(app, f), { recursive: true });
  }
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }));
  run('npm', ['install', '--offline', '--install-links', '--no-audit', '--no-fund', path.join(repo, 'pkg')]);
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

test('the installed package holds the web package, its types and its own README', () => {
  const installed = path.join(app, 'node_modules', 'cairn');
  assert.ok(!fs.lstatSync(installed).isSymbolicLink(), 'installed as a copy, not a link to pkg/');
  for (const f of ['cairn.js', 'cairn_bg.wasm', 'cairn.d.ts', 'README.md']) {
    assert.ok(fs.existsSync(path.join(installed, f)), `node_modules/cairn/${f}`);
  }
  const readme = fs.readFileSync(path.join(installed, 'README.md'), 'utf8');
  assert.equal(readme, fs.readFileSync(path.join(repo, 'docs', 'npm', 'README.md'), 'utf8'));
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.types, 'cairn.d.ts');
});

test('tsc type-checks the example against cairn.d.ts, and rejects a wrong call', () => {
  run(bin('tsc'), ['-p', 'tsconfig.json']);
  // The control: the same check fails on a call cairn.d.ts does not allow.
  const bad = path.join(app, 'src', 'wrong.js');
  fs.writeFileSync(bad, "// @ts-check\nimport { Engine } from 'cairn';\nnew Engine().query(42);\n");
  const r = run(bin('tsc'), ['-p', 'tsconfig.json'], { expectFail: true });
  fs.rmSync(bad);
  assert.notEqual(r.status, 0, 'tsc accepted query(42)');
  assert.match(r.stdout, /src\/wrong\.js.*Argument of type 'number' is not assignable to parameter of type 'Query'/);
});

test('webpack bundles the example: the page, the worker chunk and the wasm', () => {
  run(bin('webpack'), ['--config', 'webpack.config.cjs']);
  const dist = fs.readdirSync(path.join(app, 'dist'));
  assert.ok(dist.includes('main.js'), dist.join(' '));
  assert.equal(dist.filter((f) => f.endsWith('.wasm')).length, 1, `one wasm file: ${dist.join(' ')}`);
  assert.ok(dist.filter((f) => f.endsWith('.js')).length >= 2, `a worker chunk besides main.js: ${dist.join(' ')}`);
});

/** The example's outcome in the page at `url`: the JSON it shows once body[data-status] is set. */
async function outcome(url) {
  const tab = await browser.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  await tab.goto(url);
  await tab.waitForSelector('body[data-status]', { timeout: 60_000 });
  const status = await tab.getAttribute('body', 'data-status');
  const text = await tab.textContent('#out');
  await tab.close();
  assert.equal(status, 'done', `${url}: ${text} ${errors.join(' ')}`);
  return JSON.parse(text);
}

/** The example's passages hold each query's words in one passage only: BM25 ranks that one first. */
function assertRealResults(result) {
  for (const way of ['built', 'reloaded', 'worker']) {
    assert.deepEqual(result[way].map((r) => r.query), ['Who did Lothair II marry?', 'drummer of Rush'], way);
    assert.equal(result[way][0].ids[0], 'lothair', `${way}: ${JSON.stringify(result[way][0])}`);
    assert.equal(result[way][1].ids[0], 'peart', `${way}: ${JSON.stringify(result[way][1])}`);
    for (const r of result[way]) assert.ok(r.scores[0] > 0, `${way}: a positive BM25 score`);
  }
  // The saved and reloaded index, and the worker's own engine, rank exactly as the first engine.
  assert.deepEqual(result.reloaded, result.built);
  assert.deepEqual(result.worker, result.built);
  assert.ok(result.indexBytes > 0);
}

test('the bundled page and the plain ES-module page search, save/load and use a worker', async () => {
  server = await serve({ dir: app, port: 0 });
  browser = await launchChromium();
  const bundled = await outcome(new URL('index.html', server.url).href);
  assertRealResults(bundled);
  const plain = await outcome(new URL('plain/index.html', server.url).href);
  assertRealResults(plain);
  assert.deepEqual(plain, bundled);
  console.log(`# bundled and plain: ${JSON.stringify(bundled.built)} (index ${bundled.indexBytes} bytes)`);
});

test("the package README's example runs as written", async () => {
  const readme = fs.readFileSync(path.join(app, 'node_modules', 'cairn', 'README.md'), 'utf8');
  const code = readme.match(/```js\n([\s\S]*?)```/)[1];
  fs.writeFileSync(
    path.join(app, 'readme.html'),
    `<!doctype html><meta charset="utf-8"><script type="importmap">{"imports":{"cairn":"./node_modules/cairn/cairn.js"}}</script>
<script type="module">
${code}
</script>\n`,
  );
  const tab = await browser.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  const logged = new Promise((resolve) => tab.on('console', (m) => resolve(Promise.all(m.args().map((a) => a.jsonValue())))));
  await tab.goto(new URL('readme.html', server.url).href);
  let timer;
  const silent = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the example logged nothing: ${errors.join(' ')}`)), 60_000);
  });
  const args = await Promise.race([logged, silent]).finally(() => clearTimeout(timer));
  await tab.close();
  assert.deepEqual(args, [['lothair'], 'teutberga']);
});
