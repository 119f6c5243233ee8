//! Writing a PPR test case for `tools/check_ppr.py` (shared by `ppr_export` and
//! `ppr_export_kg`): the arcs, the teleport vector, the overlay, and Cairn's power-iteration and
//! forward-push scores with and without the overlay. Weights are written as the exact decimal of
//! their f64 value, so Python reads the same numbers.

use std::fmt::Write as _;
use std::path::Path;

use cairn::ppr::{ArcOverlay, CsrGraph, PprConfig, PprMethod, PprSolver};

/// Write `arcs.tsv`, `teleport.tsv`, `overlay.tsv` and `scores_{power,push}_{plain,overlay}.tsv`
/// to `out` and return the four convergence reports by case name (for `meta.json`).
pub fn write_case(
    out: &Path,
    csr: &CsrGraph<'_>,
    teleport: &[f64],
    overlay: &ArcOverlay,
    config: PprConfig,
) -> Result<serde_json::Map<String, serde_json::Value>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let (offsets, targets, weights) = (csr.offsets(), csr.targets(), csr.weights());
    let mut s = String::new();
    for u in 0..csr.node_count() {
        for a in offsets[u] as usize..offsets[u + 1] as usize {
            writeln!(s, "{u}\t{}\t{}", targets[a], f64::from(weights[a]))?;
        }
    }
    std::fs::write(out.join("arcs.tsv"), s)?;
    let mut s = String::new();
    for (u, &x) in teleport.iter().enumerate().filter(|e| *e.1 > 0.0) {
        writeln!(s, "{u}\t{x}")?;
    }
    std::fs::write(out.join("teleport.tsv"), s)?;
    let mut s = String::new();
    for (a, x) in overlay.entries() {
        writeln!(s, "{a}\t{}", f64::from(*x))?;
    }
    std::fs::write(out.join("overlay.tsv"), s)?;

    let mut solver = PprSolver::new();
    let mut reports = serde_json::Map::new();
    for method in [PprMethod::Power, PprMethod::Push] {
        for (name, ov) in [("plain", None), ("overlay", Some(overlay))] {
            let cfg = PprConfig { method, ..config };
            let t = std::time::Instant::now();
            let report = solver.run(csr, ov, teleport, &cfg)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let key = format!("{}_{name}", serde_json::to_value(method)?.as_str().unwrap_or("?"));
            println!("{key}: {report:?} ({ms:.2} ms)");
            let mut s = String::new();
            for (u, x) in solver.scores().iter().enumerate() {
                writeln!(s, "{u}\t{x}")?;
            }
            std::fs::write(out.join(format!("scores_{key}.tsv")), s)?;
            reports.insert(key, serde_json::to_value(report)?);
        }
    }
    Ok(reports)
}
