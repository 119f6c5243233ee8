// The engine worker's CAGE methods: loading the R-GCN, computing the passages' graph embeddings
// once, and a CAGE search.
import { CAGE_MODEL_URL, MINILM_WASM_URL, minilmModule } from './embedders.js';
import { buildGraphOrFail, needStaticEmbedderAndPassages } from './graph.js';
import {
  METHOD_INFO, TRANSFORMER_MISSING, TRANSFORMER_PACKAGE, cage, downloadWithProgress, embedderDownload, engine,
  loadReplies, minilmPackage, now, post, setCage, setEmbedderDownload,
} from './state.js';

// ---------------------------------------------------------------- CAGE
//
// CAGE (docs/method/spec.md §4) reranks the first stage's top 20 by the coherence of their passage graphs'
// R-GCN embeddings Z. Z depends on the passage alone, so it is computed once per passage and
// stored in the engine (and in a saved index): the main package builds the graphs and tensors of
// passages without one (Engine.cageMissing), the R-GCN runs with tract in the MiniLM package's
// CageModel, and Engine.cageStore keeps the result. A query (Engine.query) then only
// compares the 20 candidates' stored Z: no model runs per query. Choosing a CAGE method first
// fetches the MiniLM package's wasm (shared with dense-minilm, fetched once) and the 330 KB int8
// model, both from this site, unless every passage already has its Z (a loaded index).


/**
 * Make `method` (a CAGE method) available: the static embedder, the knowledge graph for
 * catrag+cage, then the MiniLM package and the R-GCN. Replies 'ready' with `embedderName:
 * 'cage'` (`cancelled` when a cancel stopped a download, `failed` on an error).
 */
export async function loadCage(id, method) {
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
    setEmbedderDownload(controller);
    let wasmBytes = null;
    let modelBytes;
    const t1 = now();
    try {
      if (minilmPackage) [modelBytes] = await downloadWithProgress([CAGE_MODEL_URL], controller.signal, 'cage');
      else [wasmBytes, modelBytes] = await downloadWithProgress([MINILM_WASM_URL, CAGE_MODEL_URL], controller.signal, 'cage');
    } catch (err) {
      if (controller.signal.aborted) reply({ cancelled: true });
      else fail('CAGE could not be loaded', err);
      return;
    } finally {
      if (embedderDownload === controller) setEmbedderDownload(null);
    }
    downloadMs = now() - t1;
    downloadBytes = (wasmBytes ? wasmBytes.length : 0) + modelBytes.length;
    const t2 = now();
    post({ type: 'progress', phase: 'loading-model', done: 0, total: 1 });
    try {
      const mod = await minilmModule(wasmBytes);
      const model = new mod.CageModel(modelBytes);
      setCage({ model, dim: model.dim });
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
export function cageEmbedMissing() {
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
 * Before a CAGE method's query: passages added since the graph embeddings were computed get
 * theirs. Returns `{embedded, embedMs}`. Throws when CAGE is not ready for `method`.
 */
export function cagePrepare(method) {
  const t0 = now();
  const embedded = cageEmbedMissing();
  if (!engine.availableMethods().includes(method)) {
    throw new Error(`${method} needs CAGE's graph embeddings, which are not computed: choose the method again`);
  }
  return { embedded, embedMs: now() - t0 };
}

/**
 * The 'results' message's `cage` part of a CAGE method's query (`out`, Engine.query's answer,
 * which took `searchMs`): the candidates reranked, the first stage, and each step's time (the
 * engine times the rerank itself; the rest of the query is the first stage).
 */
export function cageInfo(method, prepared, out, searchMs) {
  const row = METHOD_INFO.get(method);
  const rerankMs = out.rerankMs ?? 0;
  return {
    candidates: Math.min(row.candidates, engine.stats().passages),
    firstStage: row.first_stage,
    embedded: prepared.embedded,
    embedMs: prepared.embedMs,
    rerankMs,
    firstStageMs: searchMs - rerankMs,
  };
}
