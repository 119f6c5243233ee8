// Cairn's page: plain DOM, no framework. The engine lives in a Web Worker (worker.js); this file
// only sends it messages and draws what comes back. Passage text and titles are user data and are
// only ever put in the page as text nodes and <mark> elements, never as HTML.
import './style.css';

const QUESTIONS_URL = 'data/hotpotqa/questions.jsonl';
const EXAMPLE_COUNT = 6;

// The method selector lists every method of the engine's methods(), with these labels. A method
// whose embedder (the static table, or the MiniLM transformer) is not loaded yet is loaded on
// demand; any other one that availableMethods() does not list is shown disabled, with the reason.
const METHOD_LABELS = {
  bm25: 'BM25',
  dense: 'Dense (static MiniLM)',
  hybrid: 'Hybrid (BM25 + dense, RRF)',
  'dense-minilm': 'Dense (MiniLM transformer)',
  hipporag: 'HippoRAG 2 (static PPR on the knowledge graph)',
  catrag: 'CatRAG (query-aware PPR on the knowledge graph)',
  cage: 'CAGE (dense top 20, reranked by passage-graph coherence)',
  'bm25+cage': 'BM25 + CAGE (BM25 top 20, reranked by coherence)',
  'catrag+cage': 'CatRAG + CAGE (CatRAG top 20, reranked by coherence)',
};
const METHOD_SHORT = { bm25: 'BM25', dense: 'dense', hybrid: 'hybrid', 'dense-minilm': 'dense MiniLM', hipporag: 'HippoRAG 2', catrag: 'CatRAG', cage: 'CAGE', 'bm25+cage': 'BM25 + CAGE', 'catrag+cage': 'CatRAG + CAGE' };
const GRAPH_METHODS = ['hipporag', 'catrag'];
const STATIC_EMBEDDER_METHODS = ['dense', 'hybrid'];
// CAGE: a first stage's top 20 reranked by passage-graph coherence; see the CAGE section.
const CAGE_METHODS = ['cage', 'bm25+cage', 'catrag+cage'];
const CAGE_SCORE_NAME = 'CAGE fused score: α · first-stage score (min–max) + (1 − α) · min–max(coherence) over the 20 candidates';
/** The embedder the worker loads on demand for a method, or null. */
function embedderFor(method) {
  if (STATIC_EMBEDDER_METHODS.includes(method)) return 'static';
  if (method === 'dense-minilm') return 'minilm';
  if (GRAPH_METHODS.includes(method)) return 'graph';
  if (CAGE_METHODS.includes(method)) return 'cage';
  return null;
}
const EMBEDDER_NAMES = { static: 'the embeddings', minilm: 'MiniLM', graph: 'the knowledge graph', cage: 'CAGE' };
const NOT_IN_BUILD = 'not in this build';

const $ = (id) => document.getElementById(id);
const el = {
  error: $('error'),
  errorMessage: $('error-message'),
  errorDismiss: $('error-dismiss'),
  status: $('status'),
  sources: $('sources'),
  progressRow: $('progress-row'),
  progress: $('progress'),
  progressLabel: $('progress-label'),
  cancel: $('cancel'),
  notice: $('notice'),
  noticeText: $('notice-text'),
  reloadDemo: $('reload-demo'),
  loadDemo: $('load-demo'),
  modeReplace: $('mode-replace'),
  dropzone: $('dropzone'),
  fileInput: $('file-input'),
  paste: $('paste'),
  pasteName: $('paste-name'),
  indexText: $('index-text'),
  form: $('search-form'),
  query: $('query'),
  search: $('search'),
  k: $('k'),
  method: $('method'),
  methodHint: $('method-hint'),
  examples: $('examples'),
  exampleList: $('example-list'),
  questionInfo: $('question-info'),
  resultsMeta: $('results-meta'),
  results: $('results'),
  version: $('version'),
  graphInfo: $('graph-info'),
  saveIndex: $('save-index'),
  exportIndex: $('export-index'),
  importIndex: $('import-index'),
  importLabel: $('import-label'),
  shareLink: $('share-link'),
  shareUrl: $('share-url'),
  savedList: $('saved-list'),
};

const state = {
  worker: null,
  started: false, // the worker said hello
  busy: false, // an indexing request is running
  stats: null,
  lastTiming: null,
  sources: [], // labels of what the corpus holds
  searchId: 0,
  lastSearch: null, // {query, question}
  questions: [],
  methods: [], // every method the engine knows (methods())
  available: ['bm25'], // the methods it can run now (availableMethods())
  embedder: null, // {name, dims} once the static embedder is loaded
  minilm: null, // {dims, embedded, passages} once the MiniLM model is loaded
  graph: null, // the knowledge graph's report once built (engine.graphReport())
  passageGraphs: new Map(), // request id → the <div> waiting for a passage's triples
  passageGraphId: 0,
  embedderLoad: null, // {id, embedder, pending: {query, question} | null} while an embedder loads
  embedderLoadId: 0,
  progressPhase: null, // the phase of the last progress message of the running request
  // The indexing requests that built the current corpus, in order (a 'replace' starts it over),
  // so that a Cancel that must stop the worker can rebuild the corpus (BM25 only) in a new one.
  history: [],
  pendingIndex: null, // the indexing request in flight
  restoring: 0, // replayed requests still to answer
};

// ---------------------------------------------------------------- worker

function startWorker({ loadDemo }) {
  const worker = new Worker(/* webpackChunkName: "engine-worker" */ new URL('./worker.js', import.meta.url));
  state.worker = worker;
  state.started = false;
  state.stats = null;
  state.sources = [];
  state.available = ['bm25'];
  state.embedder = null;
  state.minilm = null;
  state.graph = null;
  state.embedderLoad = null;
  worker.onmessage = (event) => {
    if (worker === state.worker) onMessage(event.data);
  };
  worker.onerror = (event) => {
    if (worker !== state.worker) return;
    event.preventDefault();
    showError(`The search engine stopped unexpectedly${event.message ? `: ${event.message}` : ''}.`);
    restartEmpty('The search engine was restarted and is empty.');
  };
  if (loadDemo) requestIndex({ type: 'load-demo', replace: true });
  render();
}

/**
 * Cancel work that runs in one engine call (indexing, the static embedding, the graph build):
 * stop the worker and start a new one that indexes the corpus of before the cancelled step
 * again, from the requests that built it (BM25 only: embeddings and the graph are rebuilt when a
 * method needs them). With no corpus before, the new engine is empty.
 */
function restartKeepingCorpus(what) {
  const replay = state.history.slice();
  if (replay.length === 0) {
    restartEmpty(`${what}, so the engine is empty now.`);
    return;
  }
  state.worker.terminate();
  setBusy(false);
  clearResults();
  startWorker({ loadDemo: false });
  state.history = replay;
  state.restoring = replay.length;
  setBusy(true, 'Restoring your corpus…');
  for (const m of replay) state.worker.postMessage(m);
  showNotice(`${what}. Your corpus is indexed again (BM25); dense and graph methods rebuild what they need when you choose them.`);
}

/** Stop the worker (and whatever it is doing) and start an empty one. */
function restartEmpty(noticeText) {
  state.history = [];
  state.worker.terminate();
  setBusy(false);
  clearResults();
  startWorker({ loadDemo: false });
  el.noticeText.textContent = noticeText;
  el.notice.hidden = false;
  el.reloadDemo.hidden = false;
}

function requestIndex(message) {
  hideNotice();
  state.pendingIndex = message;
  setBusy(true, message.type === 'load-demo' ? 'Loading the demo corpus…' : 'Reading…');
  state.worker.postMessage(message);
}

function onMessage(msg) {
  if (typeof msg.type === 'string' && msg.type.startsWith('llm-')) {
    handleLlmMessage(msg);
    return;
  }
  switch (msg.type) {
    case 'hello':
      llmSendConfig(); // a new worker has no endpoint: give it the one in use
      state.started = true;
      state.stats = msg.stats;
      state.methods = msg.methods || [];
      takeMethodsInfo(msg);
      // a new worker has no embeddings: back to the default method until one is chosen again
      if (!state.available.includes(el.method.value)) el.method.value = 'bm25';
      el.version.textContent = msg.version ? `v${msg.version}` : '';
      break;
    case 'progress':
      state.progressPhase = msg.phase;
      showProgress(msg);
      return;
    case 'ready': {
      takeMethodsInfo(msg);
      if (msg.request === 'load-embedder') {
        embedderReady(msg);
        break;
      }
      if (state.restoring > 0) {
        state.restoring -= 1;
        if (state.restoring > 0) {
          if (msg.stats) state.stats = msg.stats;
          if (msg.changed) state.sources = msg.replace ? msg.labels || [] : state.sources.concat(msg.labels || []);
          break;
        }
      } else if (msg.changed && state.pendingIndex) {
        state.history = msg.replace ? [state.pendingIndex] : state.history.concat([state.pendingIndex]);
      }
      state.pendingIndex = null;
      setBusy(false);
      if (msg.stats) state.stats = msg.stats;
      if (msg.changed) {
        state.lastTiming = msg.timing;
        const labels = msg.labels || [];
        state.sources = msg.replace ? labels : state.sources.concat(labels);
        // show the last query's results over the new corpus
        if (state.lastSearch) runSearch(state.lastSearch.query, state.lastSearch.question);
        else clearResults();
      }
      break;
    }
    case 'results':
      if (msg.id === state.searchId) {
        renderResults(msg);
        renderLlmTiers(msg);
      }
      return;
    case 'passage-graph':
      showPassageGraph(msg);
      return;
    case 'cage-graph':
      showCageGraph(msg);
      return;
    case 'index-file':
    case 'corpus-jsonl':
      settleWorkerRequest(msg.id, msg, null);
      return;
    case 'error':
      if (settleWorkerRequest(msg.id, null, msg)) return;
      if (msg.during === 'search' && msg.id !== state.searchId) return;
      if (msg.during === 'passage-graph' || msg.during === 'cage-graph') {
        const box = state.passageGraphs.get(msg.id);
        state.passageGraphs.delete(msg.id);
        if (box) box.textContent = msg.message;
        return;
      }
      if (msg.during === 'search') {
        el.resultsMeta.textContent = '';
        renderLlmTiers(null);
      }
      showError(msg.message);
      if (msg.fatal) restartEmpty('The search engine was restarted after an internal error and is empty.');
      return;
    default:
      return;
  }
  render();
}

// ---------------------------------------------------------------- corpus panel

const PHASES = {
  'loading-index': 'Loading the index',
  fetching: 'Downloading the demo corpus',
  adding: 'Reading',
  indexing: 'Indexing',
  restoring: 'Restoring the index',
  download: 'Downloading the embeddings',
  embedding: 'Embedding passages',
  'loading-model': 'Preparing the MiniLM model (a few seconds)',
  'embedding-minilm': 'Embedding passages with MiniLM',
  'cage-embed': 'Computing CAGE graph embeddings (once per passage)',
  extract: 'Extracting triples (OpenIE)',
  'graph-embed': 'Embedding entities and facts',
  synonyms: 'Linking synonym entities',
};
const COUNTED_PHASES = ['loading-index', 'indexing', 'restoring', 'embedding', 'embedding-minilm', 'extract', 'graph-embed', 'synonyms'];

function showProgress({ phase, done, total, name, what }) {
  const label = phase === 'download' && what === 'minilm'
    ? 'Downloading MiniLM (model and engine)'
    : phase === 'download' && what === 'cage'
      ? 'Downloading CAGE (R-GCN model and engine)'
      : phase === 'loading-model' && state.embedderLoad && state.embedderLoad.embedder === 'cage'
        ? 'Preparing CAGE\'s R-GCN'
        : PHASES[phase] || 'Working';
  if (phase === 'download') {
    if (total > 0) {
      el.progress.max = total;
      el.progress.value = Math.min(done, total);
      el.progressLabel.textContent = `${label}: ${mb(done)} of ${mb(total)} MB`;
    } else {
      el.progress.removeAttribute('value');
      el.progressLabel.textContent = `${label}: ${mb(done)} MB`;
    }
    return;
  }
  el.progress.max = Math.max(1, total);
  el.progress.value = Math.min(done, total);
  if (COUNTED_PHASES.includes(phase)) {
    el.progressLabel.textContent = `${label}: ${fmt(done)} of ${fmt(total)}`;
  } else if (phase === 'adding' && name) {
    el.progressLabel.textContent = `${label} ${name} (${done + 1} of ${total})`;
  } else {
    el.progressLabel.textContent = `${label}…`;
  }
}

function setBusy(busy, label) {
  state.busy = busy;
  state.progressPhase = null;
  el.progressRow.hidden = !busy;
  if (busy) {
    el.progress.removeAttribute('value'); // indeterminate until the first progress message
    el.progressLabel.textContent = label || 'Working…';
  }
  render();
}

function render() {
  const { stats, busy, started } = state;
  const built = !!(stats && stats.built && stats.passages > 0);
  el.loadDemo.disabled = busy || !started;
  el.indexText.disabled = busy || !started;
  el.fileInput.disabled = busy || !started;
  el.dropzone.classList.toggle('disabled', busy || !started);
  el.search.disabled = !built;
  el.method.disabled = busy || !started;
  for (const b of el.exampleList.querySelectorAll('button')) b.disabled = !built;
  renderMethods();

  if (!started) {
    el.status.textContent = 'Starting the engine…';
  } else if (!stats || stats.passages === 0) {
    el.status.textContent = 'No passages yet. Load the demo corpus or add your own text.';
  } else {
    el.status.replaceChildren();
    const strong = document.createElement('strong');
    strong.textContent = `${fmt(stats.passages)} ${stats.passages === 1 ? 'passage' : 'passages'}`;
    const parts = [`${fmt(stats.terms)} terms`, `index ${bytes(stats.indexBytes)}`];
    if (state.lastTiming && Number.isFinite(state.lastTiming.buildMs)) {
      parts.push(`built in ${ms(state.lastTiming.buildMs)}`);
    }
    if (!stats.built) parts.push('not built');
    for (const { name, dims } of stats.embedders || []) {
      parts.push(`embeddings: ${name}, ${dims}-d`);
    }
    el.status.append(strong);
    for (const part of parts) {
      const span = document.createElement('span');
      span.className = 'part';
      span.textContent = part;
      el.status.append(' · ', span);
    }
  }
  renderGraphInfo();
  renderSavedControls();
  // the example questions are HotpotQA's: offer them while the demo corpus is loaded
  el.examples.hidden = state.questions.length === 0 || !state.sources.includes('HotpotQA demo');
  el.sources.hidden = state.sources.length === 0 || !stats || stats.passages === 0;
  el.sources.textContent = `From: ${state.sources.join(', ')}`;
}

function hideNotice() {
  el.notice.hidden = true;
}

function replaceMode() {
  return el.modeReplace.checked;
}

async function indexFiles(fileList) {
  const files = Array.from(fileList || []);
  if (files.length === 0 || state.busy) return;
  hideError();
  let read;
  try {
    read = await Promise.all(files.map(async (f) => ({ name: f.name, text: await f.text() })));
  } catch (err) {
    showError(`Could not read the files: ${err.message || err}`);
    return;
  }
  const binary = read.find((f) => f.text.includes('\u0000'));
  if (binary) {
    showError(`${binary.name}: this looks like a binary file. Cairn indexes .txt, .md and .jsonl files.`);
    return;
  }
  requestIndex({ type: 'index-files', files: read, replace: replaceMode() });
}

function indexPastedText() {
  const text = el.paste.value;
  if (!text.trim()) {
    showError('There is no text to index: paste some text into the box first.');
    el.paste.focus();
    return;
  }
  hideError();
  const name = el.pasteName.value.trim() || 'pasted text';
  requestIndex({ type: 'index-text', name, text, replace: replaceMode() });
}

// ---------------------------------------------------------------- search

function takeMethodsInfo(msg) {
  if (Array.isArray(msg.available)) state.available = msg.available;
  if (msg.embedder !== undefined) state.embedder = msg.embedder;
  if (msg.minilm !== undefined) state.minilm = msg.minilm;
  if (msg.graph !== undefined) state.graph = msg.graph;
  if (msg.cage !== undefined) state.cage = msg.cage;
}

/** Whether `m` can be chosen: it runs now, or the embedder it needs can be loaded. */
function selectable(m) {
  return state.available.includes(m) || embedderFor(m) !== null;
}

/** The method selector: every method the engine knows, the ones it cannot run disabled. */
function renderMethods() {
  const current = el.method.value || 'bm25';
  const options = state.methods.map((m) => {
    const o = document.createElement('option');
    o.value = m;
    const label = METHOD_LABELS[m] || m;
    if (selectable(m)) {
      o.textContent = label;
    } else {
      o.textContent = `${label} — ${NOT_IN_BUILD}`;
      o.disabled = true;
      o.title = m === 'dense-minilm'
        ? 'The MiniLM transformer is not compiled into this WebAssembly build.'
        : 'This WebAssembly build cannot run this method in the page.';
    }
    return o;
  });
  const same =
    options.length === el.method.options.length &&
    options.every((o, i) => o.textContent === el.method.options[i].textContent && o.disabled === el.method.options[i].disabled);
  if (!same) el.method.replaceChildren(...options);
  el.method.value = state.methods.includes(current) && selectable(current) ? current : 'bm25';

  const needsDownload = STATIC_EMBEDDER_METHODS.some((m) => state.methods.includes(m)) && !state.embedder;
  let hint = '';
  const chosen = el.method.value;
  if (state.embedderLoad) hint = `Loading ${EMBEDDER_NAMES[state.embedderLoad.embedder]}…`;
  else if (chosen === 'dense-minilm') {
    const m = state.minilm;
    if (!m) hint = 'MiniLM first downloads 38 MB (model and engine) from this site, then embeds every passage: about 3 passages a second.';
    else if (m.embedded < m.passages) hint = `MiniLM: ${fmt(m.embedded)} of ${fmt(m.passages)} passages embedded; a search embeds the rest first.`;
    else hint = `MiniLM loaded: ${m.dims}-d, ${fmt(m.embedded)} passages embedded.`;
  } else if (CAGE_METHODS.includes(chosen)) {
    hint = cageHint(chosen);
  } else if (GRAPH_METHODS.includes(chosen) && state.graph) {
    hint = `Knowledge graph built: ${fmt(state.graph.counts.entity_nodes)} entities, ${fmt(state.graph.counts.facts)} facts.`;
  } else if (GRAPH_METHODS.includes(chosen)) {
    hint = 'HippoRAG 2 and CatRAG first build a knowledge graph of the corpus (seconds), here in the page.';
  } else if (state.embedder && STATIC_EMBEDDER_METHODS.includes(chosen)) hint = `Embeddings loaded: static MiniLM, ${state.embedder.dims}-d.`;
  else if (needsDownload && (chosen === 'bm25' || STATIC_EMBEDDER_METHODS.includes(chosen))) {
    hint = 'Dense and hybrid first download 7.8 MB of embeddings, from this site.';
  }
  el.methodHint.textContent = hint;
  el.methodHint.hidden = !el.methodHint.textContent;
}

/** Load `embedder` ('static' or 'minilm'), then run `pending` (a search) if given. */
function loadEmbedder(embedder, pending) {
  if (state.embedderLoad) {
    if (state.embedderLoad.embedder === embedder) state.embedderLoad.pending = pending;
    return;
  }
  hideNotice();
  hideError();
  state.embedderLoadId += 1;
  state.embedderLoad = { id: state.embedderLoadId, embedder, pending };
  setBusy(true, embedder === 'minilm' ? 'Loading MiniLM…' : embedder === 'cage' ? 'Loading CAGE…' : 'Downloading the embeddings…');
  state.worker.postMessage({ type: 'load-embedder', id: state.embedderLoadId, embedder, method: el.method.value });
}

function embedderReady(msg) {
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
    el.method.value = 'bm25';
    if (msg.cancelled) showNotice(cancelledText(load.embedder));
    if (load.pending) el.resultsMeta.textContent = '';
    render();
    return;
  }
  render();
  if (load.pending) runSearch(load.pending.query, load.pending.question);
}

/** What the page says when loading `embedder` was cancelled. */
function cancelledText(embedder) {
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
function cancelEmbedderLoad() {
  const load = state.embedderLoad;
  if (load && load.embedder === 'minilm') {
    state.worker.postMessage({ type: 'cancel-embedder' });
    el.progressLabel.textContent = 'Stopping after the current batch…';
    return;
  }
  if (['embedding', 'extract', 'graph-embed', 'synonyms'].includes(state.progressPhase)) {
    state.embedderLoad = null;
    restartKeepingCorpus(state.progressPhase === 'embedding' ? 'Embedding was cancelled' : 'Building the knowledge graph was cancelled');
    return;
  }
  state.embedderLoad = null;
  state.worker.postMessage({ type: 'cancel-embedder' });
  setBusy(false);
  el.method.value = 'bm25';
  if (load && load.pending) el.resultsMeta.textContent = '';
  showNotice(cancelledText('static'));
  render();
}

function runSearch(query, question = null, { prefix = false } = {}) {
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
  const method = el.method.value || 'bm25';
  if (!state.available.includes(method)) {
    const embedder = embedderFor(method);
    if (!embedder) {
      showError(`${METHOD_LABELS[method] || method} is ${NOT_IN_BUILD}: choose another method.`);
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
  state.worker.postMessage({
    type: 'search',
    id: state.searchId,
    query,
    k: Number(el.k.value),
    method,
    prefix,
  });
}

function clearResults() {
  state.lastSearch = null;
  el.results.replaceChildren();
  el.resultsMeta.textContent = '';
  el.questionInfo.hidden = true;
}

function renderResults({ id: searchId, hits, ms: took, method = 'bm25', explanation, cage }) {
  const question = state.lastSearch && state.lastSearch.question;
  const gold = new Set(question ? question.gold_ids : []);
  const top = hits.length ? hits[0].score : 0;

  el.results.replaceChildren(
    ...hits.map((h, i) => {
      const li = hitElement(h, top, gold.has(h.id), method);
      const body = li.querySelector('.hit-body');
      if (explanation && explanation.passages && explanation.passages[i]) {
        body.append(explainElement(explanation, explanation.passages[i], h));
      }
      if (CAGE_METHODS.includes(method)) {
        body.querySelector('.hit-head').after(cageScoresElement(h));
        body.append(cageGraphElement(h.id));
      }
      if (state.graph) body.append(triplesElement(h.id));
      return li;
    }),
  );
  if (explanation) el.results.dataset.fallback = explanation.retrieval && explanation.retrieval.fallback ? JSON.stringify(explanation.retrieval.fallback) : '';
  // which search is shown (tests wait on these)
  el.results.dataset.search = String(searchId);
  el.results.dataset.query = state.lastSearch ? state.lastSearch.query : '';
  el.results.dataset.method = method;

  const found = hits.filter((h) => gold.has(h.id)).length;
  if (hits.length === 0) {
    // Every method returns nothing when no word of the query occurs in any passage.
    el.resultsMeta.textContent = 'Nothing matches: no passage shares a word with this query (common words such as “the” are ignored).';
  } else {
    el.resultsMeta.textContent = `${hits.length} ${hits.length === 1 ? 'result' : 'results'} in ${ms(took)} · ${METHOD_SHORT[method] || method}`;
    if (cage) el.resultsMeta.textContent += ` (${cage.candidates} candidates reranked from stored graph embeddings in ${ms(cage.rerankMs)}${cage.embedded ? `; ${cage.embedded} new passages embedded first, ${ms(cage.embedMs)}` : ''})`;
  }

  el.questionInfo.hidden = !question;
  if (question) {
    el.questionInfo.replaceChildren();
    const a = document.createElement('span');
    a.textContent = 'HotpotQA answer: ';
    const b = document.createElement('strong');
    b.textContent = question.answer;
    const g = document.createElement('span');
    g.className = 'gold-count';
    g.textContent = `${found} of ${gold.size} gold passages in the top ${hits.length || Number(el.k.value)}`;
    el.questionInfo.append(a, b, g);
  }
}

/** A score as shown: BM25 with 2 decimals; cosines and RRF sums with 3 significant digits. */
function scoreText(score, method) {
  return method === 'bm25' ? score.toFixed(2) : score.toPrecision(3);
}

const SCORE_NAMES = {
  bm25: 'BM25 score',
  dense: 'Cosine similarity',
  hipporag: 'Personalized PageRank mass',
  catrag: 'Personalized PageRank mass (query-aware)',
  'dense-minilm': 'Cosine similarity (MiniLM)',
  hybrid: 'RRF score (reciprocal-rank fusion of BM25 and dense)',
  cage: CAGE_SCORE_NAME,
  'bm25+cage': CAGE_SCORE_NAME,
  'catrag+cage': CAGE_SCORE_NAME,
};

function hitElement(hit, top, isGold, method) {
  const li = document.createElement('li');
  li.className = 'hit';
  li.dataset.testid = 'hit';
  li.dataset.id = hit.id;
  if (isGold) li.classList.add('is-gold');

  const rank = document.createElement('span');
  rank.className = 'hit-rank';
  rank.textContent = String(hit.rank);

  const head = document.createElement('div');
  head.className = 'hit-head';
  const title = document.createElement('h3');
  title.className = 'hit-title';
  if (hit.title) appendHighlighted(title, hit.title, hit.titleHighlights);
  else {
    title.textContent = '(untitled)';
    title.classList.add('untitled');
  }
  head.append(title);
  if (isGold) {
    const badge = document.createElement('span');
    badge.className = 'badge gold';
    badge.textContent = 'gold';
    badge.title = 'A supporting passage of this HotpotQA question';
    head.append(badge);
  }

  const score = document.createElement('div');
  score.className = 'hit-score';
  const pct = top > 0 ? Math.max(2, Math.round((100 * hit.score) / top)) : 0;
  score.title = `${SCORE_NAMES[method] || 'Score'} ${method === 'bm25' ? hit.score.toFixed(3) : hit.score.toPrecision(4)} (${pct}% of the top score)`;
  const bar = document.createElement('span');
  bar.className = 'bar';
  bar.setAttribute('aria-hidden', 'true');
  const fill = document.createElement('span');
  fill.className = 'bar-fill';
  fill.style.width = `${pct}%`;
  bar.append(fill);
  const num = document.createElement('span');
  num.className = 'score-num';
  num.textContent = scoreText(hit.score, method);
  score.append(bar, num);
  head.append(score);

  const text = document.createElement('p');
  text.className = 'hit-text';
  appendHighlighted(text, hit.text, hit.highlights);

  const meta = document.createElement('div');
  meta.className = 'hit-meta';
  const id = document.createElement('code');
  id.className = 'hit-id';
  id.textContent = hit.id;
  meta.append('id ', id);

  const body = document.createElement('div');
  body.className = 'hit-body';
  body.append(head, text, meta);
  li.append(rank, body);
  return li;
}

/**
 * Append `text` to `parent` as text nodes, with the [start, end) UTF-16 ranges in <mark>s.
 * Ranges may come unsorted or overlapping; out-of-range parts are ignored.
 */
function appendHighlighted(parent, text, ranges) {
  const rs = (ranges || [])
    .map(([s, e]) => [Math.max(0, s | 0), Math.min(text.length, e | 0)])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let pos = 0;
  for (const [s, e] of rs) {
    const start = Math.max(s, pos);
    if (e <= start) continue;
    if (start > pos) parent.append(document.createTextNode(text.slice(pos, start)));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(start, e);
    parent.append(mark);
    pos = e;
  }
  if (pos < text.length) parent.append(document.createTextNode(text.slice(pos)));
}

async function loadExamples() {
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

// ---------------------------------------------------------------- errors and formatting

function showError(message) {
  el.errorMessage.textContent = message;
  el.error.hidden = false;
  // the box is at the top of the page: bring it into view wherever the user is
  el.error.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
}

function showNotice(text) {
  el.noticeText.textContent = text;
  el.notice.hidden = false;
  el.reloadDemo.hidden = true;
}

function hideError() {
  el.error.hidden = true;
  el.errorMessage.textContent = '';
}

const nf = new Intl.NumberFormat('en-US');
function fmt(n) {
  return nf.format(n);
}

function mb(n) {
  return (n / (1024 * 1024)).toFixed(1);
}

function bytes(n) {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} B`;
}

function ms(x) {
  if (x < 1) return `${x.toFixed(2)} ms`;
  if (x < 10) return `${x.toFixed(1)} ms`;
  return `${Math.round(x)} ms`;
}

// ---------------------------------------------------------------- wiring

el.errorDismiss.addEventListener('click', hideError);
el.cancel.addEventListener('click', () => {
  if (state.embedderLoad) cancelEmbedderLoad();
  else restartKeepingCorpus('Indexing was cancelled');
});
el.loadDemo.addEventListener('click', () => {
  hideError();
  requestIndex({ type: 'load-demo', replace: true });
});
el.reloadDemo.addEventListener('click', () => {
  hideError();
  requestIndex({ type: 'load-demo', replace: true });
});
el.fileInput.addEventListener('change', () => {
  indexFiles(el.fileInput.files).finally(() => {
    el.fileInput.value = ''; // choosing the same file again fires 'change' again
  });
});
el.indexText.addEventListener('click', indexPastedText);
el.form.addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(typingTimer);
  runSearch(el.query.value);
});
// Search as you type, for BM25 and hybrid (fast, and the methods that complete a last word):
// while the last word has no space after it, it also matches the words it begins.
const AS_YOU_TYPE = ['bm25', 'hybrid'];
let typingTimer = 0;
el.query.addEventListener('input', () => {
  clearTimeout(typingTimer);
  const method = el.method.value || 'bm25';
  if (!AS_YOU_TYPE.includes(method) || !state.available.includes(method)) return;
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
  if (state.lastSearch) runSearch(state.lastSearch.query, state.lastSearch.question);
  else if (!state.available.includes(method) && embedderFor(method)) loadEmbedder(embedderFor(method), null);
  else render();
});

// drag and drop: the zone takes the files; elsewhere a dropped file must not replace the page
for (const type of ['dragenter', 'dragover']) {
  el.dropzone.addEventListener(type, (event) => {
    event.preventDefault();
    if (!state.busy) el.dropzone.classList.add('over');
  });
}
for (const type of ['dragleave', 'dragend']) {
  el.dropzone.addEventListener(type, () => el.dropzone.classList.remove('over'));
}
el.dropzone.addEventListener('drop', (event) => {
  event.preventDefault();
  el.dropzone.classList.remove('over');
  if (!state.busy) indexFiles(event.dataTransfer && event.dataTransfer.files);
});
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());

startFromLocation();
loadExamples();

// ---------------------------------------------------------------- knowledge graph

function renderGraphInfo() {
  const g = state.graph;
  el.graphInfo.hidden = !g;
  if (!g) return;
  const c = g.counts;
  const ex = g.extract;
  el.graphInfo.replaceChildren();
  const head = document.createElement('strong');
  head.textContent = 'Knowledge graph';
  el.graphInfo.append(head, ` · ${fmt(c.entity_nodes)} entities · ${fmt(c.facts)} facts (${fmt(g.triples)} triples)`);
  const edges = document.createElement('div');
  edges.className = 'graph-edges';
  const total = Math.max(1, c.relation_edges + c.synonym_edges + c.context_edges);
  for (const [name, n] of [['relation', c.relation_edges], ['synonym', c.synonym_edges], ['context', c.context_edges]]) {
    const row = document.createElement('div');
    row.className = `edge-row edge-${name}`;
    const label = document.createElement('span');
    label.className = 'edge-label';
    label.textContent = `${name} edges`;
    const bar = document.createElement('span');
    bar.className = 'edge-bar';
    const fill = document.createElement('span');
    fill.className = 'edge-fill';
    fill.style.width = `${Math.max(1, Math.round((100 * n) / total))}%`;
    bar.append(fill);
    const num = document.createElement('span');
    num.className = 'edge-num';
    num.textContent = fmt(n);
    row.append(label, bar, num);
    edges.append(row);
  }
  el.graphInfo.append(edges);
  if (ex && ex.non_english_passages > 0) {
    const note = document.createElement('p');
    note.className = 'graph-note';
    note.dataset.testid = 'non-english-note';
    note.textContent =
      `Triples were extracted from English text only: ${fmt(ex.non_english_passages)} of ${fmt(ex.passages)} passages ` +
      'did not look English and are in the graph without facts (BM25 and embeddings still find them).';
    el.graphInfo.append(note);
  }
}

/** A "Triples" disclosure for passage `id`: its facts and entities, fetched when opened. */
function triplesElement(id) {
  return lazyDetails('hit-triples', 'Triples and entities', 'triples-box', 'passage-graph', id);
}

/**
 * A <details> of class `className` titled `summary` whose box (class `boxClass`) is filled when
 * first opened: it asks the worker `{type: requestType, id, passage}` and registers the box under
 * that id in `state.passageGraphs` for the reply.
 */
function lazyDetails(className, summary, boxClass, requestType, passage) {
  const d = document.createElement('details');
  d.className = className;
  const s = document.createElement('summary');
  s.textContent = summary;
  const box = document.createElement('div');
  box.className = boxClass;
  box.textContent = 'Loading…';
  d.append(s, box);
  d.addEventListener('toggle', () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = '1';
    state.passageGraphId += 1;
    state.passageGraphs.set(state.passageGraphId, box);
    state.worker.postMessage({ type: requestType, id: state.passageGraphId, passage });
  });
  return d;
}

function showPassageGraph({ id, graph }) {
  const box = state.passageGraphs.get(id);
  state.passageGraphs.delete(id);
  if (!box) return;
  box.replaceChildren();
  if (!graph.english) {
    const p = document.createElement('p');
    p.textContent = 'This passage did not look English, so no triples were extracted from it (triples are extracted for English only).';
    box.append(p);
  }
  if (graph.triples.length === 0 && graph.english) {
    const p = document.createElement('p');
    p.textContent = 'No triple was extracted from this passage.';
    box.append(p);
  }
  if (graph.triples.length > 0) {
    const table = document.createElement('table');
    table.className = 'triples';
    for (const t of graph.triples) {
      const tr = document.createElement('tr');
      for (const [cls, v] of [['subj', t.subject], ['rel', t.relation], ['obj', t.object]]) {
        const td = document.createElement('td');
        td.className = cls;
        td.textContent = v;
        tr.append(td);
      }
      table.append(tr);
    }
    box.append(table);
  }
  if (graph.entities.length > 0) {
    const p = document.createElement('p');
    p.className = 'entities';
    p.textContent = `Entities: ${graph.entities.join(' · ')}`;
    box.append(p);
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Colour of an arc by this query's multiplier: boosted, demoted, cut, or as stored. */
function multiplierColour(m) {
  if (m === 0) return '#c0392b';
  if (m > 1) return '#1e8449';
  if (m < 1) return '#d68910';
  return '#7f8c8d';
}

function shorten(s, n = 26) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * "Why this passage?": the seeds, the entities and the passage on the best paths of the walk,
 * drawn left to right (seeds, then entities, then the passage); edge width by the walk's
 * transition probability, colour by this query's multiplier.
 */
function explainElement(explanation, pe, hit) {
  const d = document.createElement('details');
  d.className = 'hit-explain';
  d.dataset.testid = 'explain';
  const s = document.createElement('summary');
  s.textContent = 'Why this passage? (graph walk)';
  d.append(s);

  const seedLine = document.createElement('p');
  seedLine.className = 'explain-seeds';
  const seeds = explanation.retrieval && explanation.retrieval.seeds ? explanation.retrieval.seeds : [];
  seedLine.textContent = seeds.length
    ? `Seeds: ${seeds.slice(0, 8).map((x) => `${x.name} (${x.channel === 'anchor' ? 'query entity' : x.channel === 'both' ? 'query entity + fact' : 'fact'}, ${(100 * x.share).toFixed(1)}%)`).join(' · ')}`
    : 'No entity seeds: the ranking fell back to dense similarity.';
  d.append(seedLine);

  const paths = pe.paths || [];
  if (explanation.retrieval && explanation.retrieval.fallback) {
    const p = document.createElement('p');
    p.className = 'explain-none';
    p.textContent = `With no seed to start a walk from, this passage ranks by its dense similarity to the query (${pe.score.toPrecision(3)}).`;
    d.append(p);
    return d;
  }
  if (paths.length === 0) {
    const p = document.createElement('p');
    p.className = 'explain-none';
    p.textContent = `No path of up to 3 steps from a seed reaches this passage; it ranks by its PPR mass (${pe.score.toPrecision(3)}), ${(100 * pe.teleport).toFixed(2)}% of it from its own dense teleport share.`;
    d.append(p);
    return d;
  }
  // columns: seeds at 0, the passage in the last column, entities by their step
  const cols = Math.max(...paths.map((p) => p.nodes.length));
  const columns = Array.from({ length: cols }, () => []);
  const place = new Map(); // node id → {col, row}
  for (const path of paths) {
    path.nodes.forEach((n, i) => {
      const col = i === path.nodes.length - 1 ? cols - 1 : i;
      if (!place.has(n.node)) {
        place.set(n.node, { col, row: columns[col].length, n });
        columns[col].push(n);
      }
    });
  }
  const W = 640;
  const rowH = 34;
  const H = Math.max(...columns.map((c) => c.length)) * rowH + 24;
  const colX = (c) => (cols === 1 ? W / 2 : 95 + (c * (W - 190)) / (cols - 1));
  const pos = (id) => {
    const p = place.get(id);
    const colH = columns[p.col].length * rowH;
    return { x: colX(p.col), y: (H - colH) / 2 + p.row * rowH + rowH / 2 };
  };
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', class: 'explain-graph', role: 'img' });
  const title = svg('title');
  title.textContent = 'Paths of the graph walk from the seeds to this passage';
  root.append(title);
  const drawn = new Set();
  for (const path of paths) {
    path.edges.forEach((e, i) => {
      const a = path.nodes[i].node;
      const b = path.nodes[i + 1].node;
      const key = `${a}-${b}`;
      if (drawn.has(key)) return;
      drawn.add(key);
      const p = pos(a);
      const q = pos(b);
      const line = svg('line', {
        x1: p.x, y1: p.y, x2: q.x, y2: q.y,
        stroke: multiplierColour(e.multiplier),
        'stroke-width': (1 + 7 * Math.min(1, e.transition)).toFixed(2),
        'stroke-dasharray': e.multiplier === 0 ? '4 3' : 'none',
        'stroke-linecap': 'round',
        class: `edge ${e.edge_type}`,
      });
      const t = svg('title');
      const cause = e.cause ? ` (${e.cause.kind.replace(/_/g, ' ')}${e.cause.tier ? `: ${e.cause.tier}` : ''})` : '';
      t.textContent = `${e.edge_type} edge, weight ${e.static_weight} × ${e.multiplier}${cause}; step probability ${e.transition.toFixed(3)}${e.fact ? `\nfact: ${e.fact}` : ''}`;
      line.append(t);
      root.append(line);
    });
  }
  const seedIds = new Set(seeds.map((x) => x.node));
  const anchorIds = new Set(seeds.filter((x) => x.channel !== 'facts').map((x) => x.node));
  for (const [id, { n }] of place) {
    const { x, y } = pos(id);
    const kind = n.kind === 'passage' ? 'passage' : anchorIds.has(id) ? 'anchor' : seedIds.has(id) ? 'seed' : 'entity';
    const g = svg('g', { class: `node ${kind}` });
    const shape = kind === 'passage' ? svg('rect', { x: x - 7, y: y - 7, width: 14, height: 14, rx: 2 }) : svg('circle', { cx: x, cy: y, r: 7 });
    const label = svg('text', { x, y: y - 11, 'text-anchor': 'middle' });
    const name = kind === 'passage' && hit ? hit.title || hit.id : n.name;
    label.textContent = shorten(name, 24);
    const t = svg('title');
    t.textContent = `${name} (${kind}), PPR mass ${n.mass.toPrecision(3)}`;
    g.append(shape, label, t);
    root.append(g);
  }
  d.append(root);
  const legend = document.createElement('p');
  legend.className = 'explain-legend';
  for (const [cls, text] of [['anchor', 'query entity'], ['seed', 'fact seed'], ['entity', 'entity'], ['passage', 'passage'], ['same', 'edge as stored'], ['up', 'boosted edge'], ['down', 'demoted edge'], ['cut', 'cut edge']]) {
    const span = document.createElement('span');
    span.className = `legend-item ${cls}`;
    span.textContent = text;
    legend.append(span);
  }
  d.append(legend);
  return d;
}

// ---------------------------------------------------------------- saved indexes and sharing
//
// Save the index in this browser (IndexedDB: database "cairn", store "indexes", one record
// {key, name, date, size, passages, bytes} per index), export it as a .cairn file, import one,
// list, open and delete saved ones. Share links: `#corpus=` + the corpus as JSONL, deflate-raw
// compressed (CompressionStream) and base64url-encoded, in the URL fragment, which the browser
// never sends to a server; `?index=URL` opens a static index file (same origin, or CORS).

const DB_NAME = 'cairn';
const DB_STORE = 'indexes';
// Longer links break in some chat apps and mail clients; bigger corpora: export a file.
const SHARE_MAX_CHARS = 60_000;
const workerRequests = new Map(); // id → {resolve, reject}
let workerRequestId = 0;

/** Send `message` with a fresh id; resolves with the reply of the same id ('error' rejects). */
function workerRequest(message) {
  workerRequestId += 1;
  const id = `file-${workerRequestId}`;
  return new Promise((resolve, reject) => {
    workerRequests.set(id, { resolve, reject });
    state.worker.postMessage({ ...message, id });
  });
}

/** Settle the request `id`, if it is one of `workerRequest`'s. */
function settleWorkerRequest(id, reply, error) {
  const pending = workerRequests.get(id);
  if (!pending) return false;
  workerRequests.delete(id);
  if (error) pending.reject(new Error(error.message));
  else pending.resolve(reply);
  return true;
}

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(DB_STORE, { keyPath: 'key', autoIncrement: true });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Run `fn(store)` in a transaction; resolves with the value of the request it returns. */
async function dbDo(mode, fn) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, mode);
      const req = fn(tx.objectStore(DB_STORE));
      tx.oncomplete = () => resolve(req?.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error('the browser refused to store the index (storage full?)'));
    });
  } finally {
    db.close();
  }
}

function corpusLabel() {
  return state.sources.join(', ') || 'index';
}

function renderSavedControls() {
  const built = !!(state.stats && state.stats.built && state.stats.passages > 0);
  const idle = state.started && !state.busy;
  el.saveIndex.disabled = !(idle && built);
  el.exportIndex.disabled = !(idle && built);
  el.shareLink.disabled = !(idle && built);
  el.importIndex.disabled = !idle;
  el.importLabel.classList.toggle('disabled', !idle);
  for (const b of el.savedList.querySelectorAll('button.saved-open')) b.disabled = !idle;
}

async function renderSavedList() {
  let records = [];
  try {
    records = await dbDo('readonly', (store) => store.getAll());
  } catch (err) {
    el.savedList.textContent = `Saved indexes are not available in this browser: ${err.message}`;
    return;
  }
  el.savedList.replaceChildren();
  for (const r of records.sort((a, b) => b.date - a.date)) {
    const li = document.createElement('li');
    li.dataset.key = r.key;
    const name = document.createElement('span');
    name.className = 'saved-name';
    name.textContent = r.name;
    name.title = r.name;
    const meta = document.createElement('span');
    meta.className = 'saved-meta';
    meta.textContent = `${fmt(r.passages)} passages · ${bytes(r.size)} · ${new Date(r.date).toLocaleString()}`;
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'small saved-open';
    open.textContent = 'Open';
    open.disabled = !state.started || state.busy;
    open.addEventListener('click', async () => {
      const rec = await dbDo('readonly', (store) => store.get(r.key));
      if (rec) requestIndex({ type: 'load-index', bytes: rec.bytes, name: rec.name });
    });
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'small quiet';
    del.textContent = 'Delete';
    del.addEventListener('click', async () => {
      await dbDo('readwrite', (store) => store.delete(r.key));
      renderSavedList();
    });
    li.append(name, meta, open, del);
    el.savedList.append(li);
  }
}

async function saveInBrowser() {
  hideError();
  try {
    const { bytes: data, passages } = await workerRequest({ type: 'save-index' });
    await dbDo('readwrite', (store) => store.add({ name: corpusLabel(), date: Date.now(), size: data.length, passages, bytes: data }));
    showNotice(`Saved in this browser (${bytes(data.length)}).`);
  } catch (err) {
    showError(`The index could not be saved: ${err.message}`);
  }
  renderSavedList();
}

async function exportFile() {
  hideError();
  try {
    const { bytes: data } = await workerRequest({ type: 'save-index' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([data], { type: 'application/octet-stream' }));
    a.download = `${corpusLabel().replace(/[^\w.-]+/g, '-').slice(0, 60) || 'index'}.cairn`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  } catch (err) {
    showError(`The index could not be exported: ${err.message}`);
  }
}

async function importFile(file) {
  if (!file) return;
  const data = new Uint8Array(await file.arrayBuffer());
  requestIndex({ type: 'load-index', bytes: data, name: file.name });
}

function toBase64Url(bytesIn) {
  let bin = '';
  for (let i = 0; i < bytesIn.length; i += 0x8000) bin += String.fromCharCode(...bytesIn.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function pipeBytes(data, transform) {
  const stream = new Blob([data]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function makeShareLink() {
  hideError();
  try {
    const { text } = await workerRequest({ type: 'corpus-jsonl' });
    const packed = toBase64Url(await pipeBytes(new TextEncoder().encode(text), new CompressionStream('deflate-raw')));
    const url = `${location.origin}${location.pathname}#corpus=${packed}`;
    if (url.length > SHARE_MAX_CHARS) {
      showError(`This corpus is too large for a link (${fmt(url.length)} characters; at most ${fmt(SHARE_MAX_CHARS)}). Export the index file instead, put it on a web server and share ${location.origin}${location.pathname}?index=<its URL>.`);
      return;
    }
    el.shareUrl.value = url;
    el.shareUrl.hidden = false;
    el.shareUrl.select();
    navigator.clipboard?.writeText(url).then(
      () => showNotice('Share link copied. It holds the corpus itself: nothing is uploaded.'),
      () => showNotice('Share link ready below. It holds the corpus itself: nothing is uploaded.'),
    );
  } catch (err) {
    showError(`The share link could not be made: ${err.message}`);
  }
}

/** Start the worker with what the URL asks for: `?index=URL`, `#corpus=…`, or the demo corpus. */
function startFromLocation() {
  const indexUrl = new URLSearchParams(location.search).get('index');
  const shared = location.hash.startsWith('#corpus=') ? location.hash.slice('#corpus='.length) : null;
  if (!indexUrl && !shared) {
    startWorker({ loadDemo: true });
    return;
  }
  startWorker({ loadDemo: false });
  if (indexUrl) {
    const last = indexUrl.split(/[?#]/)[0].split('/').pop();
    let name = last || 'shared index';
    try {
      name = decodeURIComponent(name);
    } catch {
      // a name with a stray '%' is shown as it is
    }
    requestIndex({ type: 'load-index-url', url: indexUrl, name });
    return;
  }
  (async () => {
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(await pipeBytes(fromBase64Url(shared), new DecompressionStream('deflate-raw')));
    } catch {
      // atob's and DecompressionStream's own messages ("Failed to fetch") say nothing useful here.
      throw new Error('the link is incomplete or damaged; was it cut short when it was copied?');
    }
    requestIndex({ type: 'index-files', files: [{ name: 'shared corpus.jsonl', text }], replace: true });
  })().catch((err) => {
    showError(`The shared corpus in this link could not be read: ${err.message} The demo corpus is loaded instead.`);
    requestIndex({ type: 'load-demo', replace: true });
  });
}

// ---------------------------------------------------------------- LLM endpoint
// Off by default: no configuration, nothing sent. "Use this endpoint" gives the worker a
// configuration; the worker's wasm client reports every HTTP request before it leaves
// ('llm-request'), and the badge counts them. Settings live in memory unless "remember on this
// device" is ticked (then localStorage, key LLM_STORE, API key included).

const LLM_STORE = 'cairn-llm-endpoint';
const llmEl = {
  panel: $('llm-panel'),
  state: $('llm-state'),
  url: $('llm-url'),
  model: $('llm-model'),
  key: $('llm-key'),
  deadline: $('llm-deadline'),
  remember: $('llm-remember'),
  use: $('llm-use'),
  test: $('llm-test'),
  off: $('llm-off'),
  result: $('llm-result'),
  badge: $('llm-badge'),
  badgeText: $('llm-badge-text'),
  cancel: $('llm-cancel'),
  tiers: $('llm-tiers'),
  answerRow: $('llm-answer-row'),
  answer: $('llm-answer'),
  answerText: $('llm-answer-text'),
};
const llm = { config: null, on: false, model: '', host: '', requests: 0, sendingTimer: 0, searching: false, hits: [], query: '', answerId: 0 };

function llmHost(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What to do about a fetch that the browser refused (CORS) or that reached nothing. */
function llmCorsFix() {
  const origin = location.origin;
  return `The browser could not read the endpoint's answer: nothing listens at that URL, or the endpoint does not allow this page's origin (${origin}) (CORS). Fix it on the endpoint: Ollama: start it with OLLAMA_ORIGINS=${origin} ollama serve · llama.cpp: llama-server sends CORS headers itself (check the URL and port) · LM Studio: turn on “Enable CORS” in the server settings · anything else: put a reverse proxy in front that adds Access-Control-Allow-Origin: ${origin}.`;
}

function llmSendConfig() {
  if (state.worker) state.worker.postMessage({ type: 'llm-config', config: llm.config });
}

function llmApply() {
  const baseUrl = llmEl.url.value.trim();
  const model = llmEl.model.value.trim();
  if (!baseUrl || !model) {
    llmSetResult('Give the base URL and the model name.', true);
    return;
  }
  const deadlineS = Number(llmEl.deadline.value);
  const deadlineMs = Number.isFinite(deadlineS) && deadlineS > 0 ? Math.round(deadlineS * 1000) : 5000;
  llm.config = { baseUrl, model, apiKey: llmEl.key.value || undefined, deadlineMs };
  try {
    if (llmEl.remember.checked) localStorage.setItem(LLM_STORE, JSON.stringify(llm.config));
    else localStorage.removeItem(LLM_STORE);
  } catch {
    // storage refused (private mode): the settings stay in memory
  }
  llmSetResult('', false);
  llmSendConfig();
}

function llmTurnOff() {
  llm.config = null;
  llmEl.key.value = '';
  llmEl.remember.checked = false;
  try {
    localStorage.removeItem(LLM_STORE);
  } catch {
    // nothing stored
  }
  llmSetResult('', false);
  llmSendConfig();
}

function llmSetResult(text, bad) {
  llmEl.result.textContent = text;
  llmEl.result.classList.toggle('bad', !!bad);
}

function llmRenderState() {
  llmEl.state.textContent = llm.on ? `on: ${llm.model} at ${llm.host}` : 'off: nothing is sent';
  llmEl.test.disabled = !llm.on;
  llmEl.off.disabled = !llm.on;
  llmEl.answerRow.hidden = !(llm.on && llm.hits.length > 0);
}

function llmRenderBadge(sending) {
  if (llm.requests === 0) {
    llmEl.badge.hidden = true;
    return;
  }
  llmEl.badge.hidden = false;
  llmEl.badge.classList.toggle('sending', sending);
  const n = `${llm.requests} ${llm.requests === 1 ? 'request' : 'requests'} this session`;
  llmEl.badgeText.textContent = sending ? `Sending to ${llm.host}… ${n}` : `Sent to ${llm.host}: ${n}`;
  llmEl.badge.dataset.requests = String(llm.requests);
}

function handleLlmMessage(msg) {
  switch (msg.type) {
    case 'llm-config':
      llm.on = !!msg.on;
      if (msg.on) {
        llm.model = msg.model;
        llm.host = llmHost(msg.url);
      } else if (msg.error) {
        llm.config = null;
        llmSetResult(`These settings cannot be used: ${msg.error}`, true);
      }
      llmRenderState();
      return;
    case 'llm-request':
      llm.requests += 1;
      llm.host = llmHost(msg.url);
      llmRenderBadge(true);
      clearTimeout(llm.sendingTimer);
      llm.sendingTimer = setTimeout(() => llmRenderBadge(false), 1500);
      return;
    case 'llm-test':
      if (msg.ok) {
        llmSetResult(`Connected: ${msg.model} answered in ${Math.round(msg.latencyMs)} ms (“${String(msg.reply).trim().slice(0, 60)}”).`, false);
      } else {
        llmSetResult(/CORS/.test(msg.error) ? `Test failed. ${llmCorsFix()}` : `Test failed: ${msg.error}`, true);
      }
      llmEl.test.disabled = !llm.on;
      return;
    case 'llm-progress':
      if (msg.id !== state.searchId) return;
      llm.searching = true;
      llmEl.cancel.hidden = false;
      llmRenderBadge(false);
      llmEl.badge.hidden = false;
      el.resultsMeta.textContent = msg.batches
        ? `Asking ${llm.host} to tier ${msg.edges} edges around ${msg.batches} seed ${msg.batches === 1 ? 'entity' : 'entities'}…`
        : 'Searching…';
      return;
    case 'llm-answer':
      if (msg.id !== llm.answerId) return;
      llmEl.answer.disabled = false;
      llmEl.answerText.hidden = false;
      llmEl.answerText.classList.toggle('bad', !msg.ok);
      llmEl.answerText.textContent = msg.ok
        ? `Written by ${msg.model} (your endpoint at ${llm.host}) from the top 5 passages, not checked by Cairn: ${msg.answer}`
        : /CORS/.test(msg.error) ? llmCorsFix() : `The endpoint gave no answer: ${msg.error}`;
      return;
    default:
  }
}

/** The tiers line under a CatRAG result header (null: the search failed). */
function renderLlmTiers(msg) {
  llm.searching = false;
  llmEl.cancel.hidden = true;
  llmEl.answerText.hidden = true;
  llm.hits = msg && msg.hits ? msg.hits.slice(0, 5).map((h) => ({ title: h.title, text: h.text })) : [];
  llm.query = msg ? String(msg.query ?? '') : '';
  llmRenderState();
  const t = msg && msg.tiers;
  llmEl.tiers.classList.remove('bad');
  if (!msg || msg.method !== 'catrag') {
    llmEl.tiers.hidden = true;
    return;
  }
  llmEl.tiers.hidden = false;
  llmEl.tiers.dataset.kind = t ? t.kind : 'offline';
  if (!t) {
    llmEl.tiers.textContent = 'tiers: embedding similarity (offline stand-in)';
    return;
  }
  const parts = [];
  if (t.batches === 0) parts.push(`tiers: LLM (${t.model}), but no edge needed tiering for this query`);
  else if (t.kind === 'llm') parts.push(`tiers: LLM (${t.model}), ${t.calls} ${t.calls === 1 ? 'call' : 'calls'}`);
  else parts.push(`tiers: none from ${t.model}: all ${t.edges} edges fell back to Weak`);
  if (t.kind === 'llm' && t.weakFallbackEdges > 0) parts.push(`${t.weakFallbackEdges} of ${t.edges} edges fell back to Weak`);
  if (t.cancelled) parts.push('cancelled: the edges not yet rated are Weak');
  else if (t.cors) parts.push(llmCorsFix());
  else if (t.error) parts.push(`the endpoint failed: ${t.error}`);
  llmEl.tiers.textContent = parts.join(' · ');
  llmEl.tiers.classList.toggle('bad', t.kind !== 'llm' || !!t.error);
}

function llmStartFromStorage() {
  let saved = null;
  try {
    saved = JSON.parse(localStorage.getItem(LLM_STORE) || 'null');
  } catch {
    saved = null;
  }
  if (!saved || !saved.baseUrl || !saved.model) return;
  llmEl.url.value = saved.baseUrl;
  llmEl.model.value = saved.model;
  if (saved.deadlineMs) llmEl.deadline.value = String(saved.deadlineMs / 1000);
  llmEl.key.value = saved.apiKey || '';
  llmEl.remember.checked = true;
  llm.config = saved; // sent to the worker when it says hello
}

llmEl.use.addEventListener('click', llmApply);
llmEl.off.addEventListener('click', llmTurnOff);
llmEl.test.addEventListener('click', () => {
  llmEl.test.disabled = true;
  llmSetResult(`Testing ${llm.host}…`, false);
  state.worker.postMessage({ type: 'llm-test' });
});
llmEl.cancel.addEventListener('click', () => state.worker.postMessage({ type: 'llm-cancel' }));
llmEl.remember.addEventListener('change', () => {
  if (!llmEl.remember.checked) {
    try {
      localStorage.removeItem(LLM_STORE);
    } catch {
      // nothing stored
    }
  } else if (llm.config) {
    try {
      localStorage.setItem(LLM_STORE, JSON.stringify(llm.config));
    } catch {
      // storage refused
    }
  }
});
llmEl.answer.addEventListener('click', () => {
  if (!llm.hits.length) return;
  llm.answerId += 1;
  llmEl.answer.disabled = true;
  llmEl.answerText.hidden = false;
  llmEl.answerText.classList.remove('bad');
  llmEl.answerText.textContent = `Asking ${llm.model} at ${llm.host}…`;
  state.worker.postMessage({ type: 'llm-answer', id: llm.answerId, query: llm.query, passages: llm.hits });
});
llmStartFromStorage();
llmRenderState();

el.saveIndex.addEventListener('click', saveInBrowser);
el.exportIndex.addEventListener('click', exportFile);
el.shareLink.addEventListener('click', makeShareLink);
el.importIndex.addEventListener('change', () => {
  importFile(el.importIndex.files[0]);
  el.importIndex.value = '';
});
renderSavedList();

// ---------------------------------------------------------------- CAGE
//
// CAGE (METHOD.md §4) reranks a first stage's top 20 by the coherence of their passage graphs.
// Each result shows its relevance (cos(query, passage), static embedder), its coherence (mean
// cosine of its R-GCN graph embedding with the other candidates') and the fused score, and a
// "Passage graph" toggle that asks the worker for Engine.cagePassageGraph and draws it as SVG.

/** The hint under the selector for CAGE method `m`. */
function cageHint(m) {
  const graphFirst = m === 'catrag+cage' && !state.graph;
  if (state.cage && !graphFirst) return `CAGE loaded (R-GCN, ${state.cage.dim}-d graph embeddings): the top 20 of ${m === 'bm25+cage' ? 'BM25' : m === 'catrag+cage' ? 'CatRAG' : 'dense'} are reranked.`;
  if (state.cage) return 'CAGE loaded; CatRAG + CAGE first builds the knowledge graph of the corpus (seconds), here in the page.';
  const parts = ['CAGE first downloads its R-GCN (330 KB) and the tract engine (about 15 MB, shared with MiniLM) from this site'];
  if (!state.embedder) parts.push('and the 7.8 MB static embeddings');
  if (m === 'catrag+cage' && !state.graph) parts.push('and builds the knowledge graph');
  return `${parts.join(', ')}.`;
}

/** A labelled score with a bar over [0, 1] (negative values show an empty bar). */
function cageScore(label, value, title) {
  const wrap = document.createElement('span');
  wrap.className = 'cage-score';
  wrap.title = title;
  const name = document.createElement('span');
  name.className = 'cage-score-name';
  name.textContent = label;
  const bar = document.createElement('span');
  bar.className = 'bar';
  bar.setAttribute('aria-hidden', 'true');
  const fill = document.createElement('span');
  fill.className = 'bar-fill';
  fill.style.width = `${Math.round(100 * Math.min(1, Math.max(0, value)))}%`;
  bar.append(fill);
  const num = document.createElement('span');
  num.className = 'score-num';
  num.textContent = value.toFixed(3);
  wrap.append(name, bar, num);
  return wrap;
}

/** A CAGE hit's relevance, coherence and fused score. */
function cageScoresElement(hit) {
  const row = document.createElement('div');
  row.className = 'cage-scores';
  row.dataset.testid = 'cage-scores';
  row.dataset.relevance = String(hit.relevance);
  row.dataset.coherence = String(hit.coherence);
  row.dataset.score = String(hit.score);
  row.append(
    cageScore('relevance', hit.relevance, 'cos(query, passage) with the static embedder'),
    cageScore('coherence', hit.coherence, 'Mean cosine of this passage\'s R-GCN graph embedding with the other 19 candidates\''),
    cageScore('fused', hit.score, CAGE_SCORE_NAME),
  );
  return row;
}

/** The "Passage graph" toggle of a CAGE hit: the graph is fetched and drawn when first opened. */
function cageGraphElement(id) {
  const d = lazyDetails('hit-cage-graph', 'Passage graph (CAGE)', 'cage-graph-box', 'cage-graph', id);
  d.dataset.testid = 'cage-graph';
  return d;
}

// Edge colours by relation index (RELATIONS in src/cage/graph.rs; 0, the self-loop, is implicit).
const CAGE_RELATION_COLOURS = ['#999999', '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#ff7f0e'];
// Nodes drawn at most; a bigger graph shows its best-connected nodes.
const CAGE_GRAPH_MAX_DRAWN = 60;
// The engine's own cap on a passage graph's nodes (MAX_NODES in src/cage/graph.rs).
const CAGE_ENGINE_MAX_NODES = 128;

/**
 * Which nodes of `graph` to draw: all of them up to CAGE_GRAPH_MAX_DRAWN, else the most
 * connected (degree, then text order). Returns node indices in text order.
 */
function cageDrawnNodes(graph) {
  const n = graph.nodes.length;
  if (n <= CAGE_GRAPH_MAX_DRAWN) return [...Array(n).keys()];
  const degree = new Array(n).fill(0);
  for (const e of graph.edges) {
    degree[e.source] += 1;
    degree[e.target] += 1;
  }
  return [...Array(n).keys()]
    .sort((a, b) => degree[b] - degree[a] || a - b)
    .slice(0, CAGE_GRAPH_MAX_DRAWN)
    .sort((a, b) => a - b);
}

/**
 * Node positions: on a circle in text order (edges mostly join nearby words), then a few
 * deterministic spring iterations that pull joined nodes together and keep others apart.
 */
function cageLayout(count, edges, size) {
  const c = size / 2;
  const r = size / 2 - 70;
  const pos = [...Array(count).keys()].map((i) => {
    const a = (2 * Math.PI * i) / Math.max(1, count) - Math.PI / 2;
    return [c + r * Math.cos(a), c + r * Math.sin(a)];
  });
  const ideal = Math.min(90, (2 * Math.PI * r) / Math.max(1, count) * 1.5);
  for (let it = 0; it < 60; it += 1) {
    const f = pos.map(() => [0, 0]);
    for (let i = 0; i < count; i += 1) {
      for (let j = i + 1; j < count; j += 1) {
        const dx = pos[i][0] - pos[j][0];
        const dy = pos[i][1] - pos[j][1];
        const d2 = Math.max(25, dx * dx + dy * dy);
        const k = (ideal * ideal) / d2;
        f[i][0] += dx * k * 0.05; f[i][1] += dy * k * 0.05;
        f[j][0] -= dx * k * 0.05; f[j][1] -= dy * k * 0.05;
      }
    }
    for (const [a, b] of edges) {
      const dx = pos[b][0] - pos[a][0];
      const dy = pos[b][1] - pos[a][1];
      const d = Math.max(1, Math.hypot(dx, dy));
      const k = ((d - ideal) / d) * 0.1;
      f[a][0] += dx * k; f[a][1] += dy * k;
      f[b][0] -= dx * k; f[b][1] -= dy * k;
    }
    const step = 8 * (1 - it / 60) + 1;
    pos.forEach((p, i) => {
      const m = Math.hypot(f[i][0], f[i][1]);
      const s = m > step ? step / m : 1;
      p[0] = Math.min(size - 60, Math.max(60, p[0] + f[i][0] * s));
      p[1] = Math.min(size - 20, Math.max(20, p[1] + f[i][1] * s));
    });
  }
  return pos;
}

/** Draw a 'cage-graph' reply in its box: the SVG, the relations' legend, and notes. */
function showCageGraph({ id, graph }) {
  const box = state.passageGraphs.get(id);
  state.passageGraphs.delete(id);
  if (!box) return;
  box.replaceChildren();
  const n = graph.nodes.length;
  const minFlags = graph.min_out_degree || [];
  const summary = document.createElement('p');
  summary.className = 'cage-graph-summary';
  const factual = minFlags.filter(Boolean).length;
  summary.textContent = `${n} nodes (lemmas), ${graph.edges.length} typed edges; ${factual} factual end points (minimum out-degree), weighted ×${graph.beta}.`;
  box.append(summary);
  if (n === 0) return;
  const drawn = cageDrawnNodes(graph);
  const at = new Map(drawn.map((v, i) => [v, i]));
  const edges = graph.edges.filter((e) => at.has(e.source) && at.has(e.target) && e.source !== e.target);
  if (drawn.length < n || n >= CAGE_ENGINE_MAX_NODES) {
    const cap = document.createElement('p');
    cap.className = 'cage-graph-cap';
    cap.dataset.testid = 'cage-graph-cap';
    const notes = [];
    if (n >= CAGE_ENGINE_MAX_NODES) notes.push(`the engine caps a passage graph at ${CAGE_ENGINE_MAX_NODES} nodes, so the rest of this passage is not in it`);
    if (drawn.length < n) notes.push(`only the ${drawn.length} best-connected of its ${n} nodes are drawn (${graph.edges.length - edges.length} edges to the others are left out)`);
    cap.textContent = `Capped: ${notes.join('; ')}.`;
    box.append(cap);
  }
  const size = drawn.length > 30 ? 620 : 480;
  const pos = cageLayout(drawn.length, edges.map((e) => [at.get(e.source), at.get(e.target)]), size);
  const root = svg('svg', { viewBox: `0 0 ${size} ${size}`, width: size, height: size, class: 'cage-graph', role: 'img' });
  root.dataset.testid = 'cage-graph-svg';
  const title = svg('title');
  title.textContent = 'CAGE passage graph: lemmas and typed edges';
  root.append(title);
  const defs = svg('defs');
  CAGE_RELATION_COLOURS.forEach((colour, r) => {
    const m = svg('marker', { id: `cage-arrow-${r}`, viewBox: '0 0 10 10', refX: 16, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' });
    m.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: colour }));
    defs.append(m);
  });
  root.append(defs);
  const used = new Set();
  for (const e of edges) {
    const [a, b] = [pos[at.get(e.source)], pos[at.get(e.target)]];
    used.add(e.relation);
    const line = svg('line', {
      x1: a[0].toFixed(1), y1: a[1].toFixed(1), x2: b[0].toFixed(1), y2: b[1].toFixed(1),
      stroke: CAGE_RELATION_COLOURS[e.relation] || '#555', 'stroke-width': (1 + Math.min(2, e.weight - 1)).toFixed(2),
      'marker-end': `url(#cage-arrow-${e.relation})`, class: 'cage-edge', opacity: 0.85,
    });
    line.dataset.relation = String((graph.relations || [])[e.relation] || e.relation);
    const t = svg('title');
    t.textContent = `${graph.nodes[e.source]} —${line.dataset.relation}→ ${graph.nodes[e.target]} (weight ${e.weight.toFixed(2)})`;
    line.append(t);
    root.append(line);
  }
  drawn.forEach((v, i) => {
    const [x, y] = pos[i];
    const g = svg('g', { class: minFlags[v] ? 'cage-node min-out' : 'cage-node' });
    const c = svg('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: 6, fill: minFlags[v] ? '#f39c12' : '#5d6d7e', stroke: '#fff', 'stroke-width': 1.5 });
    const t = svg('title');
    t.textContent = `${graph.nodes[v]}${minFlags[v] ? ' (minimum out-degree: a factual end point)' : ''}`;
    c.append(t);
    const label = svg('text', { x: (x + 8).toFixed(1), y: (y + 4).toFixed(1), class: 'cage-node-label' });
    label.textContent = shorten(graph.nodes[v], 16);
    g.append(c, label);
    root.append(g);
  });
  box.append(root);
  const legend = document.createElement('ul');
  legend.className = 'cage-legend';
  legend.dataset.testid = 'cage-legend';
  for (const r of [...used].sort((a, b) => a - b)) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = CAGE_RELATION_COLOURS[r] || '#555';
    li.append(sw, (graph.relations || [])[r] || `relation ${r}`);
    legend.append(li);
  }
  const li = document.createElement('li');
  const dot = document.createElement('span');
  dot.className = 'swatch dot';
  dot.style.background = '#f39c12';
  li.append(dot, `minimum out-degree (×${graph.beta})`);
  legend.append(li);
  box.append(legend);
}
