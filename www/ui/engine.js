// The engine's Web Worker (www/worker.js): starting and restarting it, indexing requests, and
// the dispatch of every message it sends.
import { showCageGraph } from './cage.js';
import { el } from './dom.js';
import { handleLlmMessage, llmSendConfig, renderLlmTiers } from './llm.js';
import { defaultMethod, setMethods, takeMethodsInfo } from './methods.js';
import { hideNotice, showError, showNotice } from './notices.js';
import { setBusy, showProgress } from './progress.js';
import { renderResults, showPassageGraph } from './results.js';
import { clearResults, embedderReady, runSearch } from './search.js';
import { state } from './state.js';
import { render } from './status.js';


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
  clearResults();
  startWorker({ loadDemo: false });
  state.history = replay;
  state.restoring = replay.length;
  setBusy(true, 'Restoring your corpus…');
  for (const m of replay) state.worker.postMessage(m);
  showNotice(`${what}. Your corpus is indexed again (BM25); dense and graph methods rebuild what they need when you choose them.`);
}

/** Stop the worker (and whatever it is doing) and start an empty one. */
export function restartEmpty(noticeText) {
  state.history = [];
  state.worker.terminate();
  setBusy(false);
  clearResults();
  startWorker({ loadDemo: false });
  el.noticeText.textContent = noticeText;
  el.notice.hidden = false;
  el.reloadDemo.hidden = false;
}

export function requestIndex(message) {
  hideNotice();
  state.pendingIndex = message;
  setBusy(true, message.type === 'load-demo' ? 'Loading the demo corpus…' : 'Reading…');
  state.worker.postMessage(message);
}

export function onMessage(msg) {
  if (typeof msg.type === 'string' && msg.type.startsWith('llm-')) {
    handleLlmMessage(msg);
    return;
  }
  switch (msg.type) {
    case 'hello':
      llmSendConfig(); // a new worker has no endpoint: give it the one in use
      state.started = true;
      state.stats = msg.stats;
      setMethods(msg.methods);
      takeMethodsInfo(msg);
      // a new worker has no embeddings: back to the default method until one is chosen again
      if (!state.available.includes(el.method.value)) el.method.value = defaultMethod();
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

export const workerRequests = new Map(); // id → {resolve, reject}
export let workerRequestId = 0;

/** Send `message` with a fresh id; resolves with the reply of the same id ('error' rejects). */
export function workerRequest(message) {
  workerRequestId += 1;
  const id = `file-${workerRequestId}`;
  return new Promise((resolve, reject) => {
    workerRequests.set(id, { resolve, reject });
    state.worker.postMessage({ ...message, id });
  });
}

/** Settle the request `id`, if it is one of `workerRequest`'s. */
export function settleWorkerRequest(id, reply, error) {
  const pending = workerRequests.get(id);
  if (!pending) return false;
  workerRequests.delete(id);
  if (error) pending.reject(new Error(error.message));
  else pending.resolve(reply);
  return true;
}
