//! The [`Index`]: a corpus and the structures built over it, and ranked search over them.
//!
//! Version 0 holds BM25 ([`bm25`]); the knowledge graph, the vectors and the versioned binary
//! format join it in later versions. Ranking is deterministic: equal scores break by passage id.

pub mod bm25;

use std::cmp::Ordering;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::text::Analyzer;

pub use bm25::{Bm25, Bm25Config};

/// Configuration of every index structure, with the defaults of METHOD.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// BM25 parameters (k1 = 0.9, b = 0.4).
    pub bm25: Bm25Config,
}

/// A retrieval method. Parse one from its name with [`str::parse`]; [`Method::NAMES`] lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Okapi BM25 over title and text ([`bm25`]).
    Bm25,
}

impl Method {
    /// Every method's name, as accepted by `FromStr` and printed by `Display`.
    pub const NAMES: &'static [&'static str] = &["bm25"];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bm25" => Ok(Method::Bm25),
            _ => Err(Error::UnknownMethod { name: s.to_string(), known: Method::NAMES.join(", ") }),
        }
    }
}

/// One ranked result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// Internal passage index (see [`Corpus::get`]).
    pub passage: u32,
    /// The method's score (BM25: unbounded, > 0).
    pub score: f32,
}

/// Sizes of a built index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexStats {
    /// Passages indexed.
    pub passages: usize,
    /// Distinct index terms.
    pub terms: usize,
    /// (term, passage) postings.
    pub postings: usize,
    /// Average passage length in index terms.
    pub avg_passage_terms: f32,
    /// Bytes of title and text.
    pub text_bytes: usize,
    /// Heap bytes of the index structures, passages' own text excluded.
    pub index_bytes: usize,
}

/// A corpus with its search structures, ready to query.
#[derive(Debug)]
pub struct Index {
    corpus: Corpus,
    analyzer: Analyzer,
    bm25: Bm25,
}

impl Index {
    /// Build every structure over `corpus`.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters.
    pub fn build(corpus: Corpus, config: &IndexConfig) -> Result<Index> {
        Self::build_with_progress(corpus, config, &mut |_, _| {})
    }

    /// As [`Index::build`], calling `progress(done, total)` (passages) as it goes.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters.
    pub fn build_with_progress(
        mut corpus: Corpus,
        config: &IndexConfig,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Index> {
        Self::build_taking(&mut corpus, config, progress)
    }

    /// Build over `corpus` and move it into the index only when the build succeeds: on an error
    /// `corpus` is left as it was, so the caller loses nothing.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters.
    pub fn build_taking(
        corpus: &mut Corpus,
        config: &IndexConfig,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Index> {
        let analyzer = Analyzer::english();
        let bm25 = Bm25::build(corpus, &analyzer, config.bm25, progress)?;
        Ok(Index { corpus: std::mem::take(corpus), analyzer, bm25 })
    }

    /// Give the corpus back (to add passages and build again).
    pub fn into_corpus(self) -> Corpus {
        self.corpus
    }

    /// The indexed passages.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The analyzer used for passages and queries.
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The BM25 structure.
    pub fn bm25(&self) -> &Bm25 {
        &self.bm25
    }

    /// Sizes of the index.
    pub fn stats(&self) -> IndexStats {
        IndexStats {
            passages: self.corpus.len(),
            terms: self.bm25.num_terms(),
            postings: self.bm25.num_postings(),
            avg_passage_terms: self.bm25.avgdl(),
            text_bytes: self.corpus.text_bytes(),
            index_bytes: self.bm25.heap_bytes(),
        }
    }

    /// The top `k` passages for `query` by `method`, best first; ties break by passage id.
    ///
    /// Fewer than `k` hits come back when fewer passages match (BM25: share a term with the
    /// query); a query with no index terms (empty, or only stop words) gives no hits.
    pub fn search(&self, query: &str, k: usize, method: Method) -> Vec<Hit> {
        let scored = match method {
            Method::Bm25 => self.bm25.score_all(&self.analyzer.terms(query)),
        };
        top_k(scored, k, &self.corpus)
    }

    /// Byte ranges of `text` whose index term occurs in `query` (for highlighting), in order.
    pub fn highlights(&self, query: &str, text: &str) -> Vec<(usize, usize)> {
        let q: std::collections::HashSet<String> = self.analyzer.terms(query).into_iter().collect();
        let mut out = Vec::new();
        if q.is_empty() {
            return out;
        }
        self.analyzer.for_each_token(text, |term, s, e| {
            if q.contains(term) {
                out.push((s, e));
            }
        });
        out
    }
}

/// Order by score descending, then by passage id ascending (deterministic across platforms).
fn rank_order(corpus: &Corpus) -> impl Fn(&(u32, f32), &(u32, f32)) -> Ordering + '_ {
    move |a, b| {
        b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then_with(|| {
            let ia = corpus.get(a.0).map(|p| p.id.as_str());
            let ib = corpus.get(b.0).map(|p| p.id.as_str());
            ia.cmp(&ib)
        })
    }
}

/// The best `k` of `scored` in rank order.
pub(crate) fn top_k(mut scored: Vec<(u32, f32)>, k: usize, corpus: &Corpus) -> Vec<Hit> {
    let cmp = rank_order(corpus);
    if k == 0 {
        return Vec::new();
    }
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, &cmp);
        scored.truncate(k);
    }
    scored.sort_unstable_by(&cmp);
    scored.into_iter().map(|(passage, score)| Hit { passage, score }).collect()
}
