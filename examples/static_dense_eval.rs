//! Dense retrieval with the static embedder: speed and a first quality check.
//!
//!     cargo run --release --example static_dense_eval -- [--table T --vocab V] [--speed CORPUS] DATASET...
//!
//! - `--table`/`--vocab`: a table made by `tools/distill_static.py` (default: the bundled one);
//! - `--speed CORPUS`: embed every passage ("title text") of a corpus JSONL on one thread, three
//!   times, and print the best passages per second;
//! - `--search-bench N`: exact top-10 search over N random unit vectors of the embedder's
//!   dimension; prints milliseconds per query;
//! - each `DATASET` folder (`../shared/data/hotpotqa`, …): corpus setting — embed the whole
//!   corpus and every question, rank all passages by cosine, and print Recall@2, Recall@5 and
//!   FCR@5 (METHOD.md §5).

use std::path::PathBuf;
use std::time::Instant;

use cairn::embed::{Embedder, StaticEmbedder, VectorMatrix};
use cairn::eval::{full_chain_at, recall_at, Dataset};

fn passage_text(title: &str, text: &str) -> String {
    format!("{title} {text}")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut table, mut vocab, mut speed, mut datasets) = (None, None, None, Vec::new());
    let mut search_bench: Option<usize> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--table" => table = args.next().map(PathBuf::from),
            "--vocab" => vocab = args.next().map(PathBuf::from),
            "--speed" => speed = args.next().map(PathBuf::from),
            "--search-bench" => search_bench = args.next().and_then(|n| n.parse().ok()),
            _ => datasets.push(PathBuf::from(a)),
        }
    }
    let t = Instant::now();
    let embedder = match (table, vocab) {
        (Some(t), Some(v)) => StaticEmbedder::from_bytes(&std::fs::read(t)?, &std::fs::read_to_string(v)?)?,
        (Some(t), None) => {
            StaticEmbedder::from_bytes(&std::fs::read(t)?, cairn::embed::wordpiece::MINILM_VOCAB)?
        }
        _ => StaticEmbedder::minilm()?,
    };
    println!(
        "embedder: {} dims, {} tokens, loaded in {:.1} ms",
        embedder.dim(),
        embedder.table().vocab_size(),
        t.elapsed().as_secs_f64() * 1e3
    );

    if let Some(path) = speed {
        let passages = cairn::corpus::parse_jsonl("corpus", &std::fs::read_to_string(&path)?)?;
        let texts: Vec<String> = passages.iter().map(|p| passage_text(&p.title, &p.text)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let bytes: usize = texts.iter().map(String::len).sum();
        let tokens: usize = texts.iter().map(|t| embedder.tokenizer().encode(t).len()).sum();
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            let v = embedder.embed_batch(&refs, &mut |_, _| {})?;
            best = best.min(t.elapsed().as_secs_f64());
            std::hint::black_box(v);
        }
        // Tokenisation alone, for the split of the time.
        let t = Instant::now();
        let mut n = 0;
        for s in &refs {
            n += embedder.tokenizer().encode(s).len();
        }
        let tok_s = t.elapsed().as_secs_f64();
        std::hint::black_box(n);
        println!(
            "speed: {} passages ({:.1} MB, {} tokens) in {:.3} s: {:.0} passages/s, {:.1} M tokens/s (tokenising alone {:.0}% of it)",
            texts.len(),
            bytes as f64 / 1e6,
            tokens,
            best,
            texts.len() as f64 / best,
            tokens as f64 / best / 1e6,
            100.0 * tok_s / best
        );
    }

    if let Some(n) = search_bench {
        let d = embedder.dim();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut data: Vec<f32> = (0..n * d).map(|_| next()).collect();
        data.chunks_exact_mut(d).for_each(cairn::embed::l2_normalize);
        let matrix = VectorMatrix::from_rows(d, data)?;
        let queries: Vec<Vec<f32>> = (0..20).map(|i| matrix.row(i * 7 % n).unwrap_or(&[]).to_vec()).collect();
        let t = Instant::now();
        for q in &queries {
            std::hint::black_box(matrix.top_k(q, 10)?);
        }
        println!(
            "search: {} x {} matrix, exact top-10: {:.2} ms/query",
            n,
            d,
            t.elapsed().as_secs_f64() * 1e3 / queries.len() as f64
        );
    }

    for dir in datasets {
        let ds = Dataset::load(&dir)?;
        let texts: Vec<String> =
            ds.corpus.passages().iter().map(|p| passage_text(&p.title, &p.text)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        let matrix = VectorMatrix::from_rows(embedder.dim(), embedder.embed_batch(&refs, &mut |_, _| {})?)?;
        let index_ms = t.elapsed().as_secs_f64() * 1e3;
        let (mut r2, mut r5, mut f5) = (0.0, 0.0, 0.0);
        let t = Instant::now();
        for q in &ds.questions {
            let hits = matrix.top_k(&embedder.embed(&q.question)?, 5)?;
            let ranked: Vec<&str> =
                hits.iter().filter_map(|h| ds.corpus.get(h.row).map(|p| p.id.as_str())).collect();
            r2 += recall_at(&ranked, &q.gold_ids, 2);
            r5 += recall_at(&ranked, &q.gold_ids, 5);
            f5 += full_chain_at(&ranked, &q.gold_ids, 5);
        }
        let n = ds.questions.len().max(1) as f64;
        println!(
            "{:<18} corpus setting, {} passages, {} questions: Recall@2 {:.3}  Recall@5 {:.3}  FCR@5 {:.3}  (embed corpus {:.0} ms, {:.2} ms/query)",
            ds.name,
            ds.corpus.len(),
            ds.questions.len(),
            r2 / n,
            r5 / n,
            f5 / n,
            index_ms,
            t.elapsed().as_secs_f64() * 1e3 / n
        );
    }
    Ok(())
}
