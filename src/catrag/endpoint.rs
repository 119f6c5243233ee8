//! The user's LLM endpoint in CatRAG's query-time steps (docs/method/spec.md §3): the blocking driver of
//! the tiering state machine as an [`EdgeTierer`] ([`LlmTierer`], native callers: CLI and
//! evaluation) and the endpoint's query NER as an [`EntityRecognizer`] for symbolic anchoring.
//! The client, prompts and parsers stay in [`crate::llm`], which knows nothing of graphs.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::tiering::{run_blocking, TierMemo, TierPlan, TierSession, TierStats};
use super::{EdgeTierer, EntityRecognizer, Tier, TierRequest};
use crate::error::{Error, Result};
use crate::llm::{LlmClient, LlmNer};

/// CatRAG's LLM edge tierer for native callers: each query's batches go through one
/// [`TierSession`] (budget, reserve and τ of the query's [`super::CatragConfig`]) driven by
/// [`run_blocking`] over `client`; summaries and tier answers are kept in one [`TierMemo`]
/// between queries; counters add up in [`LlmTierer::stats`]. Named `llm:{model}` in reports.
pub struct LlmTierer {
    client: Arc<dyn LlmClient>,
    name: String,
    state: Mutex<(TierMemo, TierStats)>,
}

impl LlmTierer {
    /// A tierer over `client`.
    pub fn new(client: Arc<dyn LlmClient>) -> Self {
        let name = format!("llm:{}", client.config().model);
        LlmTierer { client, name, state: Mutex::new((TierMemo::default(), TierStats::default())) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (TierMemo, TierStats)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters over every query since it was made (or last [`LlmTierer::reset_stats`]).
    pub fn stats(&self) -> TierStats {
        self.lock().1.clone()
    }

    /// Zero the counters (the memo stays).
    pub fn reset_stats(&self) {
        self.lock().1 = TierStats::default();
    }
}

impl EdgeTierer for LlmTierer {
    fn name(&self) -> &str {
        &self.name
    }

    fn tier(&self, request: &TierRequest<'_>) -> Result<Vec<Tier>> {
        self.tier_all(std::slice::from_ref(request))
            .pop()
            .unwrap_or_else(|| Err(Error::Llm("no tiers".into())))
    }

    fn tier_all(&self, requests: &[TierRequest<'_>]) -> Vec<Result<Vec<Tier>>> {
        let Some(first) = requests.first() else { return Vec::new() };
        let started = Instant::now();
        // The query's deadline starts at its first call (NER or tiers) and bounds them all.
        self.client.begin_query(Some(first.query));
        let session = {
            let state = self.lock();
            TierSession::new(TierPlan::new(requests), first.config, &state.0)
        };
        let mut outcome = run_blocking(session, self.client.as_ref());
        outcome.stats.llm_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut state = self.lock();
        state.0.absorb(&mut outcome);
        state.1.add(&outcome.stats);
        let why = outcome.error.unwrap_or_else(|| "no answer".into());
        outcome.tiers.into_iter().map(|t| t.ok_or_else(|| Error::Llm(why.clone()))).collect()
    }
}

/// A shared [`LlmTierer`]: several indexes (the pool setting builds one per question) use one
/// memo and one set of counters.
impl EdgeTierer for Arc<LlmTierer> {
    fn name(&self) -> &str {
        self.as_ref().name()
    }

    fn tier(&self, request: &TierRequest<'_>) -> Result<Vec<Tier>> {
        self.as_ref().tier(request)
    }

    fn tier_all(&self, requests: &[TierRequest<'_>]) -> Vec<Result<Vec<Tier>>> {
        self.as_ref().tier_all(requests)
    }
}

/// The endpoint's query NER ([`LlmNer::recognise`]) for CatRAG's symbolic anchoring.
impl EntityRecognizer for LlmNer {
    fn name(&self) -> &str {
        LlmNer::name(self)
    }

    fn entities(&self, query: &str) -> Result<Vec<String>> {
        self.recognise(query)
    }
}
