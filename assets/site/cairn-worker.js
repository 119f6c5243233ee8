// Cairn's search worker, written next to the index by `cairn index`: the widget
// (cairn-search.js) starts it as a module worker so that loading and every search (BM25, the
// vector methods and the graph walks) run off the page's main thread.
//
// Keyword searches go to the keyword reader when the site has one (the manifest's `keyword`: a
// small wasm module and a sharded keyword index, of which a query fetches the meta file once and
// then only the shards of its own terms and results). The full engine (cairn-loader.js) is
// loaded only for the chosen method when it is not BM25, once the widget asks for it; a site
// written without the reader loads the engine's keyword part instead, as before.
//
// Messages from the widget:
//   {type: 'open', method, full}      open the index (`full: false` waits for 'full' before
//                                     fetching what the chosen method needs beyond BM25)
//   {type: 'full'}                    fetch and load the chosen method's files
//   {type: 'search', seq, q, prefix, max, more}
//                                     search; the first `max` results, after the duplicates
//                                     (`more`: the next screen of the same query, whose
//                                     ranking is kept, not run again)
// Messages to the widget:
//   {type: 'opened', manifest, method, cost, timings}   BM25 answers from now on
//   {type: 'texts', ok, error, textsMs}                 the passages' texts are in (or why not)
//   {type: 'ready', ok, error, readyMs}                 the chosen method runs (or why not)
//   {type: 'hits', seq, q, prefix, more, method, hits, capped, total, completed, fallback,
//    textsLoaded, searchMs}            `capped`: there are more; `total`: passages that match
//                                     (keyword searches)
//   {type: 'error', seq, message}                       opening (no seq) or a search failed

import { fetchOk, fetchManifest, gunzip, isGzip, methodCost, wasmSource } from './cairn-fetch.js';

// The manifest is fetched as the worker starts; the reader's or the engine's files follow it.
const base = new URL('.', import.meta.url);
const manifestFetch = fetch(new URL('manifest.json', base));
manifestFetch.catch(() => {}); // fetchManifest reports a failure

/** The page link of a passage id written by `cairn index`: the id up to its first space. */
const linkOf = (id) => id.split(' ')[0];

let cairn = null; // the engine (cairn-loader.js's openIndex), once loaded
let reader = null; // the keyword reader, when the site has one
let manifest = null;
let method = 'bm25'; // the chosen method

/** Post `msg`, with an error turned into its message. */
const post = (msg) => self.postMessage(msg);
const messageOf = (err) => (err && err.message) || String(err);

/** The methods whose engine path completes the last word itself (QueryOptions::prefix). */
const PREFIX_METHODS = new Set(['bm25', 'hybrid']);

/**
 * The query with its last, unfinished word completed, for a method that does not complete it
 * itself (a graph walk or the embedder would read "typing.Prot" as it is): the first word of
 * BM25's top prefix results, in their titles and then their texts, that BM25 matched and that
 * begins with the typed word (compared in lower case) and is longer; the typed letters are kept as
 * typed. `hits` are those results. The query unchanged when no such word is found, or when the
 * typed word itself is one BM25 matched (it is a whole word already).
 */
function completeLastWord(query, hits) {
  const m = /(\S+)$/.exec(query);
  if (!m) return query;
  const typed = m[1].toLowerCase();
  // the words BM25 matched, hit by hit, in the title and then the text
  const words = hits.flatMap((h) => [[h.title, h.titleHighlights], [h.text, h.highlights]]
    .flatMap(([text, ranges]) => (ranges || []).map(([s, e]) => text.slice(s, e))));
  // a word found as typed is a whole word already ("gather" stays, not "gathered")
  if (words.some((w) => w.toLowerCase() === typed)) return query;
  const word = words.find((w) => w.length > typed.length && w.toLowerCase().startsWith(typed));
  // the letters typed as typed, then the rest of the word
  return word ? query.slice(0, m.index) + m[1] + word.slice(m[1].length) : query;
}

/**
 * `hits` without repeats, in order: the parts of one long section (same link, same title) and a
 * page's identical sections (same page, title and text: a sidebar or an index repeated under
 * several anchors) are shown once. Two sections of one page with other titles stay apart. For
 * ids that are not links (`linked` false) only a repeated id is dropped.
 */
export function distinctHits(hits, linked) {
  const seen = new Set();
  const out = [];
  for (const h of hits) {
    const keys = linked
      ? [`l\n${linkOf(h.id)}\n${h.title}`]
      : [`i\n${h.id}`];
    if (linked && h.text) keys.push(`p\n${linkOf(h.id).split('#')[0]}\n${h.title}\n${h.text}`);
    if (keys.some((key) => seen.has(key))) continue;
    for (const key of keys) seen.add(key);
    out.push(h);
  }
  return out;
}

/** The bytes of the keyword index's shard `name`, fetched once (concurrent asks share it). */
const shardFetches = new Map();
function shardBytes(name) {
  if (!shardFetches.has(name)) {
    const url = new URL(`${manifest.keyword.dir}${name}.cairn.gz`, base);
    const bytes = fetchOk(url)
      .then((r) => r.arrayBuffer())
      .then((b) => inflate(new Uint8Array(b), url));
    // a failed fetch is tried again by the next search that needs it
    bytes.catch(() => shardFetches.delete(name));
    shardFetches.set(name, bytes);
  }
  return shardFetches.get(name);
}

/** `bytes` inflated when they are gzip (a server may have inflated them already). */
async function inflate(bytes, url) {
  if (!isGzip(bytes)) return bytes;
  try {
    return await gunzip(bytes);
  } catch {
    throw new Error(`${url}: the gzip data is truncated or damaged`);
  }
}

/** Run `query` until it needs no shard, fetching what each stage names. */
async function fetchShards(query) {
  for (let need = query.advance(reader); need.length; need = query.advance(reader)) {
    const shards = await Promise.all(need.map(shardBytes));
    need.forEach((name, i) => reader.add(name, shards[i]));
  }
}

/** Ranked results a keyword query keeps ("More results" pages through them). */
const KEYWORD_RANKED = 200;
/** Results asked of the engine for the other methods (its hits come with their texts). */
const ENGINE_RANKED = 81;

/**
 * BM25's best `k` with their passages: from the engine once it holds the texts (nothing to
 * fetch), else from the reader when there is one.
 */
async function bm25(q, k, prefix) {
  if (!reader || (cairn && cairn.textsLoaded())) return cairn.search(q, { k, method: 'bm25', prefix });
  const query = reader.query(q, k, prefix);
  try {
    await fetchShards(query);
    return query.hits(reader);
  } finally {
    query.free();
  }
}

/**
 * A query's results as the widget pages through them: the engine's hits (`hits`), or a keyword
 * query on the reader (`query`) whose passages are fetched for the results shown only.
 */
async function startResults(chosen, q, prefix) {
  const entry = { method: chosen, completed: q, fallback: false, hits: null, query: null, window: 0, busy: 0 };
  if (chosen === 'bm25' && reader) {
    entry.query = reader.query(q, KEYWORD_RANKED, prefix);
    return entry;
  }
  if (chosen === 'bm25') {
    entry.hits = cairn.search(q, { k: ENGINE_RANKED, method: 'bm25', prefix });
    return entry;
  }
  if (prefix && !PREFIX_METHODS.has(chosen)) {
    // the last word is being typed: BM25's completions name the word the chosen method gets
    entry.completed = completeLastWord(q, await bm25(q, 5, true));
    entry.hits = cairn.search(entry.completed, { k: ENGINE_RANKED, method: chosen, prefix: false });
  } else {
    entry.hits = cairn.search(q, { k: ENGINE_RANKED, method: chosen, prefix });
  }
  if (!entry.hits.length) {
    // a list never turns into "No results." because the chosen method found nothing that the
    // keyword search finds
    const keyword = await startResults('bm25', q, prefix);
    const probe = await page(keyword, 1);
    if (probe.hits.length) return Object.assign(keyword, { fallback: true, completed: q });
    keyword.query?.free();
  }
  return entry;
}

/**
 * The first `max` distinct results of `entry` (`distinctHits`), whether there are more, and how
 * many passages match (keyword queries). A keyword query fetches the passages of its results a
 * window at a time, widened until `max + 1` distinct ones are in or the ranking ends.
 */
async function page(entry, max) {
  const linked = manifest.links !== false;
  if (entry.hits) {
    const distinct = distinctHits(entry.hits, linked);
    return { hits: distinct.slice(0, max), capped: entry.hits.length >= ENGINE_RANKED || distinct.length > max, total: null };
  }
  const { query } = entry;
  let window = Math.max(entry.window, max + 1);
  for (;;) {
    query.setWindow(window);
    entry.window = window;
    await fetchShards(query);
    const distinct = distinctHits(query.hits(reader), linked);
    if (distinct.length > max || window >= query.ranked) {
      return { hits: distinct.slice(0, max), capped: distinct.length > max, total: query.matched };
    }
    window = Math.min(query.ranked, 2 * window);
  }
}

let last = null; // the results of the last query, which "More results" pages through

/** Free a superseded entry's keyword query once no search uses it. */
function retire(entry) {
  if (entry && entry !== last && !entry.busy) entry.query?.free();
}

async function search({ seq, q, prefix, max, more }) {
  const t0 = performance.now();
  const chosen = cairn && cairn.methods().includes(method) ? method : 'bm25';
  // (the engine's hits carry texts once its texts file is in: a new list then)
  const fromEngine = !(chosen === 'bm25' && reader);
  const key = `${chosen}\n${prefix}\n${q}\n${fromEngine && cairn.textsLoaded()}`;
  let entry = last && last.key === key ? last : null;
  if (!entry) {
    entry = await startResults(chosen, q, prefix);
    entry.key = key;
    const previous = last;
    last = entry;
    retire(previous);
  }
  entry.busy += 1;
  try {
    const { hits, capped, total } = await page(entry, max);
    return {
      type: 'hits',
      seq,
      q,
      prefix,
      more: Boolean(more),
      method: entry.method,
      hits,
      capped,
      total,
      completed: entry.completed !== q ? entry.completed : undefined,
      fallback: entry.fallback,
      // the reader's hits carry their texts; the engine's once its texts file is in
      textsLoaded: entry.query ? true : cairn.textsLoaded(),
      searchMs: performance.now() - t0,
    };
  } finally {
    entry.busy -= 1;
    retire(entry);
  }
}

/**
 * The bytes still to download before `method` runs when BM25 comes from the reader: the
 * engine's module and its index files as well as what `methodCost` counts.
 */
function fullCost() {
  const extra = methodCost(manifest, method);
  const sizes = manifest.sizes;
  const files = [manifest.wasm, manifest.index, manifest.texts, 'cairn.js', 'cairn-loader.js'].filter(Boolean);
  if (extra == null || !sizes || files.some((f) => typeof sizes[f] !== 'number')) return null;
  return files.reduce((sum, f) => sum + sizes[f], extra);
}

/** Open the keyword reader: its module and the meta file, side by side. */
async function openReader() {
  const t0 = performance.now();
  const kw = manifest.keyword;
  const [{ KeywordReader }, meta] = await Promise.all([
    import(new URL(kw.js, base).href),
    fetchOk(new URL(`${kw.dir}${kw.meta}`, base))
      .then((r) => r.arrayBuffer())
      .then((b) => inflate(new Uint8Array(b), new URL(`${kw.dir}${kw.meta}`, base))),
  ]).then(async ([mod, m]) => {
    await mod.default({ module_or_path: await wasmSource(manifest, base, kw.wasm) });
    return [mod, m];
  });
  const fetchedMs = performance.now() - t0;
  reader = new KeywordReader(meta);
  return { fetchedMs, loadIndexMs: performance.now() - t0 - fetchedMs };
}

/** Load the engine for the chosen method (`full`: fetch its files at once). */
function openEngine(full) {
  return import('./cairn-loader.js').then(({ openIndex }) => openIndex({
    base,
    manifest,
    method,
    early: true,
    full,
  }));
}

let opening = null; // BM25 answers when it resolves
let resolveFirst;
const firstResult = new Promise((resolve) => { resolveFirst = resolve; }); // the first list sent
let engine = null; // the engine's opening, for a method other than BM25

/** Start the engine (once) and tell the widget when the chosen method runs or why it cannot. */
function startEngine(full) {
  if (engine) return engine;
  engine = openEngine(full);
  engine.then((c) => {
    cairn = c;
    c.ready.then(
      () => post({ type: 'ready', ok: true, readyMs: c.timings.readyMs }),
      (err) => post({ type: 'ready', ok: false, error: messageOf(err) }),
    );
  }, (err) => post({ type: 'ready', ok: false, error: messageOf(err) }));
  return engine;
}

/**
 * Start the engine with its files once the first keyword result is on its way to the screen (or
 * after a moment when no search comes), so that its megabytes do not share that result's
 * bandwidth.
 */
function startEngineAfterFirst() {
  Promise.race([firstResult, new Promise((resolve) => { setTimeout(resolve, 1500); })])
    .then(() => startEngine(true))
    .then((c) => c.loadFull(), () => {});
}

self.onmessage = async ({ data }) => {
  if (data.type === 'open') {
    if (opening) return;
    const t0 = performance.now();
    opening = (async () => {
      manifest = await fetchManifest(base, manifestFetch);
      method = data.method || manifest.default_method || 'bm25';
      if (manifest.keyword) {
        const timings = await openReader();
        const cost = method === 'bm25' ? 0 : fullCost();
        post({ type: 'opened', manifest, method, cost, timings: { ...timings, loadMs: performance.now() - t0 } });
        post({ type: 'texts', ok: true, textsMs: 0 });
        if (method !== 'bm25' && data.full !== false) startEngineAfterFirst();
        return;
      }
      // a site without the keyword reader: the engine's keyword part answers BM25
      cairn = await openEngine(data.full !== false);
      post({ type: 'opened', manifest: cairn.manifest, method: cairn.method, cost: cairn.cost, timings: { ...cairn.timings } });
      cairn.texts.then(
        () => post({ type: 'texts', ok: true, textsMs: cairn.timings.textsMs }),
        (err) => post({ type: 'texts', ok: false, error: messageOf(err) }),
      );
      cairn.ready.then(
        () => post({ type: 'ready', ok: true, readyMs: cairn.timings.readyMs }),
        (err) => post({ type: 'ready', ok: false, error: messageOf(err) }),
      );
    })();
    try {
      await opening;
    } catch (err) {
      post({ type: 'error', message: messageOf(err) });
    }
  } else if (data.type === 'full') {
    await opening?.catch(() => {});
    if (reader) startEngineAfterFirst();
    else cairn?.loadFull();
  } else if (data.type === 'search') {
    try {
      await opening;
    } catch {
      return; // the widget has the reason from 'error'
    }
    try {
      post(await search(data));
      resolveFirst();
    } catch (err) {
      post({ type: 'error', seq: data.seq, message: messageOf(err) });
    }
  }
};
