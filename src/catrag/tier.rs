//! Fine-grained edge tiers (CatRAG §3, "Query-Aware Dynamic Edge Weighting", stage II; docs/method/spec.md
//! §3 "Dynamic edge weighting"): the [`Tier`]s, their multipliers, the [`EdgeTierer`] trait and
//! its offline default [`EmbeddingSimilarityTierer`].
//!
//! CatRAG asks an LLM to classify each surviving seed→neighbour relation edge as Irrelevant,
//! Weak, High or Direct given the query, the seed, the neighbour and the neighbour's context
//! (its facts); that step is [`super::tiering`] (the state machine) and
//! [`super::endpoint::LlmTierer`] (its blocking driver). Without an endpoint Cairn uses [`EmbeddingSimilarityTierer`], which tiers an edge by the cosine between the query and the
//! fact(s) joining its two ends. It is a cheap stand-in, **not** the LLM step, and every report
//! names the tierer that ran ([`EdgeTierer::name`]).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::graph::Graph;

/// A relation edge's relevance to the query (CatRAG §3, stage II).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Unrelated to the query: the edge is removed for this query (multiplier 0 by default).
    Irrelevant,
    /// Loosely related (multiplier 0.25). Also what an edge gets when the tierer fails, and what
    /// coarse pruning demotes edges to.
    Weak,
    /// Relevant (multiplier 2.5).
    High,
    /// States what the query asks (multiplier 5.0).
    Direct,
}

impl Tier {
    /// Every tier, from least to most relevant.
    pub const ALL: [Tier; 4] = [Tier::Irrelevant, Tier::Weak, Tier::High, Tier::Direct];

    /// The tier's name (`irrelevant`, `weak`, `high`, `direct`).
    pub fn name(self) -> &'static str {
        match self {
            Tier::Irrelevant => "irrelevant",
            Tier::Weak => "weak",
            Tier::High => "high",
            Tier::Direct => "direct",
        }
    }
}

/// The multiplier each [`Tier`] puts on an edge's static weight (docs/method/spec.md §3; CatRAG §3: a
/// non-linear projection of the LLM's judgement). Defaults {Irrelevant 0, Weak 0.25, High 2.5,
/// Direct 5.0}. Each must be finite and ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TierMultipliers {
    /// Default 0 (the edge is removed for this query).
    pub irrelevant: f32,
    /// Default 0.25; also the multiplier of edges demoted by coarse pruning.
    pub weak: f32,
    /// Default 2.5.
    pub high: f32,
    /// Default 5.0.
    pub direct: f32,
}

impl Default for TierMultipliers {
    fn default() -> Self {
        TierMultipliers { irrelevant: 0.0, weak: 0.25, high: 2.5, direct: 5.0 }
    }
}

impl TierMultipliers {
    /// The multiplier of `tier`.
    pub fn of(&self, tier: Tier) -> f32 {
        match tier {
            Tier::Irrelevant => self.irrelevant,
            Tier::Weak => self.weak,
            Tier::High => self.high,
            Tier::Direct => self.direct,
        }
    }

    /// Check that every multiplier is finite and ≥ 0.
    ///
    /// # Errors
    /// [`Error::Config`] naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        for t in Tier::ALL {
            let x = self.of(t);
            if !(x.is_finite() && x >= 0.0) {
                return Err(Error::Config(format!(
                    "catrag.tiers.{} must be a finite number ≥ 0, got {x}",
                    t.name()
                )));
            }
        }
        Ok(())
    }
}

/// One seed→neighbour relation edge to tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TierCandidate {
    /// The neighbour's entity node id.
    pub neighbour: u32,
    /// The arc seed→neighbour (relation type) in the graph's CSR.
    pub arc: u32,
    /// Fact ids whose subject and object are the seed and the neighbour (either way round),
    /// ascending: the "linking facts" of CatRAG's prompt.
    pub joining_facts: Vec<u32>,
    /// The highest cosine between the query and a joining fact (−1 when there is none): what
    /// coarse pruning ranks by.
    pub similarity: f32,
}

/// Everything a tierer may look at for one seed's batch (CatRAG batches edges per seed).
#[derive(Clone, Copy)]
pub struct TierRequest<'a> {
    /// The graph (names, facts, the neighbour's context via [`Graph::facts_of_entity`]).
    pub graph: &'a Graph,
    /// The query text.
    pub query: &'a str,
    /// The query's vector (the graph's embedder), unit length.
    pub query_vector: &'a [f32],
    /// Cosine of the query with every fact, `[facts]` (fact id = index).
    pub fact_cosines: &'a [f32],
    /// The seed entity node.
    pub seed: u32,
    /// The edges to tier (the ones coarse pruning kept).
    pub candidates: &'a [TierCandidate],
    /// The query's configuration (an LLM tierer reads its call budget, reserve and τ).
    pub config: &'a super::CatragConfig,
}

/// Classifies seed→neighbour edges into [`Tier`]s (CatRAG §3, "Query-Aware Dynamic Edge
/// Weighting", stage II; docs/method/spec.md §3 "Dynamic edge weighting (LLM)").
///
/// Contract: [`tier`](EdgeTierer::tier) returns one tier per candidate, in order. An error, or a
/// vector of the wrong length, makes the caller treat the whole batch as [`Tier::Weak`] and count
/// it in [`super::Retrieval::tier_failures`] (docs/method/spec.md: "unparseable or failed answer ⇒ Weak,
/// logged"). Implementations must be deterministic for a given input (temperature 0 for an LLM).
pub trait EdgeTierer {
    /// A name for reports (for example `embedding-similarity`), so a result never passes off a
    /// stand-in as the LLM step.
    fn name(&self) -> &str;

    /// Tier one seed's candidate edges.
    ///
    /// # Errors
    /// Implementation-specific; the caller falls back to Weak.
    fn tier(&self, request: &TierRequest<'_>) -> Result<Vec<Tier>>;

    /// Tier every batch of one query at once (the tiered seeds in order), one result per
    /// request. The retriever calls this, so a tierer that plans all of a query's calls together
    /// (CatRAG's LLM tiering: one call budget, summaries shared between seeds, calls in
    /// parallel; [`super::tiering`]) can. Default: [`EdgeTierer::tier`] on each request.
    fn tier_all(&self, requests: &[TierRequest<'_>]) -> Vec<Result<Vec<Tier>>> {
        requests.iter().map(|r| self.tier(r)).collect()
    }
}

impl From<crate::llm::parse::TierLabel> for Tier {
    fn from(label: crate::llm::parse::TierLabel) -> Self {
        use crate::llm::parse::TierLabel as L;
        match label {
            L::Irrelevant => Tier::Irrelevant,
            L::Weak => Tier::Weak,
            L::High => Tier::High,
            L::Direct => Tier::Direct,
        }
    }
}

/// Cosine thresholds of [`EmbeddingSimilarityTierer`]: an edge whose best joining fact has
/// cosine `s` with the query is Direct when `s ≥ direct`, High when `s ≥ high`, Weak when
/// `s ≥ weak`, Irrelevant otherwise. Need `weak ≤ high ≤ direct`, all finite.
///
/// The defaults (weak 0.10, high 0.35, direct 0.57) are quantiles of the query–fact cosine
/// distribution of the default static embedder ([`crate::embed::StaticEmbedder::minilm`]) over
/// every fact of the graph, averaged per question on the three dev sets (rule-based OpenIE
/// graphs; `cairn eval --method hipporag --diagnostics` prints them; the mean over the three is
/// p50 0.103, p98 0.345, p99.9 0.577):
///
/// | dataset | p50 | p98 | p99.9 | max |
/// |---|---:|---:|---:|---:|
/// | hotpotqa | 0.095 | 0.332 | 0.597 | 0.774 |
/// | musique | 0.104 | 0.339 | 0.515 | 0.704 |
/// | 2wikimultihopqa | 0.111 | 0.364 | 0.618 | 0.766 |
///
/// - **weak = 0.10 ≈ the median**: a joining fact no closer to the query than a random fact of
///   the corpus is Irrelevant (its edge is removed for this query);
/// - **high = 0.35 ≈ the 98th percentile**: the top 2% of facts are relevant;
/// - **direct = 0.57 ≈ the 99.9th percentile**: about the ten facts nearest the query (the five
///   seed facts are among them) state what it asks.
///
/// They were set from these distributions, not by searching the retrieval metrics. With another
/// embedder, re-derive them the same way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarityTierThresholds {
    /// Direct at or above this cosine. Default 0.57.
    pub direct: f32,
    /// High at or above this cosine. Default 0.35.
    pub high: f32,
    /// Weak at or above this cosine; Irrelevant below. Default 0.10.
    pub weak: f32,
}

impl Default for SimilarityTierThresholds {
    fn default() -> Self {
        SimilarityTierThresholds { direct: 0.57, high: 0.35, weak: 0.10 }
    }
}

impl SimilarityTierThresholds {
    /// Check `weak ≤ high ≤ direct`, all finite.
    ///
    /// # Errors
    /// [`Error::Config`] when they are not.
    pub fn validate(&self) -> Result<()> {
        let ok = [self.weak, self.high, self.direct].iter().all(|x| x.is_finite())
            && self.weak <= self.high
            && self.high <= self.direct;
        if ok {
            Ok(())
        } else {
            Err(Error::Config(format!(
                "catrag.similarity_tiers must be finite with weak ≤ high ≤ direct, got weak {} high {} direct {}",
                self.weak, self.high, self.direct
            )))
        }
    }

    /// The tier of an edge whose best joining fact has cosine `similarity` with the query.
    pub fn tier(&self, similarity: f32) -> Tier {
        if similarity >= self.direct {
            Tier::Direct
        } else if similarity >= self.high {
            Tier::High
        } else if similarity >= self.weak {
            Tier::Weak
        } else {
            Tier::Irrelevant
        }
    }
}

/// The offline stand-in for CatRAG's LLM edge tiering: tiers each edge by the cosine between the
/// query and its best joining fact ([`TierCandidate::similarity`]) with fixed
/// [`SimilarityTierThresholds`]. Zero model calls; never fails. Named `embedding-similarity` in
/// reports. It sees only the joining fact, not the neighbour's wider context, so it cannot judge
/// whether the neighbour leads on to the answer the way an LLM reading the context can.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmbeddingSimilarityTierer {
    /// The thresholds.
    pub thresholds: SimilarityTierThresholds,
}

impl EmbeddingSimilarityTierer {
    /// The name it reports.
    pub const NAME: &'static str = "embedding-similarity";
}

impl EdgeTierer for EmbeddingSimilarityTierer {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn tier(&self, request: &TierRequest<'_>) -> Result<Vec<Tier>> {
        Ok(request.candidates.iter().map(|c| self.thresholds.tier(c.similarity)).collect())
    }
}
