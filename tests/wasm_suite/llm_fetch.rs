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
    ChatRequest {
        messages: vec![ChatMessage::user("hello there\nsecond line")],
        max_tokens: None,
        response_format: None,
    }
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

/// CatRAG's LLM tiering in wasm as the page runs it: the graph search prepared up to its tiers
/// (`Searcher::prepare_graph`, no PPR), the tiering state machine's asynchronous driver over fetch
/// (the fault server's /tiers route rates every edge "high"), then `Searcher::finish_graph` (PPR
/// once).
#[wasm_bindgen_test]
async fn tiering_over_fetch_between_the_search_halves() {
    use cairn::catrag::tiering::{run_async, TierMemo, TierPlan, TierSession};
    use cairn::catrag::{OverlayCause, Tier};
    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::index::{EmbedderSlot, Method};
    use cairn::search::GraphStep;
    use std::rc::Rc;

    let mut corpus = cairn::Corpus::new();
    for p in cairn::corpus::parse_jsonl("corpus.jsonl", crate::common::CORPUS).unwrap() {
        corpus.add(p).unwrap();
    }
    let mut index = cairn::Index::build(corpus, &cairn::IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    let mut searcher = index.searcher();
    let client = Rc::new(client("tiers", |_| {}));
    let mut tiered_queries = 0;
    for q in crate::common::questions().iter().take(5) {
        let GraphStep::Prepared(prepared) = searcher.prepare_graph(&cairn::search::Query::new(q.as_str(), 5, Method::Catrag)).unwrap() else {
            continue;
        };
        let plan = TierPlan::new(&prepared.query.tier_requests(index.graph().unwrap()));
        let edges = plan.edges();
        let batches = plan.batches.len();
        let session = TierSession::new(plan, prepared.query.config(), &TierMemo::default());
        let c = client.clone();
        let outcome = run_async(session, 2, move |req| {
            let c = c.clone();
            async move { c.chat(&req).await.map(|r| r.content) }
        })
        .await;
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        assert_eq!(outcome.stats.unparsed_edges, 0, "every edge id answered");
        let found = searcher.finish_graph(prepared, "llm:fault", outcome.tiers).unwrap().into_graph_search().unwrap();
        assert_eq!(found.retrieval.tier_failures, 0);
        let tiered: Vec<_> = found
            .retrieval
            .overlay
            .iter()
            .filter(|o| matches!(o.cause, OverlayCause::Tiered { .. }))
            .collect();
        assert_eq!(tiered.len(), edges);
        assert!(tiered.iter().all(|o| matches!(o.cause, OverlayCause::Tiered { tier: Tier::High })));
        tiered_queries += usize::from(batches > 0);
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
    use cairn::catrag::tiering::{run_async, TierMemo, TierPlan, TierSession};
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
            response_format: None,
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
    let mut searcher = index.searcher();
    let q = &crate::common::questions()[0];
    let cairn::search::GraphStep::Prepared(prepared) = searcher.prepare_graph(&cairn::search::Query::new(q.as_str(), 5, Method::Catrag)).unwrap() else {
        panic!("the question walks the graph")
    };
    // One batch is enough to show the path (SmolLM2 is slow on 2 cores); no summaries (τ high).
    let mut plan = TierPlan::new(&prepared.query.tier_requests(index.graph().unwrap()));
    plan.batches.truncate(1);
    let edges = plan.edges();
    let config = cairn::catrag::CatragConfig { tau: usize::MAX, ..prepared.query.config().clone() };
    let session = TierSession::new(plan, &config, &TierMemo::default());
    let client = std::rc::Rc::new(client);
    let outcome = run_async(session, 1, move |req| {
        let c = client.clone();
        async move { c.chat(&req).await.map(|r| r.content) }
    })
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!((outcome.stats.calls, outcome.stats.tier_calls), (1, 1));
    assert_eq!(outcome.stats.tiered_edges + outcome.stats.unparsed_edges, edges);
    let found = searcher.finish_graph(prepared, "llm:smollm2-135m", outcome.tiers).unwrap().into_graph_search().unwrap();
    assert_eq!(found.hits.len(), 5);
}
