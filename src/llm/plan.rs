//! CatRAG's LLM tiering for callers that cannot block (the page's worker): three phases around
//! the synchronous engine (ARCHITECTURE.md: async I/O stays at the edge).
//!
//! 1. **Plan**: run the query once with a [`TierPlanner`] as the edge tierer. It records every
//!    seed's batch (the edges that survived coarse pruning, their linking facts and the targets'
//!    facts) and answers nothing, so that run's tiers are all Weak and its ranking is discarded.
//! 2. **Ask**: the caller sends the batches to the endpoint, asynchronously
//!    ([`PlannedBatch::summary_requests`] for targets with more than τ = 3 facts, then
//!    [`PlannedBatch::tier_request`]), parses with [`parse::parse_tiers`] and fills a
//!    [`TierCache`] ([`TierCache::fill`]: an edge without a clear tier becomes Weak and is counted).
//! 3. **Run**: run the query again with a [`CachedTierer`] over the cache.
//!
//! The engine is deterministic, so phase 3 sees the same seeds and candidates as phase 1.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::{parse, prompts, ChatRequest};
use crate::catrag::{node_name, EdgeTierer, Tier, TierRequest};
use crate::error::{Error, Result};

/// One candidate edge of a planned batch.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEdge {
    /// The neighbour entity node.
    pub neighbour: u32,
    /// Its name.
    pub target: String,
    /// Texts of the facts joining seed and neighbour (at most 3).
    pub linking_facts: Vec<String>,
    /// Texts of all the neighbour's facts.
    pub facts: Vec<String>,
}

/// One seed's batch of edges to tier (phase 1's record).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedBatch {
    /// The query.
    pub query: String,
    /// The seed entity node.
    pub seed: u32,
    /// Its name.
    pub seed_name: String,
    /// The edges, in the engine's order.
    pub edges: Vec<PlannedEdge>,
}

impl PlannedBatch {
    /// Summary prompts for the targets with more than `tau` facts, as (edge index, request).
    pub fn summary_requests(&self, tau: usize) -> Vec<(usize, ChatRequest)> {
        self.edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.facts.len() > tau)
            .map(|(i, e)| (i, prompts::summary_prompt(&e.target, &e.facts)))
            .collect()
    }

    /// The batched tier prompt. `summaries[i]`, when given, is edge i's context; otherwise its
    /// facts joined (the first `tau` and "…" when there are more).
    pub fn tier_request(&self, tau: usize, summaries: &HashMap<usize, String>) -> ChatRequest {
        let edges: Vec<prompts::TierEdge> = self
            .edges
            .iter()
            .enumerate()
            .map(|(i, e)| prompts::TierEdge {
                target: e.target.clone(),
                linking_facts: e.linking_facts.clone(),
                context: summaries.get(&i).cloned().unwrap_or_else(|| {
                    if e.facts.len() > tau {
                        format!("{} …", e.facts[..tau].join("; "))
                    } else {
                        e.facts.join("; ")
                    }
                }),
            })
            .collect();
        prompts::tier_prompt(&self.query, &self.seed_name, &edges)
    }
}

/// Phase 1: records each seed's batch and returns an error (the engine makes that run's edges
/// Weak; discard its ranking). Clones share the record.
#[derive(Debug, Clone, Default)]
pub struct TierPlanner {
    batches: Rc<RefCell<Vec<PlannedBatch>>>,
}

impl TierPlanner {
    /// The batches recorded so far, taken out (the record is left empty).
    pub fn take(&self) -> Vec<PlannedBatch> {
        std::mem::take(&mut self.batches.borrow_mut())
    }
}

impl EdgeTierer for TierPlanner {
    fn name(&self) -> &str {
        "llm-planning"
    }

    fn tier(&self, req: &TierRequest<'_>) -> Result<Vec<Tier>> {
        let text = |f: &u32| req.graph.facts().get(*f as usize).map(|x| x.text.clone());
        let edges = req
            .candidates
            .iter()
            .map(|c| PlannedEdge {
                neighbour: c.neighbour,
                target: node_name(req.graph, c.neighbour),
                linking_facts: c.joining_facts.iter().take(3).filter_map(text).collect(),
                facts: req.graph.facts_of_entity(c.neighbour).iter().filter_map(text).collect(),
            })
            .collect();
        self.batches.borrow_mut().push(PlannedBatch {
            query: req.query.to_string(),
            seed: req.seed,
            seed_name: node_name(req.graph, req.seed),
            edges,
        });
        Err(Error::Llm("planning run: tiers are asked for afterwards".into()))
    }
}

/// Tiers by (query, seed, neighbour), filled in phase 2. Clones share the cache.
#[derive(Debug, Clone, Default)]
pub struct TierCache {
    tiers: Rc<RefCell<HashMap<(String, u32, u32), Tier>>>,
}

impl TierCache {
    /// Parse `answer` (the endpoint's reply to `batch`'s tier prompt) and store one tier per
    /// edge; an edge without a clear tier is stored as Weak. Returns how many were unparsed.
    pub fn fill(&self, batch: &PlannedBatch, answer: &str) -> usize {
        let parsed = parse::parse_tiers(answer, batch.edges.len());
        let mut t = self.tiers.borrow_mut();
        let mut bad = 0;
        for (e, p) in batch.edges.iter().zip(parsed) {
            bad += usize::from(p.is_none());
            t.insert((batch.query.clone(), batch.seed, e.neighbour), p.unwrap_or(Tier::Weak));
        }
        bad
    }

    /// The stored tier of an edge.
    pub fn get(&self, query: &str, seed: u32, neighbour: u32) -> Option<Tier> {
        self.tiers.borrow().get(&(query.to_string(), seed, neighbour)).copied()
    }

    /// Number of edges stored.
    pub fn len(&self) -> usize {
        self.tiers.borrow().len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Phase 3: tiers from a [`TierCache`]; a batch with any edge missing fails (Weak, counted by
/// the engine as a tier failure). Named `llm:{model}` like the native tierer.
#[derive(Debug, Clone)]
pub struct CachedTierer {
    /// The cache.
    pub cache: TierCache,
    name: String,
}

impl CachedTierer {
    /// A tierer over `cache`, reporting itself as `llm:{model}`.
    pub fn new(cache: TierCache, model: &str) -> Self {
        CachedTierer { cache, name: format!("llm:{model}") }
    }
}

impl EdgeTierer for CachedTierer {
    fn name(&self) -> &str {
        &self.name
    }

    fn tier(&self, req: &TierRequest<'_>) -> Result<Vec<Tier>> {
        req.candidates
            .iter()
            .map(|c| {
                self.cache
                    .get(req.query, req.seed, c.neighbour)
                    .ok_or_else(|| Error::Llm(format!("no tier for edge {}→{}", req.seed, c.neighbour)))
            })
            .collect()
    }
}
