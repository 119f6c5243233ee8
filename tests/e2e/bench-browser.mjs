// Browser benchmark: `npm run bench:browser [-- METHOD] [CORPUS]` (not part of `node --test`).
// Serves dist/ and ../shared/data (as /shared-data), opens bench.html in headless Chromium on the
// 6,119-passage 2WikiMultihopQA corpus, and prints the page's JSON: passages, index ms,
// passages/s, and p50/p95 ms of 200 queries with METHOD (bm25 by default; dense and hybrid also
// report the embedder's download and the embedding of the whole corpus: embedMs,
// embedPassagesPerSec), the engine's wasm memory after indexing, after the graph build and after
// the searches (wasmMemoryStagesMB) and at the end, the benchmark's own PPR variants included
// (wasmMemoryMB), and the renderer's peak resident memory (rendererPeakMB, from /proc on Linux)
// with its resident memory at the end by kind (rendererEndMB: anon, file, shmem); the same after
// the searches, before the benchmark's own PPR variants (rendererPeakSearchedMB,
// rendererSearchedMB: the page holds there until this driver has read them).
// BENCH_DIST=DIR serves another build of the page instead of dist/ (a before/after comparison).
//
//   node tests/e2e/bench-browser.mjs [bm25|dense|hybrid|dense-minilm] [corpus path under /shared-data,
//                                    a .jsonl, default 2wiki-corpus-6k/corpus.jsonl] [--limit N]
//   npm run bench:browser -- dense
//   npm run bench:browser -- dense-minilm --limit 200   # MiniLM: a few passages a second
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = process.env.BENCH_DIST || path.join(root, 'dist');
const sharedData = path.resolve(root, '..', 'shared', 'data');
// arguments in any order: the one ending in .jsonl is the corpus, the other the method
let args = process.argv.slice(2);
let limit = 0;
const li = args.indexOf('--limit');
if (li >= 0) {
  limit = Number.parseInt(args[li + 1] ?? '', 10);
  if (!(limit > 0)) {
    console.error('bench-browser: --limit takes a positive number of passages');
    process.exit(1);
  }
  args = args.filter((_, i) => i !== li && i !== li + 1);
}
const corpus = args.find((a) => /\.jsonl$/i.test(a)) || '2wiki-corpus-6k/corpus.jsonl';
const method = args.find((a) => !/\.jsonl$/i.test(a)) || 'bm25';
const TIMEOUT = 10 * 60 * 1000;

function die(message) {
  console.error(`bench-browser: ${message}`);
  process.exit(1);
}

if (args.length > 2 || args.filter((a) => !/\.jsonl$/i.test(a)).length > 1) {
  die(`usage: node tests/e2e/bench-browser.mjs [method] [corpus.jsonl under ${path.join('..', 'shared', 'data')}], got ${JSON.stringify(args)}`);
}
if (!/^[a-z0-9-]+$/.test(method)) die(`${JSON.stringify(method)} is not a method name (bm25, dense, hybrid)`);
if (!fs.existsSync(path.join(dist, 'bench.html'))) die('dist/bench.html is missing: run `npm run build` first');
if (!fs.existsSync(path.join(sharedData, corpus))) die(`${path.join(sharedData, corpus)} is missing`);

/**
 * The page's renderer process's memory from /proc (Linux): `{peakMB}` (VmHWM) and `{byKindMB}`,
 * its resident memory now by kind: anonymous (the engine's wasm memory, the JavaScript heaps,
 * compiled code: what the page's own work holds), file-backed (mostly Chromium's own executable,
 * shared with its other processes) and shared memory. The page's renderer is the one with the
 * highest peak. `{error}` when it cannot be read.
 */
async function rendererMemory(browser) {
  try {
    const cdp = await browser.newBrowserCDPSession();
    const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
    await cdp.detach();
    const kB = (status, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    const page = processInfo
      .filter((p) => p.type === 'renderer')
      .map((p) => fs.readFileSync(`/proc/${p.id}/status`, 'utf8'))
      .filter((st) => Number.isFinite(kB(st, 'VmHWM')))
      .sort((a, b) => kB(b, 'VmHWM') - kB(a, 'VmHWM'))[0];
    if (!page) return { error: 'no renderer process found' };
    return {
      peakMB: Math.round(kB(page, 'VmHWM') / 1024),
      byKindMB: Object.fromEntries(['RssAnon', 'RssFile', 'RssShmem'].map((f) => [f.slice(3).toLowerCase(), Math.round(kB(page, f) / 1024)])),
    };
  } catch (err) {
    return { error: err.message };
  }
}

const server = await serve({ dir: dist, port: 0, mounts: { '/shared-data': sharedData } });
let browser;
try {
  browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const url = new URL(`bench.html?corpus=${encodeURIComponent(`/shared-data/${corpus}`)}&method=${method}${limit ? `&limit=${limit}` : ''}&hold=1`, server.url).href;
  console.error(`bench-browser: ${url}`);
  await page.goto(url);
  // The page holds after its searches: the renderer's memory there is what a user reaches
  // (indexing, the graph build, searches); the benchmark's own PPR variants come after.
  await page.waitForFunction(
    () => document.body.dataset.benchStage === 'searched' || document.getElementById('result').textContent.trim() !== '',
    null,
    { timeout: TIMEOUT },
  );
  const searched = await rendererMemory(browser);
  await page.evaluate(() => window.benchResume?.());
  await page.waitForFunction(() => document.getElementById('result').textContent.trim() !== '', null, {
    timeout: TIMEOUT,
  });
  const text = await page.textContent('#result');
  const result = JSON.parse(text);
  // peak resident memory of the renderer process (the page and its worker), from /proc (Linux)
  const end = await rendererMemory(browser);
  if (end.error) console.error(`bench-browser: renderer memory not read (${end.error})`);
  result.rendererPeakMB = end.peakMB ?? null;
  result.rendererEndMB = end.byKindMB ?? null;
  // before the benchmark's own PPR variants (exact solves and other stopping rules, which grow
  // the wasm memory by about 20 MB on 2wiki-corpus-6k): the peak of the page's real work
  result.rendererPeakSearchedMB = searched.peakMB ?? null;
  result.rendererSearchedMB = searched.byKindMB ?? null;
  console.log(JSON.stringify(result, null, 2));
  if (result.error || errors.length) {
    process.exitCode = 1;
    if (errors.length) console.error(`bench-browser: page errors: ${errors.join('; ')}`);
  }
} finally {
  await browser?.close();
  await server.close();
}
