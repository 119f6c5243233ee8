// CAGE rerank cost in headless Chromium with the RELEASE wasm package (pkg/, `npm run build:wasm`):
// not part of `node --test`. Loads an index file that holds every passage's graph embedding Z
// (`cairn index --cage`: its --out folder, whose index.cairn.gz and extras.cairn.gz are read; or
// one index file saved by the page), so no R-GCN and no tract package is involved, then for each question
// of a questions.jsonl times, per query (all questions in one timed pass, --reps passes, median):
//   - `Engine.query({query: q, k: 5, method: FIRST})` — the first stage alone;
//   - `Engine.query({query: q, k: 5, method: FIRST+cage})` — the same first stage (its top N = 20),
//     then the N × N cosines of the stored int8 codes, coherence and fusion.
// Both return 5 hits to JavaScript (with their highlights), so the difference is the rerank's
// cost (taking the top 20 instead of the top 5 from the first stage's scores included).
//
//   target/release/cairn index --jsonl ../shared/data/2wiki-corpus-6k --cage --out /tmp/6k-cage
//   node tests/e2e/bench-cage-browser.mjs /tmp/6k-cage ../shared/data/2wikimultihopqa/questions.jsonl [bm25|catrag] [--reps 5]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let args = process.argv.slice(2);
let reps = 5;
const ri = args.indexOf('--reps');
if (ri >= 0) {
  reps = Number.parseInt(args[ri + 1] ?? '', 10);
  args = args.filter((_, i) => i !== ri && i !== ri + 1);
}
const [indexFile, questionsFile, first = 'bm25'] = args;
function die(message) {
  console.error(`bench-cage-browser: ${message}`);
  process.exit(1);
}
if (!indexFile || !questionsFile) die('usage: node tests/e2e/bench-cage-browser.mjs INDEX.cairn QUESTIONS.jsonl [bm25|catrag] [--reps N]');
if (!(reps > 0)) die('--reps takes a positive number');
if (!/^(bm25|catrag|dense)$/.test(first)) die(`first stage ${JSON.stringify(first)}: expected bm25, dense or catrag`);
for (const f of ['pkg/cairn.js', 'assets/static-minilm.bin', 'assets/minilm-vocab.txt']) {
  if (!fs.existsSync(path.join(root, f))) die(`${f} is missing (run \`npm run build:wasm\`)`);
}
const questions = fs
  .readFileSync(questionsFile, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l).question);

const dir = fs.mkdtempSync('/tmp/bench-cage-');
const source = path.resolve(indexFile);
if (fs.statSync(source).isDirectory()) {
  // a `cairn index --out` folder: the base and the extras (which hold Z), inflated
  fs.writeFileSync(path.join(dir, 'index.cairn'), zlib.gunzipSync(fs.readFileSync(path.join(source, 'index.cairn.gz'))));
  fs.writeFileSync(path.join(dir, 'extras.cairn'), zlib.gunzipSync(fs.readFileSync(path.join(source, 'extras.cairn.gz'))));
} else {
  fs.copyFileSync(source, path.join(dir, 'index.cairn'));
}
fs.writeFileSync(path.join(dir, 'questions.json'), JSON.stringify(questions));
// the server serves a folder with a page; this one is blank (the script runs in page.evaluate)
fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>CAGE rerank benchmark</title>');
const server = await serve({
  dir,
  port: 0,
  mounts: { '/pkg': path.join(root, 'pkg'), '/assets': path.join(root, 'assets') },
});
let browser;
try {
  browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  const result = await page.evaluate(
    async ({ first, reps }) => {
      const cairn = await import('/pkg/cairn.js');
      await cairn.default();
      const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
      const e = new cairn.Engine(undefined);
      e.loadStaticEmbedder(await bytes('/assets/static-minilm.bin'), await (await fetch('/assets/minilm-vocab.txt')).text(), undefined);
      let t0 = performance.now();
      let stats = e.loadIndex(await bytes('/index.cairn'), undefined);
      const extras = await fetch('/extras.cairn');
      if (extras.ok) stats = e.loadIndexExtras(new Uint8Array(await extras.arrayBuffer()), undefined);
      const loadMs = performance.now() - t0;
      const questions = await (await fetch('/questions.json')).json();
      const cageMethod = `${first}+cage`;
      const n = 20;
      const median = (v) => {
        const s = [...v].sort((a, b) => a - b);
        return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
      };
      // one warm-up pass (the graph methods build their query-time structures lazily)
      for (const q of questions.slice(0, 3)) {
        e.query({ query: q, k: 5, method: first });
        e.query({ query: q, k: 5, method: cageMethod });
      }
      // Timer resolution in a page is coarse (0.1 ms without cross-origin isolation), so each
      // pass times all questions in one go; passes alternate the two calls; medians of passes.
      const firstPass = [];
      const cagePass = [];
      for (let r = 0; r < reps; r++) {
        t0 = performance.now();
        for (const q of questions) e.query({ query: q, k: 5, method: first });
        firstPass.push((performance.now() - t0) / questions.length);
        t0 = performance.now();
        for (const q of questions) e.query({ query: q, k: 5, method: cageMethod });
        cagePass.push((performance.now() - t0) / questions.length);
      }
      const firstMs = median(firstPass);
      const cageMs = median(cagePass);
      return {
        passages: stats.passages ?? null,
        loadMs,
        questions: questions.length,
        reps,
        firstStage: first,
        firstStageMsPerQuery: firstMs,
        cageSearchMsPerQuery: cageMs,
        rerankMsPerQuery: cageMs - firstMs,
        passesFirstStage: firstPass,
        passesCage: cagePass,
      };
    },
    { first, reps },
  );
  console.log(JSON.stringify(result, null, 2));
  if (errors.length) {
    process.exitCode = 1;
    console.error(`bench-cage-browser: page errors: ${errors.join('; ')}`);
  }
} finally {
  await browser?.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
