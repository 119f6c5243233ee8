//! CatRAG's LLM edge tiering (CatRAG §3, "Query-Aware Dynamic Edge Weighting", stage II;
//! docs/method/spec.md §3 "Dynamic edge weighting (LLM)") as one state machine that does no I/O:
//! **plan → requests → answers → tiers**.
//!
//! 1. **Plan** ([`TierPlan`]): the batches of one query, one per tiered seed (the edges that
//!    survived coarse pruning, [`super::PreparedQuery::tier_requests`]), with the texts the
//!    prompts need: the seed's and targets' names, the facts joining seed and target (at most
//!    3) and each target's facts.
//! 2. **Requests** ([`TierSession::next_wave`]): first a one-sentence summary of every target
//!    with more than τ ([`CatragConfig::tau`], 3) facts (once per entity, however many batches
//!    hold it; [`llm::prompts::summary_prompt`]), then one batched tier prompt per seed
//!    ([`llm::prompts::tier_prompt`]), in waves of at most `width` independent calls (the
//!    client's concurrency; one call until the endpoint has answered one). A summary is asked only while it leaves
//!    [`CatragConfig::llm_call_reserve`] (5) calls of [`CatragConfig::llm_call_budget`] (75) for
//!    the tier prompts; a tier prompt only while the budget lasts.
//! 3. **Answers** ([`TierSession::answer`]): summaries fill their targets' contexts (a target
//!    left unsummarised shows its first τ facts and "…"); a tier answer is parsed strictly, one
//!    tier per edge id ([`llm::parse::parse_tiers`]), an edge without a clear tier is Weak and
//!    counted. The first failed call (after the client's retries, or refused by its deadline or
//!    circuit breaker) ends the query's asking: no further wave is planned.
//! 4. **Tiers** ([`TierSession::finish`]): one entry per batch, `None` for a batch without an
//!    answer (failed, over budget, not asked after a failure), which the retriever makes Weak
//!    and counts ([`super::Retrieval::tier_failures`]).
//!
//! Summaries are query-independent and tier answers depend only on their prompt: both are kept
//! in a [`TierMemo`] owned by the caller (one per CLI run or page endpoint) and looked up before
//! any call.
//!
//! Two drivers run the machine: [`run_blocking`] (native: CLI, evaluation; a wave's calls in
//! parallel threads) and [`run_async`] (the page's worker: `fetch` futures, one after another).
//! Both see the same waves, so the same configuration and the same endpoint answers give the
//! same calls and the same tiers.

use std::collections::{HashMap, HashSet};
use std::future::Future;

use serde::Serialize;

use super::{node_name, CatragConfig, Tier, TierRequest};
use crate::error::{Error, Result};
use crate::llm::{self, prompts, ChatRequest};

/// One candidate edge of a [`TierBatch`], as the prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct BatchEdge {
    /// The neighbour (target) entity node.
    pub neighbour: u32,
    /// Its name.
    pub target: String,
    /// Texts of the facts joining seed and target (at most 3: CatRAG's "linking facts").
    pub linking_facts: Vec<String>,
    /// Texts of all the target's facts (its context; summarised when more than τ).
    pub facts: Vec<String>,
}

/// One seed's edges to tier (CatRAG batches edges per seed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TierBatch {
    /// The seed entity node.
    pub seed: u32,
    /// Its name.
    pub seed_name: String,
    /// The edges, in the retriever's candidate order.
    pub edges: Vec<BatchEdge>,
}

impl TierBatch {
    /// The batch of one [`TierRequest`] (texts read from its graph).
    pub fn from_request(req: &TierRequest<'_>) -> Self {
        let text = |f: &u32| req.graph.facts().get(*f as usize).map(|x| x.text.clone());
        TierBatch {
            seed: req.seed,
            seed_name: node_name(req.graph, req.seed),
            edges: req
                .candidates
                .iter()
                .map(|c| BatchEdge {
                    neighbour: c.neighbour,
                    target: node_name(req.graph, c.neighbour),
                    linking_facts: c.joining_facts.iter().take(3).filter_map(text).collect(),
                    facts: req.graph.facts_of_entity(c.neighbour).iter().filter_map(text).collect(),
                })
                .collect(),
        }
    }
}

/// Step 1: every batch of one query.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TierPlan {
    /// The query text.
    pub query: String,
    /// The batches, in tiered-seed order.
    pub batches: Vec<TierBatch>,
}

impl TierPlan {
    /// The plan of `requests` (one query's batches, [`super::PreparedQuery::tier_requests`]).
    /// An empty list gives an empty plan (nothing to ask).
    pub fn new(requests: &[TierRequest<'_>]) -> Self {
        TierPlan {
            query: requests.first().map(|r| r.query.to_string()).unwrap_or_default(),
            batches: requests.iter().map(TierBatch::from_request).collect(),
        }
    }

    /// Candidate edges in all batches.
    pub fn edges(&self) -> usize {
        self.batches.iter().map(|b| b.edges.len()).sum()
    }
}

/// Entries a [`TierMemo`] keeps of each kind before it starts again empty.
pub const MEMO_CAPACITY: usize = 50_000;

/// Answers worth keeping between queries: summaries by (entity name, its facts) and parsed tiers
/// by (query, seed name, edges). At temperature 0 the endpoint answers the same prompt the same
/// way, so a hit replaces a call. Bounded ([`MEMO_CAPACITY`] entries of each kind).
#[derive(Debug, Clone, Default)]
pub struct TierMemo {
    summaries: HashMap<(String, Vec<String>), String>,
    tiers: HashMap<(String, TierBatch), Vec<Tier>>,
}

impl TierMemo {
    /// Summaries and tier answers kept.
    pub fn len(&self) -> usize {
        self.summaries.len() + self.tiers.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep what `outcome` learned.
    pub fn absorb(&mut self, outcome: &mut TierOutcome) {
        for (k, v) in outcome.new_summaries.drain(..) {
            if self.summaries.len() >= MEMO_CAPACITY {
                self.summaries.clear();
            }
            self.summaries.insert(k, v);
        }
        for (k, v) in outcome.new_tiers.drain(..) {
            if self.tiers.len() >= MEMO_CAPACITY {
                self.tiers.clear();
            }
            self.tiers.insert(k, v);
        }
    }
}

/// Counters of LLM tiering over one query ([`TierSession::finish`]) or, added up
/// ([`TierStats::add`]), over many.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TierStats {
    /// Queries that had at least one batch to tier.
    pub queries: usize,
    /// LLM calls made (tier prompts + summaries), failed ones included.
    pub calls: usize,
    /// Tier prompts sent.
    pub tier_calls: usize,
    /// Summary prompts sent.
    pub summary_calls: usize,
    /// Calls that failed (after the client's retries; refused by its deadline or breaker) or
    /// gave an empty summary.
    pub failed_calls: usize,
    /// Edges whose answer had no clear tier (made Weak).
    pub unparsed_edges: usize,
    /// Edges tiered by the endpoint (parsed).
    pub tiered_edges: usize,
    /// Edges answered from the memo, and summaries taken from it.
    pub cached_edges: usize,
    /// Summaries skipped, or tier prompts not sent, because of the per-query call budget.
    pub budget_skips: usize,
    /// Batches not asked because an earlier call of the query failed.
    pub stopped_batches: usize,
    /// Most calls any one query made.
    pub max_calls_per_query: usize,
    /// Wall-clock milliseconds the drivers spent (calls, parsing), all queries: the latency the
    /// endpoint adds (a wave's parallel calls count once). Filled by the caller.
    pub llm_ms: f64,
    /// Tiers returned, by tier: irrelevant, weak, high, direct (unparsed edges count as weak).
    pub tiers: [usize; 4],
    /// The first 50 failures and unparseable answers, for the log.
    pub log: Vec<String>,
}

impl TierStats {
    fn note(&mut self, s: String) {
        if self.log.len() < 50 {
            self.log.push(s);
        }
    }

    /// Add `other` (a later query's counters) to these.
    pub fn add(&mut self, other: &TierStats) {
        self.queries += other.queries;
        self.calls += other.calls;
        self.tier_calls += other.tier_calls;
        self.summary_calls += other.summary_calls;
        self.failed_calls += other.failed_calls;
        self.unparsed_edges += other.unparsed_edges;
        self.tiered_edges += other.tiered_edges;
        self.cached_edges += other.cached_edges;
        self.budget_skips += other.budget_skips;
        self.stopped_batches += other.stopped_batches;
        self.max_calls_per_query = self.max_calls_per_query.max(other.max_calls_per_query);
        self.llm_ms += other.llm_ms;
        for (a, b) in self.tiers.iter_mut().zip(other.tiers) {
            *a += b;
        }
        for l in &other.log {
            self.note(l.clone());
        }
    }
}

/// What a call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallKind {
    /// The summary of a target entity's facts.
    Summary {
        /// The entity's name.
        entity: String,
    },
    /// The tiers of batch `batch` ([`TierPlan::batches`] index).
    Tiers {
        /// The batch.
        batch: usize,
    },
}

/// One call the machine wants made.
#[derive(Debug, Clone, PartialEq)]
pub struct TierCall {
    /// Its id, to give back with the answer ([`TierSession::answer`]).
    pub id: usize,
    /// What it asks for.
    pub kind: CallKind,
    /// The chat request to send.
    pub request: ChatRequest,
}

/// Step 4's result.
#[derive(Debug, Clone, Default)]
pub struct TierOutcome {
    /// One entry per batch: its tiers, or `None` (Weak, counted as a tiering failure).
    pub tiers: Vec<Option<Vec<Tier>>>,
    /// This query's counters.
    pub stats: TierStats,
    /// The failure that ended the asking, if any (the client's message).
    pub error: Option<String>,
    new_summaries: Vec<((String, Vec<String>), String)>,
    new_tiers: Vec<((String, TierBatch), Vec<Tier>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Summaries,
    Tiers,
    Done,
}

/// The tiering of one query (steps 2–4 of the module documentation). Drive it with
/// [`run_blocking`] or [`run_async`], or by hand: `next_wave`, make the calls, `answer` each,
/// until `next_wave` is empty; then `finish`.
#[derive(Debug, Clone)]
pub struct TierSession {
    plan: TierPlan,
    budget: usize,
    reserve: usize,
    tau: usize,
    phase: Phase,
    /// Summaries to ask, (entity, facts), first appearance order.
    wanted: Vec<(String, Vec<String>)>,
    next_summary: usize,
    next_batch: usize,
    summaries: HashMap<(String, Vec<String>), String>,
    pending: HashMap<usize, CallKind>,
    /// Summary call id → its entry of `wanted`.
    summary_of: HashMap<usize, usize>,
    next_id: usize,
    tiers: Vec<Option<Vec<Tier>>>,
    /// Batches answered from the memo (not asked).
    memo_hits: Vec<bool>,
    /// Calls the endpoint answered (empty answers included).
    answered: usize,
    error: Option<String>,
    stats: TierStats,
    out: TierOutcome,
}

impl TierSession {
    /// The session of `plan` under `config`'s [`CatragConfig::llm_call_budget`],
    /// [`CatragConfig::llm_call_reserve`] and [`CatragConfig::tau`], with the answers `memo`
    /// already holds.
    pub fn new(plan: TierPlan, config: &CatragConfig, memo: &TierMemo) -> Self {
        let n = plan.batches.len();
        let mut tiers = vec![None; n];
        let mut memo_hits = vec![false; n];
        let mut stats = TierStats { queries: usize::from(n > 0), ..TierStats::default() };
        let mut wanted = Vec::new();
        let mut seen = HashSet::new();
        let mut summaries = HashMap::new();
        for (i, b) in plan.batches.iter().enumerate() {
            if let Some(t) = memo.tiers.get(&(plan.query.clone(), b.clone())) {
                stats.cached_edges += t.len();
                tiers[i] = Some(t.clone());
                memo_hits[i] = true;
                continue;
            }
            for e in &b.edges {
                if e.facts.len() <= config.tau {
                    continue;
                }
                let key = (e.target.clone(), e.facts.clone());
                if let Some(s) = memo.summaries.get(&key) {
                    if let std::collections::hash_map::Entry::Vacant(v) = summaries.entry(key) {
                        stats.cached_edges += 1;
                        v.insert(s.clone());
                    }
                } else if seen.insert(key.clone()) {
                    wanted.push(key);
                }
            }
        }
        TierSession {
            plan,
            budget: config.llm_call_budget,
            reserve: config.llm_call_reserve,
            tau: config.tau,
            phase: Phase::Summaries,
            wanted,
            next_summary: 0,
            next_batch: 0,
            summaries,
            pending: HashMap::new(),
            summary_of: HashMap::new(),
            next_id: 0,
            tiers,
            memo_hits,
            answered: 0,
            error: None,
            stats,
            out: TierOutcome::default(),
        }
    }

    /// The plan.
    pub fn plan(&self) -> &TierPlan {
        &self.plan
    }

    /// Calls made so far.
    pub fn calls(&self) -> usize {
        self.stats.calls
    }

    /// The next calls to make, at most `width` (≥ 1), independent of each other; empty when the
    /// tiering is over. Until the endpoint has answered one call of the query, a wave is one
    /// call (a probe: an endpoint that is down or refuses costs the query one call, not a
    /// wave). Answer every call of a wave before asking for the next one: a call left
    /// unanswered counts as failed.
    pub fn next_wave(&mut self, width: usize) -> Vec<TierCall> {
        let width = if self.answered == 0 { 1 } else { width.max(1) };
        let unanswered: Vec<usize> = self.pending.keys().copied().collect();
        for id in unanswered {
            self.answer(id, Err(Error::Llm("the call was not answered".into())));
        }
        let mut wave = Vec::new();
        while wave.len() < width && self.phase != Phase::Done {
            if self.error.is_some() {
                self.stop_rest();
                break;
            }
            match self.phase {
                Phase::Summaries => {
                    let Some((entity, facts)) = self.wanted.get(self.next_summary).cloned() else {
                        // Tier prompts need every summary of their batch: wait for this wave.
                        if !wave.is_empty() || !self.pending.is_empty() {
                            break;
                        }
                        self.phase = Phase::Tiers;
                        continue;
                    };
                    let wanted = self.next_summary;
                    self.next_summary += 1;
                    if self.stats.calls + self.reserve >= self.budget {
                        self.stats.budget_skips += 1;
                        continue;
                    }
                    let request = prompts::summary_prompt(&entity, &facts);
                    let call = self.call(CallKind::Summary { entity }, request);
                    self.summary_of.insert(call.id, wanted);
                    wave.push(call);
                }
                Phase::Tiers => {
                    let b = self.next_batch;
                    if b >= self.plan.batches.len() {
                        self.phase = Phase::Done;
                        break;
                    }
                    self.next_batch += 1;
                    if self.memo_hits[b] {
                        continue;
                    }
                    if self.stats.calls >= self.budget {
                        self.stats.budget_skips += 1;
                        let seed = self.plan.batches[b].seed_name.clone();
                        self.stats.note(format!("seed {seed:?}: call budget of {} spent", self.budget));
                        continue;
                    }
                    let request = self.tier_request(b);
                    wave.push(self.call(CallKind::Tiers { batch: b }, request));
                }
                Phase::Done => break,
            }
        }
        wave
    }

    fn call(&mut self, kind: CallKind, request: ChatRequest) -> TierCall {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.calls += 1;
        match kind {
            CallKind::Summary { .. } => self.stats.summary_calls += 1,
            CallKind::Tiers { .. } => self.stats.tier_calls += 1,
        }
        self.pending.insert(id, kind.clone());
        TierCall { id, kind, request }
    }

    /// After a failure: the batches not yet asked are not asked.
    fn stop_rest(&mut self) {
        let left = (self.next_batch..self.plan.batches.len()).filter(|&b| !self.memo_hits[b]).count();
        self.stats.stopped_batches += left;
        self.next_batch = self.plan.batches.len();
        self.phase = Phase::Done;
    }

    /// The tier prompt of batch `b` with the summaries known now.
    fn tier_request(&self, b: usize) -> ChatRequest {
        let batch = &self.plan.batches[b];
        let tau = self.tau;
        let edges: Vec<prompts::TierEdge> = batch
            .edges
            .iter()
            .map(|e| prompts::TierEdge {
                target: e.target.clone(),
                linking_facts: e.linking_facts.clone(),
                context: if e.facts.len() <= tau {
                    e.facts.join("; ")
                } else {
                    self.summaries
                        .get(&(e.target.clone(), e.facts.clone()))
                        .cloned()
                        // Unsummarised (failed or over budget): the first τ facts.
                        .unwrap_or_else(|| format!("{} …", e.facts[..tau].join("; ")))
                },
            })
            .collect();
        prompts::tier_prompt(&self.plan.query, &batch.seed_name, &edges)
    }

    /// The answer to call `id` (its content, or the client's error). Unknown ids are ignored.
    pub fn answer(&mut self, id: usize, answer: Result<String>) {
        let Some(kind) = self.pending.remove(&id) else { return };
        self.answered += usize::from(answer.is_ok());
        match (kind, answer) {
            (CallKind::Summary { entity }, Ok(text)) => {
                let line: String = text.trim().lines().next().unwrap_or_default().chars().take(400).collect();
                let key = self.summary_of.remove(&id).and_then(|w| self.wanted.get(w)).cloned();
                match (line.trim().is_empty(), key) {
                    (false, Some(key)) => {
                        self.out.new_summaries.push((key.clone(), line.trim().to_string()));
                        self.summaries.insert(key, line.trim().to_string());
                    }
                    _ => {
                        self.stats.failed_calls += 1;
                        self.stats.note(format!("summary of {entity:?}: empty answer"));
                    }
                }
            }
            (CallKind::Summary { entity }, Err(e)) => {
                self.stats.failed_calls += 1;
                self.stats.note(format!("summary of {entity:?}: {e}"));
                self.error.get_or_insert(message_text(&e));
            }
            (CallKind::Tiers { batch }, Ok(text)) => {
                let Some(b) = self.plan.batches.get(batch) else { return };
                let parsed = llm::parse::parse_tiers(&text, b.edges.len());
                let bad = parsed.iter().filter(|t| t.is_none()).count();
                if bad > 0 {
                    let head: String = text.chars().take(160).collect();
                    let seed = b.seed_name.clone();
                    self.stats.note(format!(
                        "tiers of seed {seed:?}: {bad} of {} edge(s) unparsed in {head:?}",
                        parsed.len()
                    ));
                }
                self.stats.unparsed_edges += bad;
                self.stats.tiered_edges += parsed.len() - bad;
                let tiers: Vec<Tier> = parsed.into_iter().map(|t| t.map_or(Tier::Weak, Tier::from)).collect();
                for t in &tiers {
                    self.stats.tiers[*t as usize] += 1;
                }
                self.out.new_tiers.push(((self.plan.query.clone(), b.clone()), tiers.clone()));
                self.tiers[batch] = Some(tiers);
            }
            (CallKind::Tiers { batch }, Err(e)) => {
                self.stats.failed_calls += 1;
                let seed = self.plan.batches.get(batch).map(|b| b.seed_name.clone()).unwrap_or_default();
                self.stats.note(format!("tiers of seed {seed:?}: {e}"));
                self.error.get_or_insert(message_text(&e));
            }
        }
    }

    /// Step 4: the tiers of every batch and the counters (see [`TierOutcome`]).
    pub fn finish(mut self) -> TierOutcome {
        let unanswered: Vec<usize> = self.pending.keys().copied().collect();
        for id in unanswered {
            self.answer(id, Err(Error::Llm("the call was not answered".into())));
        }
        if self.phase != Phase::Done {
            // Stopped early by the driver: what was not asked is not asked.
            self.error.get_or_insert_with(|| "tiering ended before every batch was asked".into());
            self.stop_rest();
        }
        self.stats.max_calls_per_query = self.stats.calls;
        let mut out = self.out;
        out.tiers = self.tiers;
        out.stats = self.stats;
        out.error = self.error;
        out
    }
}

/// An error's message without the enum's prefix.
fn message_text(e: &Error) -> String {
    match e {
        Error::Llm(m) => m.clone(),
        other => other.to_string(),
    }
}

/// The blocking driver (CLI, evaluation): every wave's calls at once on scoped threads (one
/// after another on wasm32, which has no threads), `client.config().concurrency` wide.
/// Returns the session's outcome.
pub fn run_blocking(mut session: TierSession, client: &dyn llm::LlmClient) -> TierOutcome {
    let width = client.config().concurrency.max(1);
    loop {
        let wave = session.next_wave(width);
        if wave.is_empty() {
            break;
        }
        #[cfg(not(target_arch = "wasm32"))]
        let answers: Vec<(usize, Result<String>)> = if wave.len() == 1 {
            wave.iter().map(|c| (c.id, client.chat(&c.request).map(|r| r.content))).collect()
        } else {
            std::thread::scope(|sc| {
                let handles: Vec<_> = wave
                    .iter()
                    .map(|c| (c.id, sc.spawn(move || client.chat(&c.request).map(|r| r.content))))
                    .collect();
                handles
                    .into_iter()
                    .map(|(id, h)| {
                        (
                            id,
                            h.join().unwrap_or_else(|_| Err(Error::Llm("the call's thread panicked".into()))),
                        )
                    })
                    .collect()
            })
        };
        #[cfg(target_arch = "wasm32")]
        let answers: Vec<(usize, Result<String>)> =
            wave.iter().map(|c| (c.id, client.chat(&c.request).map(|r| r.content))).collect();
        for (id, a) in answers {
            session.answer(id, a);
        }
    }
    session.finish()
}

/// The asynchronous driver (the page's worker): `call` sends one request and resolves to the
/// answer's content; a wave's calls are awaited one after another. `width` must be the same as
/// the blocking driver's (the client's concurrency) for the same waves. Returns the session's
/// outcome.
pub async fn run_async<F, Fut>(mut session: TierSession, width: usize, mut call: F) -> TierOutcome
where
    F: FnMut(ChatRequest) -> Fut,
    Fut: Future<Output = Result<String>>,
{
    loop {
        let wave = session.next_wave(width);
        if wave.is_empty() {
            break;
        }
        for c in wave {
            let a = call(c.request).await;
            session.answer(c.id, a);
        }
    }
    session.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(n: u32, facts: usize) -> BatchEdge {
        BatchEdge {
            neighbour: n,
            target: format!("T{n}"),
            linking_facts: vec![format!("S rel T{n}")],
            facts: (0..facts).map(|i| format!("T{n} fact {i}")).collect(),
        }
    }

    fn plan(batches: Vec<Vec<BatchEdge>>) -> TierPlan {
        TierPlan {
            query: "q".into(),
            batches: batches
                .into_iter()
                .enumerate()
                .map(|(i, edges)| TierBatch { seed: i as u32, seed_name: format!("S{i}"), edges })
                .collect(),
        }
    }

    /// Answers every call: summaries "sum", tier prompts "high" for each edge id it lists.
    fn answer_all(s: &mut TierSession, width: usize) -> Vec<Vec<CallKind>> {
        let mut waves = Vec::new();
        loop {
            let wave = s.next_wave(width);
            if wave.is_empty() {
                return waves;
            }
            waves.push(wave.iter().map(|c| c.kind.clone()).collect());
            for c in wave {
                let text = match c.kind {
                    CallKind::Summary { .. } => "sum\nsecond line".to_string(),
                    CallKind::Tiers { .. } => {
                        let n = c.request.messages.last().map_or(0, |m| m.content.matches("\ne").count());
                        let ids: Vec<String> =
                            (1..=n.max(1)).map(|i| format!("\"e{i}\": \"high\"")).collect();
                        format!("{{{}}}", ids.join(", "))
                    }
                };
                s.answer(c.id, Ok(text));
            }
        }
    }

    #[test]
    fn summaries_once_per_entity_then_tiers_in_waves() {
        // T1 has 4 facts (> τ = 3) in both batches: one summary; T2 has 3: none.
        let p = plan(vec![vec![edge(1, 4), edge(2, 3)], vec![edge(1, 4)]]);
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        let waves = answer_all(&mut s, 2);
        assert_eq!(
            waves,
            vec![
                vec![CallKind::Summary { entity: "T1".into() }],
                vec![CallKind::Tiers { batch: 0 }, CallKind::Tiers { batch: 1 }],
            ]
        );
        let out = s.finish();
        assert_eq!(out.stats.calls, 3);
        assert_eq!(out.stats.summary_calls, 1);
        assert!(out.error.is_none());
    }

    #[test]
    fn summary_context_and_first_tau_facts_in_the_prompt() {
        let p = plan(vec![vec![edge(1, 5)]]);
        let mut s = TierSession::new(p.clone(), &CatragConfig::default(), &TierMemo::default());
        let w = s.next_wave(2);
        s.answer(w[0].id, Ok("  Short summary.\nmore".into()));
        let w = s.next_wave(2);
        assert!(w[0].request.messages.iter().any(|m| m.content.contains("Short summary.")));
        assert!(!w[0].request.messages.iter().any(|m| m.content.contains("more")));
        // An empty summary: the first τ facts and "…".
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        let w = s.next_wave(2);
        s.answer(w[0].id, Ok(" ".into()));
        let w = s.next_wave(2);
        let text: String = w[0].request.messages.iter().map(|m| m.content.as_str()).collect();
        assert!(text.contains("T1 fact 0; T1 fact 1; T1 fact 2 …"), "{text}");
        assert!(!text.contains("T1 fact 3"));
    }

    #[test]
    fn budget_keeps_the_reserve_for_tier_prompts() {
        // Budget 7, reserve 5: 1 summary (calls 0 + 5 < 7; 1 + 5 < 7 too: 2), then tier prompts
        // until 7 calls.
        let cfg = CatragConfig { llm_call_budget: 7, llm_call_reserve: 5, ..CatragConfig::default() };
        let p = plan((0..6).map(|i| vec![edge(10 + i, 4)]).collect());
        let mut s = TierSession::new(p, &cfg, &TierMemo::default());
        answer_all(&mut s, 3);
        let out = s.finish();
        assert_eq!(out.stats.summary_calls, 2);
        assert_eq!(out.stats.tier_calls, 5);
        assert_eq!(out.stats.calls, 7);
        // 4 summaries and 1 tier prompt skipped.
        assert_eq!(out.stats.budget_skips, 5);
        assert_eq!(out.tiers.iter().filter(|t| t.is_none()).count(), 1);
        assert_eq!(out.tiers[5], None);
    }

    #[test]
    fn the_first_failure_ends_the_asking() {
        let p = plan(vec![vec![edge(1, 2)], vec![edge(2, 2)], vec![edge(3, 2)], vec![edge(4, 2)]]);
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        // The probe: one call until the endpoint has answered one.
        let w = s.next_wave(2);
        assert_eq!(w.len(), 1);
        s.answer(w[0].id, Ok("e1: high".into()));
        let w = s.next_wave(2);
        assert_eq!(w.len(), 2);
        s.answer(w[0].id, Err(Error::Llm("HTTP 500".into())));
        s.answer(w[1].id, Ok("e1: direct".into()));
        assert!(s.next_wave(2).is_empty());
        let out = s.finish();
        assert_eq!(out.tiers, vec![Some(vec![Tier::High]), None, Some(vec![Tier::Direct]), None]);
        assert_eq!(out.stats.stopped_batches, 1);
        assert_eq!(out.stats.failed_calls, 1);
        assert_eq!(out.error.as_deref(), Some("HTTP 500"));
        // A failing probe: one call for the whole query.
        let p = plan(vec![vec![edge(1, 2)], vec![edge(2, 2)]]);
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        let w = s.next_wave(2);
        assert_eq!(w.len(), 1);
        s.answer(w[0].id, Err(Error::Llm("CORS".into())));
        assert!(s.next_wave(2).is_empty());
        let out = s.finish();
        assert_eq!((out.stats.calls, out.stats.stopped_batches), (1, 1));
    }

    #[test]
    fn unparsed_edges_are_weak_and_counted() {
        let p = plan(vec![vec![edge(1, 1), edge(2, 1), edge(3, 1)]]);
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        let w = s.next_wave(1);
        s.answer(w[0].id, Ok("e1: irrelevant\ne3: maybe".into()));
        let out = s.finish();
        assert_eq!(out.tiers, vec![Some(vec![Tier::Irrelevant, Tier::Weak, Tier::Weak])]);
        assert_eq!((out.stats.tiered_edges, out.stats.unparsed_edges), (1, 2));
        assert_eq!(out.stats.tiers, [1, 2, 0, 0]);
    }

    #[test]
    fn the_memo_replaces_calls() {
        let p = plan(vec![vec![edge(1, 4)], vec![edge(2, 4)]]);
        let mut memo = TierMemo::default();
        let mut s = TierSession::new(p.clone(), &CatragConfig::default(), &memo);
        answer_all(&mut s, 2);
        let mut out = s.finish();
        assert_eq!(out.stats.calls, 4);
        memo.absorb(&mut out);
        assert_eq!(memo.len(), 4);
        // The same query again: nothing to ask, the same tiers.
        let mut s = TierSession::new(p.clone(), &CatragConfig::default(), &memo);
        assert!(s.next_wave(2).is_empty());
        let again = s.finish();
        assert_eq!(again.tiers, out.tiers);
        assert_eq!(again.stats.calls, 0);
        assert_eq!(again.stats.cached_edges, 2);
        // Another query over the same targets: summaries from the memo, tier prompts asked.
        let mut other = p;
        other.query = "another".into();
        let mut s = TierSession::new(other, &CatragConfig::default(), &memo);
        let waves = answer_all(&mut s, 2);
        assert_eq!(waves, vec![vec![CallKind::Tiers { batch: 0 }], vec![CallKind::Tiers { batch: 1 }]]);
    }

    #[test]
    fn unanswered_calls_count_as_failed() {
        let p = plan(vec![vec![edge(1, 1)]]);
        let mut s = TierSession::new(p, &CatragConfig::default(), &TierMemo::default());
        assert_eq!(s.next_wave(1).len(), 1);
        let out = s.finish();
        assert_eq!(out.tiers, vec![None]);
        assert_eq!(out.stats.failed_calls, 1);
    }
}
