//! The page's side of the user's LLM endpoint (docs/method/spec.md §3, CatRAG's LLM edge tiers):
//!
//! ```js
//! const llm = new LlmEndpoint('{"base_url":"http://127.0.0.1:8080","model":"m"}',
//!                             (ev) => console.log(ev));   // {type:"request", n, url}
//! await llm.testConnection();                 // {model, latencyMs, reply}
//! const plan = engine.planLlmTiers(query, {k: 5, method: "catrag"});  // seeds, pruning (no PPR, no I/O)
//! const asked = await llm.tier(plan);         // the endpoint, asynchronously
//! const out = engine.searchWithTiers(query, {k: 5, method: "catrag"}, plan, llm.model, true);  // PPR once
//! ```
//!
//! The tiering is CatRAG's one state machine ([`crate::catrag::tiering`]) driven by its
//! asynchronous driver over [`FetchClient`]: the same waves of calls, tiers and counters as the
//! CLI's blocking driver for the same configuration and answers. The plan holds the prepared
//! graph search (seeds, boost, pruning), so the search after the tiers runs PPR once and the
//! explanation reads that search's trace.
//!
//! Every HTTP request goes through [`FetchClient`], which counts it and calls the event hook
//! before it leaves ([`FetchClient::set_on_request`]). `LlmEndpoint` methods that talk to the
//! endpoint return a `Promise` built from a future that owns clones of the client (`Rc`), so no
//! borrow of the wasm object is held while awaiting and a `cancel()` can reach it meanwhile.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{from_js, js_err, to_js, Engine};
use crate::catrag::tiering::{run_async, TierMemo, TierPlan, TierSession};
use crate::catrag::{CatragConfig, Tier};
use crate::search::{GivenTiers, GraphStep};
use crate::llm::{ChatMessage, ChatRequest, FetchClient, LlmConfig};

/// An OpenAI-compatible chat endpoint reached with `fetch` from the page's worker.
#[wasm_bindgen]
pub struct LlmEndpoint {
    client: Rc<FetchClient>,
    /// Summaries and tier answers kept between searches ([`TierMemo`]).
    memo: Rc<RefCell<TierMemo>>,
    /// The query whose deadline [`LlmEndpoint::entities`] started: its tiers continue that
    /// deadline instead of starting their own (one deadline per query).
    ner_query: Rc<RefCell<Option<String>>>,
}

/// One query's graph walk stopped before its tiers ([`Engine::plan_llm_tiers`]): the prepared
/// walk, the batches CatRAG wants tiered and, after [`LlmEndpoint::tier`], their tiers. Used up
/// by `Engine.query(query, plan)`.
#[wasm_bindgen]
pub struct LlmPlan {
    /// The prepared walk (taken by `Engine.query`), or the finished one of a query that walks
    /// nothing.
    step: RefCell<Option<GraphStep>>,
    plan: Rc<TierPlan>,
    config: CatragConfig,
    tiers: Rc<RefCell<Option<Vec<Option<Vec<Tier>>>>>>,
    /// Who tiers it: `llm:{model}` of the endpoint it was planned for.
    tierer: String,
}

#[wasm_bindgen]
impl LlmPlan {
    /// Seeds whose edges need tiers (one tier request each).
    #[wasm_bindgen(getter)]
    pub fn batches(&self) -> u32 {
        self.plan.batches.len() as u32
    }

    /// Candidate edges in all batches.
    #[wasm_bindgen(getter)]
    pub fn edges(&self) -> u32 {
        self.plan.edges() as u32
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
    /// The tiering's counters ([`crate::catrag::TierStats`]).
    stats: crate::catrag::TierStats,
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
        Ok(LlmEndpoint {
            client: Rc::new(client),
            memo: Rc::new(RefCell::new(TierMemo::default())),
            ner_query: Rc::new(RefCell::new(None)),
        })
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
            let req = ChatRequest {
                messages: vec![ChatMessage::user("Reply with OK.")],
                max_tokens: Some(4),
                response_format: None,
            };
            let r = client.chat(&req).await.map_err(|e| JsValue::from(js_err(e)))?;
            let out = Connection {
                model: client.config().model.clone(),
                latency_ms: js_sys::Date::now() - t0,
                reply: r.content,
            };
            to_js(&out).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// The LLM tiering of `plan` ([`crate::catrag::tiering`]): summaries of targets with more
    /// than τ facts (`catrag.tau`, 3), then one tier prompt per seed, in waves of the client's
    /// `concurrency` calls, within `catrag.llm_call_budget` (75) calls less
    /// `catrag.llm_call_reserve` (5) for summaries; the first failed call ends the asking (the
    /// rest fall back to Weak). Answers already kept by this endpoint are not asked again.
    /// Resolves to `{batchesAnswered, batches, edges, weakFallbackEdges, calls, stats, error,
    /// cors, cancelled, breakerOpen}`; never rejects.
    pub fn tier(&self, plan: &LlmPlan) -> js_sys::Promise {
        let client = self.client.clone();
        client.resume();
        // The query's deadline starts now and bounds every call below: each search gets its
        // own, even when the user searches the same question again (ending the previous
        // query first, since the policy keeps a running deadline for the same text).
        // An LLM NER call for this query (`entities`) started the deadline already: the tiers
        // continue it.
        let ner_started = self.ner_query.borrow_mut().take().as_deref() == Some(plan.plan.query.as_str());
        if !ner_started {
            client.begin_query(None);
        }
        if !plan.plan.batches.is_empty() {
            client.begin_query(Some(plan.plan.query.as_str()));
        }
        let session = TierSession::new((*plan.plan).clone(), &plan.config, &self.memo.borrow());
        let memo = self.memo.clone();
        let tiers = plan.tiers.clone();
        let width = client.config().concurrency.max(1);
        let edges = plan.plan.edges();
        let sizes: Vec<usize> = plan.plan.batches.iter().map(|b| b.edges.len()).collect();
        wasm_bindgen_futures::future_to_promise(async move {
            let c = client.clone();
            let mut outcome = run_async(session, width, move |req| {
                let c = c.clone();
                async move { c.chat(&req).await.map(|r| r.content) }
            })
            .await;
            memo.borrow_mut().absorb(&mut outcome);
            let unanswered: usize =
                outcome.tiers.iter().zip(&sizes).filter(|(t, _)| t.is_none()).map(|(_, n)| n).sum();
            let rep = TierReport {
                batches_answered: outcome.tiers.iter().filter(|t| t.is_some()).count(),
                batches: sizes.len(),
                edges,
                weak_fallback_edges: unanswered + outcome.stats.unparsed_edges,
                calls: outcome.stats.calls,
                cors: outcome.error.as_deref().is_some_and(is_cors),
                error: outcome.error.clone(),
                stats: outcome.stats.clone(),
                cancelled: client.is_cancelled(),
                breaker_open: client.breaker_open(),
            };
            *tiers.borrow_mut() = Some(outcome.tiers);
            to_js(&rep).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// A short answer to `query` written by the endpoint from passages `[{title, text}]` (the
    /// top 5 of a search; HippoRAG's QA prompt, at most 48 tokens), within the answer deadline
    /// ([`crate::llm::LlmConfig::answer_deadline_ms`]). Resolves to
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
        client.begin_answer(query);
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
struct LlmOutcome {
    /// The first failure (timeout, HTTP status, CORS refusal, cancelled, breaker open, an
    /// answer that parses to nothing), if any.
    error: Option<String>,
    /// Whether the endpoint refused or could not be reached (CORS or nothing listening).
    cors: bool,
    cancelled: bool,
    /// Whether the circuit breaker is open after this call.
    breaker_open: bool,
}

impl LlmOutcome {
    fn of(client: &FetchClient, error: Option<String>) -> Self {
        LlmOutcome {
            cors: error.as_deref().is_some_and(is_cors),
            error,
            cancelled: client.is_cancelled(),
            breaker_open: client.breaker_open(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntitiesReport {
    /// The query's entity names by the endpoint; empty on failure (then the search uses the
    /// rule-based query NER).
    names: Vec<String>,
    #[serde(flatten)]
    outcome: LlmOutcome,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TriplesReport {
    /// The passage's `[subject, relation, object]` triples by the endpoint; empty on failure
    /// (then the graph build uses the passage's rule-based triples).
    triples: Vec<crate::llm::parse::LlmTriple>,
    #[serde(flatten)]
    outcome: LlmOutcome,
}

#[wasm_bindgen]
impl LlmEndpoint {
    /// LLM NER for CatRAG's symbolic anchoring (docs/method/spec.md §3 channel B, optional LLM NER;
    /// HippoRAG 2's NER prompt, [`crate::llm::prompts::ner_prompt`], read by
    /// [`crate::llm::parse::parse_entities`]): one call, which starts the query's deadline (the
    /// tiers of the same query, [`LlmEndpoint::tier`], continue it) and goes through the breaker.
    /// Resolves to `{names, error, cors, cancelled, breakerOpen}`; never rejects. Pass `names` to
    /// [`Engine::plan_llm_tiers`]; empty `names` (a failure, or an answer naming no entity, with
    /// `error` set) means the rule-based query NER.
    pub fn entities(&self, query: &str) -> js_sys::Promise {
        let client = self.client.clone();
        client.resume();
        let q = crate::text::fold::nfc(query).into_owned();
        client.begin_query(None);
        client.begin_query(Some(q.as_str()));
        *self.ner_query.borrow_mut() = Some(q.clone());
        let req = crate::llm::prompts::ner_prompt(&q);
        wasm_bindgen_futures::future_to_promise(async move {
            let (names, error) = ask(&client, &req, crate::llm::parse::parse_entities, "entity").await;
            let rep = EntitiesReport { names, outcome: LlmOutcome::of(&client, error) };
            to_js(&rep).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// LLM OpenIE of one passage for the knowledge graph (docs/method/spec.md §1 "Triples", optional LLM
    /// OpenIE; HippoRAG 2's OpenIE prompt, [`crate::llm::prompts::openie_prompt`], read by
    /// [`crate::llm::parse::parse_triples`], as the CLI's `--llm-openie`). Each passage's call,
    /// retries included, has its own deadline (`query_deadline_ms`, the page's "deadline per
    /// query") besides the request timeout, and goes through the circuit breaker: a hung endpoint
    /// costs at most `breaker_failures` deadlines, after which calls fail at once until the
    /// cool-down has passed. Passage `passage` of `engine`'s corpus (insertion order; its title and text are
    /// read now). Resolves to `{triples, error, cors, cancelled, breakerOpen}`; never rejects
    /// (a passage outside the corpus resolves with an error and no triple). Collect one result
    /// per passage and give them to [`Engine::build_graph_from_llm_triples`].
    #[wasm_bindgen(js_name = openiePassage)]
    pub fn openie_passage(&self, engine: &Engine, passage: u32) -> js_sys::Promise {
        let client = self.client.clone();
        client.begin_query(None);
        let Some(p) = engine.inner.corpus().passages().get(passage as usize) else {
            let rep = TriplesReport {
                triples: Vec::new(),
                outcome: LlmOutcome::of(&client, Some(format!("no passage {passage} in the corpus"))),
            };
            let v = to_js(&rep).unwrap_or(JsValue::NULL);
            return js_sys::Promise::resolve(&v);
        };
        // A deadline of its own: the policy starts one for each new key.
        client.begin_query(Some(&format!("\u{1}openie {passage} {}", p.id)));
        let req = crate::llm::prompts::openie_prompt(&p.title, &p.text);
        wasm_bindgen_futures::future_to_promise(async move {
            let (triples, error) = ask(&client, &req, crate::llm::parse::parse_triples, "triple").await;
            let rep = TriplesReport { triples, outcome: LlmOutcome::of(&client, error) };
            to_js(&rep).map_err(|e| JsValue::from(js_err(e)))
        })
    }

    /// Accept requests again after [`LlmEndpoint::cancel`] (before a run of
    /// [`LlmEndpoint::openie`] calls; the other operations do it themselves).
    pub fn resume(&self) {
        self.client.resume();
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LlmGraphBuild {
    /// The knowledge graph's report (as `graphReport()`).
    report: serde_json::Value,
    /// Passages whose triples came from the endpoint.
    llm_passages: usize,
    /// Passages that kept their rule-based triples (no answer, a failed call, no triple parsed).
    fallback_passages: usize,
    /// Triples taken from the endpoint.
    llm_triples: usize,
}

#[wasm_bindgen]
impl Engine {
    /// The first half of a search whose graph walk takes its edge tiers from `endpoint` (the
    /// method `catrag`, or `catrag+cage`'s first stage): the walk's seeds, key-fact boost and
    /// coarse pruning ([`crate::search::Searcher::plan`]; no PPR, no I/O), and the batches to
    /// tier. `query` as `Engine.query` (its `entities`: LLM NER names for the anchoring). Then
    /// `endpoint.tier(plan)` asks for the tiers and `Engine.query(query, plan)` finishes the
    /// search from them (one PPR run; CAGE's rerank for `catrag+cage`).
    ///
    /// # Errors
    /// Not built, no knowledge graph, a method that walks no graph, a bad query.
    #[wasm_bindgen(js_name = planLlmTiers)]
    pub fn plan_llm_tiers(&mut self, query: super::QueryArg, endpoint: &LlmEndpoint) -> Result<LlmPlan, JsError> {
        let query = super::query_of(query)?;
        let step = self.inner.plan(&query).map_err(js_err)?;
        let index = self.index()?;
        let plan = match (&step, index.graph()) {
            (GraphStep::Prepared(p), Some(graph)) => TierPlan::new(&p.query.tier_requests(graph)),
            _ => TierPlan::default(),
        };
        let config = match &step {
            GraphStep::Prepared(p) => p.query.config().clone(),
            GraphStep::Done(_) => CatragConfig::default(),
        };
        Ok(LlmPlan {
            step: RefCell::new(Some(step)),
            plan: Rc::new(plan),
            config,
            tiers: Rc::new(RefCell::new(None)),
            tierer: format!("llm:{}", endpoint.client.config().model),
        })
    }
}

/// The tiers a JS `LlmPlan` carries, for [`crate::search::Query::tiers`]: its planned walk and
/// the tiers [`LlmEndpoint::tier`] filled (none when it was not asked: every batch Weak).
///
/// # Errors
/// A value that is not an `LlmPlan`, or a plan already used.
pub(crate) fn given_tiers(plan: JsValue) -> Result<GivenTiers, JsError> {
    use wasm_bindgen::convert::TryFromJsValue;
    let plan = LlmPlan::try_from_js_value(plan).map_err(|_| js_err("the plan is not an LlmPlan from planLlmTiers"))?;
    let step = plan.step.borrow_mut().take().ok_or_else(|| js_err("this LLM plan was already used"))?;
    let tiers = plan.tiers.borrow_mut().take().unwrap_or_default();
    Ok(GivenTiers { step, tierer: plan.tierer.clone(), tiers })
}

#[wasm_bindgen]
impl Engine {
    /// Build the knowledge graph (docs/method/spec.md §1) from LLM OpenIE: `perPassage[i]` is passage
    /// `i`'s `[subject, relation, object]` triples by [`LlmEndpoint::openie`] (its `triples`),
    /// or `null`/`[]` where the endpoint gave none; those passages, and any past the array's
    /// end, keep their rule-based triples (as the CLI's `--llm-openie`). Sentence spans as
    /// [`crate::llm::openie::llm_triples`]. Then as `buildGraph` (static embedder, synonyms,
    /// CSR; same progress phases). Returns `{report, llmPassages, fallbackPassages, llmTriples}`.
    ///
    /// Throws when the engine is not built, the static embedder is not loaded, or `perPassage`
    /// is not an array of triple arrays; the previous graph is kept then.
    #[wasm_bindgen(js_name = buildGraphFromLlmTriples)]
    pub fn build_graph_from_llm_triples(
        &mut self,
        per_passage: JsValue,
        on_progress: Option<super::ProgressArg>,
    ) -> Result<JsValue, JsError> {
        let per: Vec<Option<Vec<crate::llm::parse::LlmTriple>>> =
            from_js(per_passage).map_err(|e| js_err(format!("invalid LLM triples: {e}")))?;
        let on_progress = super::callback(on_progress);
        let index = self.index()?;
        if index.dense(crate::index::EmbedderSlot::Static).is_none() {
            return Err(js_err("the knowledge graph needs the static embedder: load it first (loadStaticEmbedder)"));
        }
        let passages = index.corpus().passages();
        if per.len() > passages.len() {
            return Err(js_err(format!(
                "LLM triples for {} passages, but the corpus has {}",
                per.len(),
                passages.len()
            )));
        }
        let pipeline = crate::text::Pipeline::english().map_err(js_err)?;
        let mut progress = super::phase_progress(&on_progress);
        let rule = crate::extract::extract_corpus(&pipeline, index.corpus(), &mut |d, t| {
            progress(crate::engine::Phase::Extract, d, t)
        });
        let mut stats = rule.stats;
        let (mut llm_passages, mut llm_triples) = (0usize, 0usize);
        let mut triples = Vec::with_capacity(rule.triples.len());
        let mut rule_iter = rule.triples.into_iter().peekable();
        for (i, p) in passages.iter().enumerate() {
            let i32_ = i as u32;
            let mut own = Vec::new();
            while let Some(t) = rule_iter.next_if(|t| t.passage == i32_) {
                own.push(t);
            }
            match per.get(i).cloned().flatten().filter(|t| !t.is_empty()) {
                Some(parsed) => {
                    llm_passages += 1;
                    llm_triples += parsed.len();
                    triples.extend(crate::llm::openie::llm_triples(i32_, &p.text, parsed));
                }
                None => triples.extend(own),
            }
        }
        // Rule triples of passages the loop did not reach (none: extraction is in corpus order).
        triples.extend(rule_iter);
        stats.triples = triples.len();
        let fallback_passages = passages.len() - llm_passages;
        drop(progress);
        self.inner
            .build_graph_from_triples(&triples, Some(stats), &mut super::phase_progress(&on_progress))
            .map_err(js_err)?;
        let report: serde_json::Value = self
            .inner
            .index()
            .ok()
            .and_then(|i| i.knowledge_graph())
            .and_then(|kg| serde_json::to_value(kg.report()).ok())
            .unwrap_or(serde_json::Value::Null);
        let out = LlmGraphBuild { report, llm_passages, fallback_passages, llm_triples };
        to_js(&out).map_err(js_err)
    }
}

/// One call of `req` and its answer read by `parse`: the parsed items, and the error (the call's,
/// or "no {what} in the answer …" with the answer's first 120 characters when nothing parsed).
async fn ask<T>(
    client: &FetchClient,
    req: &ChatRequest,
    parse: fn(&str) -> Vec<T>,
    what: &str,
) -> (Vec<T>, Option<String>) {
    match client.chat(req).await {
        Err(e) => (Vec::new(), Some(e.to_string())),
        Ok(r) => {
            let items = parse(&r.content);
            if items.is_empty() {
                let head: String = r.content.chars().take(120).collect();
                (items, Some(format!("no {what} in the answer {head:?}")))
            } else {
                (items, None)
            }
        }
    }
}
