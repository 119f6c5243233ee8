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
//! const hits = engine.search("capital of France", { k: 5, method: "bm25" });
//! ```

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::corpus::{parse_jsonl, split_document, Corpus, Passage};
use std::rc::Rc;

use crate::embed::{Embedder, StaticEmbedder};
use crate::index::{EmbedderSlot, Index, IndexConfig, Method};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Engine configuration; every field is optional and defaults to METHOD.md's values. */
export interface EngineConfig {
  bm25?: { k1?: number; b?: number };
}
/** A passage to index. `id` defaults to "passage-N"; `title` to "". */
export interface PassageInput {
  id?: string;
  title?: string;
  text: string;
}
/** Options of `Engine.search`. */
export interface SearchOptions {
  /** Number of passages to return, 1 to 1000. Default 5. */
  k?: number;
  /** Retrieval method name, one of `engine.availableMethods()`. Default "bm25". */
  method?: string;
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
}
/** Called during long work: `done` of `total` items of the named phase ("bm25", "embed"). */
export type ProgressCallback = (done: number, total: number, phase: string) => void;
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
    /// `SearchOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "SearchOptions")]
    pub type SearchOptionsArg;
    /// `ProgressCallback` in TypeScript.
    #[wasm_bindgen(typescript_type = "ProgressCallback")]
    pub type ProgressArg;
}

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The names of the retrieval methods this build supports.
#[wasm_bindgen(js_name = methods, unchecked_return_type = "string[]")]
pub fn methods() -> JsValue {
    serde_wasm_bindgen::to_value(Method::NAMES).unwrap_or(JsValue::NULL)
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

enum State {
    Collecting(Corpus),
    Built(Index),
}

/// A corpus and its index, in the page's worker. Add passages, `build`, then `search`.
/// Adding passages after `build` makes the engine unbuilt until the next `build`.
#[wasm_bindgen]
pub struct Engine {
    config: IndexConfig,
    state: Option<State>,
    /// The static embedder, once loaded: every build embeds the passages with it.
    static_embedder: Option<Rc<dyn Embedder>>,
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

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SearchOptions {
    k: Option<f64>,
    method: Option<String>,
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
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EngineStats {
    passages: usize,
    built: bool,
    terms: usize,
    postings: usize,
    avg_passage_terms: f32,
    text_bytes: usize,
    index_bytes: usize,
    embedders: Vec<EmbedderInfo>,
}

#[derive(Serialize)]
struct EmbedderInfo {
    name: &'static str,
    dims: usize,
}

/// Byte ranges of `text` to UTF-16 code-unit ranges (JavaScript string offsets).
fn utf16_ranges(text: &str, ranges: &[(usize, usize)]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(ranges.len());
    let (mut byte, mut unit) = (0usize, 0u32);
    let mut chars = text.char_indices().peekable();
    let mut advance_to = |target: usize, byte: &mut usize, unit: &mut u32| {
        while *byte < target {
            match chars.next() {
                Some((i, c)) => {
                    *byte = i + c.len_utf8();
                    *unit += c.len_utf16() as u32;
                }
                None => break,
            }
        }
    };
    for &(s, e) in ranges {
        advance_to(s, &mut byte, &mut unit);
        let us = unit;
        advance_to(e, &mut byte, &mut unit);
        out.push((us, unit));
    }
    out
}

/// The JS function behind an optional callback argument (anything not callable is ignored).
fn callback(arg: Option<ProgressArg>) -> Option<js_sys::Function> {
    arg.and_then(|a| JsValue::from(a).dyn_into::<js_sys::Function>().ok())
}

/// A progress closure that forwards `(done, total, phase)` to an optional JS callback. A throwing
/// callback must not abort indexing: its error is ignored.
fn progress_fn<'a>(f: &'a Option<js_sys::Function>, phase: &'static str) -> impl FnMut(usize, usize) + 'a {
    move |done, total| {
        if let Some(f) = f {
            let _ = f.call3(
                &JsValue::NULL,
                &JsValue::from(done as f64),
                &JsValue::from(total as f64),
                &JsValue::from_str(phase),
            );
        }
    }
}

impl Engine {
    fn corpus_mut(&mut self) -> &mut Corpus {
        let corpus = match self.state.take() {
            Some(State::Collecting(c)) => c,
            Some(State::Built(i)) => i.into_corpus(),
            None => Corpus::new(),
        };
        self.state = Some(State::Collecting(corpus));
        match &mut self.state {
            Some(State::Collecting(c)) => c,
            _ => unreachable!("state was just set to Collecting"),
        }
    }

    fn corpus(&self) -> Option<&Corpus> {
        match &self.state {
            Some(State::Collecting(c)) => Some(c),
            Some(State::Built(i)) => Some(i.corpus()),
            None => None,
        }
    }

    /// Add all or nothing; a rejected batch leaves a built index built.
    fn add_all(&mut self, passages: Vec<Passage>) -> Result<u32, JsError> {
        if let Some(c) = self.corpus() {
            c.check_new(&passages).map_err(js_err)?;
        }
        if passages.is_empty() {
            return Ok(0);
        }
        let n = self.corpus_mut().extend(passages).map_err(js_err)?;
        Ok(n as u32)
    }
}

#[wasm_bindgen]
impl Engine {
    /// A new, empty engine. `config` may be omitted; unknown keys are an error.
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<EngineConfigArg>) -> Result<Engine, JsError> {
        let config: IndexConfig =
            match config.map(JsValue::from).filter(|c| !c.is_undefined() && !c.is_null()) {
                None => IndexConfig::default(),
                Some(c) => from_js(c).map_err(|e| js_err(format!("invalid configuration: {e}")))?,
            };
        config.bm25.validate().map_err(js_err)?;
        Ok(Engine { config, state: Some(State::Collecting(Corpus::new())), static_embedder: None })
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
        let base = self.corpus_mut().len();
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
        let config = self.config.clone();
        // On an error the passages stay in the engine, unbuilt.
        let mut index =
            Index::build_taking(self.corpus_mut(), &config, &mut progress_fn(&on_progress, "bm25"))
                .map_err(js_err)?;
        if let Some(e) = &self.static_embedder {
            let attached = index.attach_embedder(
                EmbedderSlot::Static,
                e.clone(),
                &mut progress_fn(&on_progress, "embed"),
            );
            if let Err(err) = attached {
                self.state = Some(State::Collecting(index.into_corpus()));
                return Err(js_err(err));
            }
        }
        self.state = Some(State::Built(index));
        Ok(self.stats())
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
        if let Some(State::Built(index)) = &mut self.state {
            index
                .attach_embedder(
                    EmbedderSlot::Static,
                    embedder.clone(),
                    &mut progress_fn(&on_progress, "embed"),
                )
                .map_err(js_err)?;
        }
        self.static_embedder = Some(embedder);
        Ok(self.stats())
    }

    /// The methods a search can use now: `bm25` always, the dense ones once their embedder is
    /// loaded (see `methods()` for every method this build knows).
    #[wasm_bindgen(js_name = availableMethods, unchecked_return_type = "string[]")]
    pub fn available_methods(&self) -> JsValue {
        let names: Vec<&str> = Method::ALL
            .into_iter()
            .filter(|m| match m.embedder() {
                None => true,
                Some(EmbedderSlot::Static) => self.static_embedder.is_some(),
                Some(EmbedderSlot::Minilm) => false,
            })
            .map(Method::name)
            .collect();
        serde_wasm_bindgen::to_value(&names).unwrap_or(JsValue::NULL)
    }

    /// The top passages for `query`. Options `{k = 5, method = "bm25"}`.
    /// Throws when the engine is not built, the method is unknown or k is not 1–1000.
    #[wasm_bindgen(unchecked_return_type = "SearchHit[]")]
    pub fn search(&self, query: &str, options: Option<SearchOptionsArg>) -> Result<JsValue, JsError> {
        let opts: SearchOptions =
            match options.map(JsValue::from).filter(|o| !o.is_undefined() && !o.is_null()) {
                None => SearchOptions::default(),
                Some(o) => from_js(o).map_err(|e| js_err(format!("invalid search options: {e}")))?,
            };
        let k = opts.k.unwrap_or(5.0);
        if !(k.fract() == 0.0 && (1.0..=1000.0).contains(&k)) {
            return Err(js_err(format!("k must be a whole number from 1 to 1000, got {k}")));
        }
        let method: Method = opts.method.as_deref().unwrap_or("bm25").parse().map_err(js_err)?;
        let index = match &self.state {
            Some(State::Built(i)) => i,
            _ => return Err(js_err(crate::Error::NotBuilt)),
        };
        let hits = index.search(query, k as usize, method).map_err(js_err)?;
        let terms = index.query_terms(query);
        let out: Vec<SearchHit> = hits
            .iter()
            .enumerate()
            .filter_map(|(rank, h)| {
                let p = index.corpus().get(h.passage)?;
                Some(SearchHit {
                    rank: rank + 1,
                    id: &p.id,
                    title: &p.title,
                    text: &p.text,
                    score: h.score,
                    highlights: utf16_ranges(&p.text, &index.highlights(&terms, &p.text)),
                    title_highlights: utf16_ranges(&p.title, &index.highlights(&terms, &p.title)),
                })
            })
            .collect();
        serde_wasm_bindgen::to_value(&out).map_err(js_err)
    }

    /// Sizes of the corpus and, once built, of the index.
    #[wasm_bindgen(unchecked_return_type = "EngineStats")]
    pub fn stats(&self) -> JsValue {
        let s = match &self.state {
            Some(State::Built(i)) => {
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
                        .map(|slot| EmbedderInfo {
                            name: slot.name(),
                            dims: i.dense(slot).map_or(0, |d| d.vectors().dim()),
                        })
                        .collect(),
                }
            }
            Some(State::Collecting(c)) => EngineStats {
                passages: c.len(),
                built: false,
                terms: 0,
                postings: 0,
                avg_passage_terms: 0.0,
                text_bytes: c.text_bytes(),
                index_bytes: 0,
                embedders: self
                    .static_embedder
                    .iter()
                    .map(|e| EmbedderInfo { name: EmbedderSlot::Static.name(), dims: e.dim() })
                    .collect(),
            },
            None => EngineStats {
                passages: 0,
                built: false,
                terms: 0,
                postings: 0,
                avg_passage_terms: 0.0,
                text_bytes: 0,
                index_bytes: 0,
                embedders: Vec::new(),
            },
        };
        serde_wasm_bindgen::to_value(&s).unwrap_or(JsValue::NULL)
    }

    /// Undo adds: keep only the first `passages` passages (the count `stats().passages` gave
    /// before the adds). When that removes any, the engine is unbuilt until the next `build`.
    /// Returns the stats.
    #[wasm_bindgen(unchecked_return_type = "EngineStats")]
    pub fn truncate(&mut self, passages: u32) -> JsValue {
        if self.corpus().is_some_and(|c| c.len() > passages as usize) {
            self.corpus_mut().truncate(passages as usize);
        }
        self.stats()
    }

    /// Remove every passage and the index.
    pub fn clear(&mut self) {
        self.state = Some(State::Collecting(Corpus::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::utf16_ranges;

    #[test]
    fn utf16_offsets() {
        // "é" is 2 bytes / 1 unit; "𝄞" is 4 bytes / 2 units.
        let t = "é 𝄞 ab";
        assert_eq!(utf16_ranges(t, &[(0, 2), (3, 7), (8, 10)]), vec![(0, 1), (2, 4), (5, 7)]);
    }
}
