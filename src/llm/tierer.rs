//! CatRAG's LLM edge tiering (CatRAG §3, "Query-Aware Dynamic Edge Weighting", stage II;
//! METHOD.md §3 "Dynamic edge weighting (LLM)") as an [`EdgeTierer`] over an [`LlmClient`].
//!
//! Per seed, one batched prompt ([`prompts::tier_prompt`]) lists the edges that survived coarse
//! pruning as `e1` … `en`, each with the facts joining seed and neighbour and the neighbour's
//! context: its facts joined, or, when it has more than τ = 3 facts, a one-sentence summary the
//! endpoint wrote first ([`prompts::summary_prompt`]; summaries are query-independent and cached
//! per entity, made in parallel up to [`LlmConfig::concurrency`]). The answer is parsed strictly,
//! one tier per edge id ([`parse::parse_tiers`]); an edge without a clear tier becomes Weak and
//! is counted and logged. A failed call makes the whole batch fail, which the engine turns into
//! Weak (and counts in `Retrieval::tier_failures`). Tiers are cached per (query, seed,
//! neighbour). Each query may use at most [`LlmConfig::call_budget`] calls (75): summaries stop
//! [`LlmTierer::reserve`] calls before the budget so that the tier prompts still fit (a target
//! left unsummarised shows its first τ facts), and a tier prompt past the budget fails to Weak.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::{parse, prompts, LlmClient, LlmConfig};
use crate::catrag::{node_name, EdgeTierer, Tier, TierRequest};
use crate::error::{Error, Result};

/// Counters of an [`LlmTierer`], over every query since it was made (or last
/// [`LlmTierer::reset_stats`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TierStats {
    /// Queries that asked for at least one tier.
    pub queries: usize,
    /// LLM calls made (tier prompts + summaries), failed ones included.
    pub calls: usize,
    /// Tier prompts sent.
    pub tier_calls: usize,
    /// Summary prompts sent.
    pub summary_calls: usize,
    /// Calls that failed after their retries (HTTP, timeout, not a completion).
    pub failed_calls: usize,
    /// Edges whose answer had no clear tier (made Weak).
    pub unparsed_edges: usize,
    /// Edges tiered by the endpoint (parsed).
    pub tiered_edges: usize,
    /// Edges answered from the (query, edge) cache.
    pub cached_edges: usize,
    /// Summaries skipped, or tier prompts refused, because of the per-query call budget.
    pub budget_skips: usize,
    /// Most calls any one query made.
    pub max_calls_per_query: usize,
    /// Wall-clock milliseconds spent in the tierer (calls, parsing), all queries: the latency
    /// the endpoint adds (summaries made in parallel count once).
    pub llm_ms: f64,
    /// Tiers returned, by tier: irrelevant, weak, high, direct (unparsed edges count as weak).
    pub tiers: [usize; 4],
    /// The first 50 failures and unparseable answers, for the log.
    pub log: Vec<String>,
}

impl TierStats {
    fn note(&mut self, s: String) {
        if self.log.len() < 50 {
            self.log.push(s);
        }
    }
}

#[derive(Default)]
struct State {
    /// (query, seed, neighbour) → tier.
    cache: HashMap<(String, u32, u32), Tier>,
    /// entity node → summary of its facts.
    summaries: HashMap<u32, String>,
    query: Option<String>,
    calls_this_query: usize,
    stats: TierStats,
}

/// CatRAG's LLM edge tierer (see the module documentation). Named `llm:{model}` in reports.
pub struct LlmTierer {
    client: Arc<dyn LlmClient>,
    name: String,
    /// τ: targets with more facts than this are summarised first. Default 3.
    pub tau: usize,
    /// Calls kept back from summaries for the tier prompts of the query's other seeds. Default 5
    /// (CatRAG tiers the top 5 seeds).
    pub reserve: usize,
    state: Mutex<State>,
}

impl LlmTierer {
    /// A tierer over `client` (τ = 3, reserve 5).
    pub fn new(client: Arc<dyn LlmClient>) -> Self {
        let name = format!("llm:{}", client.config().model);
        LlmTierer { client, name, tau: 3, reserve: 5, state: Mutex::new(State::default()) }
    }

    fn config(&self) -> &LlmConfig {
        self.client.config()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the counters.
    pub fn stats(&self) -> TierStats {
        self.lock().stats.clone()
    }

    /// Zero the counters (the caches stay).
    pub fn reset_stats(&self) {
        self.lock().stats = TierStats::default();
    }

    /// Count a call for the current query; false when the budget (less `keep` calls) is spent.
    fn take_call(&self, keep: usize) -> bool {
        let mut s = self.lock();
        if s.calls_this_query + keep >= self.config().call_budget {
            s.stats.budget_skips += 1;
            return false;
        }
        s.calls_this_query += 1;
        s.stats.calls += 1;
        let c = s.calls_this_query;
        s.stats.max_calls_per_query = s.stats.max_calls_per_query.max(c);
        true
    }

    /// The context of entity `node`: its facts joined, or their summary when there are more
    /// than τ (`None` when a summary is needed but not cached).
    fn context(&self, req: &TierRequest<'_>, node: u32) -> (Vec<String>, Option<String>) {
        let facts: Vec<String> = req
            .graph
            .facts_of_entity(node)
            .iter()
            .filter_map(|&f| req.graph.facts().get(f as usize).map(|x| x.text.clone()))
            .collect();
        if facts.len() <= self.tau {
            let joined = facts.join("; ");
            return (facts, Some(joined));
        }
        let cached = self.lock().summaries.get(&node).cloned();
        (facts, cached)
    }

    fn summarise(&self, entity: &str, facts: &[String]) -> Result<String> {
        // Its time counts in the calling `tier` (wall clock: parallel summaries count once).
        let r = self.client.chat(&prompts::summary_prompt(entity, facts));
        let mut s = self.lock();
        s.stats.summary_calls += 1;
        match r {
            Ok(r) if !r.content.trim().is_empty() => {
                Ok(r.content.trim().lines().next().unwrap_or_default().chars().take(400).collect())
            }
            Ok(_) => {
                s.stats.failed_calls += 1;
                s.stats.note(format!("summary of {entity:?}: empty answer"));
                Err(Error::Llm("empty summary".into()))
            }
            Err(e) => {
                s.stats.failed_calls += 1;
                s.stats.note(format!("summary of {entity:?}: {e}"));
                Err(e)
            }
        }
    }
}

impl EdgeTierer for LlmTierer {
    fn name(&self) -> &str {
        &self.name
    }

    fn tier(&self, req: &TierRequest<'_>) -> Result<Vec<Tier>> {
        let started = Instant::now();
        // The query's deadline starts at its first call (NER or tiers) and bounds them all.
        self.client.begin_query(Some(req.query));
        {
            let mut s = self.lock();
            if s.query.as_deref() != Some(req.query) {
                s.query = Some(req.query.to_string());
                s.calls_this_query = 0;
                s.stats.queries += 1;
            }
            let hits: Option<Vec<Tier>> = req
                .candidates
                .iter()
                .map(|c| s.cache.get(&(req.query.to_string(), req.seed, c.neighbour)).copied())
                .collect();
            if let Some(t) = hits {
                s.stats.cached_edges += t.len();
                return Ok(t);
            }
        }
        // Contexts; summaries for targets with more than τ facts, in parallel.
        let mut contexts: Vec<(Vec<String>, Option<String>)> =
            req.candidates.iter().map(|c| self.context(req, c.neighbour)).collect();
        let missing: Vec<usize> = (0..contexts.len()).filter(|&i| contexts[i].1.is_none()).collect();
        let width = self.config().concurrency.max(1);
        for chunk in missing.chunks(width) {
            let allowed: Vec<usize> =
                chunk.iter().copied().filter(|_| self.take_call(self.reserve)).collect();
            // Natively in parallel (scoped threads); wasm32 has no threads: one after another.
            #[cfg(not(target_arch = "wasm32"))]
            let made: Vec<(usize, Result<String>)> = std::thread::scope(|sc| {
                let handles: Vec<_> = allowed
                    .iter()
                    .map(|&i| {
                        let name = node_name(req.graph, req.candidates[i].neighbour);
                        let facts = &contexts[i].0;
                        sc.spawn(move || (i, self.summarise(&name, facts)))
                    })
                    .collect();
                handles.into_iter().filter_map(|h| h.join().ok()).collect()
            });
            #[cfg(target_arch = "wasm32")]
            let made: Vec<(usize, Result<String>)> = allowed
                .iter()
                .map(|&i| (i, self.summarise(&node_name(req.graph, req.candidates[i].neighbour), &contexts[i].0)))
                .collect();
            for (i, r) in made {
                if let Ok(sum) = r {
                    self.lock().summaries.insert(req.candidates[i].neighbour, sum.clone());
                    contexts[i].1 = Some(sum);
                }
            }
        }
        let tau = self.tau;
        let edges: Vec<prompts::TierEdge> = req
            .candidates
            .iter()
            .zip(contexts)
            .map(|(c, (facts, ctx))| prompts::TierEdge {
                target: node_name(req.graph, c.neighbour),
                linking_facts: c
                    .joining_facts
                    .iter()
                    .take(3)
                    .filter_map(|&f| req.graph.facts().get(f as usize).map(|x| x.text.clone()))
                    .collect(),
                // Unsummarised (failed or over budget): the first τ facts.
                context: ctx.unwrap_or_else(|| format!("{} …", facts[..tau.min(facts.len())].join("; "))),
            })
            .collect();
        if !self.take_call(0) {
            let mut s = self.lock();
            s.stats.llm_ms += started.elapsed().as_secs_f64() * 1e3;
            s.stats.note(format!("seed {}: call budget of {} spent", req.seed, self.config().call_budget));
            return Err(Error::Llm("per-query call budget spent".into()));
        }
        let seed_name = node_name(req.graph, req.seed);
        let answer = self.client.chat(&prompts::tier_prompt(req.query, &seed_name, &edges));
        let mut s = self.lock();
        s.stats.tier_calls += 1;
        let result = match answer {
            Err(e) => {
                s.stats.failed_calls += 1;
                s.stats.note(format!("tiers of seed {seed_name:?}: {e}"));
                Err(e)
            }
            Ok(r) => {
                let parsed = parse::parse_tiers(&r.content, edges.len());
                let bad = parsed.iter().filter(|t| t.is_none()).count();
                if bad > 0 {
                    let head: String = r.content.chars().take(160).collect();
                    s.stats.note(format!(
                        "tiers of seed {seed_name:?}: {bad} of {} edge(s) unparsed in {head:?}",
                        edges.len()
                    ));
                }
                s.stats.unparsed_edges += bad;
                s.stats.tiered_edges += edges.len() - bad;
                let tiers: Vec<Tier> = parsed.into_iter().map(|t| t.unwrap_or(Tier::Weak)).collect();
                for (c, t) in req.candidates.iter().zip(&tiers) {
                    s.cache.insert((req.query.to_string(), req.seed, c.neighbour), *t);
                }
                for t in &tiers {
                    s.stats.tiers[*t as usize] += 1;
                }
                Ok(tiers)
            }
        };
        s.stats.llm_ms += started.elapsed().as_secs_f64() * 1e3;
        result
    }
}

/// A shared [`LlmTierer`]: several indexes (the pool setting builds one per question) use one
/// cache and one set of counters.
impl EdgeTierer for Arc<LlmTierer> {
    fn name(&self) -> &str {
        self.as_ref().name()
    }

    fn tier(&self, request: &TierRequest<'_>) -> Result<Vec<Tier>> {
        self.as_ref().tier(request)
    }
}
