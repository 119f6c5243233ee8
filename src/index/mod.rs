//! The [`Index`]: a corpus and the structures built over it, and ranked search over them.
//!
//! It holds BM25 ([`bm25`]) always, passage vectors ([`dense`]) for each embedder attached
//! with [`Index::attach_embedder`], and, once [`Index::build_graph`] has run, the knowledge graph
//! ([`knowledge`]) that the graph methods `hipporag` and `catrag` walk ([`crate::catrag`]). The
//! versioned binary format joins it in a later version. Ranking is deterministic: equal scores
//! break by passage id.

pub mod bm25;
pub mod dense;
/// The index file format, re-exported where it was first documented ([`crate::format`]).
pub use crate::format;
pub mod fuzzy;
mod persist;
mod split;
pub mod shards;
pub mod knowledge;
mod method;

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::cage::{Cage, CageConfig, EncoderKey, GraphBatch, GraphEmbeddings, PassageGraph};
use crate::catrag::CatragConfig;
use crate::corpus::{Corpus, Passage};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::extract::{ExtractStats, Triple};
use crate::graph::{Graph, GraphBuilder, GraphConfig};
use crate::text::{Analyzer, Pipeline};

pub use bm25::{Bm25, Bm25Config, TermGroup};
pub use dense::{reciprocal_rank_fusion, DenseField, RRF_DEPTH, RRF_K};
use knowledge::Stopwatch;
pub use persist::LoadNotes;
pub use split::SplitIndex;
pub use shards::{KeywordShards, ShardSizes};
pub use method::{EmbedderSlot, Family, Method, MethodInfo, MethodNeeds, MethodRow, Rerank, Stage};
pub use knowledge::{FactText, GraphBuildReport, GraphStage, KnowledgeGraph, PassageFacts};

/// Configuration of every index structure, with the defaults of docs/method/spec.md. Serde names are the
/// field names; every field has a default (`{}` is the default configuration); unknown keys are
/// an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// BM25 parameters (k1 = 0.9, b = 0.4).
    pub bm25: Bm25Config,
    /// The knowledge graph (docs/method/spec.md §1: synonym threshold 0.8, top-k 100, weights 1.0).
    pub graph: GraphConfig,
    /// The graph methods' query-time parameters (docs/method/spec.md §3) and CatRAG's ablation flags.
    pub catrag: CatragConfig,
    /// CAGE reranking (docs/method/spec.md §4: α, β_cage, candidates) and its ablation flags.
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

/// Passages per encoder batch when computing graph embeddings ([`Index::compute_cage_z`]).
const CAGE_Z_BATCH: usize = 16;

/// Check the graph's, CatRAG's and CAGE's parameters (BM25's are checked where it is made).
pub(crate) fn validate_stages(config: &IndexConfig) -> Result<()> {
    config.graph.validate()?;
    config.catrag.validate()?;
    config.cage.validate()
}

/// A corpus with its search structures, ready to query.
pub struct Index {
    pub(crate) corpus: Corpus,
    pub(crate) analyzer: Analyzer,
    pub(crate) bm25: Bm25,
    dense: [Option<DenseField>; 2],
    pub(crate) config: IndexConfig,
    pub(crate) graph: Option<KnowledgeGraph>,
    cage: Option<Rc<Cage>>,
    cage_z: Option<GraphEmbeddings>,
    /// Opened from a static site's keyword part: the passages' texts are empty until
    /// [`Index::attach_texts`] reads the texts section with this CRC32.
    pub(crate) texts_pending: Option<u32>,
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
        validate_stages(config)?;
        let analyzer = Analyzer::english();
        let bm25 = Bm25::build(corpus, &analyzer, config.bm25, progress)?;
        Ok(Self::with_bm25(corpus, config, analyzer, bm25))
    }

    /// The index over `corpus` (taken) with its BM25 structure made already (built or read from
    /// an index file), for a `config` whose stages the caller validated ([`validate_stages`]).
    pub(crate) fn with_bm25(
        corpus: &mut Corpus,
        config: &IndexConfig,
        analyzer: Analyzer,
        bm25: Bm25,
    ) -> Index {
        Index {
            corpus: std::mem::take(corpus),
            analyzer,
            bm25,
            dense: [None, None],
            config: config.clone(),
            graph: None,
            cage: None,
            cage_z: None,
            texts_pending: None,
        }
    }

    /// Whether the passages' texts are in (false only for an index opened from a static site's
    /// keyword part, until [`Index::attach_texts`]).
    pub fn texts_loaded(&self) -> bool {
        self.texts_pending.is_none()
    }

    /// `Ok` when the passages' texts are in.
    ///
    /// # Errors
    /// [`Error::TextsNotLoaded`] naming `what` needs them.
    pub(crate) fn require_texts(&self, what: &str) -> Result<()> {
        match self.texts_pending {
            None => Ok(()),
            Some(_) => Err(Error::TextsNotLoaded(what.to_string())),
        }
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

    /// Build the knowledge graph (docs/method/spec.md §1) for the graph methods: rule-based OpenIE over
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
        self.require_texts("building the knowledge graph")?;
        let pipeline = Pipeline::english()?;
        let clock = Stopwatch::start();
        let out = crate::extract::extract_corpus(&pipeline, &self.corpus, &mut |d, t| {
            progress(GraphStage::Extracting, d, t)
        });
        let extract_ms = clock.ms();
        let crate::extract::ExtractOutput { triples, stats } = out;
        let (builder, report) = self.graph_builder_of(&triples, Some(stats))?;
        // The triples are in the builder now: free them before the graph's embedding and synonym
        // kNN, whose peak sets the page's memory (a wasm page's memory never shrinks).
        drop(triples);
        self.complete_graph(builder, report, embedder, progress)?;
        self.prepare_graph_search();
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
        self.require_texts("building the knowledge graph")?;
        let (builder, report) = self.graph_builder_of(triples, extract)?;
        self.complete_graph(builder, report, embedder, progress)?;
        self.prepare_graph_search();
        self.graph.as_ref().map(|g| &g.report).ok_or(Error::NotBuilt)
    }

    /// The first step of a graph build from `triples`: a [`GraphBuilder`] with every passage's
    /// triples added (docs/method/spec.md §1), and the report so far. The builder keeps its own copies of
    /// the phrases, so the caller may free the triples before [`Index::complete_graph`].
    ///
    /// # Errors
    /// [`Error::Passage`] when a triple names a passage index outside the corpus; the builder's
    /// configuration errors.
    fn graph_builder_of(
        &self,
        triples: &[Triple],
        extract: Option<ExtractStats>,
    ) -> Result<(GraphBuilder, GraphBuildReport)> {
        let mut report = GraphBuildReport { triples: triples.len(), extract, ..GraphBuildReport::default() };
        let mut builder = GraphBuilder::new(self.config.graph.clone())?;
        let clock = Stopwatch::start();
        report.add = builder.add_passages(0, self.corpus.passages(), triples)?;
        report.add_ms = clock.ms();
        Ok((builder, report))
    }

    /// The rest of a graph build after [`Index::graph_builder_of`]: entity and fact embeddings
    /// with `embedder`, synonym edges, the CSR; the graph replaces this index's (without
    /// [`Index::prepare_graph_search`]). The index keeps its previous graph on error.
    ///
    /// # Errors
    /// [`Error::Model`] if the text pipeline's resources fail to load; the builder's and the
    /// embedder's errors.
    fn complete_graph(
        &mut self,
        mut builder: GraphBuilder,
        mut report: GraphBuildReport,
        embedder: Rc<dyn Embedder>,
        progress: &mut dyn FnMut(GraphStage, usize, usize),
    ) -> Result<()> {
        let pipeline = Pipeline::english()?;
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
        Ok(())
    }

    /// Make the knowledge graph's per-graph search structures now rather than on the first graph
    /// search, so that search is as fast as the next ones: [`Graph::prepare_search`] (PPR view,
    /// `i8` vector copies), the typo-tolerant entity lookup of anchoring and the title index of
    /// title bridges. Called when a graph is built, extended or loaded; does nothing without one.
    pub(crate) fn prepare_graph_search(&mut self) {
        let Some(kg) = &mut self.graph else { return };
        kg.graph.prepare_search();
        kg.entity_lookup = Some(fuzzy::EntityLookup::new(&kg.graph));
        let corpus = &self.corpus;
        kg.titles = Some(crate::catrag::bridge::TitleIndex::build(&kg.graph, |i| {
            corpus.get(i).map(|p| p.title.as_str())
        }));
    }

    /// Take the knowledge graph out of this index, to carry it over to the next index built over
    /// a grown corpus ([`Index::extend_graph`]).
    pub fn take_graph(&mut self) -> Option<KnowledgeGraph> {
        self.graph.take()
    }

    /// Adopt `old`, a knowledge graph built over the first `n` passages of this corpus (the
    /// previous index's, from [`Index::take_graph`]), and add passages `n..` to it (docs/method/spec.md §1;
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
        self.require_texts("extending the knowledge graph")?;
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
        let KnowledgeGraph { graph, embedder, pipeline, mut report, .. } = old;
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
        self.graph = Some(KnowledgeGraph::new(graph, embedder, pipeline, report));
        self.prepare_graph_search();
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
                    // CSR (4 + 4 + 1 bytes per arc), the entity vectors and the facts' vectors or bags.
                    let v = |m: &VectorMatrix| std::mem::size_of_val(m.as_slice());
                    g.graph.counts().arcs * 9
                        + v(g.graph.entity_vectors())
                        + g.graph.fact_vectors().heap_bytes()
                        + g.graph.token_bags().heap_bytes()
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
        self.require_texts("embedding the passages")?;
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

    /// Compute CAGE's graph embedding `Z` (docs/method/spec.md §4) of every passage that has none yet
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
        self.require_texts("computing CAGE's graph embeddings")?;
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
    pub(crate) fn cage_ready(&self) -> Result<&GraphEmbeddings> {
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

    /// CAGE's passage graph (docs/method/spec.md §4) of the passage at corpus position `i`, with β as
    /// configured (1.5): what the page draws for a hit.
    ///
    /// # Errors
    /// [`Error::Passage`] when `i` is past the corpus; [`Error::Model`] if the text pipeline's
    /// resources fail to load.
    pub fn cage_passage_graph(&self, i: u32) -> Result<PassageGraph> {
        let p = self.corpus.get(i).ok_or_else(|| Error::Passage {
            id: format!("#{i}"),
            message: format!("no passage at position {i} of {}", self.corpus.len()),
        })?;
        let doc = Pipeline::english()?.analyze(&p.title, &p.text);
        Ok(PassageGraph::build(&doc, self.config.cage.effective_beta()))
    }

    pub(crate) fn field(&self, method: Method) -> Result<&DenseField> {
        let slot = method.embedder().unwrap_or(EmbedderSlot::Static);
        self.dense[slot.index()].as_ref().ok_or(Error::MissingEmbedder {
            method: method.name().to_string(),
            embedder: slot.name().to_string(),
        })
    }

}

#[cfg(test)]
mod format_tests;

