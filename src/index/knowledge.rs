//! The knowledge graph held by an [`super::Index`] for the graph methods `hipporag` and `catrag`
//! (docs/method/spec.md §1–3): the [`Graph`] built from the corpus's OpenIE triples with one embedder, that
//! embedder (for queries), the text pipeline (query NER), the hubs for diagnostics, the
//! structures derived once per graph for search (the typo-tolerant entity lookup, the title
//! index), and how the build went. Plain data: what a query changes lives in its
//! [`crate::search::Searcher`].

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::catrag::hub_nodes;
use crate::embed::Embedder;
use crate::extract::ExtractStats;
use crate::graph::{AddSummary, Graph, GraphCounts, SynonymStats};
use crate::text::Pipeline;

/// Which step of [`super::Index::build_graph`] a progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphStage {
    /// OpenIE over the passages (`done`/`total` in passages).
    Extracting,
    /// Embedding entity names and fact texts (in texts).
    Embedding,
    /// Synonym kNN (in units proportional to the pairs compared).
    Synonyms,
}

/// What building the graph did and how long each step took.
///
/// Times are wall-clock milliseconds (natively the monotonic clock, in wasm JavaScript's
/// `Date.now()`, whole milliseconds); `None` in a report read from an index file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphBuildReport {
    /// Nodes and edges by type.
    pub counts: GraphCounts,
    /// Triples given to the graph.
    pub triples: usize,
    /// What the extractor reported (`None` when the triples were given ready-made).
    pub extract: Option<ExtractStats>,
    /// What adding the passages did (duplicates, repeated triples, empty arguments).
    pub add: AddSummary,
    /// The synonym kNN's work.
    pub synonyms: SynonymStats,
    /// Milliseconds of OpenIE (`None` for given triples).
    pub extract_ms: Option<f64>,
    /// Milliseconds adding passages and triples (nodes, facts, relation and context edges).
    pub add_ms: Option<f64>,
    /// Milliseconds embedding entity names and facts.
    pub embed_ms: Option<f64>,
    /// Milliseconds of the synonym kNN.
    pub synonyms_ms: Option<f64>,
    /// Milliseconds assembling the CSR.
    pub csr_ms: Option<f64>,
}

/// A built knowledge graph with everything a graph query needs besides the dense passage scores.
pub struct KnowledgeGraph {
    pub(crate) graph: Graph,
    pub(crate) embedder: Rc<dyn Embedder>,
    pub(crate) pipeline: Pipeline,
    pub(super) hubs: Vec<u32>,
    pub(super) report: GraphBuildReport,
    /// Typo-tolerant entity lookup for anchoring, made by [`super::Index::prepare_graph_search`]
    /// when the graph is built, extended or loaded (`None` before).
    pub(crate) entity_lookup: Option<super::fuzzy::EntityLookup>,
    /// Entity → passages titled by it (title bridges), made with the entity lookup.
    pub(crate) titles: Option<crate::catrag::bridge::TitleIndex>,
}

impl std::fmt::Debug for KnowledgeGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeGraph")
            .field("counts", &self.report.counts)
            .field("prepared", &(self.entity_lookup.is_some() && self.titles.is_some()))
            .finish()
    }
}

impl KnowledgeGraph {
    pub(super) fn new(
        graph: Graph,
        embedder: Rc<dyn Embedder>,
        pipeline: Pipeline,
        report: GraphBuildReport,
    ) -> Self {
        let hubs = hub_nodes(&graph, 0.01);
        KnowledgeGraph {
            graph,
            embedder,
            pipeline,
            hubs,
            report,
            entity_lookup: None,
            titles: None,
        }
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The embedder its entity and fact vectors come from (queries are embedded with it).
    pub fn embedder(&self) -> &Rc<dyn Embedder> {
        &self.embedder
    }

    /// How the build went.
    pub fn report(&self) -> &GraphBuildReport {
        &self.report
    }

    /// The top 1% of nodes by degree (CatRAG's hubs, [`crate::catrag::hub_nodes`]).
    pub fn hubs(&self) -> &[u32] {
        &self.hubs
    }

    /// What the graph holds of corpus passage `index`, whose title and text are `passage`'s: the
    /// facts it states (subject and object by display name), the entities it contains, and
    /// whether its text looked English to the pipeline (no triples are extracted otherwise).
    pub fn passage_facts(&self, index: u32, passage: &crate::corpus::Passage) -> PassageFacts {
        let graph = &self.graph;
        let name = |n: u32| match graph.node(n) {
            Some(crate::graph::NodeRef::Entity { name, .. }) => name.to_string(),
            _ => String::new(),
        };
        let node = graph.passage_node(index);
        let triples = node
            .map(|n| graph.facts_of_passage(n))
            .unwrap_or(&[])
            .iter()
            .filter_map(|&f| graph.facts().get(f as usize))
            .map(|f| FactText {
                subject: name(f.subject),
                relation: f.relation.clone(),
                object: name(f.object),
            })
            .collect();
        let entities = node.map(|n| graph.entities_of(n)).unwrap_or(&[]).iter().map(|&e| name(e)).collect();
        let english = self.pipeline.analyze(&passage.title, &passage.text).language.english;
        PassageFacts { english, triples, entities }
    }
}

impl super::Index {
    /// Heap bytes held by each structure of the index, estimated from capacities: the passages
    /// (ids, titles, texts), BM25, the passage vectors of each embedder slot, and, with a
    /// knowledge graph, each of its structures ([`Graph::memory_breakdown`], names prefixed
    /// `graph: `) and the typo-tolerant entity lookup. `(name, bytes)` in a fixed order. The
    /// embedders' own tables (the static embedder's token table) are not counted.
    pub fn memory_breakdown(&self) -> Vec<(String, usize)> {
        let passages = self.corpus.passages();
        let texts = std::mem::size_of_val(passages)
            + passages
                .iter()
                .map(|p| p.id.capacity() + p.title.capacity() + p.text.capacity())
                .sum::<usize>();
        let mut out = vec![
            ("passages (ids, titles, texts)".to_string(), texts),
            ("BM25".to_string(), self.bm25.heap_bytes()),
            (
                "passage vectors".to_string(),
                self.dense.iter().flatten().map(super::DenseField::heap_bytes).sum(),
            ),
        ];
        if let Some(kg) = &self.graph {
            out.extend(kg.graph.memory_breakdown().into_iter().map(|(n, b)| (format!("graph: {n}"), b)));
            out.push((
                "graph: typo-tolerant entity lookup".to_string(),
                kg.entity_lookup.as_ref().map_or(0, |l| l.heap_bytes()),
            ));
        }
        out
    }
}

/// Milliseconds on the index's one clock (the step times of [`GraphBuildReport`], of
/// `LoadNotes::phases_ms` and of a CAGE search's rerank): natively since the first call
/// (monotonic), in wasm JavaScript's `performance.now()` (fractions of a millisecond, in a page,
/// a worker and Node), or `Date.now()` (whole milliseconds) where there is no `performance`.
pub(crate) fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let global = js_sys::global();
        js_sys::Reflect::get(&global, &"performance".into())
            .ok()
            .filter(|p| p.is_object())
            .and_then(|perf| {
                let now = js_sys::Reflect::get(&perf, &"now".into()).ok()?.dyn_into::<js_sys::Function>().ok()?;
                now.call0(&perf).ok()?.as_f64()
            })
            .unwrap_or_else(js_sys::Date::now)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

/// A clock for [`GraphBuildReport`]'s step times, on [`now_ms`].
pub(super) struct Stopwatch {
    start: f64,
}

impl Stopwatch {
    pub(super) fn start() -> Self {
        Stopwatch { start: now_ms() }
    }

    /// Milliseconds since [`Stopwatch::start`]. Always `Some`; an `Option` so that reports read
    /// from an index file, which drop their times, share the type.
    pub(super) fn ms(&self) -> Option<f64> {
        Some((now_ms() - self.start).max(0.0))
    }
}

/// One fact as text ([`KnowledgeGraph::passage_facts`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactText {
    /// The subject entity's display name.
    pub subject: String,
    /// The relation as first seen.
    pub relation: String,
    /// The object entity's display name.
    pub object: String,
}

/// A passage's part of the knowledge graph ([`KnowledgeGraph::passage_facts`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassageFacts {
    /// Whether the text looked English (triples are extracted from English text only).
    pub english: bool,
    /// The facts the passage states.
    pub triples: Vec<FactText>,
    /// The entities it contains, by display name.
    pub entities: Vec<String>,
}
