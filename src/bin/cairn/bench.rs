//! `cairn bench`: indexing speed, query latency and memory on a dataset folder, one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use cairn::eval::Dataset;
use cairn::index::Method;
use clap::Args;
use serde_json::json;

use crate::common::*;
use crate::options::*;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Dataset folder with corpus.jsonl (questions.jsonl optional).
    #[arg(long)]
    pub(crate) data: PathBuf,
    /// Queries to time: the dataset's questions, or passage titles when it has none. At least 1.
    #[arg(long, default_value_t = 200, value_parser = at_least_one)]
    pub(crate) queries: usize,
    #[arg(long, default_value = "bm25", help = method_help("Retrieval method; for dense methods, indexing includes embedding every passage, for graph methods building the knowledge graph"))]
    pub(crate) method: String,
    #[command(flatten)]
    pub(crate) bm25: Bm25Args,
    #[command(flatten)]
    pub(crate) catrag: CatragArgs,
    #[command(flatten)]
    pub(crate) models: ModelArgs,
}

pub(crate) fn bench(a: BenchArgs) -> CliResult<()> {
    let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
    let embedders = load_embedders(method, &a.models)?;
    let config = index_config(&a.bm25, &a.catrag)?;
    let (dataset, parse_ms) = Dataset::load_timed(&a.data).map_err(|e| e.to_string())?;
    let n = dataset.corpus.len();
    let (queries, source): (Vec<String>, &str) = if dataset.questions.is_empty() {
        let step = (n / a.queries.max(1)).max(1);
        let qs =
            dataset.corpus.passages().iter().step_by(step).take(a.queries).map(|p| p.title.clone()).collect();
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
    let mut searcher = index.searcher();
    for q in &queries {
        let t = Instant::now();
        let c = thread_cpu_ms();
        let hits = searcher.search(q, 10, method).map_err(|e| e.to_string())?;
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
            out["graph"] =
                cairn::bench::graph_figures(&index, &queries, method, clock).map_err(|e| e.to_string())?;
            out["graph"]["clock"] = json!(name);
            out
        }
        _ => out,
    };
    outln!("{out}");
    Ok(())
}

/// This thread's CPU time in milliseconds (Linux `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`,
/// nanosecond resolution; `/proc/thread-self/schedstat` only moves at scheduler ticks, 4 ms
/// here), `None` elsewhere.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub(crate) fn thread_cpu_ms() -> Option<f64> {
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
pub(crate) fn thread_cpu_ms() -> Option<f64> {
    None
}
