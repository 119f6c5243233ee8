#!/usr/bin/env node
// Time and bytes to first result of the static-site widget in headless Chromium.
//
//   target/release/cairn index --jsonl ../shared/data/2wiki-corpus-6k --graph --method catrag --out /tmp/cairn-6k
//   node tools/site_bench.mjs --cairn /tmp/cairn-6k [--method catrag] [--query "…"] [--later "q1|q2|…"]
//        [--runs 3] [--gzip]
//
// Serves a one-page site with the widget (data-method, data-load="auto") and the `cairn index`
// output at /cairn/ from a plain static server (no compression unless --gzip), then per run, in a
// fresh browser context (cold cache): opens the page, focuses the box and types the query at
// once, and reports page load, the widget's load (manifest, wasm, index, embedder,
// Engine.loadIndex: `loadMs`), the first query's search time, time to first result from
// navigation start, and bytes transferred (every request of the page and of its workers). A graph
// or vector method's widget shows BM25's results first (`firstResultMs`, `firstMethod`), then its
// own (`methodResultMs`, `bytes`). `firstResultBytes` sums the files that had arrived by the
// first result, `files` lists each with its size and arrival, and `textsMs` is when the passages'
// texts were in (the widget's time from opening the index; the first list shows titles, the
// snippets follow). Then each `--later` query (default: six of the 2wiki questions) is typed in
// turn once the chosen method runs: `later` gives each one's bytes (requests made between typing
// it and its list) and time to its list, `laterBytesMean`. `longTasks` lists the page's
// main-thread tasks over 50 ms (PerformanceObserver 'longtask', loading and searching) and
// `longestTaskMs` the longest; `noResultsFlips` counts lists replaced by "No results." for an
// unchanged query. The bench's own waits poll every 100 ms (not every frame), so that they add
// few tasks of their own; `--trace` records a Chromium trace per run and lists each main-thread
// task over 50 ms with its longest inner events (`traceTasks`), which tells the page's and the
// widget's work apart from the navigation's and Playwright's (its injected script, `fill`'s forced
// layout). One JSON object on stdout.
//
//   node tools/site_bench.mjs --cairn DIR --load [--pkg pkg/] [--runs 3]
//
// `--load` times the index load alone, without the widget: a page fetches every file first,
// then times, on the main thread, inflating the base and the extras (`inflateMs`), the static
// embedder (`embedderMs`) and the text pipeline (`textMs`), `Engine.loadIndex` of the base
// (`baseMs`), `Engine.loadIndexTexts` (`textsMs`), `Engine.loadIndexExtras` (`extrasMs`;
// `loadMs` = base + texts + extras), then the first
// BM25 search (`bm25Ms`), the first and second searches of the manifest's graph or vector method
// (`methodMs`, `method2Ms`), each list's passage ids (to compare two packages' results) and
// the engine's own steps of the load (`phases`, `Engine.loadPhases`).
// `--pkg DIR` serves that wasm package (cairn.js, cairn_bg.wasm) instead of DIR's.
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
const later = opt('later', [
  'Where was the director of film The Sheriff Of Fractured Jaw born?',
  'Who was born first, Ivan Pavlov or Giuseppe Verdi?',
  'What nationality is the composer of Tosca?',
  'When did the director of film Hypocrite die?',
  'Which film came out first, The Love Route or Maraveyan?',
  'Who is the mother of the director of film Polish Wedding?',
].join('|')).split('|').filter(Boolean);
// --gzip: serve every file gzip-compressed (-9), as static hosts (GitHub Pages, Netlify) do
const gzip = args.includes('--gzip');

const manifest = JSON.parse(fs.readFileSync(path.join(cairnDir, 'manifest.json'), 'utf8'));
if (args.includes('--load')) {
  await loadBench();
  process.exit(0);
}

/** `--load`: the index load and the first searches, timed in the page (header comment). */
async function loadBench() {
  const pkg = opt('pkg', '');
  let dir = cairnDir;
  if (pkg) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-pkg-'));
    fs.cpSync(cairnDir, dir, { recursive: true });
    for (const f of ['cairn.js', 'cairn_bg.wasm']) fs.copyFileSync(path.join(pkg, f), path.join(dir, f));
  }
  const site = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-load-'));
  fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"><title>load</title></head><body></body></html>\n');
  const server = await serve({ dir: site, port: 0, mounts: { '/cairn': dir } });
  const browser = await launchChromium();
  const want = method || manifest.default_method;
  const out = [];
  try {
    for (let r = 0; r < runs; r++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on('requestfailed', (req) => console.error(`failed: ${req.url()} ${req.failure()?.errorText}`));
      await page.goto(server.url, { waitUntil: 'load' });
      out.push(await page.evaluate(async ({ m, q }) => {
        const base = new URL('/cairn/', location.href);
        const mod = await import(new URL('cairn.js', base).href);
        await mod.default({ module_or_path: new URL('cairn_bg.wasm', base) });
        const fetchOk = async (f) => {
          const resp = await fetch(new URL(f, base)).catch((e) => { throw new Error(`${f}: ${e.message}`); });
          if (!resp.ok) throw new Error(`${f}: HTTP ${resp.status}`);
          return resp;
        };
        const get = async (f) => new Uint8Array(await (await fetchOk(f)).arrayBuffer());
        const manifest = await (await fetchOk('manifest.json')).json();
        const [indexGz, textsGz, extrasGz, table, vocab, ...text] = await Promise.all([
          get(manifest.index),
          manifest.texts ? get(manifest.texts) : null,
          manifest.extras ? get(manifest.extras) : null,
          get(manifest.embedder.table),
          fetchOk(manifest.embedder.vocab).then((x) => x.text()),
          ...(manifest.text_pipeline || []).map(get),
        ]);
        // (a server may send a .gz with Content-Encoding: gzip, which the browser already undid)
        const inflate = async (b) => (b[0] !== 0x1f || b[1] !== 0x8b ? b : new Uint8Array(
          await new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer(),
        ));
        const t = { gzBytes: indexGz.length + (textsGz ? textsGz.length : 0) + (extrasGz ? extrasGz.length : 0) };
        let c = performance.now();
        const lap = (name) => {
          const now = performance.now();
          t[name] = Math.round((now - c) * 10) / 10;
          c = now;
        };
        const index = await inflate(indexGz);
        const texts = textsGz ? await inflate(textsGz) : null;
        const extras = extrasGz ? await inflate(extrasGz) : null;
        lap('inflateMs');
        t.rawBytes = index.length + (texts ? texts.length : 0) + (extras ? extras.length : 0);
        const engine = new mod.Engine();
        c = performance.now();
        engine.loadStaticEmbedder(table, vocab);
        lap('embedderMs');
        if (text.length) mod.loadTextPipeline(...text);
        lap('textMs');
        engine.loadIndex(index);
        lap('baseMs');
        if (texts) engine.loadIndexTexts(texts);
        lap('textsMs');
        if (extras) engine.loadIndexExtras(extras);
        lap('extrasMs');
        t.loadMs = Math.round((t.baseMs + t.textsMs + t.extrasMs) * 10) / 10;
        // the engine's own steps (a package without `loadPhases` has none)
        if (typeof engine.loadPhases === 'function') t.phases = Object.fromEntries(engine.loadPhases());
        const ids = (hits) => hits.map((h) => h.id);
        t.bm25Top = ids(engine.search(q, { k: 5, method: 'bm25' }));
        lap('bm25Ms');
        t.methodTop = ids(engine.search(q, { k: 5, method: m }));
        lap('methodMs');
        engine.search("Where was the director of film The Sheriff Of Fractured Jaw born?", { k: 5, method: m });
        lap('method2Ms');
        return t;
      }, { m: want, q: query }));
      await context.close();
    }
  } finally {
    await browser.close();
    await server.close();
    fs.rmSync(site, { recursive: true, force: true });
    if (pkg) fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ cairn: cairnDir, pkg: pkg || null, method: want, query, runs: out }, null, 1));
}
/**
 * Start a Chromium trace of `page`; `stop()` ends it and resolves to the renderer main thread's
 * tasks over 50 ms: [{ms, inner: ["event ms", …]}] with the eight longest events inside each.
 */
async function startTrace(context, page) {
  const cdp = await context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  const complete = new Promise((resolve) => cdp.on('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    categories: 'devtools.timeline,v8,blink,toplevel,disabled-by-default-devtools.timeline',
    transferMode: 'ReportEvents',
  });
  return {
    async stop() {
      await cdp.send('Tracing.end');
      await complete;
      const threads = new Map(events.filter((e) => e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, e.args.name]));
      const main = events.filter((e) => e.ph === 'X' && threads.get(`${e.pid}:${e.tid}`) === 'CrRendererMain');
      return main
        .filter((t) => t.name === 'RunTask' && t.dur > 50_000)
        .map((t) => ({
          ms: Math.round(t.dur / 1000),
          inner: main
            .filter((e) => e !== t && e.ts >= t.ts && e.ts + (e.dur || 0) <= t.ts + t.dur && e.dur > 5000)
            .sort((a, b) => b.dur - a.dur)
            .slice(0, 8)
            .map((e) => `${e.name} ${Math.round(e.dur / 1000)}`),
        }));
    },
  };
}

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-site-'));
fs.writeFileSync(path.join(site, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><title>bench</title></head>
<body><div id="cairn-search" data-load="auto"${method ? ` data-method="${method}"` : ''}></div>
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
    // the page's main-thread tasks over 50 ms, and lists replaced by "No results." for the same
    // query, from the first script on
    await context.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) window.__longTasks.push([Math.round(e.startTime), Math.round(e.duration)]);
      }).observe({ type: 'longtask', buffered: true });
      window.__flips = 0;
      let shownFor = null;
      const watch = () => {
        const root = document.querySelector('#cairn-search');
        if (!root) return;
        new MutationObserver(() => {
          const q = root.querySelector('input')?.value.trim();
          const items = root.querySelectorAll('li').length;
          const none = /No results/.test(root.querySelector('.cairn-status')?.textContent || '');
          if (items) shownFor = q;
          else if (none && shownFor === q) window.__flips += 1;
        }).observe(root, { subtree: true, childList: true, characterData: true });
      };
      document.addEventListener('DOMContentLoaded', watch);
    });
    const page = await context.newPage();
    const tracing = args.includes('--trace') ? await startTrace(context, page) : null;
    let bytes = 0;
    // every file (the page's and its workers'): its path, bytes on the wire (content-length) and
    // when it finished (ms since the run started), to sum what had arrived by the first result
    const files = [];
    context.on('requestfinished', async (req) => {
      const resp = await req.response();
      const n = Number(resp?.headers()['content-length'] || 0);
      bytes += n;
      files.push({ path: new URL(req.url()).pathname, bytes: n, doneMs: Date.now() - t0 });
    });
    const t0 = Date.now();
    await page.goto(server.url, { waitUntil: 'load' });
    const pageLoadMs = Date.now() - t0;
    await page.locator('#cairn-search input').fill(query);
    await page.waitForFunction(
      () => document.querySelectorAll('#cairn-search li').length > 0 || document.querySelector('#cairn-search').dataset.error,
      null,
      { timeout: 600_000, polling: 100 },
    );
    const firstResultMs = await page.evaluate(() => performance.now());
    const firstResultAt = Date.now() - t0;
    let d = await page.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
    if (d.error) throw new Error(d.error);
    const firstMethod = d.shown;
    const top = await page.$$eval('#cairn-search li .cairn-title', (as) => as.slice(0, 3).map((a) => a.textContent));
    // a graph or vector method answers once its files are in: BM25's results first, then its own
    const want = method || manifest.default_method;
    let methodResultMs = firstResultMs;
    // (a widget written before two-part indexes shows only the chosen method: no `shown`)
    if (firstMethod !== undefined && firstMethod !== want) {
      await page.waitForFunction(
        (m) => document.querySelector('#cairn-search').dataset.shown === m || document.querySelector('#cairn-search').dataset.error,
        want,
        { timeout: 600_000, polling: 100 },
      );
      methodResultMs = await page.evaluate(() => performance.now());
      d = await page.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
      if (d.error) throw new Error(d.error);
    }
    const methodTop = await page.$$eval('#cairn-search li .cairn-title', (as) => as.slice(0, 3).map((a) => a.textContent));
    // snippets follow the titles once the passages' texts are in
    if (manifest.texts) {
      await page.waitForFunction(() => document.querySelector('#cairn-search').dataset.textsMs !== undefined, null, { timeout: 600_000, polling: 100 });
      d = await page.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
    }
    // later queries, once everything the chosen method needs is in: bytes and time each
    const laterRuns = [];
    for (const q of later) {
      const before = bytes;
      const start = Date.now();
      await page.evaluate(() => { document.querySelector('#cairn-search').dataset.bench = 'wait'; });
      await page.evaluate(() => {
        const root = document.querySelector('#cairn-search');
        new MutationObserver((_, obs) => {
          if (root.querySelectorAll('li').length || /No results/.test(root.querySelector('.cairn-status').textContent)) {
            root.dataset.bench = 'done';
            obs.disconnect();
          }
        }).observe(root.querySelector('ol'), { childList: true });
      });
      await page.locator('#cairn-search input').fill(q);
      await page.locator('#cairn-search input').press('Enter');
      await page.waitForFunction(
        (text) => document.querySelector('#cairn-search').dataset.bench === 'done'
          && document.querySelector('#cairn-search input').value.trim() === text,
        q,
        { timeout: 600_000, polling: 100 },
      );
      // requests still in flight for it
      await page.waitForTimeout(50);
      laterRuns.push({ q, ms: Date.now() - start, bytes: bytes - before, shown: await page.evaluate(() => document.querySelector('#cairn-search').dataset.shown) });
    }
    const traceTasks = tracing ? await tracing.stop() : undefined;
    const longTasks = await page.evaluate(() => window.__longTasks);
    const noResultsFlips = await page.evaluate(() => window.__flips);
    out.push({
      longestTaskMs: longTasks.reduce((m, [, dur]) => Math.max(m, dur), 0),
      longTasks,
      traceTasks,
      noResultsFlips,
      laterBytesMean: laterRuns.length ? Math.round(laterRuns.reduce((a, r) => a + r.bytes, 0) / laterRuns.length) : null,
      later: laterRuns,
      pageLoadMs,
      widgetLoadMs: Number(d.loadMs),
      loadIndexMs: Number(d.loadIndexMs),
      readyMs: d.readyMs === undefined ? null : Number(d.readyMs),
      searchMs: Number(d.searchMs),
      firstResultMs,
      // the bytes of the files that had arrived when the first list was on screen (the files the
      // loader fetches later, as the passages' texts, may have begun)
      firstResultBytes: files.filter((f) => f.doneMs <= firstResultAt).reduce((a, f) => a + f.bytes, 0),
      textsMs: d.textsMs === undefined ? null : Number(d.textsMs),
      firstMethod,
      methodResultMs,
      bytes,
      top,
      methodTop,
      files: files.sort((a, b) => a.doneMs - b.doneMs),
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
