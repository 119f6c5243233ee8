//! The [`Engine`]: the lifecycle one user of Cairn sees, the same in the page, the CLI and the
//! evaluation.
//!
//! ```text
//!   collecting ──build──► built ──add / truncate──► collecting (graph and CAGE embeddings carried)
//!       ▲                   │  build_graph, compute_cage_z, set_embedder, attach_vectors
//!       └──────clear────────┘  search → SearchResult → explain_result
//! ```
//!
//! While collecting, the engine holds a [`Corpus`]; [`Engine::build`] turns it into an
//! [`Index`] (BM25, then the passage vectors of every embedder set), extends the knowledge graph
//! of the previous build with the new passages only ([`Index::extend_graph`]) and keeps the
//! previous build's CAGE graph embeddings, so that a grown corpus pays only for its new
//! passages. Adding passages to a built engine takes the index apart again and carries its graph
//! and graph embeddings to the next build. Searches go through [`crate::search`].

use std::rc::Rc;

use serde::Serialize;

use crate::cage::{Cage, EncoderKey, GraphEmbeddings};
use crate::catrag::{ExplainConfig, Retriever};
use crate::corpus::{Corpus, Passage};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::extract::{ExtractStats, Triple};
use crate::index::{
    EmbedderSlot, GraphBuildReport, GraphStage, Index, IndexConfig, KnowledgeGraph, LoadNotes, Method, QueryOptions,
};
use crate::search::{GraphStep, Query, QueryResult, RunCounts, SearchExplanation, SearchResult, Searcher};

/// A long step of the engine, for progress reports: `(phase, done, total)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// BM25 over the passages (counts passages).
    Bm25,
    /// Passage vectors (counts passages).
    Embed,
    /// OpenIE over the passages, for the knowledge graph (counts passages).
    Extract,
    /// Entity and fact embeddings of the knowledge graph (counts texts).
    GraphEmbed,
    /// Synonym edges of the knowledge graph (counts entities).
    Synonyms,
    /// Loading an index file (counts texts embedded again).
    Load,
    /// CAGE's graph embeddings (counts passages).
    Cage,
}

impl Phase {
    /// The phase's name as the page shows it: `bm25`, `embed`, `extract`, `graph-embed`,
    /// `synonyms`, `load`, `cage`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Bm25 => "bm25",
            Phase::Embed => "embed",
            Phase::Extract => "extract",
            Phase::GraphEmbed => "graph-embed",
            Phase::Synonyms => "synonyms",
            Phase::Load => "load",
            Phase::Cage => "cage",
        }
    }

    fn of_graph(stage: GraphStage) -> Phase {
        match stage {
            GraphStage::Extracting => Phase::Extract,
            GraphStage::Embedding => Phase::GraphEmbed,
            GraphStage::Synonyms => Phase::Synonyms,
        }
    }
}

/// A progress callback: `(phase, done, total)`.
pub type Progress<'a> = &'a mut dyn FnMut(Phase, usize, usize);

/// An embedder the engine holds, with the dimension of its vectors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedderInfo {
    /// The slot's name (`static`, `minilm`).
    pub name: &'static str,
    /// Vector dimension.
    pub dims: usize,
}

/// Sizes of the engine's corpus and, once built, of its index. Serialised in camelCase (the
/// page's `EngineStats`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineStats {
    /// Passages collected or indexed.
    pub passages: usize,
    /// Whether the index is built over all of them.
    pub built: bool,
    /// Distinct index terms (0 until built).
    pub terms: usize,
    /// (term, passage) postings (0 until built).
    pub postings: usize,
    /// Average passage length in index terms (0 until built).
    pub avg_passage_terms: f32,
    /// Bytes of title and text.
    pub text_bytes: usize,
    /// Heap bytes of the index structures (0 until built; see [`crate::index::IndexStats`]).
    pub index_bytes: usize,
    /// Built: the embedders whose passage vectors the index holds. Collecting: the embedders
    /// set, which the next build embeds with.
    pub embedders: Vec<EmbedderInfo>,
}

enum State {
    Collecting(Corpus),
    Built(Index),
}

/// A corpus and its index through their lifecycle (the module docs). Add passages, `build`,
/// then search; adding passages after `build` makes the engine unbuilt until the next `build`.
pub struct Engine {
    config: IndexConfig,
    state: State,
    /// Embedders by slot ([`EmbedderSlot`]): every build embeds the passages with each one set.
    embedders: [Option<Rc<dyn Embedder>>; 2],
    /// CAGE's encoder, attached to every build ([`Index::attach_cage`]).
    cage: Option<Rc<Cage>>,
    /// The knowledge graph of the last build while passages are being added: the next build
    /// extends it with the new passages only.
    carried_graph: Option<KnowledgeGraph>,
    /// CAGE's graph embeddings of the last build while passages are being added: the next build
    /// keeps them, so only the new passages need theirs computed.
    carried_cage_z: Option<GraphEmbeddings>,
    /// The stages the query path ran since the index was built or loaded ([`RunCounts`]).
    counts: RunCounts,
    /// The PPR solver's buffers, handed from one query's [`Searcher`] to the next.
    retriever: Retriever,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("stats", &self.stats()).finish()
    }
}

fn slot_index(slot: EmbedderSlot) -> usize {
    match slot {
        EmbedderSlot::Static => 0,
        EmbedderSlot::Minilm => 1,
    }
}

impl Engine {
    /// An empty engine, collecting, with `config` (docs/method/spec.md's defaults for `IndexConfig::default()`).
    ///
    /// # Errors
    /// [`Error::Config`] when BM25's parameters are out of range (the other stages' are checked
    /// by [`Engine::build`]).
    pub fn new(config: IndexConfig) -> Result<Engine> {
        config.bm25.validate()?;
        Ok(Engine {
            config,
            state: State::Collecting(Corpus::new()),
            embedders: [None, None],
            cage: None,
            carried_graph: None,
            carried_cage_z: None,
            counts: RunCounts::default(),
            retriever: Retriever::new(),
        })
    }

    /// An empty engine with `config` that shares this engine's static embedder (the same
    /// `Rc`: the token table is not copied), as a corpus that replaces this one needs it. The
    /// MiniLM slot and CAGE's encoder are not carried over.
    ///
    /// # Errors
    /// As [`Engine::new`].
    pub fn empty_like(&self, config: IndexConfig) -> Result<Engine> {
        let mut engine = Engine::new(config)?;
        engine.embedders[slot_index(EmbedderSlot::Static)] = self.embedder(EmbedderSlot::Static).cloned();
        Ok(engine)
    }

    /// An engine collecting `corpus`, with `config`.
    ///
    /// # Errors
    /// As [`Engine::new`].
    pub fn with_corpus(config: IndexConfig, corpus: Corpus) -> Result<Engine> {
        let mut engine = Engine::new(config)?;
        engine.state = State::Collecting(corpus);
        Ok(engine)
    }

    /// The built index, taken out of the engine.
    ///
    /// # Errors
    /// [`Error::NotBuilt`] while collecting.
    pub fn into_index(self) -> Result<Index> {
        match self.state {
            State::Built(i) => Ok(i),
            State::Collecting(_) => Err(Error::NotBuilt),
        }
    }

    /// An engine holding `index`, built (its configuration is the index's).
    pub fn from_index(index: Index) -> Engine {
        Engine {
            config: index.config().clone(),
            state: State::Built(index),
            embedders: [None, None],
            cage: None,
            carried_graph: None,
            carried_cage_z: None,
            counts: RunCounts::default(),
            retriever: Retriever::new(),
        }
    }

    /// The configuration the next build uses (the built index's own may differ in its query-time
    /// parts: [`Index::set_catrag_config`]).
    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// The passages, collected or indexed (with empty texts while an index opened from a site's
    /// keyword part waits for them: [`Engine::texts_loaded`]).
    pub fn corpus(&self) -> &Corpus {
        match &self.state {
            State::Collecting(c) => c,
            State::Built(i) => i.corpus(),
        }
    }

    /// Whether the index is built over every passage.
    pub fn is_built(&self) -> bool {
        matches!(self.state, State::Built(_))
    }

    /// The built index.
    ///
    /// # Errors
    /// [`Error::NotBuilt`] while collecting.
    pub fn index(&self) -> Result<&Index> {
        match &self.state {
            State::Built(i) => Ok(i),
            State::Collecting(_) => Err(Error::NotBuilt),
        }
    }

    /// The built index, to change its query-time parts (tierer, recognizer, CatRAG and CAGE
    /// configuration, graph embeddings).
    ///
    /// # Errors
    /// [`Error::NotBuilt`] while collecting.
    pub fn index_mut(&mut self) -> Result<&mut Index> {
        match &mut self.state {
            State::Built(i) => Ok(i),
            State::Collecting(_) => Err(Error::NotBuilt),
        }
    }

    /// Whether the passages' texts are in: false only while an index opened from a static
    /// site's keyword part waits for [`Engine::load_texts`] (its passages' texts are empty).
    pub fn texts_loaded(&self) -> bool {
        match &self.state {
            State::Built(i) => i.texts_loaded(),
            State::Collecting(_) => true,
        }
    }

    /// `Ok` unless the built index was opened from a static site's keyword part and its texts
    /// are not in yet ([`Index::require_texts`]).
    fn require_texts(&self, what: &str) -> Result<()> {
        match &self.state {
            State::Built(i) => i.require_texts(what),
            State::Collecting(_) => Ok(()),
        }
    }

    /// The corpus to add to: a built index is taken apart (its graph and CAGE graph embeddings
    /// carried to the next build).
    fn collecting(&mut self) -> &mut Corpus {
        if let State::Built(_) = self.state {
            let State::Built(mut index) = std::mem::replace(&mut self.state, State::Collecting(Corpus::new())) else {
                unreachable!("matched Built just above")
            };
            if let Some(g) = index.take_graph() {
                self.carried_graph = Some(g);
            }
            if let Some(z) = index.take_cage_embeddings() {
                self.carried_cage_z = Some(z);
            }
            self.state = State::Collecting(index.into_corpus());
        }
        match &mut self.state {
            State::Collecting(c) => c,
            State::Built(_) => unreachable!("the state is Collecting here"),
        }
    }

    /// Add `passages`, all or nothing (a rejected batch — duplicate or empty ids — leaves a built
    /// engine built). Returns how many were added.
    ///
    /// # Errors
    /// [`Error::Passage`] naming the first passage that cannot be added;
    /// [`Error::TextsNotLoaded`] while an index opened from a site's keyword part waits for its
    /// texts.
    pub fn add_passages(&mut self, passages: Vec<Passage>) -> Result<usize> {
        self.require_texts("adding passages")?;
        self.corpus().check_new(&passages)?;
        if passages.is_empty() {
            return Ok(0);
        }
        self.collecting().extend(passages)
    }

    /// Keep only the first `passages` passages (undo adds). When that removes any, the engine
    /// is collecting until the next build, and carried state past the cut is dropped.
    pub fn truncate(&mut self, passages: usize) {
        // an index whose texts are still loading took no adds: there is nothing to undo
        if self.corpus().len() <= passages || !self.texts_loaded() {
            return;
        }
        self.collecting().truncate(passages);
        if self.carried_graph.as_ref().is_some_and(|g| g.report().counts.passages > passages) {
            self.carried_graph = None;
        }
        if let Some(z) = &mut self.carried_cage_z {
            z.resize(z.rows().min(passages));
        }
    }

    /// Remove every passage and the index (embedders and the CAGE encoder stay).
    pub fn clear(&mut self) {
        self.state = State::Collecting(Corpus::new());
        self.carried_graph = None;
        self.carried_cage_z = None;
    }

    /// The embedder in `slot`, if set.
    pub fn embedder(&self, slot: EmbedderSlot) -> Option<&Rc<dyn Embedder>> {
        self.embedders[slot_index(slot)].as_ref()
    }

    /// Set the embedder of `slot`: every later build embeds the passages with it, and a built
    /// index embeds them now (`progress(Phase::Embed, done, total)`).
    ///
    /// # Errors
    /// The embedder's, when a built index embeds its passages; the engine keeps its previous
    /// embedder then.
    pub fn set_embedder(&mut self, slot: EmbedderSlot, embedder: Rc<dyn Embedder>, progress: Progress<'_>) -> Result<()> {
        if let State::Built(index) = &mut self.state {
            index.attach_embedder(slot, embedder.clone(), &mut |d, t| progress(Phase::Embed, d, t))?;
        }
        self.embedders[slot_index(slot)] = Some(embedder);
        Ok(())
    }

    /// Attach passage vectors computed elsewhere (row `i` = passage `i`, from
    /// [`Index::passage_text`]) to the built index, in `slot`, with `embedder` for queries. They
    /// last until the next build.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; [`Error::Config`] when the matrix is not one row per passage.
    pub fn attach_vectors(&mut self, slot: EmbedderSlot, embedder: Rc<dyn Embedder>, vectors: VectorMatrix) -> Result<()> {
        self.index_mut()?.attach_vectors(slot, embedder, vectors)
    }

    /// Attach CAGE's encoder to this and every later build.
    pub fn set_cage(&mut self, cage: Rc<Cage>) {
        if let State::Built(index) = &mut self.state {
            index.attach_cage(cage.clone());
        }
        self.cage = Some(cage);
    }

    /// Build the index over every passage: BM25, the passage vectors of every embedder set, the
    /// previous build's knowledge graph extended with the new passages (when the static embedder
    /// is set; should that fail, which it cannot on valid input, the index has no graph and
    /// [`Engine::build_graph`] makes a fresh one), the previous build's CAGE graph embeddings,
    /// the CAGE encoder. An empty engine builds with 0 passages.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters; an embedder's errors. The passages stay, unbuilt.
    /// [`Error::TextsNotLoaded`] while an index opened from a site's keyword part waits for its
    /// texts (it is built already).
    pub fn build(&mut self, progress: Progress<'_>) -> Result<&Index> {
        self.require_texts("building the index")?;
        let config = self.config.clone();
        let mut index =
            Index::build_taking(self.collecting(), &config, &mut |d, t| progress(Phase::Bm25, d, t))?;
        for slot in EmbedderSlot::ALL {
            if let Some(e) = self.embedders[slot_index(slot)].clone() {
                if let Err(err) = index.attach_embedder(slot, e, &mut |d, t| progress(Phase::Embed, d, t)) {
                    self.state = State::Collecting(index.into_corpus());
                    return Err(err);
                }
            }
        }
        if self.embedder(EmbedderSlot::Static).is_some() {
            if let Some(carried) = self.carried_graph.take() {
                let _ = index.extend_graph(carried, &mut |s, d, t| progress(Phase::of_graph(s), d, t));
            }
        }
        if let Some(z) = self.carried_cage_z.take() {
            index.adopt_cage_embeddings(z);
        }
        if let Some(c) = &self.cage {
            index.attach_cage(c.clone());
        }
        self.state = State::Built(index);
        self.counts = RunCounts::default();
        self.index()
    }

    /// The built index and its static embedder, for a graph build; the graph carried over from
    /// before the last add is dropped (the new build replaces it).
    fn graph_build_inputs(&mut self) -> Result<(&mut Index, Rc<dyn Embedder>)> {
        let State::Built(index) = &mut self.state else {
            return Err(Error::NotBuilt);
        };
        let embedder = index.dense(EmbedderSlot::Static).map(|d| d.embedder().clone()).ok_or_else(|| {
            Error::MissingEmbedder { method: "catrag".into(), embedder: EmbedderSlot::Static.name().into() }
        })?;
        self.carried_graph = None;
        Ok((index, embedder))
    }

    /// Build the knowledge graph (docs/method/spec.md §1) with the static embedder, replacing any; later
    /// builds after adds extend it with the new passages only.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; [`Error::MissingEmbedder`] without the static embedder's passage
    /// vectors; the extractor's, builder's and embedder's errors.
    pub fn build_graph(&mut self, progress: Progress<'_>) -> Result<&GraphBuildReport> {
        let (index, embedder) = self.graph_build_inputs()?;
        index.build_graph(embedder, &mut |s, d, t| progress(Phase::of_graph(s), d, t))
    }

    /// Build the knowledge graph as [`Engine::build_graph`] does, from ready-made `triples` (for
    /// example the endpoint's OpenIE, [`crate::llm::openie`]) with the static embedder
    /// ([`Index::build_graph_from_triples`]; `extract` is kept in the report).
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; [`Error::MissingEmbedder`] without the static embedder; as
    /// [`Index::build_graph_from_triples`].
    pub fn build_graph_from_triples(
        &mut self,
        triples: &[Triple],
        extract: Option<ExtractStats>,
        progress: Progress<'_>,
    ) -> Result<&GraphBuildReport> {
        let (index, embedder) = self.graph_build_inputs()?;
        index.build_graph_from_triples(embedder, triples, extract, &mut |s, d, t| progress(Phase::of_graph(s), d, t))
    }

    /// Compute CAGE's graph embedding of every passage that has none yet
    /// ([`Index::compute_cage_z`]; `progress(Phase::Cage, done, total)`). Returns how many.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Index::compute_cage_z`].
    pub fn compute_cage_z(&mut self, progress: Progress<'_>) -> Result<usize> {
        self.index_mut()?.compute_cage_z(&mut |d, t| progress(Phase::Cage, d, t))
    }

    /// The key CAGE graph embeddings made by the encoder with `fingerprint` are stored under,
    /// with β and the channel layout of the configuration.
    pub fn cage_key(&self, fingerprint: u32) -> EncoderKey {
        let cfg = match &self.state {
            State::Built(i) => &i.config().cage,
            State::Collecting(_) => &self.config.cage,
        };
        EncoderKey { model: fingerprint, beta: cfg.effective_beta(), merged: cfg.plain_gcn }
    }

    /// The built index as an index file ([`Index::to_bytes`]).
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Index::to_bytes`].
    pub fn save(&self) -> Result<Vec<u8>> {
        self.index()?.to_bytes()
    }

    /// Replace everything with the index in `bytes` ([`Index::from_bytes`], with the embedders
    /// set; `progress(Phase::Load, done, total)`). The engine is unchanged on error.
    ///
    /// # Errors
    /// As [`Index::from_bytes`].
    pub fn load(&mut self, bytes: &[u8], progress: Progress<'_>) -> Result<LoadNotes> {
        let embedders: Vec<(EmbedderSlot, Rc<dyn Embedder>)> = EmbedderSlot::ALL
            .into_iter()
            .filter_map(|s| self.embedder(s).map(|e| (s, e.clone())))
            .collect();
        let (mut index, notes) = Index::from_bytes(bytes, &embedders, &mut |d, t| progress(Phase::Load, d, t))?;
        if let Some(c) = &self.cage {
            index.attach_cage(c.clone());
        }
        self.config = index.config().clone();
        self.carried_graph = None;
        self.carried_cage_z = None;
        self.state = State::Built(index);
        self.counts = RunCounts::default();
        Ok(notes)
    }

    /// Read the texts of a static site's index ([`Index::attach_texts`]) into the index opened
    /// from its keyword part with [`Engine::load`]. The engine is unchanged on error.
    ///
    /// # Errors
    /// [`Error::NotBuilt`] before a load; otherwise as [`Index::attach_texts`].
    pub fn load_texts(&mut self, bytes: &[u8]) -> Result<()> {
        self.index_mut()?.attach_texts(bytes)
    }

    /// Read the extras of a static site's index file ([`Index::attach_extras`], with the embedders
    /// set; `progress(Phase::Load, done, total)`) into the index opened from its base with
    /// [`Engine::load`]. The engine is unchanged on error.
    ///
    /// # Errors
    /// [`Error::NotBuilt`] before a load; otherwise as [`Index::attach_extras`].
    pub fn load_extras(&mut self, bytes: &[u8], progress: Progress<'_>) -> Result<LoadNotes> {
        let embedders: Vec<(EmbedderSlot, Rc<dyn Embedder>)> = EmbedderSlot::ALL
            .into_iter()
            .filter_map(|s| self.embedder(s).map(|e| (s, e.clone())))
            .collect();
        let State::Built(index) = &mut self.state else {
            return Err(Error::NotBuilt);
        };
        index.attach_extras(bytes, &embedders, &mut |d, t| progress(Phase::Load, d, t))
    }

    /// Whether `method` can run now ([`Index::supports`]: built, its embedder's passage vectors
    /// attached, the graph built for the graph methods, every graph embedding stored for CAGE).
    pub fn supports(&self, method: Method) -> bool {
        self.index().is_ok_and(|i| i.supports(method))
    }

    /// The methods a search can use once the engine is built as it stands: `bm25` always, the
    /// static embedder's methods once it is set (a built index: once it holds its passage
    /// vectors), `dense-minilm` once MiniLM vectors are attached,
    /// the graph methods once the graph is built, the CAGE methods once every graph embedding is
    /// stored ([`Engine::supports`] for the last three).
    pub fn available_methods(&self) -> Vec<Method> {
        let index = self.index().ok();
        Method::ALL
            .into_iter()
            .filter(|m| m.graph_method().is_none() || index.is_some_and(|i| i.graph().is_some()))
            .filter(|m| m.cage_first_stage().is_none() || self.supports(*m))
            .filter(|m| match m.embedder() {
                None => true,
                // built: the passage vectors the index holds (an index opened from a site's
                // keyword part has none until its extras, whatever embedder is set)
                Some(EmbedderSlot::Static) => match index {
                    Some(i) => i.dense(EmbedderSlot::Static).is_some(),
                    None => self.embedder(EmbedderSlot::Static).is_some(),
                },
                Some(EmbedderSlot::Minilm) => index.is_some_and(|i| i.dense(EmbedderSlot::Minilm).is_some()),
            })
            .collect()
    }

    /// Sizes of the corpus and, once built, of the index ([`EngineStats`]).
    pub fn stats(&self) -> EngineStats {
        match &self.state {
            State::Built(i) => {
                let s = i.stats();
                EngineStats {
                    passages: s.passages,
                    built: true,
                    terms: s.terms,
                    postings: s.postings,
                    avg_passage_terms: s.avg_passage_terms,
                    text_bytes: s.text_bytes,
                    index_bytes: s.index_bytes,
                    embedders: i
                        .embedders()
                        .into_iter()
                        .map(|slot| EmbedderInfo { name: slot.name(), dims: i.dense(slot).map_or(0, |d| d.vectors().dim()) })
                        .collect(),
                }
            }
            State::Collecting(c) => EngineStats {
                passages: c.len(),
                built: false,
                terms: 0,
                postings: 0,
                avg_passage_terms: 0.0,
                text_bytes: c.text_bytes(),
                index_bytes: 0,
                embedders: EmbedderSlot::ALL
                    .into_iter()
                    .filter_map(|s| self.embedder(s).map(|e| EmbedderInfo { name: s.name(), dims: e.dim() }))
                    .collect(),
            },
        }
    }

    /// One query through a [`Searcher`] over the built index ([`Searcher::run`]): the top `k` by
    /// `method` with the search's trace.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Searcher::run`].
    pub fn search(&mut self, query: &str, k: usize, method: Method, options: QueryOptions) -> Result<SearchResult> {
        self.run(&Query::new(query, k, method).with_options(options))
    }

    /// One [`Query`] through a [`Searcher`] over the built index ([`Searcher::run`]).
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Searcher::run`].
    pub fn run(&mut self, query: &Query) -> Result<SearchResult> {
        self.with_searcher(|s| s.run(query))
    }

    /// The one door of a query ([`Searcher::query`]): the result with its trace, the hits as
    /// shown and, when asked, the explanation of the same search.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Searcher::query`].
    pub fn query(&mut self, query: &Query) -> Result<QueryResult> {
        self.with_searcher(|s| s.query(query))
    }

    /// The graph walk of `query` up to its edge tiers, for tiers from an asynchronous endpoint
    /// ([`Searcher::plan`]); give it back in [`Query::tiers`](crate::search::Query::tiers).
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Searcher::plan`].
    pub fn plan(&mut self, query: &Query) -> Result<GraphStep> {
        self.with_searcher(|s| s.plan(query))
    }

    /// `f` with a [`Searcher`] over the built index that reuses the engine's PPR buffers; the
    /// stages it ran are added to the engine's [`RunCounts`].
    fn with_searcher<T>(&mut self, f: impl FnOnce(&mut Searcher<'_>) -> Result<T>) -> Result<T> {
        let State::Built(index) = &self.state else {
            return Err(Error::NotBuilt);
        };
        let mut searcher = Searcher::with_retriever(index, std::mem::take(&mut self.retriever));
        let out = f(&mut searcher);
        self.counts.add(searcher.counts());
        self.retriever = searcher.into_retriever();
        out
    }

    /// A searcher over the built index for what reads a result without searching again
    /// (highlights, [`Searcher::explain_result`]).
    ///
    /// # Errors
    /// [`Error::NotBuilt`] while collecting.
    pub fn searcher(&self) -> Result<Searcher<'_>> {
        Ok(Searcher::new(self.index()?))
    }

    /// The explanation of a graph method's `result` ([`Searcher::explain_result`]); runs no
    /// search.
    ///
    /// # Errors
    /// [`Error::NotBuilt`]; as [`Searcher::explain_result`].
    pub fn explain(&self, result: &SearchResult, config: &ExplainConfig) -> Result<SearchExplanation> {
        self.searcher()?.explain_result(result, config)
    }

    /// The stages the query path ran since the index was built or loaded, or since
    /// [`Engine::reset_run_counts`] ([`RunCounts`]; a test hook). `None` while collecting.
    #[doc(hidden)]
    pub fn run_counts(&self) -> Option<RunCounts> {
        self.index().ok().map(|_| self.counts)
    }

    /// Both stage counters back to 0.
    #[doc(hidden)]
    pub fn reset_run_counts(&mut self) {
        self.counts = RunCounts::default();
    }
}

/// Parts of an index computed outside the engine, for an evaluation that shares them across many
/// indexes over subsets of one corpus (each question's pool): passage vectors, OpenIE triples and
/// CAGE graph embeddings, row `j` for the index's passage `j`.
#[derive(Default)]
pub struct Prebuilt {
    /// Passage vectors of one embedder: its slot, the embedder (for queries) and one row per
    /// passage.
    pub vectors: Option<(EmbedderSlot, Rc<dyn Embedder>, VectorMatrix)>,
    /// CAGE's graph embeddings: their key, dimension and `passages × dim` floats.
    pub cage_z: Option<(EncoderKey, usize, Vec<f32>)>,
    /// The knowledge graph's triples (each naming an index passage) and the extraction's
    /// statistics: the graph is built from them with the vectors' embedder.
    pub triples: Option<(Vec<Triple>, Option<ExtractStats>)>,
}

impl Engine {
    /// A built engine over `corpus` from `parts` computed elsewhere: BM25, then the given passage
    /// vectors, the CAGE encoder (when set) and graph embeddings, and the knowledge graph from
    /// the given triples (with the vectors' embedder).
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters or parts that do not fit the corpus;
    /// [`Error::MissingEmbedder`] for triples without vectors; the graph builder's errors.
    pub fn build_from_parts(corpus: Corpus, config: &IndexConfig, cage: Option<Rc<Cage>>, parts: Prebuilt) -> Result<Engine> {
        let mut engine = Engine::with_corpus(config.clone(), corpus)?;
        if let Some(c) = cage {
            engine.cage = Some(c);
        }
        engine.build(&mut |_, _, _| {})?;
        let index = engine.index_mut()?;
        let mut embedder = None;
        if let Some((slot, e, vectors)) = parts.vectors {
            index.attach_vectors(slot, e.clone(), vectors)?;
            embedder = Some(e);
        }
        if let Some((key, dim, z)) = parts.cage_z {
            let positions: Vec<usize> = (0..index.corpus().len()).collect();
            index.store_cage_z(key, &positions, &z, dim)?;
        }
        if let Some((triples, stats)) = parts.triples {
            let e = embedder.ok_or_else(|| Error::MissingEmbedder {
                method: "catrag".into(),
                embedder: EmbedderSlot::Static.name().into(),
            })?;
            index.build_graph_from_triples(e, &triples, stats, &mut |_, _, _| {})?;
        }
        Ok(engine)
    }
}

#[cfg(test)]
mod tests;
