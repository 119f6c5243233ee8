//! Flag groups several subcommands share (BM25, the graph methods, CAGE, the models, the LLM
//! endpoint) and the models they load.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use cairn::catrag::CatragConfig;
use cairn::embed::{Embedder, StaticEmbedder};
use cairn::eval::Embedders;
use cairn::index::{Bm25Config, EmbedderSlot, IndexConfig, Method};
use cairn::llm::{HttpClient, LlmConfig};
use clap::Args;
use serde_json::json;

use crate::common::*;

/// The `--method` help: every name of the method table. The value is parsed by
/// `Method::from_str` in each subcommand (any case; an unknown name is a one-line error that
/// lists the names).
pub(crate) fn method_help(what: &str) -> String {
    format!("{what}: {} (`cairn methods` describes each)", Method::help_list())
}

#[derive(Args)]
pub(crate) struct Bm25Args {
    /// BM25 term-frequency saturation.
    #[arg(long, default_value_t = 0.9)]
    pub(crate) k1: f32,
    /// BM25 length normalisation.
    #[arg(long, default_value_t = 0.4)]
    pub(crate) b: f32,
    /// Exact terms only: no typo tolerance in BM25 or in the graph methods' anchoring.
    #[arg(long)]
    pub(crate) no_typos: bool,
    /// Typo tolerance also for query terms that are in the vocabulary (a real word typed
    /// for another, "pert" for Peart); by default a known word is taken as meant.
    #[arg(long)]
    pub(crate) typos_known_terms: bool,
    /// Typo tolerance also on a word's first letter (slower: every term is a candidate).
    #[arg(long)]
    pub(crate) typos_first_char: bool,
}

impl Bm25Args {
    pub(crate) fn config(&self) -> IndexConfig {
        let bm25 = Bm25Config {
            k1: self.k1,
            b: self.b,
            typos: !self.no_typos,
            typo_known_terms: self.typos_known_terms,
            typo_first_char: self.typos_first_char,
            ..Bm25Config::default()
        };
        IndexConfig { bm25, ..IndexConfig::default() }
    }
}

/// The index configuration a subcommand runs with: BM25's flags (validated) and the graph
/// methods' settings with their ablations.
///
/// # Errors
/// A one-line message when a BM25 parameter or the graph methods' configuration is invalid.
pub(crate) fn index_config(bm25: &Bm25Args, catrag: &CatragArgs) -> CliResult<IndexConfig> {
    let mut config = bm25.config();
    config.bm25.validate().map_err(|e| e.to_string())?;
    config.catrag = catrag.config()?;
    Ok(config)
}

/// The graph methods' settings (docs/method/spec.md §3) and CatRAG's ablations.
#[derive(Args)]
pub(crate) struct CatragArgs {
    /// CatRAG ablation: no symbolic anchoring (channel B).
    #[arg(long)]
    pub(crate) no_anchor: bool,
    /// CatRAG ablation: no key-fact passage weight enhancement.
    #[arg(long)]
    pub(crate) no_boost: bool,
    /// CatRAG ablation: no coarse edge pruning.
    #[arg(long)]
    pub(crate) no_prune: bool,
    /// CatRAG ablation: no dynamic edge weighting (tiering).
    #[arg(long)]
    pub(crate) no_tier: bool,
    /// Graph-method ablation: no lexical (BM25) passage prior.
    #[arg(long)]
    pub(crate) no_lexical: bool,
    /// Graph-method ablation: no title bridges.
    #[arg(long)]
    pub(crate) no_bridge: bool,
    /// Graph-method ablation: the static table's passage prior even when MiniLM passage
    /// vectors are attached.
    #[arg(long)]
    pub(crate) no_transformer_prior: bool,
    /// Graph-method ablation: no query titles (passages titled by a name in the query).
    #[arg(long)]
    pub(crate) no_query_title: bool,
    /// Graph-method ablation: no query-residual passage prior.
    #[arg(long)]
    pub(crate) no_residual: bool,
    /// The graph methods' configuration as JSON (`{"epsilon": 0.3, ...}`, the fields of
    /// CatragConfig) or a path to a JSON file; the ablation flags apply on top.
    #[arg(long)]
    pub(crate) catrag_config: Option<String>,
}

impl CatragArgs {
    pub(crate) fn config(&self) -> CliResult<CatragConfig> {
        let mut c: CatragConfig = match &self.catrag_config {
            None => CatragConfig::default(),
            Some(s) => {
                let text = if s.trim_start().starts_with('{') {
                    s.clone()
                } else {
                    std::fs::read_to_string(s).map_err(|e| format!("{s}: {e}"))?
                };
                serde_json::from_str(&text).map_err(|e| format!("--catrag-config: {e}"))?
            }
        };
        c.no_anchor |= self.no_anchor;
        c.no_boost |= self.no_boost;
        c.no_prune |= self.no_prune;
        c.no_tier |= self.no_tier;
        c.no_lexical |= self.no_lexical;
        c.no_bridge |= self.no_bridge;
        c.no_transformer_prior |= self.no_transformer_prior;
        c.no_query_title |= self.no_query_title;
        c.no_residual |= self.no_residual;
        c.validate().map_err(|e| e.to_string())?;
        for w in c.warnings() {
            eprintln!("warning: {w}");
        }
        Ok(c)
    }
}

/// CAGE's settings (docs/method/spec.md §4) and ablations.
#[derive(Args)]
pub(crate) struct CageArgs {
    /// CAGE fusion weight α of cos(query, p) (the rest goes to min-max coherence).
    #[arg(long)]
    pub(crate) alpha: Option<f32>,
    /// β_cage: multiplier of min-out-degree nodes' features and adjacent edges.
    #[arg(long)]
    pub(crate) beta: Option<f32>,
    /// Candidates reranked (N, at least 1).
    #[arg(long, value_parser = at_least_one)]
    pub(crate) candidates: Option<usize>,
    /// CAGE ablation: no min-out-degree reweighting (β = 1).
    #[arg(long)]
    pub(crate) no_reweight: bool,
    /// CAGE ablation: the plain GCN (one relation type; its own trained model).
    #[arg(long)]
    pub(crate) plain_gcn: bool,
    /// CAGE's relevance term: `first-stage` (the first stage's scores, min-max normalised,
    /// so coherence only reorders close candidates), `rank` (the first stage's rank, so a
    /// candidate moves at most ⌊(1 − α)/α · (N − 1)⌋ places) or `cosine` (docs/method/spec.md §4).
    #[arg(long, value_name = "cosine|first-stage|rank")]
    pub(crate) cage_relevance: Option<String>,
    /// CAGE anchors m: coherence with the first stage's top m candidates (0 = all N).
    #[arg(long)]
    pub(crate) anchors: Option<usize>,
    /// CAGE ablation: the diversity-trained (GraphCL) R-GCN instead of the bonding-trained one.
    #[arg(long)]
    pub(crate) graphcl: bool,
    /// CAGE's selection: `independent` (each candidate's coherence with the anchors) or `set`
    /// (the evidence set chosen greedily, each hit by its coherence with those before it).
    #[arg(long, value_name = "independent|set")]
    pub(crate) cage_selection: Option<String>,
}

impl CageArgs {
    pub(crate) fn config(&self) -> CliResult<cairn::cage::CageConfig> {
        let mut c = cairn::cage::CageConfig::default();
        if let Some(a) = self.alpha {
            c.alpha = a;
        }
        if let Some(b) = self.beta {
            c.beta = b;
        }
        if let Some(n) = self.candidates {
            c.candidates = n;
        }
        c.no_reweight |= self.no_reweight;
        c.plain_gcn |= self.plain_gcn;
        c.graphcl |= self.graphcl;
        if let Some(m) = self.anchors {
            c.anchors = m;
        }
        if let Some(r) = &self.cage_relevance {
            c.relevance = serde_json::from_value(json!(r))
                .map_err(|_| format!("--cage-relevance {r:?}: expected cosine, first-stage or rank"))?;
        }
        if let Some(r) = &self.cage_selection {
            c.selection = serde_json::from_value(json!(r))
                .map_err(|_| format!("--cage-selection {r:?}: expected independent or set"))?;
        }
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }
}

#[cfg(feature = "cage")]
pub(crate) fn load_cage() -> CliResult<Rc<cairn::cage::Cage>> {
    use cairn::cage::tract::RgcnModel;
    // CAIRN_CAGE_MODEL: another R-GCN ONNX file in place of the bundled one (to evaluate a
    // freshly trained encoder without rebuilding).
    let rgcn = match std::env::var_os("CAIRN_CAGE_MODEL") {
        Some(path) => {
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("{}: {e}", std::path::Path::new(&path).display()))?;
            RgcnModel::from_onnx_bytes(&bytes).map_err(|e| e.to_string())?
        }
        None => RgcnModel::bundled_rgcn().map_err(|e| e.to_string())?,
    };
    let gcn = RgcnModel::bundled_gcn().map_err(|e| e.to_string())?;
    let graphcl = RgcnModel::bundled_graphcl().map_err(|e| e.to_string())?;
    let cage = cairn::cage::Cage::new(Rc::new(rgcn), Some(Rc::new(gcn)))
        .and_then(|c| c.with_graphcl(Rc::new(graphcl)))
        .map_err(|e| e.to_string())?;
    Ok(Rc::new(cage))
}

#[cfg(not(feature = "cage"))]
pub(crate) fn load_cage() -> CliResult<Rc<cairn::cage::Cage>> {
    Err("the CAGE methods need a cairn built with `--features cage`".into())
}

#[derive(Args)]
pub(crate) struct ModelArgs {
    /// The all-MiniLM-L6-v2 int8 ONNX file for `dense-minilm` (get it with
    /// tools/fetch_models.sh; needs a build with `--features minilm`).
    #[arg(long, default_value = "models/minilm-int8.onnx")]
    pub(crate) model: PathBuf,
    /// Keep MiniLM's passage vectors in this folder (keyed by the model file's checksum and a
    /// hash of each text) and reuse them in later runs: the `-scale` folders share one
    /// corpus, and a table re-runs the same passages.
    #[arg(long)]
    pub(crate) vector_cache: Option<PathBuf>,
    /// Graph methods: also attach MiniLM's passage vectors, and take the passage prior from
    /// them instead of the static table's (needs `--features minilm`).
    #[arg(long)]
    pub(crate) graph_minilm: bool,
}

/// The embedder `method` needs, loaded (the static one is bundled in the binary).
pub(crate) fn load_embedders(method: Method, models: &ModelArgs) -> CliResult<Embedders> {
    let mut out = Embedders::default();
    match method.embedder() {
        None => {}
        Some(EmbedderSlot::Static) => {
            let e = StaticEmbedder::minilm().map_err(|e| e.to_string())?;
            out.static_embedder = Some(Rc::new(e) as Rc<dyn Embedder>);
        }
        Some(EmbedderSlot::Minilm) => out.minilm = Some(load_minilm(models)?),
    }
    if models.graph_minilm && method.graph_method().is_some() {
        out.minilm = Some(load_minilm(models)?);
    }
    if method.cage_first_stage().is_some() {
        out.cage = Some(load_cage()?);
    }
    Ok(out)
}

#[cfg(feature = "minilm")]
pub(crate) fn load_minilm(models: &ModelArgs) -> CliResult<Rc<dyn Embedder>> {
    let path = &models.model;
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: {e} (run tools/fetch_models.sh to get the model)", path.display()))?;
    let e = cairn::embed::minilm::MiniLmEmbedder::from_onnx_bytes(&bytes).map_err(|e| e.to_string())?;
    let e: Rc<dyn Embedder> = Rc::new(e);
    match &models.vector_cache {
        None => Ok(e),
        Some(dir) => {
            let key = format!("minilm-{:08x}", crc32fast::hash(&bytes));
            let c = cairn::embed::cache::CachedEmbedder::open(e, dir, &key).map_err(|e| e.to_string())?;
            Ok(Rc::new(c))
        }
    }
}

#[cfg(not(feature = "minilm"))]
pub(crate) fn load_minilm(_: &ModelArgs) -> CliResult<Rc<dyn Embedder>> {
    Err("method \"dense-minilm\" needs a cairn built with `--features minilm`".into())
}

/// The user's LLM endpoint (OpenAI-compatible chat completions). The key, if any, is read
/// from the environment variable CAIRN_LLM_KEY, never from the command line.
#[derive(Args)]
pub(crate) struct LlmArgs {
    /// Base URL of the endpoint (e.g. http://127.0.0.1:8091): CatRAG's edge tiers come from it
    /// instead of the offline embedding-similarity tierer.
    #[arg(long)]
    pub(crate) llm: Option<String>,
    /// Model name sent to the endpoint (needed with --llm). (`--model` is the MiniLM file.)
    #[arg(long)]
    pub(crate) llm_model: Option<String>,
    /// LLM calls allowed per query (tier prompts and summaries); sets catrag.llm_call_budget
    /// (default 75).
    #[arg(long)]
    pub(crate) llm_budget: Option<usize>,
    /// Timeout of one request in milliseconds (a call's deadline, below, may end it sooner).
    #[arg(long, default_value_t = 120_000, value_parser = at_least_one_u64)]
    pub(crate) llm_timeout_ms: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 2, value_parser = at_least_one)]
    pub(crate) llm_concurrency: usize,
    /// Deadline of all the endpoint's calls for one query (tiers, summaries, NER) in
    /// milliseconds, retries and back-offs included; past it the query's remaining edges fall
    /// back to Weak at once.
    #[arg(long, default_value_t = 5_000, value_parser = at_least_one_u64)]
    pub(crate) llm_deadline_ms: u64,
    /// Deadline of one generated answer (--answer) in milliseconds, its request, retries and
    /// back-offs included; past it the answer fails at once and counts as failed (an endpoint
    /// that accepts the connection and never answers costs a question this long at most, and
    /// nothing once the circuit breaker is open).
    #[arg(long, default_value_t = 10_000, value_parser = at_least_one_u64)]
    pub(crate) llm_answer_deadline_ms: u64,
    /// Calls failing in a row that open the circuit breaker (calls then fail at once, for
    /// this query and the next ones, until --llm-breaker-cooldown-ms has passed).
    #[arg(long, default_value_t = 3, value_parser = at_least_one_u32)]
    pub(crate) llm_breaker_failures: u32,
    /// How long an open circuit breaker refuses calls, milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub(crate) llm_breaker_cooldown_ms: u64,
    /// Also generate an answer from each question's top 5 passages and report EM, F1 and JSR
    /// (each within --llm-answer-deadline-ms).
    #[arg(long)]
    pub(crate) answer: bool,
    /// CatRAG: the query mentions of symbolic anchoring come from the endpoint's NER (one call
    /// per question); a failed or empty answer falls back to the rule-based mentions.
    #[arg(long)]
    pub(crate) llm_ner: bool,
    /// Graph methods: build the knowledge graph from the endpoint's OpenIE triples (one call
    /// per indexed passage; a failed or empty answer keeps that passage's rule-based
    /// triples). Slow with a small local model: use --setting pool with --limit.
    #[arg(long)]
    pub(crate) llm_openie: bool,
}

impl LlmArgs {
    pub(crate) fn client(&self) -> CliResult<Option<Arc<HttpClient>>> {
        let Some(url) = &self.llm else {
            if self.answer || self.llm_ner || self.llm_openie {
                return Err(
                    "--answer, --llm-ner and --llm-openie need an endpoint: --llm URL --llm-model M".into()
                );
            }
            return Ok(None);
        };
        let model =
            self.llm_model.clone().ok_or("--llm needs --llm-model (the model name the endpoint serves)")?;
        let mut c = LlmConfig::new(url, &model);
        c.api_key = std::env::var("CAIRN_LLM_KEY").ok().filter(|k| !k.is_empty());
        c.timeout_ms = self.llm_timeout_ms;
        c.concurrency = self.llm_concurrency;
        c.query_deadline_ms = self.llm_deadline_ms;
        c.answer_deadline_ms = self.llm_answer_deadline_ms;
        c.breaker_failures = self.llm_breaker_failures;
        c.breaker_cooldown_ms = self.llm_breaker_cooldown_ms;
        Ok(Some(Arc::new(HttpClient::new(c).map_err(|e| e.to_string())?)))
    }
}
