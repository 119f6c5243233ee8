// Benchmark (not part of `node --test`): the graph methods' search time in the page before and
// after Dense (MiniLM) has been used, in one page. Serves dist/ (BENCH_DIST=DIR: another build),
// opens the page in headless Chromium on its demo corpus (997 HotpotQA passages), and for each
// METHOD (catrag and hipporag by default) searches the first N demo questions (20) and takes the
// page's own search times ("N results in X ms"); then chooses Dense (MiniLM), which embeds every
// passage, searches the same questions with it, and then with each METHOD again. Prints one JSON
// object: p50 and p95 per method before and after, and MiniLM's own search p50.
//
//   node tests/e2e/bench-graph-after-minilm.mjs [--questions 20] [--methods catrag,hipporag]
//   npm run bench:graph-after-minilm
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = process.env.BENCH_DIST || path.join(root, 'dist');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const N = Number.parseInt(opt('--questions', '20'), 10);
const METHODS = opt('--methods', 'catrag,hipporag').split(',');
const TIMEOUT = 15 * 60 * 1000;
if (!(N > 0)) throw new Error('--questions takes a positive number');
if (!fs.existsSync(path.join(dist, 'index.html'))) throw new Error(`${dist}/index.html is missing: run \`npm run build\` first`);

const questions = fs
  .readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'questions.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l).question)
  .slice(0, N);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const summary = (xs) => ({ p50: Number(pct(xs, 50).toFixed(2)), p95: Number(pct(xs, 95).toFixed(2)), n: xs.length });

/** Search `q` with the selected method; the page's own time for it (ms). */
async function searchMs(page, q, method) {
  const before = await page.$eval('#results', (r) => r.dataset.search || '');
  await page.fill('#query', q);
  await page.press('#query', 'Enter');
  await page.waitForFunction(
    ([b, m]) => {
      const d = document.getElementById('results').dataset;
      return d.search !== b && d.method === m;
    },
    [before, method],
    { timeout: TIMEOUT },
  );
  const meta = await page.textContent('#results-meta');
  const m = /results? in ([\d.]+) ms/.exec(meta);
  if (!m) throw new Error(`no time in "${meta}"`);
  return Number(m[1]);
}

/** Choose `method` (loading what it needs) and time the questions with it (after one warm-up). */
async function run(page, method) {
  await page.selectOption('#method', method);
  await searchMs(page, questions[0], method);
  const out = [];
  for (const q of questions) out.push(await searchMs(page, q, method));
  return out;
}

const server = await serve({ dir: dist, port: 0 });
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: TIMEOUT });
  const before = {};
  for (const m of METHODS) before[m] = summary(await run(page, m));
  const t0 = Date.now();
  const minilm = summary(await run(page, 'dense-minilm'));
  const minilmLoadS = Number(((Date.now() - t0) / 1000).toFixed(0));
  const after = {};
  for (const m of METHODS) after[m] = summary(await run(page, m));
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  console.log(JSON.stringify({ dist: path.relative(root, dist) || '.', questions: N, before, minilm, minilmLoadAndSearchS: minilmLoadS, after }, null, 2));
} finally {
  await browser.close();
  await server.close();
}
