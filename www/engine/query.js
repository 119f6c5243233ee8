// The engine worker's one door of a query: a 'search' message becomes Engine.query's query, and
// its answer a 'results' message. A method's route comes from its needs in the method table
// (`methods()`), never from its name.
import { cageInfo, cagePrepare } from './cage.js';
import { METHOD_INFO, engine, llm, llmUses, now, post, postError } from './state.js';

/** The needs of `method` in the method table (undefined for a name it does not have). */
export function needsOf(method) {
  return METHOD_INFO.get(method)?.needs;
}

/**
 * Engine.query's query for a 'search' message: its text, k (default 5), `method`, whether to
 * explain a graph method's hits (unless `explain: false`), search as you type (`prefix`; a CAGE
 * method reranks its first stage's search of the whole words) and the LLM NER's `entities`.
 */
export function queryOf(msg, method, entities) {
  const q = { query: String(msg.query ?? ''), k: Number(msg.k) || 5, method, explain: msg.explain !== false };
  if (msg.prefix && !needsOf(method)?.cage) q.prefix = true;
  if (entities && entities.length) q.entities = entities;
  return q;
}

/**
 * Run a 'search' message's query once (with `plan`, from Engine.planLlmTiers, when the endpoint
 * tiered the walk; the plan is used up) and return `[results, out]`: the 'results' message
 * (its `ms` counted from `t0`) and Engine.query's whole answer. A CAGE method first computes the
 * graph embeddings of passages added since, and the message says how long each step took.
 * Throws what the engine throws.
 */
export function resultsOf(msg, method, t0, { plan, entities } = {}) {
  const prepared = needsOf(method)?.cage ? cagePrepare(method) : null;
  const t1 = now();
  const out = engine.query(queryOf(msg, method, entities), plan);
  const t2 = now();
  const results = {
    type: 'results', id: msg.id, query: msg.query, method, hits: out.hits, ms: t2 - t0,
    explanation: out.explanation ?? undefined, weak: out.weak ?? undefined,
  };
  if (prepared) results.cage = cageInfo(method, prepared, out, t2 - t1);
  return [results, out];
}

/**
 * A query whose graph walk takes LLM tiers (`method`'s needs say so: catrag, and catrag+cage's
 * first stage) with the endpoint's tiers: LLM NER when asked, the engine's plan (no I/O), the
 * endpoint's tiers, then the one query from them (one PPR run; CAGE's rerank after it).
 */
export async function searchWithLlm(msg, method) {
  const endpoint = llm;
  try {
    const t0 = now();
    const query = String(msg.query ?? '');
    // LLM NER first (one call; it starts the query's deadline, which the tiers continue): the
    // anchoring takes its names, or the rule-based NER when it gave none.
    let ner = null;
    if (llmUses.ner) {
      post({ type: 'llm-progress', id: msg.id, ner: true });
      const r = await endpoint.entities(query);
      ner = { model: endpoint.model, ...r };
    }
    const entities = ner && ner.names.length ? ner.names : undefined;
    const plan = engine.planLlmTiers(queryOf(msg, method, entities), endpoint);
    post({ type: 'llm-progress', id: msg.id, batches: plan.batches, edges: plan.edges });
    // cancelled during NER: ask nothing more (the edges stay Weak)
    const report = ner && ner.cancelled
      ? { batchesAnswered: 0, batches: plan.batches, edges: plan.edges, weakFallbackEdges: plan.edges, calls: 0, stats: null, error: null, cors: false, cancelled: true, breakerOpen: false }
      : await endpoint.tier(plan);
    const [results, out] = resultsOf(msg, method, t0, { plan, entities });
    post({
      ...results,
      ner: ner ?? undefined,
      tiers: {
        kind: report.batchesAnswered > 0 ? 'llm' : 'weak',
        model: endpoint.model, url: endpoint.url, tierer: out.tierer, tierFailures: out.tierFailures,
        ...report,
      },
    });
  } catch (err) {
    postError('search', err, { id: msg.id });
  }
}
