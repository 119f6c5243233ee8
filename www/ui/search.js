// Running a search: loading what the chosen method needs first, search as you type, the
// example questions.
import { postToWorker } from './channel.js';
import { el } from './dom.js';
import { onCorpusChanged, onEmbedderReady, onEngineReset, restartKeepingCorpus } from './engine.js';
import { fmt } from './format.js';
import { EMBEDDER_NAMES, NOT_IN_BUILD, defaultMethod, embedderFor, methodInfo } from './methods.js';
import { hideError, hideNotice, showError, showNotice } from './notices.js';
import { setBusy } from './progress.js';
import { state } from './state.js';
import { render } from './status.js';

export const QUESTIONS_URL = 'data/hotpotqa/questions.jsonl';
export const EXAMPLE_COUNT = 6;

/** Load `embedder` ('static', 'minilm', 'graph' or 'cage'), then run `pending` (a search) if given. */
export function loadEmbedder(embedder, pending) {
  if (state.embedderLoad) {
    if (state.embedderLoad.embedder === embedder) state.embedderLoad.pending = pending;
    return;
  }
  hideNotice();
  hideError();
  state.embedderLoadId += 1;
  state.embedderLoad = { id: state.embedderLoadId, embedder, pending };
  setBusy(true, embedder === 'minilm' ? 'Loading MiniLM…' : embedder === 'cage' ? 'Loading CAGE…' : 'Downloading the embeddings…');
  postToWorker({ type: 'load-embedder', id: state.embedderLoadId, embedder, method: el.method.value });
}

export function embedderReady(msg) {
  const load = state.embedderLoad;
  if (msg.stats) state.stats = msg.stats;
  if (!load || load.id !== msg.id) {
    // cancelled on the page while the worker finished anyway: keep what it says, nothing more
    render();
    return;
  }
  state.embedderLoad = null;
  setBusy(false);
  if (msg.cancelled || msg.failed) {
    el.method.value = defaultMethod();
    if (msg.cancelled) showNotice(cancelledText(load.embedder));
    if (load.pending) el.resultsMeta.textContent = '';
    render();
    return;
  }
  render();
  if (load.pending) runSearch(load.pending.query, load.pending.question);
}

/** What the page says when loading `embedder` was cancelled. */
export function cancelledText(embedder) {
  const m = state.minilm;
  if (embedder === 'minilm' && m && m.embedded > 0) {
    return `MiniLM paused after ${fmt(m.embedded)} of ${fmt(m.passages)} passages; choose it again to go on. BM25 search still works.`;
  }
  return `Loading ${EMBEDDER_NAMES[embedder] || 'the embeddings'} was cancelled. BM25 search still works.`;
}

/**
 * Cancel while an embedder loads: stop its download; MiniLM's embedding pauses between batches
 * (the worker replies 'ready' with `cancelled`); the static table's embedding runs in one engine
 * call, so it stops only with the worker.
 */
export function cancelEmbedderLoad() {
  const load = state.embedderLoad;
  if (load && load.embedder === 'minilm') {
    postToWorker({ type: 'cancel-embedder' });
    el.progressLabel.textContent = 'Stopping after the current batch…';
    return;
  }
  if (state.progressPhase === 'llm-openie') {
    // LLM OpenIE: stop asking; the passages not yet asked keep their rule-based triples
    postToWorker({ type: 'llm-cancel' });
    el.progressLabel.textContent = 'Stopping the LLM calls; building the graph with rule-based triples for the rest…';
    return;
  }
  if (['embedding', 'extract', 'graph-embed', 'synonyms'].includes(state.progressPhase)) {
    state.embedderLoad = null;
    restartKeepingCorpus(state.progressPhase === 'embedding' ? 'Embedding was cancelled' : 'Building the knowledge graph was cancelled');
    return;
  }
  state.embedderLoad = null;
  postToWorker({ type: 'cancel-embedder' });
  setBusy(false);
  el.method.value = defaultMethod();
  if (load && load.pending) el.resultsMeta.textContent = '';
  showNotice(cancelledText('static'));
  render();
}

export function runSearch(query, question = null, { prefix = false } = {}) {
  query = query.trim();
  if (!query) {
    el.query.focus();
    return;
  }
  if (!state.stats || !state.stats.built) {
    showError('There is nothing to search yet: load the demo corpus or index some text first.');
    return;
  }
  // a typed dataset question counts as that question too
  const q = question || state.questions.find((x) => x.question.trim() === query) || null;
  const method = el.method.value || defaultMethod();
  if (!state.available.includes(method)) {
    const embedder = embedderFor(method);
    if (!embedder) {
      showError(`${methodInfo(method).label} is ${NOT_IN_BUILD}: choose another method.`);
      return;
    }
    if (state.busy && !state.embedderLoad) {
      el.resultsMeta.textContent = 'Wait for indexing to finish, then search again.';
      return;
    }
    // the results on screen belong to another query or method: clear them while loading
    clearResults();
    state.lastSearch = { query, question: q };
    el.resultsMeta.textContent = `Loading ${EMBEDDER_NAMES[embedder]} first…`;
    loadEmbedder(embedder, { query, question: q });
    return;
  }
  state.lastSearch = { query, question: q };
  state.searchId += 1;
  el.resultsMeta.textContent = 'Searching…';
  postToWorker({
    type: 'search',
    id: state.searchId,
    query,
    k: Number(el.k.value),
    method,
    prefix,
  });
}

export function clearResults() {
  state.lastSearch = null;
  el.results.replaceChildren();
  el.resultsMeta.textContent = '';
  el.questionInfo.hidden = true;
}

export async function loadExamples() {
  try {
    const resp = await fetch(QUESTIONS_URL);
    if (!resp.ok) throw new Error(`${resp.status} ${resp.statusText}`);
    const text = await resp.text();
    state.questions = text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .filter((q) => q && typeof q.question === 'string' && Array.isArray(q.gold_ids));
  } catch (err) {
    // the examples are a convenience: the page works without them
    console.warn(`Cairn: could not load the example questions: ${err.message || err}`);
    return;
  }
  el.exampleList.replaceChildren(
    ...state.questions.slice(0, EXAMPLE_COUNT).map((q) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'example';
      b.textContent = q.question;
      b.addEventListener('click', () => {
        el.query.value = q.question;
        runSearch(q.question, q);
      });
      li.append(b);
      return li;
    }),
  );
  el.examples.hidden = false;
  render();
}

// Search as you type, for the methods that complete a last word (methods(): `prefix`), which
// are also fast: while the last word has no space after it, it also matches the words it begins.
let typingTimer = 0;

/** Wire the search form, the result count, the method selector and search as you type. */
export function initSearch() {
  onEmbedderReady(embedderReady);
  // show the last query's results over the new corpus
  onCorpusChanged(() => {
    if (state.lastSearch) runSearch(state.lastSearch.query, state.lastSearch.question);
    else clearResults();
  });
  onEngineReset(clearResults);
  el.form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typingTimer);
    runSearch(el.query.value);
  });
  el.query.addEventListener('input', () => {
    clearTimeout(typingTimer);
    const method = el.method.value || defaultMethod();
    if (!methodInfo(method).prefix || !state.available.includes(method)) return;
    if (!state.stats || !state.stats.built || state.busy) return;
    typingTimer = setTimeout(() => {
      const value = el.query.value;
      if (!value.trim()) {
        clearResults();
        return;
      }
      runSearch(value, null, { prefix: !/\s$/.test(value) });
    }, 120);
  });
  el.k.addEventListener('change', () => {
    if (state.lastSearch) runSearch(state.lastSearch.query, state.lastSearch.question);
  });
  el.method.addEventListener('change', () => {
    const method = el.method.value;
    // the hint under the selector describes the chosen method, whatever happens next
    render();
    if (state.lastSearch) runSearch(state.lastSearch.query, state.lastSearch.question);
    else if (!state.available.includes(method) && embedderFor(method)) loadEmbedder(embedderFor(method), null);
  });
}
