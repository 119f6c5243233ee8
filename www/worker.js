// The page's search engine: one Cairn `Engine`, owned by this Web Worker so that indexing never
// freezes the page. The page talks to it with messages only.
//
// In:  {type:'load-demo'}
//      {type:'index-files', files:[{name, text}], replace}   .jsonl → addJsonl, others → addDocument
//      {type:'index-text', name, text, replace}
//      {type:'search', query, k, method, id}
//      {type:'stats'}
// Out: {type:'hello', methods, version, stats}               once, when the wasm module is ready
//      {type:'progress', phase, done, total}
//      {type:'ready', stats, timing, changed, label}          after every indexing request
//      {type:'results', id, query, hits, ms}
//      {type:'stats', stats, methods, version}
//      {type:'error', message, during, id?}
//
// Every engine call is guarded: an error becomes an 'error' message and the worker keeps going.
// An indexing request is all or nothing: when one of its inputs fails, the engine goes back to
// the corpus and index it had before the request.

import init, { Engine, methods, version } from '../pkg/cairn.js';

const DEMO_URL = 'data/hotpotqa/corpus.jsonl';
const DEMO_NAME = 'hotpotqa';

let engine = null;
// What `engine` was built from, in order, so that it can be rebuilt after a failed request:
// [{kind: 'jsonl' | 'document', name, text}].
let sources = [];
let info = { methods: [], version: '' };

const now = () => performance.now();
const post = (msg) => self.postMessage(msg);
const message = (e) => (e && e.message) || String(e);

/** Report `err`. A wasm trap (a panic in the engine) may leave the module broken: `fatal`. */
function postError(during, err, extra = {}) {
  const fatal = err instanceof WebAssembly.RuntimeError;
  post({ type: 'error', during, message: fatal ? `internal error in the engine: ${message(err)}` : message(err), fatal, ...extra });
}

function baseName(name) {
  return String(name ?? '').trim() || 'pasted text';
}

/** `name`, or `name (2)`, `name (3)`… when a document of that name is already in the corpus. */
function uniqueName(name) {
  const used = new Set(sources.map((s) => s.name));
  if (!used.has(name)) return name;
  let n = 2;
  while (used.has(`${name} (${n})`)) n += 1;
  return `${name} (${n})`;
}

function stats() {
  return engine ? engine.stats() : null;
}

/** The kind of input a file name stands for: JSONL passages or a text/Markdown document. */
function kindOf(name) {
  return /\.jsonl$/i.test(name) ? 'jsonl' : 'document';
}

function addSource(target, src) {
  return src.kind === 'jsonl' ? target.addJsonl(src.name, src.text) : target.addDocument(src.name, src.text);
}

function build(target, phase) {
  let last = -1;
  return target.build((done, total) => {
    // about a hundred calls; skip repeats so the page gets only real steps
    if (done !== last) {
      last = done;
      post({ type: 'progress', phase, done, total });
    }
  });
}

/** A fresh engine holding `list`'s passages, built. Throws on the first failing source. */
function engineFrom(list, phase) {
  const e = new Engine(undefined);
  try {
    list.forEach((src) => addSource(e, src));
    if (list.length > 0) build(e, phase);
    return e;
  } catch (err) {
    e.free();
    throw err;
  }
}

/**
 * Add `batch` to the engine (or replace its corpus with it) and build. All or nothing: throws
 * with the engine as it was.
 */
function indexBatch(batch, replace, labels, extraTiming) {
  const t0 = now();
  const before = engine.stats();
  const target = replace ? new Engine(undefined) : engine;
  let added = 0; // sources of this batch already in `target`
  let passagesAdded = 0;
  let addMs = 0;
  let buildMs = 0;
  try {
    batch.forEach((src, i) => {
      post({ type: 'progress', phase: 'adding', done: i, total: batch.length, name: src.name });
      passagesAdded += addSource(target, src);
      added += 1;
    });
    addMs = now() - t0;
    const t1 = now();
    build(target, 'indexing');
    buildMs = now() - t1;
  } catch (err) {
    if (replace) {
      target.free(); // the engine in use was never touched
    } else {
      try {
        restore(before, added > 0);
      } catch (err2) {
        postError('restore', new Error(`the previous index could not be restored: ${message(err2)}`));
      }
    }
    throw err;
  }
  if (replace) {
    engine.free();
    engine = target;
    sources = batch.slice();
  } else {
    sources = sources.concat(batch);
  }
  post({
    type: 'ready',
    stats: engine.stats(),
    changed: true,
    replace,
    labels,
    added: passagesAdded,
    timing: { ...extraTiming, addMs, buildMs, totalMs: now() - t0 },
  });
}

/**
 * After a failed "add" request: bring the engine back to the corpus in `sources` and, when it had
 * one, its index. `dirty` says whether some of the failed request's passages went in.
 */
function restore(before, dirty) {
  if (!dirty) {
    // addJsonl/addDocument are all or nothing, so the corpus is unchanged, but a failing add
    // after build() leaves the engine unbuilt: build it again.
    if (before.built && !engine.stats().built) build(engine, 'restoring');
    return;
  }
  // Part of the batch went in and the engine cannot remove passages: rebuild from the sources.
  const fresh = engineFrom(sources, 'restoring');
  engine.free();
  engine = fresh;
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

async function handle(msg, early) {
  switch (msg && msg.type) {
    case 'load-demo': {
      let demo;
      try {
        demo = await (early || loadDemo());
      } catch (err) {
        post({ type: 'error', during: 'load-demo', message: message(err) });
        post({ type: 'ready', stats: stats(), changed: false, timing: null });
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
    case 'search': {
      try {
        const t0 = now();
        const opts = { k: Number(msg.k) || 5 };
        if (msg.method) opts.method = msg.method;
        const hits = engine.search(String(msg.query ?? ''), opts);
        post({ type: 'results', id: msg.id, query: msg.query, hits, ms: now() - t0 });
      } catch (err) {
        postError('search', err, { id: msg.id });
      }
      return;
    }
    case 'stats':
      try {
        post({ type: 'stats', stats: stats(), ...info });
      } catch (err) {
        postError('stats', err);
      }
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
    post({ type: 'ready', stats: s, changed: false, timing: null });
  }
}

// Messages are handled one at a time, in order, once the wasm module is ready.
let queue = init()
  .then(() => {
    engine = new Engine(undefined);
    info = { methods: methods(), version: version() };
    post({ type: 'hello', stats: engine.stats(), ...info });
  })
  .catch((err) => {
    post({ type: 'error', during: 'init', message: `the search engine could not start: ${message(err)}` });
    throw err;
  });

self.onmessage = (event) => {
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
