// The engine worker's side of the user's LLM endpoint: its configuration, LLM OpenIE for the
// graph; a query whose edges the endpoint tiers is query.js's searchWithLlm.
import { LlmEndpoint } from '../../pkg/cairn.js';
import {
  engine, llm, llmOpenieCancel, llmSessionRequests, llmUses, message, now, post, postError, progressPoster, setLlm,
  setLlmOpenieCancel, setLlmSessionRequests, setLlmUses,
} from './state.js';

// ---------------------------------------------------------------------------------------------
// The user's LLM endpoint. Off by default: `llm` stays null and nothing is sent until
// the page posts 'llm-config' with a configuration. Every HTTP request goes through the wasm
// client (LlmEndpoint), which reports it here before it leaves; each is posted to the page as

/**
 * The knowledge graph from the endpoint's OpenIE: one call per passage (LlmEndpoint.openiePassage:
 * request timeout, retries and circuit breaker; a cancel stops the calls), 'llm-openie' progress
 * with the count of passages that fell back to rule-based OpenIE, then
 * Engine.buildGraphFromLlmTriples (rule triples for those passages). Posts 'llm-openie' with
 * `finished: true` and the counts at the end. Throws what the graph build throws.
 */
export async function buildGraphWithLlmOpenie() {
  const endpoint = llm;
  const total = engine.stats().passages;
  const perPassage = [];
  let fallbacks = 0;
  let firstError = null;
  let breakerOpen = false;
  let cors = false;
  setLlmOpenieCancel(false);
  endpoint.resume();
  post({ type: 'llm-openie', done: 0, total, fallbacks, model: endpoint.model });
  post({ type: 'progress', phase: 'llm-openie', done: 0, total });
  for (let i = 0; i < total; i += 1) {
    if (llmOpenieCancel) break;
    const r = await endpoint.openiePassage(engine, i);
    if (r.triples.length > 0) perPassage.push(r.triples);
    else {
      perPassage.push(null);
      fallbacks += 1;
      firstError ??= r.error;
      cors ||= !!r.cors;
    }
    breakerOpen = !!r.breakerOpen;
    post({ type: 'llm-openie', done: i + 1, total, fallbacks, model: endpoint.model });
    post({ type: 'progress', phase: 'llm-openie', done: i + 1, total });
  }
  const cancelled = llmOpenieCancel;
  setLlmOpenieCancel(false);
  const out = engine.buildGraphFromLlmTriples(perPassage, progressPoster((p) => p));
  post({
    type: 'llm-openie', finished: true, total, asked: perPassage.length, model: endpoint.model,
    llmPassages: out.llmPassages, fallbackPassages: out.fallbackPassages, llmTriples: out.llmTriples,
    cancelled, error: firstError, cors, breakerOpen,
  });
  return out;
}

export function llmEvent(ev) {
  if (ev && ev.type === 'request') {
    setLlmSessionRequests(llmSessionRequests + 1);
    post({ type: 'llm-request', n: llmSessionRequests, url: ev.url });
  }
}

export async function handleLlm(msg) {
  switch (msg.type) {
    case 'llm-uses':
      setLlmUses({ ner: !!msg.ner, openie: !!msg.openie });
      return;
    case 'llm-config': {
      llm?.cancel();
      llm?.free();
      setLlm(null);
      if (!msg.config) {
        post({ type: 'llm-config', on: false });
        return;
      }
      const c = msg.config;
      const cfg = { base_url: String(c.baseUrl ?? '').trim(), model: String(c.model ?? '').trim() };
      if (c.apiKey) cfg.api_key = String(c.apiKey);
      if (c.timeoutMs) cfg.timeout_ms = Number(c.timeoutMs);
      if (c.deadlineMs) cfg.query_deadline_ms = Number(c.deadlineMs);
      if (c.retries !== undefined) cfg.retries = Number(c.retries);
      try {
        setLlm(new LlmEndpoint(JSON.stringify(cfg), llmEvent));
        post({ type: 'llm-config', on: true, model: llm.model, url: llm.url });
      } catch (err) {
        post({ type: 'llm-config', on: false, error: message(err) });
      }
      return;
    }
    case 'llm-test': {
      if (!llm) {
        post({ type: 'llm-test', id: msg.id, ok: false, error: 'no endpoint is configured' });
        return;
      }
      try {
        const r = await llm.testConnection();
        post({ type: 'llm-test', id: msg.id, ok: true, ...r });
      } catch (err) {
        post({ type: 'llm-test', id: msg.id, ok: false, error: message(err) });
      }
      return;
    }
    case 'llm-answer': {
      if (!llm) {
        post({ type: 'llm-answer', id: msg.id, ok: false, error: 'no endpoint is configured' });
        return;
      }
      try {
        const passages = (Array.isArray(msg.passages) ? msg.passages : []).map((p) => ({ title: String(p.title ?? ''), text: String(p.text ?? '') }));
        const answer = await llm.answer(String(msg.query ?? ''), passages);
        post({ type: 'llm-answer', id: msg.id, ok: true, answer, model: llm.model, query: msg.query });
      } catch (err) {
        post({ type: 'llm-answer', id: msg.id, ok: false, error: message(err) });
      }
      return;
    }
    default:
  }
}
