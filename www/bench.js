// Browser benchmark: bench.html?corpus=URL[&method=bm25|dense|hybrid|dense-minilm][&queries=200][&k=10][&limit=N][&hold=1]
// Indexes the JSONL at URL in the page's Web Worker (the same worker.js and messages as the search
// page) and times 200 queries, the titles of every (n/200)-th passage, with `method`. Writes one
// JSON object to <pre id="result">: {"error": "..."} when something fails.
//
// A method that needs the static embedder (dense, hybrid) loads it first, into the empty engine
// (embedderDownloadMs; embedderLoadMs = parsing and checking the table), so that indexing then
// times BM25 (bm25Ms) and the embedding of every passage (embedMs, embedPassagesPerSec) apart.
//
// dense-minilm indexes first (BM25), then loads the MiniLM package and model (minilmDownloadMs,
// minilmLoadMs) and embeds every passage with the transformer (embedMs, embedPassagesPerSec).
// `limit` keeps only the corpus's first N passages (MiniLM embeds a few passages a second).
import './style.css';

const params = new URLSearchParams(location.search);
const corpusUrl = params.get('corpus');
const QUERIES = clampInt(params.get('queries'), 200, 1, 10000);
const K = clampInt(params.get('k'), 10, 1, 1000);
const METHOD = params.get('method') || 'bm25';
const LIMIT = clampInt(params.get('limit'), 0, 0, 1e9);
// `hold=1`: wait after the searches, before the benchmark's own PPR variants, until the driver
// calls `window.benchResume()` (it reads the renderer's memory there: the peak a user reaches)
const HOLD = params.get('hold') === '1';
const WARMUP = 10;

const stateEl = document.getElementById('state');
const resultEl = document.getElementById('result');

function clampInt(s, dflt, lo, hi) {
  const n = Number.parseInt(s ?? '', 10);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : dflt;
}

function say(text) {
  stateEl.textContent = text;
}

/** A worker wrapper: `next(pred)` resolves with the first message matching `pred`. */
function engineWorker() {
  const worker = new Worker(/* webpackChunkName: "engine-worker" */ new URL('./worker.js', import.meta.url));
  let waiter = null;
  const backlog = [];
  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === 'progress') {
      if (msg.phase === 'indexing') say(`Indexing ${msg.done} / ${msg.total}…`);
      else if (msg.phase === 'embedding') say(`Embedding ${msg.done} / ${msg.total}…`);
      else if (msg.phase === 'download') say(`Downloading the embeddings: ${msg.done} / ${msg.total} bytes…`);
    else if (msg.phase === 'embedding-minilm') say(`Embedding with MiniLM ${msg.done} / ${msg.total}…`);
      return;
    }
    if (waiter) {
      if (msg.type === 'error') {
        const w = waiter;
        waiter = null;
        w.reject(new Error(`${msg.during}: ${msg.message}`));
      } else if (waiter.pred(msg)) {
        const w = waiter;
        waiter = null;
        w.resolve(msg);
      }
    } else {
      backlog.push(msg);
    }
  };
  worker.onerror = (event) => {
    event.preventDefault();
    if (waiter) waiter.reject(new Error(`the worker failed: ${event.message}`));
  };
  return {
    post: (m) => worker.postMessage(m),
    next(pred) {
      const i = backlog.findIndex((m) => m.type === 'error' || pred(m));
      if (i >= 0) {
        const [m] = backlog.splice(i, 1);
        return m.type === 'error' ? Promise.reject(new Error(`${m.during}: ${m.message}`)) : Promise.resolve(m);
      }
      return new Promise((resolve, reject) => {
        waiter = { pred, resolve, reject };
      });
    },
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i];
}

const round = (x, d = 3) => (x == null ? null : Number(x.toFixed(d)));

async function run() {
  if (!corpusUrl) throw new Error('add ?corpus=URL (a JSONL file on this origin) to the address');
  const engine = engineWorker();
  const hello = await engine.next((m) => m.type === 'hello');
  // what the method needs, as the engine describes it (methods())
  const info = hello.methods.find((m) => m.name === METHOD);
  if (!info) {
    throw new Error(`method=${METHOD}: this build knows ${hello.methods.map((m) => m.name).join(', ')}`);
  }
  const EMBEDDER_METHODS = hello.methods.filter((m) => m.needs.embedder === 'static' && !m.needs.cage).map((m) => m.name);
  const usesStatic = EMBEDDER_METHODS.includes(METHOD);
  const usesMinilm = info.needs.embedder === 'minilm';
  const graphMethod = info.needs.graph && !info.needs.cage;
  if (!hello.available.includes(METHOD) && !usesStatic && !usesMinilm) {
    throw new Error(`method=${METHOD} cannot run in the page (available: ${hello.available.join(', ')}; the static embedder adds ${EMBEDDER_METHODS.join(', ')})`);
  }

  say(`Downloading ${corpusUrl}…`);
  const t0 = performance.now();
  const resp = await fetch(corpusUrl);
  if (!resp.ok) throw new Error(`${corpusUrl}: ${resp.status} ${resp.statusText}`);
  let text = await resp.text();
  const fetchMs = performance.now() - t0;

  // the queries: titles (or, for untitled passages, the first words) of every (n/QUERIES)-th line
  let lines = text.split('\n').filter((l) => l.trim());
  if (LIMIT > 0 && lines.length > LIMIT) {
    lines = lines.slice(0, LIMIT);
    text = lines.join('\n');
  }
  const queries = [];
  for (let i = 0; i < QUERIES; i += 1) {
    const p = JSON.parse(lines[Math.floor((i * lines.length) / QUERIES)]);
    queries.push(p.title || String(p.text).split(/\s+/).slice(0, 8).join(' '));
  }

  let embedder = null;
  if (!hello.available.includes(METHOD) && !usesMinilm) {
    say('Loading the embeddings…');
    engine.post({ type: 'load-embedder', id: 1 });
    const loaded = await engine.next((m) => m.type === 'ready' && m.request === 'load-embedder');
    if (!loaded.available.includes('dense')) throw new Error(`the embeddings did not load, so ${METHOD} is not available`);
    embedder = { ...loaded.embedder, timing: loaded.timing };
  }

  // The engine's linear memory (it only grows, so each reading is the peak so far).
  const memoryMB = async () => {
    engine.post({ type: 'stats' });
    const { wasmMemoryBytes } = await engine.next((m) => m.type === 'stats');
    return wasmMemoryBytes == null ? null : round(wasmMemoryBytes / 1e6, 1);
  };
  const wasmMemoryStagesMB = {};

  say('Indexing…');
  const name = (new URL(corpusUrl, location.href).pathname.split('/').pop() || 'corpus') + (/\.jsonl$/i.test(corpusUrl) ? '' : '.jsonl');
  const t1 = performance.now();
  engine.post({ type: 'index-files', files: [{ name, text }], replace: true });
  // The benchmark's own copies of the corpus (about 6 MB each as UTF-16) are let go, so that the
  // renderer's memory from here on is the page's and the engine's, as when a person adds files.
  text = null;
  lines = null;
  const ready = await engine.next((m) => m.type === 'ready');
  const wallIndexMs = performance.now() - t1;
  if (!ready.changed) throw new Error('indexing failed');
  wasmMemoryStagesMB.indexed = await memoryMB();

  let graph = null;
  if (graphMethod) {
    say('Building the knowledge graph…');
    const tg = performance.now();
    engine.post({ type: 'load-embedder', id: 3, embedder: 'graph' });
    const built = await engine.next((m) => m.type === 'ready' && m.request === 'load-embedder');
    if (!built.available.includes(METHOD)) throw new Error(`the graph was not built, so ${METHOD} is not available`);
    wasmMemoryStagesMB.graphBuilt = await memoryMB();
    const c = built.graph.counts;
    graph = {
      graphBuildMs: round(built.timing.graphMs, 1),
      // the engine's own step times (Date.now(), whole milliseconds)
      graphStepsMs: Object.fromEntries(['extract_ms', 'add_ms', 'embed_ms', 'synonyms_ms', 'csr_ms']
        .map((k) => [k.replace(/_ms$/, ''), built.graph[k] == null ? null : round(built.graph[k], 0)])),
      graphWallMs: round(performance.now() - tg, 1),
      graphNodes: c.nodes,
      graphEntities: c.entity_nodes,
      graphFacts: c.facts,
      relationEdges: c.relation_edges,
      synonymEdges: c.synonym_edges,
      contextEdges: c.context_edges,
      triplesPerPassage: round(built.graph.triples / c.passages, 2),
      nonEnglishPassages: built.graph.extract ? built.graph.extract.non_english_passages : null,
    };
  }

  let minilm = null;
  if (usesMinilm) {
    say('Loading MiniLM and embedding every passage…');
    engine.post({ type: 'load-embedder', id: 2, embedder: 'minilm' });
    const loaded = await engine.next((m) => m.type === 'ready' && m.request === 'load-embedder');
    if (!loaded.available.includes(METHOD)) throw new Error(`MiniLM did not load, so ${METHOD} is not available`);
    const t = loaded.timing;
    minilm = {
      embedder: `minilm, ${loaded.minilm.dims}-d`,
      minilmMB: round(t.downloadBytes / 1e6, 2),
      minilmDownloadMs: round(t.downloadMs, 1),
      minilmLoadMs: round(t.loadMs, 1),
      bm25Ms: round(ready.timing.bm25Ms, 1),
      embedMs: round(t.embedMs, 1),
      embedPassagesPerSec: round(t.passages / (t.embedMs / 1000), 2),
    };
  }

  say('Searching…');
  const method = METHOD;
  for (let i = 0; i < WARMUP; i += 1) {
    engine.post({ type: 'search', id: -1 - i, query: queries[i % queries.length], k: K, method, explain: false });
    await engine.next((m) => m.type === 'results' && m.id === -1 - i);
  }
  const engineMs = [];
  const roundTripMs = [];
  let hitsTotal = 0;
  for (let i = 0; i < queries.length; i += 1) {
    const t = performance.now();
    engine.post({ type: 'search', id: i, query: queries[i], k: K, method, explain: false });
    const r = await engine.next((m) => m.type === 'results' && m.id === i);
    roundTripMs.push(performance.now() - t);
    engineMs.push(r.ms);
    hitsTotal += r.hits.length;
  }
  engineMs.sort((a, b) => a - b);
  roundTripMs.sort((a, b) => a - b);
  wasmMemoryStagesMB.searched = await memoryMB();
  if (HOLD) {
    await new Promise((resume) => {
      window.benchResume = resume;
      document.body.dataset.benchStage = 'searched';
    });
  }

  // graph methods: build steps, the query's parts and PPR alone (Engine.graphBench, the same
  // figures as the native `cairn bench --method catrag`)
  let graphBench = null;
  if (graphMethod) {
    say('Timing PPR…');
    engine.post({ type: 'graph-bench', id: 4, queries, method: METHOD });
    graphBench = (await engine.next((m) => m.type === 'graph-bench' && m.id === 4)).figures;
  }

  // the engine's linear memory now (wasm memory only grows: this is its peak, the benchmark's
  // own PPR variants included; the stages above are the peaks a user reaches)
  const wasmMemoryMB = await memoryMB();

  const { stats, timing } = ready;
  const indexMs = timing.addMs + timing.buildMs;
  const embedding = minilm || (embedder
    ? {
        embedder: `${embedder.name}, ${embedder.dims}-d`,
        embedderMB: round(embedder.timing.downloadBytes / 1e6, 2),
        embedderDownloadMs: round(embedder.timing.downloadMs, 1),
        embedderLoadMs: round(embedder.timing.loadMs, 1),
        bm25Ms: round(timing.bm25Ms, 1),
        embedMs: round(timing.embedMs, 1),
        embedPassagesPerSec: Math.round(stats.passages / (timing.embedMs / 1000)),
      }
    : { bm25Ms: round(timing.bm25Ms, 1) });
  return {
    corpus: corpusUrl,
    limit: LIMIT || null,
    engine: `cairn ${hello.version}`,
    method,
    embedders: stats.embedders,
    passages: stats.passages,
    terms: stats.terms,
    postings: stats.postings,
    textMB: round(stats.textBytes / 1e6, 2),
    indexMB: round(stats.indexBytes / 1e6, 2),
    fetchMs: round(fetchMs, 1),
    indexMs: round(indexMs, 1),
    addMs: round(timing.addMs, 1),
    buildMs: round(timing.buildMs, 1),
    indexWallMs: round(wallIndexMs, 1),
    passagesPerSec: Math.round(stats.passages / (indexMs / 1000)),
    ...embedding,
    ...(graph || {}),
    queries: queries.length,
    warmupQueries: WARMUP,
    k: K,
    meanHits: round(hitsTotal / queries.length, 2),
    p50Ms: round(percentile(engineMs, 0.5)),
    p95Ms: round(percentile(engineMs, 0.95)),
    maxMs: round(engineMs[engineMs.length - 1]),
    roundTripP50Ms: round(percentile(roundTripMs, 0.5)),
    roundTripP95Ms: round(percentile(roundTripMs, 0.95)),
    graphBench,
    wasmMemoryMB,
    wasmMemoryStagesMB,
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
  };
}

run()
  .then((result) => {
    say('Done.');
    resultEl.textContent = JSON.stringify(result, null, 2);
  })
  .catch((err) => {
    say('Failed.');
    resultEl.textContent = JSON.stringify({ error: err.message || String(err) }, null, 2);
  });
