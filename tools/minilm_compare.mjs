#!/usr/bin/env node
// MiniLM in the browser: Cairn's package (tract, wasm simd128) beside onnxruntime-web on the same
// passages, the same token ids and the same length-sorted batches, in headless Chromium. Prints
// one JSON: passages/s and tokens/s of each runtime, the per-batch times, and the cosine between
// the two runtimes' vectors of each passage (mean and min) as a check that both ran the same model.
//
//   npm run build:wasm-minilm && bash tools/fetch_models.sh     # pkg-minilm/ and models/
//   npm install --prefix tools/minilm-compare                    # onnxruntime-web, for this tool only
//   node tools/minilm_compare.mjs [--limit 96] [--batch 16] [--threads 1] [--runtimes tract,ort]
//                                 [--corpus 2wiki-corpus-6k/corpus.jsonl] [--pkg pkg-minilm]
//                                 [--profile FILE.cpuprofile]   # Chromium's CPU profile, top self times
//
// The page is served cross-origin isolated (COOP/COEP), so onnxruntime-web may use --threads > 1
// (its wasm threads); Cairn's tract runs on the page's one thread.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';
import { launchChromium } from '../tests/e2e/chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
function opt(name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
}
const limit = Number(opt('limit', '96'));
const batch = Number(opt('batch', '16'));
const threads = Number(opt('threads', '1'));
const runtimes = opt('runtimes', 'tract,ort');
const corpus = opt('corpus', '2wiki-corpus-6k/corpus.jsonl');
const pkg = path.resolve(root, opt('pkg', 'pkg-minilm'));
const die = (m) => { console.error(`minilm_compare: ${m}`); process.exit(1); };
if (!(limit > 0 && batch > 0 && threads > 0)) die('--limit, --batch and --threads take positive numbers');

const mounts = {
  '/pkg-minilm': pkg,
  '/models': path.join(root, 'models'),
  '/ort': path.join(root, 'tools', 'minilm-compare', 'node_modules', 'onnxruntime-web', 'dist'),
  '/shared-data': path.resolve(root, '..', 'shared', 'data'),
  '/': path.join(root, 'tools', 'minilm-compare'),
};
const needs = {
  '/pkg-minilm': 'npm run build:wasm-minilm', '/models': 'bash tools/fetch_models.sh',
  '/ort': 'npm install --prefix tools/minilm-compare', '/shared-data': 'the shared data folder',
};
for (const [prefix, dir] of Object.entries(mounts)) {
  if (!fs.existsSync(dir)) die(`${dir} is missing: ${needs[prefix] || 'the tool is incomplete'}`);
}
if (!fs.existsSync(path.join(mounts['/shared-data'], corpus))) die(`${corpus} is not under ${mounts['/shared-data']}`);

const handlers = Object.entries(mounts)
  .sort((a, b) => b[0].length - a[0].length)
  .map(([prefix, dir]) => [prefix, sirv(dir, {
    dev: true,
    setHeaders(res, p) {
      if (p.endsWith('.wasm')) res.setHeader('Content-Type', 'application/wasm');
      // Cross-origin isolation: SharedArrayBuffer, so onnxruntime-web can run its wasm threads.
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    },
  })]);
const server = http.createServer((req, res) => {
  const pathname = (req.url || '/').split('?')[0];
  for (const [prefix, handler] of handlers) {
    if (prefix === '/' || pathname === prefix || pathname.startsWith(`${prefix}/`)) {
      if (prefix !== '/') req.url = req.url.slice(prefix.length) || '/';
      return handler(req, res, () => { res.writeHead(404); res.end(); });
    }
  }
  res.writeHead(404);
  res.end();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
let browser;
try {
  browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const q = new URLSearchParams({ corpus: `/shared-data/${corpus}`, limit, batch, threads, runtimes });
  const profile = opt('profile', null);
  let cdp = null;
  if (profile) {
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
    await cdp.send('Profiler.start');
  }
  await page.goto(`${base}/index.html?${q}`);
  await page.waitForFunction(() => document.getElementById('result').textContent.trim() !== '', null, { timeout: 30 * 60 * 1000 });
  if (cdp) {
    const { profile: p } = await cdp.send('Profiler.stop');
    fs.writeFileSync(profile, JSON.stringify(p));
    // Self time by function name (sample counts; the page's whole run, both runtimes).
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const counts = new Map();
    for (const id of p.samples) {
      const name = byId.get(id)?.callFrame.functionName || '(anonymous)';
      counts.set(name, (counts.get(name) || 0) + 1);
    }
    const total = p.samples.length;
    const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 40);
    console.error(`profile: ${total} samples, written to ${profile}`);
    for (const [name, n] of top) console.error(`${(100 * n / total).toFixed(1).padStart(5)}%  ${name.slice(0, 140)}`);
  }
  const out = JSON.parse(await page.textContent('#result'));
  if (out.error) die(`${out.error}\n${errors.join('\n')}`);
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser?.close();
  server.close();
}
