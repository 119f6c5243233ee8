//! Explanations as data, and hub diagnostics.
//!
//! **Explanations** ([`explain`]): for a result passage, the seeds that reach it, its entities by
//! PPR mass, and the highest-probability short paths from a seed to it, each arc with its type,
//! static weight, this query's multiplier and why ([`super::OverlayCause`]). Everything is
//! serialisable for the page (which draws seeds, entities and passages; edge width by weight,
//! colour by multiplier) and the CLI.
//!
//! A path `s = v₀ → v₁ → … → v_k = p` is scored by the probability that PPR's walk produces it
//! in one go: it teleports to `s` (the seed's share of the normalised teleport vector), then
//! follows each arc without teleporting: `share(s) · Π dᵢ · w'(vᵢ→vᵢ₊₁) / out'(vᵢ)`, with `w'`
//! the arc's weight after this query's overlay and `out'` the node's total. Paths are simple (no
//! node twice), at most [`ExplainConfig::max_path_arcs`] arcs (3: seed → entity → entity →
//! passage), and found by a depth-first search restricted to nodes within reach of the passage
//! (a breadth-first search from it first), with a budget of [`ExplainConfig::max_expansions`]
//! arc visits so a hub cannot make it slow.
//!
//! **Hub diagnostics** ([`mass_shares`]): CatRAG's complaint about static PPR is "semantic drift":
//! the walk's mass is siphoned into high-degree hub nodes. Two measures per query: the share of
//! PPR mass on the top 1% of nodes by degree (the hubs, [`hub_nodes`]), and the share on the top
//! 1% of nodes by mass (how concentrated the distribution is).

use std::cmp::Ordering;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{node_name, OverlayArc, OverlayCause, PassageTeleport, Retrieval, Seed};
use crate::error::{Error, Result};
use crate::graph::{EdgeType, Graph, NodeKind};

/// Sizes of an explanation. Serde names are the field names; `{}` is the default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExplainConfig {
    /// Paths kept per passage, best first. Default 3.
    pub max_paths: usize,
    /// Longest path in arcs. Default 3.
    pub max_path_arcs: usize,
    /// Entities of the passage listed by PPR mass. Default 5.
    pub top_entities: usize,
    /// Arc visits allowed to the path search per passage. Default 100,000.
    pub max_expansions: usize,
}

impl Default for ExplainConfig {
    fn default() -> Self {
        ExplainConfig { max_paths: 3, max_path_arcs: 3, top_entities: 5, max_expansions: 100_000 }
    }
}

/// A node on a path or in a list, with what the page needs to draw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathNode {
    /// Node id.
    pub node: u32,
    /// Entity or passage.
    pub kind: NodeKind,
    /// Entity name, or `passage #i` (first corpus index).
    pub name: String,
    /// Its PPR mass.
    pub mass: f64,
}

/// One arc of a path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathEdge {
    /// Arc index in the CSR.
    pub arc: u32,
    /// Relation, synonym or context.
    pub edge_type: EdgeType,
    /// Stored weight.
    pub static_weight: f32,
    /// This query's multiplier (1 when the overlay does not touch it).
    pub multiplier: f32,
    /// The walk's probability of taking it from its source: `w' / out'` (without the damping).
    pub transition: f64,
    /// Why its multiplier is not 1, if it is not.
    pub cause: Option<OverlayCause>,
    /// For a relation arc, the text of a fact joining its ends (the first, by fact id).
    pub fact: Option<String>,
}

/// A path from a seed to the passage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedPath {
    /// `nodes[0]` is the seed, the last the passage.
    pub nodes: Vec<PathNode>,
    /// `edges[i]` joins `nodes[i]` and `nodes[i + 1]`.
    pub edges: Vec<PathEdge>,
    /// The probability of the walk producing this path in one go (module docs).
    pub probability: f64,
}

/// Why one passage ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassageExplanation {
    /// The passage node.
    pub node: u32,
    /// Its corpus indices (several for exact duplicates).
    pub passages: Vec<u32>,
    /// Its score (PPR mass, or dense cosine on fallback).
    pub score: f64,
    /// Its own share of the normalised teleport vector (the passage priors' mass on it).
    pub teleport: f64,
    /// That share by source (dense prior, lexical prior, title bridges, query titles, residual),
    /// each a share of the teleport total; they sum to [`PassageExplanation::teleport`].
    pub sources: PassageTeleport,
    /// Arcs into this passage whose weight this query changed (key-fact boosts of a seed
    /// fact's entity → this passage), in overlay order.
    pub changed_arcs: Vec<OverlayArc>,
    /// The seeds that start one of [`PassageExplanation::paths`], by weight.
    pub seeds: Vec<Seed>,
    /// The passage's entities, by PPR mass (at most [`ExplainConfig::top_entities`]).
    pub entities: Vec<PathNode>,
    /// The best paths from a seed, by probability (at most [`ExplainConfig::max_paths`]).
    pub paths: Vec<SeedPath>,
    /// The path search ran out of its budget (some paths may be missing).
    pub truncated: bool,
}

/// Per-arc multipliers of a retrieval's overlay (composed by product), with their causes.
fn multipliers(r: &Retrieval) -> FxHashMap<u32, (f32, OverlayCause)> {
    let mut m: FxHashMap<u32, (f32, OverlayCause)> = FxHashMap::default();
    for o in &r.overlay {
        m.entry(o.arc).and_modify(|e| e.0 *= o.multiplier).or_insert((o.multiplier, o.cause));
    }
    m
}

fn path_node(graph: &Graph, r: &Retrieval, node: u32) -> PathNode {
    PathNode {
        node,
        kind: graph.node_kind(node).unwrap_or(NodeKind::Entity),
        name: node_name(graph, node),
        mass: r.node_scores.get(node as usize).copied().unwrap_or(0.0),
    }
}

/// The `k` entities with the most PPR mass in the whole graph (ties: lower id), for the page's
/// overview. Empty on fallback.
pub fn top_entities(graph: &Graph, r: &Retrieval, k: usize) -> Vec<PathNode> {
    let mut ents: Vec<(u32, f64)> = graph
        .entity_nodes()
        .iter()
        .map(|&e| (e, r.node_scores.get(e as usize).copied().unwrap_or(0.0)))
        .collect();
    let cmp =
        |a: &(u32, f64), b: &(u32, f64)| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then(a.0.cmp(&b.0));
    if r.node_scores.is_empty() || k == 0 {
        return Vec::new();
    }
    if ents.len() > k {
        ents.select_nth_unstable_by(k - 1, cmp);
        ents.truncate(k);
    }
    ents.sort_by(cmp);
    ents.into_iter().map(|(e, _)| path_node(graph, r, e)).collect()
}

struct Search<'a> {
    graph: &'a Graph,
    mult: &'a FxHashMap<u32, (f32, OverlayCause)>,
    /// Node → arcs to the target (≤ max − 1), from the breadth-first search.
    dist: FxHashMap<u32, usize>,
    target: u32,
    max_arcs: usize,
    damping: f64,
    budget: usize,
    truncated: bool,
    /// (probability, seed, arcs)
    found: Vec<(f64, u32, Vec<u32>)>,
    keep: usize,
}

impl Search<'_> {
    fn effective(&self, arc: usize) -> f64 {
        let w = f64::from(self.graph.csr().weights[arc]);
        w * self.mult.get(&(arc as u32)).map_or(1.0, |m| f64::from(m.0))
    }

    fn out_weight(&self, u: u32) -> f64 {
        self.graph.csr().arcs_of(u).map(|a| self.effective(a)).sum()
    }

    fn floor(&self) -> f64 {
        if self.found.len() < self.keep {
            0.0
        } else {
            self.found.iter().map(|f| f.0).fold(f64::INFINITY, f64::min)
        }
    }

    fn record(&mut self, p: f64, seed: u32, arcs: &[u32]) {
        self.found.push((p, seed, arcs.to_vec()));
        self.found.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal).then(a.2.cmp(&b.2)));
        self.found.truncate(self.keep);
    }

    fn dfs(&mut self, seed: u32, u: u32, prob: f64, on_path: &mut Vec<u32>, arcs: &mut Vec<u32>) {
        let out = self.out_weight(u);
        if out <= 0.0 {
            return;
        }
        let graph = self.graph;
        let csr = graph.csr();
        for a in csr.arcs_of(u) {
            if self.budget == 0 {
                self.truncated = true;
                return;
            }
            self.budget -= 1;
            let v = csr.targets[a];
            let w = self.effective(a);
            if w <= 0.0 || on_path.contains(&v) {
                continue;
            }
            let p = prob * self.damping * w / out;
            if p <= self.floor() {
                continue; // probabilities only shrink along a path
            }
            arcs.push(a as u32);
            if v == self.target {
                self.record(p, seed, arcs);
            } else if self.dist.get(&v).is_some_and(|&d| d + arcs.len() <= self.max_arcs) {
                on_path.push(v);
                self.dfs(seed, v, p, on_path, arcs);
                on_path.pop();
            }
            arcs.pop();
        }
    }
}

/// Explain why passage node `passage` got its score in `retrieval` (module docs). `damping` is
/// the PPR damping the retrieval used (0.5 by default). On fallback there are no paths: the
/// passage was ranked by its dense score.
///
/// # Errors
/// [`Error::Config`] when `passage` is not a passage node of `graph`.
pub fn explain(
    graph: &Graph,
    retrieval: &Retrieval,
    passage: u32,
    damping: f64,
    config: &ExplainConfig,
) -> Result<PassageExplanation> {
    if graph.node_kind(passage) != Some(NodeKind::Passage) {
        return Err(Error::Config(format!("node {passage} is not a passage node of the graph")));
    }
    let ordinal = graph.passage_nodes().iter().position(|&p| p == passage);
    let score = ordinal.and_then(|o| retrieval.passage_scores.get(o)).copied().unwrap_or(0.0);
    let teleport = retrieval.teleport.get(passage as usize).copied().unwrap_or(0.0);
    let sources = match retrieval.passage_sources.binary_search_by_key(&passage, |p| p.node) {
        Ok(i) => retrieval.passage_sources[i],
        // No source but the dense prior put mass on it.
        Err(_) => PassageTeleport { node: passage, dense_prior: teleport, ..PassageTeleport::default() },
    };
    let changed_arcs = retrieval.overlay.iter().filter(|o| o.to == passage).cloned().collect();
    let mut ex = PassageExplanation {
        node: passage,
        passages: graph.passage_indices(passage).to_vec(),
        score,
        teleport,
        sources,
        changed_arcs,
        seeds: Vec::new(),
        entities: Vec::new(),
        paths: Vec::new(),
        truncated: false,
    };
    if retrieval.node_scores.is_empty() {
        return Ok(ex);
    }
    let mut ents: Vec<PathNode> =
        graph.entities_of(passage).iter().map(|&e| path_node(graph, retrieval, e)).collect();
    ents.sort_by(|a, b| b.mass.partial_cmp(&a.mass).unwrap_or(Ordering::Equal).then(a.node.cmp(&b.node)));
    ents.truncate(config.top_entities);
    ex.entities = ents;

    let max_arcs = config.max_path_arcs;
    if max_arcs == 0 || config.max_paths == 0 {
        return Ok(ex);
    }
    // Breadth-first search from the passage, to depth max_arcs − 1 (arcs are stored both ways).
    let csr = graph.csr();
    let mut dist: FxHashMap<u32, usize> = FxHashMap::default();
    dist.insert(passage, 0);
    let mut frontier = vec![passage];
    for d in 1..max_arcs {
        let mut next = Vec::new();
        for &u in &frontier {
            for a in csr.arcs_of(u) {
                let v = csr.targets[a];
                if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(v) {
                    e.insert(d);
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    let mult = multipliers(retrieval);
    let mut search = Search {
        graph,
        mult: &mult,
        dist,
        target: passage,
        max_arcs,
        damping,
        budget: config.max_expansions,
        truncated: false,
        found: Vec::new(),
        keep: config.max_paths,
    };
    for s in &retrieval.seeds {
        if s.node == passage {
            continue;
        }
        let share = retrieval.teleport.get(s.node as usize).copied().unwrap_or(0.0);
        let mut on_path = vec![s.node];
        let mut arcs = Vec::new();
        search.dfs(s.node, s.node, share, &mut on_path, &mut arcs);
    }
    ex.truncated = search.truncated;
    for (prob, seed, arcs) in std::mem::take(&mut search.found) {
        let mut nodes = vec![path_node(graph, retrieval, seed)];
        let mut edges = Vec::new();
        let mut u = seed;
        for &a in &arcs {
            let ai = a as usize;
            let v = csr.targets[ai];
            let out = search.out_weight(u);
            let (m, cause) = mult.get(&a).map_or((1.0, None), |x| (x.0, Some(x.1)));
            let edge_type = csr.edge_types[ai];
            let fact = if edge_type == EdgeType::Relation {
                let (fu, fv) = (graph.facts_of_entity(u), graph.facts_of_entity(v));
                fu.iter()
                    .find(|f| fv.binary_search(f).is_ok())
                    .and_then(|&f| graph.facts().get(f as usize))
                    .map(|f| f.text.clone())
            } else {
                None
            };
            edges.push(PathEdge {
                arc: a,
                edge_type,
                static_weight: csr.weights[ai],
                multiplier: m,
                transition: if out > 0.0 { search.effective(ai) / out } else { 0.0 },
                cause,
                fact,
            });
            nodes.push(path_node(graph, retrieval, v));
            u = v;
        }
        if !ex.seeds.iter().any(|s| s.node == seed) {
            if let Some(s) = retrieval.seeds.iter().find(|s| s.node == seed) {
                ex.seeds.push(s.clone());
            }
        }
        ex.paths.push(SeedPath { nodes, edges, probability: prob });
    }
    ex.seeds
        .sort_by(|a, b| b.weight.partial_cmp(&a.weight).unwrap_or(Ordering::Equal).then(a.node.cmp(&b.node)));
    Ok(ex)
}

/// How one query's overlay changed the walk: arcs by cause (CatRAG §3 steps 3–5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OverlaySummary {
    /// Context arcs strengthened by the key-fact boost.
    pub boosted: usize,
    /// Relation arcs demoted to Weak by coarse pruning.
    pub pruned: usize,
    /// Relation arcs tiered Irrelevant (removed for this query).
    pub irrelevant: usize,
    /// Tiered Weak.
    pub weak: usize,
    /// Tiered High.
    pub high: usize,
    /// Tiered Direct.
    pub direct: usize,
}

/// The arcs `retrieval`'s overlay changed, counted by cause.
pub fn overlay_summary(retrieval: &Retrieval) -> OverlaySummary {
    let mut s = OverlaySummary::default();
    for o in &retrieval.overlay {
        match o.cause {
            OverlayCause::KeyFactBoost { .. } => s.boosted += 1,
            OverlayCause::Pruned => s.pruned += 1,
            OverlayCause::Tiered { tier } => match tier {
                super::Tier::Irrelevant => s.irrelevant += 1,
                super::Tier::Weak => s.weak += 1,
                super::Tier::High => s.high += 1,
                super::Tier::Direct => s.direct += 1,
            },
        }
    }
    s
}

/// The hubs: the `⌈fraction · n⌉` nodes with the most arcs (ties: lower id), at least one node
/// when the graph has any. `fraction` is clamped to [0, 1]; CatRAG's drift measure uses 0.01.
pub fn hub_nodes(graph: &Graph, fraction: f64) -> Vec<u32> {
    let n = graph.node_count();
    let count = top_count(n, fraction);
    let csr = graph.csr();
    let mut nodes: Vec<(u32, usize)> = (0..n as u32).map(|u| (u, csr.arcs_of(u).len())).collect();
    let cmp = |a: &(u32, usize), b: &(u32, usize)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
    if count == 0 {
        return Vec::new();
    }
    if nodes.len() > count {
        nodes.select_nth_unstable_by(count - 1, cmp);
        nodes.truncate(count);
    }
    nodes.sort_by(cmp);
    nodes.into_iter().map(|x| x.0).collect()
}

fn top_count(n: usize, fraction: f64) -> usize {
    if n == 0 {
        return 0;
    }
    let f = if fraction.is_finite() { fraction.clamp(0.0, 1.0) } else { 0.0 };
    ((n as f64 * f).ceil() as usize).clamp(1, n)
}

/// Where one query's PPR mass sits (module docs, hub diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MassShares {
    /// Share of the mass on the hubs (the top 1% of nodes by degree, [`hub_nodes`]), in [0, 1].
    pub hub_mass_share: f64,
    /// Share of the mass on the top 1% of nodes by mass, in [0, 1].
    pub top1_mass_share: f64,
}

/// The mass shares of one query's PPR scores `scores` (`[nodes]`), `hubs` from [`hub_nodes`].
/// `None` when there are no scores (fallback) or they sum to 0.
pub fn mass_shares(scores: &[f64], hubs: &[u32]) -> Option<MassShares> {
    let total: f64 = scores.iter().filter(|x| x.is_finite()).sum();
    if scores.is_empty() || total <= 0.0 {
        return None;
    }
    let hub: f64 = hubs.iter().filter_map(|&h| scores.get(h as usize)).filter(|x| x.is_finite()).sum();
    let k = top_count(scores.len(), 0.01);
    let mut v: Vec<f64> = scores.iter().map(|&x| if x.is_finite() { x } else { 0.0 }).collect();
    let cmp = |a: &f64, b: &f64| b.partial_cmp(a).unwrap_or(Ordering::Equal);
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, cmp);
        v.truncate(k);
    }
    let top: f64 = v.iter().sum();
    Some(MassShares { hub_mass_share: hub / total, top1_mass_share: top / total })
}

/// Quantiles of one query's cosines with every fact (to set the similarity tierer's thresholds
/// from data: [`super::SimilarityTierThresholds`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CosineQuantiles {
    /// Median.
    pub p50: f32,
    /// 90th percentile.
    pub p90: f32,
    /// 98th percentile.
    pub p98: f32,
    /// 99.9th percentile.
    pub p999: f32,
    /// Maximum.
    pub max: f32,
}

/// Nearest-rank quantiles of `cosines` (non-finite values ignored); `None` when there is none.
pub fn fact_cosine_quantiles(cosines: &[f32]) -> Option<CosineQuantiles> {
    let mut v: Vec<f32> = cosines.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f32::total_cmp);
    let q = |p: f64| {
        let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    };
    Some(CosineQuantiles { p50: q(0.5), p90: q(0.9), p98: q(0.98), p999: q(0.999), max: v[v.len() - 1] })
}
