//! Export a PPR test case for `tools/check_ppr.py` (networkx reference; METHOD.md §2).
//!
//!     cargo run --release --example ppr_export -- [--corpus CORPUS.jsonl] [--out DIR] [--seed N]
//!
//! Builds the passage–word test graph of `ppr_support/graph.rs` from the corpus (default
//! `../shared/data/2wiki-corpus-6k/corpus.jsonl`), draws one CatRAG-like query (5–10 seeds plus
//! 0.05 × dense-like passage weights) and overlay, runs Cairn's power iteration and forward push
//! with the default [`PprConfig`] (d = 0.5, tolerance 1e-8, 50 sweeps, ε = 1e-12), with and
//! without the overlay, and writes to DIR (default `/tmp/cairn-ppr-check`):
//!
//! - `meta.json`: n, m, damping, the four convergence reports;
//! - `arcs.tsv`: `source target weight` per arc, in arc order (line i = arc i);
//! - `teleport.tsv`: `node weight` for every node with a positive teleport weight (unnormalised);
//! - `overlay.tsv`: `arc multiplier` per overlay entry;
//! - `scores_{power,push}_{plain,overlay}.tsv`: `node score` for every node.
//!
//! Weights are written as the exact decimal of their f64 value, so Python reads the same numbers.

#[path = "ppr_support/graph.rs"]
mod graph;

use std::fmt::Write as _;
use std::path::PathBuf;

use cairn::ppr::{ArcOverlay, CsrGraph, PprConfig, PprMethod, PprSolver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut corpus = PathBuf::from("../shared/data/2wiki-corpus-6k/corpus.jsonl");
    let mut out = PathBuf::from("/tmp/cairn-ppr-check");
    let mut seed = 1u64;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpus" => corpus = args.next().ok_or("--corpus needs a path")?.into(),
            "--out" => out = args.next().ok_or("--out needs a path")?.into(),
            "--seed" => seed = args.next().ok_or("--seed needs a number")?.parse()?,
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let g = graph::build(&std::fs::read_to_string(&corpus)?)?;
    let csr = CsrGraph::new(&g.offsets, &g.targets, &g.weights)?;
    let mut rng = graph::Lcg(seed);
    let (teleport, seeds) = graph::query(&g, &mut rng);
    let entries = graph::overlay(&g, &seeds, &mut rng);
    let mut overlay = ArcOverlay::new();
    for &(a, x) in &entries {
        overlay.multiply(a, x)?;
    }
    println!(
        "graph: {} nodes ({} passages, {} words), {} arcs; {} seeds, {} overlay arcs",
        csr.node_count(),
        g.passages,
        g.words.len(),
        csr.arc_count(),
        seeds.len(),
        overlay.len()
    );

    std::fs::create_dir_all(&out)?;
    let mut s = String::new();
    for u in 0..csr.node_count() {
        for a in g.offsets[u] as usize..g.offsets[u + 1] as usize {
            writeln!(s, "{u}\t{}\t{}", g.targets[a], f64::from(g.weights[a]))?;
        }
    }
    std::fs::write(out.join("arcs.tsv"), s)?;
    let mut s = String::new();
    for (u, &x) in teleport.iter().enumerate().filter(|e| *e.1 > 0.0) {
        writeln!(s, "{u}\t{x}")?;
    }
    std::fs::write(out.join("teleport.tsv"), s)?;
    let mut s = String::new();
    for &(a, x) in &entries {
        writeln!(s, "{a}\t{}", f64::from(x))?;
    }
    std::fs::write(out.join("overlay.tsv"), s)?;

    let config = PprConfig::default();
    let mut solver = PprSolver::new();
    let mut reports = serde_json::Map::new();
    for method in [PprMethod::Power, PprMethod::Push] {
        for (name, ov) in [("plain", None), ("overlay", Some(&overlay))] {
            let cfg = PprConfig { method, ..config };
            let t = std::time::Instant::now();
            let report = solver.run(&csr, ov, &teleport, &cfg)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let m = serde_json::to_value(method)?;
            let key = format!("{}_{name}", m.as_str().unwrap_or("?"));
            println!("{key}: {report:?} ({ms:.2} ms)");
            let mut s = String::new();
            for (u, x) in solver.scores().iter().enumerate() {
                writeln!(s, "{u}\t{x}")?;
            }
            std::fs::write(out.join(format!("scores_{key}.tsv")), s)?;
            reports.insert(key, serde_json::to_value(report)?);
        }
    }
    let meta = serde_json::json!({
        "corpus": corpus.display().to_string(),
        "nodes": csr.node_count(),
        "passages": g.passages,
        "arcs": csr.arc_count(),
        "seeds": seeds,
        "config": config,
        "reports": reports,
    });
    std::fs::write(out.join("meta.json"), serde_json::to_string_pretty(&meta)?)?;
    println!("wrote {}", out.display());
    Ok(())
}
