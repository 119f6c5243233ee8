//! Synonym edges of the LSH search against the exact search (METHOD.md §1, synonym edges;
//! `GraphConfig::synonym_search`): the same corpus, rule-based OpenIE triples and static
//! embedder, linked once with each search; prints one JSON object.
//!
//!     cargo run --release --example synonym_agreement -- [CORPUS.jsonl]
//!
//! Default corpus: `../shared/data/2wiki-corpus-6k/corpus.jsonl`.
//!
//! Edges are the unordered entity pairs {a, b} where either end keeps the other among its
//! synonym candidates (as the CSR builds them). Reported: `lsh_edges_in_exact` (edges of the
//! LSH graph that are exact edges, with the same cosine), `exact_edges_found` (exact edges the
//! LSH graph has), and each search's thread CPU time of `link_synonyms` (ms) with its
//! [`SynonymStats`](cairn::graph::SynonymStats).

use std::collections::BTreeMap;

use cairn::corpus::parse_jsonl;
use cairn::embed::StaticEmbedder;
use cairn::extract::extract_passages;
use cairn::graph::{GraphBuilder, GraphConfig, SynonymSearch};
use cairn::text::Pipeline;

/// This thread's CPU time in milliseconds (Linux `CLOCK_THREAD_CPUTIME_ID` via /proc is not
/// per thread, so read `/proc/thread-self/stat`: utime + stime in clock ticks of 10 ms).
fn thread_cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else { return 0.0 };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) * 10.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path =
        std::env::args().nth(1).unwrap_or_else(|| "../shared/data/2wiki-corpus-6k/corpus.jsonl".to_string());
    let passages = parse_jsonl(&path, &std::fs::read_to_string(&path)?)?;
    let pipeline = Pipeline::english()?;
    let triples = extract_passages(&pipeline, 0, &passages, &mut |_, _| {}).triples;
    let embedder = StaticEmbedder::minilm()?;
    let mut edges: Vec<BTreeMap<(u32, u32), f32>> = Vec::new();
    let mut runs = Vec::new();
    for search in [SynonymSearch::Exact, SynonymSearch::Lsh] {
        let mut b = GraphBuilder::new(GraphConfig { synonym_search: search, ..GraphConfig::default() })?;
        b.add_passages(0, &passages, &triples)?;
        b.embed(&embedder, &mut |_, _| {})?;
        let t0 = thread_cpu_ms();
        let stats = b.link_synonyms(&mut |_, _| {})?;
        let ms = thread_cpu_ms() - t0;
        let g = b.finish()?;
        let mut set = BTreeMap::new();
        for &e in g.entity_nodes() {
            for (o, c) in g.synonym_candidates(e) {
                set.insert((e.min(o), e.max(o)), c);
            }
        }
        runs.push(serde_json::json!({
            "search": search, "link_synonyms_cpu_ms": ms, "stats": stats, "edges": set.len()
        }));
        edges.push(set);
    }
    let (exact, lsh) = (&edges[0], &edges[1]);
    let common = lsh.iter().filter(|(k, c)| exact.get(k) == Some(c)).count();
    let out = serde_json::json!({
        "corpus": path,
        "passages": passages.len(),
        "exact_edges": exact.len(),
        "lsh_edges": lsh.len(),
        "lsh_edges_equal_to_exact": common,
        "lsh_edges_in_exact": common as f64 / lsh.len().max(1) as f64,
        "exact_edges_found": common as f64 / exact.len().max(1) as f64,
        "runs": runs,
    });
    println!("{out}");
    Ok(())
}
