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

/// CatRAG's LLM tiering in wasm, in three phases around the synchronous engine
/// (`cairn::llm::plan`): plan the batches, ask the endpoint over fetch (the fault server's
/// /tiers route rates every edge "high"), run again from the cache.
#[wasm_bindgen_test]
async fn three_phase_tiering_over_fetch() {
    use cairn::catrag::{OverlayCause, Tier};
    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::index::{EmbedderSlot, Method};
    use cairn::llm::plan::{CachedTierer, TierCache, TierPlanner};
    use std::rc::Rc;

    let mut corpus = cairn::Corpus::new();
    for p in cairn::corpus::parse_jsonl("corpus.jsonl", crate::common::CORPUS).unwrap() {
        corpus.add(p).unwrap();
    }
    let mut index = cairn::Index::build(corpus, &cairn::IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    let client = client("tiers", |_| {});
    let mut tiered_queries = 0;
    for q in crate::common::questions().iter().take(5) {
        let planner = TierPlanner::default();
        index.set_edge_tierer(Box::new(planner.clone())).unwrap();
        index.search_graph(q, 5, Method::Catrag).unwrap();
        let batches = planner.take();
        let cache = TierCache::default();
        for b in &batches {
            let mut sums = std::collections::HashMap::new();
            for (i, r) in b.summary_requests(3) {
                sums.insert(i, client.chat(&r).await.unwrap().content);
            }
            let answer = client.chat(&b.tier_request(3, &sums)).await.unwrap();
            assert_eq!(cache.fill(b, &answer.content), 0, "every edge id answered");
        }
        index.set_edge_tierer(Box::new(CachedTierer::new(cache.clone(), "fault"))).unwrap();
        let found = index.search_graph(q, 5, Method::Catrag).unwrap();
        assert_eq!(found.retrieval.tier_failures, 0);
        let tiered: Vec<_> = found
            .retrieval
            .overlay
            .iter()
            .filter(|o| matches!(o.cause, OverlayCause::Tiered { .. }))
            .collect();
        assert_eq!(tiered.len(), cache.len());
        assert!(tiered.iter().all(|o| matches!(o.cause, OverlayCause::Tiered { tier: Tier::High })));
        tiered_queries += usize::from(!batches.is_empty());
    }
    assert!(tiered_queries > 0, "some query had edges to tier");
}

/// The real llama.cpp server (SmolLM2-135M) from the browser: a cross-origin chat round trip and
/// one query's tiers through the three phases. Skipped (with a message) when the server was not
/// started (`CAIRN_LLM_REAL_URL` unset at compile time: no `.venv-llm`).
#[wasm_bindgen_test]
async fn real_server_over_fetch() {
    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::index::{EmbedderSlot, Method};
    use cairn::llm::plan::{CachedTierer, TierCache, TierPlanner};
    use std::rc::Rc;

    let Some(url) = option_env!("CAIRN_LLM_REAL_URL") else {
        web_sys::console::log_1(&"SKIPPED: CAIRN_LLM_REAL_URL unset (no .venv-llm)".into());
        return;
    };
    let mut cfg = LlmConfig::new(url, "smollm2-135m");
    cfg.timeout_ms = 300_000;
    let client = FetchClient::new(cfg).unwrap();
    let r = client
        .chat(&ChatRequest {
            messages: vec![ChatMessage::user("What is the capital of France?")],
            max_tokens: Some(12),
        })
        .await
        .unwrap();
    assert!(!r.content.trim().is_empty());
    let mut corpus = cairn::Corpus::new();
    for p in cairn::corpus::parse_jsonl("corpus.jsonl", crate::common::CORPUS).unwrap() {
        corpus.add(p).unwrap();
    }
    let mut index = cairn::Index::build(corpus, &cairn::IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    let q = &crate::common::questions()[0];
    let planner = TierPlanner::default();
    index.set_edge_tierer(Box::new(planner.clone())).unwrap();
    index.search_graph(q, 5, Method::Catrag).unwrap();
    // One batch is enough to show the path (SmolLM2 is slow on 2 cores); no summaries.
    let batches: Vec<_> = planner.take().into_iter().take(1).collect();
    let cache = TierCache::default();
    let mut unparsed = 0;
    for b in &batches {
        let answer = client.chat(&b.tier_request(3, &Default::default())).await.unwrap();
        unparsed += cache.fill(b, &answer.content);
    }
    assert!(unparsed <= cache.len());
    index.set_edge_tierer(Box::new(CachedTierer::new(cache, "smollm2-135m"))).unwrap();
    let found = index.search_graph(q, 5, Method::Catrag).unwrap();
    assert_eq!(found.hits.len(), 5);
}
