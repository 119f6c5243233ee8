//! Cairn: multi-hop retrieval for RAG that runs entirely in the browser.
//!
//! The engine is plain, synchronous, deterministic Rust; it compiles natively (CLI, tests,
//! benchmarks) and to `wasm32-unknown-unknown` (the browser package in `pkg/`). Only the
//! [`wasm`] module knows about JavaScript. `docs/architecture.md` describes the layout (its layer
//! table is checked by `tools/check_layers.py`) and `docs/method/spec.md` specifies every method.
//!
//! The modules, bottom first:
//! - [`error`]: the one [`Error`] enum;
//! - [`text`]: the English pipeline (tokens, folding, POS tags, lemmas, chunks, pronouns, query
//!   NER) and the retrieval analyzer; [`embed`]: the [`embed::Embedder`] trait, the static
//!   embedder, MiniLM (feature `minilm`), exact vector search; [`ppr`]: Personalized PageRank;
//! - [`corpus`]: passages and their loaders; [`format`]: the index file's sections;
//! - [`extract`]: rule OpenIE; [`graph`]: the knowledge graph; [`llm`]: the user's LLM endpoint
//!   (client, prompts, tolerant parsers);
//! - [`catrag`]: HippoRAG 2's and CatRAG's graph walk (seeds, anchoring, boost, pruning, edge
//!   tiering, bridges) with explanations; [`cage`]: CAGE's passage graphs, stored graph
//!   embeddings, coherence and fusion;
//! - [`index`]: the [`Index`] as data and the method table ([`index::Method`]);
//! - [`search`]: one query's path over an index; [`site`]: a static site read into passages;
//!   [`documents`]: PDF and Word files as the text the page makes of them;
//! - [`engine`]: the lifecycle the page, the CLI and the evaluation share;
//! - [`eval`]: Recall@k, FCR, JSR, EM/F1; [`bench`]: benchmark figures;
//! - [`wasm`] (wasm32 only): the JavaScript API.

pub mod bench;
pub mod cage;
pub mod catrag;
pub mod corpus;
#[cfg(not(target_arch = "wasm32"))]
pub mod documents;
pub mod embed;
pub mod engine;
pub mod error;
pub mod eval;
pub mod extract;
pub mod format;
pub mod graph;
pub mod index;
pub mod llm;
pub mod ppr;
pub mod reader;
pub mod search;
#[cfg(not(target_arch = "wasm32"))]
pub mod site;
pub mod text;

#[cfg(all(target_arch = "wasm32", not(feature = "reader")))]
pub mod wasm;
#[cfg(all(target_arch = "wasm32", feature = "reader"))]
pub mod wasm_reader;

pub use corpus::{Corpus, Passage};
pub use error::{Error, Result};
pub use index::{Hit, Index, IndexConfig, Method};
