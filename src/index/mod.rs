//! The [`Index`]: a corpus and the structures built over it, and ranked search over them.
//!
//! It holds BM25 ([`bm25`]) always, passage vectors ([`dense`]) for each embedder attached
//! with [`Index::attach_embedder`], and, once [`Index::build_graph`] has run, the knowledge graph
//! ([`knowledge`]) that the graph methods `hipporag` and `catrag` walk ([`crate::catrag`]). The
//! versioned binary format joins it in a later version. Ranking is deterministic: equal scores
//! break by passage id.

pub mod bm25;
pub mod dense;
pub mod format;
pub mod fuzzy;
mod persist;
pub mod knowledge;

use std::cmp::Ordering;
use std::rc::Rc;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::cage::{Cage, CageConfig, EncoderKey, GraphBatch, GraphEmbeddings, PassageGraph, Reranked};
use crate::catrag::{
    explain, top_entities, CatragConfig, EdgeTierer, EmbeddingSimilarityTierer, ExplainConfig, Fallback, GraphMethod,
    PassageExplanation, PathNode, QueryInput, Retrieval, Retriever,
};
use crate::corpus::{Corpus, Passage};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::extract::{ExtractStats, Triple};
use crate::graph::{Graph, GraphBuilder, GraphConfig};
use crate::text::fold::{fold_diacritics, nfc};
use crate::text::{Analyzer, Pipeline};

pub use bm25::{Bm25, Bm25Config, TermGroup};
pub use dense::{reciprocal_rank_fusion, DenseField, RRF_DEPTH, RRF_K};
use knowledge::Stopwatch;
pub use persist::LoadNotes;
pub use knowledge::{FactText, GraphBuildReport, GraphStage, KnowledgeGraph, PassageFacts};

/// Configuration of every index structure, with the defaults of METHOD.md. Serde names are the
/// field names; every field has a default (`{}` is the default configuration); unknown keys are
/// an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// BM25 parameters (k1 = 0.9, b = 0.4).
    pub bm25: Bm25Config,
    /// The knowledge graph (METHOD.md §1: synonym threshold 0.8, top-k 100, weights 1.0).
    pub graph: GraphConfig,
    /// The graph methods' query-time parameters (METHOD.md §3) and CatRAG's ablation flags.
    pub catrag: CatragConfig,
    /// CAGE reranking (METHOD.md §4: α, β_cage, candidates) and its ablation flags.
    pub cage: CageConfig,
}

/// Per-query options (the index-wide ones live in [`IndexConfig`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueryOptions {
    /// Treat the query's last word as a prefix still being typed (search as you type): BM25
    /// (and `hybrid`'s BM25 side) also match its completions ([`Bm25Config::prefix_weight`]).
    /// Default false.
    pub prefix: bool,
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
    /// HippoRAG 2's static Personalized PageRank over the knowledge graph: fact seeds and dense
    /// passage weights, no overlay ([`crate::catrag`], [`GraphMethod::HippoRag`]). Needs the
    /// static embedder and [`Index::build_graph`].
    Hipporag,
    /// CatRAG: HippoRAG 2 plus symbolic anchoring, key-fact boost, coarse pruning and edge tiering
    /// ([`crate::catrag`], [`GraphMethod::CatRag`]; ablations in [`CatragConfig`]). Needs the
    /// static embedder and [`Index::build_graph`].
    Catrag,
    /// CAGE (METHOD.md §4): `dense`'s top N (20) reranked by coherence fused with cos(query, p)
    /// ([`crate::cage`]). Needs the static embedder and [`Index::attach_cage`].
    #[serde(rename = "cage")]
    Cage,
    /// CAGE over `bm25`'s top N: relevance is still the static embedder's cos(query, p).
    #[serde(rename = "bm25+cage")]
    Bm25Cage,
    /// CAGE over `catrag`'s top N. Needs what `catrag` and `cage` need.
    #[serde(rename = "catrag+cage")]
    CatragCage,
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
    pub const NAMES: &'static [&'static str] = &[
        "bm25",
        "dense",
        "dense-minilm",
        "hybrid",
        "hipporag",
        "catrag",
        "cage",
        "bm25+cage",
        "catrag+cage",
    ];

    /// Every method, in the order of [`Method::NAMES`].
    pub const ALL: [Method; 9] = [
        Method::Bm25,
        Method::Dense,
        Method::DenseMinilm,
        Method::Hybrid,
        Method::Hipporag,
        Method::Catrag,
        Method::Cage,
        Method::Bm25Cage,
        Method::CatragCage,
    ];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Bm25 => "bm25",
            Method::Dense => "dense",
            Method::DenseMinilm => "dense-minilm",
            Method::Hybrid => "hybrid",
            Method::Hipporag => "hipporag",
            Method::Catrag => "catrag",
            Method::Cage => "cage",
            Method::Bm25Cage => "bm25+cage",
            Method::CatragCage => "catrag+cage",
        }
    }

    /// Whether the method ranks by meaning alone, so that a query sharing no word with any
    /// passage (a paraphrase) still has answers: `dense`, `dense-minilm` and `cage` (which
    /// reranks `dense`). The "nothing matches" rule ([`Index::nothing_matches`]) does not apply
    /// to them; every other method answers a query none of whose terms occurs in the corpus with
    /// no hit.
    pub fn ranks_by_meaning_alone(self) -> bool {
        matches!(self, Method::Dense | Method::DenseMinilm | Method::Cage)
    }

    /// For the CAGE methods, the first stage whose top N they rerank (`dense`, `bm25`,
    /// `catrag`); `None` for the others.
    pub fn cage_first_stage(self) -> Option<Method> {
        match self {
            Method::Cage => Some(Method::Dense),
            Method::Bm25Cage => Some(Method::Bm25),
            Method::CatragCage => Some(Method::Catrag),
            _ => None,
        }
    }

    /// The embedder whose passage vectors the method needs, if any (the graph methods use the
    /// static embedder's passage vectors for their dense passage weights).
    pub fn embedder(self) -> Option<EmbedderSlot> {
        match self {
            Method::Bm25 => None,
            Method::Dense
            | Method::Hybrid
            | Method::Hipporag
            | Method::Catrag
            | Method::Cage
            | Method::Bm25Cage
            | Method::CatragCage => Some(EmbedderSlot::Static),
            Method::DenseMinilm => Some(EmbedderSlot::Minilm),
        }
    }

    /// The graph method this is, if it walks the knowledge graph (then it also needs
    /// [`Index::build_graph`]); `catrag+cage` walks it as its first stage.
    pub fn graph_method(self) -> Option<GraphMethod> {
        match self {
            Method::Hipporag => Some(GraphMethod::HippoRag),
            Method::Catrag | Method::CatragCage => Some(GraphMethod::CatRag),
            _ => None,
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
    /// Heap bytes of the index structures (BM25, passage vectors and, once built, the knowledge
    /// graph's CSR and entity/fact vectors), passages' own text excluded.
    pub index_bytes: usize,
}

/// A graph query's ranked passages and everything the graph step computed
/// ([`Index::search_graph`]).
#[derive(Debug, Clone)]
pub struct GraphSearch {
    /// The top passages, best first; ties by passage id.
    pub hits: Vec<Hit>,
    /// Seeds, anchors, overlay, PPR report, fallback… (see [`Retrieval`]).
    pub retrieval: Retrieval,
}

/// A graph query explained ([`Index::explain`]): the hits, the query-level retrieval (seeds,
/// anchors, overlay, PPR report), the entities with the most PPR mass, and per hit why it ranked.
#[derive(Debug, Clone, Serialize)]
pub struct SearchExplanation {
    /// The method.
    pub method: Method,
    /// The tierer that ran, if any edge was tiered.
    pub tierer: Option<String>,
    /// The top passages, best first.
    pub hits: Vec<Hit>,
    /// The retrieval (per-node arrays omitted).
    pub retrieval: Retrieval,
    /// The entities with the most PPR mass in the whole graph.
    pub top_entities: Vec<PathNode>,
    /// One explanation per hit, in hit order.
    pub passages: Vec<PassageExplanation>,
}

/// Passages per encoder batch when computing graph embeddings ([`Index::compute_cage_z`]).
const CAGE_Z_BATCH: usize = 16;

/// A CAGE query's candidates ([`Index::cage_candidates`]): the first stage's hits and each
/// one's cos(query, p) with the static embedder, in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct CageCandidates {
    /// The first stage's top N, best first.
    pub hits: Vec<Hit>,
    /// cos(query, passage) per hit.
    pub relevance: Vec<f32>,
}

/// A corpus with its search structures, ready to query.
pub struct Index {
    corpus: Corpus,
    analyzer: Analyzer,
    bm25: Bm25,
    dense: [Option<DenseField>; 2],
    config: IndexConfig,
    graph: Option<KnowledgeGraph>,
    cage: Option<Rc<Cage>>,
    cage_z: Option<GraphEmbeddings>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("passages", &self.corpus.len())
            .field("bm25_terms", &self.bm25.num_terms())
            .field("embedders", &self.embedders())
            .field("graph", &self.graph)
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
        config.graph.validate()?;
        config.catrag.validate()?;
        config.cage.validate()?;
        let analyzer = Analyzer::english();
        let bm25 = Bm25::build(corpus, &analyzer, config.bm25, progress)?;
        Ok(Index {
            corpus: std::mem::take(corpus),
            analyzer,
            bm25,
            dense: [None, None],
            config: config.clone(),
            graph: None,
            cage: None,
            cage_z: None,
        })
    }

    /// The configuration the index was built with (its `catrag` part as last set).
    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// Replace the graph methods' query-time configuration (for example to switch an ablation
    /// on). Takes effect from the next search.
    ///
    /// # Errors
    /// [`Error::Config`] when `config` is out of range; the index is unchanged then.
    pub fn set_catrag_config(&mut self, config: CatragConfig) -> Result<()> {
        config.validate()?;
        self.config.catrag = config;
        Ok(())
    }

    /// Build the knowledge graph (METHOD.md §1) for the graph methods: rule-based OpenIE over
    /// every passage ([`crate::extract::extract_corpus`]), then [`GraphBuilder`] with `embedder`
    /// (the static embedder by default; queries are embedded with it too) and the index's
    /// [`GraphConfig`]. Replaces any graph built before. `progress(stage, done, total)` reports
    /// each long step.
    ///
    /// # Errors
    /// [`Error::Model`] if the text pipeline's resources fail to load; the graph builder's and
    /// the embedder's errors. The index keeps its previous graph (if any) on error.
    pub fn build_graph(
        &mut self,
        embedder: Rc<dyn Embedder>,
        progress: &mut dyn FnMut(GraphStage, usize, usize),
    ) -> Result<&GraphBuildReport> {
        let pipeline = Pipeline::english()?;
        let clock = Stopwatch::start();
        let out = crate::extract::extract_corpus(&pipeline, &self.corpus, &mut |d, t| {
            progress(GraphStage::Extracting, d, t)
        });
        let extract_ms = clock.ms();
        self.build_graph_from_triples(embedder, &out.triples, Some(out.stats), progress)?;
        if let Some(g) = &mut self.graph {
            g.report.extract_ms = extract_ms;
        }
        self.graph.as_ref().map(|g| &g.report).ok_or(Error::NotBuilt)
    }

    /// Build the knowledge graph from ready-made `triples` (each naming a corpus passage index),
    /// as [`Index::build_graph`] does after extraction. `extract` is kept in the report.
    ///
    /// # Errors
    /// [`Error::Passage`] when a triple names a passage index outside the corpus; the graph
    /// builder's and the embedder's errors. The index keeps its previous graph on error.
    pub fn build_graph_from_triples(
        &mut self,
        embedder: Rc<dyn Embedder>,
        triples: &[Triple],
        extract: Option<ExtractStats>,
        progress: &mut dyn FnMut(GraphStage, usize, usize),
    ) -> Result<&GraphBuildReport> {
        let pipeline = Pipeline::english()?;
        let mut report = GraphBuildReport { triples: triples.len(), extract, ..GraphBuildReport::default() };
        let mut builder = GraphBuilder::new(self.config.graph.clone())?;
        let clock = Stopwatch::start();
        report.add = builder.add_passages(0, self.corpus.passages(), triples)?;
        report.add_ms = clock.ms();
        let clock = Stopwatch::start();
        builder.embed(embedder.as_ref(), &mut |d, t| progress(GraphStage::Embedding, d, t))?;
        report.embed_ms = clock.ms();
        let clock = Stopwatch::start();
        report.synonyms = builder.link_synonyms(&mut |d, t| progress(GraphStage::Synonyms, d, t))?;
        report.synonyms_ms = clock.ms();
        let clock = Stopwatch::start();
        let graph = builder.finish()?;
        report.csr_ms = clock.ms();
        report.counts = graph.counts();
        self.graph = Some(KnowledgeGraph::new(graph, embedder, pipeline, report));
        self.graph.as_ref().map(|g| &g.report).ok_or(Error::NotBuilt)
    }

    /// Take the knowledge graph out of this index, to carry it over to the next index built over
    /// a grown corpus ([`Index::extend_graph`]).
    pub fn take_graph(&mut self) -> Option<KnowledgeGraph> {
        self.graph.take()
    }

    /// Adopt `old`, a knowledge graph built over the first `n` passages of this corpus (the
    /// previous index's, from [`Index::take_graph`]), and add passages `n..` to it (METHOD.md §1;
    /// the incremental add): only the new passages are run through OpenIE, only their new
    /// entities and facts are embedded, and only the new entities are compared with all others
    /// for synonym edges ([`Graph::extend`]); the result equals a full [`Index::build_graph`].
    /// With no new passage the graph is adopted as it is. The report's counts and extraction
    /// stats cover the whole graph; its times cover this call only.
    ///
    /// # Errors
    /// [`Error::Config`] when `old` covers more passages than this corpus has (it was built over
    /// another corpus; build afresh instead); the extractor's, builder's and embedder's errors.
    /// This index keeps no graph on error.
    pub fn extend_graph(
        &mut self,
        old: KnowledgeGraph,
        progress: &mut dyn FnMut(GraphStage, usize, usize),
    ) -> Result<&GraphBuildReport> {
        let first = old.report.counts.passages;
        let total = self.corpus.len();
        if first > total {
            return Err(Error::Config(format!(
                "the knowledge graph covers {first} passages but the corpus has {total}: build the graph again"
            )));
        }
        if first == total {
            self.graph = Some(old);
            return self.graph.as_ref().map(|g| &g.report).ok_or(Error::NotBuilt);
        }
        self.graph = None;
        let KnowledgeGraph { graph, embedder, pipeline, mut report, tierer, recognizer, .. } = old;
        let new = self.corpus.passages().get(first..).unwrap_or(&[]);
        let first_index = u32::try_from(first)
            .map_err(|_| Error::Config(format!("{first} passages exceed the graph's u32 passage ids")))?;
        let clock = Stopwatch::start();
        let out = crate::extract::extract_passages(&pipeline, first_index, new, &mut |d, t| {
            progress(GraphStage::Extracting, d, t)
        });
        let triples = out.triples;
        let mut stats = report.extract.take().unwrap_or_default();
        stats.merge(&out.stats);
        let extract_ms = clock.ms();
        let clock = Stopwatch::start();
        let (graph, add) =
            graph.extend(first_index, new, &triples, embedder.as_ref(), &mut |step, d, t| {
                let stage = match step {
                    crate::graph::BuildStep::Embedding => GraphStage::Embedding,
                    crate::graph::BuildStep::Synonyms => GraphStage::Synonyms,
                };
                progress(stage, d, t)
            })?;
        let extend_ms = clock.ms();
        report.triples += triples.len();
        report.extract = Some(stats);
        report.add = add;
        report.counts = graph.counts();
        report.extract_ms = extract_ms;
        report.add_ms = extend_ms;
        report.embed_ms = None;
        report.synonyms_ms = None;
        report.csr_ms = None;
        let mut kg = KnowledgeGraph::new(graph, embedder, pipeline, report);
        kg.tierer = tierer;
        kg.recognizer = recognizer;
        self.graph = Some(kg);
        self.graph.as_ref().map(|g| &g.report).ok_or(Error::NotBuilt)
    }

    /// The knowledge graph, once built.
    pub fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref().map(|g| &g.graph)
    }

    /// The knowledge graph with its embedder, build report and hubs, once built.
    pub fn knowledge_graph(&self) -> Option<&KnowledgeGraph> {
        self.graph.as_ref()
    }

    /// Use `recognizer` for the query mentions of CatRAG's symbolic anchoring instead of the text
    /// pipeline's rule-based query NER (METHOD.md §3 channel B, "optional LLM NER"). Where it
    /// fails or finds nothing, the rule-based mentions are used for that query. Kept until the
    /// graph is rebuilt.
    ///
    /// # Errors
    /// [`Error::MissingGraph`] before [`Index::build_graph`].
    pub fn set_entity_recognizer(&mut self, recognizer: Box<dyn crate::catrag::EntityRecognizer>) -> Result<()> {
        let g = self.graph.as_mut().ok_or(Error::MissingGraph { method: "catrag".into() })?;
        g.recognizer = Some(recognizer);
        Ok(())
    }

    /// Use `tierer` for CatRAG's edge tiering instead of the offline
    /// [`EmbeddingSimilarityTierer`] (for example an LLM tierer). Kept until the graph is rebuilt.
    ///
    /// # Errors
    /// [`Error::MissingGraph`] when no graph is built.
    pub fn set_edge_tierer(&mut self, tierer: Box<dyn EdgeTierer>) -> Result<()> {
        let g = self.graph.as_mut().ok_or(Error::MissingGraph { method: "catrag".into() })?;
        g.tierer = Some(tierer);
        Ok(())
    }

    /// Go back to the offline [`crate::catrag::EmbeddingSimilarityTierer`] after
    /// [`Index::set_edge_tierer`]. Does nothing without a graph.
    pub fn clear_edge_tierer(&mut self) {
        if let Some(g) = self.graph.as_mut() {
            g.tierer = None;
        }
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
                + self.dense.iter().flatten().map(DenseField::heap_bytes).sum::<usize>()
                + self.graph.as_ref().map_or(0, |g| {
                    // CSR (4 + 4 + 1 bytes per arc) and the entity and fact vectors.
                    let v = |m: &VectorMatrix| std::mem::size_of_val(m.as_slice());
                    g.graph.counts().arcs * 9 + v(g.graph.entity_vectors()) + v(g.graph.fact_vectors())
                }),
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

    /// Whether `method` can run on this index: its embedder, if it needs one, is attached, and for
    /// the graph methods (`hipporag`, `catrag`) the knowledge graph is built.
    pub fn supports(&self, method: Method) -> bool {
        method.embedder().map_or(true, |slot| self.dense[slot.index()].is_some())
            && (method.graph_method().is_none() || self.graph.is_some())
            && (method.cage_first_stage().is_none() || self.cage_ready().is_ok())
    }

    /// Whether nothing in the corpus matches `query`: none of its index terms (after folding,
    /// stemming and stop-word removal, [`crate::text::Analyzer`]) occurs in any passage. Every
    /// method but those that rank by meaning alone ([`Method::ranks_by_meaning_alone`]: dense
    /// methods exist to answer paraphrases) then returns no hit, the same way BM25 does, instead of ranking the corpus by
    /// noise (dense cosines near zero, PPR from the least unlikely facts): a query such as
    /// `"zzqx vvbn"` or `"???"` gets "nothing matches", not three confident passages. A query of
    /// stop words only matches nothing too.
    pub fn nothing_matches(&self, query: &str) -> bool {
        self.nothing_matches_with(query, false)
    }

    /// [`Index::nothing_matches`] with the query's typo and prefix expansion
    /// ([`Bm25::expand`]): a misspelt or half-typed term that reaches an index term matches. Costs
    /// one dictionary walk, no scoring (an expanded term is in the vocabulary, so it has postings).
    fn nothing_matches_with(&self, query: &str, prefix: bool) -> bool {
        let query = nfc(query);
        self.bm25.expand(&self.analyzer, &query, prefix).iter().all(|g| g.variants.is_empty())
    }

    /// The top `k` passages for `query` by `method`, best first; ties break by passage id.
    ///
    /// When [`Index::nothing_matches`] the query, every method returns no hit. The query is
    /// composed to NFC first ([`crate::text::fold::nfc`]).
    ///
    /// BM25 returns fewer than `k` hits when fewer passages share a term with the query (none
    /// for a query of stop words only). Dense methods score every passage (cosine in [-1, 1]);
    /// `hybrid` fuses the top [`RRF_DEPTH`] of each (score Σ 1/(60 + rank)). The graph methods
    /// rank every passage by PPR mass (in (0, 1]; or by dense cosine when the query has no seed,
    /// see [`Index::search_graph`]).
    ///
    /// # Errors
    /// [`Error::MissingEmbedder`] when the method's embedder is not attached;
    /// [`Error::MissingGraph`] when a graph method is asked before [`Index::build_graph`]; the
    /// embedder's own error when it fails on the query.
    pub fn search(&self, query: &str, k: usize, method: Method) -> Result<Vec<Hit>> {
        self.search_with(query, k, method, QueryOptions::default())
    }

    /// [`Index::search`] with per-query options (prefix matching of the last word).
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search_with(&self, query: &str, k: usize, method: Method, options: QueryOptions) -> Result<Vec<Hit>> {
        let query = &*nfc(query);
        // (BM25 itself returns nothing then: no second scoring pass for it.)
        if method != Method::Bm25
            && !method.ranks_by_meaning_alone()
            && self.nothing_matches_with(query, options.prefix)
        {
            return Ok(Vec::new());
        }
        if method.cage_first_stage().is_some() {
            return Ok(self.search_cage(query, k, method)?.into_iter().map(|(h, _)| h).collect());
        }
        if method.graph_method().is_some() {
            return Ok(self.search_graph(query, k, method)?.hits);
        }
        let scored = match method {
            Method::Bm25 => self.bm25.score_groups(&self.bm25.expand(&self.analyzer, query, options.prefix)),
            Method::Dense | Method::DenseMinilm => self.field(method)?.score_all(query)?,
            Method::Hybrid => {
                let depth = k.max(RRF_DEPTH);
                let groups = self.bm25.expand(&self.analyzer, query, options.prefix);
                let lexical = top_k(self.bm25.score_groups(&groups), depth, &self.corpus);
                let dense = top_k(self.field(method)?.score_all(query)?, depth, &self.corpus);
                reciprocal_rank_fusion(&[&lexical, &dense], RRF_K)
            }
            // handled above
            Method::Hipporag | Method::Catrag | Method::Cage | Method::Bm25Cage | Method::CatragCage => {
                Vec::new()
            }
        };
        Ok(top_k(scored, k, &self.corpus))
    }

    /// A graph method's search with everything the graph step computed (METHOD.md §2–3;
    /// [`crate::catrag::Retriever::retrieve`]): the query is embedded once with the static
    /// embedder for the dense passage weights (and with the graph's embedder for the facts, if
    /// that is another one), its mentions are found by the text pipeline's query NER (CatRAG with
    /// anchoring on), and every passage is ranked by its PPR mass, ties by passage id. Duplicate
    /// passages share one graph node and its score.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that is not a graph method;
    /// [`Error::MissingEmbedder`] without the static embedder's passage vectors;
    /// [`Error::MissingGraph`] before [`Index::build_graph`]; the embedder's errors.
    pub fn search_graph(&self, query: &str, k: usize, method: Method) -> Result<GraphSearch> {
        // `catrag+cage` walks the graph only as its first stage: search it with `search`.
        let gm = method.graph_method().filter(|_| method.cage_first_stage().is_none()).ok_or_else(|| Error::UnknownMethod {
            name: method.name().to_string(),
            known: "hipporag, catrag".into(),
        })?;
        let field = self.field(method)?;
        let kg = self.graph.as_ref().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
        let query = &*nfc(query);
        // A retrieval that walked nothing: no seed, no tiering call, no PPR.
        let unwalked = |fallback: Option<Fallback>, warning: &str, scores: &[f32]| Retrieval {
            method: gm,
            ablations: Vec::new(),
            facts: Vec::new(),
            seeds: Vec::new(),
            anchors: Vec::new(),
            overlay: Vec::new(),
            tierer: None,
            tier_failures: 0,
            ppr: None,
            floored: false,
            fallback,
            warnings: vec![warning.to_string()],
            passage_scores: kg
                .graph
                .passage_nodes()
                .iter()
                .map(|&n| {
                    let best = kg.graph.passage_indices(n).iter().filter_map(|&i| scores.get(i as usize)).fold(
                        f64::NEG_INFINITY,
                        |m, &x| m.max(f64::from(x)),
                    );
                    if best.is_finite() { best } else { 0.0 }
                })
                .collect(),
            node_scores: Vec::new(),
            teleport: Vec::new(),
        };
        if self.nothing_matches(query) {
            return Ok(GraphSearch { hits: Vec::new(), retrieval: unwalked(None, NOTHING_MATCHES, &[]) });
        }
        let q = field.embedder().embed(query)?;
        let query_is_zero = crate::embed::is_zero(&q);
        // The passage prior takes the best passage vectors the index holds: MiniLM's when attached.
        let transformer = match self.dense(EmbedderSlot::Minilm) {
            Some(f) if !self.config.catrag.no_transformer_prior && !f.vectors().is_empty() => Some(f),
            _ => None,
        };
        let passage_scores = match transformer {
            Some(f) => f.vectors().scores(&f.embedder().embed(query)?)?,
            None if field.vectors().is_empty() => Vec::new(),
            None => field.vectors().scores(&q)?,
        };
        // The graph's facts and the query NER are English (rule OpenIE skips passages that do
        // not look English): a query in another script has no seed to walk from, only noise
        // near the top of the fact ranking. HippoRAG 2's answer to a query without seeds is
        // the dense ranking; so it is here, said in the fallback and a warning. Accents are
        // folded first, so "Pál Erdős" is judged English by its letters; a query without
        // letters ("1994") is left to the graph.
        let language = kg.pipeline.analyze("", &fold_diacritics(query)).language;
        if language.letter_words > 0 && !language.english {
            let hits = if query_is_zero {
                Vec::new()
            } else {
                let scored = passage_scores.iter().enumerate().map(|(i, &s)| (i as u32, s)).collect();
                top_k(scored, k, &self.corpus)
            };
            let retrieval = unwalked(Some(Fallback::NoSeeds), NOT_ENGLISH, &passage_scores);
            return Ok(GraphSearch { hits, retrieval });
        }
        let graph_q =
            if Rc::ptr_eq(field.embedder(), &kg.embedder) { q } else { kg.embedder.embed(query)? };
        let transformer_cfg = transformer.map(|_| self.config.catrag.with_transformer_prior());
        let cfg = transformer_cfg.as_ref().unwrap_or(&self.config.catrag);
        let mentions = if gm == GraphMethod::CatRag && !cfg.no_anchor {
            match kg.recognizer.as_ref().map(|r| r.entities(query)) {
                Some(Ok(names)) if !names.is_empty() => llm_mentions(query, &names),
                // No recognizer, or it failed / found nothing: the rule-based query NER.
                _ => kg.pipeline.query_entities(query),
            }
        } else {
            Vec::new()
        };
        let mentions = self.correct_mentions(kg, mentions);
        // The lexical passage prior: BM25 of the query with every corpus passage.
        let bridges = cfg.bridge_weight > 0.0 && !cfg.no_bridge;
        let lexical_scores = if (cfg.lexical_passage_weight > 0.0 && !cfg.no_lexical) || bridges {
            let mut v = vec![0f32; self.corpus.len()];
            for (d, s) in self.bm25.score_groups(&self.bm25.expand(&self.analyzer, query, false)) {
                if let Some(x) = v.get_mut(d as usize) {
                    *x = s;
                }
            }
            v
        } else {
            Vec::new()
        };
        let input = QueryInput {
            query,
            query_vector: &graph_q,
            passage_scores: &passage_scores,
            lexical_scores: &lexical_scores,
            titles: bridges.then(|| {
                kg.titles.get_or_init(|| {
                    crate::catrag::bridge::TitleIndex::build(&kg.graph, |i| {
                        self.corpus.get(i).map(|p| p.title.as_str())
                    })
                })
            }),
            mentions: &mentions,
        };
        let fallback_tierer = EmbeddingSimilarityTierer { thresholds: cfg.similarity_tiers };
        let tierer: &dyn EdgeTierer = kg.tierer.as_deref().unwrap_or(&fallback_tierer);
        let retrieval = match kg.retriever.try_borrow_mut() {
            Ok(mut r) => r.retrieve(&kg.graph, gm, &input, kg.embedder.as_ref(), tierer, cfg)?,
            Err(_) => Retriever::new().retrieve(&kg.graph, gm, &input, kg.embedder.as_ref(), tierer, cfg)?,
        };
        // Passage node scores → corpus passages, ranked in f64, ties by passage id.
        let graph = &kg.graph;
        let mut scored: Vec<(u32, f64)> = Vec::with_capacity(self.corpus.len());
        for (&node, &s) in graph.passage_nodes().iter().zip(&retrieval.passage_scores) {
            for &i in graph.passage_indices(node) {
                scored.push((i, if s.is_finite() { s } else { f64::NEG_INFINITY }));
            }
        }
        // No seed and a query the embedder knows no token of: the dense fallback's scores are
        // all 0, so nothing matches (as for the dense methods).
        let hits = if retrieval.fallback.is_some() && query_is_zero {
            Vec::new()
        } else {
            top_k_f64(scored, k, &self.corpus)
        };
        Ok(GraphSearch { hits, retrieval })
    }

    /// Typo tolerance for anchoring ([`fuzzy::EntityLookup`]): a name mention that matches no
    /// entity exactly is rewritten to the display name of the one entity nearest to it within
    /// BM25's typo budget, so that anchoring finds it exactly; others are left as they are.
    /// Nothing changes when [`Bm25Config::typos`] is off.
    fn correct_mentions(&self, kg: &KnowledgeGraph, mut mentions: Vec<crate::text::Mention>) -> Vec<crate::text::Mention> {
        use crate::text::EntityKind;
        if !self.config.bm25.typos {
            return mentions;
        }
        for m in &mut mentions {
            if matches!(m.kind, EntityKind::Date | EntityKind::Number) || kg.graph.entity_id(&m.text).is_some() {
                continue;
            }
            let lookup = kg.entity_lookup.get_or_init(|| fuzzy::EntityLookup::new(&kg.graph));
            if let Some((node, _)) = lookup.nearest(&m.text, &self.config.bm25) {
                if let Some(crate::graph::NodeRef::Entity { name, .. }) = kg.graph.node(node) {
                    m.text = name.to_string();
                }
            }
        }
        mentions
    }

    /// [`Index::search_graph`] and an explanation of every hit ([`crate::catrag::explain()`]):
    /// its seeds, its entities by PPR mass and the best paths from a seed to it, with each arc's
    /// type, weight and multiplier; plus the entities with the most mass overall.
    ///
    /// # Errors
    /// As [`Index::search_graph`].
    pub fn explain(
        &self,
        query: &str,
        k: usize,
        method: Method,
        config: &ExplainConfig,
    ) -> Result<SearchExplanation> {
        let found = self.search_graph(query, k, method)?;
        let kg = self.graph.as_ref().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
        let graph = &kg.graph;
        let damping = self.config.catrag.ppr.damping;
        let mut passages = Vec::with_capacity(found.hits.len());
        for h in &found.hits {
            if let Some(node) = graph.passage_node(h.passage) {
                passages.push(explain(graph, &found.retrieval, node, damping, config)?);
            }
        }
        Ok(SearchExplanation {
            method,
            tierer: found.retrieval.tierer.clone(),
            hits: found.hits,
            top_entities: top_entities(graph, &found.retrieval, config.top_entities),
            retrieval: found.retrieval,
            passages,
        })
    }

    /// Attach the CAGE reranker (its R-GCN, and the GCN for the ablation) for the methods
    /// `cage`, `bm25+cage` and `catrag+cage`.
    pub fn attach_cage(&mut self, cage: Rc<Cage>) {
        self.cage = Some(cage);
    }

    /// The attached CAGE reranker, if any.
    pub fn cage(&self) -> Option<&Rc<Cage>> {
        self.cage.as_ref()
    }

    /// Replace CAGE's configuration (α, β, candidates, ablations). Takes effect from the next
    /// search.
    ///
    /// # Errors
    /// [`Error::Config`] when `config` is out of range; the index is unchanged then.
    pub fn set_cage_config(&mut self, config: CageConfig) -> Result<()> {
        config.validate()?;
        self.config.cage = config;
        Ok(())
    }

    /// Compute CAGE's graph embedding `Z` (METHOD.md §4) of every passage that has none yet
    /// under the current configuration, with the attached encoder ([`Index::attach_cage`]) and
    /// the static embedder's node features, and store them with the index (saved in the index
    /// file). Memoised: rows already computed with the same encoder, β and channel layout are
    /// kept (a grown corpus computes only its new passages); a different encoder or β starts
    /// afresh. `progress(done, total)` counts passages. Returns how many were computed.
    ///
    /// # Errors
    /// [`Error::Model`] without an attached encoder; [`Error::MissingEmbedder`] without the
    /// static embedder; the encoder's errors (rows computed before the error are kept).
    pub fn compute_cage_z(&mut self, progress: &mut dyn FnMut(usize, usize)) -> Result<usize> {
        let cage = self.cage.clone().ok_or_else(|| Error::Model {
            what: "CAGE".into(),
            message: "computing graph embeddings needs the CAGE encoder: attach it first (cargo feature `cage`)".into(),
        })?;
        let cfg = self.config.cage.clone();
        let key = cage.key(&cfg)?;
        let encoder = cage.encoder(&cfg)?.clone();
        self.field(Method::Dense)?; // the static embedder gives the node features
        let n = self.corpus.len();
        let mut store = match self.cage_z.take() {
            Some(z) if z.key() == key && z.dim() == encoder.dim() => z,
            _ => GraphEmbeddings::new(key, encoder.dim(), n),
        };
        store.resize(n);
        let missing = store.missing();
        let total = missing.len();
        let mut done = 0;
        let mut result = Ok(());
        for chunk in missing.chunks(CAGE_Z_BATCH) {
            // The same passage graphs and tensors as the page's path (`cage_batch_of`).
            let z = self.cage_batch_of(chunk).and_then(|(_, b)| encoder.encode(&b));
            let z = match z {
                Ok(z) => z,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let dim = encoder.dim();
            for (k, &i) in chunk.iter().enumerate() {
                if let Some(Err(e)) = z.get(k * dim..(k + 1) * dim).map(|row| store.set(i, row)) {
                    result = Err(e);
                }
            }
            if result.is_err() {
                break;
            }
            done += chunk.len();
            progress(done, total);
        }
        self.cage_z = Some(store);
        result.map(|()| done)
    }

    /// The stored CAGE graph embeddings, if any have been computed or loaded.
    pub fn cage_embeddings(&self) -> Option<&GraphEmbeddings> {
        self.cage_z.as_ref()
    }

    /// Take the stored graph embeddings out, to carry them to the next index built over a grown
    /// corpus ([`Index::adopt_cage_embeddings`]).
    pub fn take_cage_embeddings(&mut self) -> Option<GraphEmbeddings> {
        self.cage_z.take()
    }

    /// Adopt graph embeddings computed over the first passages of this corpus (a previous index's,
    /// [`Index::take_cage_embeddings`]): their rows are kept, passages past them have none yet.
    pub fn adopt_cage_embeddings(&mut self, mut z: GraphEmbeddings) {
        z.resize(self.corpus.len());
        self.cage_z = Some(z);
    }

    /// Passages (corpus positions) with no graph embedding under `key` (all of them when the
    /// stored ones were made with another key or none are stored), ascending.
    pub fn cage_missing(&self, key: EncoderKey) -> Vec<usize> {
        match &self.cage_z {
            Some(z) if z.key() == key && z.rows() == self.corpus.len() => z.missing(),
            _ => (0..self.corpus.len()).collect(),
        }
    }

    /// Store graph embeddings computed elsewhere (for example by the encoder in another wasm
    /// package): `z` holds `rows.len() × dim` floats, row k for passage `rows[k]`, made under
    /// `key`. Embeddings stored under another key are dropped first.
    ///
    /// # Errors
    /// [`Error::Config`] when the lengths disagree, a row is out of range or a value is not
    /// finite; the store is left as it was then.
    pub fn store_cage_z(&mut self, key: EncoderKey, rows: &[usize], z: &[f32], dim: usize) -> Result<()> {
        if dim == 0 || z.len() != rows.len() * dim {
            return Err(Error::Config(format!("expected {} graph embeddings of {dim} floats, got {} floats", rows.len(), z.len())));
        }
        let n = self.corpus.len();
        let mut store = match &self.cage_z {
            Some(s) if s.key() == key && s.dim() == dim => s.clone(),
            _ => GraphEmbeddings::new(key, dim, n),
        };
        store.resize(n);
        for (k, &i) in rows.iter().enumerate() {
            store.set(i, &z[k * dim..(k + 1) * dim])?;
        }
        self.cage_z = Some(store);
        Ok(())
    }

    /// Whether the CAGE methods can run: graph embeddings stored for every passage with the
    /// configured β and channel layout (and, when an encoder is attached, made by it).
    fn cage_ready(&self) -> Result<&GraphEmbeddings> {
        let cfg = &self.config.cage;
        let not_ready = |why: String| Error::Model { what: "CAGE".into(), message: why };
        let z = self.cage_z.as_ref().ok_or_else(|| {
            not_ready("no graph embeddings are stored: compute them first (Index::compute_cage_z, cairn index --cage)".into())
        })?;
        let key = z.key();
        if key.beta != cfg.effective_beta() || key.merged != cfg.plain_gcn {
            return Err(not_ready(format!(
                "the stored graph embeddings were computed with beta {} and {} channels; the configuration asks for beta {} and {}: compute them again",
                key.beta,
                if key.merged { "merged" } else { "typed" },
                cfg.effective_beta(),
                if cfg.plain_gcn { "merged" } else { "typed" }
            )));
        }
        if let Some(cage) = &self.cage {
            if cage.key(cfg)?.model != key.model {
                return Err(not_ready("the stored graph embeddings were made by another encoder: compute them again".into()));
            }
        }
        if z.rows() != self.corpus.len() || !z.missing().is_empty() {
            return Err(not_ready(format!(
                "graph embeddings are stored for {} of {} passages: compute the rest first",
                z.rows() - z.missing().len(),
                self.corpus.len()
            )));
        }
        Ok(z)
    }

    /// A CAGE method's search (METHOD.md §4): [`Index::cage_candidates`], then coherence over the
    /// candidates' stored graph embeddings (a 20 × 20 cosine matrix; no encoder runs) and fusion.
    /// Returns the top `k` hits (score = fused score) with their [`Reranked`] details.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that is not a CAGE method; [`Error::Model`] when the
    /// graph embeddings are not stored for every passage under the configuration
    /// ([`Index::compute_cage_z`]); the first stage's errors.
    pub fn search_cage(&self, query: &str, k: usize, method: Method) -> Result<Vec<(Hit, Reranked)>> {
        let z = self.cage_ready()?;
        let found = self.cage_candidates(query, method)?;
        let rows: Vec<usize> = found.hits.iter().map(|h| h.passage as usize).collect();
        let cos = z.cosines(&rows)?;
        let reranked = crate::cage::rerank_cosines(&found.relevance, &cos, self.config.cage.alpha, self.config.cage.anchors)?;
        Ok(reranked
            .into_iter()
            .take(k)
            .map(|r| (Hit { passage: found.hits[r.candidate].passage, score: r.score }, r))
            .collect())
    }

    /// CAGE's first half (METHOD.md §4): the first stage's top `candidates` (N = 20;
    /// [`Method::cage_first_stage`]) and each one's cos(query, p) with the static embedder.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that is not a CAGE method;
    /// [`Error::MissingEmbedder`] without the static embedder; the first stage's errors.
    pub fn cage_candidates(&self, query: &str, method: Method) -> Result<CageCandidates> {
        let first = method.cage_first_stage().ok_or_else(|| Error::UnknownMethod {
            name: method.name().to_string(),
            known: "cage, bm25+cage, catrag+cage".into(),
        })?;
        let field = self.field(Method::Dense)?;
        let hits = self.search(query, self.config.cage.candidates, first)?;
        let relevance = match self.config.cage.relevance {
            crate::cage::CageRelevance::Cosine => {
                let q = field.embedder().embed(query)?;
                hits.iter()
                    .map(|h| field.vectors().row(h.passage as usize).map_or(0.0, |v| crate::embed::dot(v, &q)))
                    .collect()
            }
            crate::cage::CageRelevance::FirstStage => {
                crate::cage::minmax(&hits.iter().map(|h| h.score).collect::<Vec<f32>>())
            }
        };
        Ok(CageCandidates { hits, relevance })
    }

    /// The R-GCN's input tensors for `candidates` (passage graphs with β as configured, node
    /// features from the static embedder; merged channels for the plain-GCN ablation).
    ///
    /// # Errors
    /// [`Error::MissingEmbedder`] without the static embedder.
    pub fn cage_batch(&self, candidates: &CageCandidates) -> Result<(Vec<PassageGraph>, GraphBatch)> {
        let rows: Vec<usize> = candidates.hits.iter().map(|h| h.passage as usize).collect();
        self.cage_batch_of(&rows)
    }

    /// The R-GCN's input tensors for the passages at corpus positions `rows` (as
    /// [`Index::cage_batch`]; a position past the corpus gives an empty graph).
    ///
    /// # Errors
    /// [`Error::MissingEmbedder`] without the static embedder.
    pub fn cage_batch_of(&self, rows: &[usize]) -> Result<(Vec<PassageGraph>, GraphBatch)> {
        let field = self.field(Method::Dense)?;
        let pipeline = Pipeline::english()?;
        let beta = self.config.cage.effective_beta();
        let graphs: Vec<PassageGraph> = rows
            .iter()
            .map(|&i| {
                let p = u32::try_from(i).ok().and_then(|i| self.corpus.get(i));
                let (t, x) = p.map_or(("", ""), |p| (p.title.as_str(), p.text.as_str()));
                PassageGraph::build(&pipeline.analyze(t, x), beta)
            })
            .collect();
        let batch = GraphBatch::new(&graphs, field.embedder().as_ref(), self.config.cage.plain_gcn)?;
        Ok((graphs, batch))
    }

    /// CAGE's second half: coherence of the graph embeddings `z` (`candidates × dim`, in
    /// candidate order), fusion with α, the top `k`.
    ///
    /// # Errors
    /// [`Error::Config`] when `z` has the wrong length.
    pub fn cage_finish(
        &self,
        candidates: &CageCandidates,
        z: &[f32],
        dim: usize,
        k: usize,
    ) -> Result<Vec<(Hit, Reranked)>> {
        if dim == 0 || z.len() != candidates.relevance.len() * dim {
            return Err(Error::Config(format!(
                "expected {} graph embeddings of {dim} floats, got {} floats",
                candidates.relevance.len(),
                z.len()
            )));
        }
        let cos = crate::cage::cosine_matrix(z, dim);
        let reranked =
            crate::cage::rerank_cosines(&candidates.relevance, &cos, self.config.cage.alpha, self.config.cage.anchors)?;
        Ok(reranked
            .into_iter()
            .take(k)
            .map(|r| (Hit { passage: candidates.hits[r.candidate].passage, score: r.score }, r))
            .collect())
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
        self.query_terms_with(query, QueryOptions::default())
    }

    /// [`Index::query_terms`] plus every index term the query matches under BM25's typo
    /// tolerance and, with `options.prefix`, the completions of its last word.
    pub fn query_terms_with(&self, query: &str, options: QueryOptions) -> std::collections::HashSet<String> {
        let mut terms: std::collections::HashSet<String> = self.analyzer.terms(query).into_iter().collect();
        for g in self.bm25.expand(&self.analyzer, query, options.prefix) {
            terms.extend(g.variants.iter().filter_map(|&(t, _)| self.bm25.term(t)).map(str::to_string));
        }
        terms
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

/// The warning of a graph search whose query matches nothing ([`Index::nothing_matches`]).
pub const NOTHING_MATCHES: &str = "nothing matches: no word of the query occurs in any passage";

/// The warning of a graph search whose query does not look English ([`Index::search_graph`]).
pub const NOT_ENGLISH: &str =
    "the query does not look English, the language of the knowledge graph's facts: ranked by dense similarity";

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

/// The best `k` of `scored` (f64 scores) in rank order (score descending, then passage id),
/// scores then narrowed to `f32` for the [`Hit`]s.
fn top_k_f64(mut scored: Vec<(u32, f64)>, k: usize, corpus: &Corpus) -> Vec<Hit> {
    let cmp = |a: &(u32, f64), b: &(u32, f64)| {
        b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then_with(|| {
            let ia = corpus.get(a.0).map(|p| p.id.as_str());
            let ib = corpus.get(b.0).map(|p| p.id.as_str());
            ia.cmp(&ib)
        })
    };
    if k == 0 {
        return Vec::new();
    }
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, cmp);
        scored.truncate(k);
    }
    scored.sort_unstable_by(cmp);
    scored.into_iter().map(|(passage, score)| Hit { passage, score: score as f32 }).collect()
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

#[cfg(test)]
mod graph_tests;

#[cfg(test)]
mod format_tests;

/// Mentions from a recognizer's entity names: each located in `query` (case-insensitively) for
/// its byte span, else the span `(0, 0)`; all of kind `Name` except a 4-digit year (`Date`).
/// Duplicates and names empty after trimming are dropped.
fn llm_mentions(query: &str, names: &[String]) -> Vec<crate::text::Mention> {
    use crate::text::{EntityKind, Mention};
    let mut out: Vec<Mention> = Vec::new();
    for n in names {
        let text = n.trim();
        if text.is_empty() || out.iter().any(|m| m.text.eq_ignore_ascii_case(text)) {
            continue;
        }
        let (start, end) = crate::llm::parse::find_ci(query, text).unwrap_or((0, 0));
        let kind = if text.len() == 4 && text.bytes().all(|b| b.is_ascii_digit()) {
            EntityKind::Date
        } else {
            EntityKind::Name
        };
        out.push(Mention { start, end, text: text.to_string(), kind });
    }
    out
}
