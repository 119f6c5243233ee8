//! The JavaScript API (`#[wasm_bindgen]` only): converts JS values in and out with
//! `serde-wasm-bindgen`, turns [`crate::Error`] into JS `Error`s, forwards progress callbacks,
//! and calls the engine. No algorithm lives here.
//!
//! ```js
//! import init, { Engine } from "cairn";
//! await init();
//! const engine = new Engine({ bm25: { k1: 0.9, b: 0.4 } });
//! engine.addPassages([{ id: "p1", title: "Paris", text: "Paris is the capital of France." }]);
//! engine.build((done, total) => console.log(done, total));
//! const { hits } = engine.query({ query: "capital of France", k: 5, method: "bm25" });
//! ```

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::corpus::{parse_jsonl, split_document, Passage};
use std::rc::Rc;

use crate::embed::{Embedder, StaticEmbedder, VectorMatrix};
use crate::engine::Phase;
use crate::index::{EmbedderSlot, Index, IndexConfig, Method};
use crate::search::{HitView, Query, QueryResult};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Engine configuration; every field is optional and defaults to docs/method/spec.md's values. */
export interface EngineConfig {
  /** BM25 and its query side: typo tolerance (on by default) and prefix completion settings. */
  bm25?: { k1?: number; b?: number; typos?: boolean; typo_known_terms?: boolean; typo_first_char?: boolean;
    typo_one_chars?: number; typo_two_chars?: number; typo_weight?: number; typo_max_terms?: number;
    prefix_weight?: number; prefix_max_terms?: number; prefix_min_chars?: number };
}
/** A passage to index. `id` defaults to "passage-N"; `title` to "". */
export interface PassageInput {
  id?: string;
  title?: string;
  text: string;
}
/** One query (`Engine.query`, `Engine.planLlmTiers`). */
export interface Query {
  /** The query text. */
  query: string;
  /** Number of passages to return, 1 to 1000. Default 5. */
  k?: number;
  /** Retrieval method name, one of `engine.availableMethods()`. Default "bm25". */
  method?: string;
  /** Search as you type: the query's last word also matches the words it begins (BM25 and
   *  hybrid's BM25 side). Default false. */
  prefix?: boolean;
  /** Also explain a graph method's hits (seeds, paths), read from the same search. Default false. */
  explain?: boolean;
  /** The query's entity names from an LLM NER (`LlmEndpoint.entities`), for catrag's symbolic
   *  anchoring. Default: the rule-based query NER. */
  entities?: string[];
}
/** One ranked passage. Highlight ranges are [start, end) offsets in UTF-16 code units. */
export interface SearchHit {
  rank: number;
  id: string;
  title: string;
  text: string;
  score: number;
  highlights: [number, number][];
  titleHighlights: [number, number][];
  /** CAGE methods: the fusion's relevance term (the first stage's score, min-max normalised). */
  relevance?: number;
  /** CAGE methods: mean cosine of this passage's graph embedding with the anchors'. */
  coherence?: number;
}
/** `Engine.query`'s answer: the hits and what the search computed on the way. */
export interface QueryResult {
  method: string;
  /** The query, composed to NFC. */
  query: string;
  hits: SearchHit[];
  /** Why the hits are weak (a method that ranks by meaning alone answered a query none of whose
   *  words occurs in any passage), or null. */
  weak: string | null;
  /** The explanation of a graph method's hits when `explain` was asked, else null. */
  explanation: SearchExplanation | null;
  /** The edge tierer of a graph walk that tiered edges (`embedding-similarity`, `llm:{model}`), or null. */
  tierer: string | null;
  /** Seeds whose edges fell back to Weak because a batch had no tiers. */
  tierFailures: number;
  /** The graph walk's warnings (empty for the other methods). */
  warnings: string[];
  /** CAGE methods: the rerank's own time after the first stage, in milliseconds; else null. */
  rerankMs: number | null;
  /** CAGE methods: the first stage's candidates reranked; else 0. */
  candidates: number;
}
/** Called during long work: `done` of `total` items of the named phase ("bm25", "embed"). */
export type ProgressCallback = (done: number, total: number, phase: string) => void;
/** The knowledge graph's build report (Engine.buildGraph, Engine.graphReport). */
export interface GraphReport {
  counts: { nodes: number; entity_nodes: number; passage_nodes: number; passages: number; facts: number;
    relation_edges: number; synonym_edges: number; context_edges: number; arcs: number };
  triples: number;
  extract: { passages: number; english_passages: number; non_english_passages: number; sentences: number; triples: number } | null;
  [more: string]: unknown;
}
/** A passage's facts and entities in the knowledge graph (Engine.passageGraph). */
export interface PassageGraph {
  id: string;
  english: boolean;
  triples: { subject: string; relation: string; object: string }[];
  entities: string[];
}
/** Engine.explain's answer: seeds, overlay, PPR report and per-hit paths (see catrag::explain). */
export type SearchExplanation = Record<string, unknown>;
/** Sizes of the engine's corpus and index. */
export interface EngineStats {
  passages: number;
  built: boolean;
  terms: number;
  postings: number;
  avgPassageTerms: number;
  textBytes: number;
  indexBytes: number;
  /** Embedders loaded, with their dimension (a built index holds their passage vectors). */
  embedders: { name: string; dims: number }[];
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `EngineConfig` in TypeScript (optional arguments need a named type to be typed `?`).
    #[wasm_bindgen(typescript_type = "EngineConfig")]
    pub type EngineConfigArg;
    /// `Query` in TypeScript.
    #[wasm_bindgen(typescript_type = "Query")]
    pub type QueryArg;
    /// An `LlmPlan` given to `Engine.query` (optional arguments need a named type to be typed `?`).
    #[wasm_bindgen(typescript_type = "LlmPlan")]
    pub type LlmPlanArg;
    /// `ProgressCallback` in TypeScript.
    #[wasm_bindgen(typescript_type = "ProgressCallback")]
    pub type ProgressArg;
}

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The file names of the English text pipeline's resources, in the order `loadTextPipeline`
/// takes them (`pos-perceptron.bin`, `lemma-en.txt`, `lemma-index.bin`, `gazetteer-en.txt`;
/// served beside the package as `text/<name>`). The knowledge graph (hipporag, catrag, loading
/// an index file that holds a graph) and CAGE need them; BM25 and the dense methods do not.
#[wasm_bindgen(js_name = textPipelineFiles, unchecked_return_type = "string[]")]
pub fn text_pipeline_files() -> JsValue {
    serde_wasm_bindgen::to_value(&crate::text::RESOURCE_FILES).unwrap_or(JsValue::NULL)
}

/// Whether the English text pipeline can run: its resources are compiled into this build or
/// were given to `loadTextPipeline`.
#[wasm_bindgen(js_name = textPipelineLoaded)]
pub fn text_pipeline_loaded() -> bool {
    crate::text::resources_loaded()
}

/// Give the English text pipeline its resource files (the bytes of the four
/// `textPipelineFiles()`, in that order), once per page: every engine shares them. Calling it
/// again once loaded changes nothing. Throws, naming the file, when one does not parse (a
/// truncated download, another file); nothing is kept then.
#[wasm_bindgen(js_name = loadTextPipeline)]
pub fn load_text_pipeline(
    pos_perceptron: &[u8],
    lemma_rules: &[u8],
    lemma_index: &[u8],
    gazetteer: &[u8],
) -> Result<(), JsError> {
    crate::text::load_resources(crate::text::TextResources { pos_perceptron, lemma_rules, lemma_index, gazetteer })
        .map_err(js_err)
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// Deserialise a JS value through `serde_json::Value`, so that `deny_unknown_fields` sees every
/// key (serde-wasm-bindgen's struct path only reads the keys it knows).
fn from_js<T: serde::de::DeserializeOwned>(v: JsValue) -> Result<T, String> {
    let json: serde_json::Value = serde_wasm_bindgen::from_value(v).map_err(|e| e.to_string())?;
    serde_json::from_value(json).map_err(|e| e.to_string())
}

/// A corpus and its index, in the page's worker ([`crate::engine::Engine`]). Add passages,
/// `build`, then `search`. Adding passages after `build` makes the engine unbuilt until the next
/// `build`.
#[wasm_bindgen]
pub struct Engine {
    inner: crate::engine::Engine,
    /// The steps of the last `loadIndex` and `loadIndexExtras` and their milliseconds.
    load_phases: Vec<(&'static str, f64)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PassageIn {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    title: Option<String>,
    text: String,
}

/// A query from JS (`Query` in TypeScript).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryIn {
    query: String,
    #[serde(default)]
    k: Option<f64>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    prefix: Option<bool>,
    #[serde(default)]
    explain: Option<bool>,
    #[serde(default)]
    entities: Option<Vec<String>>,
}

/// `Engine.query`'s answer (`QueryResult` in TypeScript).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QueryOut<'a> {
    method: &'static str,
    query: &'a str,
    hits: Vec<SearchHit<'a>>,
    weak: Option<&'static str>,
    explanation: Option<&'a crate::search::SearchExplanation>,
    tierer: Option<&'a str>,
    tier_failures: usize,
    warnings: &'a [String],
    rerank_ms: Option<f64>,
    candidates: usize,
}

impl<'a> QueryOut<'a> {
    /// The JS view of `out`: hit highlights as UTF-16 ranges, the trace's figures.
    fn of(out: &'a QueryResult) -> QueryOut<'a> {
        let trace = &out.result.trace;
        let retrieval = trace.retrieval.as_ref();
        QueryOut {
            method: out.result.method.name(),
            query: &out.result.query,
            hits: out.hits.iter().map(SearchHit::of).collect(),
            weak: trace.weak,
            explanation: out.explanation.as_ref(),
            tierer: retrieval.and_then(|r| r.tierer.as_deref()),
            tier_failures: retrieval.map_or(0, |r| r.tier_failures),
            warnings: retrieval.map_or(&[], |r| r.warnings.as_slice()),
            rerank_ms: trace.rerank_ms,
            candidates: trace.candidates.len(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchHit<'a> {
    rank: usize,
    id: &'a str,
    title: &'a str,
    text: &'a str,
    score: f32,
    highlights: Vec<(u32, u32)>,
    title_highlights: Vec<(u32, u32)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    relevance: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coherence: Option<f32>,
}

impl<'a> SearchHit<'a> {
    /// A hit as JS reads it: the view's byte ranges as UTF-16 ranges.
    fn of(h: &'a HitView) -> SearchHit<'a> {
        SearchHit {
            rank: h.rank,
            id: &h.id,
            title: &h.title,
            text: &h.text,
            score: h.score,
            highlights: utf16_ranges(&h.text, &h.highlights),
            title_highlights: utf16_ranges(&h.title, &h.title_highlights),
            relevance: h.relevance,
            coherence: h.coherence,
        }
    }
}

/// The [`Query`] of a JS query (`k` 1–1000, default 5; `method` default `bm25`).
///
/// # Errors
/// An unknown key or method, a `k` out of range.
fn query_of(q: QueryArg) -> Result<Query, JsError> {
    let q: QueryIn = from_js(JsValue::from(q)).map_err(|e| js_err(format!("invalid query: {e}")))?;
    let k = q.k.unwrap_or(5.0);
    if !(k.fract() == 0.0 && (1.0..=1000.0).contains(&k)) {
        return Err(js_err(format!("k must be a whole number from 1 to 1000, got {k}")));
    }
    let method: Method = q.method.as_deref().unwrap_or("bm25").parse().map_err(js_err)?;
    let mut query = Query::new(q.query, k as usize, method)
        .with_options(crate::index::QueryOptions { prefix: q.prefix.unwrap_or(false) })
        .with_entities(q.entities.unwrap_or_default());
    query.explain = q.explain.unwrap_or(false);
    Ok(query)
}

use crate::text::highlight::utf16_ranges;

/// The JS function behind an optional callback argument (anything not callable is ignored).
fn callback(arg: Option<ProgressArg>) -> Option<js_sys::Function> {
    arg.and_then(|a| JsValue::from(a).dyn_into::<js_sys::Function>().ok())
}

/// A progress closure that forwards `(done, total, phase)` to an optional JS callback (a throwing
/// callback must not abort indexing: its error is ignored), with the phase's name
/// ([`Phase::name`]).
fn phase_progress(f: &Option<js_sys::Function>) -> impl FnMut(Phase, usize, usize) + '_ {
    move |phase, done, total| {
        if let Some(f) = f {
            let _ = f.call3(
                &JsValue::NULL,
                &JsValue::from(done as f64),
                &JsValue::from(total as f64),
                &JsValue::from_str(phase.name()),
            );
        }
    }
}

impl Engine {
    /// Add all or nothing; a rejected batch leaves a built index built.
    fn add_all(&mut self, passages: Vec<Passage>) -> Result<u32, JsError> {
        Ok(self.inner.add_passages(passages).map_err(js_err)? as u32)
    }

    fn index(&self) -> Result<&Index, JsError> {
        self.inner.index().map_err(js_err)
    }

    fn index_mut(&mut self) -> Result<&mut Index, JsError> {
        self.inner.index_mut().map_err(js_err)
    }

    fn stats_js(&self) -> JsValue {
        serde_wasm_bindgen::to_value(&self.inner.stats()).unwrap_or(JsValue::NULL)
    }
}

/// The engine configuration a constructor was given (`undefined` or `null`: the defaults).
fn engine_config(config: Option<EngineConfigArg>) -> Result<IndexConfig, JsError> {
    match config.map(JsValue::from).filter(|c| !c.is_undefined() && !c.is_null()) {
        None => Ok(IndexConfig::default()),
        Some(c) => from_js(c).map_err(|e| js_err(format!("invalid configuration: {e}"))),
    }
}

#[wasm_bindgen]
impl Engine {
    /// A new, empty engine. `config` may be omitted; unknown keys are an error.
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<EngineConfigArg>) -> Result<Engine, JsError> {
        Ok(Engine {
            inner: crate::engine::Engine::new(engine_config(config)?).map_err(js_err)?,
            load_phases: Vec::new(),
        })
    }

    /// A new, empty engine that shares this engine's static embedder: its token table (7.8 MB
    /// for the bundled one) is neither downloaded nor copied again, so JavaScript need not keep
    /// the table's bytes to start over with another corpus. `config` as in the constructor;
    /// MiniLM vectors and CAGE's encoder are not carried over.
    #[wasm_bindgen(js_name = emptyLike)]
    pub fn empty_like(&self, config: Option<EngineConfigArg>) -> Result<Engine, JsError> {
        Ok(Engine {
            inner: self.inner.empty_like(engine_config(config)?).map_err(js_err)?,
            load_phases: Vec::new(),
        })
    }

    /// Add passages `{id?, title?, text}`; all or nothing. Returns the number added.
    /// Throws on a malformed item (naming its position) or a duplicate id.
    #[wasm_bindgen(js_name = addPassages)]
    pub fn add_passages(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "PassageInput[]")] passages: JsValue,
    ) -> Result<u32, JsError> {
        let items: Vec<serde_json::Value> = serde_wasm_bindgen::from_value(passages).map_err(|e| {
            js_err(format!("addPassages expects an array of {{id, title, text}} objects: {e}"))
        })?;
        let base = self.inner.corpus().len();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let p: PassageIn = serde_json::from_value(item).map_err(|e| {
                js_err(format!("passage at position {i}: {e} (expected {{id, title, text}})"))
            })?;
            out.push(Passage {
                id: p.id.unwrap_or_else(|| format!("passage-{}", base + i + 1)),
                title: p.title.unwrap_or_default(),
                text: p.text,
            });
        }
        self.add_all(out)
    }

    /// Add the passages of a JSONL text (one `{id?, title?, text}` per line); all or nothing.
    /// `name` labels errors (`"{name}, line N: …"`) and default ids. Returns the number added.
    #[wasm_bindgen(js_name = addJsonl)]
    pub fn add_jsonl(&mut self, name: &str, text: &str) -> Result<u32, JsError> {
        let passages = parse_jsonl(name, text).map_err(js_err)?;
        self.add_all(passages)
    }

    /// Split a plain-text or Markdown document into passages (paragraphs; headings become
    /// titles) and add them. Returns the number added (0 for an empty document).
    #[wasm_bindgen(js_name = addDocument)]
    pub fn add_document(&mut self, name: &str, text: &str) -> Result<u32, JsError> {
        let passages = split_document(name, text);
        self.add_all(passages)
    }

    /// Build the index over every passage added so far: BM25, then, when the static embedder is
    /// loaded, the passage vectors. `onProgress(done, total, phase)` is called about a hundred
    /// times per phase (`"bm25"`, `"embed"`). Returns the engine's stats. Building an empty engine
    /// is allowed: it is then built with 0 passages, and every search returns no hits.
    #[wasm_bindgen(unchecked_return_type = "EngineStats")]
    pub fn build(&mut self, on_progress: Option<ProgressArg>) -> Result<JsValue, JsError> {
        let on_progress = callback(on_progress);
        self.inner.build(&mut phase_progress(&on_progress)).map_err(js_err)?;
        Ok(self.stats_js())
    }

    /// Build the knowledge graph (docs/method/spec.md §1) that the methods `hipporag` and `catrag` walk:
    /// rule-based OpenIE over every English passage, entity and fact embeddings with the static
    /// embedder, synonym edges, CSR. Needs a built engine with the static embedder loaded.
    /// `onProgress(done, total, phase)` with phases `"extract"` (passages), `"graph-embed"`
    /// (entity names and facts) and `"synonyms"`. Returns the graph's report (`graphReport()`).
    /// Later builds after adds extend the graph with the new passages only.
    ///
    /// Throws when the engine is not built or the static embedder is not loaded.
    #[wasm_bindgen(js_name = buildGraph, unchecked_return_type = "GraphReport")]
    pub fn build_graph(&mut self, on_progress: Option<ProgressArg>) -> Result<JsValue, JsError> {
        let on_progress = callback(on_progress);
        let index = self.index()?;
        if index.dense(EmbedderSlot::Static).is_none() {
            return Err(js_err("the knowledge graph needs the static embedder: load it first (loadStaticEmbedder)"));
        }
        self.inner.build_graph(&mut phase_progress(&on_progress)).map_err(js_err)?;
        Ok(self.graph_report())
    }

    /// The knowledge graph's report once built, else `null`: `{counts: {nodes, entity_nodes,
    /// passage_nodes, passages, facts, relation_edges, synonym_edges, context_edges, arcs},
    /// triples, extract: {passages, english_passages, non_english_passages, sentences,
    /// triples}, …}` (times are `null` in wasm).
    #[wasm_bindgen(js_name = graphReport, unchecked_return_type = "GraphReport | null")]
    pub fn graph_report(&self) -> JsValue {
        self.inner
            .index()
            .ok()
            .and_then(|index| index.knowledge_graph())
            .and_then(|kg| to_js(kg.report()).ok())
            .unwrap_or(JsValue::NULL)
    }

    /// Graph benchmark figures over `queries` with `method` (`"catrag"` or `"hipporag"`):
    /// the object of [`crate::bench::graph_figures`] (build steps, graph search and fact-scoring
    /// ms, PPR ms and sweeps per solver and top-k agreement with the exact solve), timed with
    /// `performance.now()`. Throws when the engine or its graph is not built.
    #[wasm_bindgen(js_name = graphBench)]
    pub fn graph_bench(&self, queries: Vec<String>, method: &str) -> Result<JsValue, JsError> {
        let index = self.index()?;
        let method: Method = method.parse().map_err(js_err)?;
        let perf = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
            .map_err(|_| JsError::new("this context has no performance clock"))?;
        let now: js_sys::Function = js_sys::Reflect::get(&perf, &JsValue::from_str("now"))
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| JsError::new("this context has no performance.now()"))?;
        let clock = || now.call0(&perf).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        let figures = crate::bench::graph_figures(index, &queries, method, &clock).map_err(js_err)?;
        to_js(&figures).map_err(js_err)
    }

    /// One passage in the knowledge graph: `{id, english, triples: [{subject, relation,
    /// object}], entities: string[]}` (the facts it states and the entities it contains, by
    /// display name). `english` is false when no triple was extracted because the text did
    /// not look English. Throws when the graph is not built or no passage has that id.
    #[wasm_bindgen(js_name = passageGraph, unchecked_return_type = "PassageGraph")]
    pub fn passage_graph(&self, id: &str) -> Result<JsValue, JsError> {
        let index = self.index()?;
        let kg = index
            .knowledge_graph()
            .ok_or_else(|| js_err("the knowledge graph is not built yet: build it first (buildGraph)"))?;
        let i = index.corpus().index_of(id).ok_or_else(|| js_err(format!("no passage has the id {id:?}")))?;
        let passage = index.corpus().get(i).ok_or_else(|| js_err(format!("no passage has the id {id:?}")))?;
        let facts = kg.passage_facts(i, passage);
        to_js(&PassageGraphOut { id, facts }).map_err(js_err)
    }

    /// Load the static embedder (methods `dense` and `hybrid`) from the bytes of its table file
    /// (`static-minilm.bin`) and the text of its vocabulary (`minilm-vocab.txt`). When the engine
    /// is built, its passages are embedded now (`onProgress(done, total, "embed")`); later
    /// builds embed theirs. Throws on a corrupt table or a vocabulary that does not match it.
    #[wasm_bindgen(js_name = loadStaticEmbedder, unchecked_return_type = "EngineStats")]
    pub fn load_static_embedder(
        &mut self,
        table: &[u8],
        vocab: &str,
        on_progress: Option<ProgressArg>,
    ) -> Result<JsValue, JsError> {
        let on_progress = callback(on_progress);
        let embedder: Rc<dyn Embedder> = Rc::new(StaticEmbedder::from_bytes(table, vocab).map_err(js_err)?);
        self.inner.set_embedder(EmbedderSlot::Static, embedder, &mut phase_progress(&on_progress)).map_err(js_err)?;
        Ok(self.stats_js())
    }

    /// The methods a search can use now: `bm25` always, the dense ones once their embedder is
    /// loaded (see `methods()` for every method this build knows).
    #[wasm_bindgen(js_name = availableMethods, unchecked_return_type = "string[]")]
    pub fn available_methods(&self) -> JsValue {
        let names: Vec<&str> = self.inner.available_methods().into_iter().map(Method::name).collect();
        serde_wasm_bindgen::to_value(&names).unwrap_or(JsValue::NULL)
    }

    /// One query, the one door of a search: `{query, k = 5, method = "bm25", prefix = false,
    /// explain = false, entities}` (`prefix`: search as you type, the last word also matches
    /// the words it begins; `explain`: a graph method's explanation of the same search;
    /// `entities`: LLM NER names for catrag's anchoring). Misspelt words match their near
    /// spellings unless the engine's `bm25.typos` is false. `plan`, from `planLlmTiers` and
    /// tiered by `LlmEndpoint.tier`, gives the graph walk's edge tiers (it is used up); without
    /// one, the offline tierer tiers it. Returns a `QueryResult`: the hits with their
    /// highlights (and CAGE's relevance and coherence), why they are weak, the explanation,
    /// the tierer and warnings of a graph walk, CAGE's rerank time. The search runs once.
    ///
    /// Throws when the engine is not built, the method is unknown or cannot run yet (CAGE's
    /// graph embeddings missing: `cageMissing`), k is not 1–1000, or the plan is another
    /// query's or was used already.
    #[wasm_bindgen(unchecked_return_type = "QueryResult")]
    pub fn query(
        &mut self,
        query: QueryArg,
        plan: Option<LlmPlanArg>,
    ) -> Result<JsValue, JsError> {
        let mut query = query_of(query)?;
        if let Some(plan) = plan.map(JsValue::from).filter(|p| !p.is_undefined() && !p.is_null()) {
            query.tiers = Some(llm_api::given_tiers(plan)?);
        }
        let out = self.inner.query(&query).map_err(js_err)?;
        to_js(&QueryOut::of(&out)).map_err(js_err)
    }

    /// Sizes of the corpus and, once built, of the index.
    #[wasm_bindgen(unchecked_return_type = "EngineStats")]
    pub fn stats(&self) -> JsValue {
        self.stats_js()
    }

    /// Undo adds: keep only the first `passages` passages (the count `stats().passages` gave
    /// before the adds). When that removes any, the engine is unbuilt until the next `build`.
    /// Returns the stats.
    #[wasm_bindgen(unchecked_return_type = "EngineStats")]
    pub fn truncate(&mut self, passages: u32) -> JsValue {
        self.inner.truncate(passages as usize);
        self.stats_js()
    }

    /// The texts the dense methods embed for passages `start..end` (`"{title} {text}"`, as
    /// `Index::passage_text` makes them), for an embedder that runs outside this module (the
    /// MiniLM package). The range is clamped to the corpus; an empty array past its end.
    #[wasm_bindgen(js_name = passageTexts, unchecked_return_type = "string[]")]
    pub fn passage_texts(&self, start: u32, end: u32) -> JsValue {
        let c = self.inner.corpus();
        let (s, e) = (start as usize, (end as usize).min(c.len()));
        let texts: Vec<String> = c.passages().get(s..e.max(s)).unwrap_or(&[]).iter().map(Index::passage_text).collect();
        serde_wasm_bindgen::to_value(&texts).unwrap_or(JsValue::NULL)
    }

    /// Attach passage vectors computed outside this module to a built engine, for the method
    /// that uses `embedder` (only `"minilm"`: method `dense-minilm`). `vectors` is row-major
    /// `passages × dims` (row `i` = the `i`-th text of `passageTexts(0, passages)`, unit L2
    /// norm); `embedQuery(text)` must return the query's `Float32Array` of `dims` values, made
    /// the same way. Vectors are dropped by the next `build` or add, so attach them again then.
    /// Returns the stats.
    ///
    /// Throws when the engine is not built, the embedder is not `"minilm"`, or the matrix is not
    /// one row of `dims` values per passage.
    #[wasm_bindgen(js_name = attachVectors, unchecked_return_type = "EngineStats")]
    pub fn attach_vectors(
        &mut self,
        embedder: &str,
        dims: u32,
        vectors: Vec<f32>,
        #[wasm_bindgen(unchecked_param_type = "(text: string) => Float32Array")]
        embed_query: js_sys::Function,
    ) -> Result<JsValue, JsError> {
        if embedder != EmbedderSlot::Minilm.name() {
            return Err(js_err(format!(
                "attachVectors: embedder {embedder:?} cannot be attached from outside (only \"minilm\")"
            )));
        }
        self.index()?;
        if dims == 0 {
            return Err(js_err("attachVectors: dims must be at least 1"));
        }
        let matrix = VectorMatrix::from_rows(dims as usize, vectors).map_err(js_err)?;
        let e: Rc<dyn Embedder> = Rc::new(JsEmbedder { dims: dims as usize, embed: embed_query });
        self.inner.attach_vectors(EmbedderSlot::Minilm, e, matrix).map_err(js_err)?;
        Ok(self.stats_js())
    }

    /// The built index as an index file (`Uint8Array`; format in `cairn::index::format`):
    /// configuration, passages, passage vectors of each attached embedder and, once built, the
    /// knowledge graph. Deterministic: the same passages and configuration give the same bytes
    /// here and in the native CLI (`cairn index`). Throws when the engine is not built.
    #[wasm_bindgen(js_name = saveIndex)]
    pub fn save_index(&self) -> Result<Vec<u8>, JsError> {
        self.inner.save().map_err(js_err)
    }

    /// Replace everything with the index in `bytes` (from `saveIndex` or `cairn index`; not
    /// compressed: gunzip a `.gz` first, e.g. with `DecompressionStream("gzip")`). BM25 is
    /// rebuilt from the passages; the static embedder's passage vectors are recomputed (and
    /// checked against the file) when it is loaded (`loadStaticEmbedder` first; they are skipped
    /// otherwise), and a knowledge graph's entity and fact vectors too (`onProgress(done, total,
    /// "load")`, in texts embedded, once for the passages and once for the graph). MiniLM
    /// vectors are not restored (that embedder lives in JavaScript). Returns the engine's stats.
    ///
    /// Throws, leaving the engine as it was, on a file that is not an index, truncated, corrupt
    /// (checksum), of a newer format version, made with another static embedder, or holding a
    /// graph while the static embedder is not loaded; each with its own message.
    #[wasm_bindgen(js_name = loadIndex, unchecked_return_type = "EngineStats")]
    pub fn load_index(&mut self, bytes: &[u8], on_progress: Option<ProgressArg>) -> Result<JsValue, JsError> {
        let on_progress = callback(on_progress);
        let notes = self.inner.load(bytes, &mut phase_progress(&on_progress)).map_err(js_err)?;
        self.load_phases = notes.phases_ms;
        Ok(self.stats_js())
    }

    /// The steps of the last `loadIndex` (and of `loadIndexExtras` after it) with the
    /// milliseconds each took, in order: `[["split", 0], ["corpus", 12], ["bm25", 480], …]`
    /// (`split` checks the table and checksums; `bm25` rebuilds the keyword index from the
    /// passages, or `postings` reads it from a site's keyword part; `dense` re-embeds the passages; `graph` reads the knowledge graph and re-embeds
    /// its entities and facts; `prepare-graph-search` makes its search structures). Whole
    /// milliseconds (`Date.now()`). Empty before a load.
    #[wasm_bindgen(js_name = loadPhases, unchecked_return_type = "[string, number][]")]
    pub fn load_phases(&self) -> JsValue {
        serde_wasm_bindgen::to_value(&self.load_phases).unwrap_or(JsValue::NULL)
    }

    /// Read the passages' texts of a static site's index (`texts.cairn.gz` beside
    /// `index.cairn.gz`, written by `cairn index`; inflated first) into the index opened from
    /// its keyword part with `loadIndex`. Until then BM25 answers with ids and titles, the hits'
    /// texts empty, and everything that needs the texts (embedding the passages, the extras,
    /// adding passages, saving, `corpusJsonl`) throws. Nothing is rebuilt. Returns the engine's
    /// stats.
    ///
    /// Throws, leaving the engine as it was, before `loadIndex`, when the texts are in already,
    /// on the texts of another index (the base stores their checksum) or a damaged file.
    #[wasm_bindgen(js_name = loadIndexTexts, unchecked_return_type = "EngineStats")]
    pub fn load_index_texts(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        self.inner.load_texts(bytes).map_err(js_err)?;
        Ok(self.stats_js())
    }

    /// Whether the passages' texts are in: false only between `loadIndex` of a static site's
    /// keyword part and `loadIndexTexts`.
    #[wasm_bindgen(js_name = textsLoaded)]
    pub fn texts_loaded(&self) -> bool {
        self.inner.texts_loaded()
    }

    /// Read the extras of a static site's index (`extras.cairn.gz` beside `index.cairn.gz`,
    /// written by `cairn index`; inflated first) into the index opened from its base with
    /// `loadIndex`, its texts read (`loadIndexTexts`): the static embedder's passage vectors (recomputed and checked; load the
    /// embedder first), the knowledge graph (`onProgress(done, total, "load")` in texts
    /// embedded) and CAGE's graph embeddings. BM25 works from the base alone, so a page can
    /// answer keyword searches while these load. Returns the engine's stats.
    ///
    /// Throws, leaving the engine as it was, before `loadIndex`, when the extras were already
    /// read, on a whole index file, on extras of another index (another configuration, or
    /// passage vectors that do not match these passages), or on a damaged file.
    #[wasm_bindgen(js_name = loadIndexExtras, unchecked_return_type = "EngineStats")]
    pub fn load_index_extras(&mut self, bytes: &[u8], on_progress: Option<ProgressArg>) -> Result<JsValue, JsError> {
        let on_progress = callback(on_progress);
        let notes = self.inner.load_extras(bytes, &mut phase_progress(&on_progress)).map_err(js_err)?;
        self.load_phases.extend(notes.phases_ms);
        Ok(self.stats_js())
    }

    /// Every passage as JSONL, one `{"id", "title", "text"}` object per line in corpus order
    /// (what `addJsonl` reads back): the corpus of a share link. Empty for an empty engine.
    #[wasm_bindgen(js_name = corpusJsonl)]
    pub fn corpus_jsonl(&self) -> Result<String, JsError> {
        if !self.inner.texts_loaded() {
            return Err(js_err(crate::Error::TextsNotLoaded("writing the corpus as JSONL".into())));
        }
        let mut out = String::new();
        for p in self.inner.corpus().passages() {
            out.push_str(&serde_json::to_string(p).map_err(|e| js_err(e.to_string()))?);
            out.push('\n');
        }
        Ok(out)
    }

    /// Remove every passage and the index.
    pub fn clear(&mut self) {
        self.inner.clear();
    }

    /// The query path's stage counters since the last build or reset: `[firstStages,
    /// graphSearches]` (a test hook for "work is done once per query"); `[0, 0]` unbuilt.
    /// With `reset` they go back to 0 after being read.
    #[doc(hidden)]
    #[wasm_bindgen(js_name = __runCounts)]
    pub fn run_counts(&mut self, reset: bool) -> Vec<u32> {
        let Some(c) = self.inner.run_counts() else {
            return vec![0, 0];
        };
        let (first, graph) = c.get();
        if reset {
            self.inner.reset_run_counts();
        }
        vec![first, graph]
    }
}

/// An [`Embedder`] whose vectors come from a JavaScript function `(text) => Float32Array`: the
/// query side of vectors attached with `Engine.attachVectors` (the MiniLM package embeds in JS
/// land, between worker messages, so that the work can show progress and be cancelled).
struct JsEmbedder {
    dims: usize,
    embed: js_sys::Function,
}

impl Embedder for JsEmbedder {
    fn dim(&self) -> usize {
        self.dims
    }

    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> crate::Result<Vec<f32>> {
        let model_err = |message: String| crate::Error::Model { what: "query embedder".into(), message };
        let mut out = Vec::with_capacity(texts.len() * self.dims);
        for (i, text) in texts.iter().enumerate() {
            let v = self
                .embed
                .call1(&JsValue::NULL, &JsValue::from_str(text))
                .map_err(|e| model_err(format!("embedQuery threw: {}", js_message(&e))))?;
            let v: js_sys::Float32Array =
                v.dyn_into().map_err(|_| model_err("embedQuery must return a Float32Array".into()))?;
            let row = crate::search::unit_query_vector(v.to_vec(), self.dims)
                .map_err(|why| model_err(format!("embedQuery returned {why}")))?;
            out.extend_from_slice(&row);
            progress(i + 1, texts.len());
        }
        Ok(out)
    }
}

/// The message of a thrown JS value (an `Error`'s `message`, or the value as a string).
fn js_message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|err| String::from(err.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// all-MiniLM-L6-v2 through tract, for the page's `dense-minilm` method. Only in the package
/// built with the cargo feature `minilm` (`pkg-minilm/`, with SIMD); the page loads it, and the
/// model's bytes (`minilm-int8.onnx`, 22.9 MB), only when the user picks that method.
///
/// ```js
/// import initMinilm, { MiniLm } from "cairn-minilm";
/// await initMinilm();
/// const model = new MiniLm(new Uint8Array(await (await fetch("models/minilm-int8.onnx")).arrayBuffer()));
/// const vectors = model.embed(["first text", "second text"]); // Float32Array, 2 × 384
/// ```
#[cfg(feature = "minilm")]
#[wasm_bindgen]
pub struct MiniLm {
    inner: crate::embed::minilm::MiniLmEmbedder,
}

#[cfg(feature = "minilm")]
#[wasm_bindgen]
impl MiniLm {
    /// Parse and optimise the int8 ONNX model from its bytes (a few seconds in wasm). Throws
    /// when the bytes are not that model (see `MiniLmEmbedder::from_onnx_bytes`).
    #[wasm_bindgen(constructor)]
    pub fn new(model: &[u8]) -> Result<MiniLm, JsError> {
        Ok(MiniLm { inner: crate::embed::minilm::MiniLmEmbedder::from_onnx_bytes(model).map_err(js_err)? })
    }

    /// The vectors' dimension (384).
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> u32 {
        self.inner.dim() as u32
    }

    /// The model's input ids for `text`: `[CLS]`, its WordPiece ids, `[SEP]`, at most 256 ids
    /// (the text is cut there, as [`MiniLm::embed`] cuts it). For running the same inputs through
    /// another runtime (the MiniLM runtime comparison in `tools/minilm_compare.mjs`).
    #[wasm_bindgen(js_name = tokenIds)]
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.inner.token_ids(text)
    }

    /// Embed `texts`: a `Float32Array` of `texts.length × dims` values, row `i` for `texts[i]`,
    /// unit L2 norm (the zero vector for a text with no tokens). Texts are cut at 256 tokens.
    /// Runs in batches of 16 (length-sorted); call it with a few texts at a time to keep a
    /// worker responsive.
    pub fn embed(&self, texts: Vec<String>) -> Result<Vec<f32>, JsError> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.inner.embed_batch(&refs, &mut |_, _| {}).map_err(js_err)
    }
}

#[derive(Serialize)]
struct PassageGraphOut<'a> {
    id: &'a str,
    #[serde(flatten)]
    facts: crate::index::PassageFacts,
}

/// Serialise for JS with maps as plain objects.
fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, serde_wasm_bindgen::Error> {
    v.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
}

// ---------------------------------------------------------------------------------------------
// CAGE (docs/method/spec.md §4). A passage's graph embedding Z depends on the passage alone, so it is
// computed once per passage and stored with the index (saved in the index file); a search only
// compares the 20 candidates' stored Z. The R-GCN runs with tract, which only the MiniLM package
// carries (cargo features `minilm,cage`), and only while embeddings are missing:
//   let todo = engine.cageMissing(model.fingerprint, {limit: 16});   // tensors for ≤ 16 passages
//   while (todo.rows.length) {
//     const z = model.encode(todo.features, todo.adjacency, todo.batch, todo.nodes);
//     engine.cageStore(model.fingerprint, todo.rows, z, model.dim);
//     todo = engine.cageMissing(model.fingerprint, {limit: 16});
//   }
//   const hits = engine.cageSearch(query, {k, method});              // no model needed

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CageMissingOut {
    /// Passage positions (corpus order) these tensors are for; empty when none is missing.
    rows: Vec<u32>,
    /// Passages still missing in all (including these).
    remaining: usize,
    batch: usize,
    nodes: usize,
    channels: usize,
    feature_dim: usize,
    #[serde(with = "serde_bytes_f32")]
    features: Vec<f32>,
    #[serde(with = "serde_bytes_f32")]
    adjacency: Vec<f32>,
}

/// f32 arrays out as plain number arrays (serde-wasm-bindgen has no typed-array path here).
mod serde_bytes_f32 {
    pub fn serialize<S: serde::Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }
}

#[derive(Deserialize)]
struct CageMissingOptions {
    limit: Option<f64>,
}

#[wasm_bindgen]
impl Engine {
    /// CAGE, at indexing: the R-GCN's inputs for up to `limit` (default 16) passages that have
    /// no stored graph embedding for the model with this `fingerprint` (`CageModel.fingerprint`):
    /// `{rows, remaining, batch, nodes, channels, featureDim, features, adjacency}` (features
    /// `[batch, nodes, 256]`, adjacency `[batch, channels, nodes, nodes]`, row-major); `rows`
    /// is empty when every passage has one. Needs a built engine with the static embedder.
    #[wasm_bindgen(js_name = cageMissing)]
    pub fn cage_missing(&self, fingerprint: u32, options: JsValue) -> Result<JsValue, JsError> {
        let index = self.index()?;
        let limit = if options.is_undefined() || options.is_null() {
            16.0
        } else {
            let o: CageMissingOptions = from_js(options).map_err(js_err)?;
            o.limit.unwrap_or(16.0)
        };
        if !(limit.fract() == 0.0 && (1.0..=256.0).contains(&limit)) {
            return Err(js_err(format!("limit must be a whole number from 1 to 256, got {limit}")));
        }
        let missing = index.cage_missing(self.inner.cage_key(fingerprint));
        let rows: Vec<usize> = missing.iter().copied().take(limit as usize).collect();
        let (_, batch) = index.cage_batch_of(&rows).map_err(js_err)?;
        to_js(&CageMissingOut {
            rows: rows.iter().map(|&r| r as u32).collect(),
            remaining: missing.len(),
            batch: batch.batch,
            nodes: batch.nodes,
            channels: batch.channels,
            feature_dim: batch.feature_dim,
            features: batch.features,
            adjacency: batch.adjacency,
        })
        .map_err(js_err)
    }

    /// CAGE, at indexing: store the graph embeddings `z` (`rows.length × dim` floats from
    /// `CageModel.encode`) of the passages `rows` (as `cageMissing` gave them) made by the model
    /// with this `fingerprint`. Returns how many passages still have none.
    #[wasm_bindgen(js_name = cageStore)]
    pub fn cage_store(&mut self, fingerprint: u32, rows: Vec<u32>, z: &[f32], dim: usize) -> Result<usize, JsError> {
        let key = self.inner.cage_key(fingerprint);
        let index = self.index_mut()?;
        let rows: Vec<usize> = rows.into_iter().map(|r| r as usize).collect();
        index.store_cage_z(key, &rows, z, dim).map_err(js_err)?;
        Ok(index.cage_missing(key).len())
    }

    /// CAGE's passage graph of passage `id` (docs/method/spec.md §4): `{nodes: [lemma], edges: [{source,
    /// target, relation, weight}], min_out_degree: [bool], beta, relations: [name]}` with β as
    /// configured (1.5).
    #[wasm_bindgen(js_name = cagePassageGraph)]
    pub fn cage_passage_graph(&self, id: &str) -> Result<JsValue, JsError> {
        let index = self.index()?;
        let i = index.corpus().index_of(id).ok_or_else(|| js_err(format!("no passage has the id {id:?}")))?;
        let g = index.cage_passage_graph(i).map_err(js_err)?;
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            graph: &'a crate::cage::PassageGraph,
            relations: &'static [&'static str],
        }
        to_js(&Out { graph: &g, relations: &crate::cage::RELATIONS }).map_err(js_err)
    }
}

/// CAGE's R-GCN through tract (`assets/cage/rgcn-int8.onnx`, 330 KB), in the MiniLM package
/// only (cargo feature `cage`).
///
/// ```js
/// const model = new CageModel(new Uint8Array(await (await fetch("cage/rgcn-int8.onnx")).arrayBuffer()));
/// const z = model.encode(inputs.features, inputs.adjacency, inputs.batch, inputs.nodes); // batch × 128
/// ```
#[cfg(feature = "cage")]
#[wasm_bindgen]
pub struct CageModel {
    inner: crate::cage::tract::RgcnModel,
}

#[cfg(feature = "cage")]
#[wasm_bindgen]
impl CageModel {
    /// Load and optimise the model from its ONNX bytes. Throws when they are not a CAGE model.
    #[wasm_bindgen(constructor)]
    pub fn new(model: &[u8]) -> Result<CageModel, JsError> {
        Ok(CageModel { inner: crate::cage::tract::RgcnModel::from_onnx_bytes(model).map_err(js_err)? })
    }

    /// Output dimension (128).
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> usize {
        use crate::cage::GraphEncoder;
        self.inner.dim()
    }

    /// CRC32 of the model's ONNX bytes: what `Engine.cageMissing` and `cageStore` key the
    /// stored graph embeddings by.
    #[wasm_bindgen(getter)]
    pub fn fingerprint(&self) -> u32 {
        use crate::cage::GraphEncoder;
        self.inner.fingerprint()
    }

    /// Graph embeddings of a batch: `features` `[batch, nodes, 256]` and `adjacency`
    /// `[batch, channels, nodes, nodes]` as `Engine.cageMissing` gives them; returns
    /// `batch × dim` floats. Throws on shapes that do not fit.
    pub fn encode(
        &self,
        features: Vec<f32>,
        adjacency: Vec<f32>,
        batch: usize,
        nodes: usize,
    ) -> Result<Vec<f32>, JsError> {
        use crate::cage::GraphEncoder;
        let (f, c) = (self.inner.feature_dim(), self.inner.channels());
        if features.len() != batch * nodes * f || adjacency.len() != batch * c * nodes * nodes {
            return Err(js_err(format!(
                "expected {batch}×{nodes}×{f} features and {batch}×{c}×{nodes}×{nodes} adjacency values, got {} and {}",
                features.len(),
                adjacency.len()
            )));
        }
        let b = crate::cage::GraphBatch { batch, nodes, feature_dim: f, channels: c, features, adjacency };
        self.inner.encode(&b).map_err(js_err)
    }
}

// ---------------------------------------------------------------------------------------------
// The user's LLM endpoint: `LlmEndpoint`, `LlmPlan` and the Engine's three-phase
// CatRAG search with LLM tiers. In its own file to keep this one's diff small.
#[path = "wasm_llm.rs"]
mod llm_api;
pub use llm_api::{LlmEndpoint, LlmPlan};

/// Every retrieval method this build knows, in the order of `Method::NAMES`, as
/// `{name, label, short, family, needs: {graph, embedder: "static"|"minilm"|null, cage, llm},
/// description, score, prefix, first_stage, candidates}` (`crate::index::MethodInfo`; `first_stage` and
/// `candidates` are null except for the CAGE methods). A front end builds its method menus and
/// its "needs the graph / needs a model" logic from this instead of restating them.
#[wasm_bindgen(js_name = methods, unchecked_return_type = "MethodInfo[]")]
pub fn methods() -> JsValue {
    use serde::Serialize as _;
    let infos = Method::infos();
    infos.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

#[wasm_bindgen(typescript_custom_section)]
const TS_METHOD_INFO: &'static str = r#"
/** One retrieval method as `methods()` describes it. */
export interface MethodInfo {
  name: string;
  /** Menu label, e.g. "CatRAG (query-aware PPR on the knowledge graph)". */
  label: string;
  /** Short name for a results line, e.g. "CatRAG". */
  short: string;
  family: 'lexical' | 'dense' | 'hybrid' | 'graph' | 'cage';
  /** graph: needs the knowledge graph; embedder: the passage vectors it needs; cage: CAGE's
   *  graph embeddings; llm: can tier its edges with an LLM endpoint (never required). */
  needs: { graph: boolean; embedder: 'static' | 'minilm' | null; cage: boolean; llm: boolean };
  description: string;
  /** What the score is. */
  score: string;
  /** Completes the query's last word as a prefix (search as you type). */
  prefix: boolean;
  /** CAGE methods: the first stage reranked and how many of its candidates; else null. */
  first_stage: string | null;
  candidates: number | null;
}
"#;
