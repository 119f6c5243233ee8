//! Helpers every subcommand uses: the result type, building an index the way the page does,
//! reading a corpus, and the clocks and memory readings of the benchmarks.

use std::path::Path;
use std::time::Instant;

use cairn::corpus::{parse_jsonl_bytes, Corpus};
use cairn::engine::Engine;
use cairn::eval::{Dataset, Embedders};
use cairn::index::{EmbedderSlot, Index, IndexConfig, Method};

pub(crate) type CliResult<T> = Result<T, String>;

/// Write `args` to standard output (what [`outln!`] and [`out!`] print). A closed output (the
/// reader, such as `head`, has what it wanted) ends the process at once, quietly and with status
/// 0, as `grep` and other Unix tools end there; any other write error is one `error:` line on
/// stderr and status 2.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing the output failed: {e}");
        std::process::exit(2);
    }
}

/// `println!` for the CLI's results: through [`write_stdout`], so a closed pipe ends it quietly.
macro_rules! outln {
    () => {
        $crate::common::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::common::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// `print!` through [`write_stdout`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::common::write_stdout(format_args!($($arg)*))
    };
}
pub(crate) use out;

/// A count flag's value: a whole number of at least 1 (`--k 0` is an argument error, not an
/// empty result).
pub(crate) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// A duration or limit flag's value in its unit (milliseconds, calls): a whole number of at
/// least 1.
pub(crate) fn at_least_one_u64(s: &str) -> Result<u64, String> {
    at_least_one(s).map(|n| n as u64)
}

/// [`at_least_one`] for `u32` flags.
pub(crate) fn at_least_one_u32(s: &str) -> Result<u32, String> {
    at_least_one(s).and_then(|n| u32::try_from(n).map_err(|_| format!("{n} is too large")))
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // Nearest-rank percentile.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Peak resident set size of this process in MiB (Linux VmHWM), if known.
pub(crate) fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Build the engine over `corpus` with the embedder `method` needs, the knowledge graph for
/// a graph method and CAGE's graph embeddings for a CAGE method (the page's lifecycle,
/// [`cairn::engine::Engine`]); returns its index.
pub(crate) fn build_index(
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
pub(crate) fn into_index(engine: Engine) -> CliResult<Index> {
    engine.into_index().map_err(|e| e.to_string())
}

pub(crate) fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

pub(crate) fn load_corpus(path: &Path) -> CliResult<Corpus> {
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
