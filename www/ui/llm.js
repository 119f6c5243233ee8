// The LLM endpoint panel: settings, connection test, the request badge, the tiers line under a
// CatRAG result, the answer from the top passages, and two more uses of the endpoint (both off by
// default): LLM NER for CatRAG's anchoring and LLM OpenIE for the knowledge graph.
import { onWorkerMessage, onWorkerMessagePrefix, postToWorker } from './channel.js';
import { $, el } from './dom.js';
import { methodInfo } from './methods.js';
import { loadEmbedder } from './search.js';
import { state } from './state.js';

// Off by default: no configuration, nothing sent. "Use this endpoint" gives the worker a
// configuration; the worker's wasm client reports every HTTP request before it leaves
// ('llm-request'), and the badge counts them. Settings live in memory unless "remember on this
// device" is ticked (then localStorage, key LLM_STORE, API key included).

export const LLM_STORE = 'cairn-llm-endpoint';
export const llmEl = {
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
  ner: $('llm-ner'),
  openie: $('llm-openie'),
  openieBuild: $('llm-openie-build'),
  openieStatus: $('llm-openie-status'),
};
export const llm = { building: false, config: null, on: false, model: '', host: '', requests: 0, sendingTimer: 0, searching: false, hits: [], query: '', answerId: 0 };

export function llmHost(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What to do about a fetch that the browser refused (CORS) or that reached nothing. */
export function llmCorsFix() {
  const origin = location.origin;
  return `The browser could not read the endpoint's answer: nothing listens at that URL, or the endpoint does not allow this page's origin (${origin}) (CORS). Fix it on the endpoint: Ollama: start it with OLLAMA_ORIGINS=${origin} ollama serve · llama.cpp: llama-server sends CORS headers itself (check the URL and port) · LM Studio: turn on “Enable CORS” in the server settings · anything else: put a reverse proxy in front that adds Access-Control-Allow-Origin: ${origin}.`;
}

export function llmSendConfig() {
  if (state.worker) {
    postToWorker({ type: 'llm-config', config: llm.config });
    llmSendUses();
  }
}

/** What else the endpoint is used for: LLM NER (anchoring) and LLM OpenIE (graph build). */
export function llmSendUses() {
  if (state.worker) postToWorker({ type: 'llm-uses', ner: llmEl.ner.checked, openie: llmEl.openie.checked });
}

export function llmApply() {
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

export function llmTurnOff() {
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

export function llmSetResult(text, bad) {
  llmEl.result.textContent = text;
  llmEl.result.classList.toggle('bad', !!bad);
}

export function llmRenderState() {
  llmEl.state.textContent = llm.on ? `on: ${llm.model} at ${llm.host}` : 'off: nothing is sent';
  llmEl.test.disabled = !llm.on;
  llmEl.off.disabled = !llm.on;
  llmEl.openieBuild.disabled = !(llm.on && llmEl.openie.checked) || llm.building;
  llmEl.answerRow.hidden = !(llm.on && llm.hits.length > 0);
}

export function llmRenderBadge(sending) {
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

export function handleLlmMessage(msg) {
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
      if (msg.ner) el.resultsMeta.textContent = `Asking ${llm.host} for the query's entities (LLM NER)…`;
      else el.resultsMeta.textContent = msg.batches
        ? `Asking ${llm.host} to tier ${msg.edges} edges around ${msg.batches} seed ${msg.batches === 1 ? 'entity' : 'entities'}…`
        : 'Searching…';
      return;
    case 'llm-openie':
      renderLlmOpenie(msg);
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
export function renderLlmTiers(msg) {
  llm.searching = false;
  llmEl.cancel.hidden = true;
  llmEl.answerText.hidden = true;
  llm.hits = msg && msg.hits ? msg.hits.slice(0, 5).map((h) => ({ title: h.title, text: h.text })) : [];
  llm.query = msg ? String(msg.query ?? '') : '';
  llmRenderState();
  const t = msg && msg.tiers;
  llmEl.tiers.classList.remove('bad');
  if (!msg || !methodInfo(msg.method).needs.llm) {
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
  // said on the search whose failure opened it, not only on the next one
  if (t.breakerOpen) parts.push('it failed repeatedly, so the next searches skip it and fall back at once until its circuit breaker cools down');
  llmEl.tiers.dataset.breaker = t.breakerOpen ? 'open' : '';
  const n = msg.ner;
  let nerBad = false;
  if (n) {
    if (n.names.length) parts.push(`entities: LLM NER (${n.model}): ${n.names.join(', ')}`);
    else {
      nerBad = true;
      const why = n.cancelled ? 'cancelled' : n.cors ? 'the endpoint could not be reached' : n.error || 'no entity';
      parts.push(`entities: rule-based NER (LLM NER failed: ${why})`);
    }
  }
  llmEl.tiers.textContent = parts.join(' · ');
  llmEl.tiers.dataset.ner = n ? (nerBad ? 'rule' : 'llm') : 'off';
  llmEl.tiers.classList.toggle('bad', t.kind !== 'llm' || !!t.error || nerBad);
}

/** The LLM OpenIE line of the panel: progress while the passages are asked, then the counts. */
export function renderLlmOpenie(msg) {
  const s = llmEl.openieStatus;
  if (!msg.finished) {
    llm.building = true;
    llmEl.cancel.hidden = false;
    llmEl.badge.hidden = false;
    s.classList.remove('bad');
    s.textContent = `LLM OpenIE: asking ${llm.host} (${msg.model}) for the triples of passage ${msg.done} of ${msg.total}; ${msg.fallbacks} fell back to rule-based OpenIE so far…`;
    s.dataset.state = 'running';
    llmRenderState();
    return;
  }
  llm.building = false;
  if (!llm.searching) llmEl.cancel.hidden = true;
  const parts = [
    `LLM OpenIE (${msg.model}): graph built; ${msg.llmPassages} of ${msg.total} passages from the endpoint (${msg.llmTriples} triples), ${msg.fallbackPassages} fell back to rule-based OpenIE`,
  ];
  if (msg.cancelled) parts.push(`cancelled after ${msg.asked} passages: the rest kept their rule-based triples`);
  else if (msg.cors) parts.push(llmCorsFix());
  else if (msg.error) parts.push(`first failure: ${msg.error}`);
  if (msg.breakerOpen) parts.push('the endpoint failed repeatedly, so the remaining calls were skipped (circuit breaker)');
  s.textContent = parts.join(' · ');
  s.dataset.state = msg.cancelled ? 'cancelled' : 'done';
  s.dataset.fallbacks = String(msg.fallbackPassages);
  s.classList.toggle('bad', msg.fallbackPassages > 0);
  llmRenderState();
}

export function llmStartFromStorage() {
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

/** Wire the panel's controls and take the settings remembered on this device, if any. */
export function initLlm() {
  onWorkerMessagePrefix('llm-', handleLlmMessage);
  onWorkerMessage('hello', () => llmSendConfig()); // a new worker has no endpoint: give it the one in use
  onWorkerMessage('results', (msg) => {
    if (msg.id === state.searchId) renderLlmTiers(msg);
  });
  onWorkerMessage('error', (msg) => {
    if (msg.during === 'search' && msg.id === state.searchId) renderLlmTiers(null);
  });
  llmEl.use.addEventListener('click', llmApply);
  llmEl.off.addEventListener('click', llmTurnOff);
  llmEl.test.addEventListener('click', () => {
    llmEl.test.disabled = true;
    llmSetResult(`Testing ${llm.host}…`, false);
    postToWorker({ type: 'llm-test' });
  });
  llmEl.cancel.addEventListener('click', () => postToWorker({ type: 'llm-cancel' }));
  llmEl.ner.addEventListener('change', llmSendUses);
  llmEl.openie.addEventListener('change', () => {
    llmSendUses();
    llmRenderState();
  });
  // (re)build the knowledge graph now, with the endpoint's OpenIE (the graph load of the method menu)
  llmEl.openieBuild.addEventListener('click', () => {
    llmEl.openieStatus.textContent = `LLM OpenIE: starting…`;
    loadEmbedder('graph');
  });
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
    postToWorker({ type: 'llm-answer', id: llm.answerId, query: llm.query, passages: llm.hits });
  });
  llmStartFromStorage();
  llmRenderState();
}
