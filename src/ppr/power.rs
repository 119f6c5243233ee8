//! Power iteration for Personalized PageRank (docs/method/spec.md §2; HippoRAG 2 §3, CatRAG §3).
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
//!
//! **Ranking rule.** Retrieval only reads the order of the best passages. The same bound `δ`
//! holds for any two scores together (`|e_u| + |e_v| ≤ ‖e‖₁ ≤ δ`), so once every gap between
//! consecutive scores among the best `rank_top_k + 1` ranked nodes exceeds `δ`, the best
//! `rank_top_k` and their order are those of the fixed point, and the run stops
//! ([`PprConfig::rank_top_k`], off by default). Checking costs O(ranked nodes) per sweep, a few
//! percent of a sweep over the arcs; on the 2wiki-6k graph with CatRAG's teleport and overlay it
//! stops after 7.5 (top 5) or 8.8 (top 10) sweeps instead of 13.3 (Gauss–Seidel, below). Ties in
//! the fixed point never certify: the L1 rule decides then.
//!
//! **Gathering, Gauss–Seidel.** On a symmetric graph ([`CsrGraph::new_symmetric`], the knowledge
//! graph) a sweep is one pass over the nodes that gathers `Σ w·mass[u]` along each node's own
//! arcs (the stored weight of v → u is that of u → v), adds the overlay's few arcs as
//! corrections of the node's sum (`delta·mass[u]` per overlaid arc u → v), and writes the node's
//! new score and, at once, its new mass `d·π[v]/out(v)` in place: the rows after it read the new
//! mass (Gauss–Seidel; Jacobi reads only the last sweep's). The fixed point is the same; by the
//! Stein–Rosenberg theorem (Varga, *Matrix Iterative Analysis*, §3.3) Gauss–Seidel's rate is
//! at least Jacobi's for this nonnegative splitting; on the 2wiki-6k graph with CatRAG's teleport
//! and overlay the L1 rule stops after 13.3 sweeps instead of 20.8 (docs/method/speed.md §11).
//!
//! The L1 bound above still holds after a Gauss–Seidel sweep. Let `Δ = π_k − π_{k−1}` and `ρ`
//! the residual `(1−d+d·D(π_k))·r + d·Pᵀπ_k − π_k`. Row v of the sweep read the old mass of every
//! node u after it (and of itself), so `ρ_v = Σ_{u ≥ v} w'(u→v)·(mass_k[u] − mass_{k−1}[u])`
//! plus `d·r_v·ΔD` from the dangling mass, which the sweep took from `π_{k−1}`. Summed over v,
//! node u's arcs contribute at most `Σ_v w'(u→v)·d·|Δ_u|/out'(u) = d·|Δ_u|` (w', out' the
//! overlaid weights: the stored weights plus the corrections), and a dangling node `d·|Δ_u|`
//! through `D`, so `‖ρ‖₁ ≤ d·‖Δ‖₁`, and `‖π_k − π‖₁ ≤ ‖ρ‖₁/(1−d) ≤ d/(1−d)·‖Δ‖₁` because
//! `(I − d·Pᵀ)⁻¹` has L1 norm at most `1/(1−d)`. Other graphs scatter along the arcs (Jacobi).

#[cfg(target_arch = "x86_64")]
use super::layout::SweepArc;
use super::layout::{SweepLayout, LANES};
use super::{CsrGraph, PprConfig, PprMethod, PprReport, PprSolver, UNTOUCHED};

/// Rounding margin added to the L1 error bound before the ranking rule trusts a gap: far above
/// the f64 rounding of a sweep (about `deg · 2⁻⁵³` relative per score, scores ≤ 1) and far below
/// the error bounds at which the rule fires (at or above the L1 rule's tolerance of 1e-8).
const ROUNDING_MARGIN: f64 = 1e-12;

/// Run power iteration on a prepared workspace (see [`PprSolver::prepare`]); `ranked` are the
/// nodes of the ranking rule ([`PprConfig::rank_top_k`]; empty: the L1 rule only).
pub(super) fn solve(
    ws: &mut PprSolver,
    graph: &CsrGraph<'_>,
    config: &PprConfig,
    ranked: &[u32],
) -> PprReport {
    let n = graph.node_count();
    let d = config.damping;
    let (offsets, targets, weights) = (graph.offsets, graph.targets, graph.weights);
    let top_k = config.rank_top_k as usize;
    let rank_rule = top_k > 0 && ranked.len() >= 2 && d > 0.0;
    // A symmetric graph with its sweep layout: every per-node vector below is in the layout's
    // numbering until the scores are mapped back at the end.
    // `PprSolver::prepare` already put the teleport, out-weights, dangling nodes and overlay
    // corrections there; the ranked nodes are renamed here.
    let layout = graph.precomputed.and_then(|p| p.layout_for(graph));
    let mut ranked_local = std::mem::take(&mut ws.ranked_local);
    let ranked: &[u32] = match layout {
        Some(l) => {
            ranked_local.clear();
            ranked_local.extend(ranked.iter().map(|&u| l.rank[u as usize]));
            &ranked_local
        }
        None => ranked,
    };
    // The gathering sweeps read a row's corrections with the row: in order of target (stable,
    // so a target's corrections keep their order).
    ws.corrections.sort_by_key(|c| c.1);
    // Gauss–Seidel on a symmetric graph (module docs): one mass array, updated in place.
    let in_place = layout.is_some() || graph.symmetric;

    ws.scores.clear();
    ws.scores.extend_from_slice(&ws.teleport);
    // Every sweep writes all of `next` (and, scattering, `next_mass`) before reading them: only
    // the length matters. The Gauss–Seidel sweeps update `mass` in place and need no second one.
    ws.next.resize(n, 0.0);
    ws.mass.clear();
    ws.mass.extend(ws.scores.iter().zip(&ws.inv_out).map(|(&p, &inv)| d * p * inv));
    if !in_place {
        ws.next_mass.resize(n, 0.0);
    }

    let mut iterations = 0;
    let mut change = f64::INFINITY;
    let mut certified = false;
    let stable_rule = top_k > 0 && !ranked.is_empty() && config.rank_stable_sweeps > 0;
    let mut stable = 0u32;
    let mut stopped_stable = false;

    ws.top_now.clear();
    ws.top_before.clear();
    while iterations < config.max_iterations {
        iterations += 1;
        // Teleport term, with the dangling nodes' mass returned along r.
        let dangling_mass: f64 = ws.dangling.iter().map(|&u| ws.scores[u as usize]).sum();
        let base = (1.0 - d) + d * dangling_mass;
        change = if let Some(l) = layout {
            layout_sweep(ws, l, base, d)
        } else if graph.symmetric {
            gather_sweep(ws, offsets, targets, weights, base, d)
        } else {
            scatter_sweep(ws, offsets, targets, weights, base, d)
        };
        std::mem::swap(&mut ws.scores, &mut ws.next);
        if !in_place {
            std::mem::swap(&mut ws.mass, &mut ws.next_mass);
        }
        if change < config.tolerance {
            break;
        }
        // One scan for both rules: the best `top_k + 1` ranked nodes, best first.
        let all_finite = if rank_rule || stable_rule {
            best_of(&ws.scores, ranked, top_k + 1, &mut ws.best)
        } else {
            false
        };
        if rank_rule && all_finite && ws.best.len() >= 2 {
            let bound = d / (1.0 - d) * change + ROUNDING_MARGIN;
            if ws.best.windows(2).all(|w| w[0].0 - w[1].0 > bound) {
                certified = true;
                break;
            }
        }
        if stable_rule {
            ws.top_now.clear();
            ws.top_now.extend(ws.best.iter().take(top_k).map(|&(_, i)| (0.0, i)));
            stable = if ws.top_now == ws.top_before { stable + 1 } else { 0 };
            std::mem::swap(&mut ws.top_now, &mut ws.top_before);
            if stable >= config.rank_stable_sweeps {
                stopped_stable = true;
                break;
            }
        }
    }

    if let Some(l) = layout {
        // Back to the stored numbering.
        ws.scratch.clear();
        ws.scratch.resize(n, 0.0);
        for (&old, &x) in l.order.iter().zip(&ws.scores) {
            ws.scratch[old as usize] = x;
        }
        std::mem::swap(&mut ws.scores, &mut ws.scratch);
    }
    ws.ranked_local = ranked_local;

    PprReport {
        method: PprMethod::Power,
        iterations,
        l1_change: change,
        error_bound: if d > 0.0 { d / (1.0 - d) * change } else { 0.0 },
        converged: change < config.tolerance || certified || stopped_stable,
        pushes: 0,
        ranking_certified: certified && change >= config.tolerance,
        ranking_stable: stopped_stable,
    }
}

/// The best `keep` of `ranked` by `scores` as `(score, position in ranked)`, best first (ties:
/// lower position first; a non-finite score counts as −∞), in one pass that keeps them sorted:
/// the stability rule reads the first `rank_top_k` positions, the ranking rule the gaps between
/// the `rank_top_k + 1` scores (when every score is finite). `top_of` and `order_is_certain`
/// (by selection over all ranked nodes) are the tests' references. Returns whether every ranked
/// score is finite. O(|ranked| + keep · insertions).
pub(super) fn best_of(scores: &[f64], ranked: &[u32], keep: usize, out: &mut Vec<(f64, u32)>) -> bool {
    out.clear();
    if keep == 0 {
        return ranked.iter().all(|&u| scores.get(u as usize).is_some_and(|x| x.is_finite()));
    }
    let mut all_finite = true;
    for (i, &u) in ranked.iter().enumerate() {
        let x = scores.get(u as usize).copied().unwrap_or(f64::NAN);
        let x = if x.is_finite() {
            x
        } else {
            all_finite = false;
            f64::NEG_INFINITY
        };
        // Positions come in increasing order, so a tie with a kept entry never displaces it.
        if out.len() == keep {
            match out.last() {
                Some(last) if x.total_cmp(&last.0).is_gt() => {
                    out.pop();
                }
                _ => continue,
            }
        }
        let at = out.partition_point(|e| e.0.total_cmp(&x).is_ge());
        out.insert(at, (x, i as u32));
    }
    all_finite
}

/// The tests' reference for [`best_of`]'s first `top_k` positions.
#[cfg(test)]
/// The best `top_k` of `ranked` by `scores`, as positions in `ranked`, best first (ties: lower
/// position first; a non-finite score ranks last). O(|ranked|).
pub(super) fn top_of(scores: &[f64], ranked: &[u32], top_k: usize, out: &mut Vec<(f64, u32)>) {
    out.clear();
    out.extend(ranked.iter().enumerate().map(|(i, &u)| {
        let x = scores.get(u as usize).copied().unwrap_or(f64::NEG_INFINITY);
        (if x.is_finite() { x } else { f64::NEG_INFINITY }, i as u32)
    }));
    let order = |a: &(f64, u32), b: &(f64, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let keep = top_k.min(out.len());
    if keep == 0 {
        out.clear();
        return;
    }
    if keep < out.len() {
        out.select_nth_unstable_by(keep - 1, order);
        out.truncate(keep);
    }
    out.sort_unstable_by(order);
    // Only the order is compared between sweeps, not the scores.
    for x in out.iter_mut() {
        x.0 = 0.0;
    }
}

/// `mass[t]` for an arc's target `t`. Every target is below `n` (checked when the
/// [`CsrGraph`] was made) and `mass` has `n` entries (checked by the caller), so the read is in
/// bounds; it skips the bounds check of the sweep's innermost loop.
#[inline(always)]
fn mass_at(mass: &[f64], t: u32) -> f64 {
    debug_assert!((t as usize) < mass.len());
    // SAFETY: `t < n = mass.len()` (the CsrGraph invariant, and `gather_sweep` returns early
    // when `mass` is shorter than the graph).
    unsafe { *mass.get_unchecked(t as usize) }
}

/// The overlay's corrections into row `v` (`corrections` sorted by target, from `*cursor` on):
/// `Σ delta · mass[u]` over the overlaid arcs u → v, advancing `*cursor` past them.
#[inline(always)]
fn corrections_into(v: usize, corrections: &[(u32, u32, f64)], cursor: &mut usize, mass: &[f64]) -> f64 {
    let mut sum = 0.0;
    while let Some(&(u, _, delta)) = corrections.get(*cursor).filter(|c| c.1 as usize == v) {
        sum += mass.get(u as usize).copied().unwrap_or(0.0) * delta;
        *cursor += 1;
    }
    sum
}

/// One Gauss–Seidel sweep on a symmetric graph, in one pass over the nodes in order:
/// `next[v] = base·r[v] + Σ_{v→u} w·mass[u] + Σ_{overlaid u→v} delta·mass[u]` (the stored weight
/// of v → u is that of u → v; `ws.corrections` sorted by target), and `mass[v] = d·next[v]/out(v)`
/// written back at once, so the rows after `v` read its new mass (module docs). Returns the L1
/// change from `ws.scores`.
fn gather_sweep(
    ws: &mut PprSolver,
    offsets: &[u32],
    targets: &[u32],
    weights: &[f32],
    base: f64,
    d: f64,
) -> f64 {
    let (mass, next) = (&mut ws.mass, &mut ws.next);
    let (scores, teleport, inv_out) = (&ws.scores, &ws.teleport, &ws.inv_out);
    let n = offsets.len().saturating_sub(1);
    if [mass.len(), next.len(), scores.len(), teleport.len(), inv_out.len()].iter().any(|&l| l != n) {
        // Not reachable: the solver sizes its buffers to the graph. Keeps `mass_at` in bounds.
        return f64::INFINITY;
    }
    let mut cursor = 0;
    let mut change = 0.0f64;
    for v in 0..n {
        let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
        let (ts, wsl) = (&targets[lo..hi], &weights[lo..hi]);
        let m: &[f64] = mass;
        // Two accumulators: rows are short, so one add chain would bound the sweep.
        let (mut a0, mut a1) = (0.0f64, 0.0f64);
        let mut pairs_t = ts.chunks_exact(2);
        let mut pairs_w = wsl.chunks_exact(2);
        for (t, w) in (&mut pairs_t).zip(&mut pairs_w) {
            a0 += mass_at(m, t[0]) * f64::from(w[0]);
            a1 += mass_at(m, t[1]) * f64::from(w[1]);
        }
        if let (Some(&t), Some(&w)) = (pairs_t.remainder().first(), pairs_w.remainder().first()) {
            a0 += mass_at(m, t) * f64::from(w);
        }
        let sum = (a0 + a1) + corrections_into(v, &ws.corrections, &mut cursor, m);
        let y = base * teleport[v] + sum;
        change += (y - scores[v]).abs();
        next[v] = y;
        mass[v] = d * y * inv_out[v];
    }
    change
}

#[cfg(test)]
thread_local! {
    /// Tests: run the layout sweep's scalar rows (the wasm path) even where AVX2 is available.
    pub(super) static SCALAR_ROWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`gather_sweep`] on a [`SweepLayout`] (every vector in its numbering): each row is a run of
/// `(target, weight)` pairs padded to a multiple of [`LANES`], summed with [`LANES`]
/// independent accumulators, then its overlay corrections; the same Gauss–Seidel order.
fn layout_sweep(ws: &mut PprSolver, layout: &SweepLayout, base: f64, d: f64) -> f64 {
    let (mass, next) = (&mut ws.mass, &mut ws.next);
    let (scores, teleport, inv_out) = (&ws.scores, &ws.teleport, &ws.inv_out);
    let (offsets, arcs) = (&layout.offsets, &layout.arcs);
    let n = layout.node_count();
    if [mass.len(), next.len(), scores.len(), teleport.len(), inv_out.len()].iter().any(|&l| l != n)
        || offsets.len() != n + 1
    {
        // Not reachable: the solver sizes its buffers to the graph. Keeps `mass_at` in bounds.
        return f64::INFINITY;
    }
    #[cfg(target_arch = "x86_64")]
    let vector = std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let vector = false;
    #[cfg(test)]
    let vector = vector && !SCALAR_ROWS.with(std::cell::Cell::get);
    if vector {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: AVX2 and FMA were detected; every arc's target is below n = mass.len()
            // (the layout is built from checked arrays), every row's length is a multiple of
            // LANES (SweepLayout::new pads them), and every vector has n entries (checked above).
            return unsafe {
                layout_rows_avx2(
                    mass,
                    offsets,
                    arcs,
                    next,
                    (scores, teleport, inv_out),
                    &ws.corrections,
                    base,
                    d,
                )
            };
        }
    }
    // The scalar rows (wasm, or x86-64 without AVX2): iterators rather than indexing, and one
    // comparison per row for the next corrected row, so a row costs what Jacobi's did.
    let corrections = &ws.corrections;
    let mut cursor = 0;
    let mut corrected = corrections.first().map_or(usize::MAX, |c| c.1 as usize);
    let mut change = 0.0f64;
    let rows = next.iter_mut().zip(scores.iter().zip(teleport)).zip(inv_out).zip(offsets.windows(2));
    for (v, (((x, (&p, &r)), &inv), bounds)) in rows.enumerate() {
        let row = &arcs[bounds[0] as usize..bounds[1] as usize];
        let m: &[f64] = mass;
        let mut acc = [0.0f64; LANES];
        for step in row.chunks_exact(LANES) {
            for (a, arc) in acc.iter_mut().zip(step) {
                *a += mass_at(m, arc.target) * f64::from(arc.weight);
            }
        }
        let mut sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        if v == corrected {
            sum += corrections_into(v, corrections, &mut cursor, m);
            corrected = corrections.get(cursor).map_or(usize::MAX, |c| c.1 as usize);
        }
        let y = base * r + sum;
        change += (y - p).abs();
        *x = y;
        if let Some(slot) = mass.get_mut(v) {
            *slot = d * y * inv;
        }
    }
    change
}

/// The rows of [`layout_sweep`] with AVX2: four arcs per step (one 32-byte load split into
/// targets and weights, a gather of the four masses, one fused multiply-add into four `f64`
/// lanes), the lanes summed at the row's end, the row's corrections added, and its new mass
/// written in place. Returns the L1 change of the sweep.
///
/// # Safety
/// The CPU has AVX2 and FMA; `offsets` has `n + 1` entries, every row `offsets[v]..offsets[v+1]`
/// of `arcs` has a multiple of [`LANES`] arcs, every target is below `mass.len()`, and `mass`,
/// `next`, `scores`, `teleport`, `inv_out` have `n` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn layout_rows_avx2(
    mass: &mut [f64],
    offsets: &[u32],
    arcs: &[SweepArc],
    next: &mut [f64],
    (scores, teleport, inv_out): (&[f64], &[f64], &[f64]),
    corrections: &[(u32, u32, f64)],
    base: f64,
    d: f64,
) -> f64 {
    use std::arch::x86_64::*;
    let split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let base_ptr = arcs.as_ptr();
    let mass_ptr = mass.as_mut_ptr();
    let mut cursor = 0;
    let mut change = 0.0f64;
    for v in 0..next.len() {
        let (lo, hi) = (*offsets.get_unchecked(v) as usize, *offsets.get_unchecked(v + 1) as usize);
        let mut acc = _mm256_setzero_pd();
        let mut a = lo;
        while a < hi {
            let raw = _mm256_loadu_si256(base_ptr.add(a).cast::<__m256i>());
            let parts = _mm256_permutevar8x32_epi32(raw, split);
            let idx = _mm256_castsi256_si128(parts);
            let w = _mm256_cvtps_pd(_mm_castsi128_ps(_mm256_extracti128_si256::<1>(parts)));
            let g = _mm256_i32gather_pd::<8>(mass_ptr.cast_const(), idx);
            acc = _mm256_fmadd_pd(g, w, acc);
            a += LANES;
        }
        let pair = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd::<1>(acc));
        let mut sum = _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
        while let Some(&(u, _, delta)) = corrections.get(cursor).filter(|c| c.1 as usize == v) {
            sum += *mass_ptr.add(u as usize) * delta;
            cursor += 1;
        }
        let y = base * *teleport.get_unchecked(v) + sum;
        change += (y - *scores.get_unchecked(v)).abs();
        *next.get_unchecked_mut(v) = y;
        *mass_ptr.add(v) = d * y * *inv_out.get_unchecked(v);
    }
    change
}

/// One sweep on any graph: `next = base·r`, then each row's mass scattered along its arcs (the
/// effective weights of the rows the overlay touches); also the next sweep's `mass` and the L1
/// change, which it returns.
fn scatter_sweep(
    ws: &mut PprSolver,
    offsets: &[u32],
    targets: &[u32],
    weights: &[f32],
    base: f64,
    d: f64,
) -> f64 {
    let next = &mut ws.next;
    for (x, &r) in next.iter_mut().zip(&ws.teleport) {
        *x = base * r;
    }
    scatter(next, &ws.mass, offsets, targets, weights, &ws.row_side, &ws.row_weights);
    let mut change = 0.0f64;
    for (((&y, &p), m), &inv) in next.iter().zip(&ws.scores).zip(ws.next_mass.iter_mut()).zip(&ws.inv_out) {
        change += (y - p).abs();
        *m = d * y * inv;
    }
    change
}

/// Walk term by scattering (any graph): each row's mass goes along its arcs, with the effective
/// weights of the rows the overlay touches.
fn scatter(
    next: &mut [f64],
    mass: &[f64],
    offsets: &[u32],
    targets: &[u32],
    weights: &[f32],
    row_side: &[u32],
    row_weights: &[f64],
) {
    for (u, &scale) in mass.iter().enumerate() {
        if scale == 0.0 {
            continue; // no mass yet, or dangling
        }
        let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
        let side = row_side[u];
        if side == UNTOUCHED {
            for (&t, &w) in targets[lo..hi].iter().zip(&weights[lo..hi]) {
                next[t as usize] += scale * f64::from(w);
            }
        } else {
            let side = side as usize;
            let row = &row_weights[side..side + (hi - lo)];
            for (&t, &w) in targets[lo..hi].iter().zip(row) {
                next[t as usize] += scale * w;
            }
        }
    }
}

/// The tests' reference for the ranking rule on [`best_of`]'s scores.
#[cfg(test)]
/// The ranking rule: true when the best `top_k` of `ranked` by `scores` and their order are
/// those of any vector within L1 distance `bound` of `scores` — every gap between consecutive
/// scores among the best `top_k + 1` exceeds `bound`. (Two scores move by at most `bound`
/// together, so each such pair keeps its order, and every node below the `top_k + 1`-th stays
/// below the `top_k`-th.) O(|ranked|); `buf` is scratch space.
pub(super) fn order_is_certain(
    scores: &[f64],
    ranked: &[u32],
    top_k: usize,
    bound: f64,
    buf: &mut Vec<f64>,
) -> bool {
    buf.clear();
    buf.extend(ranked.iter().map(|&u| scores.get(u as usize).copied().unwrap_or(f64::NAN)));
    if buf.iter().any(|x| !x.is_finite()) {
        return false;
    }
    let keep = (top_k + 1).min(buf.len());
    if keep < 2 {
        return false;
    }
    let desc = |a: &f64, b: &f64| b.total_cmp(a);
    if keep < buf.len() {
        buf.select_nth_unstable_by(keep - 1, desc);
        buf.truncate(keep);
    }
    buf.sort_unstable_by(desc);
    buf.windows(2).all(|w| w[0] - w[1] > bound)
}
