//! Forward push for Personalized PageRank (Andersen, Chung & Lang, "Local graph partitioning
//! using PageRank vectors", FOCS 2006; docs/method/spec.md §2).
//!
//! Keeps an estimate `p` (starts at 0) and a residual `res` (starts at `r`) with the invariant
//!
//! ```text
//! (1 − c)·π = p + G·res,     G = (1 − d)·(I − dM)⁻¹
//! ```
//!
//! Pushing node `u` with residual `ρ` moves `(1−d)ρ` into `p[u]` and spreads `dρ` over `u`'s
//! out-arcs in proportion to their effective weights (`res[v] += dρ·w'(u→v)/out(u)`). A dangling
//! node's `dρ` goes back along `r` (as in power iteration); instead of spreading it over `r`'s
//! support (every passage, in CatRAG) it is added to the scalar `c`, which the invariant accounts
//! for since `G·r = π`. A node is queued (FIFO) while `res[u] > ε·deg(u)`, `deg` counting arcs with
//! positive effective weight (0 for dangling nodes, which are therefore always pushed; their push
//! is O(1)).
//!
//! At the end the scores are `p / (1 − c)` (`c ≤ d < 1`), a componentwise lower bound of `π` at
//! L1 distance exactly `‖res‖₁ / (1 − c)` — reported as [`PprReport::l1_change`] and
//! [`PprReport::error_bound`]. Unlike ACL the walk is not lazy: laziness only serves their sweep-cut
//! analysis, and the fixed point here is power iteration's. Each push of `u` retires at least
//! `(1−d)·ε·deg(u)` of residual, so the run ends; the work budget (`max_iterations × (n + m)`
//! arc updates, pushes counted as one each) stops it early on a pathologically small `ε`, with
//! `converged = false` and a still-valid bound.

use super::{CsrGraph, PprConfig, PprMethod, PprReport, PprSolver, UNTOUCHED};

/// Run forward push on a prepared workspace (see [`PprSolver::prepare`]).
pub(super) fn solve(ws: &mut PprSolver, graph: &CsrGraph<'_>, config: &PprConfig) -> PprReport {
    let n = graph.node_count();
    let m = graph.arc_count();
    let d = config.damping;
    let eps = config.push_epsilon;
    let (offsets, targets, weights) = (graph.offsets, graph.targets, graph.weights);

    // p in `scores`, the residual in `next`.
    ws.scores.clear();
    ws.scores.resize(n, 0.0);
    ws.next.clear();
    ws.next.extend_from_slice(&ws.teleport);
    ws.queued.clear();
    ws.queued.resize(n, false);
    ws.queue.clear();

    let p = &mut ws.scores;
    let res = &mut ws.next;
    let queued = &mut ws.queued;
    let queue = &mut ws.queue;
    ws.threshold.clear();
    ws.threshold.extend(ws.degree.iter().map(|&k| eps * f64::from(k)));
    let threshold = &ws.threshold;

    for u in 0..n {
        if res[u] > threshold[u] {
            queue.push_back(u as u32);
            queued[u] = true;
        }
    }

    let budget = u64::from(config.max_iterations).saturating_mul((n + m) as u64);
    let mut work: u64 = 0;
    let mut pushes: u64 = 0;
    let mut recycled = 0.0f64; // c: mass sent back along r by dangling nodes
    while let Some(u) = queue.pop_front() {
        let u = u as usize;
        queued[u] = false;
        let rho = res[u];
        res[u] = 0.0;
        p[u] += (1.0 - d) * rho;
        pushes += 1;
        work += 1;
        let inv = ws.inv_out[u];
        if inv == 0.0 {
            recycled += d * rho;
        } else {
            let scale = d * rho * inv;
            let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
            work += (hi - lo) as u64;
            let side = ws.row_side[u];
            let mut spread = |t: u32, w: f64| {
                let t = t as usize;
                res[t] += scale * w;
                if !queued[t] && res[t] > threshold[t] {
                    queued[t] = true;
                    queue.push_back(t as u32);
                }
            };
            if side == UNTOUCHED {
                for (&t, &w) in targets[lo..hi].iter().zip(&weights[lo..hi]) {
                    spread(t, f64::from(w));
                }
            } else {
                let side = side as usize;
                for (&t, &w) in targets[lo..hi].iter().zip(&ws.row_weights[side..side + (hi - lo)]) {
                    spread(t, w);
                }
            }
        }
        if work >= budget {
            break;
        }
    }
    let converged = queue.is_empty();

    let scale = 1.0 / (1.0 - recycled);
    for x in p.iter_mut() {
        *x *= scale;
    }
    let residual: f64 = res.iter().sum::<f64>() * scale;
    let per_sweep = (n + m).max(1) as u64;
    PprReport {
        method: PprMethod::Push,
        iterations: u32::try_from(work.div_ceil(per_sweep)).unwrap_or(u32::MAX),
        l1_change: residual,
        error_bound: residual,
        converged,
        pushes,
        ranking_certified: false,
        ranking_stable: false,
    }
}
