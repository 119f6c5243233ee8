//! Synonym kNN among entity vectors (METHOD.md §1, synonym edges; HippoRAG 2 §3): exact, blocked,
//! incremental (new × all), with a Cauchy–Schwarz bound that skips most full cosines.

use super::build::SynonymStats;
use super::normalize::alnum_count;
use super::Store;
use crate::embed::{dot, is_zero};

/// Leading dimensions used for the bound (when the vectors have more than twice as many). 48
/// measured best with the static embedder (2wiki-6k stand-in entities: with 32, 3.7% of pairs
/// still need the full cosine, with 48, 1.1%; 64 costs more than it saves).
const PREFIX: usize = 48;
/// New rows whose bounds are computed together (one transposed block, BLOCK accumulators).
const BLOCK: usize = 32;
const _: () = assert!(BLOCK == 32, "lane masks are u32");
/// New rows handled per pass over the older rows (a multiple of BLOCK; 96 KB of prefixes).
const SUPER: usize = 512;
/// Older rows per tile (192 KB of prefixes at 48 dimensions: stays in L2 across the blocks).
const TILE: usize = 1024;

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

/// Bit `j` set when `prefix · cols[..][j] + rest · rests[j] + slack ≥ threshold`: which of the
/// BLOCK new rows of one transposed block may reach the threshold with one older row (the upper
/// bound of their cosine). Kept out of line with fixed-size arrays so the compiler vectorises it
/// across `j`.
#[inline(never)]
fn block_bounds(
    prefix: &[f32],
    cols: &[[f32; BLOCK]],
    rest: f32,
    rests: &[f32; BLOCK],
    slack: f32,
    threshold: f32,
) -> u32 {
    let mut acc = [0.0f32; BLOCK];
    for (col, &x) in cols.iter().zip(prefix) {
        for j in 0..BLOCK {
            acc[j] += x * col[j];
        }
    }
    let mut mask = 0u32;
    for j in 0..BLOCK {
        mask |= u32::from(acc[j] + rest * rests[j] + slack >= threshold) << j;
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

    // The bound: cos(a, b) ≤ a[..m]·b[..m] + |a[m..]|·|b[m..]|. Slack covers float rounding of
    // both sides (a few ulps per dimension), so no pair at or above the threshold is skipped.
    let m = if dim > 2 * PREFIX { PREFIX } else { 0 };
    let slack = 1e-4 + 2.0 * dim as f32 * f32::EPSILON;
    let mut pre: Vec<f32> = Vec::with_capacity(ne * m);
    let mut rest: Vec<f32> = Vec::with_capacity(ne);
    for &e in &eligible {
        let r = row(e);
        pre.extend_from_slice(&r[..m]);
        rest.push(dot(&r[m..], &r[m..]).sqrt());
    }

    let total_pairs = tri(ne) - tri(first_new);
    let scale = (total_pairs / 1_000_000).max(1);
    let total_units = (total_pairs / scale) as usize;
    let neighbours = &mut s.neighbours;
    let mut done_pairs = 0u64;
    // New rows go SUPER at a time, as SUPER / BLOCK blocks whose prefixes are transposed
    // (dimension-major), so one older row's bound against a block is BLOCK independent
    // multiply-adds per dimension (vectorises, also in wasm with simd128). Older rows go TILE
    // at a time, so their prefixes are read from memory once per SUPER new rows and from cache
    // by every block.
    let blocks = SUPER / BLOCK;
    let mut qt: Vec<[f32; BLOCK]> = vec![[0.0; BLOCK]; blocks * m];
    let mut qrest: Vec<[f32; BLOCK]> = vec![[0.0; BLOCK]; blocks];
    for sb in (first_new..ne).step_by(SUPER) {
        let send = (sb + SUPER).min(ne);
        qt.iter_mut().for_each(|x| *x = [0.0; BLOCK]);
        qrest.iter_mut().for_each(|x| *x = [0.0; BLOCK]);
        for q in sb..send {
            let (b, j) = ((q - sb) / BLOCK, (q - sb) % BLOCK);
            for d in 0..m {
                qt[b * m + d][j] = pre[q * m + d];
            }
            qrest[b][j] = rest[q];
        }
        for pt in (0..send - 1).step_by(TILE) {
            let ptend = (pt + TILE).min(send - 1);
            for b in 0..blocks {
                let q0 = sb + b * BLOCK;
                if q0 >= send {
                    break;
                }
                let q1 = (q0 + BLOCK).min(send);
                let (qt_b, qrest_b) = (&qt[b * m..(b + 1) * m], &qrest[b]);
                for p in pt..ptend.min(q1 - 1) {
                    let first = if p >= q0 { p + 1 - q0 } else { 0 };
                    let lanes = (u32::MAX >> (BLOCK - (q1 - q0))) & (u32::MAX << first);
                    let mut mask = if m > 0 {
                        block_bounds(&pre[p * m..(p + 1) * m], qt_b, rest[p], qrest_b, slack, thr) & lanes
                    } else {
                        lanes
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
