//! One query's forward path over an [`Index`]: a [`QueryContext`] built once, the first stage,
//! an optional rerank, one ranking function and a [`SearchResult`] that carries its trace.
//!
//! ```text
//! query ─► QueryContext (NFC text, BM25 term groups with typo/prefix expansion, query vector)
//!       ─► first stage (bm25 | dense | dense-minilm | hybrid | hipporag/catrag graph search)
//!       ─► optional rerank (CAGE: coherence over stored graph embeddings, fusion with α)
//!       ─► rank (score descending, ties by passage id)
//!       ─► SearchResult { hits, trace: retrieval (seeds, anchors, PPR scores), CAGE details, terms }
//! ```
//!
//! Every piece of per-query work runs once: the query is composed to NFC once, BM25's typo and
//! prefix expansion ([`crate::index::Bm25::expand`]) runs once and serves the "nothing matches"
//! gate, scoring, CatRAG's lexical prior and highlighting; the query is embedded once with each
//! embedder it needs; a CAGE method runs its first stage once and never re-enters
//! [`Searcher::search`]. An explanation ([`Searcher::explain_result`]) reads a result's trace and never
//! runs the search again.
//!
//! A [`Searcher`] runs them: it borrows the [`Index`], which stays data (corpus, BM25, vectors,
//! graph, graph embeddings, the graph's title index and entity lookup) and knows nothing of
//! queries, and owns what a query changes: the PPR solver's buffers, CatRAG's tierer and query
//! recognizer when they are not the offline defaults, and the stage counters. What one query
//! carries (text, k, method, options, entity names) is a [`Query`].

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::rc::Rc;

use serde::Serialize;

use crate::cage::Reranked;
use crate::catrag::{
    explain, overlay_summary, top_entities, EdgeTierer, EmbeddingSimilarityTierer, EntityRecognizer, ExplainConfig,
    Fallback, GraphMethod,
    OverlaySummary, PassageExplanation, PathNode, PreparedQuery, QueryInput, Retrieval, Retriever,
};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::index::{
    fuzzy, reciprocal_rank_fusion, DenseField, EmbedderSlot, Hit, Index, KnowledgeGraph, Method, QueryOptions,
    Stage, TermGroup, RRF_DEPTH, RRF_K,
};
use crate::text::fold::{fold_diacritics, nfc};
use crate::text::{EntityKind, Mention};

/// The warning of a graph search whose query matches nothing ([`Searcher::nothing_matches`]).
pub const NOTHING_MATCHES: &str = "nothing matches: no word of the query occurs in any passage";

/// The mark of a dense method's result whose query shares no word with any passage
/// ([`Searcher::nothing_matches`]): the hits are the passages closest by meaning alone (a paraphrase
/// may still find its answer), but nothing in them matches the query's words, so they are weak.
pub const WEAK_BY_MEANING: &str =
    "no word of the query occurs in any passage: these are the closest passages by meaning alone, and may not answer it";

/// The warning of a graph search whose query does not look English ([`Searcher::search_graph`]).
pub const NOT_ENGLISH: &str =
    "the query does not look English, the language of the knowledge graph's facts: ranked by dense similarity";

/// Everything about one query that more than one step needs, each piece computed at most once
/// on first use: the NFC text, BM25's term groups with and without prefix completion
/// ([`crate::index::Bm25::expand`]: typo tolerance and, with `options.prefix`, completions of the
/// last word) and the query's vector under the static embedder.
pub struct QueryContext<'i> {
    index: &'i Index,
    text: String,
    options: QueryOptions,
    exact: OnceCell<Vec<TermGroup>>,
    prefixed: OnceCell<Vec<TermGroup>>,
    static_vector: OnceCell<Vec<f32>>,
    /// The query's entity names from an outside recognizer ([`Query::entities`]); empty: none.
    entities: Vec<String>,
}

impl<'i> QueryContext<'i> {
    /// The context of `query` over `index` (the text composed to NFC).
    pub fn new(index: &'i Index, query: &str, options: QueryOptions) -> Self {
        QueryContext {
            index,
            text: nfc(query).into_owned(),
            options,
            exact: OnceCell::new(),
            prefixed: OnceCell::new(),
            static_vector: OnceCell::new(),
            entities: Vec::new(),
        }
    }

    /// The context of `query` over `index`: its text, options and entity names.
    pub fn of(index: &'i Index, query: &Query) -> Self {
        QueryContext { entities: query.entities.clone(), ..QueryContext::new(index, &query.text, query.options) }
    }

    /// The query, composed to NFC.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The per-query options.
    pub fn options(&self) -> QueryOptions {
        self.options
    }

    /// BM25's term groups of the query: with prefix completion of the last word when `prefix`,
    /// typo-expanded either way (expanded once per flag, then memoised).
    pub fn groups(&self, prefix: bool) -> &[TermGroup] {
        let cell = if prefix { &self.prefixed } else { &self.exact };
        cell.get_or_init(|| self.index.bm25.expand(&self.index.analyzer, &self.text, prefix))
    }

    /// Whether no query term, after expansion (`prefix` as in [`QueryContext::groups`]), occurs
    /// in any passage ([`Searcher::nothing_matches`]).
    pub fn nothing_matches(&self, prefix: bool) -> bool {
        self.groups(prefix).iter().all(|g| g.variants.is_empty())
    }

    /// The query's vector under `field`'s embedder: memoised for the static embedder (used by
    /// `dense`, `hybrid`, the graph methods' dense passage prior and CAGE's relevance), embedded
    /// afresh otherwise (only `dense-minilm` uses another one, once per query).
    ///
    /// # Errors
    /// The embedder's.
    fn vector(&self, field: &DenseField, slot: EmbedderSlot) -> Result<std::borrow::Cow<'_, [f32]>> {
        if slot != EmbedderSlot::Static {
            return Ok(std::borrow::Cow::Owned(field.embedder().embed(&self.text)?));
        }
        if let Some(v) = self.static_vector.get() {
            return Ok(std::borrow::Cow::Borrowed(v));
        }
        let v = field.embedder().embed(&self.text)?;
        Ok(std::borrow::Cow::Borrowed(self.static_vector.get_or_init(|| v)))
    }

    /// The distinct index terms of the query plus every index term its expansion reaches (with
    /// the context's prefix option), for highlighting.
    pub fn terms(&self) -> HashSet<String> {
        terms_of(self.index, &self.text, self.groups(self.options.prefix))
    }

    /// The context's text and its term groups under its own prefix option if a step expanded
    /// them (a dense method's search expands nothing), to keep in a [`Trace`].
    fn into_parts(self) -> (String, Option<Vec<TermGroup>>) {
        let cell = if self.options.prefix { self.prefixed } else { self.exact };
        (self.text, cell.into_inner())
    }
}

/// What a search computed on its way to the hits, kept so that nothing needs to run again: an
/// explanation reads `retrieval`, the page's CAGE view reads `reranked`, highlighting reads
/// `groups` ([`Searcher::result_terms`]).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The graph search (seeds, anchors, overlay, tiering, PPR report, per-node scores) of a
    /// graph method, or of `catrag+cage`'s first stage; `None` for the other methods.
    pub retrieval: Option<Retrieval>,
    /// A CAGE method's candidates: its first stage's top N, best first.
    pub candidates: Vec<Hit>,
    /// A CAGE method's reranking details, one per hit, in hit order (`candidate` indexes
    /// `candidates`); empty for the other methods.
    pub reranked: Vec<Reranked>,
    /// BM25's term groups of the query (typo expansion, and prefix completion when asked): the
    /// expansion the search ran, kept for highlighting ([`Searcher::result_terms`]); `None` when
    /// the search needed none (the dense methods).
    pub groups: Option<Vec<TermGroup>>,
    /// Whether the groups include prefix completions of the last word.
    pub prefix: bool,
    /// Why the hits are weak, when they are: [`WEAK_BY_MEANING`] for a method that ranks by
    /// meaning alone ([`Method::ranks_by_meaning_alone`]) whose query matches nothing
    /// ([`Searcher::nothing_matches`]; every other method then returns no hit). `None` otherwise.
    pub weak: Option<&'static str>,
    /// A CAGE method's own time after its first stage, in milliseconds: the candidates'
    /// relevance, coherence over their stored graph embeddings and the fusion (the first stage's
    /// time is the rest of the search's). `None` for the other methods.
    pub rerank_ms: Option<f64>,
}

/// One query's result: the ranked hits and the [`Trace`] of how they were found.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The method that ran.
    pub method: Method,
    /// The query, composed to NFC.
    pub query: String,
    /// The top passages, best first; ties by passage id.
    pub hits: Vec<Hit>,
    /// What the search computed on the way.
    pub trace: Trace,
}

/// One hit as every front end shows it (the CLI, the page, the site widget): the passage, its
/// score and where the query's terms are in its text and title.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HitView {
    /// Position in the ranking, from 1.
    pub rank: usize,
    /// Internal passage index (see [`Corpus::get`]).
    pub passage: u32,
    /// The passage's id, title and text.
    pub id: String,
    /// The passage's title.
    pub title: String,
    /// The passage's text.
    pub text: String,
    /// The method's score ([`Hit::score`]).
    pub score: f32,
    /// Byte ranges of `text` whose index term is one of the query's (after the expansion the
    /// search ran: typos, prefix completion), in order ([`Searcher::highlights`]).
    pub highlights: Vec<(usize, usize)>,
    /// The same for `title`.
    pub title_highlights: Vec<(usize, usize)>,
    /// A CAGE method's relevance term of this hit (the first stage's score min–max normalised
    /// over the candidates, or its cosine); `None` for the other methods.
    pub relevance: Option<f32>,
    /// A CAGE method's coherence term of this hit; `None` for the other methods.
    pub coherence: Option<f32>,
}

/// What [`Searcher::query`] gives: the search's result with its trace, the hits as shown, and,
/// when asked for a graph method, the explanation of the same search.
#[derive(Debug, Clone)]
pub struct QueryResult {
    /// The ranked hits and the [`Trace`] of how they were found.
    pub result: SearchResult,
    /// One view per hit, in hit order.
    pub hits: Vec<HitView>,
    /// Why each hit ranked ([`Searcher::explain_result`]), when [`Query::explain`] asked and the
    /// method is a graph method (`hipporag`, `catrag`); `None` otherwise.
    pub explanation: Option<SearchExplanation>,
}

impl SearchResult {
    /// A graph method's result as a [`GraphSearch`] (its hits and retrieval); `None` for a
    /// method that walked no graph.
    pub fn into_graph_search(self) -> Option<GraphSearch> {
        let SearchResult { hits, trace, .. } = self;
        trace.retrieval.map(|retrieval| GraphSearch { hits, retrieval })
    }
}

/// A graph query's ranked passages and everything the graph step computed
/// ([`Searcher::search_graph`]).
#[derive(Debug, Clone)]
pub struct GraphSearch {
    /// The top passages, best first; ties by passage id.
    pub hits: Vec<Hit>,
    /// Seeds, anchors, overlay, PPR report, fallback… (see [`Retrieval`]).
    pub retrieval: Retrieval,
}

/// The first half of a graph search, internal: walked nothing (the hits and the retrieval that
/// says why) or prepared (and whether the query embeds to the zero vector).
enum GraphPrep {
    Done(Vec<Hit>, Retrieval),
    Prepared(PreparedQuery, bool),
}

/// A graph search stopped before its edge tiers and PPR ([`Searcher::prepare_graph`]).
#[derive(Debug, Clone)]
pub struct PreparedGraphSearch {
    /// Seeds, boost, pruning and the batches to tier.
    pub query: PreparedQuery,
    method: Method,
    text: String,
    k: usize,
    query_is_zero: bool,
    trace: Trace,
}

/// What [`Searcher::prepare_graph`] gives: a search that walked nothing and is complete, or one
/// waiting for its tiers ([`Searcher::finish_graph`]).
#[derive(Debug, Clone)]
pub enum GraphStep {
    /// Nothing to walk (nothing matches, not English): the result.
    Done(SearchResult),
    /// Waiting for [`Searcher::finish_graph`].
    Prepared(PreparedGraphSearch),
}

/// A graph query explained ([`Searcher::explain_result`]): the hits, the query-level retrieval
/// (seeds, anchors, overlay, PPR report), the entities with the most PPR mass, and per hit why
/// it ranked.
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
    /// The arcs this query's overlay changed, by cause (boost, pruning, tiers).
    pub changes: OverlaySummary,
    /// One explanation per hit, in hit order.
    pub passages: Vec<PassageExplanation>,
}

/// The one ranking of the query path: the best `k` of `scored` by score descending, equal
/// scores by passage id ascending (deterministic across platforms; a NaN compares equal), the
/// scores narrowed to `f32` for the [`Hit`]s. `f32` scores rank the same once widened (widening
/// is exact and keeps order and ties).
pub fn rank(mut scored: Vec<(u32, f64)>, k: usize, corpus: &Corpus) -> Vec<Hit> {
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

/// A query vector made outside Cairn (an embedder that runs in JavaScript) made fit for cosine
/// scoring against unit passage vectors: `dims` finite values, L2-normalised (the zero vector
/// stays zero: no known token, nothing matches).
///
/// # Errors
/// What is wrong, as a phrase to follow "returned": `"3 values, expected 384"` or `"a value that
/// is not a finite number"`.
pub fn unit_query_vector(mut row: Vec<f32>, dims: usize) -> std::result::Result<Vec<f32>, String> {
    if row.len() != dims {
        return Err(format!("{} values, expected {dims}", row.len()));
    }
    if row.iter().any(|x| !x.is_finite()) {
        return Err("a value that is not a finite number".into());
    }
    crate::embed::l2_normalize(&mut row);
    Ok(row)
}

/// [`rank`] for `f32` scores.
fn rank_f32(scored: Vec<(u32, f32)>, k: usize, corpus: &Corpus) -> Vec<Hit> {
    rank(scored.into_iter().map(|(p, s)| (p, f64::from(s))).collect(), k, corpus)
}

/// The inputs the graph search feeds CatRAG besides the dense passage prior
/// ([`Searcher::dense_passage_prior`]): the query vector under the graph's embedder, the query's
/// entity mentions (CatRAG with anchoring on) and BM25's lexical passage prior.
struct CatragInputs {
    graph_vector: Vec<f32>,
    mentions: Vec<Mention>,
    lexical_scores: Vec<f32>,
}

/// One query: what a [`Searcher`] is asked ([`Searcher::query`], [`Searcher::run`]).
#[derive(Debug, Clone)]
pub struct Query {
    /// The query text (composed to NFC before anything reads it).
    pub text: String,
    /// How many hits to return (the CLI and the page allow 1–1000).
    pub k: usize,
    /// The retrieval method.
    pub method: Method,
    /// Per-query options (prefix matching of the last word). Default: none.
    pub options: QueryOptions,
    /// The query's entity names from an outside recognizer (the page's LLM NER), for CatRAG's
    /// symbolic anchoring (docs/method/spec.md §3 channel B, "optional LLM NER"): each is
    /// located in the text for its span. Empty (the default): the searcher's recognizer if it
    /// has one, else the text pipeline's rule-based query NER.
    pub entities: Vec<String>,
    /// [`Searcher::query`] also explains a graph method's hits ([`Searcher::explain_result`],
    /// read from the same search). Default false.
    pub explain: bool,
    /// CatRAG's edge tiers given from outside the searcher (the page's asynchronous LLM
    /// endpoint): the graph walk [`Searcher::plan`] prepared for this query and its batches'
    /// tiers. `None` (the default): the searcher's tierer tiers the walk.
    pub tiers: Option<GivenTiers>,
}

/// A graph walk prepared by [`Searcher::plan`] and the tiers of its batches, given back with the
/// query ([`Query::tiers`]): the search resumes from the walk instead of preparing it again.
#[derive(Debug, Clone)]
pub struct GivenTiers {
    /// The planned walk (or, for a query that walks nothing, its finished result).
    pub step: GraphStep,
    /// Who tiered (`llm:{model}`), reported when the walk has batches.
    pub tierer: String,
    /// `tiers[i]` for batch i; `None`, a missing entry or one of the wrong length is Weak.
    pub tiers: Vec<Option<Vec<crate::catrag::Tier>>>,
}

impl Query {
    /// `text`, top `k`, by `method`, without options or entity names.
    pub fn new(text: impl Into<String>, k: usize, method: Method) -> Query {
        Query {
            text: text.into(),
            k,
            method,
            options: QueryOptions::default(),
            entities: Vec::new(),
            explain: false,
            tiers: None,
        }
    }

    /// The same query with `options`.
    pub fn with_options(mut self, options: QueryOptions) -> Query {
        self.options = options;
        self
    }

    /// The same query with the entity names `names` (blank ones dropped).
    pub fn with_entities(mut self, names: Vec<String>) -> Query {
        self.entities = names.into_iter().filter(|n| !n.trim().is_empty()).collect();
        self
    }
}

/// How many times a [`Searcher`] ran each stage of the query path: the test hook behind "work
/// is done once per query" (docs/architecture.md). Plain counters, bumped by the searcher.
#[doc(hidden)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunCounts {
    /// First stages run: one per query for every method (a CAGE method's first stage is the
    /// method it reranks; BM25, dense, hybrid and the graph methods are their own first stage).
    pub first_stages: u32,
    /// Graph searches run (the graph methods' seeds → overlay → PPR step, including the walks
    /// that end early with no seed or a query that is not English).
    pub graph_searches: u32,
}

impl RunCounts {
    /// `(first_stages, graph_searches)`.
    pub fn get(&self) -> (u32, u32) {
        (self.first_stages, self.graph_searches)
    }

    /// Add `other`'s counts to these.
    pub fn add(&mut self, other: RunCounts) {
        self.first_stages += other.first_stages;
        self.graph_searches += other.graph_searches;
    }
}

/// Searches an [`Index`] (tantivy's split: the index is data, the searcher searches). It
/// borrows the index and owns everything a query changes or may swap: the PPR solver's buffers
/// ([`Retriever`], reused from one query to the next), the edge tierer and query recognizer of
/// CatRAG when they are not the offline defaults, and the [`RunCounts`]. Cheap to make (no
/// allocation until the first graph search); one per thread or worker.
pub struct Searcher<'i> {
    index: &'i Index,
    retriever: Retriever,
    /// CatRAG's edge tierer; `None`: the offline [`EmbeddingSimilarityTierer`] with the
    /// configuration's thresholds.
    tierer: Option<Box<dyn EdgeTierer + 'i>>,
    /// CatRAG's query NER; `None`: the text pipeline's rule-based query NER.
    recognizer: Option<Box<dyn EntityRecognizer + 'i>>,
    counts: RunCounts,
}

impl std::fmt::Debug for Searcher<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Searcher")
            .field("tierer", &self.tierer_name())
            .field("recognizer", &self.recognizer.as_ref().map(|r| r.name()))
            .field("counts", &self.counts)
            .finish()
    }
}

impl Index {
    /// A [`Searcher`] over this index, with the offline tierer and the rule-based query NER.
    pub fn searcher(&self) -> Searcher<'_> {
        Searcher::new(self)
    }
}

impl<'i> Searcher<'i> {
    /// A searcher over `index`, with the offline tierer and the rule-based query NER.
    pub fn new(index: &'i Index) -> Searcher<'i> {
        Searcher::with_retriever(index, Retriever::new())
    }

    /// A searcher over `index` that reuses `retriever`'s PPR buffers (from
    /// [`Searcher::into_retriever`] of an earlier searcher).
    pub fn with_retriever(index: &'i Index, retriever: Retriever) -> Searcher<'i> {
        Searcher { index, retriever, tierer: None, recognizer: None, counts: RunCounts::default() }
    }

    /// The PPR buffers, to hand to the next searcher ([`Searcher::with_retriever`]).
    pub fn into_retriever(self) -> Retriever {
        self.retriever
    }

    /// The index searched.
    pub fn index(&self) -> &'i Index {
        self.index
    }

    /// Use `tierer` for CatRAG's edge tiering (for example an LLM tierer) instead of the
    /// offline [`EmbeddingSimilarityTierer`]; `None` goes back to it.
    pub fn set_edge_tierer(&mut self, tierer: Option<Box<dyn EdgeTierer + 'i>>) {
        self.tierer = tierer;
    }

    /// Use `recognizer` for the query mentions of CatRAG's symbolic anchoring instead of the
    /// text pipeline's rule-based query NER (docs/method/spec.md §3 channel B, "optional LLM
    /// NER"); `None` goes back to it. Where it fails or finds nothing, the rule-based mentions
    /// are used for that query; a query's own entity names ([`Query::entities`]) come first.
    pub fn set_entity_recognizer(&mut self, recognizer: Option<Box<dyn EntityRecognizer + 'i>>) {
        self.recognizer = recognizer;
    }

    /// The name of the edge tierer CatRAG queries use (by default `embedding-similarity`).
    pub fn tierer_name(&self) -> &str {
        self.tierer.as_ref().map_or(EmbeddingSimilarityTierer::NAME, |t| t.name())
    }

    /// The stages this searcher ran so far ([`RunCounts`]; a test hook).
    #[doc(hidden)]
    pub fn counts(&self) -> RunCounts {
        self.counts
    }

    /// Whether nothing in the corpus matches `query`: none of its index terms (after folding,
    /// stemming and stop-word removal, [`crate::text::Analyzer`]) occurs in any passage, even
    /// after typo expansion. Every method but those that rank by meaning alone
    /// ([`Method::ranks_by_meaning_alone`]: dense methods exist to answer paraphrases) then
    /// returns no hit, the same way BM25 does, instead of ranking the corpus by noise (dense
    /// cosines near zero, PPR from the least unlikely facts): a query such as `"zzqx vvbn"` or
    /// `"???"` gets "nothing matches", not three confident passages. A query of stop words only
    /// matches nothing too.
    pub fn nothing_matches(&self, query: &str) -> bool {
        QueryContext::new(self.index, query, QueryOptions::default()).nothing_matches(false)
    }

    /// The one door of a query: [`Searcher::run`], then, when `query.explain` asks and the
    /// method is a graph method, [`Searcher::explain_result`] of that same search, and the hits
    /// as every front end shows them ([`HitView`]). The search runs once.
    ///
    /// # Errors
    /// As [`Searcher::run`]; [`Error::MissingGraph`] should the explanation find no graph.
    pub fn query(&mut self, query: &Query) -> Result<QueryResult> {
        let result = self.run(query)?;
        let method = result.method;
        let explanation = if query.explain && method.graph_method().is_some() && method.cage_first_stage().is_none() {
            Some(self.explain_result(&result, &ExplainConfig::default())?)
        } else {
            None
        };
        let hits = self.hit_views(&result);
        Ok(QueryResult { result, hits, explanation })
    }

    /// The hits of `result` as shown ([`HitView`]): passage, score, the query terms' byte
    /// ranges in text and title, and a CAGE method's relevance and coherence.
    pub fn hit_views(&self, result: &SearchResult) -> Vec<HitView> {
        let terms = self.result_terms(result);
        result
            .hits
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                let p = self.index.corpus.get(h.passage)?;
                let reranked = result.trace.reranked.get(i);
                Some(HitView {
                    rank: i + 1,
                    passage: h.passage,
                    id: p.id.clone(),
                    title: p.title.clone(),
                    text: p.text.clone(),
                    score: h.score,
                    highlights: self.highlights(&terms, &p.text),
                    title_highlights: self.highlights(&terms, &p.title),
                    relevance: reranked.map(|r| r.relevance),
                    coherence: reranked.map(|r| r.coherence),
                })
            })
            .collect()
    }

    /// The top `k` passages for `query` by `method`, best first; ties break by passage id
    /// ([`Searcher::run`] without options, its hits only).
    ///
    /// # Errors
    /// As [`Searcher::run`].
    pub fn search(&mut self, query: &str, k: usize, method: Method) -> Result<Vec<Hit>> {
        Ok(self.run(&Query::new(query, k, method))?.hits)
    }

    /// [`Searcher::search`] with per-query options (prefix matching of the last word).
    ///
    /// # Errors
    /// As [`Searcher::run`].
    pub fn search_with(&mut self, query: &str, k: usize, method: Method, options: QueryOptions) -> Result<Vec<Hit>> {
        Ok(self.run(&Query::new(query, k, method).with_options(options))?.hits)
    }

    /// The query path (the module docs): [`QueryContext`] → first stage → CAGE rerank for the
    /// CAGE methods → [`rank`] → a [`SearchResult`] with its [`Trace`]: the top `query.k`
    /// passages by `query.method`, best first, ties by passage id.
    ///
    /// When [`Searcher::nothing_matches`] the query, every method but those that rank by
    /// meaning alone returns no hit. The query is composed to NFC first
    /// ([`crate::text::fold::nfc`]). BM25 returns fewer than `k` hits when fewer passages share
    /// a term with the query (none for a query of stop words only). Dense methods score every
    /// passage (cosine in [-1, 1]); `hybrid` fuses the top [`RRF_DEPTH`] of each (score
    /// Σ 1/(60 + rank)). The graph methods rank every passage by PPR mass (in (0, 1]; or by
    /// dense cosine when the query has no seed, see [`Searcher::search_graph`]).
    ///
    /// # Errors
    /// [`Error::MissingEmbedder`] when the method's embedder is not attached;
    /// [`Error::MissingGraph`] when a graph method is asked before [`Index::build_graph`]; the
    /// embedder's own error when it fails on the query; for a CAGE method also
    /// [`Error::Model`] when graph embeddings are not stored for every passage
    /// ([`Index::compute_cage_z`]).
    pub fn run(&mut self, query: &Query) -> Result<SearchResult> {
        let (k, method, options) = (query.k, query.method, query.options);
        let ctx = QueryContext::of(self.index, query);
        let mut trace = Trace::default();
        let mut given = query.tiers.clone();
        if given.is_some() && method.graph_method().is_none() {
            return Err(Error::Config(format!("edge tiers were given for {}, which walks no graph", method.name())));
        }
        // (BM25 returns nothing by itself then; a graph method's own gate keeps the retrieval
        // that says why, for an explanation.)
        let hits = if method.gated() && ctx.nothing_matches(options.prefix) {
            Vec::new()
        } else if method.cage_first_stage().is_some() {
            self.cage_stage(&ctx, k, method, &mut trace, &mut given)?
        } else {
            self.first_stage(&ctx, k, method, &mut trace, &mut given)?
        };
        trace.prefix = options.prefix;
        if method.ranks_by_meaning_alone() && !hits.is_empty() && ctx.nothing_matches(options.prefix) {
            trace.weak = Some(WEAK_BY_MEANING);
        }
        let (query, groups) = ctx.into_parts();
        trace.groups = groups;
        Ok(SearchResult { method, query, hits, trace })
    }

    /// A first stage: `method`'s own top `k` (BM25, dense, hybrid or a graph method). Graph
    /// methods leave their retrieval in `trace`.
    fn first_stage(
        &mut self,
        ctx: &QueryContext<'_>,
        k: usize,
        method: Method,
        trace: &mut Trace,
        given: &mut Option<GivenTiers>,
    ) -> Result<Vec<Hit>> {
        // a walk resumed from its plan was counted when it was planned
        if given.is_none() {
            self.counts.first_stages += 1;
        }
        let prefix = ctx.options().prefix;
        Ok(match method.stage() {
            Stage::Graph(gm) => {
                let (hits, retrieval) = match given.take() {
                    Some(g) => self.resume_graph(ctx, method, g)?,
                    None => self.graph_stage(ctx, k, method, gm)?,
                };
                trace.retrieval = Some(retrieval);
                hits
            }
            Stage::Bm25 => rank_f32(self.index.bm25.score_groups(ctx.groups(prefix)), k, &self.index.corpus),
            Stage::Dense(_) => rank_f32(self.dense_scores(ctx, method)?, k, &self.index.corpus),
            Stage::Hybrid => {
                let depth = k.max(RRF_DEPTH);
                let lexical = rank_f32(self.index.bm25.score_groups(ctx.groups(prefix)), depth, &self.index.corpus);
                let dense = rank_f32(self.dense_scores(ctx, method)?, depth, &self.index.corpus);
                rank_f32(reciprocal_rank_fusion(&[&lexical, &dense], RRF_K), k, &self.index.corpus)
            }
        })
    }

    /// Cosine of the query with every passage under `method`'s embedder; empty when no vector
    /// is stored or the query embeds to the zero vector (no known token: nothing matches).
    fn dense_scores(&self, ctx: &QueryContext<'_>, method: Method) -> Result<Vec<(u32, f32)>> {
        let field = self.index.field(method)?;
        if field.vectors().is_empty() {
            return Ok(Vec::new());
        }
        let q = ctx.vector(field, method.embedder().unwrap_or(EmbedderSlot::Static))?;
        if crate::embed::is_zero(&q) {
            return Ok(Vec::new());
        }
        Ok(field.vectors().scores(&q)?.into_iter().enumerate().map(|(i, s)| (i as u32, s)).collect())
    }

    /// A CAGE method (docs/method/spec.md §4): its first stage's top N ([`crate::cage::CageConfig::candidates`],
    /// 20) once, each candidate's relevance, coherence over their stored graph embeddings (an
    /// N × N cosine matrix; no encoder runs) fused with α, the top `k`.
    fn cage_stage(
        &mut self,
        ctx: &QueryContext<'_>,
        k: usize,
        method: Method,
        trace: &mut Trace,
        given: &mut Option<GivenTiers>,
    ) -> Result<Vec<Hit>> {
        let z = self.index.cage_ready()?;
        let first = method.cage_first_stage().ok_or_else(|| Error::UnknownMethod {
            name: method.name().to_string(),
            known: "cage, bm25+cage, catrag+cage".into(),
        })?;
        let field = self.index.field(Method::Dense)?;
        // The first stage as `search` ran it before CAGE had a path of its own: without prefix
        // completion, behind the "nothing matches" gate of its own method.
        let first_ctx;
        let ctx = if ctx.options().prefix {
            first_ctx = QueryContext {
                entities: ctx.entities.clone(),
                ..QueryContext::new(self.index, ctx.text(), QueryOptions::default())
            };
            &first_ctx
        } else {
            ctx
        };
        let candidates = if first.gated() && ctx.nothing_matches(false) {
            Vec::new()
        } else {
            self.first_stage(ctx, self.index.config.cage.candidates, first, trace, given)?
        };
        let rerank_start = crate::index::knowledge::now_ms();
        let scores: Vec<f32> = candidates.iter().map(|h| h.score).collect();
        let relevance: Vec<f32> = match self.index.config.cage.relevance.of_first_stage(&scores) {
            Some(r) => r,
            None => {
                let q = ctx.vector(field, EmbedderSlot::Static)?;
                candidates
                    .iter()
                    .map(|h| field.vectors().row(h.passage as usize).map_or(0.0, |v| crate::embed::dot(v, &q)))
                    .collect()
            }
        };
        let rows: Vec<usize> = candidates.iter().map(|h| h.passage as usize).collect();
        let cos = z.cosines(&rows)?;
        let cage = &self.index.config.cage;
        let reranked = match cage.selection {
            crate::cage::CageSelection::Independent => {
                crate::cage::rerank_cosines(&relevance, &cos, cage.alpha, cage.anchors)?
            }
            crate::cage::CageSelection::Set => crate::cage::select_set(&relevance, &cos, cage.alpha)?,
        };
        let mut hits = Vec::with_capacity(k.min(reranked.len()));
        for r in reranked.into_iter().take(k) {
            hits.push(Hit { passage: candidates[r.candidate].passage, score: r.score });
            trace.reranked.push(r);
        }
        trace.candidates = candidates;
        trace.rerank_ms = Some((crate::index::knowledge::now_ms() - rerank_start).max(0.0));
        Ok(hits)
    }

    /// A graph method's search with everything the graph step computed (docs/method/spec.md §2–3;
    /// [`crate::catrag::Retriever::retrieve`]): the query is embedded once with the static
    /// embedder for the dense passage weights (and with the graph's embedder for the facts, if
    /// that is another one), its mentions are found by the text pipeline's query NER (CatRAG with
    /// anchoring on), and every passage is ranked by its PPR mass, ties by passage id. Duplicate
    /// passages share one graph node and its score.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that is not a graph method (`catrag+cage` walks
    /// the graph only as its first stage: search it with [`Searcher::run`]);
    /// [`Error::MissingEmbedder`] without the static embedder's passage vectors;
    /// [`Error::MissingGraph`] before [`Index::build_graph`]; the embedder's errors.
    pub fn search_graph(&mut self, query: &str, k: usize, method: Method) -> Result<GraphSearch> {
        let gm = method.graph_method().filter(|_| method.cage_first_stage().is_none()).ok_or_else(|| {
            Error::UnknownMethod { name: method.name().to_string(), known: "hipporag, catrag".into() }
        })?;
        let ctx = QueryContext::new(self.index, query, QueryOptions::default());
        self.counts.first_stages += 1;
        let (hits, retrieval) = self.graph_stage(&ctx, k, method, gm)?;
        Ok(GraphSearch { hits, retrieval })
    }

    /// The graph step of [`Searcher::search_graph`] over a built [`QueryContext`]: its first half
    /// ([`Searcher::graph_prepare`]), the edge tiers of the prepared batches from the attached
    /// tierer (an LLM tierer natively, else the offline embedding-similarity tierer), and its
    /// second half ([`Searcher::graph_finish`]: one PPR run, the ranking).
    fn graph_stage(
        &mut self,
        ctx: &QueryContext<'_>,
        k: usize,
        method: Method,
        gm: GraphMethod,
    ) -> Result<(Vec<Hit>, Retrieval)> {
        let (prepared, query_is_zero) = match self.graph_prepare(ctx, k, method, gm)? {
            GraphPrep::Done(hits, retrieval) => return Ok((hits, retrieval)),
            GraphPrep::Prepared(prepared, query_is_zero) => (prepared, query_is_zero),
        };
        let (tierer, answered) = self.tier_batches(&prepared, method)?;
        self.graph_finish(prepared, k, query_is_zero, &tierer, answered)
    }

    /// A graph walk resumed from its plan ([`Searcher::plan`]) with the tiers given for it:
    /// the plan's result when it walked nothing, else one PPR run and the ranking.
    ///
    /// # Errors
    /// [`Error::Config`] when the plan was made for another query or method; PPR's errors.
    fn resume_graph(&mut self, ctx: &QueryContext<'_>, method: Method, given: GivenTiers) -> Result<(Vec<Hit>, Retrieval)> {
        let (planned_method, planned_text) = match &given.step {
            GraphStep::Done(r) => (r.method, r.query.as_str()),
            GraphStep::Prepared(p) => (p.method, p.text.as_str()),
        };
        if planned_method != method || planned_text != ctx.text() {
            return Err(Error::Config(format!(
                "the edge tiers were planned for {} on {planned_text:?}, not {} on {:?}: plan the query again",
                planned_method.name(),
                method.name(),
                ctx.text()
            )));
        }
        match given.step {
            GraphStep::Done(found) => {
                let retrieval = found.trace.retrieval.ok_or(Error::MissingGraph { method: method.name().to_string() })?;
                Ok((found.hits, retrieval))
            }
            GraphStep::Prepared(p) => self.graph_finish(p.query, p.k, p.query_is_zero, &given.tierer, given.tiers),
        }
    }

    /// The graph walk of `query` up to its edge tiers, for tiers that come from elsewhere (the
    /// page's asynchronous LLM endpoint): [`Searcher::prepare_graph`] of the method's walk —
    /// the method's own (`hipporag`, `catrag`) or its first stage's (`catrag+cage`, with
    /// [`crate::cage::CageConfig::candidates`] hits). Give it back in [`Query::tiers`] with the
    /// tiers of its batches; the search then resumes from it (one first stage, one graph search
    /// in all).
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that walks no graph; as
    /// [`Searcher::prepare_graph`].
    pub fn plan(&mut self, query: &Query) -> Result<GraphStep> {
        let (walk, depth) = match query.method.cage_first_stage() {
            Some(first) => (first, self.index.config.cage.candidates),
            None => (query.method, query.k),
        };
        if walk.graph_method().is_none() {
            return Err(Error::UnknownMethod {
                name: query.method.name().to_string(),
                known: Method::all().filter(|m| m.graph_method().is_some()).map(Method::name).collect::<Vec<_>>().join(", "),
            });
        }
        self.prepare_graph(&Query { method: walk, k: depth, tiers: None, ..query.clone() })
    }

    /// The edge tiers of a prepared query's batches from the attached tierer (an LLM tierer
    /// natively, else the offline embedding-similarity tierer): its name and one answer per
    /// batch (`None`: the batch failed and is treated as Weak).
    ///
    /// # Errors
    /// [`Error::MissingGraph`] when the index has no graph.
    pub(crate) fn tier_batches(
        &self,
        prepared: &PreparedQuery,
        method: Method,
    ) -> Result<(String, Vec<Option<Vec<crate::catrag::Tier>>>)> {
        let kg = self.index.graph.as_ref().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
        let fallback_tierer = EmbeddingSimilarityTierer { thresholds: self.index.config.catrag.similarity_tiers };
        let tierer: &dyn EdgeTierer = self.tierer.as_deref().unwrap_or(&fallback_tierer);
        let requests = prepared.tier_requests(&kg.graph);
        let answered = if requests.is_empty() {
            Vec::new()
        } else {
            tierer.tier_all(&requests).into_iter().map(Result::ok).collect()
        };
        Ok((tierer.name().to_string(), answered))
    }

    /// The first half of a graph search: the "nothing matches" gate, the dense passage prior,
    /// the not-English fallback, then seeds, key-fact boost and coarse pruning
    /// ([`Retriever::prepare`]); no tiering call and no PPR. Counts one graph search.
    fn graph_prepare(&mut self, ctx: &QueryContext<'_>, k: usize, method: Method, gm: GraphMethod) -> Result<GraphPrep> {
        let field = self.index.field(method)?;
        let kg = self.index.graph.as_ref().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
        self.counts.graph_searches += 1;
        let query = ctx.text();
        // A retrieval that walked nothing: no seed, no tiering call, no PPR.
        let unwalked = |fallback: Option<Fallback>, warning: &str, scores: &[f32]| Retrieval {
            fallback,
            warnings: vec![warning.to_string()],
            passage_scores: kg
                .graph
                .passage_nodes()
                .iter()
                .map(|&n| {
                    let best = kg
                        .graph
                        .passage_indices(n)
                        .iter()
                        .filter_map(|&i| scores.get(i as usize))
                        .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
                    if best.is_finite() {
                        best
                    } else {
                        0.0
                    }
                })
                .collect(),
            ..Retrieval::unwalked(gm)
        };
        if ctx.nothing_matches(false) {
            return Ok(GraphPrep::Done(Vec::new(), unwalked(None, NOTHING_MATCHES, &[])));
        }
        let (passage_scores, query_is_zero, transformer, prior_query) = self.dense_passage_prior(ctx, field)?;
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
                rank_f32(scored, k, &self.index.corpus)
            };
            let retrieval = unwalked(Some(Fallback::NoSeeds), NOT_ENGLISH, &passage_scores);
            return Ok(GraphPrep::Done(hits, retrieval));
        }
        let inputs = self.catrag_inputs(ctx, kg, field, gm)?;
        let transformer_cfg = transformer.then(|| self.index.config.catrag.with_transformer_prior());
        let cfg = transformer_cfg.as_ref().unwrap_or(&self.index.config.catrag);
        let bridges = (cfg.bridge_weight > 0.0 && !cfg.no_bridge)
            || (cfg.query_title_weight > 0.0 && !cfg.no_query_title);
        // a graph put in place without Index::prepare_graph_search: its title index made here
        let local_titles;
        let titles = match &kg.titles {
            Some(t) => Some(t),
            None if bridges => {
                local_titles = crate::catrag::bridge::TitleIndex::build(&kg.graph, |i| {
                    self.index.corpus.get(i).map(|p| p.title.as_str())
                });
                Some(&local_titles)
            }
            None => None,
        };
        let input = QueryInput {
            query,
            query_vector: &inputs.graph_vector,
            passage_scores: &passage_scores,
            lexical_scores: &inputs.lexical_scores,
            titles: if bridges { titles } else { None },
            mentions: &inputs.mentions,
            prior_vectors: {
                let matrix = if transformer { self.index.dense(EmbedderSlot::Minilm).map(|f| f.vectors()) } else { Some(field.vectors()) };
                matrix.filter(|m| !m.is_empty() && m.dim() == prior_query.len()).map(|passages| {
                    crate::catrag::seeds::PriorVectors { query: &prior_query, passages }
                })
            },
        };
        let prepared = Retriever::prepare(&kg.graph, gm, &input, kg.embedder.as_ref(), cfg)?;
        Ok(GraphPrep::Prepared(prepared, query_is_zero))
    }

    /// The second half of a graph search after [`Searcher::graph_prepare`]: the tiers of the
    /// prepared batches (`tiers[i]` for batch i, `None`: Weak; named `tierer`), one PPR run
    /// ([`Retriever::finish`]) and the ranking ([`rank`], ties by passage id).
    fn graph_finish(
        &mut self,
        prepared: PreparedQuery,
        k: usize,
        query_is_zero: bool,
        tierer: &str,
        tiers: Vec<Option<Vec<crate::catrag::Tier>>>,
    ) -> Result<(Vec<Hit>, Retrieval)> {
        let kg = self.index.graph.as_ref().ok_or(Error::MissingGraph { method: "catrag".to_string() })?;
        let retrieval = self.retriever.finish(&kg.graph, prepared, tierer, tiers)?;
        // Passage node scores → corpus passages, ranked in f64, ties by passage id.
        let graph = &kg.graph;
        let mut scored: Vec<(u32, f64)> = Vec::with_capacity(self.index.corpus.len());
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
            rank(scored, k, &self.index.corpus)
        };
        Ok((hits, retrieval))
    }

    /// A graph search up to its edge tiers (the page's LLM tiering): the query context, seeds,
    /// boost and pruning ([`Retriever::prepare`]), no PPR. A query that walks nothing (nothing
    /// matches, not English) is already [`GraphStep::Done`]. The caller asks the endpoint for
    /// the tiers of [`PreparedGraphSearch::query`]'s batches, then calls
    /// [`Searcher::finish_graph`]. The query's options are not used (a graph search completes
    /// no prefix); its entity names are.
    ///
    /// # Errors
    /// As [`Searcher::search_graph`].
    pub fn prepare_graph(&mut self, query: &Query) -> Result<GraphStep> {
        let (k, method) = (query.k, query.method);
        let gm = method.graph_method().filter(|_| method.cage_first_stage().is_none()).ok_or_else(|| {
            Error::UnknownMethod { name: method.name().to_string(), known: "hipporag, catrag".into() }
        })?;
        let ctx = QueryContext {
            entities: query.entities.clone(),
            ..QueryContext::new(self.index, &query.text, QueryOptions::default())
        };
        self.counts.first_stages += 1;
        let step = self.graph_prepare(&ctx, k, method, gm)?;
        let (text, groups) = ctx.into_parts();
        let trace = Trace { groups, ..Trace::default() };
        Ok(match step {
            GraphPrep::Done(hits, retrieval) => GraphStep::Done(SearchResult {
                method,
                query: text,
                hits,
                trace: Trace { retrieval: Some(retrieval), ..trace },
            }),
            GraphPrep::Prepared(query, query_is_zero) => {
                GraphStep::Prepared(PreparedGraphSearch { query, method, text, k, query_is_zero, trace })
            }
        })
    }

    /// The rest of a graph search after [`Searcher::prepare_graph`]: the tiers of the prepared
    /// batches (`tiers[i]` for batch i, `None`: Weak; named `tierer`), one PPR run and the
    /// ranking, ties by passage id. The result carries its trace, as [`Searcher::run`]'s.
    ///
    /// # Errors
    /// [`Error::MissingGraph`] when the graph is gone; PPR's errors.
    pub fn finish_graph(
        &mut self,
        prepared: PreparedGraphSearch,
        tierer: &str,
        tiers: Vec<Option<Vec<crate::catrag::Tier>>>,
    ) -> Result<SearchResult> {
        let PreparedGraphSearch { query, method, text, k, query_is_zero, mut trace } = prepared;
        let (hits, retrieval) = self.graph_finish(query, k, query_is_zero, tierer, tiers)?;
        trace.retrieval = Some(retrieval);
        Ok(SearchResult { method, query: text, hits, trace })
    }

    /// The graph search's dense passage prior: cos(query, passage) for every corpus passage
    /// (HippoRAG 2's dense passage weights) under the best passage vectors the index holds —
    /// MiniLM's when they are attached (and `no_transformer_prior` is off), else the static
    /// embedder's — whether the query embeds to the zero vector under the static embedder, and
    /// whether the transformer's vectors were used (the graph search then takes
    /// [`crate::catrag::CatragConfig::with_transformer_prior`]), and the query vector the
    /// scores were made with (for the query-residual prior).
    fn dense_passage_prior(
        &self,
        ctx: &QueryContext<'_>,
        field: &DenseField,
    ) -> Result<(Vec<f32>, bool, bool, Vec<f32>)> {
        let q = ctx.vector(field, EmbedderSlot::Static)?;
        let query_is_zero = crate::embed::is_zero(&q);
        let transformer = match self.index.dense(EmbedderSlot::Minilm) {
            Some(f) if !self.index.config.catrag.no_transformer_prior && !f.vectors().is_empty() => Some(f),
            _ => None,
        };
        let (scores, prior_query) = match transformer {
            Some(f) => {
                let mq = ctx.vector(f, EmbedderSlot::Minilm)?.into_owned();
                (f.vectors().scores(&mq)?, mq)
            }
            None if field.vectors().is_empty() => (Vec::new(), Vec::new()),
            None => (field.vectors().scores(&q)?, q.to_vec()),
        };
        Ok((scores, query_is_zero, transformer.is_some(), prior_query))
    }

    /// The graph search's other inputs ([`CatragInputs`]): the query vector under the graph's
    /// embedder (the static query vector again when it is the same embedder), the mentions for
    /// symbolic anchoring (an attached recognizer's, else the rule-based query NER; typo-corrected
    /// against the entity names) and BM25's lexical passage prior (when the lexical prior or title
    /// bridges are on).
    fn catrag_inputs(
        &self,
        ctx: &QueryContext<'_>,
        kg: &KnowledgeGraph,
        field: &DenseField,
        gm: GraphMethod,
    ) -> Result<CatragInputs> {
        let query = ctx.text();
        let graph_vector = if Rc::ptr_eq(field.embedder(), &kg.embedder) {
            ctx.vector(field, EmbedderSlot::Static)?.into_owned()
        } else {
            kg.embedder.embed(query)?
        };
        let cfg = &self.index.config.catrag;
        let mentions = if gm == GraphMethod::CatRag && !cfg.no_anchor {
            if !ctx.entities.is_empty() {
                // The query's own entity names (the page's LLM NER).
                llm_mentions(query, &ctx.entities)
            } else {
                match self.recognizer.as_ref().map(|r| r.entities(query)) {
                    Some(Ok(names)) if !names.is_empty() => llm_mentions(query, &names),
                    // No recognizer, or it failed / found nothing: the rule-based query NER.
                    _ => kg.pipeline.query_entities(query),
                }
            }
        } else {
            Vec::new()
        };
        let mentions = self.correct_mentions(kg, mentions);
        let bridges = (cfg.bridge_weight > 0.0 && !cfg.no_bridge)
            || (cfg.query_title_weight > 0.0 && !cfg.no_query_title);
        let lexical_scores = if (cfg.lexical_passage_weight > 0.0 && !cfg.no_lexical) || bridges {
            let mut v = vec![0f32; self.index.corpus.len()];
            for (d, s) in self.index.bm25.score_groups(ctx.groups(false)) {
                if let Some(x) = v.get_mut(d as usize) {
                    *x = s;
                }
            }
            v
        } else {
            Vec::new()
        };
        Ok(CatragInputs { graph_vector, mentions, lexical_scores })
    }

    /// Typo tolerance for anchoring ([`fuzzy::EntityLookup`]): a name mention that matches no
    /// entity exactly is rewritten to the display name of the one entity nearest to it within
    /// BM25's typo budget, so that anchoring finds it exactly; others are left as they are.
    /// Nothing changes when [`crate::index::Bm25Config::typos`] is off.
    fn correct_mentions(&self, kg: &KnowledgeGraph, mut mentions: Vec<Mention>) -> Vec<Mention> {
        if !self.index.config.bm25.typos {
            return mentions;
        }
        let mut local = None;
        for m in &mut mentions {
            if matches!(m.kind, EntityKind::Date | EntityKind::Number) || kg.graph.entity_id(&m.text).is_some() {
                continue;
            }
            let lookup = match &kg.entity_lookup {
                Some(l) => l,
                // a graph put in place without Index::prepare_graph_search: made for this mention
                None => local.get_or_insert_with(|| fuzzy::EntityLookup::new(&kg.graph)),
            };
            if let Some((node, _)) = lookup.nearest(&m.text, &self.index.config.bm25) {
                if let Some(crate::graph::NodeRef::Entity { name, .. }) = kg.graph.node(node) {
                    m.text = name.to_string();
                }
            }
        }
        mentions
    }

    /// A graph method's search explained: [`Searcher::run`] once, then [`Searcher::explain_result`].
    ///
    /// # Errors
    /// As [`Searcher::search_graph`].
    pub fn explain(&mut self, query: &str, k: usize, method: Method, config: &ExplainConfig) -> Result<SearchExplanation> {
        if method.graph_method().is_none() || method.cage_first_stage().is_some() {
            return Err(Error::UnknownMethod { name: method.name().to_string(), known: "hipporag, catrag".into() });
        }
        let found = self.run(&Query::new(query, k, method))?;
        self.explain_result(&found, config)
    }

    /// Why the hits of a graph method's `result` rank where they do ([`crate::catrag::explain()`]):
    /// per hit its seeds, its entities by PPR mass and the best paths from a seed to it, with
    /// each arc's type, weight and multiplier; plus the entities with the most mass overall.
    /// Reads the result's trace; runs no search.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] when `result` is not a graph method's (`hipporag`, `catrag`);
    /// [`Error::MissingGraph`] when the graph is gone.
    pub fn explain_result(&self, result: &SearchResult, config: &ExplainConfig) -> Result<SearchExplanation> {
        let method = result.method;
        let retrieval = result
            .trace
            .retrieval
            .as_ref()
            .filter(|_| method.cage_first_stage().is_none())
            .ok_or_else(|| Error::UnknownMethod { name: method.name().to_string(), known: "hipporag, catrag".into() })?;
        let kg = self.index.graph.as_ref().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
        let graph = &kg.graph;
        let damping = self.index.config.catrag.ppr.damping;
        let mut passages = Vec::with_capacity(result.hits.len());
        for h in &result.hits {
            if let Some(node) = graph.passage_node(h.passage) {
                passages.push(explain(graph, retrieval, node, damping, config)?);
            }
        }
        Ok(SearchExplanation {
            method,
            tierer: retrieval.tierer.clone(),
            hits: result.hits.clone(),
            top_entities: top_entities(graph, retrieval, config.top_entities),
            changes: overlay_summary(retrieval),
            retrieval: retrieval.clone(),
            passages,
        })
    }

    /// A CAGE method's search (docs/method/spec.md §4; [`Searcher::run`]): the first stage's top N once,
    /// coherence over the candidates' stored graph embeddings (an N × N cosine matrix; no encoder
    /// runs) and fusion. Returns the top `k` hits (score = fused score) with their [`Reranked`]
    /// details.
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] for a method that is not a CAGE method; [`Error::Model`] when the
    /// graph embeddings are not stored for every passage under the configuration
    /// ([`Index::compute_cage_z`]); the first stage's errors.
    pub fn search_cage(&mut self, query: &str, k: usize, method: Method) -> Result<Vec<(Hit, Reranked)>> {
        if method.cage_first_stage().is_none() {
            return Err(Error::UnknownMethod { name: method.name().to_string(), known: "cage, bm25+cage, catrag+cage".into() });
        }
        let found = self.run(&Query::new(query, k, method))?;
        Ok(found.hits.into_iter().zip(found.trace.reranked).collect())
    }

    /// The distinct index terms of `query`, for [`Searcher::highlights`] (analyse a query once, then
    /// highlight as many passages as needed). A [`SearchResult`] carries them already
    /// ([`Trace::terms`]).
    pub fn query_terms(&self, query: &str) -> HashSet<String> {
        self.query_terms_with(query, QueryOptions::default())
    }

    /// [`Searcher::query_terms`] plus every index term the query matches under BM25's typo
    /// tolerance and, with `options.prefix`, the completions of its last word.
    pub fn query_terms_with(&self, query: &str, options: QueryOptions) -> HashSet<String> {
        QueryContext::new(self.index, query, options).terms()
    }

    /// The index terms of a result's query and of the expansion its search ran (as
    /// [`Searcher::query_terms_with`] with the search's options, without expanding again).
    pub fn result_terms(&self, result: &SearchResult) -> HashSet<String> {
        match &result.trace.groups {
            Some(groups) => terms_of(self.index, &result.query, groups),
            None => terms_of(
                self.index,
                &result.query,
                &self.index.bm25.expand(&self.index.analyzer, &result.query, result.trace.prefix),
            ),
        }
    }

    /// Byte ranges of `text` whose index term is one of `terms` (from [`Searcher::query_terms`] or
    /// [`Trace::terms`]), in order, for highlighting.
    pub fn highlights(&self, terms: &HashSet<String>, text: &str) -> Vec<(usize, usize)> {
        crate::text::highlight::highlight_ranges(&self.index.analyzer, terms, text)
    }
}

/// The analysed terms of `query` (NFC) plus every index term of `index` a group of `groups`
/// reaches.
fn terms_of(index: &Index, query: &str, groups: &[TermGroup]) -> HashSet<String> {
    let mut terms: HashSet<String> = index.analyzer.terms(query).into_iter().collect();
    for g in groups {
        terms.extend(g.variants.iter().filter_map(|&(t, _)| index.bm25.term(t)).map(str::to_string));
    }
    terms
}

/// Mentions from a recognizer's entity names: each located in `query` (case-insensitively) for
/// its byte span, else the span `(0, 0)`; all of kind `Name` except a 4-digit year (`Date`).
/// Duplicates and names empty after trimming are dropped.
fn llm_mentions(query: &str, names: &[String]) -> Vec<Mention> {
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

#[cfg(test)]
mod graph_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_query_vectors_are_checked_and_normalised() {
        assert_eq!(unit_query_vector(vec![3.0, 4.0], 2).unwrap(), vec![0.6, 0.8]);
        assert_eq!(unit_query_vector(vec![0.0, 0.0], 2).unwrap(), vec![0.0, 0.0]);
        assert_eq!(unit_query_vector(vec![1.0], 2).unwrap_err(), "1 values, expected 2");
        assert_eq!(unit_query_vector(vec![1.0, f32::NAN], 2).unwrap_err(), "a value that is not a finite number");
    }

    #[test]
    fn one_ranking_breaks_ties_by_passage_id() {
        let mut c = Corpus::new();
        for id in ["p3", "p1", "p2", "p0"] {
            c.add(crate::corpus::Passage { id: id.into(), title: String::new(), text: "x".into() }).unwrap();
        }
        // Positions 0..4 hold ids p3, p1, p2, p0; scores 0.5, 0.9, 0.5, 0.5.
        let scored = vec![(0, 0.5), (1, 0.9), (2, 0.5), (3, 0.5)];
        let ids = |hits: Vec<Hit>| hits.iter().map(|h| c.get(h.passage).unwrap().id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(rank(scored.clone(), 4, &c)), ["p1", "p0", "p2", "p3"]);
        assert_eq!(ids(rank(scored.clone(), 2, &c)), ["p1", "p0"]);
        assert!(rank(scored, 0, &c).is_empty());
        let f32s = vec![(0, 0.5f32), (1, 0.9), (2, 0.5), (3, 0.5)];
        assert_eq!(ids(rank_f32(f32s, 3, &c)), ["p1", "p0", "p2"]);
    }

    /// An index that carries transformer (MiniLM-slot) passage vectors takes its passage prior from
    /// them: with no fact to seed from, the walk falls back to that prior's ranking, the transformer
    /// one, and `no_transformer_prior` brings the static one back.
    #[test]
    fn the_passage_prior_takes_the_transformer_vectors_when_attached() {
        use crate::catrag::CatragConfig;
        use crate::corpus::Passage;
        use crate::embed::testing::MapEmbedder;
        use crate::embed::Embedder;
        use crate::index::IndexConfig;
        let mut c = Corpus::new();
        for (id, title, text) in [
            ("d", "Paris", "Paris is the capital of France."),
            ("e", "Lyon", "Lyon is a city in France."),
            ("f", "Nice", "Nice is a city on the coast."),
        ] {
            c.add(Passage { id: id.into(), title: title.into(), text: text.into() }).unwrap();
        }
        let mut index = Index::build(c, &IndexConfig::default()).unwrap();
        let s: Rc<dyn Embedder> = Rc::new(crate::embed::StaticEmbedder::minilm().unwrap());
        index.attach_embedder(EmbedderSlot::Static, s.clone(), &mut |_, _| {}).unwrap();
        index.build_graph_from_triples(s, &[], None, &mut |_, _, _| {}).unwrap();
        let q = "capital of France";
        let ids = |index: &Index| -> Vec<String> {
            let found = index.searcher().search_graph(q, 3, Method::Catrag).unwrap();
            assert_eq!(found.retrieval.fallback, Some(Fallback::NoSeeds));
            found.hits.iter().map(|h| index.corpus().get(h.passage).unwrap().id.clone()).collect()
        };
        let static_order = ids(&index);
        assert_eq!(static_order[0], "d", "the static table puts Paris first");
        // The transformer slot: Nice 1.0, Lyon 0.6, Paris 0 against the query.
        let texts: Vec<String> = index.corpus().passages().iter().map(Index::passage_text).collect();
        let t: Rc<dyn Embedder> = Rc::new(MapEmbedder::new(
            2,
            &[
                (q, vec![1.0, 0.0]),
                (texts[0].as_str(), vec![0.0, 1.0]),
                (texts[1].as_str(), vec![0.6, 0.8]),
                (texts[2].as_str(), vec![1.0, 0.0]),
            ],
        ));
        index.attach_embedder(EmbedderSlot::Minilm, t, &mut |_, _| {}).unwrap();
        assert_eq!(ids(&index), ["f", "e", "d"]);
        index.set_catrag_config(CatragConfig { no_transformer_prior: true, ..CatragConfig::default() }).unwrap();
        assert_eq!(ids(&index), static_order);
    }
}
