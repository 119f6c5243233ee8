//! The wasm suite in Node: `wasm-pack test --node -- --test wasm_node`.
#![cfg(target_arch = "wasm32")]

#[path = "common/mod.rs"]
mod common;
mod wasm_suite;
