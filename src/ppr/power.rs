//! Power iteration for Personalized PageRank (METHOD.md §2; HippoRAG 2 §3, CatRAG §3).
//!
//! One sweep computes, from the current iterate `π`,
//!
//! ```text
//! next = (1 − d + d·D)·r + d·Pᵀπ,     D = Σ_{u dangling} π[u]
//! ```
//!
//! as a fill of `next` with the teleport term (O(n)) and a scatter over the CSR rows (O(m)):
//! row `u` adds `d·π[u]/out(u) · w'(a)` to `next[target(a)]` for each of its arcs. Rows touched by
//! the overlay read their precomputed effective weights, all others the stored `f32` weights; the
//! accumulators are `f64`. The start is `π₀ = r`. It stops when `‖next − π‖₁ < tolerance` or after
//! `max_iterations` sweeps.
//!
//! Error: the sweep map is `x ↦ (1−d)r + dMx` with `M` column-stochastic, a contraction by `d` in
//! L1, so `‖π_k − π‖₁ ≤ d/(1−d)·‖π_k − π_{k−1}‖₁`: below 1e-8 at the defaults (d = 0.5,
//! tolerance 1e-8), after about 27 sweeps from `r`.

use super::{CsrGraph, PprConfig, PprMethod, PprReport, PprSolver, UNTOUCHED};

/// Run power iteration on a prepared workspace (see [`PprSolver::prepare`]).
pub(super) fn solve(ws: &mut PprSolver, graph: &CsrGraph<'_>, config: &PprConfig) -> PprReport {
    let n = graph.node_count();
    let d = config.damping;
    let (offsets, targets, weights) = (graph.offsets, graph.targets, graph.weights);

    ws.scores.clear();
    ws.scores.extend_from_slice(&ws.teleport);
    ws.next.clear();
    ws.next.resize(n, 0.0);

    let mut iterations = 0;
    let mut change = f64::INFINITY;
    while iterations < config.max_iterations {
        iterations += 1;
        let pi = &ws.scores;
        let next = &mut ws.next;

        // Teleport term, with the dangling nodes' mass returned along r.
        let dangling_mass: f64 = ws.dangling.iter().map(|&u| pi[u as usize]).sum();
        let base = (1.0 - d) + d * dangling_mass;
        for (x, &r) in next.iter_mut().zip(&ws.teleport) {
            *x = base * r;
        }

        // Walk term: scatter each row's mass along its arcs.
        for u in 0..n {
            let scale = d * pi[u] * ws.inv_out[u];
            if scale == 0.0 {
                continue; // no mass yet, or dangling
            }
            let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
            let side = ws.row_side[u];
            if side == UNTOUCHED {
                for (&t, &w) in targets[lo..hi].iter().zip(&weights[lo..hi]) {
                    next[t as usize] += scale * f64::from(w);
                }
            } else {
                let side = side as usize;
                let row = &ws.row_weights[side..side + (hi - lo)];
                for (&t, &w) in targets[lo..hi].iter().zip(row) {
                    next[t as usize] += scale * w;
                }
            }
        }

        change = pi.iter().zip(next.iter()).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut ws.scores, &mut ws.next);
        if change < config.tolerance {
            break;
        }
    }

    PprReport {
        method: PprMethod::Power,
        iterations,
        l1_change: change,
        error_bound: if d > 0.0 { d / (1.0 - d) * change } else { 0.0 },
        converged: change < config.tolerance,
        pushes: 0,
    }
}
