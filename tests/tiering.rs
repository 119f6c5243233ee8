//! CatRAG's LLM tiering: the CLI's path (the blocking driver inside `Searcher::search_graph`, as
//! `cairn eval --llm` runs it) and the page's path (`Searcher::prepare_graph`, the asynchronous
//! driver the wasm module runs over `fetch`, here over the same scripted endpoint and polled to
//! completion by a blocking executor, then `Searcher::finish_graph`) give the same calls, the same
//! tiers and the same ranking for the same configuration and the same endpoint answers.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use cairn::catrag::tiering::{run_async, run_blocking, TierMemo, TierPlan, TierSession};
use cairn::catrag::{CatragConfig, LlmTierer, OverlayCause, Tier};
use cairn::embed::{Embedder, StaticEmbedder};
use cairn::index::{EmbedderSlot, IndexConfig, Method};
use cairn::search::{GraphStep, Query};
use cairn::llm::{ChatRequest, ChatResponse, LlmClient, LlmConfig};

/// A scripted endpoint: a summary prompt is answered "<entity> is summarised.", a tier prompt
/// with a tier per edge id chosen from the target's name (its bytes summed, mod 4), so tiers
/// differ between edges and change the ranking. Records every request's text.
struct Scripted {
    config: LlmConfig,
    seen: Mutex<Vec<String>>,
    /// Fail a request whose text's bytes sum to a multiple of this.
    fail_modulo: Option<usize>,
}

impl Scripted {
    fn new(concurrency: usize, fail_modulo: Option<usize>) -> Self {
        let mut config = LlmConfig::new("http://127.0.0.1:9", "scripted");
        config.concurrency = concurrency;
        Scripted { config, seen: Mutex::new(Vec::new()), fail_modulo }
    }

    fn answer(&self, request: &ChatRequest) -> cairn::Result<ChatResponse> {
        let text: String = request.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
        self.seen.lock().unwrap().push(text.clone());
        // A failing endpoint fails the same requests whatever order they arrive in.
        let h: usize = text.bytes().map(usize::from).sum();
        if self.fail_modulo.is_some_and(|k| h % k == 0) {
            return Err(cairn::Error::Llm("HTTP 500 (scripted)".into()));
        }
        let user = request.messages.last().map(|m| m.content.as_str()).unwrap_or_default();
        let content = if let Some(rest) =
            user.strip_prefix("Summarise in one short sentence what these facts say about ")
        {
            let entity = rest.split(".\nFacts:").next().unwrap_or_default();
            format!("{entity} is summarised.\nA second line that is dropped.")
        } else {
            const WORDS: [&str; 4] = ["irrelevant", "weak", "high", "direct"];
            let pairs: Vec<String> = user
                .lines()
                .filter_map(|l| {
                    let (id, rest) = l.split_once(": ")?;
                    id.strip_prefix('e')?.parse::<usize>().ok()?;
                    let target = rest.split(" -> ").nth(1)?.split(" | ").next()?;
                    let h: usize = target.bytes().map(usize::from).sum();
                    Some(format!("\"{id}\": \"{}\"", WORDS[h % 4]))
                })
                .collect();
            format!("```json\n{{{}}}\n```", pairs.join(", "))
        };
        Ok(ChatResponse { content, finish_reason: Some("stop".into()), attempts: 1 })
    }

    fn calls(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl LlmClient for Scripted {
    fn config(&self) -> &LlmConfig {
        &self.config
    }
    fn chat(&self, request: &ChatRequest) -> cairn::Result<ChatResponse> {
        self.answer(request)
    }
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

/// Poll a future to completion on this thread (the scripted endpoint's futures are ready at
/// once; a pending one is polled again).
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The hotpot sample (100 passages) with its knowledge graph, under `catrag`.
fn index(catrag: CatragConfig) -> cairn::Index {
    let mut corpus = cairn::Corpus::new();
    for p in cairn::corpus::parse_jsonl("corpus.jsonl", common::CORPUS).unwrap() {
        corpus.add(p).unwrap();
    }
    let config = IndexConfig { catrag, ..IndexConfig::default() };
    let mut index = cairn::Index::build(corpus, &config).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    index
}

/// Calls as a multiset (a wave's parallel calls arrive in any order).
fn multiset(calls: &[String]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in calls {
        *m.entry(c.clone()).or_insert(0) += 1;
    }
    m
}

fn tiered(found: &cairn::search::GraphSearch) -> Vec<(u32, u32, Tier)> {
    found
        .retrieval
        .overlay
        .iter()
        .filter_map(|o| match o.cause {
            OverlayCause::Tiered { tier } => Some((o.from, o.to, tier)),
            _ => None,
        })
        .collect()
}

/// Both paths over every question of the sample: equal calls, tiers, overlay and ranking.
fn compare(catrag: CatragConfig, concurrency: usize, fail_modulo: Option<usize>) -> (usize, usize, usize) {
    let index = index(catrag);
    let mut searcher = index.searcher();
    let (mut summaries, mut tier_calls, mut failures) = (0, 0, 0);
    for q in common::questions() {
        // The CLI's path.
        let cli = Arc::new(Scripted::new(concurrency, fail_modulo));
        let tierer = Arc::new(LlmTierer::new(cli.clone() as Arc<dyn LlmClient>));
        searcher.set_edge_tierer(Some(Box::new(tierer.clone())));
        let blocking = searcher.search_graph(&q, 5, Method::Catrag).unwrap();
        searcher.set_edge_tierer(None);
        // The page's path.
        let page = Scripted::new(concurrency, fail_modulo);
        let prepared = match searcher.prepare_graph(&Query::new(q.as_str(), 5, Method::Catrag)).unwrap() {
            GraphStep::Prepared(p) => p,
            GraphStep::Done(_) => panic!("the sample's questions walk the graph: {q}"),
        };
        let plan = TierPlan::new(&prepared.query.tier_requests(index.graph().unwrap()));
        let session = TierSession::new(plan, prepared.query.config(), &TierMemo::default());
        let outcome = block_on(run_async(session, page.config.concurrency, |req| {
            let r = page.answer(&req).map(|a| a.content);
            async move { r }
        }));
        let paged = searcher.finish_graph(prepared, "llm:scripted", outcome.tiers.clone()).unwrap().into_graph_search().unwrap();

        assert_eq!(multiset(&cli.calls()), multiset(&page.calls()), "same calls for {q:?}");
        assert_eq!(cli.calls().len(), outcome.stats.calls);
        assert_eq!(tierer.stats().calls, outcome.stats.calls);
        assert_eq!(tiered(&blocking), tiered(&paged), "same tiers for {q:?}");
        assert_eq!(blocking.retrieval.overlay, paged.retrieval.overlay);
        assert_eq!(blocking.retrieval.tier_failures, paged.retrieval.tier_failures);
        assert_eq!(blocking.retrieval.tierer.as_deref(), Some("llm:scripted"));
        assert_eq!(paged.retrieval.tierer.as_deref(), Some("llm:scripted"));
        assert_eq!(blocking.hits, paged.hits, "same ranking for {q:?}");
        assert_eq!(blocking.retrieval.passage_scores, paged.retrieval.passage_scores);
        summaries += outcome.stats.summary_calls;
        tier_calls += outcome.stats.tier_calls;
        failures += paged.retrieval.tier_failures;
    }
    (summaries, tier_calls, failures)
}

#[test]
fn the_cli_and_the_page_give_the_same_calls_tiers_and_ranking() {
    let (summaries, tier_calls, failures) = compare(CatragConfig::default(), 2, None);
    assert!(summaries > 0, "some target has more than τ facts");
    assert!(tier_calls >= 10, "every question tiers some seed: {tier_calls}");
    assert_eq!(failures, 0);
}

#[test]
fn the_same_under_a_tight_budget_and_a_failing_endpoint() {
    // Budget 4, reserve 2: at most 2 summaries, the rest of the budget for tier prompts; the
    // seeds past it fall back to Weak the same way on both paths.
    let tight = CatragConfig { llm_call_budget: 4, llm_call_reserve: 2, ..CatragConfig::default() };
    let (_, _, failures) = compare(tight, 3, None);
    assert!(failures > 0, "some question has more seeds than the budget's tier prompts");
    // The endpoint fails about one request in three: the asking ends at the first failure of a
    // query, the same on both paths.
    let (_, _, failures) = compare(CatragConfig::default(), 2, Some(3));
    assert!(failures > 0);
}

#[test]
fn tiers_change_the_ranking_and_the_offline_tierer_comes_back() {
    // The scripted tiers are not the embedding-similarity tiers: the overlay differs (so the
    // comparison above is not between two offline runs).
    let index = index(CatragConfig::default());
    let mut searcher = index.searcher();
    let q = &common::questions()[0];
    let offline = searcher.search_graph(q, 5, Method::Catrag).unwrap();
    let client = Arc::new(Scripted::new(2, None));
    searcher.set_edge_tierer(Some(Box::new(LlmTierer::new(client as Arc<dyn LlmClient>))));
    let llm = searcher.search_graph(q, 5, Method::Catrag).unwrap();
    assert_ne!(tiered(&offline), tiered(&llm));
    searcher.set_edge_tierer(None);
    let again = searcher.search_graph(q, 5, Method::Catrag).unwrap();
    assert_eq!(again.retrieval.overlay, offline.retrieval.overlay);
    assert_eq!(again.hits, offline.hits);
}

#[test]
fn the_memo_answers_a_repeated_query_without_calls() {
    let index = index(CatragConfig::default());
    let mut searcher = index.searcher();
    let q = &common::questions()[1];
    let GraphStep::Prepared(prepared) = searcher.prepare_graph(&Query::new(q.as_str(), 5, Method::Catrag)).unwrap() else {
        panic!("walks the graph")
    };
    let requests = prepared.query.tier_requests(index.graph().unwrap());
    let client = Scripted::new(2, None);
    let mut memo = TierMemo::default();
    let mut first =
        run_blocking(TierSession::new(TierPlan::new(&requests), prepared.query.config(), &memo), &client);
    assert!(first.stats.calls > 0);
    memo.absorb(&mut first);
    let second =
        run_blocking(TierSession::new(TierPlan::new(&requests), prepared.query.config(), &memo), &client);
    assert_eq!(second.stats.calls, 0);
    assert_eq!(second.tiers, first.tiers);
    assert_eq!(client.calls().len(), first.stats.calls);
}
