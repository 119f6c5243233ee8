// CAGE in headless Chromium with the RELEASE wasm packages that `npm run build` makes:
// pkg/ (passage graphs, tensors, fusion) and pkg-minilm/ (tract's R-GCN, class CageModel).
// `node --test tests/e2e/cage.test.mjs`; needs `npm run build` (pkg/, pkg-minilm/, dist/).
//
// (a) tract-in-wasm's R-GCN output equals tests/fixtures/cage/rgcn-reference.json (z from the
//     training side's float64 forward pass with the dequantised int8 weights) within
//     max |Δz| ≤ 1e-4 · max |z|, the tolerance of tests/cage.rs: what `test:wasm-cage` checked
//     with a debug build.
// (b) the time to rerank 20 candidates: a CAGE search (first stage, then coherence over the
//     candidates' STORED graph embeddings and fusion; no R-GCN per query) over the 997-passage
//     HotpotQA demo corpus, for 25 of its questions, median printed, after the one-off
//     computation of every passage's Z (timed too); and the MuSiQue pool of
//     tests/fixtures/cage/pool20.json.
// (c) the page: choose CAGE on the demo corpus, search, see the coherence scores, open a result's
//     passage graph and see an SVG with nodes and typed edges (screenshot); for each CAGE method,
//     the hint and the results line name its own first stage, and the results line gives the
//     rerank's own time (the engine's) apart from the first stage's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');
const WAIT = 120_000;

let browser;
// the built page, dist/ (with the model and embedder files webpack copied to dist/assets/), and
// the two release packages as wasm-pack wrote them, at /pkg/ and /pkg-minilm/
let server;

before(async () => {
  for (const f of ['pkg/cairn.js', 'pkg-minilm/cairn_minilm.js', 'dist/index.html', 'assets/cage/rgcn-int8.onnx']) {
    if (!fs.existsSync(path.join(root, f))) throw new Error(`${f} is missing: run \`npm run build\` before this test`);
  }
  server = await serve({ dir: dist, port: 0, mounts: { '/pkg': path.join(root, 'pkg'), '/pkg-minilm': path.join(root, 'pkg-minilm') } });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** A page on the repository's server with both release packages and the static embedder loaded. */
async function packagesPage(t) {
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(new URL('pkg/package.json', server.url).href);
  await page.evaluate(async () => {
    const cairn = await import('/pkg/cairn.js');
    await cairn.default();
    const mini = await import('/pkg-minilm/cairn_minilm.js');
    await mini.default();
    const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
    // the passage graphs run the English text pipeline, whose files ship beside the package
    cairn.loadTextPipeline(...(await Promise.all(cairn.textPipelineFiles().map((f) => bytes(`/pkg/text/${f}`)))));
    const table = await bytes('/assets/static-minilm.bin');
    const vocab = await (await fetch('/assets/minilm-vocab.txt')).text();
    const model = new mini.CageModel(await bytes('/assets/cage/rgcn-int8.onnx'));
    /** A built engine with the static embedder over `jsonl`. */
    globalThis.engineOf = (jsonl) => {
      const e = new cairn.Engine(undefined);
      e.loadStaticEmbedder(table, vocab, undefined);
      e.addJsonl('corpus', jsonl);
      e.build(undefined);
      return e;
    };
    /** Compute and store every passage's Z (once): {rows (passage positions), z, ms}. */
    globalThis.cageEmbedAll = (e) => {
      const t0 = performance.now();
      const rows = [];
      const z = [];
      let todo = e.cageMissing(model.fingerprint, { limit: 16 });
      while (todo.rows.length) {
        const out = model.encode(Float32Array.from(todo.features), Float32Array.from(todo.adjacency), todo.batch, todo.nodes);
        e.cageStore(model.fingerprint, Uint32Array.from(todo.rows), out, model.dim);
        rows.push(...todo.rows);
        z.push(...out);
        todo = e.cageMissing(model.fingerprint, { limit: 16 });
      }
      return { rows, z, ms: performance.now() - t0 };
    };
    /** A CAGE query over stored graph embeddings, timed: {hits, ms}. */
    globalThis.cageSearch = (e, query, method = 'cage', k = 5) => {
      const t0 = performance.now();
      const { hits } = e.query({ query, k, method });
      return { hits, ms: performance.now() - t0 };
    };
    globalThis.cageModel = model;
  });
  return { page, errors };
}

test('(a) the release tract R-GCN in wasm equals the training reference', { timeout: WAIT }, async (t) => {
  const { page, errors } = await packagesPage(t);
  const fx = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'fixtures', 'cage', 'rgcn-reference.json'), 'utf8'));
  assert.equal(fx.model, 'rgcn-int8.onnx');
  const r = await page.evaluate((fx) => {
    const jsonl = fx.passages.map(([title, text], i) => JSON.stringify({ id: `p${i}`, title, text })).join('\n');
    const e = engineOf(jsonl);
    const before = e.availableMethods().includes('cage');
    const { rows, z } = cageEmbedAll(e);
    const dim = cageModel.dim;
    let diff = 0;
    let scale = 0;
    rows.forEach((i, row) => {
      for (let j = 0; j < dim; j += 1) {
        const want = fx.z_reference[i * dim + j];
        scale = Math.max(scale, Math.abs(want));
        diff = Math.max(diff, Math.abs(z[row * dim + j] - want));
      }
    });
    return { dim, rows, zLength: z.length, diff, scale, before, after: e.availableMethods().includes('cage') };
  }, fx);
  console.log(`CAGE release wasm vs reference: max |Δz| ${r.diff.toExponential(3)} (max |z| ${r.scale.toFixed(3)}), ${r.rows.length} graphs`);
  assert.equal(r.dim, 128);
  assert.deepEqual(r.rows, fx.passages.map((_, i) => i));
  assert.equal(r.before, false, 'cage is not available before every passage has its Z');
  assert.equal(r.after, true, 'cage is available once every passage has its Z');
  assert.equal(r.zLength, fx.z_reference.length);
  assert.ok(r.scale > 1, `a reference of near-zeros checks nothing (max |z| ${r.scale})`);
  assert.ok(r.diff <= 1e-4 * r.scale, `max |Δz| ${r.diff} > 1e-4 · ${r.scale}`);
  assert.deepEqual(errors, []);
});

// CageConfig's default α (src/cage/mod.rs)
const ALPHA = Number(fs.readFileSync(path.join(root, 'src', 'cage', 'mod.rs'), 'utf8').match(/alpha: ([0-9.]+),\n\s+beta:/)[1]);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

test('(b) the time to rerank 20 candidates with the release wasm (median over 25 queries)', { timeout: 300_000 }, async (t) => {
  const { page, errors } = await packagesPage(t);
  const corpus = fs.readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'corpus.jsonl'), 'utf8');
  const questions = fs
    .readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'questions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, 25)
    .map((l) => JSON.parse(l).question);
  assert.equal(questions.length, 25);
  const r = await page.evaluate(({ corpus, questions }) => {
    const e = engineOf(corpus);
    const embed = cageEmbedAll(e);
    cageSearch(e, questions[0]); // warm-up
    const runs = questions.map((q) => {
      const s = cageSearch(e, q, 'cage', 20);
      // the first stage alone, to separate CAGE's own share
      const t0 = performance.now();
      e.query({ query: q, k: 20, method: 'dense' });
      const denseMs = performance.now() - t0;
      return { ms: s.ms, denseMs, hits: s.hits.length, finite: s.hits.every((h) => Number.isFinite(h.score) && Number.isFinite(h.coherence) && Number.isFinite(h.relevance)) };
    });
    return { passages: e.stats().passages, embedded: embed.rows.length, embedMs: embed.ms, runs };
  }, { corpus, questions });
  assert.equal(r.passages, 997);
  assert.equal(r.embedded, 997);
  assert.ok(r.runs.every((x) => x.hits === 20), 'every query should rerank 20 candidates');
  assert.ok(r.runs.every((x) => x.finite), 'every score should be a finite number');
  const total = median(r.runs.map((x) => x.ms));
  const dense = median(r.runs.map((x) => x.denseMs));
  console.log(
    `CAGE search with 20 candidates over stored Z, release wasm, headless Chromium, HotpotQA demo (997 passages), 25 queries: ` +
      `median ${total.toFixed(2)} ms per query (dense first stage alone ${dense.toFixed(2)} ms, so the rerank ≈ ${(total - dense).toFixed(2)} ms; ` +
      `min ${Math.min(...r.runs.map((x) => x.ms)).toFixed(2)}, max ${Math.max(...r.runs.map((x) => x.ms)).toFixed(2)} ms); ` +
      `computing all 997 Z once: ${r.embedMs.toFixed(0)} ms`,
  );

  // the MuSiQue pool of the former wasm test: its question over its own 20 passages
  const pool = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'fixtures', 'cage', 'pool20.json'), 'utf8'));
  const p = await page.evaluate((pool) => {
    const e = engineOf(pool.passages.map((x) => JSON.stringify({ id: x.id, title: x.title, text: x.text })).join('\n'));
    cageEmbedAll(e);
    cageSearch(e, pool.question, 'cage', 20);
    const times = [];
    let last = null;
    for (let i = 0; i < 21; i += 1) {
      last = cageSearch(e, pool.question, 'cage', 20);
      times.push(last.ms);
    }
    return { times, hits: last.hits.length };
  }, pool);
  assert.equal(p.hits, 20);
  console.log(`CAGE rerank of the MuSiQue pool20 fixture (20 candidates), release wasm: median ${median(p.times).toFixed(1)} ms over 21 runs`);
  assert.deepEqual(errors, []);
});

// Each CAGE method's first stage as the engine names it in a results line (Method::short_label),
// and the names of the others, which its texts must not use.
const FIRST_STAGE = { cage: 'dense', 'bm25+cage': 'BM25', 'catrag+cage': 'CatRAG' };

/**
 * The page's texts after a `method` search: the hint under the selector and the results line name
 * its first stage (and no other); the results line gives the first stage's time and the rerank's
 * own, which is a small part of the whole search's (the rerank compares 20 stored vectors).
 */
async function checkCageTexts(page, method) {
  const first = FIRST_STAGE[method];
  const hint = await page.textContent('#method-hint');
  assert.match(hint, new RegExp(`the top 20 of ${first} are reranked`), `${method}: hint "${hint}"`);
  const meta = await page.textContent('#results-meta');
  const m = /^5 results in ([\d.]+) ms · (.+?) \((.+)\)$/.exec(meta);
  assert.ok(m, `${method}: results line "${meta}"`);
  const [, totalMs, short, detail] = m;
  assert.equal(short, { cage: 'CAGE', 'bm25+cage': 'BM25 + CAGE', 'catrag+cage': 'CatRAG + CAGE' }[method]);
  const d = /^(?:\d+ new passages embedded first, [\d.]+ ms; )?(.+)'s top 20 found in ([\d.]+) ms; 20 candidates reranked from stored graph embeddings in ([\d.]+) ms$/.exec(detail);
  assert.ok(d, `${method}: CAGE detail "${detail}"`);
  const [, named, firstMs, rerankMs] = d;
  assert.equal(named, first, `${method}: the first stage named in "${detail}"`);
  for (const other of Object.values(FIRST_STAGE).filter((x) => x !== first)) {
    assert.ok(!new RegExp(`\\b${other}\\b`).test(hint.replace(/CatRAG \+ CAGE|BM25 \+ CAGE/g, '')), `${method}: hint names ${other}: "${hint}"`);
  }
  // the parts add up to at most the whole (rounded as shown), and the rerank is not the whole
  assert.ok(Number(firstMs) + Number(rerankMs) <= Number(totalMs) * 1.05 + 0.1, `${method}: ${firstMs} + ${rerankMs} > ${totalMs}`);
  assert.ok(Number(rerankMs) < Number(totalMs), `${method}: the rerank (${rerankMs} ms) is reported apart from the whole search (${totalMs} ms)`);
  console.log(`page, ${method}: "${meta}"`);
}

test('(c) the page: CAGE on the demo corpus shows coherence scores and draws a passage graph', { timeout: 240_000 }, async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  const options = await page.$$eval('#method option', (os) => os.filter((o) => !o.disabled).map((o) => o.value));
  for (const m of ['cage', 'bm25+cage', 'catrag+cage']) assert.ok(options.includes(m), `${m} should be selectable`);
  // choosing the method loads CAGE (static embeddings, the tract package, the R-GCN) at once
  await page.selectOption('#method', 'cage');
  assert.match(await page.textContent('#method-hint'), /Loading CAGE/);
  await page.waitForFunction(() => /^CAGE loaded \(R-GCN, 128-d/.test(document.getElementById('method-hint').textContent), null, { timeout: WAIT });
  // the demo's first HotpotQA question
  const query = JSON.parse(fs.readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'questions.jsonl'), 'utf8').split('\n')[0]).question;
  await page.fill('#query', query);
  await page.press('#query', 'Enter');
  await page.waitForFunction(() => document.getElementById('results').dataset.method === 'cage', null, { timeout: WAIT });
  const scores = await page.$$eval('[data-testid="cage-scores"]', (rows) =>
    rows.map((r) => ({ relevance: Number(r.dataset.relevance), coherence: Number(r.dataset.coherence), score: Number(r.dataset.score), text: r.textContent })),
  );
  assert.equal(scores.length, 5, 'each of the 5 results should show its CAGE scores');
  await checkCageTexts(page, 'cage');
  for (const s of scores) {
    assert.ok(Number.isFinite(s.coherence) && s.coherence >= -1 && s.coherence <= 1, `coherence ${s.coherence} should be a cosine`);
    assert.ok(Number.isFinite(s.relevance) && s.relevance >= 0 && s.relevance <= 1, `relevance ${s.relevance} should be a min-max normalised first-stage score`);
    // fused = α·relevance + (1 − α)·minmax(coherence), minmax in [0, 1]
    assert.ok(s.score >= ALPHA * s.relevance - 1e-5 && s.score <= ALPHA * s.relevance + (1 - ALPHA) + 1e-5, `fused ${s.score} vs relevance ${s.relevance}`);
    assert.match(s.text, /coherence/);
  }
  for (let i = 1; i < scores.length; i += 1) assert.ok(scores[i - 1].score >= scores[i].score, 'results should be in fused-score order');

  await page.click('[data-testid="cage-graph"] >> nth=0 >> summary');
  const svgSel = '[data-testid="cage-graph"] >> nth=0 >> [data-testid="cage-graph-svg"]';
  await page.waitForSelector(svgSel, { timeout: WAIT });
  const drawn = await page.$eval('[data-testid="cage-graph"] [data-testid="cage-graph-svg"]', (s) => ({
    nodes: s.querySelectorAll('circle').length,
    factual: s.querySelectorAll('.cage-node.min-out').length,
    edges: [...s.querySelectorAll('line.cage-edge')].map((l) => l.dataset.relation),
    legend: [...s.closest('.cage-graph-box').querySelectorAll('[data-testid="cage-legend"] li')].map((li) => li.textContent),
  }));
  assert.ok(drawn.nodes >= 3, `the passage graph should have nodes (${drawn.nodes})`);
  assert.ok(drawn.factual >= 1, 'minimum out-degree nodes should be marked');
  assert.ok(drawn.edges.length >= 2, `the passage graph should have edges (${drawn.edges.length})`);
  const relations = new Set(drawn.edges);
  assert.ok(relations.size >= 2, `edges should be typed by relation (${[...relations]})`);
  for (const r of relations) assert.ok(['nsubj', 'dobj', 'prep', 'amod', 'compound', 'poss', 'appos', 'conj', 'cop'].includes(r), `unknown relation ${r}`);
  for (const r of relations) assert.ok(drawn.legend.includes(r), `the legend should name ${r}`);
  console.log(`page: CAGE passage graph of the top result: ${drawn.nodes} nodes, ${drawn.edges.length} edges, relations ${[...relations].join(', ')}`);
  fs.mkdirSync(screenshots, { recursive: true });
  await page.locator('#results li >> nth=0').screenshot({ path: path.join(screenshots, 'cage-graph.png') });
  await page.screenshot({ path: path.join(screenshots, 'cage.png'), fullPage: false });

  // the other two first stages: choosing a method searches the last query again; catrag+cage
  // builds the knowledge graph first
  for (const method of ['bm25+cage', 'catrag+cage']) {
    await page.selectOption('#method', method);
    await page.waitForFunction((m) => document.getElementById('results').dataset.method === m, method, { timeout: WAIT });
    const rows = await page.$$eval('[data-testid="cage-scores"]', (rs) => rs.map((r) => Number(r.dataset.coherence)));
    assert.equal(rows.length, 5, `${method}: each result should show its CAGE scores`);
    assert.ok(rows.every((c) => Number.isFinite(c) && c >= -1 && c <= 1), `${method}: coherences ${rows}`);
    await checkCageTexts(page, method);
  }
  assert.deepEqual(errors, []);
});

test('(d) CAGE and dense-minilm share the MiniLM package: its wasm is fetched once', { timeout: 240_000 }, async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  const fetched = [];
  page.on('pageerror', (e) => errors.push(e.message));
  context.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  // a small corpus, so that MiniLM embeds it in seconds
  await page.fill('#paste', [
    'Quokkas are small wallabies that live on Rottnest Island near Perth in Western Australia.',
    'Basalt cairns on the Isle of Skye mark the paths that walkers follow across the moor.',
    'The kakapo is a flightless parrot of New Zealand that feeds at night on seeds and fruit.',
  ].join('\n\n'));
  await page.check('#mode-replace');
  await page.click('#index-text');
  await page.waitForFunction(() => /^3 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  await page.fill('#query', 'which animal lives near Perth');
  await page.press('#query', 'Enter');
  await page.waitForFunction(() => document.getElementById('results').dataset.method === 'bm25', null, { timeout: WAIT });
  for (const method of ['cage', 'dense-minilm']) {
    await page.selectOption('#method', method);
    await page.waitForFunction((m) => document.getElementById('results').dataset.method === m, method, { timeout: WAIT });
  }
  const top = await page.$eval('#results li', (li) => li.dataset.id);
  assert.equal(top, 'pasted text#1', 'MiniLM should rank the quokka passage first for "which animal lives near Perth"');
  const wasm = fetched.filter((p) => /cairn_minilm.*\.wasm$/.test(p));
  assert.equal(wasm.length, 1, `the MiniLM package's wasm should be fetched once, got ${JSON.stringify(wasm)}`);
  assert.equal(fetched.filter((p) => p.endsWith('/rgcn-int8.onnx')).length, 1);
  assert.equal(fetched.filter((p) => p.endsWith('/minilm-int8.onnx')).length, 1);
  assert.deepEqual(errors, []);
});
