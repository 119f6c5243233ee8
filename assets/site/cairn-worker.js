// Cairn's search worker, written next to the index by `cairn index`: the widget
// (cairn-search.js) starts it as a module worker so that the engine, the index's loading and
// every search (BM25, the vector methods and the graph walks) run off the page's main thread.
//
// Messages from the widget:
//   {type: 'open', method, full}      open the index (cairn-loader.js's openIndex, early: true;
//                                     `full: false` waits for 'full' before fetching what the
//                                     chosen method needs beyond BM25)
//   {type: 'full'}                    fetch and load the chosen method's files
//   {type: 'search', seq, q, prefix, max}
//                                     search; `max` results at most, after the duplicates
// Messages to the widget:
//   {type: 'opened', manifest, method, cost, timings}   BM25 answers from now on
//   {type: 'texts', ok, error, textsMs}                 the passages' texts are in (or why not)
//   {type: 'ready', ok, error, readyMs}                 the chosen method runs (or why not)
//   {type: 'hits', seq, q, method, hits, capped, completed, fallback, textsLoaded, searchMs}
//   {type: 'error', seq, message}                       opening (no seq) or a search failed

// The manifest, the loader and the engine's JavaScript are fetched side by side (static imports
// would fetch the loader, then the engine's JavaScript, then the loader the manifest): the worker
// starts when the index is opened.
const base = new URL('.', import.meta.url);
const manifestFetch = fetch(new URL('manifest.json', base));
manifestFetch.catch(() => {}); // the loader reports a failure (fetchManifest)
const loaderModule = import('./cairn-loader.js');
loaderModule.catch(() => {});
import('./cairn.js').catch(() => {}); // the loader's own import; its failure is reported there

/** The page link of a passage id written by `cairn index`: the id up to its first space. */
const linkOf = (id) => id.split(' ')[0];

let cairn = null;

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

function search({ seq, q, prefix, max }) {
  const t0 = performance.now();
  const chosen = cairn.methods().includes(cairn.method) ? cairn.method : 'bm25';
  // Twice as many as shown, and one more: the repeats are dropped, and the extra one says
  // whether there are more than `max`.
  const k = 2 * max + 1;
  let method = chosen;
  let completed = q;
  let hits;
  if (chosen !== 'bm25' && prefix && !PREFIX_METHODS.has(chosen)) {
    // the last word is being typed: BM25's completions name the word the chosen method gets
    const keyword = cairn.search(q, { k: 5, method: 'bm25', prefix: true });
    completed = completeLastWord(q, keyword);
    hits = cairn.search(completed, { k, method: chosen, prefix: false });
  } else {
    hits = cairn.search(q, { k, method: chosen, prefix });
  }
  let fallback = false;
  if (!hits.length && chosen !== 'bm25') {
    // a list never turns into "No results." because the chosen method found nothing that the
    // keyword search finds
    const keyword = cairn.search(q, { k, method: 'bm25', prefix });
    if (keyword.length) {
      hits = keyword;
      method = 'bm25';
      fallback = true;
    }
  }
  const distinct = distinctHits(hits, cairn.manifest.links !== false);
  return {
    type: 'hits',
    seq,
    q,
    method,
    hits: distinct.slice(0, max),
    capped: hits.length >= k || distinct.length > max,
    completed: completed !== q ? completed : undefined,
    fallback,
    textsLoaded: cairn.textsLoaded(),
    searchMs: performance.now() - t0,
  };
}

let opening = null;

self.onmessage = async ({ data }) => {
  if (data.type === 'open') {
    if (opening) return;
    opening = loaderModule.then(({ openIndex, fetchManifest }) => openIndex({
      base,
      manifest: fetchManifest(base, manifestFetch),
      method: data.method || undefined,
      early: true,
      full: data.full !== false,
    }));
    try {
      cairn = await opening;
    } catch (err) {
      post({ type: 'error', message: messageOf(err) });
      return;
    }
    post({ type: 'opened', manifest: cairn.manifest, method: cairn.method, cost: cairn.cost, timings: { ...cairn.timings } });
    cairn.texts.then(
      () => post({ type: 'texts', ok: true, textsMs: cairn.timings.textsMs }),
      (err) => post({ type: 'texts', ok: false, error: messageOf(err) }),
    );
    cairn.ready.then(
      () => post({ type: 'ready', ok: true, readyMs: cairn.timings.readyMs }),
      (err) => post({ type: 'ready', ok: false, error: messageOf(err) }),
    );
  } else if (data.type === 'full') {
    await opening?.catch(() => {});
    cairn?.loadFull();
  } else if (data.type === 'search') {
    try {
      await opening;
    } catch {
      return; // the widget has the reason from 'error'
    }
    try {
      post(search(data));
    } catch (err) {
      post({ type: 'error', seq: data.seq, message: messageOf(err) });
    }
  }
};
