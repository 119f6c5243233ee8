#!/usr/bin/env node
// `npm start`: set-up, the main wasm package (pkg/) and the page (dist/), then serve it and print
// its address; the transformer package (pkg-minilm/: MiniLM and CAGE, minutes to build on a fresh
// clone) is built after that, in the background, and the page is built again with it. Until then
// the page runs every other method and says, where MiniLM and CAGE are offered, that the
// transformer package is still being built.
//
//   node scripts/start.mjs [serve.mjs options: --port 8080 --dir dist --mount /prefix=folder]
//
// The page is built only when one of its inputs changed (a hash of them is kept in dist/).
// The background build writes its output to target/start-transformer.log and prints one line when
// it is done (or failed). Ctrl-C stops the server and the background build.
//
// It is the first command of a fresh clone: everything it imports before its set-up step has run
// is Node's own (serve.mjs imports its npm package, sirv, only when it starts serving);
// tests/scripts/fresh-start.mjs runs it from a copy of the repository without node_modules.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, serve } from './serve.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LOG = path.join(repoRoot, 'target', 'start-transformer.log');
const TRANSFORMER_FILES = ['pkg-minilm/cairn_minilm.js', 'pkg-minilm/cairn_minilm_bg.wasm', 'models/minilm-int8.onnx'];
// webpack copies the model into the page only when it builds with the transformer package.
const PAGE_HAS_TRANSFORMER = 'dist/models/minilm-int8.onnx';

// The page's inputs: when their hash equals dist/'s stamp, the page is not built again.
const PAGE_INPUTS = ['www', 'webpack.config.js', 'package-lock.json', 'pkg', 'pkg-minilm', 'assets', 'models/minilm-int8.onnx'];
const PAGE_STAMP = 'dist/.cairn-page-inputs';

const say = (s) => console.log(`[start] ${s}`);
const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

function step(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[start] ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
}

/** A hash of every file under the page's inputs (names and contents; missing ones count as such). */
function pageInputsHash() {
  const h = crypto.createHash('sha256');
  const add = (rel) => {
    const p = path.join(repoRoot, rel);
    if (!fs.existsSync(p)) {
      h.update(`missing ${rel}\n`);
      return;
    }
    if (fs.statSync(p).isDirectory()) {
      for (const e of fs.readdirSync(p).sort()) add(path.join(rel, e));
      return;
    }
    // wasm-pack copies the repository's README and writes type declarations: not part of the page
    if (/^pkg/.test(rel) && !/\.(js|wasm)$/.test(rel)) return;
    h.update(`${rel}\n`).update(fs.readFileSync(p));
  };
  for (const rel of PAGE_INPUTS) add(rel);
  h.update(`CAIRN_WEB_KEEP_OLD and CAIRN_REQUIRE_TRANSFORMER do not change the page\n`);
  return h.digest('hex');
}

/** Build the page (dist/) unless its stamp says it was built from these very inputs. */
function buildPage() {
  const want = pageInputsHash();
  const stamp = path.join(repoRoot, PAGE_STAMP);
  if (fs.existsSync(path.join(repoRoot, 'dist', 'index.html')) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) {
    say('the page (dist/) is up to date');
    return;
  }
  step('npm', ['run', 'build:web']);
  fs.writeFileSync(stamp, want);
}

/** A hash of the transformer package's files and the model ('' when one is missing). */
function transformerHash() {
  const h = crypto.createHash('sha256');
  for (const f of TRANSFORMER_FILES) {
    const p = path.join(repoRoot, f);
    if (!fs.existsSync(p)) return '';
    h.update(f).update(fs.readFileSync(p));
  }
  return h.digest('hex');
}

/**
 * In the background: the models, the transformer package, then the page again when the package
 * changed or the served page was built without it. Resolves with the exit status of the first
 * failing command (0 when all succeed) and whether the page was rebuilt.
 */
function buildTransformer(onChild) {
  fs.mkdirSync(path.dirname(LOG), { recursive: true });
  const out = fs.openSync(LOG, 'w');
  const run = (cmd, args, env = {}) =>
    new Promise((resolve) => {
      fs.writeSync(out, `\n$ ${cmd} ${args.join(' ')}\n`);
      const child = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', out, out], detached: true, env: { ...process.env, ...env } });
      onChild(child);
      child.on('error', () => resolve(1));
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  return (async () => {
    const before = transformerHash();
    let status = await run('bash', ['tools/fetch_models.sh']);
    if (status === 0) status = await run('npm', ['run', 'build:wasm-minilm']);
    if (status !== 0) return { status, rebuilt: false };
    const after = transformerHash();
    const stale = after !== before || !fs.existsSync(path.join(repoRoot, PAGE_HAS_TRANSFORMER));
    if (!stale) return { status: 0, rebuilt: false };
    const inputs = pageInputsHash();
    status = await run('npm', ['run', 'build:web'], { CAIRN_WEB_KEEP_OLD: '1', CAIRN_REQUIRE_TRANSFORMER: '1' });
    if (status === 0) fs.writeFileSync(path.join(repoRoot, PAGE_STAMP), inputs);
    return { status, rebuilt: status === 0 };
  })();
}

const opts = parseArgs(process.argv.slice(2));
const t0 = Date.now();
step('bash', ['scripts/setup.sh']);
step('npm', ['run', 'build:wasm']);
buildPage();

let server;
try {
  server = await serve(opts);
} catch (err) {
  console.error(`[start] ${err.message}`);
  process.exit(1);
}
console.log(`Cairn is running at ${server.url}`);
say(`page built and served in ${seconds(t0)}`);

let child = null;
const stop = () => {
  if (child && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  server.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

const tb = Date.now();
say(`building the transformer package (MiniLM, CAGE) in the background; log: ${path.relative(repoRoot, LOG)}`);
const { status, rebuilt } = await buildTransformer((c) => {
  child = c;
});
child = null;
if (status !== 0) say(`the transformer package could not be built (see ${path.relative(repoRoot, LOG)}); every other method works`);
else if (rebuilt) say(`transformer package built and the page rebuilt in ${seconds(tb)}: reload the page for MiniLM and CAGE`);
else say(`transformer package up to date (${seconds(tb)}): MiniLM and CAGE are in the page`);
