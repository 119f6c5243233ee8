//! The wasm suite in headless Chromium: `wasm-pack test --headless --chrome -- --test wasm_browser`
//! (Chrome's options, `--no-sandbox` among them, are in `webdriver.json`).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "common/mod.rs"]
mod common;
mod wasm_suite;
/// The LLM client over fetch, against the fault server (browser only: it needs CORS).
#[path = "wasm_suite/llm_fetch.rs"]
mod llm_fetch;
/// The page's LLM NER and LLM OpenIE through the JS API, against the fault server.
#[path = "wasm_suite/llm_page.rs"]
mod llm_page;
