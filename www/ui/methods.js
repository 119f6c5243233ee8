// The method selector and what each method needs, from the engine's methods().
import { el } from './dom.js';
import { fmt, timeLeft } from './format.js';
import { state } from './state.js';

// The method selector lists every method of the engine's methods() (name, label, family and
// needs come from the engine; nothing here restates them). A method whose embedder (the static
// table, the MiniLM transformer), knowledge graph or CAGE model is not loaded yet is loaded on
// demand; any other one that availableMethods() does not list is shown disabled, with the reason.

/** The engine's methods() as the worker's hello gives them, by name. */
let catalog = new Map();

/** Take the engine's method descriptions (`methods()`: [{name, label, short, family, needs, …}]). */
export function setMethods(infos) {
  const list = Array.isArray(infos) ? infos.filter((m) => m && typeof m.name === 'string') : [];
  catalog = new Map(list.map((m) => [m.name, m]));
  state.methods = list.map((m) => m.name);
}

/** The engine's description of method `name`, or a bare one for a name it does not know. */
export function methodInfo(name) {
  return catalog.get(name) || {
    name, label: name, short: name, family: '', description: '', score: 'Score',
    needs: { graph: false, embedder: null, cage: false, llm: false }, prefix: false, first_stage: null, candidates: null,
  };
}

/** The names of the known methods for which `test(info)` holds, in the engine's order. */
export function methodsWhere(test) {
  return [...catalog.values()].filter(test).map((m) => m.name);
}

/**
 * The method the page starts with and falls back to: the first one that needs nothing loaded
 * (BM25), so it runs as soon as passages are indexed.
 */
export function defaultMethod() {
  return methodsWhere((m) => !m.needs.embedder && !m.needs.graph && !m.needs.cage)[0] || 'bm25';
}

/** A dense-vector method that needs nothing but the static embedder (dense, hybrid). */
function staticOnly(info) {
  return info.needs.embedder === 'static' && !info.needs.graph && !info.needs.cage;
}

/** Whether `method` walks the knowledge graph without reranking (hipporag, catrag). */
export function isGraphMethod(method) {
  const { needs } = methodInfo(method);
  return needs.graph && !needs.cage;
}

/** Whether `method` reranks with CAGE. */
export function isCageMethod(method) {
  return methodInfo(method).needs.cage;
}

/**
 * What the worker loads on demand before `method` can run ('static', 'minilm', 'graph' or
 * 'cage'), or null when it needs nothing that can be loaded.
 */
export function embedderFor(method) {
  const { needs } = methodInfo(method);
  if (needs.cage) return 'cage';
  if (needs.graph) return 'graph';
  return needs.embedder || null;
}
export const EMBEDDER_NAMES = { static: 'the embeddings', minilm: 'MiniLM', graph: 'the knowledge graph', cage: 'CAGE' };
export const NOT_IN_BUILD = 'not in this build';
/**
 * MiniLM passages embedded per second in the page, for the time a user is told to expect before
 * it starts: `bench:browser dense-minilm --limit 200` measured 6.2 on 2WikiMultihopQA passages
 * (85.6 tokens on average) on a 2-core machine in headless Chromium; rounded down, as longer
 * passages and slower machines take longer. Once it runs, the progress shows the time left at
 * the rate measured then.
 */
const MINILM_PASSAGES_PER_SECOND = 5;

/** Shown on MiniLM and CAGE while `npm start` is still building the transformer package. */
export const TRANSFORMER_BUILDING = 'still being built';

const TRANSFORMER_HINT =
  'MiniLM and CAGE: the transformer package is still being built (npm start builds it after serving the page); reload the page when it is done.';

/** Whether `m` runs on the transformer package (MiniLM or CAGE) and this page was built without it. */
function awaitsTransformer(m) {
  const { needs } = methodInfo(m);
  return state.transformer === false && (needs.embedder === 'minilm' || needs.cage) && !state.available.includes(m);
}

/** "A and B" / "A, B and C". */
function listText(words) {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

function capitalised(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function takeMethodsInfo(msg) {
  if (Array.isArray(msg.available)) state.available = msg.available;
  if (msg.embedder !== undefined) state.embedder = msg.embedder;
  if (msg.minilm !== undefined) state.minilm = msg.minilm;
  if (msg.graph !== undefined) state.graph = msg.graph;
  if (msg.cage !== undefined) state.cage = msg.cage;
  if (msg.transformer !== undefined) state.transformer = msg.transformer;
}

/** Whether `m` can be chosen: it runs now, or the embedder it needs can be loaded. */
export function selectable(m) {
  return state.available.includes(m) || (embedderFor(m) !== null && !awaitsTransformer(m));
}

/** The method selector: every method the engine knows, the ones it cannot run disabled. */
export function renderMethods() {
  const current = el.method.value || defaultMethod();
  const options = state.methods.map((m) => {
    const o = document.createElement('option');
    o.value = m;
    const { label } = methodInfo(m);
    if (selectable(m)) {
      o.textContent = label;
    } else if (awaitsTransformer(m)) {
      o.textContent = `${label} — ${TRANSFORMER_BUILDING}`;
      o.disabled = true;
      o.title = TRANSFORMER_HINT;
    } else {
      o.textContent = `${label} — ${NOT_IN_BUILD}`;
      o.disabled = true;
      o.title = methodInfo(m).needs.embedder === 'minilm'
        ? 'The MiniLM transformer is not compiled into this WebAssembly build.'
        : 'This WebAssembly build cannot run this method in the page.';
    }
    return o;
  });
  const same =
    options.length === el.method.options.length &&
    options.every((o, i) => o.textContent === el.method.options[i].textContent && o.disabled === el.method.options[i].disabled);
  if (!same) el.method.replaceChildren(...options);
  el.method.value = state.methods.includes(current) && selectable(current) ? current : defaultMethod();

  const staticMethods = methodsWhere(staticOnly);
  const needsDownload = staticMethods.length > 0 && !state.embedder;
  let hint = '';
  const chosen = el.method.value;
  const info = methodInfo(chosen);
  if (state.embedderLoad) hint = `Loading ${EMBEDDER_NAMES[state.embedderLoad.embedder]}…`;
  else if (info.needs.embedder === 'minilm') {
    const m = state.minilm;
    const passages = state.stats ? state.stats.passages : 0;
    if (!m) {
      hint = `MiniLM first downloads 38 MB (model and engine) from this site, then embeds every passage, about ${MINILM_PASSAGES_PER_SECOND} a second`
        + (passages > 0 ? `: ${timeLeft((passages / MINILM_PASSAGES_PER_SECOND) * 1000)} for these ${fmt(passages)} passages.` : '.');
    } else if (m.embedded < m.passages) {
      hint = `MiniLM: ${fmt(m.embedded)} of ${fmt(m.passages)} passages embedded; a search embeds the rest first (${timeLeft(((m.passages - m.embedded) / MINILM_PASSAGES_PER_SECOND) * 1000)}).`;
    }
    else hint = `MiniLM loaded: ${m.dims}-d, ${fmt(m.embedded)} passages embedded.`;
  } else if (info.needs.cage) {
    hint = cageHint(chosen);
  } else if (info.needs.graph && state.graph) {
    hint = `Knowledge graph built: ${fmt(state.graph.counts.entity_nodes)} entities, ${fmt(state.graph.counts.facts)} facts.`;
  } else if (info.needs.graph) {
    const graphMethods = methodsWhere((m) => m.needs.graph && !m.needs.cage).map((m) => methodInfo(m).short);
    hint = `${listText(graphMethods)} first build a knowledge graph of the corpus (seconds), here in the page.`;
  } else if (state.embedder && staticOnly(info)) hint = `Embeddings loaded: static MiniLM, ${state.embedder.dims}-d.`;
  else if (needsDownload && (!info.needs.embedder || staticOnly(info))) {
    hint = `${capitalised(listText(staticMethods.map((m) => methodInfo(m).short)))} first download 7.8 MB of embeddings, from this site.`;
  }
  if (state.methods.some(awaitsTransformer)) hint = hint ? `${hint} ${TRANSFORMER_HINT}` : TRANSFORMER_HINT;
  el.methodHint.textContent = hint;
  el.methodHint.hidden = !el.methodHint.textContent;
}


/** The hint under the selector for CAGE method `m`. */
export function cageHint(m) {
  const info = methodInfo(m);
  const graphFirst = info.needs.graph && !state.graph;
  if (state.cage && !graphFirst) return `CAGE loaded (R-GCN, ${state.cage.dim}-d graph embeddings): the top ${info.candidates} of ${methodInfo(info.first_stage).short} are reranked.`;
  if (state.cage) return `CAGE loaded; ${info.short} first builds the knowledge graph of the corpus (seconds), here in the page.`;
  const parts = ['CAGE first downloads its R-GCN (330 KB) and the tract engine (about 15 MB, shared with MiniLM) from this site'];
  if (!state.embedder) parts.push('and the 7.8 MB static embeddings');
  if (graphFirst) parts.push('and builds the knowledge graph');
  return `${parts.join(', ')}.`;
}

