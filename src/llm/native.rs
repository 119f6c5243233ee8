//! The native (CLI, tests) chat-completions client: blocking HTTP through `ureq`, with timeouts,
//! retries with exponential back-off on 429 / 5xx / timeouts / connection failures (honouring
//! `Retry-After` in seconds; other 4xx are not retried), the per-query deadline and circuit
//! breaker of [`super::policy`], and cancellation.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::policy::Policy;
use super::{
    message_of, parse_completion, refuses_format, request_body, ChatRequest, ChatResponse, LlmClient,
    LlmConfig,
};
use crate::error::{Error, Result};

/// A blocking OpenAI-compatible client (native targets only; the page uses `fetch`).
///
/// Thread-safe: clones share the connection pool, the cancel flag and the counters.
#[derive(Clone)]
pub struct HttpClient {
    config: LlmConfig,
    agent: ureq::Agent,
    cancelled: Arc<AtomicBool>,
    requests: Arc<AtomicU64>,
    policy: Arc<Policy>,
    /// The origin of the policy's clock.
    epoch: Instant,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient").field("config", &self.config).finish()
    }
}

/// What one attempt came to.
enum Attempt {
    Done(ChatResponse),
    /// Worth another try, with the server's Retry-After (seconds) if it gave one.
    Retry(String, Option<u64>),
    /// An HTTP 4xx other than 429: not worth the same request again.
    Refused(u16, String),
    Fatal(String),
}

impl HttpClient {
    /// A client for `config`.
    ///
    /// # Errors
    /// [`Error::Config`] when the configuration is invalid ([`LlmConfig::validate`]).
    pub fn new(config: LlmConfig) -> Result<Self> {
        config.validate()?;
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_millis(config.timeout_ms))
            .max_idle_connections_per_host(config.concurrency.max(1))
            .build();
        Ok(HttpClient {
            policy: Arc::new(Policy::new(&config)),
            config,
            agent,
            cancelled: Arc::new(AtomicBool::new(false)),
            requests: Arc::new(AtomicU64::new(0)),
            epoch: Instant::now(),
        })
    }

    /// Cancel: requests not yet sent and back-offs under way fail at once with [`Error::Llm`]
    /// ("cancelled"); a request in flight ends at its timeout. Shared by every clone.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// HTTP requests sent so far (retries included), by this client and its clones.
    pub fn requests_sent(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// (calls refused at once because of the deadline or the open breaker, times the breaker
    /// opened), by this client and its clones.
    pub fn policy_counters(&self) -> (u64, u64) {
        self.policy.counters()
    }

    fn now(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64() * 1e3
    }

    fn attempt(&self, body: &str, timeout_ms: u64) -> Attempt {
        let mut req = self
            .agent
            .post(&self.config.completions_url())
            .timeout(Duration::from_millis(timeout_ms))
            .set("Content-Type", "application/json");
        if let Some(k) = &self.config.api_key {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        self.requests.fetch_add(1, Ordering::SeqCst);
        match req.send_string(body) {
            Ok(resp) => match resp.into_string() {
                Ok(text) => match parse_completion(&text) {
                    Ok(r) => Attempt::Done(r),
                    Err(e) => Attempt::Fatal(message_of(e)),
                },
                Err(e) => Attempt::Retry(format!("reading the answer failed: {e}"), None),
            },
            Err(ureq::Error::Status(code, resp)) => {
                let retry_after = resp.header("Retry-After").and_then(|v| v.trim().parse::<u64>().ok());
                let head: String = resp.into_string().unwrap_or_default().chars().take(120).collect();
                let msg = format!("HTTP {code} from {}: {head}", self.config.completions_url());
                if code == 429 || code >= 500 {
                    Attempt::Retry(msg, retry_after)
                } else {
                    Attempt::Refused(code, msg)
                }
            }
            Err(ureq::Error::Transport(t)) => {
                Attempt::Retry(format!("cannot reach {}: {t}", self.config.completions_url()), None)
            }
        }
    }

    /// Sleep `ms`, waking early (with an error) when cancelled.
    fn sleep(&self, ms: u64) -> Result<()> {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            if self.cancelled.load(Ordering::SeqCst) {
                return Err(Error::Llm("cancelled".into()));
            }
            std::thread::sleep(Duration::from_millis(20).min(end.saturating_duration_since(Instant::now())));
        }
        Ok(())
    }
}

impl LlmClient for HttpClient {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn begin_query(&self, query: Option<&str>) {
        self.policy.begin(query, self.now());
    }

    fn begin_answer(&self, question: &str) {
        self.policy.begin_answer(question, self.now());
    }

    fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let mut body = request_body(&self.config, request).to_string();
        let mut constrained = request.response_format.is_some();
        let permit = self.policy.permit(self.config.timeout_ms, self.now())?;
        let end = self.now() + permit.budget_ms as f64;
        let mut last = String::new();
        let mut tries = 0;
        for attempt in 0..=self.config.retries {
            if self.cancelled.load(Ordering::SeqCst) {
                return Err(Error::Llm("cancelled".into()));
            }
            let left = (end - self.now()).floor();
            if left < 1.0 {
                break;
            }
            tries += 1;
            match self.attempt(&body, (left as u64).min(self.config.timeout_ms)) {
                Attempt::Done(mut r) => {
                    self.policy.record(true, self.now());
                    r.attempts = attempt + 1;
                    return Ok(r);
                }
                Attempt::Refused(code, m) if constrained && refuses_format(code) => {
                    // A server that does not take `response_format`: the same request without it.
                    constrained = false;
                    body = request_body(&self.config, &request.without_format()).to_string();
                    last = m;
                }
                Attempt::Refused(_, m) | Attempt::Fatal(m) => {
                    self.policy.record(false, self.now());
                    return Err(Error::Llm(m));
                }
                Attempt::Retry(m, retry_after) => {
                    last = m;
                    if attempt < self.config.retries {
                        let wait = self.config.backoff(attempt, retry_after);
                        // No retry that could not start before the deadline.
                        if self.now() + wait as f64 + 1.0 >= end {
                            break;
                        }
                        self.sleep(wait)?;
                    }
                }
            }
        }
        self.policy.record(false, self.now());
        let plural = if tries == 1 { "" } else { "s" };
        let within = if permit.budget_ms < self.config.timeout_ms {
            format!(", within the query's {} ms left", permit.budget_ms)
        } else {
            String::new()
        };
        Err(Error::Llm(format!("{last} (after {tries} attempt{plural}{within})")))
    }
}
