//! The wasm chat-completions client: `fetch` (from the page or its worker) through `web-sys`,
//! with an `AbortController` for the timeout and for cancellation, the same retries and
//! back-off as the native client (429 / 5xx / timeouts, `Retry-After` in seconds), and the same
//! per-query deadline and circuit breaker ([`super::policy`]). A CORS refusal (or nothing
//! listening) is not retried: it would fail the same way.
//!
//! A page can read a cross-origin `Retry-After` only when the endpoint lists it in
//! `Access-Control-Expose-Headers`; otherwise the plain exponential back-off applies.
//!
//! A browser refuses a cross-origin answer that lacks CORS headers, and `fetch` then fails with
//! a bare `TypeError`; [`FetchClient::chat`] turns that into an error that says what to do.

use std::cell::RefCell;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestInit, Response};

use super::policy::Policy;
use super::{
    message_of, parse_completion, refuses_format, request_body, ChatRequest, ChatResponse, LlmConfig,
};
use crate::error::{Error, Result};

/// What the user can do when `fetch` fails without a status (CORS refusal or no server).
pub const CORS_HELP: &str = "the browser could not read the endpoint's answer: either nothing listens at that URL, \
or the endpoint does not allow this page's origin (CORS). Allow it on the endpoint: Ollama: OLLAMA_ORIGINS=<this page's origin> ollama serve; \
llama.cpp server: it sends CORS headers by default (check --api-prefix / a proxy in front); LM Studio: enable CORS in the server settings; \
otherwise put a reverse proxy in front that adds Access-Control-Allow-Origin";

/// An OpenAI-compatible client over `fetch` (wasm32 only). Single-threaded, like the worker.
pub struct FetchClient {
    config: LlmConfig,
    cancelled: RefCell<bool>,
    in_flight: RefCell<Option<AbortController>>,
    requests: RefCell<u64>,
    on_request: RefCell<Option<RequestHook>>,
    policy: Policy,
}

/// The hook called before each request: `(requests sent so far, URL)`.
type RequestHook = Box<dyn Fn(u64, &str)>;

enum Attempt {
    Done(ChatResponse),
    Retry(String, Option<u64>),
    /// An HTTP 4xx other than 429: not worth the same request again.
    Refused(u16, String),
    Fatal(String),
}

fn js_err(v: &JsValue) -> String {
    v.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|| format!("{v:?}"))
}

/// `setTimeout(f, ms)` on the global object (window or worker); returns the timer id.
fn set_timeout(f: &Function, ms: u64) -> Option<JsValue> {
    let g = js_sys::global();
    let st: Function = Reflect::get(&g, &"setTimeout".into()).ok()?.dyn_into().ok()?;
    st.call2(&g, f, &JsValue::from_f64(ms as f64)).ok()
}

fn clear_timeout(id: &JsValue) {
    let g = js_sys::global();
    if let Some(ct) =
        Reflect::get(&g, &"clearTimeout".into()).ok().and_then(|f| f.dyn_into::<Function>().ok())
    {
        let _ = ct.call1(&g, id);
    }
}

/// Resolve after `ms` milliseconds.
async fn sleep(ms: u64) {
    let p = Promise::new(&mut |resolve, _| {
        let _ = set_timeout(&resolve, ms);
    });
    let _ = JsFuture::from(p).await;
}

impl FetchClient {
    /// A client for `config`.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid configuration ([`LlmConfig::validate`]).
    pub fn new(config: LlmConfig) -> Result<Self> {
        config.validate()?;
        Ok(FetchClient {
            cancelled: RefCell::new(false),
            in_flight: RefCell::new(None),
            requests: RefCell::new(0),
            on_request: RefCell::new(None),
            policy: Policy::new(&config),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// HTTP requests sent so far (retries included).
    pub fn requests_sent(&self) -> u64 {
        *self.requests.borrow()
    }

    /// Call `f(n, url)` just before each HTTP request is sent (retries included), `n` being
    /// [`FetchClient::requests_sent`] after counting it: the one place where every request of
    /// this client is counted and reported (the page shows it). Replaces an earlier hook.
    pub fn set_on_request(&self, f: impl Fn(u64, &str) + 'static) {
        *self.on_request.borrow_mut() = Some(Box::new(f));
    }

    /// Accept requests again after [`FetchClient::cancel`] (for the next operation).
    pub fn resume(&self) {
        *self.cancelled.borrow_mut() = false;
    }

    /// Whether [`FetchClient::cancel`] was called since the last [`FetchClient::resume`].
    pub fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    /// Start (or continue) the calls of `query` (its deadline, [`LlmConfig::query_deadline_ms`]);
    /// `None` for calls outside a query (a connection test).
    pub fn begin_query(&self, query: Option<&str>) {
        self.policy.begin(query, js_sys::Date::now());
    }

    /// Start the answer to `question`: its call has its own deadline
    /// ([`LlmConfig::answer_deadline_ms`], [`super::policy::Policy::begin_answer`]).
    pub fn begin_answer(&self, question: &str) {
        self.policy.begin_answer(question, js_sys::Date::now());
    }

    /// Whether the circuit breaker is open now (calls fail at once).
    pub fn breaker_open(&self) -> bool {
        self.policy.is_open(js_sys::Date::now())
    }

    /// Cancel: the request in flight is aborted and no other is sent.
    pub fn cancel(&self) {
        *self.cancelled.borrow_mut() = true;
        if let Some(c) = self.in_flight.borrow().as_ref() {
            c.abort();
        }
    }

    async fn attempt(&self, body: &str, timeout_ms: u64) -> Attempt {
        let controller = match AbortController::new() {
            Ok(c) => c,
            Err(e) => return Attempt::Fatal(js_err(&e)),
        };
        let headers = match Headers::new() {
            Ok(h) => h,
            Err(e) => return Attempt::Fatal(js_err(&e)),
        };
        let _ = headers.set("Content-Type", "application/json");
        if let Some(k) = &self.config.api_key {
            let _ = headers.set("Authorization", &format!("Bearer {k}"));
        }
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_body(&JsValue::from_str(body));
        init.set_headers(&headers);
        init.set_signal(Some(&controller.signal()));
        let url = self.config.completions_url();
        let request = match Request::new_with_str_and_init(&url, &init) {
            Ok(r) => r,
            Err(e) => return Attempt::Fatal(format!("bad request to {url}: {}", js_err(&e))),
        };
        let abort = {
            let c = controller.clone();
            wasm_bindgen::closure::Closure::once_into_js(move || c.abort())
        };
        let timer = abort.dyn_ref::<Function>().and_then(|f| set_timeout(f, timeout_ms));
        *self.in_flight.borrow_mut() = Some(controller.clone());
        *self.requests.borrow_mut() += 1;
        let n = *self.requests.borrow();
        if let Some(f) = self.on_request.borrow().as_ref() {
            f(n, &url);
        }
        let g = js_sys::global();
        let fetch: Option<Function> = Reflect::get(&g, &"fetch".into()).ok().and_then(|f| f.dyn_into().ok());
        let result = match fetch.map(|f| f.call1(&g, &request)) {
            Some(Ok(p)) => {
                self.read(JsFuture::from(Promise::from(p)).await, &controller, &url, timeout_ms).await
            }
            _ => Attempt::Fatal("fetch is not available here".into()),
        };
        if let Some(t) = timer {
            clear_timeout(&t);
        }
        *self.in_flight.borrow_mut() = None;
        result
    }

    async fn read(
        &self,
        sent: std::result::Result<JsValue, JsValue>,
        controller: &AbortController,
        url: &str,
        timeout_ms: u64,
    ) -> Attempt {
        let aborted = || controller.signal().aborted();
        let resp: Response = match sent.and_then(|r| r.dyn_into::<Response>()) {
            Ok(r) => r,
            Err(e) => {
                if *self.cancelled.borrow() {
                    return Attempt::Fatal("cancelled".into());
                }
                if aborted() {
                    return Attempt::Retry(format!("no answer from {url} within {timeout_ms} ms"), None);
                }
                // A CORS refusal or nothing listening: another try fails the same way.
                return Attempt::Fatal(format!("{url}: {} ({CORS_HELP})", js_err(&e)));
            }
        };
        let status = resp.status();
        let retry_after =
            resp.headers().get("Retry-After").ok().flatten().and_then(|v| v.trim().parse::<u64>().ok());
        let text = match resp.text() {
            Ok(p) => JsFuture::from(p).await,
            Err(e) => Err(e),
        };
        let text = match text {
            Ok(t) => t.as_string().unwrap_or_default(),
            Err(e) => {
                if *self.cancelled.borrow() {
                    return Attempt::Fatal("cancelled".into());
                }
                if aborted() {
                    return Attempt::Retry(
                        format!("the answer from {url} took longer than {timeout_ms} ms"),
                        None,
                    );
                }
                return Attempt::Retry(format!("reading the answer failed: {}", js_err(&e)), None);
            }
        };
        if !(200..300).contains(&status) {
            let head: String = text.chars().take(120).collect();
            let msg = format!("HTTP {status} from {url}: {head}");
            return if status == 429 || status >= 500 {
                Attempt::Retry(msg, retry_after)
            } else {
                Attempt::Refused(status, msg)
            };
        }
        match parse_completion(&text) {
            Ok(r) => Attempt::Done(r),
            Err(e) => Attempt::Fatal(message_of(e)),
        }
    }

    /// Send `request` and wait for the answer, retrying per the configuration.
    ///
    /// # Errors
    /// [`Error::Llm`] after the last failed attempt (HTTP status, timeout, a CORS refusal or an
    /// unreachable server — the message says how to allow the page's origin —, a body that is
    /// not a chat completion), or when cancelled.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let mut body = request_body(&self.config, request).to_string();
        let mut constrained = request.response_format.is_some();
        let now = js_sys::Date::now;
        let permit = self.policy.permit(self.config.timeout_ms, now())?;
        let end = now() + permit.budget_ms as f64;
        let mut last = String::new();
        let mut tries = 0;
        for attempt in 0..=self.config.retries {
            if *self.cancelled.borrow() {
                return Err(Error::Llm("cancelled".into()));
            }
            let left = (end - now()).floor();
            if left < 1.0 {
                break;
            }
            tries += 1;
            match self.attempt(&body, (left as u64).min(self.config.timeout_ms)).await {
                Attempt::Done(mut r) => {
                    self.policy.record(true, now());
                    r.attempts = attempt + 1;
                    return Ok(r);
                }
                Attempt::Refused(code, m) if constrained && refuses_format(code) => {
                    // A server that does not take `response_format`: the same request without it.
                    constrained = false;
                    body = request_body(&self.config, &request.without_format()).to_string();
                    last = m;
                }
                Attempt::Refused(_, m) => {
                    self.policy.record(false, now());
                    return Err(Error::Llm(m));
                }
                Attempt::Fatal(m) => {
                    // A cancellation says nothing about the endpoint.
                    if m != "cancelled" {
                        self.policy.record(false, now());
                    }
                    return Err(Error::Llm(m));
                }
                Attempt::Retry(m, retry_after) => {
                    last = m;
                    if attempt < self.config.retries {
                        let wait = self.config.backoff(attempt, retry_after);
                        if now() + wait as f64 + 1.0 >= end {
                            break;
                        }
                        sleep(wait).await;
                    }
                }
            }
        }
        self.policy.record(false, now());
        let plural = if tries == 1 { "" } else { "s" };
        Err(Error::Llm(format!("{last} (after {tries} attempt{plural})")))
    }
}
