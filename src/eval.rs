//! Evaluation: the datasets of `../shared/data`, the retrieval metrics of METHOD.md §5, and the
//! harness through which every retrieval method reports.
//!
//! Two settings (`../shared/data/README.md`):
//! - [`Setting::Corpus`] (HippoRAG 2 / CatRAG): index the whole `corpus.jsonl` once and retrieve
//!   from all of it for every question;
//! - [`Setting::Pool`] (CAGE): for each question, index only its own `pool_ids` and rank those.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::corpus::{parse_jsonl, Corpus};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::index::{EmbedderSlot, Index, IndexConfig, Method};

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
        let mut corpus = Corpus::new();
        corpus.extend(parse_jsonl(&corpus_path.display().to_string(), &read(&corpus_path)?)?)?;
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
        Ok(Dataset { name, corpus, questions })
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

/// The result of one evaluation run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Dataset folder name.
    pub dataset: String,
    /// Method name.
    pub method: String,
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
    /// Total wall-clock milliseconds spent building indexes.
    pub index_ms: f64,
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
    let mut all = Acc::default();
    let mut by_type: BTreeMap<String, Acc> = BTreeMap::new();
    let mut query_ms = 0.0;
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
    let build = |corpus: Corpus, rows: &[u32], index_ms: &mut f64| -> Result<Index> {
        let t = Instant::now();
        let mut index = Index::build(corpus, config)?;
        if let (Some((slot, e)), Some(v)) = (&embedder, &vectors) {
            let mut m = VectorMatrix::new(v.dim());
            for &r in rows {
                m.extend(v.row(r as usize).unwrap_or_default())?;
            }
            index.attach_vectors(*slot, e.clone(), m)?;
        }
        *index_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok(index)
    };
    let corpus_index = match setting {
        Setting::Corpus => {
            let rows: Vec<u32> = (0..dataset.corpus.len() as u32).collect();
            Some(build(dataset.corpus.clone(), &rows, &mut index_ms)?)
        }
        Setting::Pool => None,
    };
    for q in &dataset.questions {
        let pool_index;
        let index = match &corpus_index {
            Some(idx) => idx,
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
                pool_index = build(pool, &rows, &mut index_ms)?;
                &pool_index
            }
        };
        let t = Instant::now();
        let hits = index.search(&q.question, depth, method)?;
        query_ms += t.elapsed().as_secs_f64() * 1e3;
        let ranked: Vec<&str> =
            hits.iter().filter_map(|h| index.corpus().get(h.passage).map(|p| p.id.as_str())).collect();
        all.add(&ranked, &q.gold_ids, k);
        by_type.entry(q.kind.clone().unwrap_or_else(|| "untyped".into())).or_default().add(
            &ranked,
            &q.gold_ids,
            k,
        );
    }
    Ok(Report {
        dataset: dataset.name.clone(),
        method: method.name().to_string(),
        setting,
        k,
        all: all.scores(),
        by_type: by_type.into_iter().map(|(t, a)| (t, a.scores())).collect(),
        ms_per_query: query_ms / dataset.questions.len() as f64,
        index_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
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
