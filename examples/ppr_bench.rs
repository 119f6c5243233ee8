//! Milliseconds per Personalized PageRank on a 2wiki-6k-sized graph (METHOD.md §2).
//!
//!     cargo run --release --example ppr_bench -- [--corpus CORPUS.jsonl] [--queries N] [--epsilon E]... [--seeds-only]
//!
//! Builds the passage–word test graph of `ppr_support/graph.rs` from the corpus (default
//! `../shared/data/2wiki-corpus-6k/corpus.jsonl`: about 32k nodes, 367k arcs), then for N queries
//! (default 50) draws a CatRAG-like teleport (5–10 entity seeds + 0.05 × dense-like passage
//! weights on every passage) and overlay (a few dozen to hundreds of arcs around the seeds), and
//! times one reused [`PprSolver`] per query: power iteration (default config) and forward push
//! for each ε given (default 1e-8, 1e-10, 1e-12), without and with the overlay. `--seeds-only`
//! drops the passage weights (a sparse teleport: where push's locality pays). Prints the median
//! and mean ms per PPR, sweeps / pushes, the largest L1 distance to power iteration and whether
//! the top-5 passages agree with power iteration's. One thread; the time includes the per-query
//! preparation (teleport check and normalisation, overlay sort, out-weights).

#[path = "ppr_support/graph.rs"]
mod graph;

use std::path::PathBuf;
use std::time::Instant;

use cairn::ppr::{rank_passages, ArcOverlay, CsrGraph, PprConfig, PprMethod, PprSolver};

#[derive(Default)]
struct Stats {
    ms: Vec<f64>,
    iterations: u64,
    pushes: u64,
    worst_l1: f64,
    worst_bound: f64,
    top5_same: usize,
    converged: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut corpus = PathBuf::from("../shared/data/2wiki-corpus-6k/corpus.jsonl");
    let mut queries = 50usize;
    let mut epsilons = Vec::new();
    let mut seeds_only = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpus" => corpus = args.next().ok_or("--corpus needs a path")?.into(),
            "--queries" => queries = args.next().ok_or("--queries needs a number")?.parse()?,
            "--seeds-only" => seeds_only = true,
            "--epsilon" => epsilons.push(args.next().ok_or("--epsilon needs a number")?.parse::<f64>()?),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    if epsilons.is_empty() {
        epsilons = vec![1e-8, 1e-10, 1e-12];
    }
    let g = graph::build(&std::fs::read_to_string(&corpus)?)?;
    let csr = CsrGraph::new(&g.offsets, &g.targets, &g.weights)?;
    let passages: Vec<u32> = (0..g.passages as u32).collect();
    let dangling = (0..csr.node_count()).filter(|&u| g.offsets[u] == g.offsets[u + 1]).count();
    println!(
        "graph: {} nodes ({} passages, {} words, {} without arcs), {} arcs; {queries} queries{}",
        csr.node_count(),
        g.passages,
        g.words.len(),
        dangling,
        csr.arc_count(),
        if seeds_only { ", teleport on the seeds only" } else { ", teleport on seeds + 0.05 × passages" }
    );

    let mut rng = graph::Lcg(42);
    let mut cases = Vec::new();
    for _ in 0..queries {
        let (mut teleport, seeds) = graph::query(&g, &mut rng);
        if seeds_only {
            teleport[..g.passages].iter_mut().for_each(|x| *x = 0.0);
        }
        let mut ov = ArcOverlay::new();
        for (a, x) in graph::overlay(&g, &seeds, &mut rng) {
            ov.multiply(a, x)?;
        }
        cases.push((teleport, ov));
    }
    let overlay_arcs: Vec<usize> = cases.iter().map(|c| c.1.len()).collect();
    println!(
        "overlay arcs per query: min {}, median {}, max {}",
        overlay_arcs.iter().min().unwrap_or(&0),
        median(&overlay_arcs.iter().map(|&x| x as f64).collect::<Vec<_>>()),
        overlay_arcs.iter().max().unwrap_or(&0)
    );

    let base = PprConfig::default();
    let mut solver = PprSolver::new();
    for with_overlay in [false, true] {
        let mut rows: Vec<(String, Stats)> = Vec::new();
        let mut configs = vec![("power".to_string(), base)];
        for &e in &epsilons {
            configs.push((format!("push ε={e:e}"), PprConfig { method: PprMethod::Push, push_epsilon: e, ..base }));
        }
        for (name, _) in &configs {
            rows.push((name.clone(), Stats::default()));
        }
        // Warm the buffers once.
        solver.run(&csr, None, &cases[0].0, &base)?;
        for (teleport, ov) in &cases {
            let ov = with_overlay.then_some(ov);
            let mut reference = Vec::new();
            let mut reference_top = Vec::new();
            for (i, (_, cfg)) in configs.iter().enumerate() {
                let t = Instant::now();
                let report = solver.run(&csr, ov, teleport, cfg)?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let top: Vec<u32> = rank_passages(solver.scores(), &passages, 5)?.iter().map(|p| p.node).collect();
                let st = &mut rows[i].1;
                st.ms.push(ms);
                st.iterations += u64::from(report.iterations);
                st.pushes += report.pushes;
                st.converged += usize::from(report.converged);
                st.worst_bound = st.worst_bound.max(report.error_bound);
                if i == 0 {
                    reference = solver.scores().to_vec();
                    reference_top = top;
                    st.top5_same += 1;
                } else {
                    let l1: f64 = reference.iter().zip(solver.scores()).map(|(a, b)| (a - b).abs()).sum();
                    st.worst_l1 = st.worst_l1.max(l1);
                    st.top5_same += usize::from(top == reference_top);
                }
            }
        }
        println!("\n{} overlay:", if with_overlay { "with" } else { "without" });
        println!(
            "{:<18} {:>9} {:>9} {:>7} {:>10} {:>11} {:>12} {:>9} {:>9}",
            "solver", "median ms", "mean ms", "sweeps", "pushes", "max bound", "max L1 vs pw", "top-5 =", "converged"
        );
        for (name, st) in &rows {
            let q = st.ms.len() as f64;
            println!(
                "{:<18} {:>9.2} {:>9.2} {:>7.1} {:>10.0} {:>11.2e} {:>12.2e} {:>6}/{:<2} {:>6}/{:<2}",
                name,
                median(&st.ms),
                st.ms.iter().sum::<f64>() / q,
                st.iterations as f64 / q,
                st.pushes as f64 / q,
                st.worst_bound,
                st.worst_l1,
                st.top5_same,
                st.ms.len(),
                st.converged,
                st.ms.len()
            );
        }
    }
    Ok(())
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
