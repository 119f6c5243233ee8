// render(): the corpus status line and every control whose state follows the engine's.
import { el } from './dom.js';
import { bytes, fmt, ms } from './format.js';
import { renderGraphInfo } from './graph.js';
import { renderMethods } from './methods.js';
import { state } from './state.js';

const renderHooks = [];

/** Call `fn()` on every render(), after the corpus status (the saved-index controls register here). */
export function onRender(fn) {
  renderHooks.push(fn);
}

export function render() {
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
  for (const fn of renderHooks) fn();
  // the example questions are HotpotQA's: offer them while the demo corpus is loaded
  el.examples.hidden = state.questions.length === 0 || !state.sources.includes('HotpotQA demo');
  el.sources.hidden = state.sources.length === 0 || !stats || stats.passages === 0;
  el.sources.textContent = `From: ${state.sources.join(', ')}`;
}
