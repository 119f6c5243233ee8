// The engine worker's embedders: the static embedder (dense, hybrid, and the graph methods'
// and CAGE's vectors), the English text pipeline's files, and MiniLM (dense-minilm), whose
// package also runs CAGE's R-GCN.
import { loadTextPipeline, textPipelineFiles, textPipelineLoaded } from '../../pkg/cairn.js';
import {
  TRANSFORMER_MISSING, TRANSFORMER_PACKAGE, embedderDownload, downloadWithProgress, embedderFiles, engine, loadReplies,
  message, methodsInfo, minilm, minilmCancel, minilmPackage, now, post, progressPoster, setEmbedderDownload,
  setEmbedderFiles, setMinilm, setMinilmCancel, setMinilmPackage, staticDims, staticReady, stats,
} from './state.js';

// The static embedder's files, copied by webpack from the repository's assets/.
export const EMBEDDER_TABLE_URL = 'assets/static-minilm.bin';
export const EMBEDDER_VOCAB_URL = 'assets/minilm-vocab.txt';

// The English text pipeline's resource files (POS tagger, lemmatiser, gazetteer; 1.6 MB, copied by
// webpack from assets/text/): fetched once, the first time the knowledge graph or CAGE needs them,
// so that BM25 and the dense methods never download them.
const TEXT_PIPELINE_DIR = 'assets/text/';
// Passages per MiniLM call: small enough that a cancel is seen within a second or two.
const MINILM_BATCH = 8;
export const MINILM_WASM_URL = __CAIRN_TRANSFORMER_PACKAGE__ ? new URL('../../pkg-minilm/cairn_minilm_bg.wasm', import.meta.url) : null;
const MINILM_MODEL_URL = 'models/minilm-int8.onnx';
// Copied by webpack from assets/cage/.
export const CAGE_MODEL_URL = 'assets/cage/rgcn-int8.onnx';

/**
 * Load the static embedder into the engine (downloading its files the first time) and embed the
 * passages. Replies 'ready' (`cancelled: true` when 'cancel-embedder' stopped the download).
 */
export async function loadEmbedder(id, silent = false) {
  let status = 'ok';
  const reply = (extra) => {
    if (extra && extra.cancelled) status = 'cancelled';
    if (extra && extra.failed) status = 'failed';
    if (!silent) sendReady(extra);
  };
  const sendReady = (extra) => post({ type: 'ready', request: 'load-embedder', id, stats: stats(), ...methodsInfo(), changed: false, timing: null, ...extra });
  if (embedderFiles && staticReady()) {
    reply({});
    return status;
  }
  const t0 = now();
  let files = null;
  let downloadMs = 0;
  let downloadBytes = 0;
  const controller = new AbortController();
  setEmbedderDownload(controller);
  try {
    const [table, vocabBytes] = await downloadWithProgress([EMBEDDER_TABLE_URL, EMBEDDER_VOCAB_URL], controller.signal);
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
    if (embedderDownload === controller) setEmbedderDownload(null);
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
  setEmbedderFiles({ dims: staticDims(engine) });
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
export async function ensureTextPipeline() {
  if (textPipelineLoaded()) return 'ok';
  const controller = new AbortController();
  setEmbedderDownload(controller);
  try {
    const files = await downloadWithProgress(textPipelineFiles().map((f) => TEXT_PIPELINE_DIR + f), controller.signal, 'text');
    loadTextPipeline(...files);
    return 'ok';
  } catch (err) {
    if (controller.signal.aborted) return 'cancelled';
    throw new Error(`the text pipeline's files could not be loaded: ${message(err)}`);
  } finally {
    if (embedderDownload === controller) setEmbedderDownload(null);
  }
}

/** Resolve after pending messages (a 'cancel-embedder') have had their turn. */
export function yieldToMessages() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Make dense-minilm available: fetch the MiniLM package and model the first time, embed the
 * passages that have no MiniLM vector yet (in batches, with 'embedding-minilm' progress), and
 * attach the vectors to the engine. Replies 'ready' with `embedder: 'minilm'` (`cancelled: true`
 * when a cancel stopped the download or paused the embedding; `failed: true` on an error).
 */
export async function loadMinilm(id) {
  const { ready: reply, fail: failWith } = loadReplies(id, 'minilm');
  const fail = (err) => failWith('MiniLM could not be loaded', err);
  const t0 = now();
  setMinilmCancel(false);
  let downloadMs = 0;
  let downloadBytes = 0;
  let loadMs = 0;
  if (!minilm && !TRANSFORMER_PACKAGE) {
    fail(new Error(TRANSFORMER_MISSING));
    return;
  }
  if (!minilm) {
    const controller = new AbortController();
    setEmbedderDownload(controller);
    let wasmBytes;
    let modelBytes;
    try {
      if (minilmPackage) [modelBytes] = await downloadWithProgress([MINILM_MODEL_URL], controller.signal, 'minilm');
      else [wasmBytes, modelBytes] = await downloadWithProgress([MINILM_WASM_URL, MINILM_MODEL_URL], controller.signal, 'minilm');
    } catch (err) {
      if (controller.signal.aborted) reply({ cancelled: true });
      else fail(err);
      return;
    } finally {
      if (embedderDownload === controller) setEmbedderDownload(null);
    }
    downloadMs = now() - t0;
    downloadBytes = (wasmBytes ? wasmBytes.length : 0) + modelBytes.length;
    const t1 = now();
    post({ type: 'progress', phase: 'loading-model', done: 0, total: 1 });
    try {
      const mod = await minilmModule(wasmBytes);
      const model = new mod.MiniLm(modelBytes);
      setMinilm({ model, dims: model.dims, vectors: new Float32Array(0), embedded: new Uint8Array(0), count: 0 });
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
export function forgetMinilmVectors(keep) {
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
export async function embedMinilm() {
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

/** The MiniLM package, initialised with `wasmBytes` the first time. */
export async function minilmModule(wasmBytes) {
  if (minilmPackage) return minilmPackage;
  let mod;
  if (__CAIRN_TRANSFORMER_PACKAGE__) mod = await import(/* webpackChunkName: "minilm" */ '../../pkg-minilm/cairn_minilm.js');
  else throw new Error(TRANSFORMER_MISSING);
  await mod.default({ module_or_path: wasmBytes });
  setMinilmPackage(mod);
  return mod;
}
