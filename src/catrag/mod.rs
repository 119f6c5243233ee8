//! Query-time graph retrieval: HippoRAG 2's static PPR and CatRAG's context-aware traversal
//! (docs/architecture.md, module `catrag`; docs/method/spec.md §2–3).
//!
//! Sources: CatRAG — Lau et al., 2026, "Breaking the Static Graph: Context-Aware Traversal for
//! Robust Retrieval-Augmented Generation" (ACL Findings 2026, arXiv 2602.01965), §3; HippoRAG 2 —
//! Gutiérrez et al., 2025, "From RAG to Memory", §3.
//!
//! One query, given the knowledge graph ([`crate::graph::Graph`]), the query's vector, every
//! passage's dense score and the query's entity mentions:
//!
//! 1. **Seeds, channel A** ([`seeds`]): score every fact by cosine with the query, keep the top
//!    [`CatragConfig::linking_top_k`] (5); each entity of a kept fact gets the fact's min–max
//!    normalised score ÷ |passages containing the entity|, averaged over its facts; the top
//!    [`CatragConfig::seed_top_k`] (5) entities are seeds. Every passage node gets
//!    [`CatragConfig::passage_node_weight`] (0.05) × its min–max normalised dense score.
//!    Cairn adds lexical evidence to the same passage prior (both methods; docs/method/graph.md):
//!    the top [`CatragConfig::lexical_top_n`] (20) passages by BM25 get
//!    [`CatragConfig::lexical_passage_weight`] (2.0) × score ÷ best ([`seeds`]), and the
//!    passages titled by an entity of the top [`CatragConfig::bridge_sources`] (4) BM25 passages
//!    get up to [`CatragConfig::bridge_weight`] (3.0) ([`bridge`], title bridges), the passages
//!    those bridge to up to [`CatragConfig::bridge_hop2_weight`] (1.0), and the passages titled
//!    by a name in the query up to [`CatragConfig::query_title_weight`] (3.0) (query titles).
//! 2. **Seeds, channel B: symbolic anchoring** ([`anchor`], CatRAG only): each query mention is
//!    mapped to an entity node (exact normalised match, else embedding match ≥
//!    [`CatragConfig::anchor_threshold`], 0.9; unmatched mentions are dropped) and gets
//!    [`CatragConfig::epsilon`] (0.2) ÷ |passages containing it| added to its teleport weight.
//! 3. **Key-fact passage weight enhancement** ([`boost`], CatRAG only): context arcs from a seed
//!    fact's entity to a passage stating that fact × (1 + β), β = 2.5, capped at 2·(1 + β).
//! 4. **Coarse edge pruning** ([`prune`], CatRAG only): for each of the top
//!    [`CatragConfig::tier_seeds`] (5) seeds with more than [`CatragConfig::k_edge`] (15)
//!    relation edges, keep the 15 whose joining fact is closest to the query; the rest get the
//!    Weak multiplier (0.25).
//! 5. **Dynamic edge weighting** ([`tier`], CatRAG only): the surviving seed→neighbour relation
//!    edges are tiered by an [`EdgeTierer`] into {Irrelevant 0, Weak 0.25, High 2.5, Direct 5.0}.
//!    Offline, [`EmbeddingSimilarityTierer`] stands in for CatRAG's LLM (and says so).
//! 6. **PPR** ([`crate::ppr`], docs/method/spec.md §2): the teleport vector (seeds + passage weights) and
//!    the per-query [`ArcOverlay`] of steps 3–5 (the stored graph is never mutated), damping 0.5;
//!    passage nodes are ranked by their PPR mass.
//!
//! `hipporag` ([`GraphMethod::HippoRag`]) is steps 1 and 6 with no overlay: HippoRAG 2's static
//! PPR, the baseline CatRAG modifies. `catrag` ([`GraphMethod::CatRag`]) is all six; the
//! ablation flags [`CatragConfig::no_anchor`], [`no_boost`](CatragConfig::no_boost),
//! [`no_prune`](CatragConfig::no_prune) and [`no_tier`](CatragConfig::no_tier) turn steps 2–5 off
//! one by one.
//!
//! **Failure handling** (docs/method/spec.md §3): no entity seed (no facts, no anchors) ⇒ dense passage
//! ranking, as HippoRAG 2 does when no fact survives ([`Fallback::NoSeeds`]); an all-zero teleport
//! ⇒ dense ranking ([`Fallback::ZeroTeleport`]); never an assertion or a panic. PPR not converged
//! ⇒ the overlay's multipliers are floored at 1e-6 (no arc fully removed) and PPR runs once more;
//! both facts are reported ([`Retrieval::floored`], [`Retrieval::ppr`]).
//!
//! Every step's output is kept in the [`Retrieval`] so that [`explain()`] can say why a passage
//! ranked where it did (seeds, top entities, paths with their multipliers).

pub mod anchor;
pub mod boost;
pub mod bridge;
pub mod explain;
pub mod prune;
pub mod seeds;
#[cfg(test)]
mod tests;
pub mod tier;
pub mod tiering;
pub mod endpoint;

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::graph::{EdgeType, Graph, NodeRef};
use crate::ppr::{ArcOverlay, PprConfig, PprReport, PprSolver};
use crate::text::Mention;

pub use anchor::{Anchor, MatchKind};
pub use explain::{
    explain, fact_cosine_quantiles, hub_nodes, mass_shares, overlay_summary, top_entities, CosineQuantiles,
    ExplainConfig, MassShares, OverlaySummary, PassageExplanation, PathEdge, PathNode, SeedPath,
};
pub use seeds::ScoredFact;
pub use endpoint::LlmTierer;
pub use tiering::{TierMemo, TierOutcome, TierPlan, TierSession, TierStats};
pub use tier::{
    EdgeTierer, EmbeddingSimilarityTierer, SimilarityTierThresholds, Tier, TierCandidate, TierMultipliers,
    TierRequest,
};

/// Which graph retrieval method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphMethod {
    /// HippoRAG 2's static PPR: channel A seeds, no overlay (HippoRAG 2 §3).
    HippoRag,
    /// CatRAG: channel A + symbolic anchoring, key-fact boost, pruning and tiering (CatRAG §3),
    /// each subject to its ablation flag.
    CatRag,
}

impl GraphMethod {
    /// `hipporag` or `catrag`.
    pub fn name(self) -> &'static str {
        match self {
            GraphMethod::HippoRag => "hipporag",
            GraphMethod::CatRag => "catrag",
        }
    }
}

/// Every parameter of the query-time steps, with the papers' defaults (docs/method/spec.md §3). Serde
/// names are the field names; `{}` is the default configuration; unknown keys are an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatragConfig {
    /// Seed facts kept by cosine with the query (HippoRAG 2 `linking_top_k`). Default 5.
    pub linking_top_k: usize,
    /// Entities kept as channel A seeds, by weight. Default 5.
    pub seed_top_k: usize,
    /// Passage node teleport weight × min–max normalised dense score (HippoRAG 2
    /// `passage_node_weight`). Default 0.05. Finite, ≥ 0.
    pub passage_node_weight: f64,
    /// Only the top this many passage nodes by dense score get the dense passage weight (0: every
    /// passage node, as HippoRAG 2). Default 0.
    pub dense_top_n: usize,
    /// Lexical passage prior: the top [`CatragConfig::lexical_top_n`] passage nodes by BM25 get
    /// this weight × score ÷ best score as teleport mass ([`seeds::lexical_passage_weights`]).
    /// Default 2.0 (tuned on hotpotqa and 2wikimultihopqa, docs/method/graph.md). Finite, ≥ 0.
    pub lexical_passage_weight: f64,
    /// Passage nodes that get the lexical prior, by BM25 score (0: every passage with a query
    /// term). Default 20.
    pub lexical_top_n: usize,
    /// Title bridges ([`bridge`]): a passage titled by an entity of one of the top
    /// [`CatragConfig::bridge_sources`] passages by BM25 gets up to this teleport weight.
    /// Default 3.0 (tuned on hotpotqa and 2wikimultihopqa, docs/method/graph.md). Finite, ≥ 0.
    pub bridge_weight: f64,
    /// Passages, by BM25 score, whose entities bridge to the passages they title. Default 4.
    pub bridge_sources: usize,
    /// Share of the bridge weight a bridged passage keeps with no query term of its own (the rest
    /// scales with its BM25 score ÷ the best). Default 0.8. In [0, 1].
    pub bridge_floor: f64,
    /// Exponent γ of a bridge's specificity factor (2 ÷ |passages containing the bridging
    /// entity|)^γ ([`bridge::bridge_weights`]). Default 0.5 (0 turns it off). Finite, ≥ 0.
    pub bridge_specificity: f64,
    /// A title shared by several passages splits its bridge weight among them (each gets
    /// 1/|passages with that title|; [`bridge::bridge_weights`]), so the paragraphs of one
    /// article do not all take a full bridge. Default true; corpora with one passage per title
    /// (HotpotQA, 2Wiki) are unaffected.
    pub bridge_split_title: bool,
    /// Symbolic anchoring weight ε: an anchored entity gets ε ÷ |its passages| (CatRAG §3
    /// "Symbolic Anchoring"). Default 0.2. Finite, ≥ 0; above 0.5 it outweighs the fact seeds and
    /// anchoring degenerates into exact-match retrieval ([`CatragConfig::warnings`]).
    pub epsilon: f64,
    /// Lowest cosine between a mention's vector and an entity name's vector for an embedding
    /// match (after no exact match). Default 0.9, set from the precision of the matches (see
    /// [`anchor`]). In [-1, 1]; 1 keeps exact matches only.
    pub anchor_threshold: f32,
    /// Key-fact boost β: context arcs to passages holding a seed fact × (1 + β), capped at
    /// 2·(1 + β) (CatRAG §3 "Key-Fact Passage Weight Enhancement"). Default 2.5. Finite, ≥ 0.
    pub key_fact_boost: f64,
    /// Rescale a boosted entity's context arcs to keep their total weight (what CatRAG's released
    /// code does) instead of plain multiplication (docs/method/spec.md). Default false.
    pub boost_preserve_mass: bool,
    /// Seeds whose edges are pruned and tiered, the top by teleport weight (N_seed). Default 5.
    pub tier_seeds: usize,
    /// Coarse pruning: a seed keeps at most this many relation edges for tiering (K_edge); the
    /// rest get the Weak multiplier. Default 15.
    pub k_edge: usize,
    /// Multipliers of the four tiers. Default {0, 0.25, 2.5, 5.0}.
    pub tiers: TierMultipliers,
    /// Thresholds of the offline [`EmbeddingSimilarityTierer`].
    pub similarity_tiers: SimilarityTierThresholds,
    /// LLM tiering: calls allowed per query, summaries and tier prompts together
    /// ([`tiering`]). Default 75: CatRAG's bound on LLM calls per query (five tiered seeds,
    /// each with up to K_edge = 15 targets to summarise). At least 1.
    pub llm_call_budget: usize,
    /// LLM tiering: calls of the budget kept back from summaries for the tier prompts.
    /// Default 5 (= `tier_seeds`: one tier prompt per tiered seed).
    pub llm_call_reserve: usize,
    /// LLM tiering τ: a target with more than this many facts is shown by a one-sentence summary
    /// the endpoint writes first (CatRAG §3; docs/method/spec.md §3). Default 3.
    pub tau: usize,
    /// Personalized PageRank (damping 0.5, tolerance 1e-8, 50 iterations, power iteration).
    pub ppr: PprConfig,
    /// Ablation: no symbolic anchoring (channel B off).
    pub no_anchor: bool,
    /// Ablation: no key-fact passage weight enhancement.
    pub no_boost: bool,
    /// Ablation: no coarse pruning (every relation edge of a tiered seed is tiered).
    pub no_prune: bool,
    /// Ablation: no dynamic edge weighting (pruned edges are still demoted to Weak).
    pub no_tier: bool,
    /// Ablation: no lexical passage prior (as `lexical_passage_weight` = 0).
    pub no_lexical: bool,
    /// Ablation: no title bridges (as `bridge_weight` = 0).
    pub no_bridge: bool,
    /// Passage prior weight when the index holds transformer (MiniLM) passage vectors: the dense
    /// prior then comes from them and this replaces [`CatragConfig::passage_node_weight`]
    /// ([`CatragConfig::with_transformer_prior`]). Default 1.0 (tuned on hotpotqa and
    /// 2wikimultihopqa, docs/method/graph.md). Finite, ≥ 0.
    pub transformer_passage_weight: f64,
    /// [`CatragConfig::dense_top_n`] for the transformer prior. Default 0 (every passage).
    pub transformer_top_n: usize,
    /// Bridges of bridges: the top [`CatragConfig::bridge_sources`] bridged passages bridge in
    /// turn to the passages their entities title, with up to this weight (a three-hop chain;
    /// a passage keeps the larger of its two bridge weights). Default 1.0 (tuned on hotpotqa and
    /// 2wikimultihopqa with query titles, docs/method/graph.md; 0 turns it off). Finite, ≥ 0.
    pub bridge_hop2_weight: f64,
    /// Share of the dense passage score (min–max over passages) in the evidence that picks title
    /// bridge sources and scales bridged passages: `(1 − share) × BM25 ÷ best + share × dense`,
    /// renormalised to a best of 1 ([`bridge::bridge_weights`]). Default 0 (BM25 alone). In [0, 1].
    pub bridge_dense_share: f64,
    /// [`CatragConfig::bridge_dense_share`] when the passage prior comes from transformer
    /// vectors ([`CatragConfig::with_transformer_prior`]). Default 0.5 (tuned with
    /// `transformer_passage_weight`). In [0, 1].
    pub transformer_bridge_dense_share: f64,
    /// Ablation: keep the static table's passage prior even when transformer passage vectors are
    /// attached.
    pub no_transformer_prior: bool,
    /// Query titles: a passage titled by a name in the query ([`bridge::query_title_weights`];
    /// a capitalised run of the query's words that normalises to a passage title) gets up to
    /// this teleport weight, scaled like a title bridge. Default 3.0 (tuned on hotpotqa and
    /// 2wikimultihopqa, docs/method/graph.md). Finite, ≥ 0.
    pub query_title_weight: f64,
    /// Ablation: no query titles (as `query_title_weight` = 0).
    pub no_query_title: bool,
    /// Query-residual prior ([`seeds::residual_passage_weights`]): the top
    /// [`CatragConfig::residual_top_n`] passages by cosine with the query vector minus its
    /// component along the best passage get up to this teleport weight. Default 0 (off;
    /// docs/method/graph.md). Finite, ≥ 0.
    pub residual_weight: f64,
    /// Passages that get the query-residual prior. Default 10 (0: all).
    pub residual_top_n: usize,
    /// Ablation: no query-residual prior (as `residual_weight` = 0).
    pub no_residual: bool,
}

impl Default for CatragConfig {
    fn default() -> Self {
        CatragConfig {
            linking_top_k: 5,
            seed_top_k: 5,
            passage_node_weight: 0.05,
            dense_top_n: 0,
            lexical_passage_weight: 2.0,
            lexical_top_n: 20,
            bridge_weight: 3.0,
            bridge_sources: 4,
            bridge_floor: 0.8,
            bridge_specificity: 0.5,
            bridge_split_title: true,
            epsilon: 0.2,
            anchor_threshold: 0.9,
            key_fact_boost: 2.5,
            boost_preserve_mass: false,
            tier_seeds: 5,
            k_edge: 15,
            tiers: TierMultipliers::default(),
            similarity_tiers: SimilarityTierThresholds::default(),
            llm_call_budget: 75,
            llm_call_reserve: 5,
            tau: 3,
            ppr: PprConfig::default(),
            no_anchor: false,
            no_boost: false,
            no_prune: false,
            no_tier: false,
            no_lexical: false,
            no_bridge: false,
            transformer_passage_weight: 1.0,
            transformer_top_n: 0,
            bridge_hop2_weight: 1.0,
            bridge_dense_share: 0.0,
            transformer_bridge_dense_share: 0.5,
            no_transformer_prior: false,
            query_title_weight: 3.0,
            no_query_title: false,
            residual_weight: 0.0,
            residual_top_n: 10,
            no_residual: false,
        }
    }
}

impl CatragConfig {
    /// Check every range stated on the fields.
    ///
    /// # Errors
    /// [`Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("passage_node_weight", self.passage_node_weight),
            ("lexical_passage_weight", self.lexical_passage_weight),
            ("bridge_weight", self.bridge_weight),
            ("bridge_specificity", self.bridge_specificity),
            ("epsilon", self.epsilon),
            ("key_fact_boost", self.key_fact_boost),
            ("transformer_passage_weight", self.transformer_passage_weight),
            ("bridge_hop2_weight", self.bridge_hop2_weight),
            ("query_title_weight", self.query_title_weight),
            ("residual_weight", self.residual_weight),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::Config(format!("catrag.{name} must be a finite number ≥ 0, got {v}")));
            }
        }
        for (name, v) in [
            ("bridge_floor", self.bridge_floor),
            ("bridge_dense_share", self.bridge_dense_share),
            ("transformer_bridge_dense_share", self.transformer_bridge_dense_share),
        ] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(Error::Config(format!("catrag.{name} must be in [0, 1], got {v}")));
            }
        }
        let t = self.anchor_threshold;
        if !(t.is_finite() && (-1.0..=1.0).contains(&t)) {
            return Err(Error::Config(format!("catrag.anchor_threshold must be in [-1, 1], got {t}")));
        }
        if self.llm_call_budget == 0 {
            return Err(Error::Config("catrag.llm_call_budget must be at least 1".into()));
        }
        self.tiers.validate()?;
        self.similarity_tiers.validate()?;
        self.ppr.validate()
    }

    /// Settings that are valid but probably not meant (docs/method/spec.md §3: ε above 0.5 collapses
    /// anchoring to exact match). Empty when there is nothing to say.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.epsilon > 0.5 {
            out.push(format!(
                "catrag.epsilon = {} is above 0.5: anchored entities then outweigh the fact seeds and retrieval collapses to exact entity match",
                self.epsilon
            ));
        }
        out
    }

    /// The configuration of a query whose passage prior comes from transformer passage vectors
    /// (an index that carries MiniLM's): [`CatragConfig::passage_node_weight`] and
    /// [`CatragConfig::dense_top_n`] and [`CatragConfig::bridge_dense_share`] take the values of
    /// [`CatragConfig::transformer_passage_weight`], [`CatragConfig::transformer_top_n`] and
    /// [`CatragConfig::transformer_bridge_dense_share`].
    pub fn with_transformer_prior(&self) -> CatragConfig {
        CatragConfig {
            passage_node_weight: self.transformer_passage_weight,
            dense_top_n: self.transformer_top_n,
            bridge_dense_share: self.transformer_bridge_dense_share,
            ..self.clone()
        }
    }

    /// The ablation flags that are on, as CLI flags (`--no-anchor`, …), for labels.
    pub fn ablations(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (on, flag) in [
            (self.no_anchor, "--no-anchor"),
            (self.no_boost, "--no-boost"),
            (self.no_prune, "--no-prune"),
            (self.no_tier, "--no-tier"),
            (self.no_lexical, "--no-lexical"),
            (self.no_bridge, "--no-bridge"),
            (self.no_transformer_prior, "--no-transformer-prior"),
            (self.no_query_title, "--no-query-title"),
            (self.no_residual, "--no-residual"),
        ] {
            if on {
                out.push(flag);
            }
        }
        out
    }
}

/// Finds the entity mentions of a query for CatRAG's symbolic anchoring (docs/method/spec.md §3 channel B,
/// "optional LLM NER"), instead of the text pipeline's rule-based query NER
/// ([`crate::text::Pipeline::query_entities`]). Set on an index with
/// [`crate::search::Searcher::set_entity_recognizer`]. An error or an empty list makes the searcher fall back
/// to the rule-based mentions for that query (the recognizer counts its own failures).
pub trait EntityRecognizer {
    /// Named in reports (for example `llm-ner:smollm2`).
    fn name(&self) -> &str;
    /// The entity names of `query` (surface strings; need not occur verbatim in the query).
    ///
    /// # Errors
    /// Whatever stopped it (endpoint down, an answer with no entity): the caller falls back.
    fn entities(&self, query: &str) -> Result<Vec<String>>;
}

impl<T: EntityRecognizer + ?Sized> EntityRecognizer for std::sync::Arc<T> {
    fn name(&self) -> &str {
        self.as_ref().name()
    }
    fn entities(&self, query: &str) -> Result<Vec<String>> {
        self.as_ref().entities(query)
    }
}

/// What one query gives the graph retriever.
#[derive(Clone, Copy)]
pub struct QueryInput<'a> {
    /// The query text (for the tierer).
    pub query: &'a str,
    /// The query's vector from the graph's embedder (the one that embedded its facts and
    /// entities), unit length, `[dim]`.
    pub query_vector: &'a [f32],
    /// Dense cosine of the query with every corpus passage, `[corpus passages]` (corpus order):
    /// the passage nodes' teleport weights and the fallback ranking.
    pub passage_scores: &'a [f32],
    /// BM25 score of the query with every corpus passage, `[corpus passages]` (corpus order; 0
    /// where no query term occurs): the lexical passage prior. Empty: no lexical evidence.
    pub lexical_scores: &'a [f32],
    /// Entity → passages titled by it, for title bridges ([`bridge`]); `None`: no bridges.
    pub titles: Option<&'a bridge::TitleIndex>,
    /// The query's entity mentions ([`crate::text::Pipeline::query_entities`]), for anchoring.
    pub mentions: &'a [Mention],
    /// The vectors behind `passage_scores` and the query's vector under their embedder, for the
    /// query-residual prior ([`seeds::residual_passage_weights`]); `None`: no residual prior.
    pub prior_vectors: Option<seeds::PriorVectors<'a>>,
}

/// Where a seed's teleport weight came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedChannel {
    /// Channel A only (an entity of a top fact).
    Facts,
    /// Channel B only (a query mention anchored to it).
    Anchor,
    /// Both.
    Both,
}

/// An entity seed of the teleport vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Seed {
    /// Entity node id.
    pub node: u32,
    /// Its display name.
    pub name: String,
    /// Channel A weight (0 when not a fact seed).
    pub facts_weight: f64,
    /// Channel B weight (0 when not anchored).
    pub anchor_weight: f64,
    /// `facts_weight + anchor_weight`: its teleport entry before normalisation.
    pub weight: f64,
    /// Its share of the whole teleport vector (passage weights included), in [0, 1].
    pub share: f64,
    /// Which channels seeded it.
    pub channel: SeedChannel,
}

/// Why an overlay entry exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OverlayCause {
    /// Key-fact passage weight enhancement (`key_facts` seed facts of the entity in the passage;
    /// 0 for arcs only rescaled under `boost_preserve_mass`).
    KeyFactBoost {
        /// Seed facts of the entity stated by the passage.
        key_facts: u32,
    },
    /// Demoted to Weak by coarse pruning.
    Pruned,
    /// Tiered by the edge tierer.
    Tiered {
        /// The tier.
        tier: Tier,
    },
}

/// One arc whose weight this query changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverlayArc {
    /// Arc index in the CSR.
    pub arc: u32,
    /// Source node.
    pub from: u32,
    /// Target node.
    pub to: u32,
    /// The arc's type.
    pub edge_type: EdgeType,
    /// Its stored (static) weight.
    pub static_weight: f32,
    /// The multiplier applied for this query.
    pub multiplier: f32,
    /// Why.
    pub cause: OverlayCause,
}

/// Why the result is the dense ranking instead of PPR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// No entity seed: no fact in the graph (or none scored) and no anchored mention. HippoRAG 2
    /// returns the dense ranking in this case.
    NoSeeds,
    /// The teleport vector summed to zero.
    ZeroTeleport,
}

/// Everything one graph query computed (serialisable for the page and the CLI; the per-node
/// arrays are skipped). Its passage scores rank the passages; [`explain()`] reads the rest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retrieval {
    /// The method that ran.
    pub method: GraphMethod,
    /// The ablation flags that were on (CatRAG only).
    pub ablations: Vec<&'static str>,
    /// The seed facts, best first.
    pub facts: Vec<ScoredFact>,
    /// Entity seeds, by weight descending (ties: node id).
    pub seeds: Vec<Seed>,
    /// Every query mention and its anchoring (CatRAG with anchoring on; else empty).
    pub anchors: Vec<Anchor>,
    /// Arcs reweighted for this query, in the order the steps produced them (boost, then per
    /// tiered seed: pruned, tiered).
    pub overlay: Vec<OverlayArc>,
    /// The tierer that ran (its [`EdgeTierer::name`]), `None` when no edge was tiered.
    pub tierer: Option<String>,
    /// Seed batches whose tiering failed (treated as Weak).
    pub tier_failures: usize,
    /// The PPR run's report (`None` on fallback).
    pub ppr: Option<PprReport>,
    /// PPR did not converge and was rerun with multipliers floored at 1e-6.
    pub floored: bool,
    /// Set when the ranking is the dense one.
    pub fallback: Option<Fallback>,
    /// Things worth telling the user (ε above 0.5, PPR not converged after the retry).
    pub warnings: Vec<String>,
    /// Where the teleport vector's mass came from, by source (shares of its total; all 0 on a
    /// fallback).
    pub sources: TeleportSources,
    /// The passage nodes that got teleport mass from a source other than the dense prior, with
    /// their mass by source (shares of the teleport total), by passage node id.
    pub passage_sources: Vec<PassageTeleport>,
    /// The score of every passage node, `[passage nodes]` in [`Graph::passage_nodes`] order:
    /// PPR mass, or the dense cosine on fallback.
    #[serde(skip)]
    pub passage_scores: Vec<f64>,
    /// PPR mass of every node, `[nodes]`, summing to 1 (empty on fallback).
    #[serde(skip)]
    pub node_scores: Vec<f64>,
    /// The normalised teleport vector, `[nodes]` (empty on fallback).
    #[serde(skip)]
    pub teleport: Vec<f64>,
}

impl Retrieval {
    /// A retrieval of `method` that has walked nothing yet: no seed, no overlay, no tiering
    /// call, no PPR, no scores. Its steps fill it in ([`Retriever::prepare`]), or a search that
    /// does not walk sets its fallback, warning and passage scores.
    pub fn unwalked(method: GraphMethod) -> Retrieval {
        Retrieval {
            method,
            ablations: Vec::new(),
            facts: Vec::new(),
            seeds: Vec::new(),
            anchors: Vec::new(),
            overlay: Vec::new(),
            tierer: None,
            tier_failures: 0,
            ppr: None,
            floored: false,
            fallback: None,
            warnings: Vec::new(),
            sources: TeleportSources::default(),
            passage_sources: Vec::new(),
            passage_scores: Vec::new(),
            node_scores: Vec::new(),
            teleport: Vec::new(),
        }
    }

    /// The top `k` passage nodes by score: `(passage node, score)`, score descending, ties by
    /// passage ordinal (creation order). Callers that need ties by passage id re-sort.
    pub fn top_passages(&self, graph: &Graph, k: usize) -> Vec<(u32, f64)> {
        let mut order: Vec<(u32, f64)> = graph
            .passage_nodes()
            .iter()
            .zip(&self.passage_scores)
            .map(|(&n, &s)| (n, if s.is_finite() { s } else { f64::NEG_INFINITY }))
            .collect();
        order.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then(a.0.cmp(&b.0)));
        order.truncate(k);
        order
    }
}

/// The teleport vector's mass by source, each a share of its total (they sum to 1 when the walk
/// ran; all 0 on a fallback): what put mass where the walk starts (module docs, steps 1–2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TeleportSources {
    /// Channel A: entities of the top facts.
    pub fact_seeds: f64,
    /// Channel B: anchored query mentions (symbolic anchoring, ε).
    pub anchors: f64,
    /// The dense passage prior (HippoRAG 2's `passage_node_weight` × min–max dense score).
    pub dense_prior: f64,
    /// The lexical (BM25) passage prior.
    pub lexical_prior: f64,
    /// Title bridges, bridges of bridges included.
    pub title_bridges: f64,
    /// Passages titled by a name in the query.
    pub query_titles: f64,
    /// The query-residual prior.
    pub residual: f64,
}

/// One passage node's own teleport mass by source, each a share of the teleport total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PassageTeleport {
    /// The passage node.
    pub node: u32,
    /// From the dense prior.
    pub dense_prior: f64,
    /// From the lexical prior.
    pub lexical_prior: f64,
    /// From a title bridge (or a bridge of a bridge).
    pub title_bridges: f64,
    /// From a name in the query titling it.
    pub query_titles: f64,
    /// From the query-residual prior.
    pub residual: f64,
}

/// The passage weights of each teleport source, `[passage nodes]` each (empty: the source was off).
#[derive(Debug, Default)]
struct SourceWeights {
    lexical: Vec<f64>,
    bridges: Vec<f64>,
    query_titles: Vec<f64>,
    residual: Vec<f64>,
}

impl SourceWeights {
    /// The shares of the teleport total (`total`) by source, and per passage node with a source
    /// other than the dense prior.
    fn shares(&self, graph: &Graph, dense: &[f64], seeds: &[Seed], total: f64) -> (TeleportSources, Vec<PassageTeleport>) {
        let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0) / total;
        let sum = |v: &[f64]| v.iter().sum::<f64>() / total;
        let sources = TeleportSources {
            fact_seeds: seeds.iter().map(|s| s.facts_weight).sum::<f64>() / total,
            anchors: seeds.iter().map(|s| s.anchor_weight).sum::<f64>() / total,
            dense_prior: sum(dense),
            lexical_prior: sum(&self.lexical),
            title_bridges: sum(&self.bridges),
            query_titles: sum(&self.query_titles),
            residual: sum(&self.residual),
        };
        let mut per = Vec::new();
        for (i, &node) in graph.passage_nodes().iter().enumerate() {
            let p = PassageTeleport {
                node,
                dense_prior: at(dense, i),
                lexical_prior: at(&self.lexical, i),
                title_bridges: at(&self.bridges, i),
                query_titles: at(&self.query_titles, i),
                residual: at(&self.residual, i),
            };
            if p.lexical_prior + p.title_bridges + p.query_titles + p.residual > 0.0 {
                per.push(p);
            }
        }
        per.sort_by_key(|p| p.node);
        (sources, per)
    }
}

/// The display name of a node: an entity's name, or `passage #i` with its first corpus index.
pub fn node_name(graph: &Graph, node: u32) -> String {
    match graph.node(node) {
        Some(NodeRef::Entity { name, .. }) => name.to_string(),
        Some(NodeRef::Passage { passages }) => {
            passages.first().map_or_else(|| "passage".to_string(), |i| format!("passage #{i}"))
        }
        None => format!("node {node}"),
    }
}

/// One tiered seed's neighbourhood after coarse pruning (CatRAG §3, stage I): the arcs demoted
/// to Weak and the candidates left for tiering (empty under `no_tier`).
#[derive(Debug, Clone)]
struct SeedHood {
    seed: u32,
    pruned: Vec<OverlayArc>,
    kept: Vec<TierCandidate>,
}

/// Steps 1–4 of one graph query ([`Retriever::prepare`]): seeds, teleport vector, key-fact
/// boost and coarse pruning, waiting for the tiers of its batches and for PPR
/// ([`Retriever::finish`]). Owns everything it needs (query, vectors, scores, configuration).
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    query: String,
    query_vector: Vec<f32>,
    passage_scores: Vec<f32>,
    fact_cosines: Vec<f32>,
    config: CatragConfig,
    retrieval: Retrieval,
    teleport: Vec<f64>,
    total: f64,
    hoods: Vec<SeedHood>,
    fallback: Option<Fallback>,
    /// Nodes and arcs of the graph it was prepared on (a changed graph is refused).
    shape: (usize, usize),
}

impl PreparedQuery {
    /// The query text.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The configuration it was prepared with (its tiering budget, reserve and τ drive the
    /// tiering of its batches; [`Retriever::finish`] uses its multipliers and PPR settings).
    pub fn config(&self) -> &CatragConfig {
        &self.config
    }

    /// The seeds, facts and anchors found so far (no PPR scores yet).
    pub fn retrieval(&self) -> &Retrieval {
        &self.retrieval
    }

    /// The batches to tier, one per tiered seed with candidates left after pruning, in seed
    /// order: `(seed entity node, candidates)`. Empty for HippoRAG, under `no_tier`, and on a
    /// fallback.
    pub fn batches(&self) -> Vec<(u32, &[TierCandidate])> {
        if self.fallback.is_some() {
            return Vec::new();
        }
        self.hoods.iter().filter(|h| !h.kept.is_empty()).map(|h| (h.seed, h.kept.as_slice())).collect()
    }

    /// The tiered seeds (the top [`CatragConfig::tier_seeds`] by teleport weight, whose edges
    /// are pruned and tiered), in seed order; empty for HippoRAG and on a fallback.
    pub fn tiered_seeds(&self) -> Vec<u32> {
        if self.fallback.is_some() {
            return Vec::new();
        }
        self.hoods.iter().map(|h| h.seed).collect()
    }

    /// The arcs reweighted so far (the key-fact boost), for the evaluation's ceilings only
    /// (`crate::eval::Oracle`): they replace a mechanism's arcs with the gold chain's. No
    /// product path calls it.
    pub(crate) fn overlay_mut(&mut self) -> &mut Vec<OverlayArc> {
        &mut self.retrieval.overlay
    }

    /// The batches as [`TierRequest`]s over `graph` (the graph it was prepared on).
    pub fn tier_requests<'a>(&'a self, graph: &'a Graph) -> Vec<TierRequest<'a>> {
        self.batches()
            .into_iter()
            .map(|(seed, candidates)| TierRequest {
                graph,
                query: &self.query,
                query_vector: &self.query_vector,
                fact_cosines: &self.fact_cosines,
                seed,
                candidates,
                config: &self.config,
            })
            .collect()
    }
}

/// The passage nodes' teleport weights before the seeds' (step 1's passage side), by source: the
/// dense prior, and Cairn's lexical prior, query-residual prior, title bridges and query titles
/// (docs/method/graph.md), each `[passage nodes]` (empty: the source is off).
#[derive(Debug)]
struct PassagePrior {
    /// Every source summed: the passage nodes' teleport entries.
    weights: Vec<f64>,
    /// The dense prior alone (HippoRAG 2's passage node weights).
    dense: Vec<f64>,
    /// The other sources one by one, for the teleport's shares by source.
    by_source: SourceWeights,
}

impl PassagePrior {
    /// The passage prior of one query: [`CatragConfig::passage_node_weight`] × min–max dense
    /// score ([`seeds::dense_passage_weights`]), plus (unless ablated) the lexical prior
    /// ([`seeds::lexical_passage_weights`]), the query-residual prior from the best passage by
    /// fused evidence ([`seeds::residual_passage_weights`]) and the title bridges and query
    /// titles ([`bridge`]).
    ///
    /// # Errors
    /// [`Error::Config`] when the dense or lexical scores do not cover the graph's passages.
    fn of(graph: &Graph, input: &QueryInput<'_>, config: &CatragConfig) -> Result<PassagePrior> {
        let mut weights =
            seeds::dense_passage_weights(graph, input.passage_scores, config.dense_top_n, config.passage_node_weight)?;
        let dense = weights.clone();
        let mut by_source = SourceWeights::default();
        if !config.no_lexical {
            let lexical = seeds::lexical_passage_weights(
                graph,
                input.lexical_scores,
                config.lexical_top_n,
                config.lexical_passage_weight,
            )?;
            for (w, &l) in weights.iter_mut().zip(&lexical) {
                *w += l;
            }
            by_source.lexical = lexical;
        }
        let bridges_on = !(config.no_bridge || config.bridge_weight == 0.0);
        let query_titles_on = !(config.no_query_title || config.query_title_weight == 0.0);
        let titles_on = (bridges_on || query_titles_on) && input.titles.is_some();
        let residual_on = !(config.no_residual || config.residual_weight == 0.0) && input.prior_vectors.is_some();
        let mut relevance = Vec::new();
        if titles_on || residual_on {
            relevance = seeds::lexical_passage_weights(graph, input.lexical_scores, 0, 1.0)?;
            let share = config.bridge_dense_share;
            if share > 0.0 {
                // Bridge sources and targets by fused evidence: BM25 ÷ best and min–max dense.
                let dense = seeds::dense_passage_weights(graph, input.passage_scores, 0, 1.0)?;
                for (r, d) in relevance.iter_mut().zip(dense) {
                    *r = (1.0 - share) * *r + share * d;
                }
                let max = relevance.iter().copied().fold(0.0f64, f64::max);
                if max > 0.0 {
                    relevance.iter_mut().for_each(|r| *r /= max);
                }
            }
        }
        if let (true, Some(vectors)) = (residual_on, input.prior_vectors.as_ref()) {
            // The first hop: the best passage node by the fused evidence (ties: lower position).
            let top = (0..relevance.len())
                .filter(|&i| relevance[i] > 0.0)
                .max_by(|&a, &b| relevance[a].total_cmp(&relevance[b]).then(b.cmp(&a)));
            if let Some(top) = top {
                let residual =
                    seeds::residual_passage_weights(graph, vectors, top, config.residual_top_n, config.residual_weight)?;
                for (w, &x) in weights.iter_mut().zip(&residual) {
                    *w += x;
                }
                by_source.residual = residual;
            }
        }
        if let (true, Some(titles)) = (titles_on, input.titles) {
            let (bridged, titled) =
                Self::bridges(graph, titles, input.query, &relevance, config, bridges_on, query_titles_on);
            for ((w, &b), &t) in weights.iter_mut().zip(&bridged).zip(titled.iter().chain(std::iter::repeat(&0.0))) {
                *w += b + t;
            }
            by_source.query_titles = titled;
            by_source.bridges = bridged;
        }
        Ok(PassagePrior { weights, dense, by_source })
    }

    /// Title bridges (two hops: from the passages best by `relevance`, then from the bridged
    /// ones) and query titles ([`bridge::bridge_weights`], [`bridge::query_title_weights`]):
    /// `(bridged, titled)`, `[passage nodes]` each (`titled` empty without query titles). A
    /// passage keeps the larger of its bridge and query-title weights, under that source.
    fn bridges(
        graph: &Graph,
        titles: &bridge::TitleIndex,
        query: &str,
        relevance: &[f64],
        config: &CatragConfig,
        bridges_on: bool,
        query_titles_on: bool,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut bridged = bridge::bridge_weights(
            graph,
            titles,
            relevance,
            relevance,
            config.bridge_sources,
            if bridges_on { config.bridge_weight } else { 0.0 },
            config.bridge_floor,
            config.bridge_specificity,
            config.bridge_split_title,
        );
        if config.bridge_hop2_weight > 0.0 {
            // Bridges of bridges (a third hop): the bridged passages are the sources.
            let second = bridge::bridge_weights(
                graph,
                titles,
                &bridged,
                relevance,
                config.bridge_sources,
                config.bridge_hop2_weight,
                config.bridge_floor,
                config.bridge_specificity,
                config.bridge_split_title,
            );
            for (b, x) in bridged.iter_mut().zip(second) {
                *b = b.max(x);
            }
        }
        let mut titled = Vec::new();
        if query_titles_on {
            // Passages titled by a name in the query: the first hop the question names.
            let named = bridge::query_title_weights(
                graph,
                titles,
                query,
                relevance,
                config.query_title_weight,
                config.bridge_floor,
                config.bridge_specificity,
                config.bridge_split_title,
            );
            titled = vec![0.0; bridged.len()];
            for ((b, t), x) in bridged.iter_mut().zip(titled.iter_mut()).zip(named) {
                if x > *b {
                    *t = x;
                    *b = 0.0;
                }
            }
        }
        (bridged, titled)
    }
}

/// The steps of [`Retriever::prepare`], in order, each filling its part of the query.
impl PreparedQuery {
    /// The query before any step: its inputs copied, every fact's cosine with the query
    /// ([`seeds::fact_cosines`]) and an empty [`Retrieval`] with the method's ablations and
    /// warnings.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid `config` or a query vector of the wrong dimension.
    fn start(graph: &Graph, method: GraphMethod, input: &QueryInput<'_>, config: &CatragConfig) -> Result<Self> {
        config.validate()?;
        let catrag = method == GraphMethod::CatRag;
        let dim = graph.fact_dim().max(graph.entity_dim());
        if dim != 0 && input.query_vector.len() != dim {
            return Err(Error::Config(format!(
                "the query vector has {} dimensions and the graph's vectors {dim}: query with the embedder the graph was built with",
                input.query_vector.len()
            )));
        }
        let fact_cosines = seeds::fact_cosines(graph, input.query_vector)?;
        let retrieval = Retrieval {
            ablations: if catrag { config.ablations() } else { Vec::new() },
            warnings: if catrag { config.warnings() } else { Vec::new() },
            ..Retrieval::unwalked(method)
        };
        Ok(PreparedQuery {
            query: input.query.to_string(),
            query_vector: input.query_vector.to_vec(),
            passage_scores: input.passage_scores.to_vec(),
            fact_cosines,
            config: config.clone(),
            retrieval,
            teleport: Vec::new(),
            total: 0.0,
            hoods: Vec::new(),
            fallback: None,
            shape: (graph.node_count(), graph.csr().weights.len()),
        })
    }

    fn catrag(&self) -> bool {
        self.retrieval.method == GraphMethod::CatRag
    }

    /// Step 1, channel A ([`seeds`]): the top [`CatragConfig::linking_top_k`] facts by cosine
    /// (none for a zero query vector: nothing the embedder knows ranks every fact equally) and
    /// their entities' weights, the top [`CatragConfig::seed_top_k`] as fact seeds.
    fn seed_facts(&mut self, graph: &Graph) {
        let facts = if crate::embed::is_zero(&self.query_vector) {
            Vec::new()
        } else {
            seeds::top_facts(&self.fact_cosines, self.config.linking_top_k)
        };
        self.retrieval.seeds = seeds::entity_weights(graph, &facts, self.config.seed_top_k)
            .into_iter()
            .map(|(node, w)| Seed {
                node,
                name: node_name(graph, node),
                facts_weight: w,
                anchor_weight: 0.0,
                weight: w,
                share: 0.0,
                channel: SeedChannel::Facts,
            })
            .collect();
        self.retrieval.facts = facts;
    }

    /// Step 2, channel B ([`anchor`], CatRAG unless ablated): each of `mentions` anchored to an
    /// entity adds [`CatragConfig::epsilon`] ÷ |its passages| to that entity's seed weight (once
    /// per entity). Then the seeds are final: those of positive finite weight, heaviest first,
    /// ties by node.
    ///
    /// # Errors
    /// The embedder's (a mention with no exact match is embedded).
    fn anchor(&mut self, graph: &Graph, mentions: &[Mention], embedder: &dyn Embedder) -> Result<()> {
        let config = &self.config;
        let anchors = if self.catrag() && !config.no_anchor {
            anchor::anchor_mentions(graph, mentions, embedder, config.anchor_threshold)?
        } else {
            Vec::new()
        };
        let seed_list = &mut self.retrieval.seeds;
        let mut anchored: Vec<u32> = Vec::new();
        for a in &anchors {
            let Some(node) = a.node else { continue };
            if anchored.contains(&node) {
                continue; // two mentions of one entity anchor it once
            }
            anchored.push(node);
            let w = config.epsilon / graph.passages_of(node).len().max(1) as f64;
            match seed_list.iter_mut().find(|s| s.node == node) {
                Some(s) => {
                    s.anchor_weight += w;
                    s.weight += w;
                    s.channel = SeedChannel::Both;
                }
                None => seed_list.push(Seed {
                    node,
                    name: node_name(graph, node),
                    facts_weight: 0.0,
                    anchor_weight: w,
                    weight: w,
                    share: 0.0,
                    channel: SeedChannel::Anchor,
                }),
            }
        }
        seed_list.retain(|s| s.weight > 0.0 && s.weight.is_finite());
        seed_list.sort_by(|a, b| {
            b.weight.partial_cmp(&a.weight).unwrap_or(Ordering::Equal).then(a.node.cmp(&b.node))
        });
        self.retrieval.anchors = anchors;
        Ok(())
    }

    /// The teleport vector: the seeds' weights on their entity nodes and `prior`'s on the
    /// passage nodes, with each seed's and each source's share of the total. False, with the
    /// fallback set, when there is no seed ([`Fallback::NoSeeds`]) or the total is not positive
    /// and finite ([`Fallback::ZeroTeleport`]): the later steps then do nothing.
    fn teleport(&mut self, graph: &Graph, prior: &PassagePrior) -> bool {
        let out = &mut self.retrieval;
        if out.seeds.is_empty() {
            self.fallback = Some(Fallback::NoSeeds);
            return false;
        }
        let mut teleport = vec![0.0f64; graph.node_count()];
        for s in &out.seeds {
            if let Some(x) = teleport.get_mut(s.node as usize) {
                *x += s.weight;
            }
        }
        for (&p, &w) in graph.passage_nodes().iter().zip(&prior.weights) {
            if let Some(x) = teleport.get_mut(p as usize) {
                *x += w;
            }
        }
        let total: f64 = teleport.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            self.fallback = Some(Fallback::ZeroTeleport);
            return false;
        }
        for s in &mut out.seeds {
            s.share = s.weight / total;
        }
        let (sources, passage_sources) = prior.by_source.shares(graph, &prior.dense, &out.seeds, total);
        out.sources = sources;
        out.passage_sources = passage_sources;
        self.teleport = teleport;
        self.total = total;
        true
    }

    /// Step 3, the key-fact boost ([`boost`], CatRAG unless ablated): context arcs from a seed
    /// fact's entity to a passage stating it, into the overlay.
    fn boost(&mut self, graph: &Graph) {
        if !self.catrag() || self.config.no_boost {
            return;
        }
        let csr = graph.csr();
        let out = &mut self.retrieval;
        for b in boost::key_fact_boosts(graph, &out.facts, self.config.key_fact_boost, self.config.boost_preserve_mass) {
            out.overlay.push(OverlayArc {
                arc: b.arc,
                from: b.entity,
                to: b.passage,
                edge_type: EdgeType::Context,
                static_weight: csr.weights[b.arc as usize],
                multiplier: b.multiplier,
                cause: OverlayCause::KeyFactBoost { key_facts: b.key_facts },
            });
        }
    }

    /// Step 4, coarse pruning ([`prune`], CatRAG only): each of the top
    /// [`CatragConfig::tier_seeds`] seeds' neighbourhood, its pruned arcs (Weak) and the
    /// candidates left for tiering (none under `no_tier`).
    fn prune(&mut self, graph: &Graph) {
        if !self.catrag() {
            return;
        }
        let csr = graph.csr();
        let config = &self.config;
        let tiered: Vec<u32> = self.retrieval.seeds.iter().take(config.tier_seeds).map(|s| s.node).collect();
        for seed in tiered {
            let hood = prune::prune(graph, seed, &self.fact_cosines, config.k_edge, !config.no_prune);
            let pruned = hood
                .pruned
                .iter()
                .map(|c| OverlayArc {
                    arc: c.arc,
                    from: seed,
                    to: c.neighbour,
                    edge_type: EdgeType::Relation,
                    static_weight: csr.weights[c.arc as usize],
                    multiplier: config.tiers.weak,
                    cause: OverlayCause::Pruned,
                })
                .collect();
            let kept = if config.no_tier { Vec::new() } else { hood.kept };
            self.hoods.push(SeedHood { seed, pruned, kept });
        }
    }
}

/// Runs graph queries, keeping the PPR solver's buffers between them (one per thread/worker).
#[derive(Debug, Clone, Default)]
pub struct Retriever {
    solver: PprSolver,
}

impl Retriever {
    /// A fresh retriever.
    pub fn new() -> Self {
        Self::default()
    }

    /// One query (module docs, steps 1–6): `hipporag` or `catrag` over `graph`:
    /// [`Retriever::prepare`] (steps 1–4), `tierer` over every tiered seed's batch at once
    /// ([`EdgeTierer::tier_all`]), then [`Retriever::finish`] (step 5's overlay and one PPR run).
    ///
    /// `embedder` is the graph's embedder (for embedding query mentions when anchoring); `tierer`
    /// tiers edges (CatRAG only). The stored graph is not modified.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid `config`, a query vector of the wrong dimension, or dense
    /// scores that do not cover the graph's passages; the embedder's errors (anchoring);
    /// [`Error::PprInput`] should the graph's arrays be inconsistent. An all-zero teleport or a
    /// query without seeds is not an error: the result is the dense ranking
    /// ([`Retrieval::fallback`]).
    pub fn retrieve(
        &mut self,
        graph: &Graph,
        method: GraphMethod,
        input: &QueryInput<'_>,
        embedder: &dyn Embedder,
        tierer: &dyn EdgeTierer,
        config: &CatragConfig,
    ) -> Result<Retrieval> {
        let prepared = Self::prepare(graph, method, input, embedder, config)?;
        let answered: Vec<Option<Vec<Tier>>> = {
            let requests = prepared.tier_requests(graph);
            if requests.is_empty() {
                Vec::new()
            } else {
                tierer.tier_all(&requests).into_iter().map(Result::ok).collect()
            }
        };
        self.finish(graph, prepared, tierer.name(), answered)
    }

    /// Steps 1–4 of one query (seeds of both channels, the teleport vector, the key-fact boost,
    /// coarse pruning): everything before the tiers and PPR, without PPR. The tiered seeds' batches
    /// ([`PreparedQuery::tier_requests`], [`PreparedQuery::batches`]) are what CatRAG's tiering
    /// asks about; [`Retriever::finish`] takes their tiers and runs PPR once. The result owns its
    /// data, so a caller that fetches tiers asynchronously (the page) keeps it across the wait.
    ///
    /// A chain of the steps, each filling its part of the [`PreparedQuery`]:
    /// [`PassagePrior::of`] (the passage nodes' teleport weights by source, title bridges
    /// included), [`PreparedQuery::seed_facts`] (channel A), [`PreparedQuery::anchor`]
    /// (channel B), [`PreparedQuery::teleport`] (the teleport vector and its shares by source, or
    /// a fallback), [`PreparedQuery::boost`] (step 3) and [`PreparedQuery::prune`] (step 4).
    ///
    /// # Errors
    /// As [`Retriever::retrieve`], except those of PPR.
    pub fn prepare(
        graph: &Graph,
        method: GraphMethod,
        input: &QueryInput<'_>,
        embedder: &dyn Embedder,
        config: &CatragConfig,
    ) -> Result<PreparedQuery> {
        let mut prepared = PreparedQuery::start(graph, method, input, config)?;
        let prior = PassagePrior::of(graph, input, config)?;
        prepared.seed_facts(graph);
        prepared.anchor(graph, input.mentions, embedder)?;
        if prepared.teleport(graph, &prior) {
            prepared.boost(graph);
            prepared.prune(graph);
        }
        Ok(prepared)
    }
    /// Step 5's overlay and step 6 (PPR, run once) of a [`PreparedQuery`]: `tiers[i]` are the
    /// tiers of batch i ([`PreparedQuery::batches`] order), one per candidate; `None`, a missing
    /// entry or a vector of the wrong length makes that batch Weak and counts it in
    /// [`Retrieval::tier_failures`]. `tierer` names who tiered (reported when any batch exists).
    ///
    /// # Errors
    /// [`Error::PprInput`] should the graph's arrays be inconsistent; [`Error::Config`] when the
    /// dense scores do not cover the graph's passages (fallback).
    pub fn finish(
        &mut self,
        graph: &Graph,
        prepared: PreparedQuery,
        tierer: &str,
        tiers: Vec<Option<Vec<Tier>>>,
    ) -> Result<Retrieval> {
        if prepared.shape != (graph.node_count(), graph.csr().weights.len()) {
            return Err(Error::Config(
                "the knowledge graph changed since this query was prepared: search again".into(),
            ));
        }
        let PreparedQuery { passage_scores, config, retrieval: mut out, teleport, total, hoods, fallback, .. } =
            prepared;
        if let Some(why) = fallback {
            return dense_fallback(graph, &passage_scores, out, why);
        }
        let csr = graph.csr();
        let mut answers = tiers.into_iter();
        for hood in hoods {
            out.overlay.extend(hood.pruned);
            if hood.kept.is_empty() {
                continue;
            }
            out.tierer = Some(tierer.to_string());
            let tiers = match answers.next().flatten() {
                Some(t) if t.len() == hood.kept.len() => t,
                _ => {
                    out.tier_failures += 1;
                    vec![Tier::Weak; hood.kept.len()]
                }
            };
            for (c, t) in hood.kept.iter().zip(tiers) {
                out.overlay.push(OverlayArc {
                    arc: c.arc,
                    from: hood.seed,
                    to: c.neighbour,
                    edge_type: EdgeType::Relation,
                    static_weight: csr.weights.get(c.arc as usize).copied().unwrap_or(0.0),
                    multiplier: config.tiers.of(t),
                    cause: OverlayCause::Tiered { tier: t },
                });
            }
        }
        if out.tier_failures > 0 {
            out.warnings.push(format!(
                "edge tiering failed for {} seed(s); their edges were treated as Weak",
                out.tier_failures
            ));
        }

        // Step 6: PPR.
        let csr = graph.ppr_graph()?;
        let mut overlay = ArcOverlay::new();
        for o in &out.overlay {
            overlay.multiply(o.arc as usize, o.multiplier)?;
        }
        let overlay_ref = if overlay.is_empty() { None } else { Some(&overlay) };
        let report = match self.solver.run_ranked(&csr, overlay_ref, &teleport, graph.passage_nodes(), &config.ppr) {
            Ok(r) => r,
            Err(Error::ZeroTeleport) => return dense_fallback(graph, &passage_scores, out, Fallback::ZeroTeleport),
            Err(e) => return Err(e),
        };
        let report = if report.converged || overlay.is_empty() {
            report
        } else {
            // docs/method/spec.md §3: not converged ⇒ floor the arc multipliers at 1e-6 and report it.
            let mut floored = ArcOverlay::new();
            for o in &out.overlay {
                floored.multiply(o.arc as usize, o.multiplier.max(1e-6))?;
            }
            out.floored = true;
            self.solver.run(&csr, Some(&floored), &teleport, &config.ppr)?
        };
        if !report.converged {
            out.warnings.push(format!(
                "PPR did not converge in {} iterations (last L1 change {:.3e}); the ranking may be approximate",
                report.iterations, report.l1_change
            ));
        }
        out.ppr = Some(report);
        let scores = self.solver.scores();
        out.passage_scores =
            graph.passage_nodes().iter().map(|&p| scores.get(p as usize).copied().unwrap_or(0.0)).collect();
        out.node_scores = scores.to_vec();
        out.teleport = teleport.into_iter().map(|x| x / total).collect();
        Ok(out)
    }
}

/// The dense ranking as the result (docs/method/spec.md §3 failure handling).
fn dense_fallback(graph: &Graph, passage_scores: &[f32], mut out: Retrieval, why: Fallback) -> Result<Retrieval> {
    let mut scores = Vec::with_capacity(graph.passage_nodes().len());
    for &node in graph.passage_nodes() {
        let mut best = f64::NEG_INFINITY;
        for &i in graph.passage_indices(node) {
            let s = passage_scores.get(i as usize).copied().ok_or_else(|| {
                Error::Config(format!(
                    "the graph has corpus passage {i} but only {} dense scores were given",
                    passage_scores.len()
                ))
            })?;
            if s.is_finite() {
                best = best.max(f64::from(s));
            }
        }
        scores.push(best);
    }
    out.passage_scores = scores;
    out.fallback = Some(why);
    out.overlay.clear();
    out.sources = TeleportSources::default();
    out.passage_sources.clear();
    Ok(out)
}
