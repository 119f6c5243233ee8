// `npm start` is the first command of a fresh clone: from a copy of the repository's files
// (tracked and untracked, not ignored: what a clone of this state holds, so no node_modules, pkg,
// dist or target) it sets up, builds and serves the page, and the address it prints answers.
// Ctrl-C's signal then stops it and everything it started.
//
// To keep this to a minute or two, the copy keeps the files' modification times and shares this
// checkout's cargo target folder (CARGO_TARGET_DIR), wasm-opt cache and npm cache: cargo finds the
// wasm package's build up to date (run after `npm run build`, as `npm test` does; otherwise it
// builds it) and `npm ci` installs from the cache. Everything else runs as on a fresh clone.
//   node --test tests/e2e/fresh-start.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Copy the files a clone of this checkout's state holds into `dest`, keeping their times. */
function copyCheckout(dest) {
  const list = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot })
    .toString('utf8')
    .split('\0')
    .filter(Boolean);
  let n = 0;
  for (const rel of list) {
    const from = path.join(repoRoot, rel);
    if (!fs.existsSync(from)) continue; // deleted in the work tree, not yet committed
    const to = path.join(dest, rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { preserveTimestamps: true, verbatimSymlinks: true });
    n += 1;
  }
  return n;
}

/** The processes whose working folder is under `dir` (their pids). */
function processesUnder(dir) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) out.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('npm start on a fresh copy serves the page; its signal stops it and its children', { timeout: 900_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-fresh-'));
  t.after(() => {
    for (const pid of processesUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const files = copyCheckout(dir);
  for (const absent of ['node_modules', 'pkg', 'pkg-minilm', 'dist', 'target', 'models']) {
    assert.ok(!fs.existsSync(path.join(dir, absent)), `${absent} is not in a fresh copy`);
  }

  const env = {
    ...process.env,
    CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR || path.join(repoRoot, 'target'),
    CAIRN_WASM_OPT_CACHE: process.env.CAIRN_WASM_OPT_CACHE || path.join(repoRoot, 'target', 'wasm-opt-cache'),
    npm_config_prefer_offline: 'true',
  };
  // npm's own variables of an enclosing `npm test` would point npm at this checkout.
  for (const k of Object.keys(env)) if (/^npm_(package|lifecycle)_|^INIT_CWD$/.test(k)) delete env[k];
  const t0 = Date.now();
  const child = spawn('npm', ['start', '--', '--port', '0'], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // when each step said it was done, for the diagnostics (seconds since the start)
  const marks = [];
  const STEPS = /\[setup\] ready|Finished `release`|\[wasm-opt\][^\n]*|compiled (?:successfully|with \d+ warnings?)|Cairn is running/g;
  const take = (d) => {
    output += d;
    for (const m of String(d).match(STEPS) || []) marks.push(`${m.slice(0, 60)} @ ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

  const url = await Promise.race([
    (async () => {
      for (;;) {
        const m = output.match(/Cairn is running at (http:\/\/\S+)/);
        if (m) return m[1];
        await sleep(200);
      }
    })(),
    exited.then(({ code, signal }) => {
      throw new Error(`npm start exited (${code ?? signal}) before serving:\n${output.slice(-4000)}`);
    }),
  ]);
  const servedMs = Date.now() - t0;
  const res = await fetch(url);
  const html = await res.text();
  const answeredMs = Date.now() - t0;
  assert.equal(res.status, 200, output.slice(-2000));
  assert.match(html, /<title>[^<]*Cairn/i);
  assert.match(output, /installing npm packages \(npm ci\)/, 'set-up installed the npm packages');
  t.diagnostic(`${files} files; address printed after ${(servedMs / 1000).toFixed(1)} s, answered after ${(answeredMs / 1000).toFixed(1)} s`);
  t.diagnostic(`steps: ${marks.join('; ')}`);

  // Ctrl-C's signal to npm start's process group: the server and the background build stop.
  process.kill(-child.pid, 'SIGINT');
  const end = await Promise.race([exited, sleep(30_000).then(() => null)]);
  assert.ok(end, `npm start still runs 30 s after SIGINT:\n${output.slice(-2000)}`);
  let left = processesUnder(dir);
  for (let i = 0; i < 50 && left.length; i += 1) {
    await sleep(200);
    left = processesUnder(dir);
  }
  assert.deepEqual(left, [], `processes left running in the copy: ${left.map((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      return p;
    }
  }).join('; ')}`);
  await assert.rejects(fetch(url), 'the server is closed');
});
