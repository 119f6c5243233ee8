//! The [`Index`]: a corpus and the structures built over it, and ranked search over them.
//!
//! It holds BM25 ([`bm25`]) always, and passage vectors ([`dense`]) for each embedder attached
//! with [`Index::attach_embedder`]; the knowledge graph and the versioned binary format join it in
//! later versions. Ranking is deterministic: equal scores break by passage id.

pub mod bm25;
pub mod dense;

use std::cmp::Ordering;
use std::rc::Rc;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::corpus::{Corpus, Passage};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::text::Analyzer;

pub use bm25::{Bm25, Bm25Config};
pub use dense::{reciprocal_rank_fusion, DenseField, RRF_DEPTH, RRF_K};

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
    /// Cosine similarity of static-embedder vectors (Model2Vec-style, distilled from
    /// all-MiniLM-L6-v2; [`crate::embed::StaticEmbedder`]).
    Dense,
    /// Cosine similarity of all-MiniLM-L6-v2 vectors (the transformer itself).
    DenseMinilm,
    /// Reciprocal-rank fusion (k = 60) of `bm25` and `dense` ([`dense::reciprocal_rank_fusion`]).
    Hybrid,
}

/// The embedders a method can need; an [`Index`] holds passage vectors for each one attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedderSlot {
    /// The static embedder (methods `dense`, `hybrid`).
    Static,
    /// The MiniLM transformer (method `dense-minilm`).
    Minilm,
}

impl EmbedderSlot {
    /// Every slot.
    pub const ALL: [EmbedderSlot; 2] = [EmbedderSlot::Static, EmbedderSlot::Minilm];

    fn index(self) -> usize {
        self as usize
    }

    /// The slot's name (`static`, `minilm`).
    pub fn name(self) -> &'static str {
        match self {
            EmbedderSlot::Static => "static",
            EmbedderSlot::Minilm => "minilm",
        }
    }
}

impl Method {
    /// Every method's name, as accepted by `FromStr` and printed by `Display`.
    pub const NAMES: &'static [&'static str] = &["bm25", "dense", "dense-minilm", "hybrid"];

    /// Every method, in the order of [`Method::NAMES`].
    pub const ALL: [Method; 4] = [Method::Bm25, Method::Dense, Method::DenseMinilm, Method::Hybrid];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
            Method::Dense => "dense",
            Method::DenseMinilm => "dense-minilm",
            Method::Hybrid => "hybrid",
        }
    }

    /// The embedder whose passage vectors the method needs, if any.
    pub fn embedder(self) -> Option<EmbedderSlot> {
        match self {
            Method::Bm25 => None,
            Method::Dense | Method::Hybrid => Some(EmbedderSlot::Static),
            Method::DenseMinilm => Some(EmbedderSlot::Minilm),
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
        let wanted = s.trim().to_ascii_lowercase();
        Method::ALL
            .into_iter()
            .find(|m| m.name() == wanted)
            .ok_or_else(|| Error::UnknownMethod { name: s.to_string(), known: Method::NAMES.join(", ") })
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
    /// Heap bytes of the index structures (BM25 and passage vectors), passages' own text excluded.
    pub index_bytes: usize,
}

/// A corpus with its search structures, ready to query.
pub struct Index {
    corpus: Corpus,
    analyzer: Analyzer,
    bm25: Bm25,
    dense: [Option<DenseField>; 2],
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("passages", &self.corpus.len())
            .field("bm25_terms", &self.bm25.num_terms())
            .field("embedders", &self.embedders())
            .finish()
    }
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
        Ok(Index { corpus: std::mem::take(corpus), analyzer, bm25, dense: [None, None] })
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
            index_bytes: self.bm25.heap_bytes()
                + self.dense.iter().flatten().map(DenseField::heap_bytes).sum::<usize>(),
        }
    }

    /// The text a dense method embeds for a passage: `"{title} {text}"` (or just one of them).
    pub fn passage_text(p: &Passage) -> String {
        match (p.title.is_empty(), p.text.is_empty()) {
            (true, _) => p.text.clone(),
            (false, true) => p.title.clone(),
            (false, false) => format!("{} {}", p.title, p.text),
        }
    }

    /// Embed every passage with `embedder` and keep the vectors in `slot`, replacing any there.
    /// `progress(done, total)` counts passages.
    ///
    /// # Errors
    /// Whatever the embedder returns; the index is unchanged then.
    pub fn attach_embedder(
        &mut self,
        slot: EmbedderSlot,
        embedder: Rc<dyn Embedder>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<()> {
        let texts: Vec<String> = self.corpus.passages().iter().map(Self::passage_text).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        progress(0, refs.len());
        let rows = embedder.embed_batch(&refs, progress)?;
        let vectors = VectorMatrix::from_rows(embedder.dim(), rows)?;
        self.attach_vectors(slot, embedder, vectors)
    }

    /// Keep precomputed passage vectors (row `i` = passage `i`, made by `embedder` from
    /// [`Index::passage_text`]) in `slot`.
    ///
    /// # Errors
    /// [`Error::Config`] when the matrix has not one row per passage or its dimension is not the
    /// embedder's.
    pub fn attach_vectors(
        &mut self,
        slot: EmbedderSlot,
        embedder: Rc<dyn Embedder>,
        vectors: VectorMatrix,
    ) -> Result<()> {
        if vectors.len() != self.corpus.len() || (!vectors.is_empty() && vectors.dim() != embedder.dim()) {
            return Err(Error::Config(format!(
                "{} vectors of dimension {} for {} passages and a {}-dimensional embedder",
                vectors.len(),
                vectors.dim(),
                self.corpus.len(),
                embedder.dim()
            )));
        }
        self.dense[slot.index()] = Some(DenseField::new(embedder, vectors));
        Ok(())
    }

    /// The slots that hold passage vectors.
    pub fn embedders(&self) -> Vec<EmbedderSlot> {
        EmbedderSlot::ALL.into_iter().filter(|s| self.dense[s.index()].is_some()).collect()
    }

    /// The passage vectors of `slot`, if attached.
    pub fn dense(&self, slot: EmbedderSlot) -> Option<&DenseField> {
        self.dense[slot.index()].as_ref()
    }

    /// Whether `method` can run on this index (its embedder, if it needs one, is attached).
    pub fn supports(&self, method: Method) -> bool {
        method.embedder().is_none_or(|slot| self.dense[slot.index()].is_some())
    }

    /// The top `k` passages for `query` by `method`, best first; ties break by passage id.
    ///
    /// BM25 returns fewer than `k` hits when fewer passages share a term with the query (none
    /// for a query of stop words only). Dense methods score every passage (cosine in [-1, 1]);
    /// `hybrid` fuses the top [`RRF_DEPTH`] of each (score Σ 1/(60 + rank)).
    ///
    /// # Errors
    /// [`Error::MissingEmbedder`] when the method's embedder is not attached; the embedder's own
    /// error when it fails on the query.
    pub fn search(&self, query: &str, k: usize, method: Method) -> Result<Vec<Hit>> {
        let scored = match method {
            Method::Bm25 => self.bm25.score_all(&self.analyzer.terms(query)),
            Method::Dense | Method::DenseMinilm => self.field(method)?.score_all(query)?,
            Method::Hybrid => {
                let depth = k.max(RRF_DEPTH);
                let lexical = top_k(self.bm25.score_all(&self.analyzer.terms(query)), depth, &self.corpus);
                let dense = top_k(self.field(method)?.score_all(query)?, depth, &self.corpus);
                reciprocal_rank_fusion(&[&lexical, &dense], RRF_K)
            }
        };
        Ok(top_k(scored, k, &self.corpus))
    }

    fn field(&self, method: Method) -> Result<&DenseField> {
        let slot = method.embedder().unwrap_or(EmbedderSlot::Static);
        self.dense[slot.index()].as_ref().ok_or(Error::MissingEmbedder {
            method: method.name().to_string(),
            embedder: slot.name().to_string(),
        })
    }

    /// The distinct index terms of `query`, for [`Index::highlights`] (analyse a query once, then
    /// highlight as many passages as needed).
    pub fn query_terms(&self, query: &str) -> std::collections::HashSet<String> {
        self.analyzer.terms(query).into_iter().collect()
    }

    /// Byte ranges of `text` whose index term is one of `terms` (from [`Index::query_terms`]), in
    /// order, for highlighting.
    pub fn highlights(&self, terms: &std::collections::HashSet<String>, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if terms.is_empty() {
            return out;
        }
        self.analyzer.for_each_token(text, |term, s, e| {
            if terms.contains(term) {
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
