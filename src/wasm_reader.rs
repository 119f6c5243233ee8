//! The keyword reader's JavaScript API (`#[wasm_bindgen]` only; built alone with the feature
//! `reader`: `npm run build:reader` writes `pkg-reader/`): [`crate::reader`] for a static site's
//! first keyword results. Each binding converts its input, calls the reader once and converts
//! the result.
//!
//! ```js
//! const reader = new KeywordReader(metaBytes);
//! const query = reader.query('asyncio gather', 10, true);
//! for (let need = query.advance(reader); need.length; need = query.advance(reader)) {
//!   for (const name of need) reader.add(name, await fetchShard(name)); // `${name}.cairn.gz`
//! }
//! const hits = query.hits(reader); // [{rank, id, title, text, score, highlights, titleHighlights}]
//! ```

use wasm_bindgen::prelude::*;

use crate::reader;

/// A site's sharded keyword index, opened from its meta file (`crate::reader::KeywordReader`).
#[wasm_bindgen]
pub struct KeywordReader(reader::KeywordReader);

#[wasm_bindgen]
impl KeywordReader {
    /// Open the index from its meta file's bytes (the file as stored, after gunzip).
    ///
    /// # Errors
    /// A damaged file or one that is not a keyword index's meta file, with the reason.
    #[wasm_bindgen(constructor)]
    pub fn new(meta: &[u8]) -> Result<KeywordReader, JsError> {
        reader::KeywordReader::open(meta).map(KeywordReader).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Number of passages.
    #[wasm_bindgen(getter)]
    pub fn docs(&self) -> u32 {
        self.0.docs() as u32
    }

    /// Add the shard `name` (as a query's `advance` named it) from its file's bytes.
    ///
    /// # Errors
    /// An unknown name, a damaged shard or one of another build of the index (a stale cache);
    /// the reader is left as it was.
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.0.add(name, bytes).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Start a query: at most `k` results (1 to 1000); `prefix` for search as you type.
    pub fn query(&self, text: &str, k: u32, prefix: bool) -> KeywordQuery {
        KeywordQuery(self.0.query(text, k as usize, prefix))
    }
}

/// A query on a `KeywordReader` (`crate::reader::KeywordQuery`).
#[wasm_bindgen]
pub struct KeywordQuery(reader::KeywordQuery);

#[wasm_bindgen]
impl KeywordQuery {
    /// Run what the shards in `reader` allow; the names of the shards needed next (empty when
    /// `hits` is ready).
    pub fn advance(&mut self, reader: &KeywordReader) -> Vec<String> {
        self.0.advance(&reader.0).iter().map(|p| p.name()).collect()
    }

    /// Fetch the passages of the best `window` results only (default: all `k`); a larger window
    /// later names the next ones' shards in `advance`.
    #[wasm_bindgen(js_name = setWindow)]
    pub fn set_window(&mut self, window: u32) {
        self.0.set_window(window as usize);
    }

    /// Number of ranked results (at most `k`); 0 until the postings are scored.
    #[wasm_bindgen(getter)]
    pub fn ranked(&self) -> u32 {
        self.0.ranked() as u32
    }

    /// Number of passages that match at all (before the cut to `k`); 0 until the postings are
    /// scored.
    #[wasm_bindgen(getter)]
    pub fn matched(&self) -> u32 {
        self.0.matched() as u32
    }

    /// The results (the best `window`): `{rank, id, title, text, score, highlights, titleHighlights}` objects, the
    /// highlight ranges `[start, end)` in UTF-16 code units.
    ///
    /// # Errors
    /// When `advance` still names shards.
    #[wasm_bindgen(unchecked_return_type = "{ rank: number; id: string; title: string; text: string; score: number; highlights: [number, number][]; titleHighlights: [number, number][] }[]")]
    pub fn hits(&self, reader: &KeywordReader) -> Result<JsValue, JsError> {
        let hits = self.0.hits(&reader.0).map_err(|e| JsError::new(&e.to_string()))?;
        serde_wasm_bindgen::to_value(&hits).map_err(|e| JsError::new(&e.to_string()))
    }
}
