//! The page's side of the user's LLM endpoint (METHOD.md §3, CatRAG's LLM edge tiers):
//!
//! ```js
//! const llm = new LlmEndpoint('{"base_url":"http://127.0.0.1:8080","model":"m"}',
//!                             (ev) => console.log(ev));   // {type:"request", n, url}
//! await llm.testConnection();                 // {model, latencyMs, reply}
//! const plan = engine.planLlmTiers(query, {k: 5, method: "catrag"});  // phase 1 (no I/O)
//! const asked = await llm.tier(plan);         // phase 2: the endpoint, asynchronously
//! const out = engine.searchWithTiers(query, {k: 5, method: "catrag"}, plan);  // phase 3
//! ```
//!
//! Every HTTP request goes through [`FetchClient`], which counts it and calls the event hook
//! before it leaves ([`FetchClient::set_on_request`]). `LlmEndpoint` methods that talk to the
//! endpoint return a `Promise` built from a future that owns clones of the client (`Rc`), so no
//! borrow of the wasm object is held while awaiting and a `cancel()` can reach it meanwhile.

use std::collections::HashMap;
use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{from_js, js_err, search_hit, search_options, to_js, Engine, SearchHit, SearchOptionsArg};
use crate::catrag::ExplainConfig;
use crate::llm::plan::{CachedTierer, PlannedBatch, TierCache, TierPlanner};
use crate::llm::{ChatMessage, ChatRequest, FetchClient, LlmConfig};

/// CatRAG's τ: a target with more than this many facts is summarised before tiering (METHOD.md §3).
const SUMMARY_TAU: usize = 3;

/// An OpenAI-compatible chat endpoint reached with `fetch` from the page's worker.
#[wasm_bindgen]
pub struct LlmEndpoint {
    client: Rc<FetchClient>,
}

/// Phase 1's record for one query (the batches CatRAG wants tiered) and, after
/// [`LlmEndpoint::tier`], the tiers the endpoint gave.
#[wasm_bindgen]
pub struct LlmPlan {
    batches: Rc<Vec<PlannedBatch>>,
    cache: TierCache,
}

#[wasm_bindgen]
impl LlmPlan {
    /// Seeds whose edges need tiers (one tier request each).
    #[wasm_bindgen(getter)]
    pub fn batches(&self) -> u32 {
        self.batches.len() as u32
    }

    /// Candidate edges in all batches.
    #[wasm_bindgen(getter)]
    pub fn edges(&self) -> u32 {
        self.batches.iter().map(|b| b.edges.len()).sum::<usize>() as u32
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TierReport {
    /// Batches answered (their tiers are in the plan's cache).
    batches_answered: usize,
    /// Batches in the plan.
    batches: usize,
    /// Edges in the plan.
    edges: usize,
    /// Edges that will be Weak: unparsed answers plus every edge of an unanswered batch.
    weak_fallback_edges: usize,
    /// Chat calls made for this plan (summaries and tiers, not counting retries).
    calls: usize,
    /// The first error (timeout, HTTP status, CORS refusal with its fix, cancelled), if any;
    /// the batches after it are not asked.
    error: Option<String>,
    /// Whether the endpoint refused or could not be reached (CORS or nothing listening).
    cors: bool,
    cancelled: bool,
    /// Whether the circuit breaker is open after this plan: the next queries fall back at once
    /// until its cool-down has passed.
    breaker_open: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    model: String,
    latency_ms: f64,
    reply: String,
}

fn is_cors(msg: &str) -> bool {
    msg.contains("CORS")
}

#[wasm_bindgen]
impl LlmEndpoint {
    /// A client for `config_json`: an [`LlmConfig`] as JSON (`base_url`, `model`, optional
    /// `api_key`, `timeout_ms` = 60000, `retries` = 3, …). `on_event`, when a function, is called
    /// with `{type: "request", n, url}` just before each HTTP request leaves (n counts this
    /// client's requests, retries included). Nothing is sent by the constructor.
    ///
    /// # Errors
    /// Invalid JSON, an unknown field, or a configuration [`LlmConfig::validate`] refuses.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str, on_event: Option<js_sys::Function>) -> Result<LlmEndpoint, JsError> {
        let config: LlmConfig = serde_json::from_str(config_json)
            .map_err(|e| js_err(format!("invalid LLM endpoint settings: {e}")))?;
        let client = FetchClient::new(config).map_err(js_err)?;
        if let Some(f) = on_event {
            client.set_on_request(move |n, url| {
                let ev = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&ev, &"type".into(), &"request".into());
                let _ = js_sys::Reflect::set(&ev, &"n".into(), &JsValue::from_f64(n as f64));
                let _ = js_sys::Reflect::set(&ev, &"url".into(), &JsValue::from_str(url));
                let _ = f.call1(&JsValue::NULL, &ev);
            });
        }
        Ok(LlmEndpoint { client: Rc::new(client) })
    }

    /// The model name of the configuration.
    #[wasm_bindgen(getter)]
    pub fn model(&self) -> String {
        self.client.config().model.clone()
    }

    /// The chat-completions URL requests go to.
    #[wasm_bindgen(getter)]
    pub fn url(&self) -> String {
        self.client.config().completions_url()
    }

    /// HTTP requests sent by this client so far (retries included).
    #[wasm_bindgen(js_name = requestsSent)]
    pub fn requests_sent(&self) -> f64 {
        self.client.requests_sent() as f64
    }

    /// Abort the request in flight and send no other until the next operation starts.
    pub fn cancel(&self) {
        self.client.cancel();
    }

    /// One tiny chat call ("Reply with OK", at most 4 tokens). Resolves to
    /// `{model, latencyMs, reply}`; rejects with the client's error (CORS refusal with its fix,
    /// timeout, HTTP status, a body that is not a chat completion).
    #[wasm_bindgen(js_name = testConnection)]
    pub fn test_connection(&self) -> js_sys::Promise {
        let client = self.client.clone();
        client.resume();
        client.begin_query(None);
        wasm_bindgen_futures::future_to_promise(async move {
            let t0 = js_sys::Date::now();
            let req =
                ChatRequest { messages: vec![ChatMessage::user("Reply with OK.")], max_tokens: Some(4) };
            let r = client.chat(&req).await.map_err(|e| JsValue::from(js_err(e)))?;
            let out = Connection {
                model: client.config().model.clone(),
                latency_ms: js_sys::Date::now() - t0,
                reply: r.content,
            };
            to_js(&out).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// Phase 2 of the LLM tiering: for each batch of `plan`, summaries of targets with more than
    /// τ = 3 facts, then one tier request; the answers fill the plan's cache (an edge without a
    /// clear tier is Weak). At most the configuration's `call_budget` calls (default 75); the
    /// first failed call stops the asking (the rest fall back to Weak). Resolves to
    /// `{batchesAnswered, batches, edges, weakFallbackEdges, calls, error, cors, cancelled,
    /// breakerOpen}`;
    /// never rejects.
    pub fn tier(&self, plan: &LlmPlan) -> js_sys::Promise {
        let client = self.client.clone();
        client.resume();
        let batches = plan.batches.clone();
        let cache = plan.cache.clone();
        // The query's deadline starts now and bounds every call below: each search gets its
        // own, even when the user searches the same question again (ending the previous
        // query first, since the policy keeps a running deadline for the same text).
        client.begin_query(None);
        client.begin_query(batches.first().map(|b| b.query.as_str()));
        wasm_bindgen_futures::future_to_promise(async move {
            let budget = client.config().call_budget;
            let mut rep = TierReport {
                batches_answered: 0,
                batches: batches.len(),
                edges: batches.iter().map(|b| b.edges.len()).sum(),
                weak_fallback_edges: 0,
                calls: 0,
                error: None,
                cors: false,
                cancelled: false,
                breaker_open: false,
            };
            'batches: for b in batches.iter() {
                if rep.error.is_some() {
                    rep.weak_fallback_edges += b.edges.len();
                    continue;
                }
                let mut sums = HashMap::new();
                for (i, r) in b.summary_requests(SUMMARY_TAU) {
                    if rep.calls + 1 >= budget {
                        break; // keep one call for the tiers
                    }
                    rep.calls += 1;
                    match client.chat(&r).await {
                        Ok(a) if !a.content.trim().is_empty() => {
                            sums.insert(i, a.content);
                        }
                        Ok(_) => {}
                        Err(e) => {
                            rep.error = Some(e.to_string());
                            rep.weak_fallback_edges += b.edges.len();
                            continue 'batches;
                        }
                    }
                }
                if rep.calls >= budget {
                    rep.error = Some(format!("the per-query budget of {budget} LLM calls was reached"));
                    rep.weak_fallback_edges += b.edges.len();
                    continue;
                }
                rep.calls += 1;
                match client.chat(&b.tier_request(SUMMARY_TAU, &sums)).await {
                    Ok(a) => {
                        rep.weak_fallback_edges += cache.fill(b, &a.content);
                        rep.batches_answered += 1;
                    }
                    Err(e) => {
                        rep.error = Some(e.to_string());
                        rep.weak_fallback_edges += b.edges.len();
                    }
                }
            }
            rep.cancelled = client.is_cancelled();
            rep.breaker_open = client.breaker_open();
            rep.cors = rep.error.as_deref().is_some_and(is_cors);
            to_js(&rep).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// A short answer to `query` written by the endpoint from passages `[{title, text}]` (the
    /// top 5 of a search; HippoRAG's QA prompt, at most 48 tokens). Resolves to
    /// [`crate::llm::parse::parse_answer`] of the reply; rejects with the client's error.
    pub fn answer(&self, query: &str, passages: JsValue) -> Result<js_sys::Promise, JsError> {
        #[derive(serde::Deserialize)]
        struct P {
            #[serde(default)]
            title: String,
            text: String,
        }
        let ps: Vec<P> = from_js(passages).map_err(|e| js_err(format!("invalid passages: {e}")))?;
        let ps: Vec<(String, String)> = ps.into_iter().take(5).map(|p| (p.title, p.text)).collect();
        let req = crate::llm::prompts::answer_prompt(query, &ps);
        let client = self.client.clone();
        client.resume();
        client.begin_query(None);
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let r = client.chat(&req).await.map_err(|e| JsValue::from(js_err(e)))?;
            // The one answer parser of every caller: reasoning blocks stripped, the last
            // "Answer:" marker found in the text itself (not in a lower-cased copy).
            Ok(JsValue::from_str(&crate::llm::parse::parse_answer(&r.content)))
        }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TieredSearch<'a> {
    hits: Vec<SearchHit<'a>>,
    /// The tierer that ran (`llm:{model}`), or null when no edge was tiered.
    tierer: Option<String>,
    /// Seeds whose edges fell back to Weak because a batch had no tiers.
    tier_failures: usize,
    warnings: Vec<String>,
    explanation: Option<crate::search::SearchExplanation>,
}

#[wasm_bindgen]
impl Engine {
    /// Phase 1 of a CatRAG search with LLM tiers: run `query` once recording the edges to tier
    /// (no I/O; that run's ranking is discarded). Options as `search`; the method must be `catrag`.
    ///
    /// # Errors
    /// Not built, no knowledge graph, another method, bad options.
    #[wasm_bindgen(js_name = planLlmTiers)]
    pub fn plan_llm_tiers(
        &mut self,
        query: &str,
        options: Option<SearchOptionsArg>,
    ) -> Result<LlmPlan, JsError> {
        let (k, method) = search_options(options)?;
        if method != crate::index::Method::Catrag {
            return Err(js_err(format!("LLM tiers are for the method catrag, not {:?}", method.name())));
        }
        let index = self.index_mut()?;
        let planner = TierPlanner::default();
        index.set_edge_tierer(Box::new(planner.clone())).map_err(js_err)?;
        let run = index.search_graph(query, k, method);
        index.clear_edge_tierer();
        run.map_err(js_err)?;
        Ok(LlmPlan { batches: Rc::new(planner.take()), cache: TierCache::default() })
    }

    /// Phase 3: the CatRAG search with the tiers of `plan` (filled by [`LlmEndpoint::tier`]);
    /// a batch without tiers is Weak. Returns `{hits, tierer, tierFailures, warnings,
    /// explanation}` (`explanation` as `explain`, when `explain` is true). The engine goes back
    /// to the offline tierer afterwards.
    ///
    /// # Errors
    /// As [`Engine::plan_llm_tiers`].
    #[wasm_bindgen(js_name = searchWithTiers)]
    pub fn search_with_tiers(
        &mut self,
        query: &str,
        options: Option<SearchOptionsArg>,
        plan: &LlmPlan,
        model: &str,
        explain: bool,
    ) -> Result<JsValue, JsError> {
        let (k, method) = search_options(options)?;
        if method != crate::index::Method::Catrag {
            return Err(js_err(format!("LLM tiers are for the method catrag, not {:?}", method.name())));
        }
        let index = self.index_mut()?;
        index.set_edge_tierer(Box::new(CachedTierer::new(plan.cache.clone(), model))).map_err(js_err)?;
        // One graph search; the explanation reads its trace.
        let found = index.run(query, k, method, crate::index::QueryOptions::default());
        let explanation = match (&found, explain) {
            (Ok(found), true) => index.explain_result(found, &ExplainConfig::default()).map(Some),
            _ => Ok(None),
        };
        index.clear_edge_tierer();
        let found = found.map_err(js_err)?;
        let explanation = explanation.map_err(js_err)?;
        let index: &crate::Index = index;
        let terms = index.result_terms(&found);
        let retrieval = found.trace.retrieval.clone().ok_or_else(|| js_err("the graph search left no retrieval"))?;
        let hits = found
            .hits
            .iter()
            .enumerate()
            .filter_map(|(rank, h)| search_hit(index, &terms, rank + 1, h))
            .collect();
        let out = TieredSearch {
            hits,
            tierer: retrieval.tierer.clone(),
            tier_failures: retrieval.tier_failures,
            warnings: retrieval.warnings.clone(),
            explanation,
        };
        to_js(&out).map_err(js_err)
    }
}
