// Cairn's drop-in search widget, written next to the index by `cairn index`:
//
//   <div id="cairn-search"></div>
//   <script type="module" src="/cairn/cairn-search.js"></script>
//
// Optional attributes on the div: data-method="bm25|dense|hybrid|hipporag|catrag" (default: the
// manifest's), data-k="8", data-placeholder="Search this site". The engine and the index are
// loaded on the first focus of (or typing in) the box, not with the page. BM25 answers as soon as
// the index's keyword part is in, with titles and links (titles alone for a JSONL corpus whose ids
// are not URLs: the manifest's `links`); the passages' snippets follow when their
// texts are in. Until a vector or graph method's files are in (embedder table, passage vectors,
// knowledge graph), BM25 answers and says so, and the chosen method's results replace its own
// when they are ready. Results follow the
// typing: while the last word has no space after it, it also matches the words it begins
// ("lothai" finds Lothair), and misspelt words find their near spellings. Keys: Enter searches at
// once, the arrow keys move between the box and the results, Escape clears them.

import { openIndex, linkOf } from './cairn-loader.js';

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
#cairn-search .cairn-status { font-size: .85em; opacity: .75; min-height: 1.2em; }`);
  const input = el('input', {
    type: 'search',
    placeholder: root.dataset.placeholder || 'Search this site',
    'aria-label': 'Search this site',
    autocomplete: 'off',
  });
  const status = el('div', { class: 'cairn-status', role: 'status' });
  const list = el('ol', { class: 'cairn-results' });
  root.append(style, input, status, list);
  const k = Number(root.dataset.k) || 8;
  let opening = null;
  let timer = 0;
  // the list on screen was made before the passages' texts were in (titles without snippets)
  let withoutTexts = false;
  // why the chosen method cannot run, and why the snippets cannot come: shown with every list
  let methodNote = '';
  let textsNote = '';
  const line = (...parts) => parts.filter(Boolean).join(' ');
  const notes = () => line(methodNote, textsNote);

  const open = () => {
    if (!opening) {
      status.textContent = 'Loading the search index…';
      // Resolves once keyword search works; a graph or vector method follows when its files are in.
      opening = openIndex({ method: root.dataset.method || undefined, early: true }).then(
        (cairn) => {
          status.textContent = '';
          root.dataset.ready = 'true';
          root.dataset.loadMs = String(Math.round(cairn.timings.loadMs));
          root.dataset.loadIndexMs = String(Math.round(cairn.timings.loadIndexMs));
          cairn.texts.then(
            () => {
              root.dataset.textsMs = String(Math.round(cairn.timings.textsMs));
              // the titles on screen get their snippets
              if (withoutTexts) run();
            },
            (err) => {
              root.dataset.textsError = err.message;
              textsNote = `The passages' texts could not be loaded (${err.message}): results show titles only.`;
              status.textContent = notes();
            },
          );
          cairn.ready.then(
            () => {
              root.dataset.complete = 'true';
              root.dataset.readyMs = String(Math.round(cairn.timings.readyMs));
              // the keyword results on screen give way to the chosen method's
              if (root.dataset.shown && root.dataset.shown !== cairn.method) run();
            },
            (err) => {
              root.dataset.error = err.message;
              methodNote = `${cairn.method} is unavailable (${err.message}); showing keyword results.`;
              status.textContent = notes();
            },
          );
          return cairn;
        },
        (err) => {
          status.textContent = `Search is unavailable: ${err.message}`;
          root.dataset.error = err.message;
          throw err;
        },
      );
    }
    return opening;
  };

  const run = async () => {
    const q = input.value.trim();
    // A last word with no space after it may be unfinished: complete it.
    const prefix = !/\s$/.test(input.value);
    let cairn;
    try {
      cairn = await open();
    } catch {
      return;
    }
    if (q !== input.value.trim()) return; // typed on while loading: the newer run shows results
    list.replaceChildren();
    if (!q) {
      status.textContent = '';
      delete root.dataset.shown;
      return;
    }
    // Until the chosen method's files are in, BM25 answers (it needs only the index).
    const method = cairn.methods().includes(cairn.method) ? cairn.method : 'bm25';
    const t0 = performance.now();
    let hits;
    try {
      // Twice as many as shown: the parts of one long section are shown once.
      hits = cairn.search(q, { k: 2 * k, method, prefix });
    } catch (err) {
      status.textContent = `Search failed: ${err.message}`;
      return;
    }
    root.dataset.searchMs = String(performance.now() - t0);
    root.dataset.shown = method;
    withoutTexts = !cairn.textsLoaded();
    // Results link to their pages when the passage ids are URLs (a site's always are; a JSONL
    // corpus's when `cairn index` found every one to be: manifest.links), else show titles only.
    const linked = cairn.manifest.links !== false;
    // the parts of one long section share its link and its title: shown once (two sections under
    // headings without an id share the page's link, not their titles: both are shown)
    const seen = new Set();
    const key = (h) => (linked ? `${linkOf(h.id)}\n${h.title}` : h.id);
    hits = hits.filter((h) => !seen.has(key(h)) && seen.add(key(h))).slice(0, k);
    status.textContent = !hits.length
      ? line('No results.', notes())
      : method !== cairn.method && !methodNote
        ? line('Keyword results; the full search is still loading…', textsNote)
        : line(notes(), withoutTexts && !textsNote ? 'Snippets are still loading…' : '');
    for (const h of hits) {
      const li = el('li');
      // the title: a link to the page, or (ids that are not URLs) focusable text
      const a = linked
        ? el('a', { class: 'cairn-title', href: linkOf(h.id), 'data-id': h.id })
        : el('span', { class: 'cairn-title', tabindex: '0', 'data-id': h.id });
      a.append(highlighted(h.title || h.id, h.titleHighlights || [], 200));
      li.append(a);
      if (h.text) {
        const p = el('p');
        p.append(highlighted(h.text, h.highlights || []));
        li.append(p);
      }
      list.append(li);
    }
  };

  input.addEventListener('focus', () => { open().catch(() => {}); }, { once: true });
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
      list.replaceChildren();
      status.textContent = '';
      input.focus();
    }
  });
}
