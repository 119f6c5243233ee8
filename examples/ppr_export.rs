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

#[path = "ppr_support/export.rs"]
mod export;
#[path = "ppr_support/graph.rs"]
mod graph;

use std::path::PathBuf;

use cairn::ppr::{ArcOverlay, CsrGraph, PprConfig};

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

    let config = PprConfig::default();
    let reports = export::write_case(&out, &csr, &teleport, &overlay, config)?;
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
