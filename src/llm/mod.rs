//! The user's LLM endpoint (docs/method/spec.md §3 "Dynamic edge weighting (LLM)", optional LLM NER and
//! OpenIE; §5 answers for EM / F1 / JSR): an OpenAI-compatible chat-completions client behind the
//! [`LlmClient`] trait, the prompts, and tolerant parsers of what small models really answer.
//! It knows nothing of graphs: CatRAG's tiering state machine lives in
//! [`crate::catrag::tiering`] and asks this module's clients for calls.
//!
//! Async I/O stays at the edge (docs/architecture.md): the engine is synchronous. Natively
//! [`HttpClient`] (blocking `ureq`) is driven by the blocking tiering driver; in wasm,
//! [`FetchClient`] (`fetch` with an `AbortController`) by the asynchronous one. Without an endpoint nothing here runs and nothing is sent anywhere.
//!
//! Wire format (OpenAI chat completions): `POST {base_url}/v1/chat/completions` with
//! `{"model", "messages": [{"role", "content"}], "temperature", "max_tokens"}` and an optional
//! `Authorization: Bearer {key}`; the answer is `choices[0].message.content`.

pub mod openie;
pub mod parse;
pub mod policy;
pub mod prompts;

#[cfg(target_arch = "wasm32")]
mod fetch;
#[cfg(not(target_arch = "wasm32"))]
mod native;

#[cfg(target_arch = "wasm32")]
pub use fetch::{FetchClient, CORS_HELP};
#[cfg(not(target_arch = "wasm32"))]
pub use native::HttpClient;
pub use openie::{LlmExtractStats, LlmNer, LlmOpenIe};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How to reach the endpoint and how hard to try. Defaults: temperature 0, max_tokens 256,
/// timeout 60 s, 3 retries with exponential back-off from 500 ms (capped at 8 s; a server's
/// `Retry-After` in seconds is honoured up to that cap) on 429, 5xx, timeouts and connection
/// failures (never on other 4xx refusals or, in the page, CORS refusals), concurrency 2,
/// per-query deadline 5 s (the per-query call budget is CatRAG's: `CatragConfig::llm_call_budget`),
/// per-answer deadline 10 s, circuit breaker after 3 failed calls in a row for 30 s ([`policy`]).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Base URL, for example `http://127.0.0.1:8091` (the client appends `/v1/chat/completions`;
    /// a base that already ends in `/v1` is accepted too).
    pub base_url: String,
    /// Model name sent as `model`.
    pub model: String,
    /// Bearer key, if the endpoint needs one. Never logged or serialised.
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    /// Sampling temperature. Default 0 (CatRAG: deterministic tiers).
    pub temperature: f32,
    /// Default completion length cap in tokens (a request may ask for fewer). Default 256.
    pub max_tokens: u32,
    /// Whole-request timeout in milliseconds (connect + send + the complete body). Default 60 000.
    pub timeout_ms: u64,
    /// Retries after the first attempt on HTTP 429, HTTP 5xx, timeouts and connection failures.
    /// Default 3.
    pub retries: u32,
    /// First back-off in milliseconds; doubled at each retry. Default 500.
    pub backoff_ms: u64,
    /// Upper bound of one back-off (and of an honoured `Retry-After`), milliseconds. Default 8000.
    pub max_backoff_ms: u64,
    /// Requests in flight at once (native tiering summarises targets in parallel up to this).
    /// Default 2.
    pub concurrency: usize,
    /// Wall-clock milliseconds all the endpoint's calls for one query (tier prompts, summaries,
    /// query NER) may take together; past it the query's remaining calls fail at once and its
    /// edges fall back to Weak ([`policy::Policy`]). Does not apply to indexing-time OpenIE or
    /// to generated answers (they have [`LlmConfig::answer_deadline_ms`]). Default 5000.
    pub query_deadline_ms: u64,
    /// Wall-clock milliseconds a generated answer's calls (its request, retries and back-offs)
    /// may take together ([`LlmClient::begin_answer`]); past it the answer fails at once and is
    /// counted as failed, as the query deadline does for the tiers. Default 10 000 (one longer
    /// generation than a tier prompt's).
    pub answer_deadline_ms: u64,
    /// Calls failing in a row (after their retries) that open the circuit breaker. Default 3.
    pub breaker_failures: u32,
    /// How long an open breaker refuses calls at once, milliseconds; then one call is tried.
    /// Default 30 000.
    pub breaker_cooldown_ms: u64,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("timeout_ms", &self.timeout_ms)
            .field("retries", &self.retries)
            .field("concurrency", &self.concurrency)
            .field("query_deadline_ms", &self.query_deadline_ms)
            .field("answer_deadline_ms", &self.answer_deadline_ms)
            .field("breaker_failures", &self.breaker_failures)
            .field("breaker_cooldown_ms", &self.breaker_cooldown_ms)
            .finish()
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: String::new(),
            api_key: None,
            temperature: 0.0,
            max_tokens: 256,
            timeout_ms: 60_000,
            retries: 3,
            backoff_ms: 500,
            max_backoff_ms: 8_000,
            concurrency: 2,
            query_deadline_ms: 5_000,
            answer_deadline_ms: 10_000,
            breaker_failures: 3,
            breaker_cooldown_ms: 30_000,
        }
    }
}

impl LlmConfig {
    /// A configuration for `base_url` and `model` with the defaults.
    pub fn new(base_url: &str, model: &str) -> Self {
        LlmConfig { base_url: base_url.to_string(), model: model.to_string(), ..Default::default() }
    }

    /// Check the values.
    ///
    /// # Errors
    /// [`Error::Config`] for a base URL that is not `http://` or `https://`, an empty model, a
    /// temperature outside [0, 2], `max_tokens`, `timeout_ms`, `concurrency`,
    /// `query_deadline_ms`, `answer_deadline_ms` or `breaker_failures` of 0.
    pub fn validate(&self) -> Result<()> {
        let u = self.base_url.trim();
        if !(u.starts_with("http://") || u.starts_with("https://")) || u.len() <= "https://".len() {
            return Err(Error::Config(format!(
                "llm.base_url must start with http:// or https://, got {:?}",
                self.base_url
            )));
        }
        if self.model.trim().is_empty() {
            return Err(Error::Config("llm.model must not be empty".into()));
        }
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return Err(Error::Config(format!(
                "llm.temperature must be in [0, 2], got {}",
                self.temperature
            )));
        }
        for (name, v) in [
            ("max_tokens", self.max_tokens as u64),
            ("timeout_ms", self.timeout_ms),
            ("concurrency", self.concurrency as u64),
            ("query_deadline_ms", self.query_deadline_ms),
            ("answer_deadline_ms", self.answer_deadline_ms),
            ("breaker_failures", self.breaker_failures as u64),
        ] {
            if v == 0 {
                return Err(Error::Config(format!("llm.{name} must be at least 1")));
            }
        }
        Ok(())
    }

    /// The chat-completions URL: `{base_url}/v1/chat/completions` (trailing slashes and a
    /// trailing `/v1` of the base are folded).
    pub fn completions_url(&self) -> String {
        let mut b = self.base_url.trim().trim_end_matches('/').to_string();
        if b.ends_with("/v1") {
            b.truncate(b.len() - 3);
        }
        format!("{b}/v1/chat/completions")
    }

    /// The back-off before retry number `attempt` (0-based): `backoff_ms · 2^attempt`, or the
    /// server's `Retry-After` seconds when given, both capped at `max_backoff_ms`.
    pub fn backoff(&self, attempt: u32, retry_after_s: Option<u64>) -> u64 {
        let exp = self.backoff_ms.saturating_mul(1u64 << attempt.min(20));
        let ms = retry_after_s.map_or(exp, |s| s.saturating_mul(1000));
        ms.min(self.max_backoff_ms)
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A `system` message.
    pub fn system(text: impl Into<String>) -> Self {
        ChatMessage { role: "system".into(), content: text.into() }
    }
    /// A `user` message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage { role: "user".into(), content: text.into() }
    }
}

/// One request: the messages, an optional tighter token cap (else [`LlmConfig::max_tokens`]) and
/// an optional constraint on the answer's form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Cap on generated tokens; `None`: the configuration's.
    pub max_tokens: Option<u32>,
    /// OpenAI's `response_format` object, for example `{"type": "json_schema", "json_schema":
    /// {"name": …, "schema": {…}}}` (llama.cpp's server turns the schema into a grammar that
    /// the answer must follow). Only a hint: a server that ignores it answers unconstrained (the
    /// parsers stay tolerant), and one that refuses it (HTTP 400 or 422) is asked again at once
    /// without it, using one of the request's retries. `None`: no constraint.
    pub response_format: Option<serde_json::Value>,
}

impl ChatRequest {
    /// The same request without its [`ChatRequest::response_format`].
    pub fn without_format(&self) -> ChatRequest {
        ChatRequest { response_format: None, ..self.clone() }
    }
}

/// Whether an HTTP status refusing a request that carried a `response_format` is worth one
/// more try without it (400 Bad Request, 422 Unprocessable Entity: servers that do not know the
/// field or its `json_schema` type answer so).
pub(crate) fn refuses_format(status: u16) -> bool {
    status == 400 || status == 422
}

/// The endpoint's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// `choices[0].message.content` (may be empty: callers treat that as a failed answer).
    pub content: String,
    /// `choices[0].finish_reason` (`length` means the answer was cut at `max_tokens`).
    pub finish_reason: Option<String>,
    /// Attempts it took (1 = no retry).
    pub attempts: u32,
}

/// An OpenAI-compatible chat endpoint. `Send + Sync` so native tiering can call it from
/// several threads at once.
pub trait LlmClient: Send + Sync {
    /// The configuration (model, concurrency, deadline).
    fn config(&self) -> &LlmConfig;

    /// Send `request` and wait for the answer, retrying per the configuration.
    ///
    /// # Errors
    /// [`Error::Llm`] after the last failed attempt (HTTP status, timeout, connection, a body
    /// that is not a chat completion), or at once when cancelled.
    fn chat(&self, request: &ChatRequest) -> Result<ChatResponse>;

    /// Say which query the next calls serve: `Some(query)` starts that query's deadline
    /// ([`LlmConfig::query_deadline_ms`]) unless it is already the current one; `None` for calls
    /// outside a query (indexing, answers). Default: nothing (a client without a policy).
    fn begin_query(&self, query: Option<&str>) {
        let _ = query;
    }

    /// Say that the next call generates the answer to `question`: it starts the answer's own
    /// deadline ([`LlmConfig::answer_deadline_ms`]), which bounds that call's request, retries
    /// and back-offs as the query deadline bounds the tiers' calls. Default: as
    /// `begin_query(None)` (a client without a policy).
    fn begin_answer(&self, question: &str) {
        let _ = question;
        self.begin_query(None);
    }
}

/// The message of an error for wrapping in [`Error::Llm`] again without repeating its prefix.
pub(crate) fn message_of(e: Error) -> String {
    match e {
        Error::Llm(m) => m,
        other => other.to_string(),
    }
}

/// The JSON body of `request` under `config` (shared by every transport).
pub fn request_body(config: &LlmConfig, request: &ChatRequest) -> serde_json::Value {
    let mut body = serde_json::json!({
        "model": config.model,
        "messages": request.messages,
        "temperature": config.temperature,
        "max_tokens": request.max_tokens.unwrap_or(config.max_tokens).min(config.max_tokens),
        "stream": false,
    });
    if let (Some(f), Some(o)) = (&request.response_format, body.as_object_mut()) {
        o.insert("response_format".into(), f.clone());
    }
    body
}

/// Read a chat-completions response body.
///
/// # Errors
/// [`Error::Llm`] when the body is not JSON, or has no `choices[0].message`.
pub fn parse_completion(body: &str) -> Result<ChatResponse> {
    let v: serde_json::Value = serde_json::from_str(body).map_err(|e| {
        let head: String = body.chars().take(80).collect();
        Error::Llm(format!("the endpoint's answer is not JSON ({e}): {head:?}"))
    })?;
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| Error::Llm("the endpoint's answer has no choices[0]".into()))?;
    let content = choice
        .get("message")
        .and_then(|m| m.get("content"))
        .map(|c| c.as_str().unwrap_or_default().to_string())
        .ok_or_else(|| Error::Llm("the endpoint's answer has no choices[0].message.content".into()))?;
    let finish_reason = choice.get("finish_reason").and_then(|f| f.as_str()).map(str::to_string);
    Ok(ChatResponse { content, finish_reason, attempts: 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_validation() {
        let c = LlmConfig::new("http://127.0.0.1:8091/", "m");
        assert_eq!(c.completions_url(), "http://127.0.0.1:8091/v1/chat/completions");
        assert_eq!(
            LlmConfig::new("https://x.y/v1", "m").completions_url(),
            "https://x.y/v1/chat/completions"
        );
        assert!(c.validate().is_ok());
        assert!(LlmConfig::new("ftp://x", "m").validate().is_err());
        assert!(LlmConfig::new("http://x", " ").validate().is_err());
        let mut bad = c.clone();
        bad.concurrency = 0;
        assert!(bad.validate().is_err());
        let mut hot = c.clone();
        hot.temperature = f32::NAN;
        assert!(hot.validate().is_err());
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after_up_to_the_cap() {
        let c = LlmConfig::new("http://x", "m"); // 500 ms, cap 8000
        assert_eq!(c.backoff(0, None), 500);
        assert_eq!(c.backoff(1, None), 1000);
        assert_eq!(c.backoff(3, None), 4000);
        assert_eq!(c.backoff(5, None), 8000);
        assert_eq!(c.backoff(0, Some(2)), 2000);
        assert_eq!(c.backoff(0, Some(120)), 8000);
    }

    #[test]
    fn key_is_neither_debugged_nor_serialised() {
        let mut c = LlmConfig::new("http://x", "m");
        c.api_key = Some("sk-secret".into());
        assert!(!format!("{c:?}").contains("sk-secret"));
        assert!(!serde_json::to_string(&c).unwrap().contains("sk-secret"));
    }

    #[test]
    fn body_and_completion_parsing() {
        let c = LlmConfig::new("http://x", "smol");
        let r = ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            max_tokens: Some(9999),
            ..Default::default()
        };
        let b = request_body(&c, &r);
        assert_eq!(b["model"], "smol");
        assert_eq!(b["temperature"], 0.0);
        assert_eq!(b["max_tokens"], 256, "a request cannot exceed the configured cap");
        assert_eq!(b["messages"][0]["role"], "user");
        assert!(b.get("response_format").is_none(), "no constraint unless the request has one");
        let f = serde_json::json!({"type": "json_object"});
        let constrained = ChatRequest { response_format: Some(f.clone()), ..r.clone() };
        assert_eq!(request_body(&c, &constrained)["response_format"], f);
        assert_eq!(request_body(&c, &constrained.without_format()), b);
        assert!(refuses_format(400) && refuses_format(422) && !refuses_format(401) && !refuses_format(429));
        let ok = parse_completion(
            r#"{"choices":[{"finish_reason":"length","message":{"role":"assistant","content":"x"}}]}"#,
        )
        .unwrap();
        assert_eq!(ok.content, "x");
        assert_eq!(ok.finish_reason.as_deref(), Some("length"));
        assert!(parse_completion("<html>").is_err());
        assert!(parse_completion(r#"{"choices":[]}"#).is_err());
        assert_eq!(parse_completion(r#"{"choices":[{"message":{"content":null}}]}"#).unwrap().content, "");
    }
}
