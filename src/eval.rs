//! Evaluation: the datasets of `../shared/data`, the retrieval metrics of docs/method/spec.md §5, and the
//! harness through which every retrieval method reports.
//!
//! Two settings (`../shared/data/README.md`):
//! - [`Setting::Corpus`] (HippoRAG 2 / CatRAG): index the whole `corpus.jsonl` once and retrieve
//!   from all of it for every question;
//! - [`Setting::Pool`] (CAGE): for each question, index only its own `pool_ids` and rank those.
//!
//! The graph methods (`hipporag`, `catrag`) build the knowledge graph once per index: in the
//! corpus setting one graph over the whole corpus; in the pool setting one small graph per
//! question over its pool (the corpus's triples are extracted once and each pool takes its
//! passages' triples). Their reports carry [`Diagnostics`] (CatRAG's hub-drift measure, seeds,
//! anchors, overlay sizes, PPR convergence).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::catrag::{
    fact_cosine_quantiles, mass_shares, seeds::fact_cosines, CatragConfig, EdgeTierer, OverlayCause,
    SeedChannel,
};
use crate::corpus::{parse_jsonl_bytes, Corpus};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::extract::Triple;
use crate::engine::{Engine, Prebuilt};
use crate::index::{EmbedderSlot, GraphBuildReport, Index, IndexConfig, Method};
use crate::search::{Query, Searcher};
use crate::text::Pipeline;

/// One multi-hop question with its gold supporting passages and its passage pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Dataset id.
    pub id: String,
    /// The question text.
    pub question: String,
    /// Gold answer.
    #[serde(default)]
    pub answer: String,
    /// Other accepted answers.
    #[serde(default)]
    pub answer_aliases: Vec<String>,
    /// Ids of the gold supporting passages.
    pub gold_ids: Vec<String>,
    /// Ids of the passages the benchmark gives with this question (gold and distractors).
    #[serde(default)]
    pub pool_ids: Vec<String>,
    /// Question type (HotpotQA: bridge / comparison; 2Wiki: compositional, …).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Number of hops, where the dataset gives it.
    #[serde(default)]
    pub hops: Option<u32>,
}

/// A dataset folder: `corpus.jsonl` and `questions.jsonl`.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Folder name (for example `hotpotqa`).
    pub name: String,
    /// Every passage of `corpus.jsonl`.
    pub corpus: Corpus,
    /// Every question of `questions.jsonl` (empty for the scale corpus).
    pub questions: Vec<Question>,
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.display().to_string(), source })
}

impl Dataset {
    /// Load a dataset folder.
    ///
    /// # Errors
    /// [`Error::Dataset`] when the folder or its `corpus.jsonl` is missing, or a question names a
    /// gold or pool passage the corpus lacks; [`Error::Jsonl`] naming file and line for a
    /// malformed line; [`Error::Passage`] for a duplicate passage id.
    pub fn load(dir: &Path) -> Result<Dataset> {
        Self::load_timed(dir).map(|(dataset, _)| dataset)
    }

    /// As [`Dataset::load`], with the milliseconds (wall clock) spent turning `corpus.jsonl`'s
    /// bytes into the corpus: parsing every line and adding the passages (Unicode NFC, the id
    /// map), the work the page's `addJsonl` does. Reading the file is not counted.
    ///
    /// # Errors
    /// As [`Dataset::load`].
    pub fn load_timed(dir: &Path) -> Result<(Dataset, f64)> {
        if !dir.is_dir() {
            return Err(Error::Dataset { path: dir.display().to_string(), message: "no such folder".into() });
        }
        let corpus_path = dir.join("corpus.jsonl");
        if !corpus_path.is_file() {
            return Err(Error::Dataset {
                path: dir.display().to_string(),
                message: "no corpus.jsonl in this folder".into(),
            });
        }
        let bytes = std::fs::read(&corpus_path)
            .map_err(|source| Error::Io { path: corpus_path.display().to_string(), source })?;
        let t = Instant::now();
        let mut corpus = Corpus::new();
        corpus.extend(parse_jsonl_bytes(&corpus_path.display().to_string(), &bytes)?)?;
        let parse_ms = t.elapsed().as_secs_f64() * 1e3;
        drop(bytes);
        let q_path = dir.join("questions.jsonl");
        let questions = if q_path.is_file() {
            parse_questions(&q_path.display().to_string(), &read(&q_path)?)?
        } else {
            Vec::new()
        };
        for q in &questions {
            for id in q.gold_ids.iter().chain(&q.pool_ids) {
                if corpus.index_of(id).is_none() {
                    return Err(Error::Dataset {
                        path: dir.display().to_string(),
                        message: format!("question {} names passage {id} that corpus.jsonl lacks", q.id),
                    });
                }
            }
        }
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok((Dataset { name, corpus, questions }, parse_ms))
    }
}

/// Parse `questions.jsonl`.
///
/// # Errors
/// [`Error::Jsonl`] naming the 1-based line of the first malformed question.
pub fn parse_questions(source_name: &str, input: &str) -> Result<Vec<Question>> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: Question = serde_json::from_str(line.trim()).map_err(|e| Error::Jsonl {
            source_name: source_name.to_string(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(q);
    }
    Ok(out)
}

/// Recall@k: the fraction of `gold` passages found among the first `k` of `ranked`.
/// A question without gold passages scores 0 (it cannot be answered by retrieval).
pub fn recall_at(ranked: &[&str], gold: &[String], k: usize) -> f64 {
    let gold: HashSet<&str> = gold.iter().map(String::as_str).collect();
    if gold.is_empty() {
        return 0.0;
    }
    let found = ranked.iter().take(k).filter(|id| gold.contains(*id)).collect::<HashSet<_>>().len();
    found as f64 / gold.len() as f64
}

/// Full Chain Retrieval at k: 1 when **every** gold passage is among the first `k`, else 0
/// (CatRAG §4.3). A question without gold passages scores 0.
pub fn full_chain_at(ranked: &[&str], gold: &[String], k: usize) -> f64 {
    if !gold.is_empty() && recall_at(ranked, gold, k) >= 1.0 {
        1.0
    } else {
        0.0
    }
}

/// Which passages each question is ranked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// One index over the whole corpus (HippoRAG 2 / CatRAG).
    Corpus,
    /// One index per question over its own pool (CAGE).
    Pool,
}

impl FromStr for Setting {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "corpus" => Ok(Setting::Corpus),
            "pool" => Ok(Setting::Pool),
            _ => Err(Error::Config(format!("unknown setting {s:?} (known: corpus, pool)"))),
        }
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Setting::Corpus => "corpus",
            Setting::Pool => "pool",
        })
    }
}

/// Averages of the metrics over a group of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    /// Number of questions.
    pub questions: usize,
    /// Mean Recall@2.
    #[serde(rename = "recall@2")]
    pub recall_at_2: f64,
    /// Mean Recall@5.
    #[serde(rename = "recall@5")]
    pub recall_at_5: f64,
    /// Mean FCR@5.
    #[serde(rename = "fcr@5")]
    pub fcr_at_5: f64,
    /// Mean Recall@k (k of the run).
    #[serde(rename = "recall@k")]
    pub recall_at_k: f64,
    /// Mean FCR@k (k of the run).
    #[serde(rename = "fcr@k")]
    pub fcr_at_k: f64,
}

/// Per-query figures of a graph method, averaged over the questions (`cairn eval
/// --diagnostics`). Shares are in [0, 1]; "mean" is over all questions unless it says otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Diagnostics {
    /// Questions.
    pub queries: usize,
    /// Questions ranked by PPR (the others fell back to dense ranking).
    pub ppr_queries: usize,
    /// Questions with no seed (dense fallback).
    pub fallbacks: usize,
    /// PPR runs that did not converge (after the floor retry).
    pub not_converged: usize,
    /// PPR runs retried with floored multipliers.
    pub floored: usize,
    /// Mean PPR iterations (over PPR questions).
    pub mean_iterations: f64,
    /// CatRAG's drift measure: mean share of PPR mass on the hubs, the top 1% of nodes by degree
    /// (over PPR questions).
    pub hub_mass_share: f64,
    /// Mean share of PPR mass on the top 1% of nodes by mass (over PPR questions).
    pub top1_mass_share: f64,
    /// Mean entity seeds per question.
    pub mean_seeds: f64,
    /// Mean seeds that anchoring added or reinforced per question.
    pub mean_anchored_seeds: f64,
    /// Query mentions found by NER (all questions).
    pub mentions: usize,
    /// Mentions anchored by exact normalised match.
    pub anchored_exact: usize,
    /// Mentions anchored by embedding match.
    pub anchored_embedding: usize,
    /// Mentions that matched nothing (dropped).
    pub mentions_dropped: usize,
    /// Mean context arcs boosted per question.
    pub mean_boosted_arcs: f64,
    /// Mean relation arcs demoted by pruning per question.
    pub mean_pruned_arcs: f64,
    /// Tiered arcs by tier (all questions).
    pub tiers: BTreeMap<String, usize>,
    /// Seed batches whose tiering failed.
    pub tier_failures: usize,
    /// Quantiles of the query–fact cosines, each averaged over the questions (what the
    /// similarity tierer's thresholds are read from).
    pub fact_cosines: BTreeMap<String, f64>,
    /// Mean teleport mass by source (shares of the teleport total, over PPR questions).
    pub teleport_sources: crate::catrag::TeleportSources,
    /// Gold passages' title entities that are entity nodes (all questions): what the oracle
    /// anchors anchor.
    pub gold_title_entities: usize,
    /// Of those, anchored by the query's own mentions.
    pub gold_title_entities_anchored: usize,
    /// Boosted arcs into a gold passage (all questions).
    pub boosted_to_gold: usize,
    /// Tiered edges on a gold chain (both entities in gold passages) and their tiers.
    pub chain_edge_tiers: BTreeMap<String, usize>,
    /// Tiered edges off the gold chain and their tiers.
    pub other_edge_tiers: BTreeMap<String, usize>,
    /// Mean query–fact similarity of the tiered chain edges (what the offline tierer reads).
    pub chain_edge_similarity: f64,
    /// Mean similarity of the other tiered edges.
    pub other_edge_similarity: f64,
    /// Probability that a random chain edge has a higher similarity than a random other edge
    /// (ROC AUC of the offline tierer's score as a chain-edge detector; 0.5 = no separation).
    pub chain_edge_auc: f64,
}

#[derive(Default)]
struct DiagAcc {
    d: Diagnostics,
    iterations: f64,
    hub: f64,
    top1: f64,
    seeds: f64,
    anchored: f64,
    boosted: f64,
    pruned: f64,
    quantile_n: usize,
    quantiles: [f64; 5],
    sources: [f64; 7],
    chain_sims: Vec<f32>,
    other_sims: Vec<f32>,
}

impl DiagAcc {
    fn add(&mut self, index: &Index, q: &Question, r: &crate::catrag::Retrieval) -> Result<()> {
        let query = q.question.as_str();
        if let Some(graph) = index.graph() {
            let gold = gold_nodes(index, graph, q);
            let in_gold = |e: u32| graph.passages_of(e).iter().any(|p| gold.contains(p));
            let anchored: HashSet<u32> = r.anchors.iter().filter_map(|a| a.node).collect();
            let mut titles = HashSet::new();
            for id in &q.gold_ids {
                let Some(p) = index.corpus().index_of(id).and_then(|i| index.corpus().get(i)) else { continue };
                if let Some(e) = graph.entity_id(crate::catrag::bridge::title_entity_name(&p.title)) {
                    titles.insert(e);
                }
            }
            self.d.gold_title_entities += titles.len();
            self.d.gold_title_entities_anchored += titles.intersection(&anchored).count();
            if r.ppr.is_some() {
                let t = &r.sources;
                for (acc, x) in self.sources.iter_mut().zip([
                    t.fact_seeds,
                    t.anchors,
                    t.dense_prior,
                    t.lexical_prior,
                    t.title_bridges,
                    t.query_titles,
                    t.residual,
                ]) {
                    *acc += x;
                }
            }
            let kg = index.knowledge_graph();
            let cosines = match kg {
                Some(kg) if r.overlay.iter().any(|o| matches!(o.cause, OverlayCause::Tiered { .. })) => {
                    fact_cosines(graph, &kg.embedder().embed(query)?)?
                }
                _ => Vec::new(),
            };
            for o in &r.overlay {
                match o.cause {
                    OverlayCause::KeyFactBoost { .. } if gold.contains(&o.to) => self.d.boosted_to_gold += 1,
                    OverlayCause::Tiered { tier } if o.edge_type == crate::graph::EdgeType::Relation => {
                        let chain = in_gold(o.from) && in_gold(o.to);
                        let sim = crate::catrag::prune::candidates(graph, o.from, &cosines)
                            .into_iter()
                            .find(|c| c.neighbour == o.to)
                            .map_or(-1.0, |c| c.similarity);
                        let (tiers, sims) = if chain {
                            (&mut self.d.chain_edge_tiers, &mut self.chain_sims)
                        } else {
                            (&mut self.d.other_edge_tiers, &mut self.other_sims)
                        };
                        *tiers.entry(tier.name().to_string()).or_insert(0) += 1;
                        sims.push(sim);
                    }
                    _ => {}
                }
            }
        }
        let d = &mut self.d;
        d.queries += 1;
        if r.fallback.is_some() {
            d.fallbacks += 1;
        }
        if let Some(p) = &r.ppr {
            d.ppr_queries += 1;
            self.iterations += f64::from(p.iterations);
            if !p.converged {
                d.not_converged += 1;
            }
        }
        if r.floored {
            d.floored += 1;
        }
        if let Some(kg) = index.knowledge_graph() {
            if let Some(m) = mass_shares(&r.node_scores, kg.hubs()) {
                self.hub += m.hub_mass_share;
                self.top1 += m.top1_mass_share;
            }
            let q = kg.embedder().embed(query)?;
            if let Some(c) = fact_cosine_quantiles(&fact_cosines(kg.graph(), &q)?) {
                self.quantile_n += 1;
                for (acc, x) in self.quantiles.iter_mut().zip([c.p50, c.p90, c.p98, c.p999, c.max]) {
                    *acc += f64::from(x);
                }
            }
        }
        self.seeds += r.seeds.len() as f64;
        self.anchored += r.seeds.iter().filter(|s| s.channel != SeedChannel::Facts).count() as f64;
        for a in &r.anchors {
            d.mentions += 1;
            match a.how {
                Some(crate::catrag::MatchKind::Exact) => d.anchored_exact += 1,
                Some(crate::catrag::MatchKind::Embedding) => d.anchored_embedding += 1,
                None => d.mentions_dropped += 1,
            }
        }
        for o in &r.overlay {
            match o.cause {
                OverlayCause::KeyFactBoost { .. } => self.boosted += 1.0,
                OverlayCause::Pruned => self.pruned += 1.0,
                OverlayCause::Tiered { tier } => *d.tiers.entry(tier.name().to_string()).or_insert(0) += 1,
            }
        }
        d.tier_failures += r.tier_failures;
        Ok(())
    }

    fn finish(mut self) -> Diagnostics {
        let n = self.d.queries.max(1) as f64;
        let p = self.d.ppr_queries.max(1) as f64;
        self.d.mean_iterations = self.iterations / p;
        self.d.hub_mass_share = self.hub / p;
        self.d.top1_mass_share = self.top1 / p;
        self.d.mean_seeds = self.seeds / n;
        self.d.mean_anchored_seeds = self.anchored / n;
        self.d.mean_boosted_arcs = self.boosted / n;
        self.d.mean_pruned_arcs = self.pruned / n;
        let qn = self.quantile_n.max(1) as f64;
        for (name, v) in ["p50", "p90", "p98", "p99.9", "max"].iter().zip(self.quantiles) {
            self.d.fact_cosines.insert((*name).to_string(), v / qn);
        }
        let [f, a, d, l, b, t, r] = self.sources.map(|x| x / p);
        self.d.teleport_sources = crate::catrag::TeleportSources {
            fact_seeds: f,
            anchors: a,
            dense_prior: d,
            lexical_prior: l,
            title_bridges: b,
            query_titles: t,
            residual: r,
        };
        let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len().max(1) as f64;
        self.d.chain_edge_similarity = mean(&self.chain_sims);
        self.d.other_edge_similarity = mean(&self.other_sims);
        // AUC by ranks: pairs (chain, other) with chain > other, ties half.
        let mut pairs = 0.0f64;
        let mut wins = 0.0f64;
        let mut others = self.other_sims.clone();
        others.sort_by(f32::total_cmp);
        for &c in &self.chain_sims {
            let below = others.partition_point(|&x| x < c);
            let upto = others.partition_point(|&x| x <= c);
            wins += below as f64 + 0.5 * (upto - below) as f64;
            pairs += others.len() as f64;
        }
        self.d.chain_edge_auc = if pairs > 0.0 { wins / pairs } else { 0.5 };
        self.d
    }
}

/// The result of one evaluation run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Dataset folder name.
    pub dataset: String,
    /// Method name.
    pub method: String,
    /// The method with its ablation flags (`catrag --no-anchor`); the method name otherwise.
    pub label: String,
    /// Setting.
    pub setting: Setting,
    /// The k of `recall_at_k` / `fcr_at_k`; passages retrieved per question = max(k, 5).
    pub k: usize,
    /// Metrics over all questions.
    pub all: Scores,
    /// Metrics per question type, by type name.
    pub by_type: BTreeMap<String, Scores>,
    /// Mean wall-clock milliseconds per query, retrieval only (pool setting: the per-question
    /// index build is reported separately in `index_ms`).
    pub ms_per_query: f64,
    /// Total wall-clock milliseconds spent building indexes (graph methods: OpenIE and graph
    /// builds included).
    pub index_ms: f64,
    /// Graph methods: their configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catrag: Option<CatragConfig>,
    /// CAGE methods: their configuration (α, β, candidates, ablations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cage: Option<crate::cage::CageConfig>,
    /// Graph methods, corpus setting: how the graph build went (pool setting: the last pool's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphBuildReport>,
    /// Graph methods: per-query diagnostics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Diagnostics>,
    /// Generated answers' EM, F1 and JSR, when an answerer was given ([`EvalHooks::answerer`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers: Option<AnswerScores>,
    /// Every question's ranking, when asked for ([`EvalHooks::rankings`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rankings: Option<Vec<QuestionRanking>>,
}

/// One question's ranking in an evaluation run ([`EvalHooks::rankings`]).
#[derive(Debug, Clone, Serialize)]
pub struct QuestionRanking {
    /// Question id.
    pub id: String,
    /// Its gold passage ids.
    pub gold_ids: Vec<String>,
    /// The retrieved passage ids, best first (max(k, 5) of them).
    pub ranked: Vec<String>,
}

/// Answer quality of generated answers (docs/method/spec.md §5; CatRAG §4.3): means over the questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AnswerScores {
    /// Questions answered (or attempted).
    pub questions: usize,
    /// Mean exact match after SQuAD normalisation, best over the answer and its aliases, in [0, 1].
    pub em: f64,
    /// Mean token F1 after SQuAD normalisation, best over the answer and its aliases, in [0, 1].
    pub f1: f64,
    /// Joint Success Rate: mean of FCR@5 × EM per question, in [0, 1].
    pub jsr: f64,
    /// Answers the endpoint failed to give (scored 0).
    pub failed: usize,
}

/// SQuAD answer normalisation (the official evaluation script): lower case, punctuation
/// removed, the articles a / an / the removed, white space collapsed.
pub fn normalize_answer(s: &str) -> String {
    let lower = s.to_lowercase();
    let no_punct: String = lower.chars().filter(|c| !c.is_ascii_punctuation()).collect();
    no_punct.split_whitespace().filter(|w| !matches!(*w, "a" | "an" | "the")).collect::<Vec<_>>().join(" ")
}

/// Exact match of `prediction` with any of `golds` after [`normalize_answer`]: 1.0 or 0.0.
pub fn exact_match(prediction: &str, golds: &[&str]) -> f64 {
    let p = normalize_answer(prediction);
    if golds.iter().any(|g| normalize_answer(g) == p) {
        1.0
    } else {
        0.0
    }
}

/// SQuAD token F1 of `prediction` against the best of `golds` (normalised tokens, counted with
/// multiplicity), in [0, 1]; 0 when either side has no token.
pub fn answer_f1(prediction: &str, golds: &[&str]) -> f64 {
    let p = normalize_answer(prediction);
    let pt: Vec<&str> = p.split_whitespace().collect();
    golds
        .iter()
        .map(|g| {
            let g = normalize_answer(g);
            let gt: Vec<&str> = g.split_whitespace().collect();
            if pt.is_empty() || gt.is_empty() {
                return 0.0;
            }
            let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
            for t in &gt {
                *counts.entry(t).or_default() += 1;
            }
            let mut same = 0i64;
            for t in &pt {
                if let Some(c) = counts.get_mut(t) {
                    if *c > 0 {
                        *c -= 1;
                        same += 1;
                    }
                }
            }
            if same == 0 {
                return 0.0;
            }
            let precision = same as f64 / pt.len() as f64;
            let recall = same as f64 / gt.len() as f64;
            2.0 * precision * recall / (precision + recall)
        })
        .fold(0.0, f64::max)
}

/// Generates an answer to a question from passages `(title, text)`, best first.
pub type Answerer<'a> = dyn FnMut(&str, &[(String, String)]) -> Result<String> + 'a;

/// OpenIE for an evaluation's graphs: (corpus passage, its corpus index, its rule-based triples)
/// → the triples to index ([`EvalHooks::openie`]).
pub type OpenIe<'a> = dyn Fn(&crate::Passage, u32, &[Triple]) -> Vec<Triple> + 'a;

/// Optional extras of an evaluation run ([`evaluate_with`]).
#[derive(Default)]
pub struct EvalHooks<'a> {
    /// Makes the edge tierer CatRAG uses in every searcher (set with
    /// [`Searcher::set_edge_tierer`]); `None`: the offline embedding-similarity tierer.
    pub tierer: Option<&'a dyn Fn() -> Box<dyn EdgeTierer>>,
    /// Generates an answer to a question from its top-5 passages `(title, text)`, best first.
    /// An error scores 0 and counts in [`AnswerScores::failed`].
    pub answerer: Option<&'a mut Answerer<'a>>,
    /// Makes the query NER CatRAG's anchoring uses in every searcher (set with
    /// [`Searcher::set_entity_recognizer`]); `None`: the rule-based query NER.
    pub recognizer: Option<&'a dyn Fn() -> Box<dyn crate::catrag::EntityRecognizer>>,
    /// OpenIE for the graph methods instead of the rule-based triples: called with a corpus
    /// passage, its corpus index and its rule-based triples, returns the triples to index (the
    /// passage field is the corpus index). Called once per passage that some index needs, on
    /// first need: in the pool setting only the evaluated questions' pool passages, in the
    /// corpus setting every corpus passage. Its time counts in `index_ms`.
    pub openie: Option<&'a OpenIe<'a>>,
    /// Keep every question's ranked passage ids in [`Report::rankings`] (for reading which
    /// questions a method loses). Default false.
    pub rankings: bool,
    /// CAGE methods, evaluation only: replace each candidate's coherence by its oracle coherence
    /// against the question's gold passages' stored `Z` ([`crate::cage::oracle_coherence`]),
    /// fused as the search fuses ([`crate::cage::rank_fused`] with the configured relevance and
    /// α): the ceiling of what a perfect coherence signal could add to the first stage. Needs a
    /// relevance that comes from the first stage (`first-stage` or `rank`). Default false.
    pub oracle_coherence: bool,
    /// Ceilings of CatRAG's mechanisms ([`Oracle`]), one per configuration of the sweep in its
    /// order, or one for all of them; empty: none. `catrag` in the corpus or pool setting only.
    pub oracle: Vec<Oracle>,
}

/// Evaluation-only ceilings of CatRAG's mechanisms (CatRAG §3): each replaces one mechanism's
/// signal by the question's gold passages, to measure what the mechanism could add if its
/// signal were perfect. Only [`evaluate_sweep`] reads them; no product path (query, page,
/// configuration) can reach them. Serde names are the field names; `{}` is no oracle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Oracle {
    /// Oracle edge tiers: of the tiered seeds' edges, a relation edge whose two entities each
    /// occur in a gold passage, and a context edge from a tiered seed to a gold passage, are
    /// Direct; every other surviving edge is tiered by the tierer as usual (the offline one, or
    /// the endpoint's). Nothing under `no_tier`.
    pub tiers: bool,
    /// Oracle anchors: the anchor set is the gold passages' title entities (the entity node
    /// whose key is the title's, without a trailing qualifier such as "(film)"), instead of
    /// the query's mentions; each gets ε ÷ |its passages| as usual. Nothing under `no_anchor`.
    pub anchors: bool,
    /// Oracle key facts: every context arc from an entity of a seed fact to a gold passage is
    /// boosted by 1 + β, and no other arc (the boost with perfect key-fact verification).
    /// Nothing under `no_boost`.
    pub boost: bool,
}

impl Oracle {
    /// Whether any oracle is on.
    pub fn any(&self) -> bool {
        self.tiers || self.anchors || self.boost
    }

    /// The oracles that are on, as CLI flags (`--oracle-tiers`, …), for labels.
    pub fn flags(&self) -> Vec<&'static str> {
        [(self.tiers, "--oracle-tiers"), (self.anchors, "--oracle-anchors"), (self.boost, "--oracle-boost")]
            .into_iter()
            .filter_map(|(on, f)| on.then_some(f))
            .collect()
    }
}

/// The oracle anchors' query NER ([`Oracle::anchors`]): a question's (NFC) text → the names of
/// its gold passages' title entities that are entity nodes of the index's graph.
struct OracleRecognizer {
    names: std::collections::HashMap<String, Vec<String>>,
}

impl crate::catrag::EntityRecognizer for OracleRecognizer {
    fn name(&self) -> &str {
        "oracle-anchors"
    }

    fn entities(&self, query: &str) -> Result<Vec<String>> {
        Ok(self.names.get(query).cloned().unwrap_or_default())
    }
}

/// The [`OracleRecognizer`] of `questions` over `index` (its graph decides which titles are
/// entities). A question whose gold titles name no entity gets none (the rule-based mentions
/// then stand in, as for any recognizer that finds nothing).
fn oracle_recognizer(index: &Index, questions: &[Question]) -> OracleRecognizer {
    let mut names: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    if let Some(graph) = index.graph() {
        for q in questions {
            let entry = names.entry(crate::text::fold::nfc(&q.question).into_owned()).or_default();
            for id in &q.gold_ids {
                let Some(p) = index.corpus().index_of(id).and_then(|i| index.corpus().get(i)) else { continue };
                let name = crate::catrag::bridge::title_entity_name(&p.title);
                if graph.entity_id(name).is_some() && !entry.iter().any(|n| n == name) {
                    entry.push(name.to_string());
                }
            }
        }
    }
    OracleRecognizer { names }
}

/// The gold passages of `q` as passage nodes of `graph`.
fn gold_nodes(index: &Index, graph: &crate::graph::Graph, q: &Question) -> HashSet<u32> {
    q.gold_ids
        .iter()
        .filter_map(|id| index.corpus().index_of(id))
        .filter_map(|i| graph.passage_node(i))
        .collect()
}

/// One catrag query under `oracle`'s tiers and key facts ([`Oracle::tiers`], [`Oracle::boost`]):
/// the graph search's two halves ([`Searcher::prepare_graph`], [`Searcher::finish_graph`]) with
/// the boost's and the tiers' arcs replaced in between.
fn oracle_run(
    searcher: &mut Searcher<'_>,
    q: &Question,
    depth: usize,
    method: Method,
    oracle: Oracle,
) -> Result<crate::search::SearchResult> {
    use crate::catrag::{OverlayArc, Tier};
    use crate::graph::EdgeType;
    let index = searcher.index();
    let mut prepared = match searcher.prepare_graph(&Query::new(q.question.as_str(), depth, method))? {
        crate::search::GraphStep::Done(r) => return Ok(r),
        crate::search::GraphStep::Prepared(p) => p,
    };
    let graph = index.graph().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
    let gold = gold_nodes(index, graph, q);
    let in_gold = |e: u32| graph.passages_of(e).iter().any(|p| gold.contains(p));
    let cfg = prepared.query.config().clone();
    let csr = graph.csr();
    let context_arc = |e: u32, p: u32| crate::catrag::boost::find_arc(graph, e, p, EdgeType::Context);
    if oracle.boost && !cfg.no_boost {
        let beta = cfg.key_fact_boost;
        let mut entities: Vec<u32> = Vec::new();
        for f in &prepared.query.retrieval().facts {
            if let Some(fact) = graph.facts().get(f.fact as usize) {
                for e in [fact.subject, fact.object] {
                    if !entities.contains(&e) {
                        entities.push(e);
                    }
                }
            }
        }
        let mut gold_sorted: Vec<u32> = gold.iter().copied().collect();
        gold_sorted.sort_unstable();
        let overlay = prepared.query.overlay_mut();
        overlay.retain(|o| !matches!(o.cause, OverlayCause::KeyFactBoost { .. }));
        for &e in &entities {
            for &p in &gold_sorted {
                if let Some(a) = context_arc(e, p) {
                    overlay.push(OverlayArc {
                        arc: a as u32,
                        from: e,
                        to: p,
                        edge_type: EdgeType::Context,
                        static_weight: csr.weights[a],
                        multiplier: (1.0 + beta) as f32,
                        cause: OverlayCause::KeyFactBoost { key_facts: 1 },
                    });
                }
            }
        }
    }
    let (mut name, mut tiers) = searcher.tier_batches(&prepared.query, method)?;
    if oracle.tiers && !cfg.no_tier {
        for ((seed, candidates), answer) in prepared.query.batches().into_iter().zip(tiers.iter_mut()) {
            let mut t = answer.take().filter(|t| t.len() == candidates.len()).unwrap_or_else(|| vec![Tier::Weak; candidates.len()]);
            if in_gold(seed) {
                for (c, tier) in candidates.iter().zip(t.iter_mut()) {
                    if in_gold(c.neighbour) {
                        *tier = Tier::Direct;
                    }
                }
            }
            *answer = Some(t);
        }
        let mut gold_sorted: Vec<u32> = gold.iter().copied().collect();
        gold_sorted.sort_unstable();
        let seeds = prepared.query.tiered_seeds();
        let overlay = prepared.query.overlay_mut();
        for seed in seeds {
            for &p in &gold_sorted {
                if let Some(a) = context_arc(seed, p) {
                    overlay.push(OverlayArc {
                        arc: a as u32,
                        from: seed,
                        to: p,
                        edge_type: EdgeType::Context,
                        static_weight: csr.weights[a],
                        multiplier: cfg.tiers.direct,
                        cause: OverlayCause::Tiered { tier: Tier::Direct },
                    });
                }
            }
        }
        name = format!("oracle+{name}");
    }
    searcher.finish_graph(prepared, &name, tiers)
}

/// The evaluation's searcher over `index`: with a graph, CatRAG's tierer from `tierer` (else the
/// offline one) and its query NER the oracle anchors' recognizer over `questions` when
/// `oracle_anchors`, else `recognizer`'s (else the rule-based one).
fn eval_searcher<'i>(
    index: &'i Index,
    questions: &[Question],
    oracle_anchors: bool,
    tierer: Option<&dyn Fn() -> Box<dyn EdgeTierer>>,
    recognizer: Option<&dyn Fn() -> Box<dyn crate::catrag::EntityRecognizer>>,
) -> Searcher<'i> {
    let mut searcher = index.searcher();
    if index.graph().is_none() {
        return searcher;
    }
    searcher.set_edge_tierer(tierer.map(|make| make()));
    if oracle_anchors {
        searcher.set_entity_recognizer(Some(Box::new(oracle_recognizer(index, questions))));
    } else {
        searcher.set_entity_recognizer(recognizer.map(|make| make()));
    }
    searcher
}

#[derive(Default)]
struct Acc {
    n: usize,
    r2: f64,
    r5: f64,
    f5: f64,
    rk: f64,
    fk: f64,
}

impl Acc {
    fn add(&mut self, ranked: &[&str], gold: &[String], k: usize) {
        self.n += 1;
        self.r2 += recall_at(ranked, gold, 2);
        self.r5 += recall_at(ranked, gold, 5);
        self.f5 += full_chain_at(ranked, gold, 5);
        self.rk += recall_at(ranked, gold, k);
        self.fk += full_chain_at(ranked, gold, k);
    }
    fn scores(&self) -> Scores {
        let n = self.n.max(1) as f64;
        Scores {
            questions: self.n,
            recall_at_2: self.r2 / n,
            recall_at_5: self.r5 / n,
            fcr_at_5: self.f5 / n,
            recall_at_k: self.rk / n,
            fcr_at_k: self.fk / n,
        }
    }
}

/// The embedders an evaluation may use, by slot. A method whose slot is empty is an error.
#[derive(Clone, Default)]
pub struct Embedders {
    /// For `dense` and `hybrid`.
    pub static_embedder: Option<Rc<dyn Embedder>>,
    /// For `dense-minilm`.
    pub minilm: Option<Rc<dyn Embedder>>,
    /// The CAGE reranker, for `cage`, `bm25+cage` and `catrag+cage`.
    pub cage: Option<Rc<crate::cage::Cage>>,
}

impl Embedders {
    /// The embedder in `slot`, if any.
    pub fn get(&self, slot: EmbedderSlot) -> Option<&Rc<dyn Embedder>> {
        match slot {
            EmbedderSlot::Static => self.static_embedder.as_ref(),
            EmbedderSlot::Minilm => self.minilm.as_ref(),
        }
    }
}

/// Run `method` over every question of `dataset` in `setting` and average the metrics.
///
/// Dense methods embed every corpus passage once ([`Index::passage_text`]); in the pool setting
/// each question's index takes its pool's rows from those vectors. Embedding time counts in
/// `index_ms`; the query's own embedding counts in `ms_per_query`.
///
/// Graph methods (`hipporag`, `catrag`, configured by `config.catrag`) extract the corpus's
/// triples once ([`crate::extract::extract_corpus`]) and build the knowledge graph with the
/// static embedder: once in the corpus setting, once per question's pool in the pool setting.
/// Extraction and graph builds count in `index_ms`; diagnostics are computed outside the timed
/// query.
///
/// # Errors
/// [`Error::Dataset`] when the dataset has no questions; [`Error::Config`] for an invalid
/// `config` or `k == 0`; [`Error::MissingEmbedder`] when the method's embedder is not in
/// `embedders`; an embedder's own errors.
pub fn evaluate(
    dataset: &Dataset,
    setting: Setting,
    method: Method,
    k: usize,
    config: &IndexConfig,
    embedders: &Embedders,
) -> Result<Report> {
    evaluate_with(dataset, setting, method, k, config, embedders, EvalHooks::default())
}

/// [`evaluate`] with [`EvalHooks`]: CatRAG's edge tierer (an LLM tierer, say) and answer
/// generation from the top 5 passages (EM, F1, JSR in [`Report::answers`]; answer time is not
/// in `ms_per_query`).
///
/// # Errors
/// As [`evaluate`]; [`Error::MissingGraph`] should a tierer be given for an index without graph.
pub fn evaluate_with(
    dataset: &Dataset,
    setting: Setting,
    method: Method,
    k: usize,
    config: &IndexConfig,
    embedders: &Embedders,
    hooks: EvalHooks<'_>,
) -> Result<Report> {
    let mut reports =
        evaluate_sweep(dataset, setting, method, k, config, embedders, hooks, std::slice::from_ref(&config.catrag))?;
    reports.pop().ok_or_else(|| Error::Config("the evaluation produced no report".into()))
}

/// [`evaluate_with`] once per graph configuration in `catrag_configs` (in that order), over
/// indexes built once: the corpus setting builds the corpus index and its graph once and only
/// swaps the [`CatragConfig`] between runs, so a parameter sweep costs one graph build.
/// `config.catrag` is ignored; each report carries its own configuration.
///
/// # Errors
/// As [`evaluate`]; [`Error::Config`] for an empty `catrag_configs` or an invalid one.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_sweep(
    dataset: &Dataset,
    setting: Setting,
    method: Method,
    k: usize,
    config: &IndexConfig,
    embedders: &Embedders,
    mut hooks: EvalHooks<'_>,
    catrag_configs: &[CatragConfig],
) -> Result<Vec<Report>> {
    if catrag_configs.is_empty() {
        return Err(Error::Config("no CatRAG configuration to evaluate".into()));
    }
    for c in catrag_configs {
        c.validate()?;
    }
    if !(hooks.oracle.is_empty() || hooks.oracle.len() == 1 || hooks.oracle.len() == catrag_configs.len()) {
        return Err(Error::Config(format!(
            "{} oracles for {} configurations: give one, or one per configuration",
            hooks.oracle.len(),
            catrag_configs.len()
        )));
    }
    if hooks.oracle.iter().any(Oracle::any)
        && (method.graph_method() != Some(crate::catrag::GraphMethod::CatRag) || method.cage_first_stage().is_some())
    {
        return Err(Error::Config(format!(
            "the oracle ceilings replace CatRAG's signals: use the catrag method, not {}",
            method.name()
        )));
    }
    let oracles = std::mem::take(&mut hooks.oracle);
    let anchor_oracles = oracles.iter().any(|o| o.anchors);
    let tierer_hook = hooks.tierer;
    let recognizer_hook = hooks.recognizer;
    let openie_hook = hooks.openie;
    // The hook's triples by corpus passage, made on first need.
    let llm_triples: std::cell::RefCell<std::collections::HashMap<u32, Vec<Triple>>> = Default::default();
    if dataset.questions.is_empty() {
        return Err(Error::Dataset {
            path: dataset.name.clone(),
            message: "has no questions to evaluate".into(),
        });
    }
    if k == 0 {
        return Err(Error::Config("k must be at least 1".into()));
    }
    let embedder = match method.embedder() {
        None => None,
        Some(slot) => {
            let e = embedders.get(slot).ok_or_else(|| Error::MissingEmbedder {
                method: method.name().to_string(),
                embedder: slot.name().to_string(),
            })?;
            Some((slot, e.clone()))
        }
    };
    let depth = k.max(5);
    let mut index_ms = 0.0;
    // Passage vectors of the whole corpus, row i = corpus passage i.
    let vectors = match &embedder {
        None => None,
        Some((_, e)) => {
            let t = Instant::now();
            let texts: Vec<String> = dataset.corpus.passages().iter().map(Index::passage_text).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let rows = e.embed_batch(&refs, &mut |_, _| {})?;
            index_ms += t.elapsed().as_secs_f64() * 1e3;
            Some(VectorMatrix::from_rows(e.dim(), rows)?)
        }
    };
    // Graph methods: the corpus's triples, extracted once, by corpus passage.
    let graph_method = method.graph_method().is_some();
    // Graph methods with MiniLM loaded: its passage vectors too (the walk's passage prior takes
    // the best vectors the index holds).
    let graph_minilm = match (&embedders.minilm, graph_method && method.embedder() != Some(EmbedderSlot::Minilm)) {
        (Some(e), true) => {
            let t = Instant::now();
            let texts: Vec<String> = dataset.corpus.passages().iter().map(Index::passage_text).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let rows = e.embed_batch(&refs, &mut |_, _| {})?;
            index_ms += t.elapsed().as_secs_f64() * 1e3;
            Some((e.clone(), VectorMatrix::from_rows(e.dim(), rows)?))
        }
        _ => None,
    };
    let mut triples_of: Vec<Vec<Triple>> = Vec::new();
    let mut extract_stats = None;
    if graph_method {
        let t = Instant::now();
        let pipeline = Pipeline::english()?;
        let out = crate::extract::extract_corpus(&pipeline, &dataset.corpus, &mut |_, _| {});
        triples_of = vec![Vec::new(); dataset.corpus.len()];
        for t in out.triples {
            if let Some(v) = triples_of.get_mut(t.passage as usize) {
                v.push(t);
            }
        }
        extract_stats = Some(out.stats);
        index_ms += t.elapsed().as_secs_f64() * 1e3;
    }
    // CAGE methods: every corpus passage's graph embedding Z, computed once (docs/method/spec.md §4: Z
    // depends on the passage alone); each index stores its passages' rows.
    let mut cage_z: Option<(crate::cage::EncoderKey, usize, Vec<f32>)> = None;
    if let (Some(cage), Some(_), Some((_, e))) = (&embedders.cage, method.cage_first_stage(), &embedder) {
        let t = Instant::now();
        let key = cage.key(&config.cage)?;
        let mut all = Vec::new();
        let mut dim = 0;
        for chunk in dataset.corpus.passages().chunks(16) {
            let texts: Vec<(&str, &str)> = chunk.iter().map(|p| (p.title.as_str(), p.text.as_str())).collect();
            let (z, d) = cage.embed_graphs(&texts, e.as_ref(), &config.cage)?;
            all.extend(z);
            dim = d;
        }
        index_ms += t.elapsed().as_secs_f64() * 1e3;
        cage_z = Some((key, dim, all));
    }
    // Each index (the corpus's, or one per question's pool) is assembled by the engine from the
    // parts computed once above: pool passage j is corpus passage rows[j].
    let build = |corpus: Corpus, rows: &[u32], index_ms: &mut f64| -> Result<Index> {
        let t = Instant::now();
        let mut parts = Prebuilt::default();
        if let (Some((slot, e)), Some(v)) = (&embedder, &vectors) {
            let mut m = VectorMatrix::new(v.dim());
            for &r in rows {
                m.extend(v.row(r as usize).unwrap_or_default())?;
            }
            parts.vectors = Some((*slot, e.clone(), m));
            if let Some((key, dim, z)) = &cage_z {
                let mut mine = Vec::with_capacity(rows.len() * dim);
                for &r in rows {
                    mine.extend_from_slice(z.get(r as usize * dim..(r as usize + 1) * dim).unwrap_or_default());
                }
                parts.cage_z = Some((*key, *dim, mine));
            }
            if graph_method {
                let mut triples = Vec::new();
                for (j, &r) in rows.iter().enumerate() {
                    let rule = triples_of.get(r as usize).map(Vec::as_slice).unwrap_or(&[]);
                    match (openie_hook, dataset.corpus.get(r)) {
                        (Some(openie), Some(p)) => {
                            let mut cache = llm_triples.borrow_mut();
                            let got = cache.entry(r).or_insert_with(|| openie(p, r, rule));
                            for tr in got.iter() {
                                triples.push(Triple { passage: j as u32, ..tr.clone() });
                            }
                        }
                        _ => {
                            for tr in rule {
                                triples.push(Triple { passage: j as u32, ..tr.clone() });
                            }
                        }
                    }
                }
                let stats = if rows.len() == dataset.corpus.len() { extract_stats.clone() } else { None };
                parts.triples = Some((triples, stats));
            }
        }
        let cage = embedder.as_ref().and(embedders.cage.clone());
        let mut index = Engine::build_from_parts(corpus, config, cage, parts)?.into_index()?;
        // MiniLM's passage vectors for the graph methods' passage prior (attached after the
        // build: the graph does not depend on them).
        if let Some((e, v)) = &graph_minilm {
            let mut m = VectorMatrix::new(v.dim());
            for &r in rows {
                m.extend(v.row(r as usize).unwrap_or_default())?;
            }
            index.attach_vectors(EmbedderSlot::Minilm, e.clone(), m)?;
        }
        *index_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok(index)
    };
    let mut corpus_index = match setting {
        Setting::Corpus => {
            let rows: Vec<u32> = (0..dataset.corpus.len() as u32).collect();
            Some(build(dataset.corpus.clone(), &rows, &mut index_ms)?)
        }
        Setting::Pool => None,
    };
    let mut reports = Vec::with_capacity(catrag_configs.len());
    for (run, catrag) in catrag_configs.iter().enumerate() {
    let oracle = oracles.get(run).or_else(|| oracles.first().filter(|_| oracles.len() == 1)).copied().unwrap_or_default();
    let mut config = config.clone();
    config.catrag = catrag.clone();
    let config = &config;
    if let Some(idx) = corpus_index.as_mut() {
        idx.set_catrag_config(catrag.clone())?;
    }
    let mut corpus_searcher = corpus_index
        .as_ref()
        .map(|idx| eval_searcher(idx, &dataset.questions, anchor_oracles && oracle.anchors, tierer_hook, recognizer_hook));
    let mut all = Acc::default();
    let mut by_type: BTreeMap<String, Acc> = BTreeMap::new();
    let mut query_ms = 0.0;
    let mut rankings: Vec<QuestionRanking> = Vec::new();
    let mut diag = DiagAcc::default();
    let mut answers = AnswerScores::default();
    let mut graph_report = None;
    for q in &dataset.questions {
        // The question's search, timed.
        let mut ask = |searcher: &mut Searcher<'_>| -> Result<crate::search::SearchResult> {
            let t = Instant::now();
            let found = if oracle.tiers || oracle.boost {
                oracle_run(searcher, q, depth, method, oracle)?
            } else {
                searcher.run(&Query::new(q.question.as_str(), depth, method))?
            };
            query_ms += t.elapsed().as_secs_f64() * 1e3;
            Ok(found)
        };
        let pool_index;
        let (index, found) = match corpus_searcher.as_mut() {
            Some(s) => (s.index(), ask(s)?),
            None => {
                let mut pool = Corpus::new();
                let mut rows = Vec::new();
                for id in &q.pool_ids {
                    // A pool may name one passage twice; keep the first.
                    if let (Some(i), None) = (dataset.corpus.index_of(id), pool.index_of(id)) {
                        if let Some(p) = dataset.corpus.get(i) {
                            pool.add(p.clone())?;
                            rows.push(i);
                        }
                    }
                }
                let mut built = build(pool, &rows, &mut index_ms)?;
                built.set_catrag_config(catrag.clone())?;
                pool_index = built;
                let mut pool_searcher = eval_searcher(
                    &pool_index,
                    std::slice::from_ref(q),
                    anchor_oracles && oracle.anchors,
                    tierer_hook,
                    recognizer_hook,
                );
                (&pool_index, ask(&mut pool_searcher)?)
            }
        };
        if let (true, None, Some(retrieval)) = (graph_method, method.cage_first_stage(), &found.trace.retrieval) {
            diag.add(index, q, retrieval)?;
            if graph_report.is_none() || setting == Setting::Pool {
                graph_report = index.knowledge_graph().map(|g| g.report().clone());
            }
        }
        let hits = if hooks.oracle_coherence && method.cage_first_stage().is_some() {
            oracle_hits(index, &q.gold_ids, &found.trace.candidates, &config.cage, depth)?
        } else {
            found.hits
        };
        let ranked: Vec<&str> =
            hits.iter().filter_map(|h| index.corpus().get(h.passage).map(|p| p.id.as_str())).collect();
        if let Some(answer) = hooks.answerer.as_mut() {
            let top: Vec<(String, String)> = hits
                .iter()
                .take(5)
                .filter_map(|h| index.corpus().get(h.passage).map(|p| (p.title.clone(), p.text.clone())))
                .collect();
            let mut golds: Vec<&str> = vec![q.answer.as_str()];
            golds.extend(q.answer_aliases.iter().map(String::as_str));
            answers.questions += 1;
            match answer(&q.question, &top) {
                Ok(a) => {
                    let em = exact_match(&a, &golds);
                    answers.em += em;
                    answers.f1 += answer_f1(&a, &golds);
                    answers.jsr += em * full_chain_at(&ranked, &q.gold_ids, 5);
                }
                Err(_) => answers.failed += 1,
            }
        }
        if hooks.rankings {
            rankings.push(QuestionRanking {
                id: q.id.clone(),
                gold_ids: q.gold_ids.clone(),
                ranked: ranked.iter().map(|s| s.to_string()).collect(),
            });
        }
        all.add(&ranked, &q.gold_ids, k);
        by_type.entry(q.kind.clone().unwrap_or_else(|| "untyped".into())).or_default().add(
            &ranked,
            &q.gold_ids,
            k,
        );
    }
    let mut label = match (method.graph_method(), config.catrag.ablations()) {
        (Some(crate::catrag::GraphMethod::CatRag), flags) if !flags.is_empty() => {
            format!("{} {}", method.name(), flags.join(" "))
        }
        _ => method.name().to_string(),
    };
    if graph_minilm.is_some() {
        label.push_str(" --graph-minilm");
    }
    for f in oracle.flags() {
        label.push(' ');
        label.push_str(f);
    }
    if method.cage_first_stage().is_some() {
        if hooks.oracle_coherence {
            label.push_str(" --oracle-coherence");
        }
        for f in config.cage.ablations() {
            label.push(' ');
            label.push_str(f);
        }
        if (config.cage.alpha - crate::cage::CageConfig::default().alpha).abs() > 1e-6 {
            label.push_str(&format!(" alpha={}", config.cage.alpha));
        }
        if config.cage.anchors != crate::cage::CageConfig::default().anchors {
            label.push_str(&format!(" anchors={}", config.cage.anchors));
        }
        if config.cage.selection != crate::cage::CageSelection::default() {
            let name = serde_json::to_value(config.cage.selection).ok();
            label.push_str(&format!(" selection={}", name.as_ref().and_then(|v| v.as_str()).unwrap_or("?")));
        }
        if config.cage.relevance != crate::cage::CageRelevance::default() {
            let name = serde_json::to_value(config.cage.relevance).ok();
            label.push_str(&format!(" relevance={}", name.as_ref().and_then(|v| v.as_str()).unwrap_or("?")));
        }
    }
    reports.push(Report {
        dataset: dataset.name.clone(),
        method: method.name().to_string(),
        label,
        setting,
        k,
        all: all.scores(),
        by_type: by_type.into_iter().map(|(t, a)| (t, a.scores())).collect(),
        ms_per_query: query_ms / dataset.questions.len() as f64,
        index_ms,
        catrag: graph_method.then(|| config.catrag.clone()),
        cage: method.cage_first_stage().map(|_| config.cage.clone()),
        graph: graph_report,
        diagnostics: graph_method.then(|| diag.finish()),
        answers: hooks.answerer.is_some().then(|| {
            let n = answers.questions.max(1) as f64;
            AnswerScores { em: answers.em / n, f1: answers.f1 / n, jsr: answers.jsr / n, ..answers }
        }),
        rankings: hooks.rankings.then_some(rankings),
    });
    }
    Ok(reports)
}


/// The top `depth` of a CAGE search's `candidates` (first-stage order, from the search's trace)
/// reranked with oracle coherence ([`EvalHooks::oracle_coherence`]): evaluation only.
///
/// # Errors
/// [`Error::Config`] for cosine relevance (it needs the query's vector, which the oracle does not
/// recompute); [`Error::Model`]/[`Error::Config`] when the index has no stored `Z` for a row.
fn oracle_hits(
    index: &Index,
    gold_ids: &[String],
    candidates: &[crate::index::Hit],
    cage: &crate::cage::CageConfig,
    depth: usize,
) -> Result<Vec<crate::index::Hit>> {
    let z = index
        .cage_embeddings()
        .ok_or_else(|| Error::Config("the oracle coherence needs the index's stored graph embeddings".into()))?;
    let scores: Vec<f32> = candidates.iter().map(|h| h.score).collect();
    let relevance = cage.relevance.of_first_stage(&scores).ok_or_else(|| {
        Error::Config("the oracle coherence needs first-stage or rank relevance, not cosine".into())
    })?;
    let mut rows: Vec<usize> = candidates.iter().map(|h| h.passage as usize).collect();
    let mut gold = Vec::new();
    for id in gold_ids {
        if let Some(i) = index.corpus().index_of(id) {
            let i = i as usize;
            match rows.iter().position(|&r| r == i) {
                Some(at) => gold.push(at),
                None => {
                    gold.push(rows.len());
                    rows.push(i);
                }
            }
        }
    }
    let cos = z.cosines(&rows)?;
    let coh = crate::cage::oracle_coherence(&cos, candidates.len(), &gold);
    let ranked = crate::cage::rank_fused(&relevance, &coh, cage.alpha)?;
    Ok(ranked.iter().take(depth).map(|r| crate::index::Hit { passage: candidates[r.candidate].passage, score: r.score }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn squad_normalisation_em_and_f1_by_hand() {
        assert_eq!(normalize_answer("The  Eiffel Tower!"), "eiffel tower");
        assert_eq!(exact_match("the Eiffel tower.", &["Eiffel Tower"]), 1.0);
        assert_eq!(exact_match("Paris", &["London", "paris"]), 1.0);
        assert_eq!(exact_match("Paris, France", &["Paris"]), 0.0);
        // "paris france" vs "paris": precision 1/2, recall 1 → F1 2/3.
        assert!((answer_f1("Paris, France", &["Paris"]) - 2.0 / 3.0).abs() < 1e-12);
        // Multiplicity: "a a b" → tokens [b] after articles; "new new york" vs "new york": same 2,
        // precision 2/3, recall 1 → 0.8.
        assert!((answer_f1("new new york", &["New York"]) - 0.8).abs() < 1e-12);
        assert_eq!(answer_f1("", &["x"]), 0.0);
        assert_eq!(answer_f1("the", &["the"]), 0.0, "nothing left after normalisation");
        assert_eq!(answer_f1("yes", &["no", "yes"]), 1.0);
    }

    /// The oracle ceilings do what they say on the 10 hotpot-sample questions (corpus setting):
    /// the anchors are exactly the gold title entities, every tiered chain edge is Direct, every
    /// boosted arc goes to a gold passage; an oracle is refused for another method.
    #[test]
    fn oracle_ceilings_replace_the_signals_with_gold() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hotpot-sample");
        let ds = Dataset::load(&dir).unwrap();
        let e: Rc<dyn Embedder> = Rc::new(crate::embed::StaticEmbedder::minilm().unwrap());
        let embedders = Embedders { static_embedder: Some(e), ..Embedders::default() };
        let config = IndexConfig::default();
        let configs = vec![CatragConfig::default(); 4];
        let oracle = vec![
            Oracle::default(),
            Oracle { anchors: true, ..Oracle::default() },
            Oracle { tiers: true, ..Oracle::default() },
            Oracle { boost: true, ..Oracle::default() },
        ];
        let hooks = EvalHooks { oracle, ..EvalHooks::default() };
        let r = evaluate_sweep(&ds, Setting::Corpus, Method::Catrag, 5, &config, &embedders, hooks, &configs).unwrap();
        let d: Vec<Diagnostics> = r.iter().map(|r| r.diagnostics.clone().unwrap()).collect();
        assert!(d[0].gold_title_entities > 0);
        assert!(d[0].gold_title_entities_anchored < d[0].gold_title_entities, "{:?}", d[0]);
        assert_eq!(d[1].gold_title_entities_anchored, d[1].gold_title_entities);
        assert!(d[0].chain_edge_tiers.keys().any(|t| t != "direct"), "{:?}", d[0].chain_edge_tiers);
        assert_eq!(d[2].chain_edge_tiers.keys().collect::<Vec<_>>(), ["direct"]);
        assert_eq!(d[2].other_edge_tiers, d[0].other_edge_tiers, "other edges tiered as before");
        let boosted = (d[3].mean_boosted_arcs * d[3].queries as f64).round() as usize;
        assert!(boosted > 0 && boosted == d[3].boosted_to_gold, "{:?}", d[3]);
        assert_eq!(r[2].label, "catrag --oracle-tiers");
        let hooks = EvalHooks { oracle: vec![Oracle { tiers: true, ..Oracle::default() }], ..EvalHooks::default() };
        let bm25 = evaluate_with(&ds, Setting::Corpus, Method::Bm25, 5, &config, &embedders, hooks);
        assert!(matches!(bm25, Err(Error::Config(_))));
    }

    #[test]
    fn recall_and_fcr_by_hand() {
        let ranked = ["a", "x", "b", "y", "z", "c"];
        // gold {a, b}: @2 finds a → 1/2; @5 finds a, b → 1; FCR@5 = 1.
        assert_eq!(recall_at(&ranked, &g(&["a", "b"]), 2), 0.5);
        assert_eq!(recall_at(&ranked, &g(&["a", "b"]), 5), 1.0);
        assert_eq!(full_chain_at(&ranked, &g(&["a", "b"]), 5), 1.0);
        // gold {a, b, c}: c is 6th → @5 = 2/3, FCR@5 = 0, FCR@6 = 1.
        assert!((recall_at(&ranked, &g(&["a", "b", "c"]), 5) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(full_chain_at(&ranked, &g(&["a", "b", "c"]), 5), 0.0);
        assert_eq!(full_chain_at(&ranked, &g(&["a", "b", "c"]), 6), 1.0);
        // fewer hits than k, and no gold at all.
        assert_eq!(recall_at(&["b"], &g(&["a", "b"]), 5), 0.5);
        assert_eq!(recall_at(&ranked, &[], 5), 0.0);
        assert_eq!(full_chain_at(&ranked, &[], 5), 0.0);
    }
}
