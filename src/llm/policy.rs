//! The endpoint policy a user can predict, shared by the native and the page's clients: a
//! per-query deadline and a circuit breaker.
//!
//! - **Deadline** ([`LlmConfig::query_deadline_ms`], default 5 s): every call the endpoint gets
//!   for one query (tier prompts, summaries, query NER) must end within it. A request's timeout
//!   is the smaller of [`LlmConfig::timeout_ms`] and the time left, retries and back-offs only
//!   happen while time is left, and once it is spent the query's remaining calls fail at once
//!   (the engine makes their edges Weak: CatRAG's offline ranking). So a hung endpoint costs a
//!   query at most the deadline, not `timeout × attempts × calls`. A generated answer has a
//!   deadline of its own ([`LlmConfig::answer_deadline_ms`], default 10 s; [`Policy::begin_answer`]),
//!   with the same rules.
//! - **Circuit breaker** (Nygard, *Release It!*, ch. 5 "Circuit Breaker"):
//!   [`LlmConfig::breaker_failures`] (default 3) calls failing in a row open it; while open
//!   (for [`LlmConfig::breaker_cooldown_ms`], default 30 s) every call fails at once with a
//!   message saying so, for the rest of the query and for the next queries; after the cool-down
//!   one call is let through (half-open): its success closes the breaker, its failure opens it
//!   again for another cool-down.
//!
//! Time is passed in as milliseconds from any fixed origin (`Instant` natively, `Date.now()` in
//! the page), so the policy itself is pure and testable.

use std::sync::Mutex;

use super::LlmConfig;
use crate::error::{Error, Result};

#[derive(Debug, Default)]
struct State {
    /// The query (or answer) under way, its deadline (ms) and that deadline's length (ms);
    /// `None` outside one (indexing).
    query: Option<String>,
    deadline: Option<f64>,
    deadline_len_ms: u64,
    /// Calls failed in a row.
    failures: u32,
    /// The breaker is open until this time (ms).
    open_until: Option<f64>,
    /// Calls refused at once (deadline spent or breaker open), for the counters.
    refused: u64,
    /// Times the breaker opened.
    opened: u64,
}

/// The deadline and breaker state of one endpoint (see the module docs). Thread-safe; share one
/// per endpoint (clones of a client share it).
#[derive(Debug)]
pub struct Policy {
    deadline_ms: u64,
    answer_deadline_ms: u64,
    breaker_failures: u32,
    cooldown_ms: u64,
    state: Mutex<State>,
}

/// What the policy allows for the next call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Permit {
    /// Milliseconds this call may take at most (request timeout, back-offs included): the
    /// configured timeout, or less when the query's deadline is nearer.
    pub budget_ms: u64,
}

impl Policy {
    /// The policy of `config` (deadline, breaker threshold and cool-down).
    pub fn new(config: &LlmConfig) -> Self {
        Policy {
            deadline_ms: config.query_deadline_ms,
            answer_deadline_ms: config.answer_deadline_ms,
            breaker_failures: config.breaker_failures,
            cooldown_ms: config.breaker_cooldown_ms,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start (or continue) the calls of `query` at time `now`: a new query text starts a new
    /// deadline; the same text keeps the running one. `None`: calls outside any query
    /// (indexing-time OpenIE) have no deadline, only their request timeout (the breaker still
    /// applies). Generated answers start theirs with [`Policy::begin_answer`].
    pub fn begin(&self, query: Option<&str>, now: f64) {
        let mut s = self.lock();
        match query {
            None => {
                s.query = None;
                s.deadline = None;
            }
            Some(q) if s.query.as_deref() != Some(q) => {
                s.query = Some(q.to_string());
                s.deadline = Some(now + self.deadline_ms as f64);
                s.deadline_len_ms = self.deadline_ms;
            }
            Some(_) => {}
        }
    }

    /// Start the answer to `question` at `now`: its call (request, retries, back-offs) must end
    /// within [`LlmConfig::answer_deadline_ms`], after which it is refused at once. Each call
    /// starts a new deadline (one answer, one call); the next query's calls start their own.
    pub fn begin_answer(&self, question: &str, now: f64) {
        let mut s = self.lock();
        s.query = Some(format!("\u{1}answer {question}"));
        s.deadline = Some(now + self.answer_deadline_ms as f64);
        s.deadline_len_ms = self.answer_deadline_ms;
    }

    /// May a call start at `now`, and with how much time?
    ///
    /// # Errors
    /// [`Error::Llm`] at once when the breaker is open or the query's deadline is spent.
    pub fn permit(&self, timeout_ms: u64, now: f64) -> Result<Permit> {
        let mut s = self.lock();
        if let Some(until) = s.open_until {
            if now < until {
                s.refused += 1;
                return Err(Error::Llm(format!(
                    "not called: {} calls in a row failed, so calls are paused for {:.0} s more (circuit breaker)",
                    self.breaker_failures,
                    ((until - now) / 1000.0).ceil()
                )));
            }
        }
        let mut budget = timeout_ms;
        if let Some(d) = s.deadline {
            let left = d - now;
            if left < 1.0 {
                s.refused += 1;
                let what = if s.query.as_deref().is_some_and(|q| q.starts_with('\u{1}')) {
                    "answer"
                } else {
                    "query"
                };
                return Err(Error::Llm(format!(
                    "not called: the {what}'s deadline of {} ms is spent",
                    s.deadline_len_ms
                )));
            }
            budget = budget.min(left as u64);
        }
        Ok(Permit { budget_ms: budget.max(1) })
    }

    /// Milliseconds left before the query's deadline at `now` (`None` outside a query).
    pub fn time_left(&self, now: f64) -> Option<f64> {
        self.lock().deadline.map(|d| (d - now).max(0.0))
    }

    /// Record a call's outcome at `now`: a success closes the breaker, the
    /// [`LlmConfig::breaker_failures`]-th failure in a row opens it.
    pub fn record(&self, ok: bool, now: f64) {
        let mut s = self.lock();
        if ok {
            s.failures = 0;
            s.open_until = None;
            return;
        }
        s.failures = s.failures.saturating_add(1);
        if s.failures >= self.breaker_failures {
            if s.open_until.map_or(true, |u| now >= u) {
                s.opened += 1;
            }
            s.open_until = Some(now + self.cooldown_ms as f64);
        }
    }

    /// Whether the breaker is open at `now`.
    pub fn is_open(&self, now: f64) -> bool {
        self.lock().open_until.is_some_and(|u| now < u)
    }

    /// (calls refused at once, times the breaker opened) so far.
    pub fn counters(&self) -> (u64, u64) {
        let s = self.lock();
        (s.refused, s.opened)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        let mut c = LlmConfig::new("http://x", "m");
        c.query_deadline_ms = 2_000;
        c.answer_deadline_ms = 3_000;
        c.breaker_failures = 3;
        c.breaker_cooldown_ms = 10_000;
        Policy::new(&c)
    }

    #[test]
    fn the_deadline_bounds_every_call_of_a_query() {
        let p = policy();
        p.begin(Some("q1"), 0.0);
        assert_eq!(p.permit(60_000, 0.0).unwrap().budget_ms, 2_000);
        assert_eq!(p.permit(60_000, 1_500.0).unwrap().budget_ms, 500);
        assert_eq!(p.permit(300, 1_500.0).unwrap().budget_ms, 300, "the request timeout when nearer");
        // The same query keeps its deadline; past it, calls are refused at once.
        p.begin(Some("q1"), 1_900.0);
        let e = p.permit(60_000, 2_000.0).unwrap_err().to_string();
        assert_eq!(e, "LLM endpoint: not called: the query's deadline of 2000 ms is spent");
        // A new query starts a new deadline; outside a query only the timeout counts.
        p.begin(Some("q2"), 2_000.0);
        assert_eq!(p.permit(60_000, 2_500.0).unwrap().budget_ms, 1_500);
        p.begin(None, 2_600.0);
        assert_eq!(p.permit(60_000, 99_999.0).unwrap().budget_ms, 60_000);
        assert_eq!(p.counters(), (1, 0));
    }

    #[test]
    fn an_answer_has_its_own_deadline() {
        let p = policy();
        p.begin(Some("q1"), 0.0);
        p.begin_answer("q1", 1_000.0);
        assert_eq!(p.permit(60_000, 1_000.0).unwrap().budget_ms, 3_000, "not the query's 1 000 ms left");
        assert_eq!(p.permit(60_000, 3_500.0).unwrap().budget_ms, 500);
        let e = p.permit(60_000, 4_000.0).unwrap_err().to_string();
        assert_eq!(e, "LLM endpoint: not called: the answer's deadline of 3000 ms is spent");
        // The same question's next answer starts again; a query afterwards has its own deadline.
        p.begin_answer("q1", 4_000.0);
        assert_eq!(p.permit(60_000, 4_000.0).unwrap().budget_ms, 3_000);
        p.begin(Some("q1"), 5_000.0);
        assert_eq!(p.permit(60_000, 5_000.0).unwrap().budget_ms, 2_000);
    }

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_and_half_opens_after_the_cool_down() {
        let p = policy();
        p.record(false, 0.0);
        p.record(false, 1.0);
        p.record(true, 2.0); // a success resets the count
        p.record(false, 3.0);
        p.record(false, 4.0);
        assert!(p.permit(1_000, 5.0).is_ok());
        p.record(false, 5.0);
        assert!(p.is_open(6.0));
        let e = p.permit(1_000, 6.0).unwrap_err().to_string();
        assert!(e.contains("3 calls in a row failed") && e.contains("10 s more"), "{e}");
        // After the cool-down one call goes through; its failure opens the breaker again at once.
        assert!(p.permit(1_000, 10_005.0).is_ok());
        p.record(false, 10_005.0);
        assert!(p.permit(1_000, 10_006.0).is_err());
        assert!(p.permit(1_000, 20_005.0).is_ok());
        p.record(true, 20_005.0);
        assert!(!p.is_open(20_006.0));
        assert_eq!(p.counters(), (2, 2));
    }
}
