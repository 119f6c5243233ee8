// @ts-check
// What the example does with Cairn, shared by the bundled page (src/main.js) and the plain ES-module
// page (plain/main.js): index three passages, search, save the index and load it into a second
// engine, and search again inside a Web Worker that owns its own engine.

/** @typedef {typeof import('cairn')} Cairn */
/** @typedef {{ query: string, ids: string[], scores: number[] }} Ranked */

/** The corpus: `{id, title, text}` passages (`id` and `title` are optional). */
export const PASSAGES = [
  { id: 'lothair', title: 'Lothair II', text: 'Lothair II was king of Lotharingia. He married Teutberga in 855.' },
  { id: 'teutberga', title: 'Teutberga', text: 'Teutberga was the daughter of Boso the Elder, a Frankish count.' },
  { id: 'peart', title: 'Neil Peart', text: 'Neil Peart was the drummer and lyricist of the rock band Rush.' },
];

/** The questions the example asks. */
export const QUERIES = ['Who did Lothair II marry?', 'drummer of Rush'];

/**
 * Runs the example and resolves to the ranked ids of every query, three ways: the engine that
 * built the index, a second engine loaded from the saved index bytes, and the worker.
 * @param {Cairn} cairn the package's module (`import * as cairn from 'cairn'`)
 * @param {Worker} worker a module worker running `serveSearch` (src/worker-core.js)
 * @returns {Promise<{ built: Ranked[], reloaded: Ranked[], worker: Ranked[], indexBytes: number }>}
 */
export async function demo(cairn, worker) {
  await cairn.default(); // fetches and compiles cairn_bg.wasm, found next to cairn.js
  const engine = new cairn.Engine();
  engine.addPassages(PASSAGES);
  engine.build();
  const built = QUERIES.map((query) => rank(engine, query));

  const bytes = engine.saveIndex(); // a Uint8Array: keep it in IndexedDB, a file, a server
  const loaded = new cairn.Engine();
  loaded.loadIndex(bytes);
  const reloaded = QUERIES.map((query) => rank(loaded, query));

  const inWorker = await askWorker(worker, { passages: PASSAGES, queries: QUERIES });
  return { built, reloaded, worker: inWorker, indexBytes: bytes.length };
}

/**
 * The top three passages for `query` under BM25.
 * @param {import('cairn').Engine} engine
 * @param {string} query
 * @returns {Ranked}
 */
export function rank(engine, query) {
  const { hits } = engine.query({ query, k: 3, method: 'bm25' });
  return { query, ids: hits.map((h) => h.id), scores: hits.map((h) => h.score) };
}

/**
 * Posts one request to the worker and resolves to its answer (rejects with its error).
 * @param {Worker} worker
 * @param {{ passages: import('cairn').PassageInput[], queries: string[] }} request
 * @returns {Promise<Ranked[]>}
 */
function askWorker(worker, request) {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => (event.data.error ? reject(new Error(event.data.error)) : resolve(event.data.ranked));
    worker.onerror = (event) => reject(new Error(`worker: ${event.message}`));
    worker.postMessage(request);
  });
}

/**
 * Shows the outcome in the page: the JSON in <pre id="out">, and `data-status` on <body>
 * ("done" or "error").
 * @param {Promise<unknown>} outcome
 */
export async function show(outcome) {
  const out = /** @type {HTMLElement} */ (document.getElementById('out'));
  try {
    out.textContent = JSON.stringify(await outcome, null, 2);
    document.body.dataset.status = 'done';
  } catch (err) {
    out.textContent = String(err instanceof Error ? err.stack || err.message : err);
    document.body.dataset.status = 'error';
  }
}
