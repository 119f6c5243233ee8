// Cairn's static-site loader, written next to the index by `cairn index`.
//
//   import { openIndex } from '/cairn/cairn-loader.js';
//   const cairn = await openIndex();            // this folder's manifest.json, index and wasm
//   const hits = cairn.search('who married Lothair II?', { k: 8 });
//
// Everything runs in the browser, in a page or in a worker (the widget runs it in its worker,
// cairn-worker.js; nothing here touches the DOM): the wasm engine (cairn_bg.wasm, stored
// gzip-compressed as the manifest's `wasm` so that a plain static host serves it small), the
// index (gzip files: the keyword part, then the passages' texts and, for the vector and graph
// methods, the extras), for the dense methods the static embedder's table, and for an index with
// a knowledge graph the English text pipeline's files (text/). Gzip files are inflated with the
// browser's DecompressionStream. Nothing is sent anywhere.

import init, { Engine, loadTextPipeline, textPipelineLoaded } from './cairn.js';

const here = new URL('.', import.meta.url);

/**
 * The response at `url` (of `started`, a `fetch(url)` begun already, when given), or an error that
 * names the file (HTTP status or network failure).
 */
async function fetchOk(url, started) {
  let resp;
  try {
    resp = await (started || fetch(url));
  } catch (err) {
    throw new Error(`${url} could not be downloaded (${err.message})`);
  }
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}${resp.status === 404 ? ' (not found: was "cairn index --out" run into this folder?)' : ''}`);
  return resp;
}

/** The bytes at `url`, inflated when they are gzip (the index is shipped as `index.cairn.gz`). */
export async function fetchIndexBytes(url) {
  const bytes = new Uint8Array(await (await fetchOk(url)).arrayBuffer());
  if (!isGzip(bytes)) return bytes;
  try {
    return await gunzip(bytes);
  } catch (err) {
    throw new Error(`${url}: the gzip data is truncated or damaged`);
  }
}

/** Whether `bytes` start with gzip's magic number (a server may already have inflated them). */
export function isGzip(bytes) {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Inflate gzip bytes with the browser's DecompressionStream. */
export async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The wasm module named by the manifest's `wasm` (default `cairn_bg.wasm`), for `init`: a file
 * stored gzip-compressed (`.gz`) is inflated as it streams in and handed over as an
 * `application/wasm` response, so that the browser compiles it while it arrives. A server that
 * inflated it already (Content-Encoding) hands over the plain module, which is used as it is.
 */
export async function wasmSource(manifest, base) {
  const name = typeof manifest.wasm === 'string' ? manifest.wasm : 'cairn_bg.wasm';
  const url = new URL(name, base);
  if (!name.endsWith('.gz')) return url;
  const bytes = new Uint8Array(await (await fetchOk(url)).arrayBuffer());
  let body = bytes;
  if (isGzip(bytes)) {
    try {
      body = await gunzip(bytes);
    } catch {
      throw new Error(`${url}: the gzip data is truncated or damaged`);
    }
  }
  return new Response(body, { headers: { 'Content-Type': 'application/wasm' } });
}

/**
 * The bytes still to download before `method` can run, from the manifest's `sizes` (file name →
 * bytes as stored): the embedder's table and vocabulary, the extras and, for a graph, the text
 * pipeline. 0 for `bm25`; `null` when the manifest does not list the sizes (an older `cairn
 * index`).
 */
export function methodCost(manifest, method) {
  if (!method || method === 'bm25') return 0;
  const files = [];
  if (manifest.embedder) files.push(manifest.embedder.table, manifest.embedder.vocab);
  if (typeof manifest.extras === 'string') files.push(manifest.extras);
  if (Array.isArray(manifest.text_pipeline)) files.push(...manifest.text_pipeline);
  const sizes = manifest.sizes;
  if (!sizes || files.some((f) => typeof sizes[f] !== 'number')) return null;
  return files.reduce((sum, f) => sum + sizes[f], 0);
}

/**
 * The parsed `base`/manifest.json, or an error that names it (HTTP status, network failure, not
 * JSON). `started`: its `fetch` begun already (the worker begins it while the loader loads).
 */
export async function fetchManifest(base = here, started) {
  const manifestUrl = new URL('manifest.json', base);
  try {
    return await (await fetchOk(manifestUrl, started)).json();
  } catch (err) {
    throw err instanceof SyntaxError ? new Error(`${manifestUrl} is not JSON (${err.message})`) : err;
  }
}

/**
 * Open the index described by `base`/manifest.json. `method` (default: the manifest's
 * `default_method`) decides what is fetched: `bm25` needs only the wasm and the index; the other
 * methods also the static embedder's table and, for a site written in parts (`extras` in the
 * manifest: passage vectors and knowledge graph beside the passages), the extras and the text
 * pipeline.
 *
 * A site written by `cairn index` holds its index in three files (`index`, `texts` and `extras`
 * in the manifest): the keyword part (passage ids and titles with BM25's postings), the passages'
 * texts, and the extras. BM25 answers from the keyword part alone, its hits carrying ids and
 * titles (texts empty) until the texts are in (`texts`, `textsLoaded()`); the texts are fetched
 * once the keyword part has arrived, so they never slow the first answer down.
 *
 * With `early: true` it resolves as soon as BM25 can answer (the keyword part loaded) and the
 * rest loads in the background: `texts` resolves when the hits carry their texts (or rejects
 * with the reason they cannot; BM25 still answers, with titles), `methods()` grows, `ready`
 * resolves when `method` can run (at once for `bm25`; or rejects with the reason it cannot) and
 * `onProgress(done, total)` counts the texts embedded meanwhile. Without it, it resolves once
 * `method` can run and the texts are in. With `full: false` (default true) the files only
 * `method` needs (embedder, extras, text pipeline: `cost` bytes, see `methodCost`) are not
 * fetched until `loadFull()` is called; `ready` waits for that.
 *
 * Resolves to { manifest, method, cost, methods(), texts, textsLoaded(), ready, loadFull(),
 * timings: {loadMs, fetchedMs, loadIndexMs, textsMs, readyMs}, search(query, {k, method,
 * prefix}) } (`prefix`: the last word is still being typed and also matches the words it
 * begins; misspelt words match their near spellings): `fetchedMs` covers the downloads the first
 * answer waited for (in parallel), `loadIndexMs` Engine.loadIndex (BM25's postings read; for an
 * index written before the keyword part existed, BM25 rebuilt from the passages), `textsMs` the
 * time until the texts were in and `readyMs` until `method` could run (each set when its promise
 * resolves). `manifest`: the manifest or a promise of it (see `fetchManifest`), when the caller
 * fetched it already.
 */
export async function openIndex({ base = here, method, early = false, full = true, onProgress, manifest: given } = {}) {
  const t0 = performance.now();
  const manifest = await (given || fetchManifest(base));
  method = method || manifest.default_method || 'bm25';
  const twoParts = typeof manifest.extras === 'string';
  // A one-file index with a graph cannot be read without the embedder; a split one can.
  const needsEmbedder = method !== 'bm25' || (!twoParts && manifest.graph);
  // The files `method` needs beyond the keyword part, fetched at once or on `loadFull()`.
  let embedderFiles = null;
  let textFiles = null;
  let extrasBytes = null;
  let fetching = false; // whether fetchFull ran
  const fetchFull = () => {
    if (fetching) return;
    fetching = true;
    embedderFiles = needsEmbedder && manifest.embedder
      ? Promise.all([
        fetchOk(new URL(manifest.embedder.table, base)).then((r) => r.arrayBuffer()),
        fetchOk(new URL(manifest.embedder.vocab, base)).then((r) => r.text()),
      ])
      : null;
    embedderFiles?.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    // the English text pipeline's resources: a knowledge graph needs them
    textFiles = needsEmbedder && Array.isArray(manifest.text_pipeline)
      ? Promise.all(manifest.text_pipeline.map((f) => fetchOk(new URL(f, base)).then((r) => r.arrayBuffer())))
      : null;
    textFiles?.catch(() => {});
    extrasBytes = needsEmbedder && twoParts ? fetchIndexBytes(new URL(manifest.extras, base)) : null;
    extrasBytes?.catch(() => {});
  };
  // a one-file index cannot answer at all without them
  if (full || !twoParts) fetchFull();
  let startFull;
  const fullWanted = new Promise((resolve) => { startFull = resolve; });
  if (full || !twoParts) startFull();

  const [, bytes] = await Promise.all([
    wasmSource(manifest, base).then((source) => init({ module_or_path: source })),
    fetchIndexBytes(new URL(manifest.index, base)),
  ]);
  // the passages' texts, after the keyword part so that they do not share its bandwidth
  const textsBytes = typeof manifest.texts === 'string' ? fetchIndexBytes(new URL(manifest.texts, base)) : null;
  textsBytes?.catch(() => {});
  const engine = new Engine();
  const progress = typeof onProgress === 'function' ? (done, total) => onProgress(done, total) : undefined;
  const addEmbedder = async () => {
    if (!embedderFiles) return;
    const [table, vocab] = await embedderFiles;
    engine.loadStaticEmbedder(new Uint8Array(table), vocab);
  };
  const addTextPipeline = async () => {
    if (!textFiles || textPipelineLoaded()) return;
    const [pos, lemmaRules, lemmaIndex, gazetteer] = (await textFiles).map((b) => new Uint8Array(b));
    loadTextPipeline(pos, lemmaRules, lemmaIndex, gazetteer);
  };
  const timings = { loadMs: 0, fetchedMs: 0, loadIndexMs: 0, textsMs: undefined, readyMs: undefined };
  if (!twoParts) {
    await addEmbedder();
    await addTextPipeline();
  }
  timings.fetchedMs = performance.now() - t0;
  engine.loadIndex(bytes, progress);
  timings.loadIndexMs = performance.now() - t0 - timings.fetchedMs;
  const check = () => {
    const methods = engine.availableMethods();
    if (!methods.includes(method)) {
      throw new Error(`method ${method} is not available in this index (available: ${methods.join(', ')})`);
    }
  };
  const texts = textsBytes
    ? textsBytes.then((t) => {
      engine.loadIndexTexts(t);
      timings.textsMs = performance.now() - t0;
    })
    : Promise.resolve();
  texts.catch(() => {}); // the caller reads the reason from `texts` or `ready`
  // the passage vectors and graph, once asked for and once the texts, the embedder and the text
  // pipeline are in; BM25 needs none of them
  const rest = twoParts && needsEmbedder
    ? (async () => {
      await fullWanted;
      fetchFull();
      await texts;
      await addEmbedder();
      await addTextPipeline();
      const extras = await extrasBytes;
      engine.loadIndexExtras(extras, progress);
    })()
    : Promise.resolve();
  const ready = rest.then(() => {
    check();
    timings.readyMs = performance.now() - t0;
  });
  if (early) {
    ready.catch(() => {}); // the caller reads the reason from `ready`
  } else {
    startFull();
    await ready;
    await texts;
  }
  timings.loadMs = performance.now() - t0;
  return {
    manifest,
    method,
    cost: methodCost(manifest, method),
    methods: () => engine.availableMethods(),
    texts,
    textsLoaded: () => engine.textsLoaded(),
    ready,
    loadFull: () => startFull(),
    timings,
    search(query, { k = 8, method: m = method, prefix = false } = {}) {
      return engine.query({ query, k, method: m, prefix }).hits;
    },
  };
}

/** The page link of a passage id written by `cairn index`: the id up to its first space. */
export function linkOf(id) {
  return id.split(' ')[0];
}
