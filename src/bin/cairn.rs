//! `cairn`: the native command-line interface — `eval`, `bench` and `query`.
//!
//! Every error is one line on stderr starting with `error:` and exits with status 2.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use cairn::corpus::{parse_jsonl, Corpus};
    use std::rc::Rc;

    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::eval::{evaluate, Dataset, Embedders, Report, Setting};
    use cairn::index::{Bm25Config, EmbedderSlot, Index, IndexConfig, Method};
    use clap::{Args, Parser, Subcommand};
    use serde_json::json;

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
    }

    #[derive(Args)]
    struct Bm25Args {
        /// BM25 term-frequency saturation.
        #[arg(long, default_value_t = 0.9)]
        k1: f32,
        /// BM25 length normalisation.
        #[arg(long, default_value_t = 0.4)]
        b: f32,
    }

    impl Bm25Args {
        fn config(&self) -> IndexConfig {
            IndexConfig { bm25: Bm25Config { k1: self.k1, b: self.b } }
        }
    }

    #[derive(Args)]
    struct ModelArgs {
        /// The all-MiniLM-L6-v2 int8 ONNX file for `dense-minilm` (get it with
        /// tools/fetch_models.sh; needs a build with `--features minilm`).
        #[arg(long, default_value = "models/minilm-int8.onnx")]
        model: PathBuf,
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
            Some(EmbedderSlot::Minilm) => out.minilm = Some(load_minilm(&models.model)?),
        }
        Ok(out)
    }

    #[cfg(feature = "minilm")]
    fn load_minilm(path: &Path) -> CliResult<Rc<dyn Embedder>> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("{}: {e} (run tools/fetch_models.sh to get the model)", path.display()))?;
        let e = cairn::embed::minilm::MiniLmEmbedder::from_onnx_bytes(&bytes).map_err(|e| e.to_string())?;
        Ok(Rc::new(e))
    }

    #[cfg(not(feature = "minilm"))]
    fn load_minilm(_: &Path) -> CliResult<Rc<dyn Embedder>> {
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
        /// Retrieval method: bm25, dense, dense-minilm or hybrid.
        #[arg(long, default_value = "bm25")]
        method: String,
        /// Cut-off for the extra Recall@k / FCR@k figures; max(k, 5) passages are retrieved.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        bm25: Bm25Args,
        #[command(flatten)]
        models: ModelArgs,
    }

    #[derive(Args)]
    struct BenchArgs {
        /// Dataset folder with corpus.jsonl (questions.jsonl optional).
        #[arg(long)]
        data: PathBuf,
        /// Queries to time: the dataset's questions, or passage titles when it has none.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Retrieval method; for dense methods, indexing includes embedding every passage.
        #[arg(long, default_value = "bm25")]
        method: String,
        #[command(flatten)]
        bm25: Bm25Args,
        #[command(flatten)]
        models: ModelArgs,
    }

    #[derive(Args)]
    struct QueryArgs {
        /// A dataset folder (its corpus.jsonl) or a .jsonl file of passages.
        #[arg(long)]
        data: PathBuf,
        /// Retrieval method: bm25, dense, dense-minilm or hybrid.
        #[arg(long, default_value = "bm25")]
        method: String,
        /// Passages to print.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// The question.
        #[arg(required = true)]
        query: Vec<String>,
        #[command(flatten)]
        bm25: Bm25Args,
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
        let config = a.bm25.config();
        config.bm25.validate().map_err(|e| e.to_string())?;
        let dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
        let embedders = load_embedders(method, &a.models)?;
        let report =
            evaluate(&dataset, setting, method, a.k, &config, &embedders).map_err(|e| e.to_string())?;
        if a.json {
            println!("{}", report_json(&report));
        } else {
            print_report(&report);
        }
        Ok(())
    }

    fn report_json(r: &Report) -> serde_json::Value {
        let mut v = json!({
            "dataset": r.dataset,
            "method": r.method,
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
        v
    }

    fn print_report(r: &Report) {
        println!(
            "dataset {}  method {}  setting {}  questions {}",
            r.dataset, r.method, r.setting, r.all.questions
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

    /// Build the index over `corpus` and attach the embedder `method` needs.
    fn build_index(
        corpus: Corpus,
        config: &IndexConfig,
        method: Method,
        embedders: &Embedders,
    ) -> CliResult<Index> {
        let mut index = Index::build(corpus, config).map_err(|e| e.to_string())?;
        if let Some(slot) = method.embedder() {
            if let Some(e) = embedders.get(slot) {
                index.attach_embedder(slot, e.clone(), &mut |_, _| {}).map_err(|e| e.to_string())?;
            }
        }
        Ok(index)
    }

    fn bench(a: BenchArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let embedders = load_embedders(method, &a.models)?;
        let config = a.bm25.config();
        config.bm25.validate().map_err(|e| e.to_string())?;
        let dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
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
        let index = build_index(dataset.corpus, &config, method, &embedders)?;
        let index_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            let hits = index.search(q, 10, method).map_err(|e| e.to_string())?;
            std::hint::black_box(hits);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let stats = index.stats();
        let out = json!({
            "passages": n,
            "index_ms": index_ms,
            "passages_per_s": if index_ms > 0.0 { n as f64 / (index_ms / 1e3) } else { 0.0 },
            "query_ms_p50": percentile(&times, 50.0),
            "query_ms_p95": percentile(&times, 95.0),
            "index_bytes": stats.index_bytes,
            "peak_rss_mb": peak_rss_mb(),
            "queries": times.len(),
            "query_source": source,
            "text_bytes": stats.text_bytes,
            "terms": stats.terms,
            "postings": stats.postings,
            "method": method.name(),
        });
        println!("{out}");
        Ok(())
    }

    fn load_corpus(path: &Path) -> CliResult<Corpus> {
        if path.is_dir() {
            return Dataset::load(path).map(|d| d.corpus).map_err(|e| e.to_string());
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut corpus = Corpus::new();
        corpus
            .extend(parse_jsonl(&path.display().to_string(), &text).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        Ok(corpus)
    }

    fn query(a: QueryArgs) -> CliResult<()> {
        let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
        let embedders = load_embedders(method, &a.models)?;
        let corpus = load_corpus(&a.data)?;
        let index = build_index(corpus, &a.bm25.config(), method, &embedders)?;
        let q = a.query.join(" ");
        let hits = index.search(&q, a.k, method).map_err(|e| e.to_string())?;
        if hits.is_empty() {
            println!("no passage matches {q:?}");
        }
        for (rank, h) in hits.iter().enumerate() {
            if let Some(p) = index.corpus().get(h.passage) {
                let snippet: String = p.text.chars().take(160).collect();
                println!("{:>2}. {:>8.3}  {}  [{}]\n    {}", rank + 1, h.score, p.title, p.id, snippet);
            }
        }
        Ok(())
    }
}
