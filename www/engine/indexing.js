// The engine worker's indexing: adding files and texts (all or nothing), building, undoing a
// failed add, and the demo corpus.
import { forgetMinilmVectors } from './embedders.js';
import {
  engine, message, methodsInfo, newEngine, now, post, postError, progressPoster, setEngine, setSourceNames,
  sourceNames,
} from './state.js';

const DEMO_URL = 'data/hotpotqa/corpus.jsonl';
export const DEMO_NAME = 'hotpotqa';

export function baseName(name) {
  return String(name ?? '').trim() || 'pasted text';
}

/** `name`, or `name (2)`, `name (3)`… when a document of that name is already in the corpus. */
export function uniqueName(name) {
  const used = new Set(sourceNames);
  if (!used.has(name)) return name;
  let n = 2;
  while (used.has(`${name} (${n})`)) n += 1;
  return `${name} (${n})`;
}

export function kindOf(name) {
  return /\.jsonl$/i.test(name) ? 'jsonl' : 'document';
}

export function addSource(target, src) {
  return src.kind === 'jsonl' ? target.addJsonl(src.name, src.text) : target.addDocument(src.name, src.text);
}


/**
 * Build `target`: BM25 progress as `phase`, then (when the embedder is loaded) 'embedding'.
 * Returns `{bm25Ms, embedMs}`; embedMs is null when nothing was embedded. The embedding phase
 * starts at the BM25 phase's last progress call.
 */
export function build(target, phase) {
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
export function indexBatch(batch, replace, labels, extraTiming) {
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
    setEngine(target);
    setSourceNames(batch.map((src) => src.name));
    forgetMinilmVectors(0);
  } else {
    setSourceNames(sourceNames.concat(batch.map((src) => src.name)));
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
export function restore(before) {
  engine.truncate(before.passages);
  forgetMinilmVectors(before.passages);
  if (before.built && !engine.stats().built) build(engine, 'restoring');
}

export async function loadDemo() {
  const t0 = now();
  // relative to the worker's script, which webpack puts beside index.html
  const resp = await fetch(new URL(DEMO_URL, self.location.href));
  if (!resp.ok) throw new Error(`could not load the demo corpus (${resp.status} ${resp.statusText} for ${DEMO_URL})`);
  const text = await resp.text();
  const fetchMs = now() - t0;
  return { text, fetchMs };
}

export function runIndex(batch, replace, labels, during, extraTiming = {}) {
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
