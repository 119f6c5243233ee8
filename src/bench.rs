//! Graph benchmark figures, the same natively (`cairn bench --method catrag`) and in the page
//! (`Engine.graphBench`, `npm run bench:browser -- catrag`), so the wasm/native ratio comes from
//! one command each: the knowledge graph's build figures and where a graph query's time goes,
//! with Personalized PageRank (docs/method/spec.md §2) timed on its own against the exact fixed point.
//!
//! For every benchmark query the graph search runs once; its teleport vector and arc overlay
//! (what CatRAG hands to PPR) are kept, and PPR is then re-run on them with one reused solver:
//! `configured` (the index's PPR configuration: power iteration with the ranking and stability
//! rules, gathering on the symmetric graph's sweep layout), `configured_stored_order` (the same
//! without the layout: gathering in the stored node order), `rank_top_5` / `rank_top_10` (the ranking rule on fewer passages),
//! `l1_rule_only` (`rank_top_k = 0`), `l1_rule_scatter` (the L1 rule with scattering sweeps: the
//! solver as it was before the ranking rule and gathering) and `exact` (power iteration to an L1
//! change below 1e-13, error bound 1e-13 at d = 0.5, at most 400 sweeps). The top 5 / 10 / 20
//! passages of each are compared with the exact solve's.

use serde_json::{json, Value};

use crate::catrag::seeds::fact_cosines;
use crate::error::{Error, Result};
use crate::index::{Index, Method};
use crate::ppr::{rank_passages, ArcOverlay, CsrGraph, PprConfig, PprSolver, StaticOut};

/// Per-solver timings and agreement with the exact solve.
#[derive(Default)]
struct Runs {
    ms: Vec<f64>,
    sweeps: Vec<f64>,
    certified: usize,
    stable: usize,
    same: [usize; 3],
    /// Queries whose top 5 equals the exact solve's up to ties: at each rank a passage whose
    /// exact score is within [`TIE`] of the exact ranking's passage at that rank.
    same_up_to_ties: usize,
}

/// Exact scores closer than this count as a tie (the exact solve's L1 error is below 1e-12).
const TIE: f64 = 1e-9;

const TOPS: [usize; 3] = [5, 10, 20];

fn summary(mut xs: Vec<f64>) -> Value {
    if xs.is_empty() {
        return Value::Null;
    }
    xs.sort_by(f64::total_cmp);
    let pick = |p: f64| xs[((p / 100.0 * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1];
    json!({
        "min": xs[0],
        "p50": pick(50.0),
        "p95": pick(95.0),
        "max": xs[xs.len() - 1],
        "mean": xs.iter().sum::<f64>() / xs.len() as f64,
    })
}

/// The graph figures of `index` as one JSON object (module docs): `graph_build` (milliseconds
/// per step from the build report, `null` where the platform has no clock, passages/s, kNN
/// work, counts), `query` (graph search and fact scoring, ms: min / p50 / p95 / max / mean),
/// `ppr` (per solver: ms, sweeps, how many runs the ranking rule stopped, and on how many
/// queries the top 5 / 10 / 20 passages equal the exact solve's) and `memory_mb` (the heap each
/// structure of the index holds, MB, [`Index::memory_breakdown`]). `method` is `hipporag` or
/// `catrag`; `clock()` returns milliseconds from any fixed origin (`performance.now()` in the
/// page).
///
/// # Errors
/// [`Error::MissingGraph`] without a knowledge graph; the search's errors.
pub fn graph_figures(
    index: &Index,
    queries: &[String],
    method: Method,
    clock: &dyn Fn() -> f64,
) -> Result<Value> {
    let kg = index.knowledge_graph().ok_or(Error::MissingGraph { method: method.name().to_string() })?;
    let graph = kg.graph();
    let report = kg.report();
    let (offsets, targets, weights) = graph.csr().arrays();
    // What the first PPR run on a graph pays once (later runs reuse it): the CSR check and the
    // stored out-weights.
    let t = clock();
    let plain = CsrGraph::new_symmetric(offsets, targets, weights)?;
    let csr_check_ms = clock() - t;
    let t = clock();
    let layout_arcs = std::hint::black_box(StaticOut::new(&plain)).layout_arc_count();
    let static_out_ms = clock() - t;
    // The graph's own view (checked and summed once): what a search runs on.
    let csr = graph.ppr_graph()?;
    // The same arcs without the symmetry: power iteration scatters, as it did before gathering.
    let scatter = CsrGraph::new(offsets, targets, weights)?;
    // The stored out-weights without the sweep layout (computed on the view that is not declared
    // symmetric): gathering sweeps in the stored node order, as before the layout.
    let t = clock();
    let no_layout = StaticOut::new(&scatter);
    let static_out_without_layout_ms = clock() - t;
    let stored_order = plain.with_static(&no_layout)?;
    let passages = graph.passage_nodes();
    let config = index.config().catrag.ppr;

    // One graph search per query: its total time, and the PPR input it built.
    let mut search_ms = Vec::new();
    let mut cosine_ms = Vec::new();
    // Teleport vectors kept sparse (node, weight): 200 dense ones would hold 75 MB on 2wiki-6k,
    // which the page's memory figure (read after this) would then count.
    let mut cases: Vec<(Vec<(u32, f64)>, ArcOverlay)> = Vec::new();
    let mut fallbacks = 0;
    let mut searcher = index.searcher();
    for q in queries {
        let t = clock();
        let found = searcher.search_graph(q, 10, method)?;
        search_ms.push(clock() - t);
        let r = found.retrieval;
        if r.fallback.is_some() || r.teleport.is_empty() {
            fallbacks += 1;
            continue;
        }
        let mut overlay = ArcOverlay::new();
        for o in &r.overlay {
            let x = if r.floored { o.multiplier.max(1e-6) } else { o.multiplier };
            overlay.multiply(o.arc as usize, x)?;
        }
        let sparse = r.teleport.iter().enumerate().filter(|(_, &x)| x != 0.0).map(|(u, &x)| (u as u32, x));
        cases.push((sparse.collect(), overlay));
        // The fact-scoring step alone (the query is embedded outside the clock).
        let v = kg.embedder().embed(q)?;
        let t = clock();
        std::hint::black_box(fact_cosines(graph, &v)?);
        cosine_ms.push(clock() - t);
    }

    let exact_cfg =
        PprConfig { tolerance: 1e-13, max_iterations: 400, rank_top_k: 0, rank_stable_sweeps: 0, ..config };
    let l1_cfg = PprConfig { rank_top_k: 0, rank_stable_sweeps: 0, ..config };
    let top = |k: u32| PprConfig { rank_top_k: k, rank_stable_sweeps: 0, ..config };
    let none: &[u32] = &[];
    let stable = |k: u32, s: u32| PprConfig { rank_top_k: k, rank_stable_sweeps: s, ..config };
    let variants: [(&str, &CsrGraph<'_>, PprConfig, &[u32]); 11] = [
        ("configured", &csr, config, passages),
        ("configured_stored_order", &stored_order, config, passages),
        ("rank_top_5", &csr, top(5), passages),
        ("rank_top_10", &csr, top(10), passages),
        ("stable_top_10_2", &csr, stable(10, 2), passages),
        ("stable_top_10_3", &csr, stable(10, 3), passages),
        ("stable_top_20_2", &csr, stable(20, 2), passages),
        ("stable_top_20_3", &csr, stable(20, 3), passages),
        ("l1_rule_only", &csr, l1_cfg, none),
        ("l1_rule_per_query_sums", &plain, l1_cfg, none),
        ("l1_rule_scatter", &scatter, l1_cfg, none),
    ];
    // How many sweeps from the teleport vector the top 5 / 10 needs to equal the exact solve's
    // (and stay equal for two more sweeps): what an ideal stopping rule would do.
    let mut needed = [Vec::new(), Vec::new()];
    let mut solver = PprSolver::new();
    let mut runs: Vec<Runs> = variants.iter().map(|_| Runs::default()).collect();
    let mut exact_runs = Runs::default();
    let top_of = |scores: &[f64], k: usize| -> Result<Vec<u32>> {
        Ok(rank_passages(scores, passages, k)?.iter().map(|p| p.passage).collect())
    };
    let mut teleport = vec![0.0f64; graph.node_count()];
    for (sparse, overlay) in &cases {
        teleport.fill(0.0);
        for &(u, x) in sparse {
            teleport[u as usize] = x;
        }
        let teleport = &teleport[..];
        let ov = (!overlay.is_empty()).then_some(overlay);
        let t = clock();
        let rep = solver.run(&csr, ov, teleport, &exact_cfg)?;
        exact_runs.ms.push(clock() - t);
        exact_runs.sweeps.push(f64::from(rep.iterations));
        let exact: Vec<Vec<u32>> = TOPS.iter().map(|&k| top_of(solver.scores(), k)).collect::<Result<_>>()?;
        let exact_scores = solver.scores().to_vec();
        let exact_of = |p: u32| passages.get(p as usize).and_then(|&u| exact_scores.get(u as usize)).copied();
        let tied = |got: &[u32], want: &[u32]| {
            got.len() == want.len()
                && got.iter().zip(want).all(|(&g, &w)| match (exact_of(g), exact_of(w)) {
                    (Some(a), Some(b)) => (a - b).abs() <= TIE,
                    _ => false,
                })
        };
        for (j, &k) in TOPS[..2].iter().enumerate() {
            let fixed = |s: u32| PprConfig { tolerance: 0.0, max_iterations: s, ..l1_cfg };
            let mut run = 0u32;
            let mut s = 1u32;
            while s <= 60 {
                solver.run(&csr, ov, teleport, &fixed(s))?;
                run = if top_of(solver.scores(), k)? == exact[j] { run + 1 } else { 0 };
                if run == 3 {
                    break;
                }
                s += 1;
            }
            needed[j].push(f64::from(s.saturating_sub(2)));
        }
        for (i, (_, g, cfg, ranked)) in variants.iter().enumerate() {
            let t = clock();
            let rep = solver.run_ranked(g, ov, teleport, ranked, cfg)?;
            runs[i].ms.push(clock() - t);
            runs[i].sweeps.push(f64::from(rep.iterations));
            runs[i].certified += usize::from(rep.ranking_certified);
            runs[i].stable += usize::from(rep.ranking_stable);
            for (j, &k) in TOPS.iter().enumerate() {
                runs[i].same[j] += usize::from(top_of(solver.scores(), k)? == exact[j]);
            }
            runs[i].same_up_to_ties += usize::from(tied(&top_of(solver.scores(), TOPS[0])?, &exact[0]));
        }
    }
    let n = cases.len();
    let show = |r: Runs| {
        json!({
            "ms": summary(r.ms),
            "sweeps": summary(r.sweeps),
            "ranking_certified": r.certified,
            "ranking_stable": r.stable,
            "top5_same_as_exact": r.same[0],
            "top10_same_as_exact": r.same[1],
            "top20_same_as_exact": r.same[2],
            "top5_same_up_to_ties": r.same_up_to_ties,
            "top5_agreement": if n > 0 { r.same[0] as f64 / n as f64 } else { 0.0 },
        })
    };
    let mut ppr = json!({
        "queries": n,
        "config": config,
        "exact": show(exact_runs),
        "sweeps_needed_top5": summary(std::mem::take(&mut needed[0])),
        "sweeps_needed_top10": summary(std::mem::take(&mut needed[1])),
    });
    for ((name, ..), r) in variants.iter().zip(runs) {
        ppr[*name] = show(r);
    }
    let built_ms: f64 =
        [report.extract_ms, report.add_ms, report.embed_ms, report.synonyms_ms, report.csr_ms]
            .iter()
            .map(|x| x.unwrap_or(0.0))
            .sum();
    let memory: serde_json::Map<String, Value> = index
        .memory_breakdown()
        .into_iter()
        .map(|(name, bytes)| (name, json!((bytes as f64 / 1e5).round() / 10.0)))
        .collect();
    Ok(json!({
        "graph_build": {
            "ms": built_ms,
            "passages_per_s": if built_ms > 0.0 { index.corpus().len() as f64 / (built_ms / 1e3) } else { 0.0 },
            "extract_ms": report.extract_ms,
            "add_ms": report.add_ms,
            "embed_ms": report.embed_ms,
            "synonyms_ms": report.synonyms_ms,
            "csr_ms": report.csr_ms,
            "synonyms": report.synonyms,
            "counts": report.counts,
        },
        "query": {
            "graph_search_ms": summary(search_ms),
            "fact_cosines_ms": summary(cosine_ms),
            "csr_check_ms": csr_check_ms,
            "static_out_ms": static_out_ms,
            "static_out_without_layout_ms": static_out_without_layout_ms,
            "sweep_layout_arcs": layout_arcs,
            "fallbacks": fallbacks,
        },
        "ppr": ppr,
        // Heap bytes each structure of the index holds, MB (10⁶ bytes), estimated from
        // capacities (`Index::memory_breakdown`).
        "memory_mb": memory,
    }))
}
