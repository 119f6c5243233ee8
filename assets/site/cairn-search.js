// Cairn's drop-in search widget, written next to the index by `cairn index`:
//
//   <div id="cairn-search"></div>
//   <script type="module" src="/cairn/cairn-search.js"></script>
//
// The div's data-query is the query of the list on screen (results come from the worker, so a new
// list follows the typing by a message's round trip). Optional attributes on the div: data-method="bm25|dense|hybrid|hipporag|catrag" (default: the
// manifest's), data-k="8" (results per screen), data-placeholder="Search this site",
// data-load="ask|auto" (default ask: see below). The engine runs in a worker
// (cairn-worker.js): loading the index and every search, BM25's and the graph walks, happen off
// the page's main thread, so typing never stalls. The engine and the index are loaded on the
// first focus of (or typing in) the box, not with the page. BM25 answers as soon as the index's
// keyword part is in, with titles and links (titles alone for a JSONL corpus whose ids are not
// URLs: the manifest's `links`); the passages' snippets follow when their texts are in. A vector
// or graph method needs more files (embedder table, passage vectors, knowledge graph, text
// pipeline): the widget says what they cost (the manifest's `sizes`) and fetches them when the
// visitor asks ("Load the full search"), or at once with data-load="auto"; until they are in,
// BM25 answers and says so, and the chosen method's results replace its own when they are ready.
// A list is never replaced by "No results." because the chosen method found nothing: the keyword
// results stay, and the status line says so. Results follow the typing: while the last word has
// no space after it, it also matches the words it begins ("lothai" finds Lothair; for a method
// that does not complete words itself, the word BM25's completions find is searched, and shown),
// and misspelt words find their near spellings. The status line counts the results; "More
// results" shows the next ones. The parts of one long section, and one page's identical
// sections, are shown once. Keys: Enter searches at once, the arrow keys move between the box
// and the results, Escape clears them.

// (The widget imports nothing: the loader and the engine are the worker's, so the page's main
// thread fetches and compiles none of them.)

/** The page link of a passage id written by `cairn index`: the id up to its first space. */
const linkOf = (id) => id.split(' ')[0];

const root = document.getElementById('cairn-search');

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * `text` as nodes with the UTF-16 `ranges` in <mark>, cut to about `max` characters around the
 * first, at whitespace so that no word is cut in two.
 */
function highlighted(text, ranges, max = 240) {
  const first = ranges.length ? ranges[0][0] : 0;
  const firstEnd = ranges.length ? ranges[0][1] : 0;
  let start = Math.max(0, Math.min(first - 60, text.length - max));
  let end = Math.min(text.length, start + max);
  if (start > 0) {
    // the first whole word after the cut (not past the first match)
    const space = text.slice(start, Math.max(start, first)).search(/\s/);
    if (space >= 0) start += space + 1;
  }
  if (end < text.length) {
    // the last whole word before the cut (not before the first match's end)
    const from = Math.min(end, Math.max(start, firstEnd));
    const space = text.slice(from, end).search(/\s\S*$/);
    if (space >= 0) end = from + space;
  }
  const frag = document.createDocumentFragment();
  if (start > 0) frag.append('… ');
  let at = start;
  for (const [s, e] of ranges) {
    if (e <= at || s >= end) continue;
    frag.append(text.slice(at, Math.max(at, s)));
    frag.append(el('mark', {}, text.slice(Math.max(at, s), Math.min(e, end))));
    at = Math.min(e, end);
  }
  frag.append(text.slice(at, end));
  if (end < text.length) frag.append(' …');
  return frag;
}

if (root) {
  const style = el('style', {}, `
#cairn-search { font: inherit; max-width: 40rem; }
#cairn-search input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
#cairn-search ol { list-style: none; padding: 0; margin: .5rem 0; }
#cairn-search li { margin: 0 0 .8rem; }
#cairn-search li .cairn-title { font-weight: 600; }
#cairn-search li .cairn-title mark { color: inherit; }
#cairn-search li p { margin: .2rem 0 0; font-size: .9em; }
#cairn-search .cairn-status { font-size: .85em; opacity: .75; min-height: 1.2em; }
#cairn-search .cairn-count { font-size: .85em; opacity: .75; }
#cairn-search button { font: inherit; font-size: .85em; margin: .2rem 0; }`);
  const input = el('input', {
    type: 'search',
    placeholder: root.dataset.placeholder || 'Search this site',
    'aria-label': 'Search this site',
    autocomplete: 'off',
  });
  const status = el('div', { class: 'cairn-status', role: 'status' });
  const loadButton = el('button', { type: 'button', class: 'cairn-load', hidden: '' });
  const count = el('div', { class: 'cairn-count' });
  const list = el('ol', { class: 'cairn-results' });
  const more = el('button', { type: 'button', class: 'cairn-more', hidden: '' }, 'More results');
  root.append(style, input, status, loadButton, count, list, more);
  const k = Number(root.dataset.k) || 8;
  // a query asks the worker for one screen of results; "More results" asks for the next (the
  // worker keeps the query's ranking and fetches the passages of the results shown only)
  const autoload = root.dataset.load === 'auto';
  let worker = null;
  let opened = null; // the 'opened' message
  let ready = false; // the chosen method runs
  let withoutTexts = false; // the list on screen has titles only
  let loadingFull = false;
  let seq = 0;
  let shownSeq = -1;
  let timer = 0;
  let current = null; // the last 'hits' message shown
  let shown = 0; // how many of its hits are on screen
  // why the chosen method cannot run, and why the snippets cannot come: shown with every list
  let methodNote = '';
  let textsNote = '';
  const line = (...parts) => parts.filter(Boolean).join(' ');
  const notes = () => line(methodNote, textsNote);
  const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

  /** The status line for the list on screen (or for loading). */
  const statusOf = () => {
    if (!current) return notes();
    const m = current;
    if (!m.hits.length) return line('No results.', notes());
    const parts = [];
    if (m.completed) parts.push(`Results for “${m.completed}”.`);
    if (m.fallback) parts.push(`${opened.method} found nothing here; keyword results.`);
    else if (m.method !== opened.method && !methodNote) {
      parts.push(loadingFull ? `Keyword results; the full search is still loading…` : 'Keyword results.');
    }
    parts.push(notes());
    if (withoutTexts && !textsNote) parts.push('Snippets are still loading…');
    return line(...parts);
  };
  const showStatus = () => { status.textContent = statusOf(); };

  /** The offer to fetch the chosen method's files, with their cost. */
  const offerFull = () => {
    if (!opened || ready || loadingFull || opened.method === 'bm25' || methodNote) {
      loadButton.hidden = true;
      return;
    }
    const cost = opened.cost == null ? '' : ` (${mb(opened.cost)} to download)`;
    loadButton.textContent = `Load the full search: ${opened.method}${cost}`;
    loadButton.hidden = false;
  };
  const loadFull = () => {
    if (!opened || loadingFull || ready) return;
    loadingFull = true;
    root.dataset.loadingFull = 'true';
    worker.postMessage({ type: 'full' });
    offerFull();
    showStatus();
  };
  loadButton.addEventListener('click', loadFull);

  const open = () => {
    if (worker) return;
    status.textContent = 'Loading the search index…';
    worker = new Worker(new URL('./cairn-worker.js', import.meta.url), { type: 'module' });
    worker.onerror = (e) => {
      const message = e.message || 'the search worker could not start';
      root.dataset.error = message;
      status.textContent = `Search is unavailable: ${message}`;
    };
    worker.onmessage = ({ data: m }) => {
      if (m.type === 'opened') {
        opened = m;
        root.dataset.ready = 'true';
        root.dataset.loadMs = String(Math.round(m.timings.loadMs));
        root.dataset.loadIndexMs = String(Math.round(m.timings.loadIndexMs));
        if (m.cost != null) root.dataset.fullCost = String(m.cost);
        ready = m.method === 'bm25';
        if (!ready && autoload) loadFull();
        offerFull();
        showStatus();
        run();
      } else if (m.type === 'texts') {
        if (m.ok) {
          root.dataset.textsMs = String(Math.round(m.textsMs));
          // the titles on screen get their snippets
          if (withoutTexts) run();
        } else {
          root.dataset.textsError = m.error;
          textsNote = `The passages' texts could not be loaded (${m.error}): results show titles only.`;
          showStatus();
        }
      } else if (m.type === 'ready') {
        if (m.ok) {
          ready = true;
          loadingFull = false;
          root.dataset.complete = 'true';
          root.dataset.readyMs = String(Math.round(m.readyMs));
          offerFull();
          // the keyword results on screen give way to the chosen method's
          if (root.dataset.shown && root.dataset.shown !== opened.method) run();
          else showStatus();
        } else {
          root.dataset.error = m.error;
          loadingFull = false;
          methodNote = `${opened.method} is unavailable (${m.error}); showing keyword results.`;
          offerFull();
          showStatus();
        }
      } else if (m.type === 'hits') {
        if (m.seq < shownSeq || m.q !== input.value.trim()) return; // an older query's
        shownSeq = m.seq;
        // the next screen of the list on screen, or a new list
        if (m.more && current && m.q === current.q && m.method === current.method) extend(m);
        else show(m);
      } else if (m.type === 'error') {
        if (m.seq === undefined) {
          root.dataset.error = m.message;
          status.textContent = `Search is unavailable: ${m.message}`;
        } else if (m.seq >= shownSeq) {
          status.textContent = `Search failed: ${m.message}`;
        }
      }
    };
    worker.postMessage({ type: 'open', method: root.dataset.method || undefined, full: autoload });
  };

  /** One result's list item. */
  const item = (h, linked) => {
    const li = el('li', { class: 'cairn-result' });
    // the title: a link to the page, or (ids that are not URLs) focusable text
    const a = linked
      ? el('a', { class: 'cairn-title cairn-result-link', href: linkOf(h.id), 'data-id': h.id })
      : el('span', { class: 'cairn-title', tabindex: '0', 'data-id': h.id });
    a.append(highlighted(h.title || h.id, h.titleHighlights || [], 200));
    li.append(a);
    if (h.text) {
      const p = el('p');
      p.append(highlighted(h.text, h.highlights || []));
      li.append(p);
    }
    return li;
  };

  /** Show the results of the list on screen not shown yet, and its count. */
  const showMore = () => {
    if (!current) return;
    // Results link to their pages when the passage ids are URLs (a site's always are; a JSONL
    // corpus's when `cairn index` found every one to be: manifest.links), else show titles only.
    const linked = opened.manifest.links !== false;
    const next = current.hits.slice(shown);
    for (const h of next) list.append(item(h, linked));
    shown += next.length;
    const n = current.hits.length;
    // exact when every result is on screen; else the passages that match (a keyword search's
    // count, before one page's repeats are dropped) or at least what is shown
    const total = current.total ?? 0;
    count.textContent = !n ? ''
      : !current.capped ? `${n} result${n === 1 ? '' : 's'}`
        : total > n ? `About ${total} results` : `${n}+ results`;
    more.hidden = !current.capped;
  };
  /** The next screen of the list on screen, from the worker. */
  let focusFrom = -1; // the first result to focus when the next screen arrives
  more.addEventListener('click', () => {
    if (!current || !current.capped) return;
    focusFrom = shown;
    more.disabled = true;
    worker.postMessage({ type: 'search', seq: ++seq, q: current.q, prefix: current.prefix, max: shown + k, more: true });
  });
  /** Add the results of `m` (the list on screen and its next screen) not shown yet. */
  const extend = (m) => {
    current = m;
    more.disabled = false;
    root.dataset.searchMs = String(m.searchMs);
    showMore();
    showStatus();
    if (focusFrom >= 0) list.querySelectorAll('.cairn-title')[focusFrom]?.focus();
    focusFrom = -1;
  };

  /** Replace the list on screen with `m`'s results. */
  const show = (m) => {
    current = m;
    shown = 0;
    more.disabled = false;
    focusFrom = -1;
    withoutTexts = !m.textsLoaded;
    root.dataset.searchMs = String(m.searchMs);
    root.dataset.shown = m.method;
    root.dataset.query = m.q;
    list.replaceChildren();
    showMore();
    showStatus();
  };

  const clear = () => {
    current = null;
    shown = 0;
    list.replaceChildren();
    count.textContent = '';
    more.hidden = true;
    delete root.dataset.shown;
    delete root.dataset.query;
    showStatus();
  };

  const run = () => {
    open();
    if (!opened) return; // searched once the index is open
    const q = input.value.trim();
    if (!q) {
      clear();
      return;
    }
    // A last word with no space after it may be unfinished: complete it.
    const prefix = !/\s$/.test(input.value);
    worker.postMessage({ type: 'search', seq: ++seq, q, prefix, max: k });
  };

  input.addEventListener('focus', open, { once: true });
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(run, 120);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      clearTimeout(timer);
      run();
    }
  });
  // Arrow keys move between the box and the results' titles; Escape clears both and returns to the box.
  root.addEventListener('keydown', (e) => {
    const titles = [...list.querySelectorAll('.cairn-title')];
    const at = titles.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' && titles.length) {
      e.preventDefault();
      titles[Math.min(at + 1, titles.length - 1)].focus();
    } else if (e.key === 'ArrowUp' && at >= 0) {
      e.preventDefault();
      (at === 0 ? input : titles[at - 1]).focus();
    } else if (e.key === 'Escape' && (at >= 0 || input.value)) {
      e.preventDefault();
      clearTimeout(timer);
      input.value = '';
      clear();
      input.focus();
    }
  });
}
