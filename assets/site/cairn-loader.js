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

import { here, fetchOk, fetchIndexBytes, isGzip, gunzip, methodCost, wasmSource, fetchManifest } from './cairn-fetch.js';

export { fetchIndexBytes, isGzip, gunzip, methodCost, wasmSource, fetchManifest };

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
