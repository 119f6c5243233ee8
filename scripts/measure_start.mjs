#!/usr/bin/env node
// Time to a working page: runs `npm start` (or the command after --) in a checkout, waits for
// "Cairn is running at URL", then drives the page in headless Chromium (tests/e2e/chromium.mjs)
// until it answers a BM25 and a CatRAG query on the demo corpus, and prints the times (seconds from
// the command's start) as JSON. The server (and whatever it still builds) is stopped at the end.
//
//   node scripts/measure_start.mjs [--dir CHECKOUT] [--port 8123] [-- command args...]
//
// Default command: npm start -- --port PORT. Also reports what the method selector says about
// MiniLM and CAGE when the page is first answered. --wait-transformer: also wait for npm start's
// "[start] transformer package ..." line (its background build) before stopping, and time it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../tests/e2e/chromium.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
const own = dd < 0 ? argv : argv.slice(0, dd);
const opt = (name, dflt) => (own.includes(name) ? own[own.indexOf(name) + 1] : dflt);
const dir = path.resolve(opt('--dir', repoRoot));
const port = Number(opt('--port', '8123'));
const command = dd < 0 ? ['npm', 'start', '--', '--port', String(port)] : argv.slice(dd + 1);
const QUERY = 'Which magazine was started first, Arthur\'s Magazine or First for Women?';
const WAIT = 600_000;

const t0 = Date.now();
const since = () => Number(((Date.now() - t0) / 1000).toFixed(1));
const child = spawn(command[0], command.slice(1), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
const out = [];
let transformerDone = null;
const transformerLine = new Promise((resolve) => {
  transformerDone = resolve;
});
const url = await new Promise((resolve, reject) => {
  let buf = '';
  const onData = (d) => {
    process.stderr.write(d);
    buf += d;
    out.push(d.toString());
    const m = buf.match(/Cairn is running at (http:\/\/\S+)/);
    if (m) resolve(m[1]);
    const t = buf.match(/\[start\] (transformer package[^\n]*|the transformer package could not[^\n]*)\n/);
    if (t) transformerDone({ at: since(), line: t[1] });
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', (d) => process.stderr.write(d));
  child.on('exit', (code) => reject(new Error(`${command.join(' ')} exited (${code}) before serving`)));
});
const served = since();

// Stops the command and waits for it, so that /usr/bin/time around this script counts its CPU.
const stop = async () => {
  const exited = child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // gone
  }
  await exited;
};
let browser;
try {
  browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  const search = async (method) => {
    const prev = await page.getAttribute('#results', 'data-search');
    await page.selectOption('#method', method);
    await page.fill('#query', QUERY);
    await page.click('#search');
    await page.waitForFunction(
      ([p, m]) => {
        const d = document.getElementById('results').dataset;
        return d.search !== undefined && d.search !== p && d.method === m && document.querySelectorAll('#results .hit').length > 0;
      },
      [prev ?? undefined, method],
      { timeout: WAIT },
    );
    return page.$$eval('#results .hit .hit-id', (hs) => hs.slice(0, 3).map((h) => h.textContent));
  };
  const bm25Top = await search('bm25');
  const bm25 = since();
  const catragTop = await search('catrag');
  const catrag = since();
  const transformerOptions = await page.$$eval('#method option', (os) =>
    os.filter((o) => /minilm|cage/.test(o.value)).map((o) => `${o.value}: ${o.disabled ? 'disabled' : 'enabled'} "${o.textContent}"`),
  );
  const transformer = own.includes('--wait-transformer') ? await transformerLine : null;
  console.log(JSON.stringify({ command: command.join(' '), dir, served, bm25, catrag, bm25Top, catragTop, transformerOptions, transformer }, null, 2));
} finally {
  await browser?.close();
  await stop();
}
process.exit(0);
