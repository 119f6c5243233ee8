//! `cairn`: the native command-line interface — `eval`, `bench`, `query`, `graph` and `index`.
//!
//! Every error is one line on stderr starting with `error:` and exits with status 2.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
#[path = "cairn/site_assets.rs"]
mod site_assets;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use cairn::corpus::{parse_jsonl_bytes, Corpus};
    use std::rc::Rc;

    use cairn::catrag::{CatragConfig, ExplainConfig};
    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::engine::Engine;
    use cairn::eval::{evaluate, evaluate_with, Dataset, Embedders, EvalHooks, Report, Setting};
    use cairn::extract::{extract_corpus, extract_passage};
    use cairn::graph::GraphConfig;
    use cairn::index::{Bm25Config, EmbedderSlot, Index, IndexConfig, Method};
    use cairn::catrag::LlmTierer;
    use cairn::llm::{HttpClient, LlmClient, LlmConfig, LlmNer, LlmOpenIe};
    use cairn::text::Pipeline;
    use clap::{Args, Parser, Subcommand};
    use serde_json::json;
    use std::sync::Arc;

    /// Multi-hop retrieval for RAG, natively: evaluate methods, benchmark indexing, query a corpus.
    #[derive(Parser)]
    #[command(name = "cairn", version, about)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Recall@2, Recall@5 and FCR@5 of a method on a dataset folder (METHOD.md §5).
        Eval(EvalArgs),
        /// Indexing speed, query latency and memory on a dataset folder; one JSON object.
        Bench(BenchArgs),
        /// Search a corpus (a dataset folder or a .jsonl file) and print the top passages.
        Query(QueryArgs),
        /// Build the knowledge graph of a dataset folder and report its size, extraction
        /// statistics, build times, peak memory and the time to add 100 passages.
        Graph(GraphArgs),
        /// Index a static site (HTML and Markdown pages) or a JSONL corpus and write the index
        /// file with the wasm package, a JS loader and a drop-in search widget.
        Index(IndexArgs),
    }

    #[derive(Args)]
    struct IndexArgs {
        /// The site's folder: every .html, .htm, .md and .markdown page under it (not the --out
        /// folder, hidden entries or node_modules).
        site: Option<PathBuf>,
        /// Index a dataset folder (its corpus.jsonl) or a .jsonl file of passages instead of a site.
        /// The widget links each result to its passage's id (up to its first space) when every id
        /// is a URL (root-relative or http(s)://); otherwise it shows the titles without links.
        #[arg(long, conflicts_with = "site")]
        jsonl: Option<PathBuf>,
        /// Where to write the index, the wasm package, the loader and the widget (for a site,
        /// usually <site>/cairn/, served at /cairn/).
        #[arg(long)]
        out: PathBuf,
        /// A wasm package folder to copy (cairn.js and cairn_bg.wasm; `npm run build:wasm` makes
        /// pkg/) instead of the one built into this binary.
        #[arg(long)]
        pkg: Option<PathBuf>,
        /// Also build the knowledge graph (methods hipporag and catrag; seconds per thousand
        /// passages, and a bigger index).
        #[arg(long)]
        graph: bool,
        /// BM25 only: no static-embedder vectors (a smaller index, and the widget fetches no
        /// embedding table).
        #[arg(long)]
        no_dense: bool,
        /// Also compute CAGE's graph embedding of every passage (methods cage, bm25+cage and
        /// catrag+cage; needs a build with `--features cage`; 133 bytes per passage).
        #[arg(long)]
        cage: bool,
        /// The widget's default method (the div's data-method attribute overrides it).
        #[arg(long, default_value = "bm25")]
        method: String,
        /// The URL path the site is served under (prefix of every result link).
        #[arg(long, default_value = "/")]
        base_url: String,
    }

    #[derive(Args)]
    struct Bm25Args {
        /// BM25 term-frequency saturation.
        #[arg(long, default_value_t = 0.9)]
        k1: f32,
        /// BM25 length normalisation.
        #[arg(long, default_value_t = 0.4)]
        b: f32,
        /// Exact terms only: no typo tolerance in BM25 or in the graph methods' anchoring.
        #[arg(long)]
        no_typos: bool,
        /// Typo tolerance also for query terms that are in the vocabulary (a real word typed
        /// for another, "pert" for Peart); by default a known word is taken as meant.
        #[arg(long)]
        typos_known_terms: bool,
        /// Typo tolerance also on a word's first letter (slower: every term is a candidate).
        #[arg(long)]
        typos_first_char: bool,
    }

    impl Bm25Args {
        fn config(&self) -> IndexConfig {
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

    /// The graph methods' settings (METHOD.md §3) and CatRAG's ablations.
    #[derive(Args)]
    struct CatragArgs {
        /// CatRAG ablation: no symbolic anchoring (channel B).
        #[arg(long)]
        no_anchor: bool,
        /// CatRAG ablation: no key-fact passage weight enhancement.
        #[arg(long)]
        no_boost: bool,
        /// CatRAG ablation: no coarse edge pruning.
        #[arg(long)]
        no_prune: bool,
        /// CatRAG ablation: no dynamic edge weighting (tiering).
        #[arg(long)]
        no_tier: bool,
        /// Graph-method ablation: no lexical (BM25) passage prior.
        #[arg(long)]
        no_lexical: bool,
        /// Graph-method ablation: no title bridges.
        #[arg(long)]
        no_bridge: bool,
        /// Graph-method ablation: the static table's passage prior even when MiniLM passage
        /// vectors are attached.
        #[arg(long)]
        no_transformer_prior: bool,
        /// Graph-method ablation: no query titles (passages titled by a name in the query).
        #[arg(long)]
        no_query_title: bool,
        /// Graph-method ablation: no query-residual passage prior.
        #[arg(long)]
        no_residual: bool,
        /// The graph methods' configuration as JSON (`{"epsilon": 0.3, ...}`, the fields of
        /// CatragConfig) or a path to a JSON file; the ablation flags apply on top.
        #[arg(long)]
        catrag_config: Option<String>,
    }

    impl CatragArgs {
        fn config(&self) -> CliResult<CatragConfig> {
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

    /// CAGE's settings (METHOD.md §4) and ablations.
    #[derive(Args)]
    struct CageArgs {
        /// CAGE fusion weight α of cos(query, p) (the rest goes to min-max coherence).
        #[arg(long)]
        alpha: Option<f32>,
        /// β_cage: multiplier of min-out-degree nodes' features and adjacent edges.
        #[arg(long)]
        beta: Option<f32>,
        /// Candidates reranked (N).
        #[arg(long)]
        candidates: Option<usize>,
        /// CAGE ablation: no min-out-degree reweighting (β = 1).
        #[arg(long)]
        no_reweight: bool,
        /// CAGE ablation: the plain GCN (one relation type; its own trained model).
        #[arg(long)]
        plain_gcn: bool,
        /// CAGE's relevance term: `first-stage` (the first stage's scores, min-max normalised,
        /// so coherence only reorders close candidates), `rank` (the first stage's rank, so a
        /// candidate moves at most ⌊(1 − α)/α · (N − 1)⌋ places) or `cosine` (METHOD.md §4).
        #[arg(long, value_name = "cosine|first-stage|rank")]
        cage_relevance: Option<String>,
        /// CAGE anchors m: coherence with the first stage's top m candidates (0 = all N).
        #[arg(long)]
        anchors: Option<usize>,
        /// CAGE ablation: the diversity-trained (GraphCL) R-GCN instead of the bonding-trained one.
        #[arg(long)]
        graphcl: bool,
    }

    impl CageArgs {
        fn config(&self) -> CliResult<cairn::cage::CageConfig> {
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
            c.validate().map_err(|e| e.to_string())?;
            Ok(c)
        }
    }

    /// `alpha=0:1:0.1` → [0, 0.1, …, 1].
    fn parse_grid(spec: &str) -> CliResult<Vec<f32>> {
        let bad = || format!("--grid {spec:?}: expected alpha=START:END:STEP, e.g. alpha=0:1:0.1");
        let range = spec.strip_prefix("alpha=").ok_or_else(bad)?;
        let parts: Vec<f64> =
            range.split(':').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| bad())?;
        let [start, end, step] = parts[..] else { return Err(bad()) };
        if !(step > 0.0) || end < start {
            return Err(bad());
        }
        let n = ((end - start) / step + 1e-9).floor() as usize;
        Ok((0..=n).map(|i| (start + i as f64 * step) as f32).collect())
    }

    #[cfg(feature = "cage")]
    fn load_cage() -> CliResult<Rc<cairn::cage::Cage>> {
        use cairn::cage::tract::RgcnModel;
        // CAIRN_CAGE_MODEL: another R-GCN ONNX file in place of the bundled one (to evaluate a
        // freshly trained encoder without rebuilding).
        let rgcn = match std::env::var_os("CAIRN_CAGE_MODEL") {
            Some(path) => {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", Path::new(&path).display()))?;
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
    fn load_cage() -> CliResult<Rc<cairn::cage::Cage>> {
        Err("the CAGE methods need a cairn built with `--features cage`".into())
    }

    #[derive(Args)]
    struct ModelArgs {
        /// The all-MiniLM-L6-v2 int8 ONNX file for `dense-minilm` (get it with
        /// tools/fetch_models.sh; needs a build with `--features minilm`).
        #[arg(long, default_value = "models/minilm-int8.onnx")]
        model: PathBuf,
        /// Keep MiniLM's passage vectors in this folder (keyed by the model file's checksum and a
        /// hash of each text) and reuse them in later runs: the `-scale` folders share one
        /// corpus, and a table re-runs the same passages.
        #[arg(long)]
        vector_cache: Option<PathBuf>,
        /// Graph methods: also attach MiniLM's passage vectors, and take the passage prior from
        /// them instead of the static table's (needs `--features minilm`).
        #[arg(long)]
        graph_minilm: bool,
    }

    /// The embedder `method` needs, loaded (the static one is bundled in the binary).
    fn load_embedders(method: Method, models: &ModelArgs) -> CliResult<Embedders> {
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
    fn load_minilm(models: &ModelArgs) -> CliResult<Rc<dyn Embedder>> {
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
    fn load_minilm(_: &ModelArgs) -> CliResult<Rc<dyn Embedder>> {
        Err("method \"dense-minilm\" needs a cairn built with `--features minilm`".into())
    }

    #[derive(Args)]
    struct EvalArgs {
        /// Dataset folder with corpus.jsonl and questions.jsonl (e.g. ../shared/data/hotpotqa).
        #[arg(long)]
        data: PathBuf,
        /// corpus: one index over the whole corpus; pool: one index per question over its pool.
        #[arg(long, default_value = "corpus")]
        setting: String,
        /// Retrieval method: bm25, dense, dense-minilm, hybrid, hipporag, catrag, cage,
        /// bm25+cage or catrag+cage.
        #[arg(long, default_value = "bm25")]
        method: String,
        /// CAGE methods: evaluate every α of a grid (`alpha=0:1:0.1`) and print one line each.
        #[arg(long)]
        grid: Option<String>,
        #[command(flatten)]
        cage: CageArgs,
        /// Cut-off for the extra Recall@k / FCR@k figures; max(k, 5) passages are retrieved.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// Graph methods: print the per-query diagnostics (share of PPR mass on the top 1% of
        /// nodes by degree and by mass, seeds, anchors, overlay, convergence). With --json they
        /// are under "diagnostics".
        #[arg(long)]
        diagnostics: bool,
        /// Evaluate only the first N questions.
        #[arg(long)]
        limit: Option<usize>,
        /// Graph methods: a file of CatRAG configurations, one JSON object a line, each merged
        /// over --catrag-config (ablation flags on top); the graph is built once and every line
        /// is evaluated on it (one output line each; with --json one JSON object each).
        #[arg(long)]
        sweep: Option<PathBuf>,
        /// Write every question's ranked passage ids (and its gold ids) to this JSON file.
        #[arg(long)]
        rankings: Option<PathBuf>,
        #[command(flatten)]
        bm25: Bm25Args,
        #[command(flatten)]
        catrag: CatragArgs,
        #[command(flatten)]
        models: ModelArgs,
        #[command(flatten)]
        llm: LlmArgs,
    }

    /// The user's LLM endpoint (OpenAI-compatible chat completions). The key, if any, is read
    /// from the environment variable CAIRN_LLM_KEY, never from the command line.
    #[derive(Args)]
    struct LlmArgs {
        /// Base URL of the endpoint (e.g. http://127.0.0.1:8091): CatRAG's edge tiers come from it
        /// instead of the offline embedding-similarity tierer.
        #[arg(long)]
        llm: Option<String>,
        /// Model name sent to the endpoint (needed with --llm). (`--model` is the MiniLM file.)
        #[arg(long)]
        llm_model: Option<String>,
        /// LLM calls allowed per query (tier prompts and summaries); sets catrag.llm_call_budget
        /// (default 75).
        #[arg(long)]
        llm_budget: Option<usize>,
        /// Timeout of one request in milliseconds.
        #[arg(long, default_value_t = 120_000)]
        llm_timeout_ms: u64,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 2)]
        llm_concurrency: usize,
        /// Deadline of all the endpoint's calls for one query (tiers, summaries, NER) in
        /// milliseconds; past it the query's remaining edges fall back to Weak at once.
        #[arg(long, default_value_t = 5_000)]
        llm_deadline_ms: u64,
        /// Calls failing in a row that open the circuit breaker (calls then fail at once, for
        /// this query and the next ones, until --llm-breaker-cooldown-ms has passed).
        #[arg(long, default_value_t = 3)]
        llm_breaker_failures: u32,
        /// How long an open circuit breaker refuses calls, milliseconds.
        #[arg(long, default_value_t = 30_000)]
        llm_breaker_cooldown_ms: u64,
        /// Also generate an answer from each question's top 5 passages and report EM, F1 and JSR.
        #[arg(long)]
        answer: bool,
        /// CatRAG: the query mentions of symbolic anchoring come from the endpoint's NER (one call
        /// per question); a failed or empty answer falls back to the rule-based mentions.
        #[arg(long)]
        llm_ner: bool,
        /// Graph methods: build the knowledge graph from the endpoint's OpenIE triples (one call
        /// per indexed passage; a failed or empty answer keeps that passage's rule-based
        /// triples). Slow with a small local model: use --setting pool with --limit.
        #[arg(long)]
        llm_openie: bool,
    }

    impl LlmArgs {
        fn client(&self) -> CliResult<Option<Arc<HttpClient>>> {
            let Some(url) = &self.llm else {
                if self.answer || self.llm_ner || self.llm_openie {
                    return Err("--answer, --llm-ner and --llm-openie need an endpoint: --llm URL --llm-model M".into());
                }
                return Ok(None);
            };
            let model = self
                .llm_model
                .clone()
                .ok_or("--llm needs --llm-model (the model name the endpoint serves)")?;
            let mut c = LlmConfig::new(url, &model);
            c.api_key = std::env::var("CAIRN_LLM_KEY").ok().filter(|k| !k.is_empty());
            c.timeout_ms = self.llm_timeout_ms;
            c.concurrency = self.llm_concurrency;
            c.query_deadline_ms = self.llm_deadline_ms;
            c.breaker_failures = self.llm_breaker_failures;
            c.breaker_cooldown_ms = self.llm_breaker_cooldown_ms;
            Ok(Some(Arc::new(HttpClient::new(c).map_err(|e| e.to_string())?)))
        }
    }

    #[derive(Args)]
    struct GraphArgs {
        /// Dataset folder with corpus.jsonl.
        #[arg(long)]
        data: PathBuf,
        /// Passages added to a graph built on the others, to time an incremental add.
        #[arg(long, default_value_t = 100)]
        add: usize,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
    }

    #[derive(Args)]
    struct BenchArgs {
        /// Dataset folder with corpus.jsonl (questions.jsonl optional).
        #[arg(long)]
        data: PathBuf,
        /// Queries to time: the dataset's questions, or passage titles when it has none.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Retrieval method; for dense methods, indexing includes embedding every passage, for
        /// graph methods building the knowledge graph.
        #[arg(long, default_value = "bm25")]
        method: String,
        #[command(flatten)]
        bm25: Bm25Args,
        #[command(flatten)]
        catrag: CatragArgs,
        #[command(flatten)]
        models: ModelArgs,
    }

    #[derive(Args)]
    struct QueryArgs {
        /// A dataset folder (its corpus.jsonl) or a .jsonl file of passages.
        #[arg(long)]
        data: PathBuf,
        /// Retrieval method: bm25, dense, dense-minilm, hybrid, hipporag or catrag.
        #[arg(long, default_value = "bm25")]
        method: String,
        /// Passages to print.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Graph methods: explain each hit as a tree (the query's seeds and anchors, then per
        /// passage the best paths seed → … → passage); with --json, the whole explanation as one
        /// JSON object.
        #[arg(long)]
        explain: bool,
        /// With --explain: print one JSON object instead of the tree.
        #[arg(long, requires = "explain")]
        json: bool,
        /// The question.
        #[arg(required = true)]
        query: Vec<String>,
        #[command(flatten)]
        bm25: Bm25Args,
        #[command(flatten)]
        catrag: CatragArgs,
        #[command(flatten)]
        models: ModelArgs,
    }

    type CliResult<T> = Result<T, String>;

    pub fn main() -> i32 {
        let cli = Cli::parse();
        let result = match cli.command {
            Command::Eval(a) => eval(a),
            Command::Bench(a) => bench(a),
            Command::Query(a) => query(a),
            Command::Graph(a) => graph(a),
            Command::Index(a) => index_site(a),
        };
        match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e.replace('\n', " "));
                2
            }
        }
    }

    fn eval(a: EvalArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let setting: Setting = a.setting.parse().map_err(|e: cairn::Error| e.to_string())?;
        let mut config = a.bm25.config();
        config.bm25.validate().map_err(|e| e.to_string())?;
        config.catrag = a.catrag.config()?;
        if let Some(b) = a.llm.llm_budget {
            config.catrag.llm_call_budget = b;
        }
        config.cage = a.cage.config()?;
        let mut dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
        if let Some(n) = a.limit {
            dataset.questions.truncate(n);
        }
        let embedders = load_embedders(method, &a.models)?;
        if let Some(spec) = &a.grid {
            if method.cage_first_stage().is_none() {
                return Err(format!("--grid tunes CAGE's alpha: use a CAGE method, not {method}"));
            }
            let mut rows = Vec::new();
            for alpha in parse_grid(spec)? {
                config.cage.alpha = alpha;
                let r = evaluate(&dataset, setting, method, a.k, &config, &embedders)
                    .map_err(|e| e.to_string())?;
                if a.json {
                    let mut v = report_json(&r);
                    v["alpha"] = json!(alpha);
                    rows.push(v);
                } else {
                    let types: Vec<String> = r
                        .by_type
                        .iter()
                        .map(|(t, s)| format!("{t} R@5 {:.3} FCR@5 {:.3}", s.recall_at_5, s.fcr_at_5))
                        .collect();
                    println!(
                        "alpha {alpha:.2}  R@2 {:.3}  R@5 {:.3}  FCR@5 {:.3}  ({})",
                        r.all.recall_at_2,
                        r.all.recall_at_5,
                        r.all.fcr_at_5,
                        types.join("; ")
                    );
                }
            }
            if a.json {
                println!("{}", json!(rows));
            }
            return Ok(());
        }
        if let Some(path) = &a.sweep {
            if method.graph_method().is_none() {
                return Err(format!("--sweep varies the graph methods' configuration: use hipporag or catrag, not {method}"));
            }
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let base = serde_json::to_value(&config.catrag).map_err(|e| e.to_string())?;
            let mut configs = Vec::new();
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let over: serde_json::Value =
                    serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
                let mut merged = base.clone();
                if let (Some(m), Some(o)) = (merged.as_object_mut(), over.as_object()) {
                    for (k, v) in o {
                        m.insert(k.clone(), v.clone());
                    }
                }
                let c: CatragConfig =
                    serde_json::from_value(merged).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
                c.validate().map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
                configs.push((over, c));
            }
            let only: Vec<CatragConfig> = configs.iter().map(|(_, c)| c.clone()).collect();
            let reports = cairn::eval::evaluate_sweep(
                &dataset,
                setting,
                method,
                a.k,
                &config,
                &embedders,
                EvalHooks::default(),
                &only,
            )
            .map_err(|e| e.to_string())?;
            for ((over, _), r) in configs.iter().zip(&reports) {
                if a.json {
                    let mut v = report_json(r);
                    v["sweep"] = over.clone();
                    println!("{v}");
                } else {
                    println!(
                        "{} {over}  R@2 {:.3}  R@5 {:.3}  FCR@5 {:.3}  {:.2} ms/query",
                        r.dataset, r.all.recall_at_2, r.all.recall_at_5, r.all.fcr_at_5, r.ms_per_query
                    );
                }
            }
            return Ok(());
        }
        let client = a.llm.client()?;
        if client.is_none() {
            let hooks = EvalHooks { rankings: a.rankings.is_some(), ..EvalHooks::default() };
            let report = evaluate_with(&dataset, setting, method, a.k, &config, &embedders, hooks)
                .map_err(|e| e.to_string())?;
            if let (Some(path), Some(r)) = (&a.rankings, &report.rankings) {
                std::fs::write(path, json!(r).to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            print_eval(&a, &report, None, None);
            return Ok(());
        }
        let client = client.ok_or("no client")?;
        let is_catrag = method.graph_method() == Some(cairn::catrag::GraphMethod::CatRag);
        let openie_graph = a.llm.llm_openie && method.graph_method().is_some();
        if !(is_catrag || a.llm.answer || openie_graph) {
            return Err(format!(
                "--llm tiers CatRAG's edges: use --method catrag (or add --answer, or --llm-openie with a graph method), not {method}"
            ));
        }
        if a.llm.llm_ner && !is_catrag {
            return Err(format!("--llm-ner feeds CatRAG's anchoring: use --method catrag, not {method}"));
        }
        if a.llm.llm_openie && setting == Setting::Corpus {
            eprintln!(
                "note: --llm-openie in the corpus setting makes one LLM call per corpus passage ({}); --setting pool --limit N calls only for the N questions' pools",
                dataset.corpus.len()
            );
        }
        let ner = Arc::new(LlmNer::new(client.clone() as Arc<dyn LlmClient>));
        let make_ner = {
            let n = ner.clone();
            move || -> Box<dyn cairn::catrag::EntityRecognizer> { Box::new(n.clone()) }
        };
        let openie = LlmOpenIe::new(client.clone() as Arc<dyn LlmClient>);
        let run_openie = |p: &cairn::Passage, i: u32, rule: &[cairn::extract::Triple]| {
            openie.extract(i, &p.title, &p.text, rule)
        };
        let tierer = Arc::new(LlmTierer::new(client.clone() as Arc<dyn LlmClient>));
        let make = {
            let t = tierer.clone();
            move || -> Box<dyn cairn::catrag::EdgeTierer> { Box::new(t.clone()) }
        };
        let mut answer_ms = 0.0;
        let mut answers_log: Vec<serde_json::Value> = Vec::new();
        let mut answerer = |q: &str, top: &[(String, String)]| -> cairn::Result<String> {
            let t = Instant::now();
            // A generated answer is not bound by the query deadline (only by --llm-timeout-ms).
            client.begin_query(None);
            let r = client.chat(&cairn::llm::prompts::answer_prompt(q, top));
            answer_ms += t.elapsed().as_secs_f64() * 1e3;
            let a = cairn::llm::parse::parse_answer(&r?.content);
            answers_log.push(json!({"question": q, "answer": a}));
            Ok(a)
        };
        let hooks = EvalHooks {
            tierer: (method.graph_method() == Some(cairn::catrag::GraphMethod::CatRag)).then_some(&make as _),
            answerer: if a.llm.answer { Some(&mut answerer) } else { None },
            recognizer: (is_catrag && a.llm.llm_ner).then_some(&make_ner as _),
            openie: a.llm.llm_openie.then_some(&run_openie as _),
            rankings: false,
        };
        let report = evaluate_with(&dataset, setting, method, a.k, &config, &embedders, hooks)
            .map_err(|e| e.to_string())?;
        let n = dataset.questions.len().max(1) as f64;
        let st = tierer.stats();
        let llm = json!({
            "endpoint": client.config().completions_url(),
            "model": client.config().model,
            "call_budget": config.catrag.llm_call_budget,
            "tier_queries": st.queries,
            "calls": st.calls,
            "calls_per_query": st.calls as f64 / n,
            "max_calls_per_query": st.max_calls_per_query,
            "tier_calls": st.tier_calls,
            "summary_calls": st.summary_calls,
            "failed_calls": st.failed_calls,
            "tiered_edges": st.tiered_edges,
            "unparsed_edges": st.unparsed_edges,
            "cached_edges": st.cached_edges,
            "budget_skips": st.budget_skips,
            "tiers": {"irrelevant": st.tiers[0], "weak": st.tiers[1], "high": st.tiers[2], "direct": st.tiers[3]},
            "added_ms_per_query": st.llm_ms / n,
            "answer_calls": if a.llm.answer { dataset.questions.len() } else { 0 },
            "answer_ms_per_query": answer_ms / n,
            "http_requests": client.requests_sent(),
            "query_deadline_ms": client.config().query_deadline_ms,
            "refused_calls": client.policy_counters().0,
            "breaker_opened": client.policy_counters().1,
            "log": st.log,
        });
        let mut llm = llm;
        if a.llm.llm_ner {
            llm["ner"] = json!(ner.stats());
        }
        if a.llm.llm_openie {
            llm["openie"] = json!(openie.stats());
        }
        print_eval(&a, &report, Some(llm), a.llm.answer.then_some(answers_log));
        Ok(())
    }

    fn print_eval(
        a: &EvalArgs,
        report: &Report,
        llm: Option<serde_json::Value>,
        answers: Option<Vec<serde_json::Value>>,
    ) {
        if a.json {
            let mut v = report_json(report);
            if a.diagnostics {
                v["diagnostics"] = json!(report.diagnostics);
            }
            if let Some(l) = llm {
                v["llm"] = l;
            }
            if let Some(s) = &report.answers {
                v["answers"] = json!(s);
                v["generated"] = json!(answers);
            }
            println!("{v}");
        } else {
            print_report(report);
            if a.diagnostics {
                print_diagnostics(report);
            }
            if let Some(l) = llm {
                println!(
                    "LLM {} ({}): {:.1} calls/query (max {}, budget {}), {} failed, {} of {} tiered edges unparsed (made Weak), {} budget skips; tiers {}; +{:.0} ms/query for tiers",
                    l["model"].as_str().unwrap_or_default(),
                    l["endpoint"].as_str().unwrap_or_default(),
                    l["calls_per_query"].as_f64().unwrap_or_default(),
                    l["max_calls_per_query"],
                    l["call_budget"],
                    l["failed_calls"],
                    l["unparsed_edges"],
                    l["unparsed_edges"].as_u64().unwrap_or(0) + l["tiered_edges"].as_u64().unwrap_or(0),
                    l["budget_skips"],
                    l["tiers"],
                    l["added_ms_per_query"].as_f64().unwrap_or_default(),
                );
                if l["refused_calls"].as_u64().unwrap_or(0) > 0 {
                    println!(
                        "LLM endpoint failing: {} calls not made (query deadline {} ms spent, or circuit breaker open; it opened {} times): those edges fell back to Weak at once",
                        l["refused_calls"], l["query_deadline_ms"], l["breaker_opened"]
                    );
                }
                for (key, what, unit) in [("ner", "query NER", "question"), ("openie", "OpenIE", "passage")] {
                    let x = &l[key];
                    if x.is_null() {
                        continue;
                    }
                    let calls = x["calls"].as_u64().unwrap_or(0);
                    println!(
                        "LLM {what}: {calls} calls (one per {unit}), {} failed, {} empty answers, {} fell back to the rule-based output; {} {} taken; {:.0} ms in all ({:.0} ms/call)",
                        x["failed_calls"],
                        x["empty_answers"],
                        x["fallbacks"],
                        x["items"],
                        if key == "ner" { "entities" } else { "triples" },
                        x["llm_ms"].as_f64().unwrap_or_default(),
                        x["llm_ms"].as_f64().unwrap_or_default() / calls.max(1) as f64,
                    );
                    if let Some(log) = x["log"].as_array() {
                        for line in log.iter().take(3) {
                            println!("  {key} log: {}", line.as_str().unwrap_or_default());
                        }
                    }
                }
                if let Some(log) = l["log"].as_array() {
                    for line in log.iter().take(5) {
                        println!("  llm log: {}", line.as_str().unwrap_or_default());
                    }
                }
                if let Some(s) = &report.answers {
                    println!(
                        "answers from the top 5: EM {:.3}  F1 {:.3}  JSR {:.3}  ({} questions, {} failed; +{:.0} ms/query)",
                        s.em,
                        s.f1,
                        s.jsr,
                        s.questions,
                        s.failed,
                        l["answer_ms_per_query"].as_f64().unwrap_or_default()
                    );
                }
            }
        }
    }

    fn print_diagnostics(r: &Report) {
        let Some(d) = &r.diagnostics else {
            println!("diagnostics: {} does not walk a graph (no PPR mass to report)", r.method);
            return;
        };
        println!(
            "PPR mass on the top 1% of nodes: by degree (hubs) {:.3}, by mass {:.3}  (mean over {} PPR queries)",
            d.hub_mass_share, d.top1_mass_share, d.ppr_queries
        );
        println!(
            "queries {}  dense fallbacks {}  not converged {}  floored {}  mean PPR iterations {:.1}",
            d.queries, d.fallbacks, d.not_converged, d.floored, d.mean_iterations
        );
        println!(
            "seeds/query {:.2} (anchored {:.2})  mentions {}: exact {}, embedding {}, dropped {}",
            d.mean_seeds,
            d.mean_anchored_seeds,
            d.mentions,
            d.anchored_exact,
            d.anchored_embedding,
            d.mentions_dropped
        );
        let tiers: Vec<String> = d.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
        println!(
            "boosted arcs/query {:.1}  pruned arcs/query {:.1}  tiered: {}  tier failures {}",
            d.mean_boosted_arcs,
            d.mean_pruned_arcs,
            if tiers.is_empty() { "none".to_string() } else { tiers.join(", ") },
            d.tier_failures
        );
        let q: Vec<String> = d.fact_cosines.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
        println!("query-fact cosine quantiles (mean per query): {}", q.join(", "));
    }

    fn report_json(r: &Report) -> serde_json::Value {
        let mut v = json!({
            "dataset": r.dataset,
            "method": r.method,
            "label": r.label,
            "setting": r.setting,
            "questions": r.all.questions,
            "recall@2": r.all.recall_at_2,
            "recall@5": r.all.recall_at_5,
            "fcr@5": r.all.fcr_at_5,
            "ms_per_query": r.ms_per_query,
            "index_ms": r.index_ms,
            "k": r.k,
            "by_type": r.by_type,
        });
        if r.k != 5 {
            v[format!("recall@{}", r.k)] = json!(r.all.recall_at_k);
            v[format!("fcr@{}", r.k)] = json!(r.all.fcr_at_k);
        }
        if let Some(c) = &r.catrag {
            v["catrag"] = json!(c);
        }
        if let Some(g) = &r.graph {
            v["graph"] = json!(g);
        }
        if let Some(d) = &r.diagnostics {
            v["hub_mass_share"] = json!(d.hub_mass_share);
            v["top1_mass_share"] = json!(d.top1_mass_share);
        }
        v
    }

    fn print_report(r: &Report) {
        println!(
            "dataset {}  method {}  setting {}  questions {}",
            r.dataset, r.label, r.setting, r.all.questions
        );
        let extra = if r.k != 5 { format!("  Recall@{k}  FCR@{k}", k = r.k) } else { String::new() };
        println!("{:<16} {:>5}  {:>9}  {:>9}  {:>6}{extra}", "type", "n", "Recall@2", "Recall@5", "FCR@5");
        let row = |name: &str, s: &cairn::eval::Scores| {
            let extra = if r.k != 5 {
                format!("  {:>8.3}  {:>6.3}", s.recall_at_k, s.fcr_at_k)
            } else {
                String::new()
            };
            println!(
                "{:<16} {:>5}  {:>9.3}  {:>9.3}  {:>6.3}{extra}",
                name, s.questions, s.recall_at_2, s.recall_at_5, s.fcr_at_5
            );
        };
        row("all", &r.all);
        if r.by_type.len() > 1 {
            for (t, s) in &r.by_type {
                row(t, s);
            }
        }
        println!("{:.3} ms per query; {:.1} ms building indexes", r.ms_per_query, r.index_ms);
    }

    fn percentile(sorted: &[f64], p: f64) -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        // Nearest-rank percentile.
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank.min(sorted.len()) - 1]
    }

    /// Peak resident set size of this process in MiB (Linux VmHWM), if known.
    fn peak_rss_mb() -> Option<f64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    }

    /// Build the engine over `corpus` with the embedder `method` needs, the knowledge graph for
    /// a graph method and CAGE's graph embeddings for a CAGE method (the page's lifecycle,
    /// [`cairn::engine::Engine`]); returns its index.
    fn build_index(
        corpus: Corpus,
        config: &IndexConfig,
        method: Method,
        embedders: &Embedders,
    ) -> CliResult<Index> {
        let err = |e: cairn::Error| e.to_string();
        let mut engine = Engine::with_corpus(config.clone(), corpus).map_err(err)?;
        if let Some(c) = &embedders.cage {
            engine.set_cage(c.clone());
        }
        let slot = method.embedder().filter(|&s| embedders.get(s).is_some());
        if let Some(slot) = slot {
            if let Some(e) = embedders.get(slot) {
                engine.set_embedder(slot, e.clone(), &mut |_, _, _| {}).map_err(err)?;
            }
        }
        engine.build(&mut |_, _, _| {}).map_err(err)?;
        if slot == Some(EmbedderSlot::Static) && method.graph_method().is_some() {
            engine.build_graph(&mut |_, _, _| {}).map_err(err)?;
        }
        if embedders.cage.is_some() && method.cage_first_stage().is_some() {
            engine.compute_cage_z(&mut |_, _, _| {}).map_err(err)?;
        }
        into_index(engine)
    }

    /// The built index out of `engine`.
    fn into_index(engine: Engine) -> CliResult<Index> {
        engine.into_index().map_err(|e| e.to_string())
    }

    fn bench(a: BenchArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let embedders = load_embedders(method, &a.models)?;
        let mut config = a.bm25.config();
        config.bm25.validate().map_err(|e| e.to_string())?;
        config.catrag = a.catrag.config()?;
        let (dataset, parse_ms) = Dataset::load_timed(&a.data).map_err(|e| e.to_string())?;
        let n = dataset.corpus.len();
        let (queries, source): (Vec<String>, &str) = if dataset.questions.is_empty() {
            let step = (n / a.queries.max(1)).max(1);
            let qs = dataset
                .corpus
                .passages()
                .iter()
                .step_by(step)
                .take(a.queries)
                .map(|p| p.title.clone())
                .collect();
            (qs, "passage titles")
        } else {
            (dataset.questions.iter().take(a.queries).map(|q| q.question.clone()).collect(), "questions")
        };
        let t = Instant::now();
        let cpu0 = thread_cpu_ms();
        let index = build_index(dataset.corpus, &config, method, &embedders)?;
        let index_ms = t.elapsed().as_secs_f64() * 1e3;
        let index_cpu_ms = thread_cpu_ms().zip(cpu0).map(|(b, a)| b - a);
        let mut times = Vec::with_capacity(queries.len());
        let mut cpu_times = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            let c = thread_cpu_ms();
            let hits = index.search(q, 10, method).map_err(|e| e.to_string())?;
            std::hint::black_box(hits);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            if let (Some(b), Some(a)) = (thread_cpu_ms(), c) {
                cpu_times.push(b - a);
            }
        }
        times.sort_by(|a, b| a.total_cmp(b));
        cpu_times.sort_by(|a, b| a.total_cmp(b));
        let stats = index.stats();
        let out = json!({
            "passages": n,
            "index_ms": index_ms,
            "parse_ms": parse_ms,
            "index_cpu_ms": index_cpu_ms,
            "passages_per_s": if index_ms > 0.0 { n as f64 / (index_ms / 1e3) } else { 0.0 },
            "query_ms_p50": percentile(&times, 50.0),
            "query_ms_p95": percentile(&times, 95.0),
            // The same searches in this thread's CPU time (null where it is not measured).
            "query_cpu_ms_p50": (!cpu_times.is_empty()).then(|| percentile(&cpu_times, 50.0)),
            "query_cpu_ms_p95": (!cpu_times.is_empty()).then(|| percentile(&cpu_times, 95.0)),
            "query_cpu_ms_mean": (!cpu_times.is_empty()).then(|| cpu_times.iter().sum::<f64>() / cpu_times.len() as f64),
            "index_bytes": stats.index_bytes,
            "peak_rss_mb": peak_rss_mb(),
            "queries": times.len(),
            "query_source": source,
            "text_bytes": stats.text_bytes,
            "terms": stats.terms,
            "postings": stats.postings,
            "method": method.name(),
        });
        let out = match method.graph_method() {
            Some(_) if method.cage_first_stage().is_none() => {
                let mut out = out;
                // This thread's CPU time where Linux gives it (a shared machine's waits for a
                // core left out), else wall time.
                let origin = Instant::now();
                let wall = || origin.elapsed().as_secs_f64() * 1e3;
                let (clock, name): (&dyn Fn() -> f64, &str) = if thread_cpu_ms().is_some() {
                    (&|| thread_cpu_ms().unwrap_or(0.0), "thread CPU time")
                } else {
                    (&wall, "wall time")
                };
                out["graph"] = cairn::bench::graph_figures(&index, &queries, method, clock).map_err(|e| e.to_string())?;
                out["graph"]["clock"] = json!(name);
                out
            }
            _ => out,
        };
        println!("{out}");
        Ok(())
    }

    /// This thread's CPU time in milliseconds (Linux `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`,
    /// nanosecond resolution; `/proc/thread-self/schedstat` only moves at scheduler ticks, 4 ms
    /// here), `None` elsewhere.
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    fn thread_cpu_ms() -> Option<f64> {
        #[repr(C)]
        struct Timespec {
            tv_sec: i64,
            tv_nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
        }
        /// Linux's `CLOCK_THREAD_CPUTIME_ID`.
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut t = Timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: glibc's clock_gettime writes one `struct timespec` (two 64-bit fields on
        // x86-64 and aarch64 Linux) through a valid pointer.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
        (rc == 0).then(|| t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6)
    }

    /// This thread's CPU time: not measured off 64-bit Linux.
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    fn thread_cpu_ms() -> Option<f64> {
        None
    }

    fn index_site(a: IndexArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let needs_dense = method.embedder() == Some(EmbedderSlot::Static);
        if method == Method::DenseMinilm
            || (a.no_dense && needs_dense)
            || (method.graph_method().is_some() && !a.graph)
        {
            return Err(format!(
                "--method {method} needs {}",
                if method == Method::DenseMinilm {
                    "MiniLM vectors, which `cairn index` does not compute".to_string()
                } else if a.no_dense && needs_dense {
                    "the static embedder: drop --no-dense".to_string()
                } else {
                    "the knowledge graph: add --graph".to_string()
                }
            ));
        }
        if a.graph && a.no_dense {
            return Err("--graph needs the static embedder: drop --no-dense".into());
        }
        let web = crate::site_assets::web_files(a.pkg.as_deref())?;
        if let Some(site) = &a.site {
            if !site.is_dir() {
                let jsonl = site.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
                return Err(format!(
                    "{}: not a folder (give the folder of the built site{})",
                    site.display(),
                    if jsonl { ", or index a JSONL corpus with --jsonl" } else { "" }
                ));
            }
        }
        if a.out.exists() && !a.out.is_dir() {
            return Err(format!("--out {}: a file, not a folder", a.out.display()));
        }
        std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
        let clock = Instant::now();
        let mut pages = None;
        let mut warnings = Vec::new();
        let corpus = match (&a.site, &a.jsonl) {
            (Some(site), None) => {
                let skip = vec![a.out.canonicalize().map_err(|e| format!("{}: {e}", a.out.display()))?];
                let read = cairn::site::read_site(site, &a.base_url, &skip).map_err(|e| e.to_string())?;
                for w in &read.warnings {
                    eprintln!("warning: {w}");
                }
                if read.passages.is_empty() {
                    return Err(format!(
                        "{}: no page has any text to index ({} read)",
                        site.display(),
                        read.pages
                    ));
                }
                pages = Some(read.pages);
                warnings = read.warnings;
                let mut c = Corpus::new();
                c.extend(read.passages).map_err(|e| e.to_string())?;
                c
            }
            (None, Some(path)) => {
                let corpus = load_corpus(path)?;
                if corpus.is_empty() {
                    return Err(format!("{}: no passages to index", path.display()));
                }
                corpus
            }
            _ => return Err("give a site folder or --jsonl".into()),
        };
        // A site's ids are its pages' URLs; a JSONL corpus's are links only if every one is.
        let passages = corpus.passages();
        let not_link = |p: &&cairn::Passage| !cairn::site::is_link(&p.id);
        let first = if pages.is_some() { None } else { passages.iter().position(|p| not_link(&p)) };
        let links = first.is_none();
        if let Some(i) = first {
            let n = passages[i..].iter().filter(not_link).count();
            eprintln!(
                "note: {n} of {} passage ids {} (root-relative or http(s)://; the first: {:?}, passage {}): \
                 the widget shows the results' titles without links",
                passages.len(),
                if n == 1 { "is not a URL" } else { "are not URLs" },
                passages[i].id,
                i + 1
            );
        }
        let read_ms = ms(clock);
        let clock = Instant::now();
        let err = |e: cairn::Error| e.to_string();
        let mut engine = Engine::with_corpus(IndexConfig::default(), corpus).map_err(err)?;
        if !a.no_dense {
            let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().map_err(err)?);
            engine.set_embedder(EmbedderSlot::Static, e, &mut |_, _, _| {}).map_err(err)?;
        }
        engine.build(&mut |_, _, _| {}).map_err(err)?;
        let build_ms = ms(clock);
        let clock = Instant::now();
        if a.graph && !a.no_dense {
            engine.build_graph(&mut |_, _, _| {}).map_err(err)?;
        }
        let graph_ms = ms(clock);
        let clock = Instant::now();
        if a.cage {
            if a.no_dense {
                return Err("--cage needs the static embedder (drop --no-dense)".into());
            }
            engine.set_cage(load_cage()?);
            engine.compute_cage_z(&mut |_, _, _| {}).map_err(err)?;
        }
        let cage_ms = ms(clock);
        let index = engine.index().map_err(err)?;
        let cage_bytes = index.cage_embeddings().map(|z| 17 + z.rows() * (z.dim() + 5));
        // Three files: the base (config, passage ids and titles, BM25's postings: all a first
        // keyword result needs, so it waits for nothing else), the passages' texts, and the
        // extras (passage vectors, graph, CAGE), which the loader reads once the texts and the
        // embedder are in place.
        let clock = Instant::now();
        let split = engine.index().and_then(|i| i.to_split_bytes()).map_err(err)?;
        let (bytes, texts, extras) = (split.base, split.texts, split.extras);
        let save_ms = ms(clock);
        let clock = Instant::now();
        let gzip = |data: &[u8]| -> CliResult<Vec<u8>> {
            let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
            std::io::Write::write_all(&mut gz, data).map_err(|e| e.to_string())?;
            Ok(gz.finish().map_err(|e| e.to_string())?)
        };
        let gz = gzip(&bytes)?;
        let texts_gz = gzip(&texts)?;
        let extras_gz = extras.as_deref().map(gzip).transpose()?;
        let gzip_ms = ms(clock);
        let clock = Instant::now();
        let mut loaded = Engine::new(IndexConfig::default()).map_err(err)?;
        loaded.load(&bytes, &mut |_, _, _| {}).map_err(err)?;
        loaded.load_texts(&texts).map_err(err)?;
        if let Some(e) = engine.embedder(EmbedderSlot::Static) {
            loaded.set_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _, _| {}).map_err(err)?;
        }
        if let Some(x) = &extras {
            loaded.load_extras(x, &mut |_, _, _| {}).map_err(err)?;
        }
        let load_ms = ms(clock);
        drop(loaded);
        let write = |name: &str, data: &[u8]| -> CliResult<()> {
            let path = a.out.join(name);
            std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))
        };
        write("index.cairn.gz", &gz)?;
        write("texts.cairn.gz", &texts_gz)?;
        // Files an earlier run into this folder wrote and this one does not (a BM25-only index
        // written over one with vectors): removed, so that they are not deployed with it.
        let remove_stale = |name: &str| -> CliResult<()> {
            let path = a.out.join(name);
            if path.is_file() {
                std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(())
        };
        match &extras_gz {
            Some(x) => write("extras.cairn.gz", x)?,
            None => remove_stale("extras.cairn.gz")?,
        }
        let extras_bytes = extras.as_ref().map(Vec::len);
        let extras_gz_bytes = extras_gz.as_ref().map(Vec::len);
        for (name, data) in web.files() {
            write(name, data)?;
        }
        if !a.no_dense {
            write("static-minilm.bin", cairn::embed::static_embedder::MINILM_TABLE)?;
            write("minilm-vocab.txt", cairn::embed::wordpiece::MINILM_VOCAB.as_bytes())?;
        } else {
            remove_stale("static-minilm.bin")?;
            remove_stale("minilm-vocab.txt")?;
        }
        // The English text pipeline's resources, which the web package fetches to load an index
        // with a knowledge graph (its query anchoring runs the pipeline; BM25 needs none).
        let needs_text = index.graph().is_some();
        let mut text_files = Vec::new();
        if needs_text {
            let dir = a.out.join("text");
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let r = cairn::text::TextResources::embedded();
            let bytes = [r.pos_perceptron, r.lemma_rules, r.lemma_index, r.gazetteer];
            for (name, data) in cairn::text::RESOURCE_FILES.iter().zip(bytes) {
                let file = format!("text/{name}");
                write(&file, data)?;
                text_files.push(file);
            }
        } else {
            for name in cairn::text::RESOURCE_FILES {
                remove_stale(&format!("text/{name}"))?;
            }
            // the folder too, when that leaves it empty (it is left alone otherwise)
            let _ = std::fs::remove_dir(a.out.join("text"));
        }
        let stats = index.stats();
        let methods: Vec<&str> =
            Method::ALL.into_iter().filter(|m| index.supports(*m)).map(Method::name).collect();
        let manifest = json!({
            "format_version": bytes.get(8..12).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            "index": "index.cairn.gz",
            "passages": stats.passages,
            "text_bytes": stats.text_bytes,
            "index_bytes": bytes.len(),
            "index_gz_bytes": gz.len(),
            "texts": "texts.cairn.gz",
            "texts_bytes": texts.len(),
            "texts_gz_bytes": texts_gz.len(),
            "extras": extras.as_ref().map(|_| "extras.cairn.gz"),
            "extras_bytes": extras_bytes,
            "extras_gz_bytes": extras_gz_bytes,
            "methods": methods,
            "default_method": method.name(),
            "graph": index.graph().is_some(),
            "links": links,
            "text_pipeline": if needs_text { json!(text_files) } else { json!(null) },
            "embedder": if !a.no_dense {
                json!({"table": "static-minilm.bin", "vocab": "minilm-vocab.txt"})
            } else {
                json!(null)
            },
        });
        write("manifest.json", format!("{manifest:#}\n").as_bytes())?;
        let per_mb = |n: usize| n as f64 / (stats.text_bytes.max(1) as f64 / 1e6);
        let wasm_bytes = web.wasm_bytes();
        println!(
            "{}",
            json!({
                "out": a.out.display().to_string(),
                "pages": pages,
                "warnings": warnings.len(),
                "passages": stats.passages,
                "text_bytes": stats.text_bytes,
                "index_bytes": bytes.len(),
                "index_gz_bytes": gz.len(),
                "index_bytes_per_mb_text": per_mb(bytes.len()),
                "index_gz_bytes_per_mb_text": per_mb(gz.len()),
                "texts_bytes": texts.len(),
                "texts_gz_bytes": texts_gz.len(),
                "extras_bytes": extras_bytes,
                "extras_gz_bytes": extras_gz_bytes,
                "total_gz_bytes": gz.len() + texts_gz.len() + extras_gz_bytes.unwrap_or(0),
                "total_gz_bytes_per_mb_text": per_mb(gz.len() + texts_gz.len() + extras_gz_bytes.unwrap_or(0)),
                "wasm_bytes": wasm_bytes,
                "wasm_package": web.source.to_string(),
                "cage_z_bytes": cage_bytes,
                "cage_ms": cage_ms,
                "graph": index.knowledge_graph().map(|g| json!(g.report().counts)),
                "read_ms": read_ms,
                "build_ms": build_ms,
                "graph_ms": graph_ms,
                "save_ms": save_ms,
                "gzip_ms": gzip_ms,
                "native_load_ms": load_ms,
                "methods": methods,
            })
        );
        Ok(())
    }

    fn ms(since: Instant) -> f64 {
        since.elapsed().as_secs_f64() * 1e3
    }

    fn load_corpus(path: &Path) -> CliResult<Corpus> {
        if path.is_dir() {
            return Dataset::load(path).map(|d| d.corpus).map_err(|e| e.to_string());
        }
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut corpus = Corpus::new();
        corpus
            .extend(parse_jsonl_bytes(&path.display().to_string(), &bytes).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        Ok(corpus)
    }

    fn query(a: QueryArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let embedders = load_embedders(method, &a.models)?;
        let corpus = load_corpus(&a.data)?;
        let mut config = a.bm25.config();
        config.catrag = a.catrag.config()?;
        let index = build_index(corpus, &config, method, &embedders)?;
        let q = a.query.join(" ");
        if a.explain {
            if method.graph_method().is_none() {
                return Err(format!("--explain needs a graph method (hipporag or catrag), not {method}"));
            }
            let ex = index.explain(&q, a.k, method, &ExplainConfig::default()).map_err(|e| e.to_string())?;
            if !a.json {
                print!("{}", explain_tree(&index, &q, &ex));
                return Ok(());
            }
            let mut v = json!(ex);
            // Corpus ids next to the internal passage indices.
            for (i, h) in ex.hits.iter().enumerate() {
                if let Some(p) = index.corpus().get(h.passage) {
                    v["hits"][i]["id"] = json!(p.id);
                    v["hits"][i]["title"] = json!(p.title);
                }
            }
            println!("{v}");
            return Ok(());
        }
        let found = index.run(&q, a.k, method, Default::default()).map_err(|e| e.to_string())?;
        let hits = &found.hits;
        if hits.is_empty() {
            println!("no passage matches {q:?}");
        }
        if let Some(why) = found.trace.weak {
            println!("weak results: {why}");
        }
        for (rank, h) in hits.iter().enumerate() {
            if let Some(p) = index.corpus().get(h.passage) {
                let snippet: String = p.text.chars().take(160).collect();
                println!("{:>2}. {:>8.3}  {}  [{}]\n    {}", rank + 1, h.score, p.title, p.id, snippet);
            }
        }
        Ok(())
    }

    /// The explanation as a tree for a person: the query's anchors and seeds, then per hit its
    /// best paths from a seed, one arc per line (type, fact, this query's multiplier), ending at
    /// the passage.
    fn explain_tree(index: &Index, query: &str, ex: &cairn::search::SearchExplanation) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let r = &ex.retrieval;
        let _ = writeln!(o, "{} for {:?}", ex.method.name(), query);
        if let Some(f) = &r.fallback {
            let _ = writeln!(o, "no entity seed ({}): ranked by dense similarity", json!(f).as_str().unwrap_or("fallback"));
        }
        if !r.anchors.is_empty() {
            let _ = writeln!(o, "anchors");
            let n = r.anchors.len();
            for (i, a) in r.anchors.iter().enumerate() {
                let branch = if i + 1 == n { "└─" } else { "├─" };
                let target = match (a.node, a.how) {
                    (Some(node), Some(how)) => format!(
                        "{} ({}, similarity {:.2})",
                        node_name(index, node),
                        json!(how).as_str().unwrap_or(""),
                        a.similarity
                    ),
                    _ => format!("nothing (best similarity {:.2})", a.similarity),
                };
                let _ = writeln!(o, "{branch} {:?} → {target}", a.mention);
            }
        }
        let _ = writeln!(o, "seeds (share of the teleport vector)");
        let shown = r.seeds.len().min(8);
        for (i, sd) in r.seeds.iter().take(shown).enumerate() {
            let branch = if i + 1 == shown && r.seeds.len() <= shown { "└─" } else { "├─" };
            let channel = json!(sd.channel);
            let _ = writeln!(o, "{branch} {:<40} {:>5.1}%  {}", sd.name, sd.share * 100.0, channel.as_str().unwrap_or(""));
        }
        if r.seeds.len() > shown {
            let _ = writeln!(o, "└─ … {} more", r.seeds.len() - shown);
        }
        for (rank, (hit, pe)) in ex.hits.iter().zip(&ex.passages).enumerate() {
            let (id, title) =
                index.corpus().get(hit.passage).map_or(("?", ""), |p| (p.id.as_str(), p.title.as_str()));
            let _ = writeln!(o, "\n{}. {title} [{id}]  score {:.4}", rank + 1, hit.score);
            if pe.paths.is_empty() {
                let _ = writeln!(o, "   no path from a seed within {} arcs{}", ExplainConfig::default().max_path_arcs,
                    if pe.truncated { " (search budget spent)" } else { "" });
            }
            let np = pe.paths.len();
            for (pi, path) in pe.paths.iter().enumerate() {
                let last = pi + 1 == np;
                let (branch, stem) = if last { ("└─", "   ") } else { ("├─", "│  ") };
                let seed = path.nodes.first().map_or("?", |n| n.name.as_str());
                let _ = writeln!(o, "   {branch} seed {seed}  (path probability {:.2e})", path.probability);
                for (e, to) in path.edges.iter().zip(path.nodes.iter().skip(1)) {
                    let kind = json!(e.edge_type);
                    let mut label = kind.as_str().unwrap_or("edge").to_string();
                    if let Some(f) = &e.fact {
                        let _ = write!(label, " \"{f}\"");
                    }
                    if (e.multiplier - 1.0).abs() > 1e-6 {
                        let _ = write!(label, " ×{:.2}", e.multiplier);
                    }
                    let target = if to.kind == cairn::graph::NodeKind::Passage {
                        format!("passage {title}")
                    } else {
                        to.name.clone()
                    };
                    let _ = writeln!(o, "   {stem}  ─[{label}]→ {target}");
                }
            }
        }
        o
    }

    /// An entity node's display name (its id when it has none).
    fn node_name(index: &Index, node: u32) -> String {
        match index.graph().and_then(|g| g.node(node)) {
            Some(cairn::graph::NodeRef::Entity { name, .. }) => name.to_string(),
            _ => format!("node {node}"),
        }
    }

    /// `cairn graph`: build the knowledge graph of a dataset folder (rule-based OpenIE + the
    /// static embedder, METHOD.md §1) and report what it holds and what it cost, then time adding
    /// the last `--add` passages to a graph built on the others.
    fn graph(a: GraphArgs) -> CliResult<()> {
        let dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
        let n = dataset.corpus.len();
        let embedder: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().map_err(|e| e.to_string())?);
        let total = Instant::now();
        let mut index =
            Index::build(dataset.corpus.clone(), &IndexConfig::default()).map_err(|e| e.to_string())?;
        let bm25_ms = total.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let report =
            index.build_graph(embedder.clone(), &mut |_, _, _| {}).map_err(|e| e.to_string())?.clone();
        let graph_ms = t.elapsed().as_secs_f64() * 1e3;
        let rss_after_build = peak_rss_mb();
        let extract = report.extract.clone().unwrap_or_default();
        let per = |x: usize, d: usize| if d > 0 { x as f64 / d as f64 } else { 0.0 };

        // Incremental add: a graph on the first n − add passages, then the last `add` added.
        let add = a.add.min(n);
        let first = n - add;
        let pipeline = Pipeline::english().map_err(|e| e.to_string())?;
        let passages = dataset.corpus.passages();
        let mut head = cairn::Corpus::new();
        head.extend(passages[..first].to_vec()).map_err(|e| e.to_string())?;
        let base_triples = extract_corpus(&pipeline, &head, &mut |_, _| {}).triples;
        let base = cairn::graph::build_graph(
            GraphConfig::default(),
            &passages[..first],
            &base_triples,
            embedder.as_ref(),
            &mut |_, _, _| {},
        )
        .map_err(|e| e.to_string())?;
        let t = Instant::now();
        let mut new_triples = Vec::new();
        for (i, p) in passages[first..].iter().enumerate() {
            new_triples.extend(extract_passage(&pipeline, (first + i) as u32, &p.title, &p.text).0);
        }
        let add_extract_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let (extended, summary) = base
            .extend(first as u32, &passages[first..], &new_triples, embedder.as_ref(), &mut |_, _, _| {})
            .map_err(|e| e.to_string())?;
        let add_graph_ms = t.elapsed().as_secs_f64() * 1e3;
        let same_as_one_build = extended.counts() == report.counts;

        let c = &report.counts;
        let out = json!({
            "dataset": dataset.name,
            "passages": n,
            "nodes": c.nodes,
            "entity_nodes": c.entity_nodes,
            "passage_nodes": c.passage_nodes,
            "facts": c.facts,
            "edges": {
                "relation": c.relation_edges,
                "synonym": c.synonym_edges,
                "context": c.context_edges,
                "arcs": c.arcs,
            },
            "extraction": {
                "triples": report.triples,
                "triples_per_passage": per(report.triples, extract.passages),
                "triples_per_english_passage": per(report.triples, extract.english_passages),
                "english_passages": extract.english_passages,
                "non_english_passages": extract.non_english_passages,
                "sentences": extract.sentences,
                "triples_used": report.add.triples_used,
                "triples_repeated": report.add.triples_repeated,
                "triples_empty": report.add.triples_empty,
                "duplicate_passages": report.add.duplicate_passages,
            },
            "build_ms": {
                "extract": report.extract_ms,
                "add": report.add_ms,
                "embed": report.embed_ms,
                "synonyms": report.synonyms_ms,
                "csr": report.csr_ms,
                "total": graph_ms,
                "bm25_index": bm25_ms,
            },
            "synonyms": report.synonyms,
            "peak_rss_mb": rss_after_build,
            "add_passages": {
                "passages": add,
                "onto": first,
                "extract_ms": add_extract_ms,
                "graph_ms": add_graph_ms,
                "total_ms": add_extract_ms + add_graph_ms,
                "new_entities": summary.new_entities,
                "new_facts": summary.new_facts,
                "same_counts_as_one_build": same_as_one_build,
            },
        });
        if a.json {
            println!("{out}");
            return Ok(());
        }
        println!("dataset {}  passages {n}", dataset.name);
        println!(
            "nodes {} (entities {}, passages {})  facts {}",
            c.nodes, c.entity_nodes, c.passage_nodes, c.facts
        );
        println!(
            "edges: relation {}  synonym {}  context {}  ({} arcs)",
            c.relation_edges, c.synonym_edges, c.context_edges, c.arcs
        );
        println!(
            "extraction: {} triples, {:.2} per passage ({:.2} per English passage); English {} / non-English {}",
            report.triples,
            per(report.triples, extract.passages),
            per(report.triples, extract.english_passages),
            extract.english_passages,
            extract.non_english_passages
        );
        let ms = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0} ms"));
        println!(
            "build: extract {}  add {}  embed {}  synonyms {}  CSR {}  (graph total {graph_ms:.0} ms)",
            ms(report.extract_ms),
            ms(report.add_ms),
            ms(report.embed_ms),
            ms(report.synonyms_ms),
            ms(report.csr_ms)
        );
        if let Some(r) = rss_after_build {
            println!("peak RSS {r:.0} MiB");
        }
        println!(
            "add {add} passages onto {first}: extract {add_extract_ms:.0} ms + graph {add_graph_ms:.0} ms = {:.0} ms (same counts as one build: {same_as_one_build})",
            add_extract_ms + add_graph_ms
        );
        Ok(())
    }
}
