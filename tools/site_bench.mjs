#!/usr/bin/env node
// Time to first result of the static-site widget in headless Chromium.
//
//   target/release/cairn index --jsonl ../shared/data/2wiki-corpus-6k --graph --method catrag --out /tmp/cairn-6k
//   node tools/site_bench.mjs --cairn /tmp/cairn-6k [--method catrag] [--query "…"] [--runs 3] [--gzip]
//
// Serves a one-page site with the widget (data-method) and the `cairn index` output at /cairn/,
// then per run, in a fresh browser context (cold cache): opens the page, focuses the box and
// types the query at once, and reports page load, the widget's load (manifest, wasm, index,
// embedder, Engine.loadIndex: `loadMs`), the first query's search time, time to first result
// from navigation start, and bytes transferred. A graph or vector method's widget shows BM25's
// results first (`firstResultMs`, `firstMethod`), then its own (`methodResultMs`,
// `bytes`). One JSON object on stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { launchChromium } from '../tests/e2e/chromium.mjs';
import { serve } from '../scripts/serve.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const cairnDir = path.resolve(opt('cairn', '/tmp/cairn-6k'));
const method = opt('method', '');
const query = opt('query', 'Who is the father of the director of film Polish Wedding?');
const runs = Number(opt('runs', 3));
// --gzip: serve every file gzip-compressed (-9), as static hosts (GitHub Pages, Netlify) do
const gzip = args.includes('--gzip');

const manifest = JSON.parse(fs.readFileSync(path.join(cairnDir, 'manifest.json'), 'utf8'));
const site = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-site-'));
fs.writeFileSync(path.join(site, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><title>bench</title></head>
<body><div id="cairn-search"${method ? ` data-method="${method}"` : ''}></div>
<script type="module" src="/cairn/cairn-search.js"></script></body></html>\n`);
let served = cairnDir;
if (gzip) {
  served = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-gz-'));
  fs.cpSync(cairnDir, served, { recursive: true });
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) walk(f);
      else if (!f.endsWith('.gz')) fs.writeFileSync(`${f}.gz`, zlib.gzipSync(fs.readFileSync(f), { level: 9 }));
    }
  };
  walk(served);
}
const server = await serve({ dir: site, port: 0, mounts: { '/cairn': served }, gzip });
const browser = await launchChromium();
const out = [];
try {
  for (let r = 0; r < runs; r++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    let bytes = 0;
    page.on('response', async (resp) => {
      bytes += Number(resp.headers()['content-length'] || 0);
    });
    const t0 = Date.now();
    await page.goto(server.url, { waitUntil: 'load' });
    const pageLoadMs = Date.now() - t0;
    await page.locator('#cairn-search input').fill(query);
    await page.waitForFunction(
      () => document.querySelectorAll('#cairn-search li').length > 0 || document.querySelector('#cairn-search').dataset.error,
      null,
      { timeout: 600_000 },
    );
    const firstResultMs = await page.evaluate(() => performance.now());
    let d = await page.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
    if (d.error) throw new Error(d.error);
    const firstMethod = d.shown;
    const top = await page.$$eval('#cairn-search li a', (as) => as.slice(0, 3).map((a) => a.textContent));
    // a graph or vector method answers once its files are in: BM25's results first, then its own
    const want = method || manifest.default_method;
    let methodResultMs = firstResultMs;
    // (a widget written before two-part indexes shows only the chosen method: no `shown`)
    if (firstMethod !== undefined && firstMethod !== want) {
      await page.waitForFunction(
        (m) => document.querySelector('#cairn-search').dataset.shown === m || document.querySelector('#cairn-search').dataset.error,
        want,
        { timeout: 600_000 },
      );
      methodResultMs = await page.evaluate(() => performance.now());
      d = await page.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
      if (d.error) throw new Error(d.error);
    }
    const methodTop = await page.$$eval('#cairn-search li a', (as) => as.slice(0, 3).map((a) => a.textContent));
    out.push({
      pageLoadMs,
      widgetLoadMs: Number(d.loadMs),
      loadIndexMs: Number(d.loadIndexMs),
      readyMs: d.readyMs === undefined ? null : Number(d.readyMs),
      searchMs: Number(d.searchMs),
      firstResultMs,
      firstMethod,
      methodResultMs,
      bytes,
      top,
      methodTop,
    });
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(site, { recursive: true, force: true });
  if (gzip) fs.rmSync(served, { recursive: true, force: true });
}
console.log(JSON.stringify({ cairn: cairnDir, gzip, method: method || manifest.default_method, query, manifest, runs: out }, null, 1));
