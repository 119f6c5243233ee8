//! The sweep layout of a symmetric graph: its nodes renumbered for locality and its arcs
//! re-laid out for power iteration's gathering sweep (docs/method/spec.md §2), computed once per graph
//! beside the stored out-weights ([`super::StaticOut`]).
//!
//! A gathering sweep reads `mass[u]` for every arc `v → u` of every node `v`. In the stored
//! numbering (entities in order of first mention, passages after) the targets of a row are spread
//! over the whole node array, so most of those reads miss the first-level cache. Renumbering the
//! nodes by reverse Cuthill–McKee (Cuthill & McKee, "Reducing the bandwidth of sparse symmetric
//! matrices", ACM 1969; George's reversal, 1971) — a breadth-first order that visits each node's
//! neighbours by increasing degree — puts the neighbours of a node close to it and to each other,
//! so consecutive rows read nearby masses. The renumbering exists inside the sweep only: the
//! solver maps its inputs (teleport, out-weights, dangling nodes, overlay corrections, ranked
//! nodes) into it and the scores back out, so callers see the stored node ids.
//!
//! The reverse Cuthill–McKee order is then sorted (stably) by the number of inner-loop steps of
//! each row, so rows of the same length come one after another and the loop's exit is predicted
//! from row to row; the neighbours of a row still sit close together within each length class.
//!
//! Each row's arcs are stored as `(target, weight)` pairs in the new numbering, sorted by target,
//! and padded with zero-weight arcs (to the row's own last target) to a multiple of
//! [`LANES`], so the sweep's inner loop has no remainder: [`LANES`] independent accumulators per
//! step (or one four-lane gather and fused multiply-add with AVX2) and one loop exit per row.

/// Arcs per step of the sweep's inner loop (and the padding unit of a row).
pub(super) const LANES: usize = 4;

/// One arc of a [`SweepLayout`]: its target in the layout's numbering and its stored weight,
/// side by side (8 bytes, C layout: the vectorised sweep loads four at once).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(super) struct SweepArc {
    /// Target node, in the layout's numbering.
    pub(super) target: u32,
    /// Stored weight (0 for padding).
    pub(super) weight: f32,
}

/// A symmetric graph renumbered and padded for the gathering sweep (module docs). Shapes: `n`
/// nodes, `m'` padded arcs (`m ≤ m' < m + (LANES − 1)·n`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct SweepLayout {
    /// New id → stored id, `[n]`.
    pub(super) order: Vec<u32>,
    /// Stored id → new id, `[n]`.
    pub(super) rank: Vec<u32>,
    /// Row starts in the new numbering, `[n + 1]`, each a multiple of [`LANES`].
    pub(super) offsets: Vec<u32>,
    /// `(target in the new numbering, stored weight)`, `[m']`.
    pub(super) arcs: Vec<SweepArc>,
}

impl SweepLayout {
    /// The layout of a checked CSR (`offsets: [n+1]`, `targets`/`weights: [m]`, every target
    /// `< n`). `None` when the padded arcs would not fit 32-bit offsets (the sweep then reads the
    /// stored arrays). O(m log Δ) for the ordering (Δ the largest degree), O(n + m) for the rest.
    pub(super) fn new(offsets: &[u32], targets: &[u32], weights: &[f32]) -> Option<Self> {
        let n = offsets.len().checked_sub(1)?;
        let mut order = reverse_cuthill_mckee(offsets, targets);
        // Rows with the same number of steps side by side (stable: Cuthill–McKee order within),
        // so the inner loop's exit is predictable from one row to the next.
        order.sort_by_key(|&u| (offsets[u as usize + 1] - offsets[u as usize]).div_ceil(LANES as u32));
        let mut rank = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            rank[old as usize] = new as u32;
        }
        // Exactly the padded arcs: a `Vec` grown by pushes would hold up to twice as many.
        let padded: usize =
            (0..n).map(|u| ((offsets[u + 1] - offsets[u]) as usize).div_ceil(LANES) * LANES).sum();
        let mut new_offsets = Vec::with_capacity(n + 1);
        let mut arcs: Vec<SweepArc> = Vec::with_capacity(padded);
        new_offsets.push(0u32);
        for &old in &order {
            let (lo, hi) = (offsets[old as usize] as usize, offsets[old as usize + 1] as usize);
            let start = arcs.len();
            arcs.extend(
                targets[lo..hi]
                    .iter()
                    .zip(&weights[lo..hi])
                    .map(|(&t, &w)| SweepArc { target: rank[t as usize], weight: w }),
            );
            arcs[start..].sort_unstable_by_key(|a| a.target);
            if let Some(&SweepArc { target: last, .. }) = arcs.last().filter(|_| arcs.len() > start) {
                while (arcs.len() - start) % LANES != 0 {
                    arcs.push(SweepArc { target: last, weight: 0.0 });
                }
            }
            new_offsets.push(u32::try_from(arcs.len()).ok()?);
        }
        Some(SweepLayout { order, rank, offsets: new_offsets, arcs })
    }

    /// Number of nodes.
    pub(super) fn node_count(&self) -> usize {
        self.order.len()
    }

    /// Heap bytes: 8 per padded arc, 12 per node (two permutations, the offsets).
    pub(super) fn heap_bytes(&self) -> usize {
        self.arcs.capacity() * 8
            + (self.order.capacity() + self.rank.capacity() + self.offsets.capacity()) * 4
    }
}

/// Reverse Cuthill–McKee order of a symmetric CSR: breadth-first from a least-degree unvisited
/// node of each component, each node's unvisited neighbours queued by increasing degree (ties:
/// lower id), the whole order reversed. Returns new id → stored id, `[n]`, a permutation.
fn reverse_cuthill_mckee(offsets: &[u32], targets: &[u32]) -> Vec<u32> {
    let n = offsets.len().saturating_sub(1);
    let degree = |u: u32| offsets[u as usize + 1] - offsets[u as usize];
    let mut starts: Vec<u32> = (0..n as u32).collect();
    starts.sort_by_key(|&u| (degree(u), u));
    let mut visited = vec![false; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut neighbours: Vec<u32> = Vec::new();
    for &s in &starts {
        if visited[s as usize] {
            continue;
        }
        visited[s as usize] = true;
        let mut head = order.len();
        order.push(s);
        while head < order.len() {
            let u = order[head] as usize;
            head += 1;
            neighbours.clear();
            for &t in &targets[offsets[u] as usize..offsets[u + 1] as usize] {
                if !visited[t as usize] {
                    visited[t as usize] = true;
                    neighbours.push(t);
                }
            }
            neighbours.sort_unstable_by_key(|&t| (degree(t), t));
            order.extend_from_slice(&neighbours);
        }
    }
    order.reverse();
    order
}
