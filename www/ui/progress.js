// The progress bar of the running engine request, and the page's busy state.
import { el } from './dom.js';
import { fmt, mb, timeLeft } from './format.js';
import { state } from './state.js';
import { render } from './status.js';

export const PHASES = {
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
  'llm-openie': 'Asking the LLM endpoint for each passage\'s triples (LLM OpenIE)',
};
export const COUNTED_PHASES = ['loading-index', 'indexing', 'restoring', 'embedding', 'embedding-minilm', 'extract', 'graph-embed', 'synonyms', 'llm-openie'];

export function showProgress({ phase, done, total, name, what, etaMs }) {
  const label = phase === 'download' && what === 'minilm'
    ? 'Downloading MiniLM (model and engine)'
    : phase === 'download' && what === 'cage'
      ? 'Downloading CAGE (R-GCN model and engine)'
      : phase === 'download' && what === 'text'
        ? 'Downloading the text pipeline (tagger, lemmas, places)'
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
    const left = Number.isFinite(etaMs) && etaMs > 0 && done < total ? ` (${timeLeft(etaMs)} left)` : '';
    el.progressLabel.textContent = `${label}: ${fmt(done)} of ${fmt(total)}${left}`;
  } else if (phase === 'adding' && name) {
    el.progressLabel.textContent = `${label} ${name} (${done + 1} of ${total})`;
  } else {
    el.progressLabel.textContent = `${label}…`;
  }
}

export function setBusy(busy, label) {
  state.busy = busy;
  state.progressPhase = null;
  el.progressRow.hidden = !busy;
  if (busy) {
    el.progress.removeAttribute('value'); // indeterminate until the first progress message
    el.progressLabel.textContent = label || 'Working…';
  }
  render();
}
