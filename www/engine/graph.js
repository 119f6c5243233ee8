// The engine worker's knowledge graph (the graph methods, and catrag+cage's first stage): what it
// needs first, and its build (with the endpoint's OpenIE when LLM OpenIE is on).
import { ensureTextPipeline, loadEmbedder } from './embedders.js';
import { buildGraphWithLlmOpenie } from './llm.js';
import { engine, llm, llmUses, loadReplies, message, now, post, progressPoster, staticReady } from './state.js';

/**
 * Make hipporag and catrag available: load the static embedder if needed (its download can be
 * cancelled), then build the knowledge graph with 'extract', 'graph-embed' and 'synonyms'
 * progress. Replies 'ready' with `embedderName: 'graph'`.
 */
export async function loadGraph(id) {
  const { ready: reply, fail } = loadReplies(id, 'graph');
  const t0 = now();
  if (!(await needStaticEmbedderAndPassages(id, reply, 'There is nothing to build a knowledge graph from yet: index some passages first.'))) return;
  const t1 = now();
  if (!(await buildGraphOrFail(fail))) return;
  reply({ timing: { graphMs: now() - t1, totalMs: now() - t0 } });
}

/**
 * What the graph and CAGE loads need first: the static embedder (loaded if missing; its download
 * can be cancelled) and an index with passages. False, after replying `cancelled`/`failed` (and
 * posting `emptyMessage` for an empty index), when the caller must stop.
 */
export async function needStaticEmbedderAndPassages(id, reply, emptyMessage) {
  if (!staticReady()) {
    const status = await loadEmbedder(id, true);
    if (status !== 'ok') {
      reply(status === 'cancelled' ? { cancelled: true } : { failed: true });
      return false;
    }
  }
  if (!engine.stats().built || engine.stats().passages === 0) {
    post({ type: 'error', during: 'load-embedder', message: emptyMessage });
    reply({ failed: true });
    return false;
  }
  // the knowledge graph and CAGE's passage graphs run the English text pipeline
  try {
    if ((await ensureTextPipeline()) === 'cancelled') {
      reply({ cancelled: true });
      return false;
    }
  } catch (err) {
    post({ type: 'error', during: 'load-embedder', message: message(err) });
    reply({ failed: true });
    return false;
  }
  return true;
}

/**
 * Build the knowledge graph with progress (with the endpoint's OpenIE when LLM OpenIE is on);
 * false after `fail` when it could not be built.
 */
export async function buildGraphOrFail(fail) {
  try {
    if (llm && llmUses.openie) await buildGraphWithLlmOpenie();
    else engine.buildGraph(progressPoster((p) => p));
    return true;
  } catch (err) {
    fail('The knowledge graph could not be built', err);
    return false;
  }
}
