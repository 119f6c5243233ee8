//! Synonym kNN among entity vectors (docs/method/spec.md §1, synonym edges; HippoRAG 2 §3): exact, blocked,
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

use super::{EntityRows, Store};
use crate::embed::dot;
use crate::text::normalize::alnum_count;

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

/// How the synonym kNN finds the pairs whose full cosine it computes
/// ([`GraphConfig::synonym_search`](super::GraphConfig::synonym_search)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SynonymSearch {
    /// Every pair is compared (quadratic; a Cauchy–Schwarz bound skips most full cosines): the
    /// edges are exactly those of comparing every pair.
    Exact,
    /// Random-hyperplane LSH (Charikar 2002, "Similarity estimation techniques from rounding
    /// algorithms"; banding as in Indyk & Motwani 1998): a pair is compared only when its two
    /// 2048-bit sign sketches agree on one of [`LSH_TABLES`] 16-bit keys and differ in few
    /// enough of their first 512 bits and of all 2048 ([`lsh_hamming_limit`]). Sub-quadratic; a pair at cosine
    /// 0.8 is missed with probability about 0.5%, one at 0.85 with about 0.1%. The rule depends
    /// only on the two vectors (fixed seeds), so adding passages gives the graph a rebuild gives.
    /// Used for thresholds ≥ [`LSH_MIN_THRESHOLD`] and vectors of ≥ [`LSH_MIN_DIM`] dimensions;
    /// otherwise the search is exact.
    #[default]
    Lsh,
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
    /// [`SynonymSearch::Lsh`]: pairs sharing a bucket, summed over the tables (a pair in two
    /// tables counts twice); 0 for the exact search.
    #[serde(default)]
    pub bucket_pairs: u64,
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
/// present for every entity (checked by the caller), in either form ([`EntityRows`]): with the
/// names held as bags, [`SynonymSearch::Lsh`] makes each vector when it needs it (no copy of
/// all of them), while the exact search makes all of them for its duration.
pub(super) fn link(s: &mut Store, progress: &mut dyn FnMut(usize, usize)) -> SynonymStats {
    let n = s.entity_nodes.len();
    let start = s.linked.min(n);
    let mut stats = SynonymStats { new_entities: n - start, ..SynonymStats::default() };
    let (k, thr, min_alnum) =
        (s.config.synonym_top_k, s.config.synonym_threshold, s.config.synonym_min_alnum);
    let rows = EntityRows::of(&s.entity_vectors, &s.bags);
    let dim = rows.dim();
    if k == 0 || start == n || dim == 0 {
        s.linked = n;
        progress(0, 0);
        return stats;
    }
    let eligible: Vec<u32> = (0..n as u32)
        .filter(|&e| alnum_count(&s.entity_keys[e as usize]) >= min_alnum && !rows.is_zero(e))
        .collect();
    let ne = eligible.len();
    stats.eligible = ne;
    let first_new = eligible.partition_point(|&e| (e as usize) < start);
    if s.config.synonym_search == SynonymSearch::Lsh && thr >= LSH_MIN_THRESHOLD && dim >= LSH_MIN_DIM {
        lsh_link(&rows, &mut s.neighbours, (k, thr), &eligible, first_new, &mut stats, progress);
        s.linked = n;
        return stats;
    }
    let data = rows.dense();
    let row = |e: u32| &data[e as usize * dim..(e as usize + 1) * dim];

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

/// Sign bits per [`SynonymSearch::Lsh`] sketch (random hyperplanes).
pub const LSH_BITS: usize = 2048;
/// `u64` words per sketch.
const LSH_WORDS: usize = LSH_BITS / 64;
/// [`SynonymSearch::Lsh`] tables (bands). Each keys on 2 of the sketch's 256 bytes (16 bits;
/// the byte pairs are distinct, drawn with a fixed seed). A pair at cosine c agrees on one
/// sign bit with probability `1 − arccos(c)/π` (0.795 at 0.8), on a 16-bit key with that to
/// the 16th (2.6% at 0.8, 1.5e-5 at 0), so 200 tables miss a pair at 0.8 with probability
/// about `(1 − 0.026)²⁰⁰ ≈ 0.5%` and put a pair at cosine 0 in some bucket with probability
/// 0.3%.
pub const LSH_TABLES: usize = 200;
/// Candidate pairs listed before they are compared ([`SynonymSearch::Lsh`]): after the table
/// where the list reaches this length, its pairs are sorted, deduplicated and compared, and the
/// list starts again (8 MB of pairs at a time instead of all of them: 9.6M bucket pairs on
/// 2wiki-6k). A pair is compared in the block of the first table whose key it shares. The
/// unit tests use 256, so that their graphs take many blocks.
const LSH_CHUNK_PAIRS: usize = if cfg!(test) { 256 } else { 1 << 20 };
/// Leading sketch bits whose Hamming distance filters the pairs that share a bucket.
const LSH_FILTER_BITS: usize = 512;
/// Below this synonym threshold [`SynonymSearch::Lsh`] falls back to the exact search (the
/// tables are sized for the default 0.8: at lower thresholds they would miss more pairs).
pub const LSH_MIN_THRESHOLD: f32 = 0.75;
/// Vectors of fewer dimensions are compared exactly (too few independent hyperplanes).
pub const LSH_MIN_DIM: usize = 64;
/// Seed of the random signs and of the tables' byte pairs (fixed: a pair's fate depends only on
/// its two vectors).
const LSH_SEED: u64 = 0x6361_6972_6e5f_6c73;

/// SplitMix64 (Steele, Lea & Flood 2014): the fixed-seed stream of signs and byte pairs.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The largest Hamming distance, over `bits` sketch bits, of a pair that may still reach
/// cosine `threshold`: the expected distance at the threshold, `bits·arccos(t)/π`, plus six
/// standard deviations of the binomial (a pair at the threshold is dropped with probability
/// below 1e-8; one further above, less). At 0.8: 160 of 512 bits, 529 of 2048.
pub fn lsh_hamming_limit(threshold: f32, bits: usize) -> u32 {
    let f = f64::from(threshold.clamp(-1.0, 1.0)).acos() / std::f64::consts::PI;
    let n = bits as f64;
    (n * f + 6.0 * (n * f * (1.0 - f)).sqrt()).ceil() as u32
}

/// In-place unnormalised fast Walsh–Hadamard transform (`x.len()` a power of two).
///
/// The butterflies of the first two stages (`h` = 1, 2) are done together as one 4-point
/// transform per group of four, and later stages four lanes at a time, so the compiler emits
/// vector code for every stage (SSE2 natively, `simd128` in wasm). Each output is the same
/// sequence of additions and subtractions as stage-by-stage butterflies, so the values are
/// bit-identical to the textbook loop (tested).
fn fwht(x: &mut [f32]) {
    let n = x.len();
    let mut h = 1;
    if n >= 4 {
        for q in x.chunks_exact_mut(4) {
            let (s0, d0) = (q[0] + q[1], q[0] - q[1]);
            let (s1, d1) = (q[2] + q[3], q[2] - q[3]);
            q[0] = s0 + s1;
            q[1] = d0 + d1;
            q[2] = s0 - s1;
            q[3] = d0 - d1;
        }
        h = 4;
    }
    while h < n {
        for block in x.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            if h >= 4 {
                for (a, b) in lo.chunks_exact_mut(4).zip(hi.chunks_exact_mut(4)) {
                    let u: [f32; 4] = [a[0], a[1], a[2], a[3]];
                    let v: [f32; 4] = [b[0], b[1], b[2], b[3]];
                    for l in 0..4 {
                        a[l] = u[l] + v[l];
                        b[l] = u[l] - v[l];
                    }
                }
            } else {
                for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*a, *b);
                    *a = u + v;
                    *b = u - v;
                }
            }
        }
        h *= 2;
    }
}

/// The pseudo-random rotations behind the sketch (Andoni et al. 2015, "Practical and optimal
/// LSH for angular distance", §5: `H·D₃·H·D₂·H·D₁` with `H` the Hadamard matrix and `Dᵢ`
/// random ±1 diagonals). `H·D₂·H·D₁` is shared; each final `H·D₃` gives `n` more sign bits, so
/// 2048 bits cost `2 + 2048/n` transforms of size `n` instead of a dense `2048 × dim` product.
struct Rotations {
    /// Transform size: `dim` rounded up to a power of two (at least 2).
    n: usize,
    d1: Vec<f32>,
    d2: Vec<f32>,
    /// One diagonal per block of `n` output bits.
    d3: Vec<Vec<f32>>,
}

impl Rotations {
    fn new(dim: usize) -> Self {
        let n = dim.next_power_of_two().max(2);
        let mut state = LSH_SEED;
        let signs = |state: &mut u64| -> Vec<f32> {
            (0..n).map(|_| if splitmix(state) & 1 == 0 { 1.0 } else { -1.0 }).collect()
        };
        let d1 = signs(&mut state);
        let d2 = signs(&mut state);
        let d3 = (0..LSH_BITS.div_ceil(n)).map(|_| signs(&mut state)).collect();
        Rotations { n, d1, d2, d3 }
    }

    /// The [`LSH_WORDS`]-word sign sketch of `v` into `out` (bit `i` set when output coordinate
    /// `i` is > 0). `y`, `z` are scratch of length `n`.
    fn sketch(&self, v: &[f32], y: &mut [f32], z: &mut [f32], out: &mut [u64]) {
        y.fill(0.0);
        for ((y, &x), &d) in y.iter_mut().zip(v).zip(&self.d1) {
            *y = x * d;
        }
        fwht(y);
        for (y, &d) in y.iter_mut().zip(&self.d2) {
            *y *= d;
        }
        fwht(y);
        out.fill(0);
        let mut bit = 0;
        for d3 in &self.d3 {
            for ((z, &y), &d) in z.iter_mut().zip(y.iter()).zip(d3) {
                *z = y * d;
            }
            fwht(z);
            let take = (LSH_BITS - bit).min(self.n);
            for (c, chunk) in z[..take].chunks(64).enumerate() {
                let mut word = 0u64;
                for (j, &x) in chunk.iter().enumerate() {
                    word |= u64::from(x > 0.0) << j;
                }
                // `bit` is a multiple of 64 whenever n ≥ 64; below, words fill in parts.
                let at = bit + 64 * c;
                out[at / 64] |= word << (at % 64);
            }
            bit += take;
            if bit == LSH_BITS {
                return;
            }
        }
    }
}

/// The [`LSH_TABLES`] distinct byte pairs `(a, b)`, `a ≠ b`, the tables key on.
fn lsh_tables() -> Vec<(u8, u8)> {
    let mut state = LSH_SEED ^ 0x7461_626c_6573;
    let mut out: Vec<(u8, u8)> = Vec::with_capacity(LSH_TABLES);
    while out.len() < LSH_TABLES {
        let r = splitmix(&mut state);
        let (a, b) = ((r & 0xFF) as u8, ((r >> 8) & 0xFF) as u8);
        if a != b && !out.contains(&(a, b)) && !out.contains(&(b, a)) {
            out.push((a, b));
        }
    }
    out
}

/// Byte `j` (0..256) of a sketch.
#[inline(always)]
fn sketch_byte(sk: &[u64], j: usize) -> u32 {
    ((sk[j / 8] >> (8 * (j % 8))) & 0xFF) as u32
}

/// One entity's sketch, aligned so its first [`LSH_FILTER_BITS`] bits (read per bucket pair)
/// are one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Sketch([u64; LSH_WORDS]);
const _: () = assert!(LSH_FILTER_BITS == 512, "the filter bits are one 64-byte line");
/// Sketches per block of the LSH search's sketch store (2 MB; a power of two).
const SKETCH_BLOCK: usize = 8192;

/// A candidate pair of eligible positions `(p, q)`, `p < q`, packed so that the integer order
/// is the (p, q) order: 16 bits each when every position fits (half the list's memory), else
/// 32.
trait PairKey: Copy + Ord {
    fn pack(p: usize, q: usize) -> Self;
    fn unpack(self) -> (usize, usize);
}

impl PairKey for u32 {
    #[inline(always)]
    fn pack(p: usize, q: usize) -> Self {
        (p as u32) << 16 | q as u32
    }
    #[inline(always)]
    fn unpack(self) -> (usize, usize) {
        ((self >> 16) as usize, (self & 0xFFFF) as usize)
    }
}

impl PairKey for u64 {
    #[inline(always)]
    fn pack(p: usize, q: usize) -> Self {
        (p as u64) << 32 | q as u64
    }
    #[inline(always)]
    fn unpack(self) -> (usize, usize) {
        ((self >> 32) as usize, (self & 0xFFFF_FFFF) as usize)
    }
}

/// [`SynonymSearch::Lsh`]: the new eligible entities (`eligible[first_new..]`) against all
/// eligible ones, each pair once. A pair is compared (full cosine, as the exact search) when
/// its sketches share the key of some table, differ in at most [`lsh_hamming_limit`] of their
/// first [`LSH_FILTER_BITS`] bits, and differ in at most the [`lsh_hamming_limit`] of
/// [`LSH_BITS`] bits over the whole sketch.
///
/// The tables are taken in blocks: the pairs passing the first filter in a block's tables are
/// listed until the list holds [`LSH_CHUNK_PAIRS`], then sorted, deduplicated and compared in
/// ascending (older, newer) order. A pair listed in two blocks is compared in the block of the
/// first table whose key it shares (an earlier block's tables are looked up from the two
/// sketches' equal bytes, [`shares_table_before`]), so every pair is compared once, as with one
/// list of all pairs; each entity's top-k list does not depend on the order its candidates are
/// offered in ([`offer`]). Memory: the sketches (256 bytes per entity, in blocks of 2 MB) and
/// one block's list (4 MB to 5 MB of pairs packed in 32 bits for up to 65,536 eligible
/// entities, twice that beyond) instead of every candidate pair; with
/// the names held as bags, no vector is kept: each is made for its sketch, and for the full
/// cosines the older vector once per run of its pairs (they come sorted) and the newer one per
/// pair.
fn lsh_link(
    rows: &EntityRows<'_>,
    neighbours: &mut [Vec<(u32, f32)>],
    k_thr: (usize, f32),
    eligible: &[u32],
    first_new: usize,
    stats: &mut SynonymStats,
    progress: &mut dyn FnMut(usize, usize),
) {
    if eligible.len() <= 1 << 16 {
        lsh_link_with::<u32>(rows, neighbours, k_thr, eligible, first_new, stats, progress)
    } else {
        lsh_link_with::<u64>(rows, neighbours, k_thr, eligible, first_new, stats, progress)
    }
}

/// [`lsh_link`] with candidate pairs packed as `P`.
fn lsh_link_with<P: PairKey>(
    rows: &EntityRows<'_>,
    neighbours: &mut [Vec<(u32, f32)>],
    (k, thr): (usize, f32),
    eligible: &[u32],
    first_new: usize,
    stats: &mut SynonymStats,
    progress: &mut dyn FnMut(usize, usize),
) {
    let ne = eligible.len();
    stats.pairs = tri(ne) - tri(first_new);
    let dim = rows.dim();
    progress(0, LSH_TABLES);
    let rot = Rotations::new(dim);
    let (mut y, mut z) = (vec![0.0f32; rot.n], vec![0.0f32; rot.n]);
    // The sketches: the first line of each (the filter bits) is read per bucket pair, the whole
    // for the tables' keys, the second filter and the shared tables.
    // In blocks of SKETCH_BLOCK (2 MB each) rather than one block of up to 10 MB: in the page,
    // whose memory only grows, blocks this size fit in the space the graph's build has freed
    // (its lookups, the lists' spare room) instead of all going on top of the heap.
    let mut sketches: Vec<Vec<Sketch>> = Vec::with_capacity(ne.div_ceil(SKETCH_BLOCK));
    let (mut older, mut newer) = (Vec::new(), Vec::new());
    for part in eligible.chunks(SKETCH_BLOCK) {
        let mut block = vec![Sketch([0; LSH_WORDS]); part.len()];
        for (sk, &e) in block.iter_mut().zip(part) {
            rot.sketch(rows.row(e, &mut older), &mut y, &mut z, &mut sk.0);
        }
        sketches.push(block);
    }
    let sketch = |i: usize| &sketches[i / SKETCH_BLOCK][i % SKETCH_BLOCK].0;
    // The older vector of the pairs being compared (made once per run of pairs that share it).
    let mut older_of = usize::MAX;
    let sk = |i: usize| &sketch(i)[..];
    let filter = |i: usize| &sketch(i)[..LSH_FILTER_BITS / 64];
    let tables = lsh_tables();
    let limit = lsh_hamming_limit(thr, LSH_FILTER_BITS);
    let limit_full = lsh_hamming_limit(thr, LSH_BITS);
    let mut start = vec![0u32; (1 << 16) + 1];
    let mut fill = vec![0u32; 1 << 16];
    let mut order = vec![0u32; ne];
    // The keys of KEY_GROUP tables at a time, from one sequential pass over the sketches
    // (entity-major: the keys of entity i for the group's tables side by side).
    const KEY_GROUP: usize = 16;
    let mut keys = vec![0u16; ne * KEY_GROUP];
    // Pairs that passed the filter since `block_start` (a pair in several of those tables
    // appears once per table until the sort).
    let mut cands: Vec<P> = Vec::with_capacity(LSH_CHUNK_PAIRS + LSH_CHUNK_PAIRS / 4);
    let mut block_start = 0usize;
    let by_byte = tables_by_byte(&tables);
    for (t, _) in tables.iter().enumerate() {
        let g = t % KEY_GROUP;
        if g == 0 {
            let group = &tables[t..(t + KEY_GROUP).min(tables.len())];
            for (i, out) in keys.chunks_exact_mut(KEY_GROUP).enumerate() {
                let w = sk(i);
                for (key, &(a, b)) in out.iter_mut().zip(group) {
                    *key = (sketch_byte(w, usize::from(a)) | sketch_byte(w, usize::from(b)) << 8) as u16;
                }
            }
        }
        // Counting sort by key: `order` lists the entities bucket by bucket, each bucket in
        // ascending eligible position.
        let key = |i: usize| usize::from(keys[i * KEY_GROUP + g]);
        start.fill(0);
        for i in 0..ne {
            start[key(i) + 1] += 1;
        }
        for j in 1..start.len() {
            start[j] += start[j - 1];
        }
        fill.copy_from_slice(&start[..1 << 16]);
        for i in 0..ne {
            let f = &mut fill[key(i)];
            order[*f as usize] = i as u32;
            *f += 1;
        }
        // The buckets in key order; in each, the pairs with a new member (older position first).
        for b in start.windows(2) {
            let bucket = &order[b[0] as usize..b[1] as usize];
            if bucket.len() < 2 {
                continue;
            }
            let new_from = bucket.partition_point(|&i| (i as usize) < first_new);
            for (qi, &q) in bucket.iter().enumerate().skip(new_from.max(1)) {
                let q = q as usize;
                let fq = filter(q);
                for &p in &bucket[..qi] {
                    let p = p as usize;
                    let fp = filter(p);
                    stats.bucket_pairs += 1;
                    let mut ham = 0u32;
                    for w in 0..fp.len() {
                        ham += (fp[w] ^ fq[w]).count_ones();
                    }
                    if ham > limit {
                        continue;
                    }
                    cands.push(P::pack(p, q));
                }
            }
        }
        progress(t + 1, LSH_TABLES);
        if cands.len() >= LSH_CHUNK_PAIRS || t + 1 == tables.len() {
            // Each pair once, in ascending (older, newer) order (the older row stays in cache);
            // a pair is compared in the block of its first shared table only.
            cands.sort_unstable();
            cands.dedup();
            for &pq in &cands {
                let (p, q) = pq.unpack();
                let (sp, sq) = (sk(p), sk(q));
                let ham: u32 = sp.iter().zip(sq).map(|(x, y)| (x ^ y).count_ones()).sum();
                if ham > limit_full || shares_table_before(sp, sq, &by_byte, block_start) {
                    continue;
                }
                let (pe, qe) = (eligible[p], eligible[q]);
                stats.exact += 1;
                if older_of != p {
                    rows.row_into(pe, &mut older);
                    older_of = p;
                }
                let c = dot(&older, rows.row(qe, &mut newer));
                if c >= thr {
                    stats.above_threshold += 1;
                    offer(&mut neighbours[pe as usize], k, (qe, c));
                    offer(&mut neighbours[qe as usize], k, (pe, c));
                }
            }
            cands.clear();
            block_start = t + 1;
        }
    }
}

/// Per sketch byte, the tables keyed on it: `(table, the table's other byte)`.
fn tables_by_byte(tables: &[(u8, u8)]) -> Vec<Vec<(u16, u8)>> {
    let mut out = vec![Vec::new(); LSH_WORDS * 8];
    for (t, &(a, b)) in tables.iter().enumerate() {
        out[usize::from(a)].push((t as u16, b));
        out[usize::from(b)].push((t as u16, a));
    }
    out
}

/// Whether the sketches `a` and `b` share the key (two bytes) of some table before `limit`;
/// `by_byte` is [`tables_by_byte`] of the tables. Only the tables of the bytes where the two
/// sketches agree are looked at.
fn shares_table_before(a: &[u64], b: &[u64], by_byte: &[Vec<(u16, u8)>], limit: usize) -> bool {
    if limit == 0 {
        return false;
    }
    // Bit j of `same` set when byte j of the two sketches is equal: per word, the high bit of
    // each zero byte of the XOR (exact, no carry between bytes), gathered into 8 bits.
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let mut same = [0u8; LSH_WORDS];
    for ((x, y), out) in a.iter().zip(b).zip(same.iter_mut()) {
        let d = x ^ y;
        let zero_high = !(((d & LOW7) + LOW7) | d | LOW7);
        *out = ((zero_high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
    }
    let has = |j: u8| same[usize::from(j) / 8] >> (j % 8) & 1 == 1;
    for (w, &bits) in same.iter().enumerate() {
        let mut m = bits;
        while m != 0 {
            let j = w * 8 + m.trailing_zeros() as usize;
            m &= m - 1;
            if by_byte[j].iter().any(|&(t, other)| usize::from(t) < limit && has(other)) {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fwht_matches_the_hadamard_matrix() {
        // H[i][j] = (−1)^popcount(i & j).
        let x: Vec<f32> = (0..8).map(|i| (i * i) as f32 - 3.0).collect();
        let mut y = x.clone();
        fwht(&mut y);
        for (i, &yi) in y.iter().enumerate() {
            let want: f32 =
                x.iter().enumerate().map(|(j, &v)| if (i & j).count_ones() % 2 == 0 { v } else { -v }).sum();
            assert_eq!(yi, want, "row {i}");
        }
    }

    #[test]
    fn fwht_is_bit_identical_to_stage_by_stage_butterflies() {
        // The textbook loop: one stage per h, one butterfly per pair.
        fn textbook(x: &mut [f32]) {
            let mut h = 1;
            while h < x.len() {
                for block in x.chunks_exact_mut(2 * h) {
                    let (lo, hi) = block.split_at_mut(h);
                    for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                        let (u, v) = (*a, *b);
                        *a = u + v;
                        *b = u - v;
                    }
                }
                h *= 2;
            }
        }
        let mut state = 7u64;
        for n in [1usize, 2, 4, 8, 16, 64, 256, 512] {
            for _ in 0..50 {
                // Values of mixed magnitudes, so rounding depends on the order of operations.
                let x: Vec<f32> = (0..n)
                    .map(|_| {
                        let r = splitmix(&mut state);
                        let m = (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                        m * 10f32.powi((r % 9) as i32 - 4)
                    })
                    .collect();
                let (mut fast, mut want) = (x.clone(), x.clone());
                fwht(&mut fast);
                textbook(&mut want);
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fast), bits(&want), "n = {n}");
            }
        }
    }

    #[test]
    fn sketch_agreement_follows_the_angle() {
        // Random-hyperplane property: the fraction of differing bits estimates angle/π.
        let rot = Rotations::new(256);
        let mut state = 11u64;
        let unit = |state: &mut u64| -> Vec<f32> {
            let v: Vec<f32> = (0..256).map(|_| (splitmix(state) % 2001) as f32 / 1000.0 - 1.0).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect()
        };
        let (mut y, mut z) = (vec![0.0; 256], vec![0.0; 256]);
        for target in [0.0f32, 0.5, 0.8, 0.95] {
            let a = unit(&mut state);
            let r = unit(&mut state);
            // b = target·a + √(1−target²)·(r ⟂ a), normalised.
            let ra = dot(&r, &a);
            let perp: Vec<f32> = r.iter().zip(&a).map(|(r, a)| r - ra * a).collect();
            let pn = perp.iter().map(|x| x * x).sum::<f32>().sqrt();
            let s = (1.0 - target * target).sqrt();
            let b: Vec<f32> = a.iter().zip(&perp).map(|(a, p)| target * a + s * p / pn).collect();
            let (mut sa, mut sb) = (vec![0u64; LSH_WORDS], vec![0u64; LSH_WORDS]);
            rot.sketch(&a, &mut y, &mut z, &mut sa);
            rot.sketch(&b, &mut y, &mut z, &mut sb);
            let diff: u32 = sa.iter().zip(&sb).map(|(x, y)| (x ^ y).count_ones()).sum();
            let want = f64::from(dot(&a, &b)).acos() / std::f64::consts::PI * LSH_BITS as f64;
            // Binomial sd ≤ √(2048/4) ≈ 22.6; allow 5 sd.
            assert!(
                (f64::from(diff) - want).abs() < 113.0,
                "cos {target}: {diff} bits differ, expected {want:.0}"
            );
        }
    }

    #[test]
    fn pairs_packed_in_32_or_64_bits_give_the_same_lists() {
        // Keys keep the (p, q) order and round-trip.
        let pairs = [(0, 1), (0, 65535), (1, 2), (7, 9), (65534, 65535)];
        for w in pairs.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(u32::pack(a.0, a.1) < u32::pack(b.0, b.1), "{a:?} {b:?}");
            assert!(u64::pack(a.0, a.1) < u64::pack(b.0, b.1), "{a:?} {b:?}");
        }
        for &(p, q) in &pairs {
            assert_eq!(u32::pack(p, q).unpack(), (p, q));
            assert_eq!(u64::pack(p, q).unpack(), (p, q));
        }
        assert_eq!(u64::pack(70_000, 4_000_000_000).unpack(), (70_000, 4_000_000_000));
        // 700 vectors in 70 tight clusters (cosines ≈ 0.9 within a cluster): both packings
        // list and compare the same pairs, so the lists and counts are equal.
        let (n, dim) = (700usize, 96usize);
        let mut state = 5u64;
        let noise = |state: &mut u64| (splitmix(state) % 2001) as f32 / 1000.0 - 1.0;
        let centres: Vec<Vec<f32>> = (0..70).map(|_| (0..dim).map(|_| noise(&mut state)).collect()).collect();
        let mut data = Vec::with_capacity(n * dim);
        for i in 0..n {
            let mut v: Vec<f32> = centres[i % 70].iter().map(|&c| c + 0.35 * noise(&mut state)).collect();
            crate::embed::l2_normalize(&mut v);
            data.extend(v);
        }
        let m = crate::embed::VectorMatrix::from_rows(dim, data).unwrap();
        let rows = EntityRows::Matrix(&m);
        let eligible: Vec<u32> = (0..n as u32).collect();
        let run = |packed32: bool, first_new: usize| {
            let mut lists = vec![Vec::new(); n];
            let mut stats = SynonymStats::default();
            let f = if packed32 { lsh_link_with::<u32> } else { lsh_link_with::<u64> };
            f(&rows, &mut lists, (5, 0.8), &eligible, first_new, &mut stats, &mut |_, _| {});
            (lists, stats)
        };
        for first_new in [0, 300] {
            let (a, sa) = run(true, first_new);
            let (b, sb) = run(false, first_new);
            assert!(sa.above_threshold > 500, "{sa:?}");
            assert_eq!(sa, sb);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn shared_tables_are_read_from_equal_bytes() {
        // Reference: compare the two key bytes of each table before the limit directly.
        let tables = lsh_tables();
        let by_byte = tables_by_byte(&tables);
        let mut state = 5u64;
        let (mut yes, mut no) = (0, 0);
        for case in 0..400u64 {
            let a: Vec<u64> = (0..LSH_WORDS).map(|_| splitmix(&mut state)).collect();
            // b equals a on a random subset of bytes (more of them in later cases).
            let b: Vec<u64> = a
                .iter()
                .map(|&w| {
                    let mut out = w;
                    for byte in 0..8 {
                        if splitmix(&mut state) % 400 >= case {
                            out ^= (1 + splitmix(&mut state) % 255) << (8 * byte);
                        }
                    }
                    out
                })
                .collect();
            let limit = (splitmix(&mut state) % (LSH_TABLES as u64 + 1)) as usize;
            let want = tables[..limit].iter().any(|&(x, y)| {
                sketch_byte(&a, usize::from(x)) == sketch_byte(&b, usize::from(x))
                    && sketch_byte(&a, usize::from(y)) == sketch_byte(&b, usize::from(y))
            });
            assert_eq!(shares_table_before(&a, &b, &by_byte, limit), want, "case {case}, limit {limit}");
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 50 && no > 20, "{yes} / {no}");
        assert!(shares_table_before(&[7; LSH_WORDS], &[7; LSH_WORDS], &by_byte, 1));
        assert!(!shares_table_before(&[7; LSH_WORDS], &[7; LSH_WORDS], &by_byte, 0));
    }

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
