//! The wasm LLM client ([`cairn::llm::FetchClient`]: `fetch` + `AbortController`) in headless
//! Chromium against the loopback fault server (`tools/llm_fault_server.py`), whose URL
//! `CAIRN_LLM_FAULT_URL` must be set when this test is compiled: `npm run test:wasm-browser`
//! starts the server and sets it (`tools/with_fault_server.mjs`). The page's origin differs from
//! the server's, so every call here is a real cross-origin request with a CORS preflight.

use cairn::llm::{ChatMessage, ChatRequest, FetchClient, LlmConfig};
use wasm_bindgen_test::wasm_bindgen_test;

fn base() -> &'static str {
    option_env!("CAIRN_LLM_FAULT_URL")
        .expect("CAIRN_LLM_FAULT_URL is not set: run `npm run test:wasm-browser` (it starts tools/llm_fault_server.py)")
}

fn client(route: &str, f: impl FnOnce(&mut LlmConfig)) -> FetchClient {
    let mut c = LlmConfig::new(&format!("{}/{route}", base()), "fault");
    c.retries = 2;
    c.backoff_ms = 10;
    c.timeout_ms = 5_000;
    f(&mut c);
    FetchClient::new(c).unwrap()
}

fn hi() -> ChatRequest {
    ChatRequest { messages: vec![ChatMessage::user("hello there\nsecond line")], max_tokens: None }
}

#[wasm_bindgen_test]
async fn fetch_client_against_the_fault_server() {
    // A well-formed answer, and a bearer key sent as a header.
    let r = client("ok", |_| {}).chat(&hi()).await.unwrap();
    assert_eq!((r.content.as_str(), r.attempts), ("hello there", 1));
    let r = client("auth", |c| c.api_key = Some("sk-test".into())).chat(&hi()).await.unwrap();
    assert_eq!(r.content, "Bearer sk-test");
    // 500: retried, then reported.
    let c = client("500", |_| {});
    let e = c.chat(&hi()).await.unwrap_err().to_string();
    assert!(e.contains("HTTP 500") && e.contains("after 3 attempts"), "{e}");
    assert_eq!(c.requests_sent(), 3);
    // 429 then OK: Retry-After: 1 honoured.
    let t = js_sys::Date::now();
    let r = client("flaky429", |_| {}).chat(&hi()).await.unwrap();
    assert_eq!(r.attempts, 2);
    assert!(js_sys::Date::now() - t >= 950.0, "waited {} ms", js_sys::Date::now() - t);
    // A server that never answers, and one that trickles its body: the AbortController fires.
    for route in ["timeout", "slowbody"] {
        let t = js_sys::Date::now();
        let e = client(route, |c| {
            c.timeout_ms = 800;
            c.retries = 0;
        })
        .chat(&hi())
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("800 ms"), "{route}: {e}");
        assert!(js_sys::Date::now() - t < 4000.0, "{route}");
    }
    // Garbage and empty answers.
    let e = client("garbage", |_| {}).chat(&hi()).await.unwrap_err().to_string();
    assert!(e.contains("not JSON"), "{e}");
    assert_eq!(client("empty", |_| {}).chat(&hi()).await.unwrap().content, "");
    // No CORS header: the browser refuses the answer; the error explains the fix.
    let e = client("nocors", |c| c.retries = 0).chat(&hi()).await.unwrap_err().to_string();
    assert!(e.contains("CORS") && e.contains("OLLAMA_ORIGINS"), "{e}");
    // Cancelled before sending: nothing is sent.
    let c = client("ok", |_| {});
    c.cancel();
    assert!(c.chat(&hi()).await.unwrap_err().to_string().contains("cancelled"));
    assert_eq!(c.requests_sent(), 0);
}
