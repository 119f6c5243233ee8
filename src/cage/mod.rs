//! CAGE: coherence-aware reranking (Qi et al., 2026, "CAGE: Coherence-Aware Graph Encoding for
//! Retrieval-Augmented Generation", arXiv 2609.04647; docs/method/spec.md §4).
//!
//! Each passage becomes a typed passage graph ([`graph::PassageGraph`], with min-out-degree
//! reweighting) that a one-layer R-GCN ([`GraphEncoder`]; the int8 ONNX model in `assets/cage/`,
//! run by tract with the cargo feature `cage`, [`tract`]) embeds to `Z ∈ R^128`. `Z` depends on the
//! passage alone, so it is computed once, at indexing, and stored with the index
//! ([`store::GraphEmbeddings`], keyed by the encoder's [`EncoderKey`]); a query runs no model.
//! Given a query and the top N ([`CageConfig::candidates`], 20) of a first stage (the method
//! table's `dense`, `bm25` or `catrag`), the search compares the candidates' stored `Z`:
//!
//! - coherence: `coh(p) = mean_{q ≠ p} cos(Z_p, Z_q)` ([`coherence`]; with
//!   [`CageConfig::anchors`] = m > 0, the mean over the first stage's top m instead);
//! - fusion: `score(p) = α·minmax(relevance)(p) + (1 − α)·minmax(coh)(p)` ([`fuse`]), α = 0.9,
//!   relevance the first stage's own score by default ([`CageRelevance`]).
//!
//! Known limit (CAGE §6): graphs that differ only by one substituted entity embed alike, so a
//! contradiction of that kind is not caught.

pub mod graph;
pub mod store;
#[cfg(feature = "cage")]
pub mod tract;

use serde::{Deserialize, Serialize};

use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::text::Pipeline;

pub use graph::{Edge, PassageGraph, MAX_NODES, NUM_RELATIONS, RELATIONS};
pub use store::{EncoderKey, GraphEmbeddings};

/// CAGE's parameters (docs/method/spec.md §4). Serde names are the field names; `{}` is the default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CageConfig {
    /// Fusion weight α of the relevance term (0–1): `α·relevance + (1 − α)·minmax(coh)(p)`.
    /// Default 0.9 (with `anchors = 2`): the best of `cairn eval --grid alpha=…` for the shipped
    /// (GraphCL) encoder with first-stage relevance on 2WikiMultihopQA (corpus setting), the one
    /// folder tuned on. On the folders not tuned on it does not help reliably
    /// (`docs/method/cage.md`, the must-show table), which is why no default method of the page
    /// uses CAGE.
    pub alpha: f32,
    /// β_cage (> 0): multiplier of min-out-degree nodes' features and adjacent edges. Default 1.5
    /// (docs/method/spec.md's default; not tuned).
    pub beta: f32,
    /// Candidates taken from the first stage and reranked (N, default 20).
    pub candidates: usize,
    /// Ablation: no min-out-degree reweighting (β = 1).
    pub no_reweight: bool,
    /// Ablation: the plain GCN (one relation type; its own trained model) instead of the R-GCN.
    pub plain_gcn: bool,
    /// What the fusion's relevance term is (default [`CageRelevance::FirstStage`]: the first
    /// stage's own scores, so coherence can only move a candidate past others whose normalised
    /// first-stage score is within `(1 − α)/α` of its own; see `docs/method/cage.md`).
    pub relevance: CageRelevance,
    /// Anchors m: coherence of a candidate is its mean cosine with the first stage's top m
    /// candidates (other than itself) instead of with all N; 0 = all N (docs/method/spec.md §4's mean).
    /// A multi-hop chain's next passage bonds with the passage the first stage is surest of,
    /// not with the average candidate. Default 2: chosen with α on 2WikiMultihopQA (corpus).
    pub anchors: usize,
    /// Ablation: the diversity-trained (GraphCL) R-GCN (`assets/cage/rgcn-graphcl-int8.onnx`)
    /// instead of the default one. The shipped default `rgcn-int8.onnx` is that same GraphCL
    /// model (the bonding-trained one did not win on the folders it was not tuned on), so the
    /// flag changes the encoder only when another default is loaded (`CAIRN_CAGE_MODEL`).
    pub graphcl: bool,
    /// How the hits are chosen from the fused scores (default [`CageSelection::Independent`]).
    /// Not written when it is the default, so an index file's configuration section stays
    /// byte for byte what it was before the option existed.
    #[serde(skip_serializing_if = "CageSelection::is_independent")]
    pub selection: CageSelection,
}

/// How CAGE chooses its hits. Serde names: `independent`, `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CageSelection {
    /// Each candidate scored once against the anchors ([`coherence_from_cosines`]), sorted.
    #[default]
    Independent,
    /// The evidence set chosen greedily: the next hit maximises relevance plus coherence with
    /// the hits already chosen ([`select_set`]).
    Set,
}

impl CageSelection {
    /// Whether this is [`CageSelection::Independent`] (the default).
    pub fn is_independent(&self) -> bool {
        *self == CageSelection::Independent
    }
}

/// The query-relevance term of CAGE's fusion.
///
/// docs/method/spec.md §4 writes cos(query, p). A first stage that is not itself a cosine ranking (CatRAG's
/// PPR, BM25) is then overruled by the static embedder's cosine; `FirstStage` keeps its order
/// instead and lets coherence break it. Serde names: `cosine`, `first-stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CageRelevance {
    /// cos(query, p) with the static embedder (docs/method/spec.md §4).
    Cosine,
    /// The first stage's own scores, min–max normalised over the N candidates (0–1). The default.
    #[default]
    FirstStage,
    /// The first stage's rank, scale-free: candidate i (0-based, first-stage order) of n has
    /// `1 − i/(n − 1)` (a single candidate 1). Fusion can then move a candidate past at most
    /// `⌊(1 − α)/α · (n − 1)⌋` others, whatever the first stage's score distribution (BM25's
    /// flat scores and PPR's heavy-tailed mass alike).
    Rank,
}

impl CageRelevance {
    /// The relevance term of `scores` (the first stage's scores of its candidates, best first)
    /// for the modes that need only them: `FirstStage` → [`minmax`], `Rank` → `1 − i/(n − 1)`;
    /// `None` for `Cosine` (it needs the query's vector).
    pub fn of_first_stage(self, scores: &[f32]) -> Option<Vec<f32>> {
        match self {
            CageRelevance::Cosine => None,
            CageRelevance::FirstStage => Some(minmax(scores)),
            CageRelevance::Rank => {
                let n = scores.len();
                Some((0..n).map(|i| if n > 1 { 1.0 - i as f32 / (n - 1) as f32 } else { 1.0 }).collect())
            }
        }
    }
}

impl Default for CageConfig {
    fn default() -> Self {
        CageConfig {
            alpha: 0.9,
            beta: 1.5,
            candidates: 20,
            no_reweight: false,
            plain_gcn: false,
            relevance: CageRelevance::FirstStage,
            anchors: 2,
            graphcl: false,
            selection: CageSelection::Independent,
        }
    }
}

impl CageConfig {
    /// Check the ranges.
    ///
    /// # Errors
    /// [`Error::Config`] for α outside [0, 1], β not finite and > 0, or 0 candidates.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(Error::Config(format!("cage.alpha must be in [0, 1], got {}", self.alpha)));
        }
        if !(self.beta.is_finite() && self.beta > 0.0) {
            return Err(Error::Config(format!("cage.beta must be a positive number, got {}", self.beta)));
        }
        if self.candidates == 0 {
            return Err(Error::Config("cage.candidates must be at least 1".into()));
        }
        Ok(())
    }

    /// The β actually applied (1 with `no_reweight`).
    pub fn effective_beta(&self) -> f32 {
        if self.no_reweight {
            1.0
        } else {
            self.beta
        }
    }

    /// The ablation flags that are on, as CLI flags (`--no-reweight`, `--plain-gcn`).
    pub fn ablations(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.no_reweight {
            v.push("--no-reweight");
        }
        if self.plain_gcn {
            v.push("--plain-gcn");
        }
        if self.graphcl {
            v.push("--graphcl");
        }
        v
    }
}

/// A batch of passage graphs as the R-GCN's inputs, padded to the largest graph.
///
/// - `features`: `[batch, nodes, feature_dim]` f32 row-major; node features are the static
///   embedder's unit vector of the node's lemma (so one lemma has one feature everywhere),
///   times β for min-out-degree nodes; padding rows are 0.
/// - `adjacency`: `[batch, channels, nodes, nodes]` f32 ([`PassageGraph::adjacency_into`]:
///   channel 0 the identity on real nodes, then one channel per relation; 2 channels when
///   merged for the plain GCN); padding is 0, so padded nodes contribute nothing (no bias).
#[derive(Debug, Clone, PartialEq)]
pub struct GraphBatch {
    /// Graphs in the batch.
    pub batch: usize,
    /// Padded node count (≥ 1).
    pub nodes: usize,
    /// Feature dimension.
    pub feature_dim: usize,
    /// Adjacency channels.
    pub channels: usize,
    /// `[batch, nodes, feature_dim]`.
    pub features: Vec<f32>,
    /// `[batch, channels, nodes, nodes]`.
    pub adjacency: Vec<f32>,
}

impl GraphBatch {
    /// Tensors for `graphs`, node features from `embedder` (one embedding per node lemma; the
    /// embedder's own zero vector for a lemma it does not know), relations merged into one
    /// channel when `merge` (plain GCN).
    ///
    /// # Errors
    /// The embedder's errors.
    pub fn new(graphs: &[PassageGraph], embedder: &dyn Embedder, merge: bool) -> Result<GraphBatch> {
        let f = embedder.dim();
        let channels = if merge { 2 } else { NUM_RELATIONS };
        let n = graphs.iter().map(PassageGraph::len).max().unwrap_or(0).max(1);
        let b = graphs.len();
        let mut features = vec![0.0f32; b * n * f];
        let mut adjacency = vec![0.0f32; b * channels * n * n];
        for (g, graph) in graphs.iter().enumerate() {
            if graph.is_empty() {
                continue;
            }
            let labels: Vec<&str> = graph.nodes.iter().map(String::as_str).collect();
            let rows = embedder.embed_batch(&labels, &mut |_, _| {})?;
            let dst = &mut features[g * n * f..g * n * f + graph.len() * f];
            dst.copy_from_slice(&rows[..graph.len() * f]);
            for (i, &min) in graph.min_out_degree.iter().enumerate() {
                if min {
                    dst[i * f..(i + 1) * f].iter_mut().for_each(|x| *x *= graph.beta);
                }
            }
            graph.adjacency_into(merge, n, &mut adjacency[g * channels * n * n..(g + 1) * channels * n * n]);
        }
        Ok(GraphBatch { batch: b, nodes: n, feature_dim: f, channels, features, adjacency })
    }
}

/// A graph encoder: the R-GCN of docs/method/spec.md §4 (one layer, ReLU, sum pooling) or its plain-GCN
/// ablation. The implementation that runs the trained int8 model is [`tract::RgcnModel`]
/// (feature `cage`).
pub trait GraphEncoder {
    /// Output dimension (128 for the shipped models).
    fn dim(&self) -> usize;
    /// Adjacency channels the model expects ([`NUM_RELATIONS`] for the R-GCN, 2 for the GCN).
    fn channels(&self) -> usize;
    /// Node feature dimension the model expects (256: the static embedder's).
    fn feature_dim(&self) -> usize;
    /// CRC32 of the model's ONNX bytes: identifies the encoder its stored graph embeddings were
    /// made with ([`EncoderKey`]).
    fn fingerprint(&self) -> u32;
    /// Embed every graph of `batch`: `batch.batch × dim()` floats, row-major.
    ///
    /// # Errors
    /// [`Error::Model`] when the model fails or the batch's shapes do not fit it.
    fn encode(&self, batch: &GraphBatch) -> Result<Vec<f32>>;
}

/// Cosine of two vectors; 0 when either is the zero vector.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        ab += f64::from(x) * f64::from(y);
        aa += f64::from(x) * f64::from(x);
        bb += f64::from(y) * f64::from(y);
    }
    if aa <= 0.0 || bb <= 0.0 {
        0.0
    } else {
        (ab / (aa.sqrt() * bb.sqrt())) as f32
    }
}

/// CAGE coherence (docs/method/spec.md §4): for `z` holding `n` row vectors of length `dim`,
/// `coh(p) = mean_{q ≠ p} cos(Z_p, Z_q)`; a single candidate has coherence 0.
pub fn coherence(z: &[f32], dim: usize) -> Vec<f32> {
    coherence_from_cosines(&cosine_matrix(z, dim), 0)
}

/// The `n × n` cosine matrix (row-major) of `z`'s `n = z.len() / dim` rows.
pub fn cosine_matrix(z: &[f32], dim: usize) -> Vec<f32> {
    let n = if dim == 0 { 0 } else { z.len() / dim };
    let rows: Vec<&[f32]> = z.chunks_exact(dim.max(1)).take(n).collect();
    let mut cos = vec![0.0f32; n * n];
    for p in 0..n {
        for q in p..n {
            let c = cosine(rows[p], rows[q]);
            cos[p * n + q] = c;
            cos[q * n + p] = c;
        }
    }
    cos
}

/// Coherence from a candidates' cosine matrix `cos` (`n × n`, candidates in first-stage order):
/// with `anchors = 0`, `coh(p) = mean_{q ≠ p} cos(p, q)` (docs/method/spec.md §4); with `anchors = m > 0`,
/// the mean over the first stage's top `m` candidates other than p (`min(m, n)` of them), so
/// a candidate scores by how it bonds with what the first stage is surest of. A candidate with
/// no other candidate to compare with has 0.
pub fn coherence_from_cosines(cos: &[f32], anchors: usize) -> Vec<f32> {
    let n = (cos.len() as f64).sqrt() as usize;
    let m = if anchors == 0 { n } else { anchors.min(n) };
    (0..n)
        .map(|p| {
            let (mut s, mut k) = (0.0f32, 0usize);
            for q in (0..m).filter(|&q| q != p) {
                s += cos[p * n + q];
                k += 1;
            }
            if k == 0 {
                0.0
            } else {
                s / k as f32
            }
        })
        .collect()
}

/// Min–max normalisation to [0, 1]; all equal (or empty) gives all 0.
pub fn minmax(v: &[f32]) -> Vec<f32> {
    let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !(hi > lo) {
        return vec![0.0; v.len()];
    }
    v.iter().map(|&x| (x - lo) / (hi - lo)).collect()
}

/// CAGE fusion (docs/method/spec.md §4): `α·relevance + (1 − α)·minmax(coherence)`, element-wise.
pub fn fuse(alpha: f32, relevance: &[f32], coherence: &[f32]) -> Vec<f32> {
    let c = minmax(coherence);
    relevance.iter().zip(&c).map(|(&r, &c)| alpha * r + (1.0 - alpha) * c).collect()
}

/// One reranked candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reranked {
    /// Position of the candidate in the input list.
    pub candidate: usize,
    /// The fused score.
    pub score: f32,
    /// cos(query, passage) as given.
    pub relevance: f32,
    /// Raw coherence (mean cosine with the other candidates).
    pub coherence: f32,
}

/// The CAGE reranker: the text pipeline, the node-feature embedder and the encoder(s).
pub struct Cage {
    pipeline: Pipeline,
    rgcn: std::rc::Rc<dyn GraphEncoder>,
    gcn: Option<std::rc::Rc<dyn GraphEncoder>>,
    graphcl: Option<std::rc::Rc<dyn GraphEncoder>>,
}

impl std::fmt::Debug for Cage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cage").field("dim", &self.rgcn.dim()).field("gcn", &self.gcn.is_some()).finish()
    }
}

impl Cage {
    /// A reranker with the R-GCN `rgcn` and, for the plain-GCN ablation, `gcn`.
    ///
    /// # Errors
    /// [`Error::Config`] when `rgcn` does not take [`NUM_RELATIONS`] channels or `gcn` not 2;
    /// the text pipeline's load error.
    pub fn new(
        rgcn: std::rc::Rc<dyn GraphEncoder>,
        gcn: Option<std::rc::Rc<dyn GraphEncoder>>,
    ) -> Result<Cage> {
        if rgcn.channels() != NUM_RELATIONS {
            return Err(Error::Config(format!(
                "the R-GCN model takes {} adjacency channels, Cairn's relation set has {NUM_RELATIONS}",
                rgcn.channels()
            )));
        }
        if let Some(g) = &gcn {
            if g.channels() != 2 {
                return Err(Error::Config(format!(
                    "the plain GCN model takes {} channels, not 2",
                    g.channels()
                )));
            }
        }
        Ok(Cage { pipeline: Pipeline::english()?, rgcn, gcn, graphcl: None })
    }

    /// Add the diversity-trained (GraphCL) R-GCN for the `graphcl` ablation.
    ///
    /// # Errors
    /// [`Error::Config`] when it does not take [`NUM_RELATIONS`] channels.
    pub fn with_graphcl(mut self, graphcl: std::rc::Rc<dyn GraphEncoder>) -> Result<Cage> {
        if graphcl.channels() != NUM_RELATIONS {
            return Err(Error::Config(format!(
                "the GraphCL R-GCN takes {} adjacency channels, Cairn's relation set has {NUM_RELATIONS}",
                graphcl.channels()
            )));
        }
        self.graphcl = Some(graphcl);
        Ok(self)
    }

    /// The encoder `config` selects: the plain GCN (`plain_gcn`), the GraphCL R-GCN
    /// (`graphcl`) or the default R-GCN.
    ///
    /// # Errors
    /// [`Error::Config`] when the selected ablation's model is not attached.
    pub fn encoder(&self, config: &CageConfig) -> Result<&std::rc::Rc<dyn GraphEncoder>> {
        if config.plain_gcn {
            self.gcn.as_ref().ok_or_else(|| {
                Error::Config("the plain-GCN ablation needs the GCN model (assets/cage/gcn-int8.onnx)".into())
            })
        } else if config.graphcl {
            self.graphcl.as_ref().ok_or_else(|| {
                Error::Config(
                    "the GraphCL ablation needs its model (assets/cage/rgcn-graphcl-int8.onnx)".into(),
                )
            })
        } else {
            Ok(&self.rgcn)
        }
    }

    /// What graph embeddings computed under `config` are keyed by ([`EncoderKey`]).
    ///
    /// # Errors
    /// As [`Cage::encoder`].
    pub fn key(&self, config: &CageConfig) -> Result<EncoderKey> {
        Ok(EncoderKey {
            model: self.encoder(config)?.fingerprint(),
            beta: config.effective_beta(),
            merged: config.plain_gcn,
        })
    }

    /// The passage graph of `(title, text)` with β as configured.
    pub fn passage_graph(&self, title: &str, text: &str, config: &CageConfig) -> PassageGraph {
        let doc = self.pipeline.analyze(title, text);
        PassageGraph::build(&doc, config.effective_beta())
    }

    /// Graph embeddings `Z` (`passages.len() × dim`) of `(title, text)` passages, one batch.
    ///
    /// # Errors
    /// [`Error::Config`] for an ablation without its model, or a feature embedder whose
    /// dimension is not the model's; the encoder's and the embedder's errors.
    pub fn embed_graphs(
        &self,
        passages: &[(&str, &str)],
        features: &dyn Embedder,
        config: &CageConfig,
    ) -> Result<(Vec<f32>, usize)> {
        let encoder = self.encoder(config)?;
        if features.dim() != encoder.feature_dim() {
            return Err(Error::Config(format!(
                "CAGE node features are {}-d but the model takes {}-d",
                features.dim(),
                encoder.feature_dim()
            )));
        }
        let graphs: Vec<PassageGraph> =
            passages.iter().map(|(t, x)| self.passage_graph(t, x, config)).collect();
        let batch = GraphBatch::new(&graphs, features, config.plain_gcn)?;
        Ok((encoder.encode(&batch)?, encoder.dim()))
    }

    /// Rerank candidates (docs/method/spec.md §4): `passages[i]` is candidate i's `(title, text)`,
    /// `relevance[i]` its cos(query, passage). Returns every candidate with its fused score,
    /// best first (ties by input position).
    ///
    /// # Errors
    /// [`Error::Config`] when the lengths differ or the config is invalid; as
    /// [`Cage::embed_graphs`].
    pub fn rerank(
        &self,
        passages: &[(&str, &str)],
        relevance: &[f32],
        features: &dyn Embedder,
        config: &CageConfig,
    ) -> Result<Vec<Reranked>> {
        config.validate()?;
        if passages.len() != relevance.len() {
            return Err(Error::Config(format!(
                "{} passages but {} relevance scores",
                passages.len(),
                relevance.len()
            )));
        }
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        let (z, dim) = self.embed_graphs(passages, features, config)?;
        if dim == 0 || z.len() != relevance.len() * dim {
            return Err(Error::Config(format!(
                "the encoder returned {} floats for {} graphs",
                z.len(),
                passages.len()
            )));
        }
        rerank_cosines(relevance, &cosine_matrix(&z, dim), config.alpha, config.anchors)
    }
}

/// Coherence, fusion and ranking (docs/method/spec.md §4) given the candidates' graph embeddings `z`
/// (`relevance.len() × dim`, row-major, from any [`GraphEncoder`], for example one that runs in
/// another wasm package): every candidate with its fused score, best first (ties by input
/// position). Coherence is the mean over all other candidates.
///
/// # Errors
/// [`Error::Config`] when `z` does not hold `relevance.len()` rows of `dim`, or α is outside
/// [0, 1].
pub fn rerank_with(relevance: &[f32], z: &[f32], dim: usize, alpha: f32) -> Result<Vec<Reranked>> {
    if dim == 0 || z.len() != relevance.len() * dim {
        return Err(Error::Config(format!(
            "expected {} graph embeddings of {dim} floats, got {} floats",
            relevance.len(),
            z.len()
        )));
    }
    rerank_cosines(relevance, &cosine_matrix(z, dim), alpha, 0)
}

/// Coherence ([`coherence_from_cosines`] with `anchors`), fusion and ranking given the
/// candidates' cosine matrix (`n × n`, candidates in first-stage order; from stored graph
/// embeddings, [`GraphEmbeddings::cosines`]): every candidate with its fused score, best
/// first (ties by input position).
///
/// # Errors
/// [`Error::Config`] when `cos` is not `relevance.len()²` values or α is outside [0, 1].
pub fn rerank_cosines(relevance: &[f32], cos: &[f32], alpha: f32, anchors: usize) -> Result<Vec<Reranked>> {
    let n = relevance.len();
    if cos.len() != n * n {
        return Err(Error::Config(format!("expected a {n}×{n} cosine matrix, got {} values", cos.len())));
    }
    let coh = coherence_from_cosines(cos, anchors);
    rank_fused(relevance, &coh, alpha)
}

/// Fusion ([`fuse`]) and ranking given every candidate's raw coherence, whatever computed it:
/// every candidate with its fused score, best first (ties by input position).
///
/// # Errors
/// [`Error::Config`] when the lengths differ or α is outside [0, 1].
pub fn rank_fused(relevance: &[f32], coh: &[f32], alpha: f32) -> Result<Vec<Reranked>> {
    let n = relevance.len();
    if coh.len() != n {
        return Err(Error::Config(format!("{n} relevance scores but {} coherences", coh.len())));
    }
    if !(0.0..=1.0).contains(&alpha) {
        return Err(Error::Config(format!("cage.alpha must be in [0, 1], got {alpha}")));
    }
    let fused = fuse(alpha, relevance, coh);
    let mut out: Vec<Reranked> = (0..n)
        .map(|i| Reranked { candidate: i, score: fused[i], relevance: relevance[i], coherence: coh[i] })
        .collect();
    out.sort_by(|a, b| {
        b.score.partial_cmp(&a.score).unwrap_or(std::cmp::Ordering::Equal).then(a.candidate.cmp(&b.candidate))
    });
    Ok(out)
}

/// CAGE's evidence-set selection (docs/method/spec.md §4 reads coherence as a property of the assembled
/// evidence set): candidates are chosen one at a time; the next is the remaining candidate with
/// the largest `α·relevance(p) + (1 − α)·minmax(coh_S)(p)`, where `coh_S(p)` is the mean cosine
/// of p's graph embedding with those of the candidates already chosen (the min–max runs over
/// the candidates still remaining; the first choice, with nothing chosen, is the most relevant
/// one). `cos` is the candidates' `n × n` cosine matrix (first-stage order). Returns every
/// candidate in the order chosen, each with the score it was chosen by, its relevance and its
/// raw `coh_S` at that step (0 for the first). Ties go to the earlier candidate. Cost O(n³)
/// additions (8,000 at n = 20).
///
/// # Errors
/// [`Error::Config`] when `cos` is not `relevance.len()²` values or α is outside [0, 1].
pub fn select_set(relevance: &[f32], cos: &[f32], alpha: f32) -> Result<Vec<Reranked>> {
    let n = relevance.len();
    if cos.len() != n * n {
        return Err(Error::Config(format!("expected a {n}×{n} cosine matrix, got {} values", cos.len())));
    }
    if !(0.0..=1.0).contains(&alpha) {
        return Err(Error::Config(format!("cage.alpha must be in [0, 1], got {alpha}")));
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(n);
    let mut taken = vec![false; n];
    let mut sum = vec![0.0f32; n];
    let mut out = Vec::with_capacity(n);
    while chosen.len() < n {
        let remaining: Vec<usize> = (0..n).filter(|&p| !taken[p]).collect();
        let coh: Vec<f32> = remaining
            .iter()
            .map(|&p| if chosen.is_empty() { 0.0 } else { sum[p] / chosen.len() as f32 })
            .collect();
        let fused = fuse(alpha, &remaining.iter().map(|&p| relevance[p]).collect::<Vec<_>>(), &coh);
        let mut best = 0;
        for i in 1..remaining.len() {
            if fused[i] > fused[best] {
                best = i;
            }
        }
        let p = remaining[best];
        out.push(Reranked { candidate: p, score: fused[best], relevance: relevance[p], coherence: coh[best] });
        taken[p] = true;
        chosen.push(p);
        for q in 0..n {
            sum[q] += cos[q * n + p];
        }
    }
    Ok(out)
}

/// Oracle coherence, for the evaluation's ceiling only (never a search's): `cos` is the
/// `m × m` cosine matrix of the stored `Z` of the `candidates` first-stage candidates (rows
/// `0..candidates`, first-stage order) followed by any gold passages that are not candidates;
/// `gold` lists the rows (any of the `m`) that are gold passages. Candidate p's coherence is
/// `mean_{g ∈ gold, g ≠ p} cos(Z_p, Z_g)`: how a perfect bonding signal would score it against
/// the true evidence set. A candidate with no other gold row has 0.
pub fn oracle_coherence(cos: &[f32], candidates: usize, gold: &[usize]) -> Vec<f32> {
    let m = (cos.len() as f64).sqrt() as usize;
    (0..candidates.min(m))
        .map(|p| {
            let others: Vec<usize> = gold.iter().copied().filter(|&g| g != p && g < m).collect();
            if others.is_empty() {
                0.0
            } else {
                others.iter().map(|&g| cos[p * m + g]).sum::<f32>() / others.len() as f32
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
