//! Synonym kNN among entity vectors (METHOD.md §1, synonym edges; HippoRAG 2 §3): exact, blocked,
//! incremental (new × all), with a Cauchy–Schwarz bound in 16-bit integers that skips almost all
//! full cosines.
//!
//! Every candidate pair first gets an upper bound of its cosine: the dot product of the first
//! [`PREFIX`] dimensions plus the product of the two vectors' remaining norms. The prefixes are
//! quantised once to `i16` (one scale for all rows), so a pair's bound is 24 multiply-adds of
//! integer pairs (`pmaddwd` on x86-64 SSE2, `i32x4.dot_i16x8_s` in wasm simd128: 8
//! multiply-adds per instruction, twice the `f32` rate), computed for 32 new rows at once against
//! cache-sized tiles of older rows. The quantisation error is bounded and added to the slack
//! (below 5e-4 on a threshold of 0.8), so no pair at or above the threshold is skipped; the pairs
//! that pass get the full `f32` cosine, exactly as comparing every pair does (tested against
//! brute force).

use serde::{Deserialize, Serialize};

use crate::text::normalize::alnum_count;
use super::Store;
use crate::embed::{dot, is_zero};

/// Leading dimensions used for the bound (when the vectors have more than twice as many; even).
/// 48 measured best with the static embedder (2wiki-6k stand-in entities: with 32, 3.7% of
/// pairs still need the full cosine, with 48, 1.1%).
const PREFIX: usize = 48;
/// New rows whose bounds are computed together (one transposed block, BLOCK accumulators).
const BLOCK: usize = 32;
const _: () = assert!(BLOCK == 32, "lane masks are u32");
/// Four new rows per 128-bit vector.
const GROUPS: usize = BLOCK / 4;
/// New rows handled per pass over the older rows (a multiple of BLOCK).
const SUPER: usize = 512;
/// Older rows per tile (96 KB of packed prefixes: stays in L2 across the blocks).
const TILE: usize = 1024;
/// The quantised prefixes' largest norm: `2¹⁴`, so every product sum fits an `i32` (`≤ 2²⁸`).
const QUANT_NORM: f64 = 16384.0;

/// 128-bit lanes for the bound: SSE2 on x86-64 (always present there), simd128 on wasm32,
/// plain arrays elsewhere. `I` holds four `i32` (or eight `i16`), `F` four `f32`.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)] // SSE2 intrinsics are safe to call on x86-64 from Rust 1.87 on
mod lanes {
    use core::arch::x86_64::*;
    pub type I = __m128i;
    pub type F = __m128;
    #[inline(always)]
    pub fn zero() -> I {
        unsafe { _mm_setzero_si128() }
    }
    #[inline(always)]
    pub fn i32s(x: [i32; 4]) -> I {
        unsafe { _mm_set_epi32(x[3], x[2], x[1], x[0]) }
    }
    #[inline(always)]
    pub fn f32s(x: [f32; 4]) -> F {
        unsafe { _mm_set_ps(x[3], x[2], x[1], x[0]) }
    }
    #[inline(always)]
    pub fn splat_i32(x: i32) -> I {
        unsafe { _mm_set1_epi32(x) }
    }
    #[inline(always)]
    pub fn splat_f32(x: f32) -> F {
        unsafe { _mm_set1_ps(x) }
    }
    /// `acc + (a₀b₀ + a₁b₁, a₂b₂ + a₃b₃, …)` over the eight `i16` of `a` and `b`.
    #[inline(always)]
    pub fn madd(acc: I, a: I, b: I) -> I {
        unsafe { _mm_add_epi32(acc, _mm_madd_epi16(a, b)) }
    }
    /// Bit `k` set when `acc[k]·scale + rest_p·rest[k] + slack ≥ threshold`.
    #[inline(always)]
    pub fn reaches(acc: I, scale: F, rest_p: F, rest: F, slack: F, threshold: F) -> u32 {
        unsafe {
            let x = _mm_add_ps(
                _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(acc), scale), _mm_mul_ps(rest_p, rest)),
                slack,
            );
            _mm_movemask_ps(_mm_cmpge_ps(x, threshold)) as u32
        }
    }
}

#[cfg(target_arch = "wasm32")]
mod lanes {
    use core::arch::wasm32::*;
    pub type I = v128;
    pub type F = v128;
    #[inline(always)]
    pub fn zero() -> I {
        i32x4_splat(0)
    }
    #[inline(always)]
    pub fn i32s(x: [i32; 4]) -> I {
        i32x4(x[0], x[1], x[2], x[3])
    }
    #[inline(always)]
    pub fn f32s(x: [f32; 4]) -> F {
        f32x4(x[0], x[1], x[2], x[3])
    }
    #[inline(always)]
    pub fn splat_i32(x: i32) -> I {
        i32x4_splat(x)
    }
    #[inline(always)]
    pub fn splat_f32(x: f32) -> F {
        f32x4_splat(x)
    }
    #[inline(always)]
    pub fn madd(acc: I, a: I, b: I) -> I {
        i32x4_add(acc, i32x4_dot_i16x8(a, b))
    }
    #[inline(always)]
    pub fn reaches(acc: I, scale: F, rest_p: F, rest: F, slack: F, threshold: F) -> u32 {
        let x =
            f32x4_add(f32x4_add(f32x4_mul(f32x4_convert_i32x4(acc), scale), f32x4_mul(rest_p, rest)), slack);
        u32::from(i32x4_bitmask(f32x4_ge(x, threshold)))
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
mod lanes {
    pub type I = [i32; 4];
    pub type F = [f32; 4];
    pub fn zero() -> I {
        [0; 4]
    }
    pub fn i32s(x: [i32; 4]) -> I {
        x
    }
    pub fn f32s(x: [f32; 4]) -> F {
        x
    }
    pub fn splat_i32(x: i32) -> I {
        [x; 4]
    }
    pub fn splat_f32(x: f32) -> F {
        [x; 4]
    }
    pub fn madd(mut acc: I, a: I, b: I) -> I {
        let lo = |v: i32| v as i16 as i32;
        let hi = |v: i32| (v >> 16) as i16 as i32;
        for k in 0..4 {
            acc[k] = acc[k].wrapping_add(lo(a[k]) * lo(b[k]) + hi(a[k]) * hi(b[k]));
        }
        acc
    }
    pub fn reaches(acc: I, scale: F, rest_p: F, rest: F, slack: F, threshold: F) -> u32 {
        let mut m = 0;
        for k in 0..4 {
            m |= u32::from(acc[k] as f32 * scale[k] + rest_p[k] * rest[k] + slack[k] >= threshold[k]) << k;
        }
        m
    }
}

/// What [`GraphBuilder::link_synonyms`](super::GraphBuilder::link_synonyms) computed (for benchmarks and logs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynonymStats {
    /// Entities linked in this call (the new ones).
    pub new_entities: usize,
    /// Entities taking part in synonym edges (enough letters/digits, non-zero vector), in all.
    pub eligible: usize,
    /// Candidate pairs (new eligible × all eligible, each pair once).
    pub pairs: u64,
    /// Pairs whose full cosine was computed (the others were ruled out by a bound, see
    /// [`GraphBuilder::link_synonyms`](super::GraphBuilder::link_synonyms)).
    pub exact: u64,
    /// Pairs with cosine ≥ the threshold.
    pub above_threshold: u64,
}

/// `x·(x−1)/2`: pairs among `x` items.
fn tri(x: usize) -> u64 {
    let x = x as u64;
    x * x.saturating_sub(1) / 2
}

/// True when candidate `a` ranks before `b`: higher cosine, then lower ordinal.
#[inline]
fn better(a: (u32, f32), b: (u32, f32)) -> bool {
    a.1 > b.1 || (a.1 == b.1 && a.0 < b.0)
}

/// Offer `cand` to a top-`k` list kept sorted best first. The final list is the top `k` of all
/// candidates ever offered, whatever the order they came in (so batches give the same lists).
fn offer(list: &mut Vec<(u32, f32)>, k: usize, cand: (u32, f32)) {
    if list.len() >= k {
        match list.last() {
            Some(&last) if better(cand, last) => {
                list.pop();
            }
            _ => return,
        }
    }
    let pos = list.partition_point(|&x| better(x, cand));
    list.insert(pos, cand);
}

/// The scalars of the bound's final comparison, as lanes.
struct Bound {
    /// `1 / s²`: integer dot product → cosine units.
    scale: lanes::F,
    slack: lanes::F,
    threshold: lanes::F,
}

/// Bit `j` set when new row `j` of a transposed block may reach the threshold with one older
/// row: `pairs` are the older row's packed prefix pairs, `cols[dp][g]` the block's (four rows per
/// lane group), `rests` the block's remaining norms. Kept out of line so the accumulators stay
/// in registers.
#[inline(never)]
fn block_bounds(
    pairs: &[i32],
    cols: &[[lanes::I; GROUPS]],
    rest: f32,
    rests: &[lanes::F; GROUPS],
    b: &Bound,
) -> u32 {
    let mut acc = [lanes::zero(); GROUPS];
    for (&x, col) in pairs.iter().zip(cols) {
        let x = lanes::splat_i32(x);
        for g in 0..GROUPS {
            acc[g] = lanes::madd(acc[g], x, col[g]);
        }
    }
    let rest_p = lanes::splat_f32(rest);
    let mut mask = 0u32;
    for g in 0..GROUPS {
        mask |= lanes::reaches(acc[g], b.scale, rest_p, rests[g], b.slack, b.threshold) << (4 * g);
    }
    mask
}

/// Compare every entity from `s.linked` on with every eligible entity before it (and the new
/// ones among themselves), update the top-k lists, and mark all entities linked. Vectors must be
/// present for every entity (checked by the caller).
pub(super) fn link(s: &mut Store, progress: &mut dyn FnMut(usize, usize)) -> SynonymStats {
    let n = s.entity_nodes.len();
    let start = s.linked.min(n);
    let mut stats = SynonymStats { new_entities: n - start, ..SynonymStats::default() };
    let (k, thr, min_alnum) =
        (s.config.synonym_top_k, s.config.synonym_threshold, s.config.synonym_min_alnum);
    let dim = s.entity_vectors.dim();
    if k == 0 || start == n || dim == 0 {
        s.linked = n;
        progress(0, 0);
        return stats;
    }
    let data = s.entity_vectors.as_slice();
    let row = |e: u32| &data[e as usize * dim..(e as usize + 1) * dim];
    let eligible: Vec<u32> = (0..n as u32)
        .filter(|&e| alnum_count(&s.entity_keys[e as usize]) >= min_alnum && !is_zero(row(e)))
        .collect();
    let ne = eligible.len();
    stats.eligible = ne;
    let first_new = eligible.partition_point(|&e| (e as usize) < start);

    // The bound: cos(a, b) ≤ a[..m]·b[..m] + |a[m..]|·|b[m..]|, the prefix dot product taken
    // on prefixes quantised to i16 with one scale s: q = round(s·x), |s·x − q| ≤ ½ per dimension.
    // Then |a·b − q_a·q_b/s²| ≤ (|q_a|₁ + |q_b|₁)/(2s²) + m/(4s²) ≤ √m·(|q_a| + |q_b|)/(2s²) +
    // m/(4s²), with |q| ≤ s·M + √m/2 (M the largest prefix norm), added to the slack. The float
    // slack covers the rounding of the remaining norms and of the f32 comparison (a few ulps per
    // dimension), so no pair at or above the threshold is skipped.
    let m = if dim > 2 * PREFIX { PREFIX } else { 0 };
    let mut rest: Vec<f32> = Vec::with_capacity(ne);
    let mut max_norm = 0.0f64;
    for &e in &eligible {
        let r = row(e);
        let (pre, tail) = r.split_at(m);
        let sq = |x: &[f32]| x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>();
        max_norm = max_norm.max(sq(pre).sqrt());
        rest.push(sq(tail).sqrt() as f32);
    }
    let s_q = if max_norm > 0.0 { QUANT_NORM / max_norm } else { 1.0 };
    let q_norm = s_q * max_norm + 0.5 * (m as f64).sqrt();
    let quant_slack = ((m as f64).sqrt() * q_norm + 0.25 * m as f64) / (s_q * s_q);
    let slack = 1e-4 + 2.0 * dim as f32 * f32::EPSILON + quant_slack as f32;
    // Packed prefixes: pair dp of a row is (q[2dp], q[2dp+1]) as the low and high half of an i32.
    let pairs_of = m / 2;
    let mut packed: Vec<i32> = Vec::with_capacity(ne * pairs_of);
    for &e in &eligible {
        let r = row(e);
        let q = |x: f32| (f64::from(x) * s_q).round().clamp(-32767.0, 32767.0) as i16;
        for dp in 0..pairs_of {
            let (lo, hi) = (q(r[2 * dp]), q(r[2 * dp + 1]));
            packed.push(i32::from(lo as u16) | (i32::from(hi as u16) << 16));
        }
    }
    let bound = Bound {
        scale: lanes::splat_f32((1.0 / (s_q * s_q)) as f32),
        slack: lanes::splat_f32(slack),
        threshold: lanes::splat_f32(thr),
    };

    let total_pairs = tri(ne) - tri(first_new);
    let scale = (total_pairs / 1_000_000).max(1);
    let total_units = (total_pairs / scale) as usize;
    let neighbours = &mut s.neighbours;
    let mut done_pairs = 0u64;
    // New rows go SUPER at a time, as SUPER / BLOCK blocks whose packed prefixes are transposed
    // (pair-major, four rows per lane group), so one older row's bound against a block is
    // GROUPS independent multiply-adds per pair of dimensions. Older rows go TILE at a time, so
    // their prefixes are read from memory once per SUPER new rows and from cache by every block.
    let blocks = SUPER / BLOCK;
    let mut qt: Vec<[lanes::I; GROUPS]> = vec![[lanes::zero(); GROUPS]; blocks * pairs_of];
    let mut qrest: Vec<[lanes::F; GROUPS]> = vec![[lanes::splat_f32(0.0); GROUPS]; blocks];
    for sb in (first_new..ne).step_by(SUPER) {
        let send = (sb + SUPER).min(ne);
        for b in 0..blocks {
            let q0 = sb + b * BLOCK;
            let lane_of = |j: usize| if q0 + j < send { Some(q0 + j) } else { None };
            for dp in 0..pairs_of {
                for g in 0..GROUPS {
                    let v = |k: usize| lane_of(4 * g + k).map_or(0, |q| packed[q * pairs_of + dp]);
                    qt[b * pairs_of + dp][g] = lanes::i32s([v(0), v(1), v(2), v(3)]);
                }
            }
            for g in 0..GROUPS {
                let r = |k: usize| lane_of(4 * g + k).map_or(0.0, |q| rest[q]);
                qrest[b][g] = lanes::f32s([r(0), r(1), r(2), r(3)]);
            }
        }
        for pt in (0..send - 1).step_by(TILE) {
            let ptend = (pt + TILE).min(send - 1);
            for b in 0..blocks {
                let q0 = sb + b * BLOCK;
                if q0 >= send {
                    break;
                }
                let q1 = (q0 + BLOCK).min(send);
                let (qt_b, qrest_b) = (&qt[b * pairs_of..(b + 1) * pairs_of], &qrest[b]);
                for p in pt..ptend.min(q1 - 1) {
                    let first = if p >= q0 { p + 1 - q0 } else { 0 };
                    let lanes_on = (u32::MAX >> (BLOCK - (q1 - q0))) & (u32::MAX << first);
                    let mut mask = if m > 0 {
                        let pp = &packed[p * pairs_of..(p + 1) * pairs_of];
                        block_bounds(pp, qt_b, rest[p], qrest_b, &bound) & lanes_on
                    } else {
                        lanes_on
                    };
                    let pe = eligible[p];
                    while mask != 0 {
                        let j = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        stats.exact += 1;
                        let qe = eligible[q0 + j];
                        let c = dot(row(pe), row(qe));
                        if c >= thr {
                            stats.above_threshold += 1;
                            offer(&mut neighbours[pe as usize], k, (qe, c));
                            offer(&mut neighbours[qe as usize], k, (pe, c));
                        }
                    }
                }
            }
        }
        done_pairs += tri(send) - tri(sb);
        progress((done_pairs / scale) as usize, total_units);
    }
    stats.pairs = total_pairs;
    s.linked = n;
    progress(total_units, total_units);
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_keeps_top_k_in_any_order() {
        let cands = [(5u32, 0.9f32), (1, 0.95), (3, 0.9), (2, 0.85), (4, 0.99), (0, 0.9)];
        let mut want = cands.to_vec();
        want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        want.truncate(3);
        for rot in 0..cands.len() {
            let mut list = Vec::new();
            for i in 0..cands.len() {
                offer(&mut list, 3, cands[(i + rot) % cands.len()]);
            }
            assert_eq!(list, want, "rotation {rot}");
        }
        let mut list = Vec::new();
        offer(&mut list, 0, (1, 1.0));
        assert!(list.is_empty());
    }
}
