//! Cairn: multi-hop retrieval for RAG that runs entirely in the browser.
//!
//! The engine is plain, synchronous, deterministic Rust; it compiles natively (CLI, tests,
//! benchmarks) and to `wasm32-unknown-unknown` (the browser package in `pkg/`). Only the
//! [`wasm`] module knows about JavaScript. See `../shared/design/ARCHITECTURE.md` for the layout
//! and `../shared/design/METHOD.md` for the specification of every method.
//!
//! Version 0 ships the ground every later method stands on:
//! - [`corpus`]: passages and their loaders (JSONL, plain text, Markdown);
//! - [`text`]: the retrieval tokenizer (Unicode words, lowercase, English stop words, Snowball);
//! - [`index`]: the [`index::Index`] and its first ranking method, BM25;
//! - [`embed`]: the [`embed::Embedder`] trait, the static (Model2Vec-style) MiniLM embedder, BERT
//!   WordPiece, and exact cosine top-k search over a vector matrix;
//! - [`eval`]: datasets, Recall@k, FCR and the evaluation harness every method reports through;
//! - [`catrag`]: query-time graph retrieval over the knowledge graph, HippoRAG 2's static PPR
//!   and CatRAG's anchoring, key-fact boost, pruning and edge tiering, with explanations;
//! - [`llm`]: the user's LLM endpoint (CatRAG's LLM edge tiers, answers, tolerant parsers).

pub mod bench;
pub mod cage;
pub mod catrag;
pub mod corpus;
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
pub mod search;
#[cfg(not(target_arch = "wasm32"))]
pub mod site;
pub mod text;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use corpus::{Corpus, Passage};
pub use error::{Error, Result};
pub use index::{Hit, Index, IndexConfig, Method};
