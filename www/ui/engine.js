// The engine's Web Worker (www/worker.js): starting and restarting it, indexing requests, and
// the engine's lifecycle messages (hello, progress, ready, error). Every other message goes to
// the handlers feature modules register with the channel (channel.js); what follows a corpus
// change or an embedder load is theirs too (onCorpusChanged, onEmbedderReady, onEngineReset), so
// this module imports no feature module.
import { dispatchWorkerMessage, postToWorker, settleWorkerRequest } from './channel.js';
import { el } from './dom.js';
import { defaultMethod, setMethods, takeMethodsInfo } from './methods.js';
import { hideNotice, showError, showNotice } from './notices.js';
import { setBusy, showProgress } from './progress.js';
import { state } from './state.js';
import { render } from './status.js';

const hooks = { corpusChanged: [], embedderReady: [], engineReset: [] };

/** Call `fn(msg)` after an indexing request changed the corpus (its 'ready' message). */
export function onCorpusChanged(fn) {
  hooks.corpusChanged.push(fn);
}

/** Call `fn(msg)` with the 'ready' reply of a 'load-embedder' request. */
export function onEmbedderReady(fn) {
  hooks.embedderReady.push(fn);
}

/** Call `fn()` when the worker is stopped and a new one started (the results are stale). */
export function onEngineReset(fn) {
  hooks.engineReset.push(fn);
}


export function startWorker({ loadDemo }) {
  const worker = new Worker(/* webpackChunkName: "engine-worker" */ new URL('../worker.js', import.meta.url));
  state.worker = worker;
  state.started = false;
  state.stats = null;
  state.sources = [];
  state.available = [];
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
export function restartKeepingCorpus(what) {
  const replay = state.history.slice();
  if (replay.length === 0) {
    restartEmpty(`${what}, so the engine is empty now.`);
    return;
  }
  state.worker.terminate();
  setBusy(false);
  for (const fn of hooks.engineReset) fn();
  startWorker({ loadDemo: false });
  state.history = replay;
  state.restoring = replay.length;
  setBusy(true, 'Restoring your corpus…');
  for (const m of replay) postToWorker(m);
  showNotice(`${what}. Your corpus is indexed again (BM25); dense and graph methods rebuild what they need when you choose them.`);
}

/** Stop the worker (and whatever it is doing) and start an empty one. */
export function restartEmpty(noticeText) {
  state.history = [];
  state.worker.terminate();
  setBusy(false);
  for (const fn of hooks.engineReset) fn();
  startWorker({ loadDemo: false });
  el.noticeText.textContent = noticeText;
  el.notice.hidden = false;
  el.reloadDemo.hidden = false;
}

export function requestIndex(message) {
  hideNotice();
  state.pendingIndex = message;
  setBusy(true, message.type === 'load-demo' ? 'Loading the demo corpus…' : 'Reading…');
  postToWorker(message);
}

/** A message of the worker: the lifecycle's own handling here, then the registered handlers. */
export function onMessage(msg) {
  if (handleLifecycle(msg)) render();
  dispatchWorkerMessage(msg);
}

/** The lifecycle messages; true when the page's status must be rendered again. */
function handleLifecycle(msg) {
  switch (msg.type) {
    case 'hello':
      state.started = true;
      state.stats = msg.stats;
      setMethods(msg.methods);
      takeMethodsInfo(msg);
      // a new worker has no embeddings: back to the default method until one is chosen again
      if (!state.available.includes(el.method.value)) el.method.value = defaultMethod();
      el.version.textContent = msg.version ? `v${msg.version}` : '';
      return true;
    case 'progress':
      state.progressPhase = msg.phase;
      showProgress(msg);
      return false;
    case 'ready': {
      takeMethodsInfo(msg);
      if (msg.request === 'load-embedder') {
        for (const fn of hooks.embedderReady) fn(msg);
        return true;
      }
      if (state.restoring > 0) {
        state.restoring -= 1;
        if (state.restoring > 0) {
          if (msg.stats) state.stats = msg.stats;
          if (msg.changed) state.sources = msg.replace ? msg.labels || [] : state.sources.concat(msg.labels || []);
          return true;
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
        for (const fn of hooks.corpusChanged) fn(msg);
      }
      return true;
    }
    case 'index-file':
    case 'corpus-jsonl':
      settleWorkerRequest(msg.id, msg, null);
      return false;
    case 'error':
      if (settleWorkerRequest(msg.id, null, msg)) return false;
      if (msg.during === 'search' && msg.id !== state.searchId) return false;
      if (msg.during === 'passage-graph' || msg.during === 'cage-graph') {
        const box = state.passageGraphs.get(msg.id);
        state.passageGraphs.delete(msg.id);
        if (box) box.textContent = msg.message;
        return false;
      }
      if (msg.during === 'search') el.resultsMeta.textContent = '';
      showError(msg.message);
      if (msg.fatal) restartEmpty('The search engine was restarted after an internal error and is empty.');
      return false;
    default:
      return false;
  }
}
