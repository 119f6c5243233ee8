//! Personalized PageRank on a CSR graph, with a per-query weight overlay (docs/method/spec.md §2).
//!
//! This is the traversal step of HippoRAG 2 (Gutiérrez et al., 2025, §3) and of CatRAG (Lau et
//! al., 2026, §3, step 8): given a teleport (reset) vector `r` over the graph's nodes, compute the
//! stationary distribution of a walk that follows an arc with probability `d` (the damping) and
//! jumps back to `r` with probability `1 − d`:
//!
//! ```text
//! π = (1 − d)·r + d·Mπ,     M = Pᵀ + r·δᵀ
//! ```
//!
//! where `P[u][v] = w'(u→v) / Σ_x w'(u→x)` is the row-normalised matrix of *effective* weights
//! (stored weight × the query's overlay multiplier, [`ArcOverlay`]), and `δ` marks the dangling
//! nodes (effective out-weight zero, including nodes whose arcs an overlay has zeroed): their mass
//! goes back to `r`, as networkx's `pagerank(…, personalization=r, dangling=r)` does. `M` is then
//! column-stochastic, so `π ≥ 0` sums to 1 and the fixed point is unique for `0 ≤ d < 1`. An
//! isolated node keeps only teleport mass (`π[u] ∝ r[u]`).
//!
//! Two solvers reach the same fixed point:
//! - [`PprMethod::Power`] (default): Jacobi power iteration over the CSR arrays until the L1 change
//!   between sweeps is below [`PprConfig::tolerance`] (1e-8) or after
//!   [`PprConfig::max_iterations`] (50) sweeps. Each sweep contracts the error by `d` in L1, so
//!   the distance to the fixed point is at most `d/(1−d)` × the last change (1e-8 at `d = 0.5`).
//! - [`PprMethod::Push`]: forward push (Andersen, Chung & Lang, "Local graph partitioning using
//!   PageRank vectors", FOCS 2006), which only works where the residual is large: a node is pushed
//!   while its residual exceeds `ε·deg(u)`. Its estimate is a componentwise lower bound of `π`
//!   whose L1 distance to `π` is reported exactly (see [`push`](PprSolver::forward_push)); with
//!   a small `ε` the two solvers agree to that bound and therefore rank nodes identically except
//!   for nodes whose scores differ by less than it.
//!
//! The graph is a borrowed view ([`CsrGraph`]) of whatever arrays the graph module stores; the
//! overlay is applied while the solver reads the arcs and is never written into them. A
//! [`PprSolver`] keeps its buffers between queries: a query allocates nothing once the buffers
//! have grown to the graph's size, and no sweep or push allocates.

mod layout;
mod power;
mod push;

use std::collections::VecDeque;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A borrowed compressed-sparse-row view of a weighted directed graph.
///
/// Shapes: `n` nodes, `m` arcs. `offsets: [n+1]` with `offsets[0] = 0`, non-decreasing and
/// `offsets[n] = m`; the arcs leaving node `u` are `offsets[u]..offsets[u+1]`, arc `a` goes to
/// `targets[a] < n` with weight `weights[a]` (finite, ≥ 0; a zero-weight arc is never followed).
/// Parallel arcs add up; self-loops are allowed. An undirected edge is two arcs. Arc indices
/// (`0..m`) are what an [`ArcOverlay`] refers to.
///
/// The view is checked once by [`CsrGraph::new`] (O(n + m)); the solvers rely on it.
#[derive(Debug, Clone, Copy)]
pub struct CsrGraph<'a> {
    offsets: &'a [u32],
    targets: &'a [u32],
    weights: &'a [f32],
    /// The arcs are symmetric ([`CsrGraph::new_symmetric`]): power iteration gathers along each
    /// node's own arcs instead of scattering.
    symmetric: bool,
    /// Per-graph sums computed once ([`CsrGraph::with_static`]), or `None`: each run sums the
    /// stored weights again.
    precomputed: Option<&'a StaticOut>,
}

/// What a PPR run needs of a graph that does not depend on the query: every node's out-weight
/// `Σ_a w(a)` of its stored arcs (`[n]`, f64) and the nodes whose stored out-weight is 0
/// (dangling without any overlay). Computed once per graph ([`StaticOut::new`], O(n + m)) and
/// attached to the view with [`CsrGraph::with_static`]; a run then only recomputes the rows its
/// overlay touches (a few hundred) instead of summing all `m` weights again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StaticOut {
    out_weight: Vec<f64>,
    /// `1 / out_weight`, 0 for dangling nodes; in the layout's numbering when there is a layout
    /// (power iteration then reads it as it is).
    inv_out: Vec<f64>,
    /// The dangling nodes, in the numbering of `inv_out`.
    dangling: Vec<u32>,
    /// Symmetric graphs: the nodes renumbered for locality and the arcs padded for the
    /// gathering sweep (`src/ppr/layout.rs`); `None` for other graphs.
    layout: Option<layout::SweepLayout>,
}

impl StaticOut {
    /// The out-weights and dangling nodes of `graph`'s stored weights, and for a symmetric graph
    /// ([`CsrGraph::new_symmetric`]) the sweep layout: its nodes renumbered by reverse
    /// Cuthill–McKee inside power iteration only (stored ids everywhere else), its arcs as
    /// `(target, weight)` pairs padded to a multiple of 4 per row. With a layout the inverse
    /// out-weights and dangling nodes are kept in its numbering, as power iteration reads them.
    /// Memory: 8 bytes per padded arc, 12 per node (layout), 20 per node (out-weights).
    pub fn new(graph: &CsrGraph<'_>) -> Self {
        let (offsets, weights) = (graph.offsets, graph.weights);
        let n = graph.node_count();
        let mut out_weight = Vec::with_capacity(n);
        let mut dangling = Vec::new();
        for u in 0..n {
            let row = &weights[offsets[u] as usize..offsets[u + 1] as usize];
            let sum: f64 = row.iter().map(|&w| f64::from(w)).sum();
            if sum <= 0.0 {
                dangling.push(u as u32);
            }
            out_weight.push(sum);
        }
        let inv = |s: f64| if s > 0.0 { 1.0 / s } else { 0.0 };
        let layout =
            if graph.symmetric { layout::SweepLayout::new(offsets, graph.targets, weights) } else { None };
        // What power iteration reads per run, in the numbering it runs in.
        let inv_out = match &layout {
            Some(l) => {
                for u in &mut dangling {
                    *u = l.rank[*u as usize];
                }
                dangling.sort_unstable();
                l.order.iter().map(|&old| inv(out_weight[old as usize])).collect()
            }
            None => out_weight.iter().map(|&s| inv(s)).collect(),
        };
        StaticOut { out_weight, inv_out, dangling, layout }
    }

    /// Number of nodes it was computed for.
    pub fn node_count(&self) -> usize {
        self.out_weight.len()
    }

    /// Arcs of the sweep layout, padding included (`None` without a layout: a graph not
    /// declared symmetric). Its memory is 8 bytes per arc plus 12 per node.
    pub fn layout_arc_count(&self) -> Option<usize> {
        self.layout.as_ref().map(|l| l.arcs.len())
    }

    /// Heap bytes held: out-weights, their inverses, the dangling nodes and the sweep layout.
    pub fn heap_bytes(&self) -> usize {
        (self.out_weight.capacity() + self.inv_out.capacity()) * 8
            + self.dangling.capacity() * 4
            + self.layout.as_ref().map_or(0, layout::SweepLayout::heap_bytes)
    }

    /// The sweep layout power iteration uses on `graph` (a view with this precomputation): the
    /// layout of a symmetric view of the right size, else `None`.
    fn layout_for(&self, graph: &CsrGraph<'_>) -> Option<&layout::SweepLayout> {
        self.layout.as_ref().filter(|l| graph.symmetric && l.node_count() == graph.node_count())
    }
}

impl<'a> CsrGraph<'a> {
    /// Check and wrap CSR arrays (shapes in the type's documentation).
    ///
    /// # Errors
    /// [`Error::PprInput`] when `offsets` is empty, does not start at 0, decreases, or does not
    /// end at `targets.len()`; when `targets` and `weights` differ in length; when a target is
    /// `≥ n`; when a weight is negative, NaN or infinite.
    pub fn new(offsets: &'a [u32], targets: &'a [u32], weights: &'a [f32]) -> Result<Self> {
        let Some(&last) = offsets.last() else {
            return Err(Error::PprInput("CSR offsets must have n + 1 ≥ 1 entries, got none".into()));
        };
        if offsets[0] != 0 {
            return Err(Error::PprInput(format!("CSR offsets must start at 0, got {}", offsets[0])));
        }
        if targets.len() != weights.len() {
            return Err(Error::PprInput(format!(
                "CSR targets ({}) and weights ({}) differ in length",
                targets.len(),
                weights.len()
            )));
        }
        if last as usize != targets.len() {
            return Err(Error::PprInput(format!(
                "CSR offsets end at {last} but there are {} arcs",
                targets.len()
            )));
        }
        if let Some(u) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return Err(Error::PprInput(format!(
                "CSR offsets decrease at node {u} ({} > {})",
                offsets[u],
                offsets[u + 1]
            )));
        }
        let n = offsets.len() - 1;
        if let Some(a) = targets.iter().position(|&t| t as usize >= n) {
            return Err(Error::PprInput(format!(
                "arc {a} targets node {} but there are {n} nodes",
                targets[a]
            )));
        }
        if let Some(a) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(Error::PprInput(format!(
                "arc {a} has weight {}, must be finite and ≥ 0",
                weights[a]
            )));
        }
        Ok(CsrGraph { offsets, targets, weights, symmetric: false, precomputed: None })
    }

    /// [`CsrGraph::new`] for an undirected graph stored as two arcs per edge, which the caller
    /// vouches for: for every pair of nodes `(u, v)`, the weights of the arcs `u → v` and of the
    /// arcs `v → u` are the same multiset (the knowledge graph's CSR is built that way, every
    /// edge pushed both ways with one weight; [`crate::graph`]). Power iteration then computes
    /// each sweep by gathering along every node's own arcs (`next[v] = Σ_{v→u} w · mass[u]`),
    /// which reads instead of scattering writes, and applies the overlay as corrections on the
    /// arcs it touches; the fixed point is the same. Not checked (it would cost more than a
    /// query): a graph that is not symmetric gets wrong scores, never a panic.
    ///
    /// # Errors
    /// As [`CsrGraph::new`].
    pub fn new_symmetric(offsets: &'a [u32], targets: &'a [u32], weights: &'a [f32]) -> Result<Self> {
        let mut g = Self::new(offsets, targets, weights)?;
        g.symmetric = true;
        Ok(g)
    }

    /// Arrays already checked as [`CsrGraph::new`] checks them (by the graph module, once per
    /// graph): no O(n + m) pass per query. Within the crate only, for arrays whose check is
    /// cached beside them; the solvers' unchecked reads rely on it.
    pub(crate) fn prechecked(
        offsets: &'a [u32],
        targets: &'a [u32],
        weights: &'a [f32],
        symmetric: bool,
    ) -> Self {
        CsrGraph { offsets, targets, weights, symmetric, precomputed: None }
    }

    /// Attach the graph's [`StaticOut`] (computed by [`StaticOut::new`] on these arrays; the
    /// caller vouches that the arrays did not change since).
    ///
    /// # Errors
    /// [`Error::PprInput`] when it was computed for another number of nodes.
    pub fn with_static(mut self, precomputed: &'a StaticOut) -> Result<Self> {
        if precomputed.node_count() != self.node_count() {
            return Err(Error::PprInput(format!(
                "the precomputed out-weights cover {} nodes, the graph has {}",
                precomputed.node_count(),
                self.node_count()
            )));
        }
        self.precomputed = Some(precomputed);
        Ok(self)
    }

    /// True for a graph made by [`CsrGraph::new_symmetric`].
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// Number of nodes `n`.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of arcs `m`.
    pub fn arc_count(&self) -> usize {
        self.targets.len()
    }

    /// The indices of the arcs leaving `node`, or `None` if `node ≥ n`.
    pub fn out_arcs(&self, node: u32) -> Option<Range<usize>> {
        let u = node as usize;
        if u + 1 < self.offsets.len() {
            Some(self.offsets[u] as usize..self.offsets[u + 1] as usize)
        } else {
            None
        }
    }

    /// The first arc `from → to` (a linear scan of `from`'s arcs), or `None`.
    pub fn find_arc(&self, from: u32, to: u32) -> Option<usize> {
        let arcs = self.out_arcs(from)?;
        let start = arcs.start;
        self.targets[arcs].iter().position(|&t| t == to).map(|i| start + i)
    }

    /// The offsets array, `[n+1]`.
    pub fn offsets(&self) -> &'a [u32] {
        self.offsets
    }

    /// The targets array, `[m]`.
    pub fn targets(&self) -> &'a [u32] {
        self.targets
    }

    /// The stored weights, `[m]` (without any overlay).
    pub fn weights(&self) -> &'a [f32] {
        self.weights
    }
}

/// Per-query multipliers on arcs: CatRAG's query-aware weights (docs/method/spec.md §3; CatRAG §3: edge
/// pruning to Weak, tiers {0, 0.25, 2.5, 5}, key-fact boost 1 + β), applied on top of the stored
/// weights while PPR reads them. The stored graph is never modified; drop the overlay after the
/// query.
///
/// Sparse on purpose: CatRAG touches a few hundred arcs of a graph of 10⁵–10⁶. A dense `[m]`
/// vector would cost 2–4 MB to fill per query and one more load per arc in every sweep; the solver
/// instead sorts these entries once per query (O(k log k)), materialises the effective weights of
/// the few rows they touch, and reads the stored weights directly everywhere else.
///
/// Entries are `(arc index, multiplier)` with multipliers finite and ≥ 0 (0 removes the arc for
/// this query; a node whose arcs are all removed becomes dangling). Several entries for the same
/// arc compose by product. The arc indices are checked against the graph when PPR runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArcOverlay {
    entries: Vec<(u32, f32)>,
}

impl ArcOverlay {
    /// An empty overlay (every multiplier 1).
    pub fn new() -> Self {
        Self::default()
    }

    /// Multiply arc `arc`'s weight by `multiplier` for this query (composes with earlier entries
    /// for the same arc by product).
    ///
    /// # Errors
    /// [`Error::PprInput`] when `multiplier` is negative, NaN or infinite, or `arc` does not fit
    /// in 32 bits.
    pub fn multiply(&mut self, arc: usize, multiplier: f32) -> Result<()> {
        if !(multiplier.is_finite() && multiplier >= 0.0) {
            return Err(Error::PprInput(format!(
                "overlay multiplier {multiplier} on arc {arc}: must be finite and ≥ 0"
            )));
        }
        let arc =
            u32::try_from(arc).map_err(|_| Error::PprInput(format!("overlay arc {arc} is out of range")))?;
        self.entries.push((arc, multiplier));
        Ok(())
    }

    /// The combined multiplier of `arc` (1 when the overlay does not mention it). O(k).
    pub fn multiplier(&self, arc: usize) -> f64 {
        self.entries.iter().filter(|e| e.0 as usize == arc).map(|e| f64::from(e.1)).product()
    }

    /// The entries as given, `(arc, multiplier)`, in insertion order.
    pub fn entries(&self) -> &[(u32, f32)] {
        &self.entries
    }

    /// Number of entries (not of distinct arcs).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Remove every entry, keeping the allocation (for the next query).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// Which solver computes PPR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PprMethod {
    /// Power iteration over the whole graph (default).
    #[default]
    Power,
    /// Forward push (Andersen, Chung & Lang 2006), local work around the teleport's support.
    Push,
}

/// Personalized PageRank parameters (docs/method/spec.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PprConfig {
    /// Damping factor `d ∈ [0, 1)`: the probability of following an arc (networkx's `alpha`).
    /// Default 0.5 (HippoRAG 2, CatRAG).
    pub damping: f64,
    /// Power iteration stops when the L1 change between two sweeps is below this (≥ 0). Default
    /// 1e-8.
    pub tolerance: f64,
    /// At most this many power sweeps (≥ 1); forward push gets the same budget in arc updates
    /// (`max_iterations × (n + m)`). Default 50.
    pub max_iterations: u32,
    /// The solver. Default [`PprMethod::Power`].
    pub method: PprMethod,
    /// Forward push: a node is pushed while its residual exceeds `push_epsilon × deg(u)`, `deg`
    /// the number of arcs with positive effective weight (finite, > 0). The L1 error is then
    /// below `push_epsilon · m / (1 − d)` (and reported exactly). Default 1e-12: within 1e-6 of
    /// the fixed point on graphs of up to 500k arcs at d = 0.5, like power iteration's
    /// tolerance. Larger values trade accuracy for less work (on the 2wiki-6k test graph, 1e-8
    /// does a third of the pushes for an L1 error of about 1e-3).
    pub push_epsilon: f64,
    /// Power iteration's ranking rule, beside the L1 rule: when the caller names the nodes it
    /// ranks ([`PprSolver::run_ranked`], the passage nodes), stop as soon as the order of the
    /// best `rank_top_k` of them is certain, i.e. every gap between consecutive scores among the
    /// best `rank_top_k + 1` exceeds the L1 error bound `d/(1−d) × ‖π_k − π_{k−1}‖₁` (plus a
    /// rounding margin). Those `rank_top_k` nodes and their order are then exactly those of the
    /// fixed point; every score (of those and of all other nodes) is only within that bound,
    /// far above the L1 rule's. Also the number of ranked nodes the stability rule
    /// ([`PprConfig::rank_stable_sweeps`]) watches. Default 10 (the results a search shows);
    /// 0 turns both rules off ([`PprSolver::run`]'s L1 rule alone, scores to 1e-8: what
    /// hand-worked tests and score read-outs set). Forward push ignores it.
    pub rank_top_k: u32,
    /// Power iteration's stability rule, beside the ranking rule: with `rank_top_k > 0` and
    /// ranked nodes given ([`PprSolver::run_ranked`]), stop once the best `rank_top_k` of them,
    /// in order, have not changed for this many consecutive sweeps. A heuristic, unlike the
    /// ranking rule: the order is not proven to be the fixed point's. Default 3: on the
    /// 2wiki-6k graph with CatRAG's teleport and overlays it stops after 6.4 sweeps on average
    /// (the L1 rule: 20.8) with the top 5 equal to the exact solve's on 199 of 199 queries and
    /// the top 10 on 196 (`cairn bench --method catrag`, `docs/method/speed.md`); 2 stops after
    /// 5.3 sweeps but keeps the top 5 on 196 of 199. 0: off. Forward push ignores it.
    pub rank_stable_sweeps: u32,
}

impl Default for PprConfig {
    fn default() -> Self {
        PprConfig {
            damping: 0.5,
            tolerance: 1e-8,
            max_iterations: 50,
            method: PprMethod::Power,
            push_epsilon: 1e-12,
            rank_top_k: 10,
            rank_stable_sweeps: 3,
        }
    }
}

impl PprConfig {
    /// Check the ranges.
    ///
    /// # Errors
    /// [`Error::Config`] when `damping` is outside [0, 1), `tolerance` is negative or not finite,
    /// `max_iterations` is 0, or `push_epsilon` is not a finite number > 0.
    pub fn validate(&self) -> Result<()> {
        if !(self.damping >= 0.0 && self.damping < 1.0) {
            return Err(Error::Config(format!("ppr.damping must be in [0, 1), got {}", self.damping)));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(Error::Config(format!(
                "ppr.tolerance must be a finite number ≥ 0, got {}",
                self.tolerance
            )));
        }
        if self.max_iterations == 0 {
            return Err(Error::Config("ppr.max_iterations must be at least 1".into()));
        }
        if !(self.push_epsilon.is_finite() && self.push_epsilon > 0.0) {
            return Err(Error::Config(format!(
                "ppr.push_epsilon must be a finite number > 0, got {}",
                self.push_epsilon
            )));
        }
        Ok(())
    }
}

/// How a PPR run ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PprReport {
    /// The solver that ran.
    pub method: PprMethod,
    /// Power: sweeps done. Push: work done in sweep equivalents, `⌈(pushes + arcs scanned) /
    /// (n + m)⌉`.
    pub iterations: u32,
    /// Power: L1 change `‖π_k − π_{k−1}‖₁` of the last sweep. Push: L1 mass of the residual left
    /// (scaled as the scores are), which is exactly the L1 distance to the fixed point.
    pub l1_change: f64,
    /// Upper bound on `‖π̂ − π‖₁`, the distance to the exact fixed point: power `d/(1−d) ×
    /// l1_change`, push `l1_change` (up to rounding).
    pub error_bound: f64,
    /// Power: `l1_change < tolerance`. Push: every residual is at or below `ε·deg` (the budget
    /// did not run out).
    pub converged: bool,
    /// Push: number of push operations (0 for power iteration).
    pub pushes: u64,
    /// Power iteration stopped on the ranking rule ([`PprConfig::rank_top_k`]) before the L1
    /// rule: the order of the best `rank_top_k` ranked nodes is certain (`converged` is then
    /// true too, for that ranking). Absent in older reports (false).
    #[serde(default)]
    pub ranking_certified: bool,
    /// Power iteration stopped on the stability rule ([`PprConfig::rank_stable_sweeps`]): the
    /// best `rank_top_k` ranked nodes were the same, in the same order, after that many
    /// consecutive sweeps (`converged` is then true too). Not a guarantee: measured against the
    /// exact solve by `cairn bench --method catrag`. Absent in older reports (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ranking_stable: bool,
}

/// Scores and report of one PPR run ([`personalized_pagerank`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PprResult {
    /// `π`, `[n]`, ≥ 0, sums to 1 (push: to `1 − error_bound`).
    pub scores: Vec<f64>,
    /// How the run ended.
    pub report: PprReport,
}

/// No overlay entry touches this row.
const UNTOUCHED: u32 = u32::MAX;

/// Reusable PPR workspace: the per-query preparation (normalised teleport, effective out-weights
/// with the overlay, dangling nodes) and both solvers' buffers. Keep one per thread / worker and
/// call [`run`](Self::run) per query; buffers grow to the largest graph seen and are reused.
#[derive(Debug, Clone, Default)]
pub struct PprSolver {
    /// `r / Σr`, `[n]`.
    teleport: Vec<f64>,
    /// `1 / effective out-weight`, 0 for dangling nodes, `[n]`.
    inv_out: Vec<f64>,
    /// Nodes with zero effective out-weight.
    dangling: Vec<u32>,
    /// Number of arcs with positive effective weight (push thresholds), `[n]`.
    degree: Vec<u32>,
    /// Push: `ε·degree`, `[n]`.
    threshold: Vec<f64>,
    /// Per row: [`UNTOUCHED`] or the offset of the row's effective weights in `row_weights`.
    row_side: Vec<u32>,
    /// Effective weights (stored × multiplier, f64) of the rows the overlay touches.
    row_weights: Vec<f64>,
    /// The overlay sorted by arc, duplicates multiplied together.
    overlay: Vec<(u32, f64)>,
    /// Scores (power: current iterate; push: estimate `p`), `[n]`.
    scores: Vec<f64>,
    /// Power: next iterate. Push: residual. `[n]`.
    next: Vec<f64>,
    /// Push: FIFO of nodes over threshold and their membership flags.
    queue: VecDeque<u32>,
    queued: Vec<bool>,
    /// Power: `d · π[u] / out(u)` of the current sweep, `[n]`.
    mass: Vec<f64>,
    /// Power on a symmetric graph: the next sweep's `mass`, written by the sweep that computes
    /// its scores, `[n]`.
    next_mass: Vec<f64>,
    /// Power on a symmetric graph: the overlay as `(source, target, stored weight × (multiplier
    /// − 1))` per touched arc, added to the gathered sums each sweep.
    corrections: Vec<(u32, u32, f64)>,
    /// Power, ranking and stability rules: the best `rank_top_k + 1` ranked nodes of the
    /// sweep, `(score, position in ranked)`, best first.
    best: Vec<(f64, u32)>,
    /// Power, stability rule: the top `rank_top_k` of this sweep and of the one before.
    top_now: Vec<(f64, u32)>,
    top_before: Vec<(f64, u32)>,
    /// Power on a sweep layout: the ranked nodes in its numbering, and a scratch vector, `[n]`.
    ranked_local: Vec<u32>,
    scratch: Vec<f64>,
}

impl PprSolver {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Personalized PageRank with the solver chosen by `config.method` (docs/method/spec.md §2). The scores
    /// are then in [`scores`](Self::scores).
    ///
    /// - `graph`: the stored graph (never modified);
    /// - `overlay`: this query's arc multipliers, or `None` (HippoRAG 2's static PPR);
    /// - `teleport`: `r`, `[n]`, finite, ≥ 0, not all zero; normalised to sum 1 here (units
    ///   arbitrary).
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid `config`; [`Error::PprInput`] when `teleport` has the
    /// wrong length or a negative / non-finite entry, or an overlay arc is `≥ m`;
    /// [`Error::ZeroTeleport`] when `teleport` sums to 0 (the caller falls back to dense ranking).
    pub fn run(
        &mut self,
        graph: &CsrGraph<'_>,
        overlay: Option<&ArcOverlay>,
        teleport: &[f64],
        config: &PprConfig,
    ) -> Result<PprReport> {
        self.run_ranked(graph, overlay, teleport, &[], config)
    }

    /// [`run`](Self::run), naming the nodes the caller will rank (`ranked`, e.g. the passage
    /// nodes): power iteration then also stops as soon as the order of the best
    /// [`PprConfig::rank_top_k`] of them is certain (the ranking rule), usually well before the
    /// L1 rule. Their order is then that of the exact fixed point (ties in the fixed point never
    /// certify: the L1 rule decides then). An empty `ranked` or `rank_top_k = 0` is
    /// [`run`](Self::run). Forward push ignores `ranked`.
    ///
    /// # Errors
    /// As [`run`](Self::run), and [`Error::PprInput`] when a ranked node is `≥ n`.
    pub fn run_ranked(
        &mut self,
        graph: &CsrGraph<'_>,
        overlay: Option<&ArcOverlay>,
        teleport: &[f64],
        ranked: &[u32],
        config: &PprConfig,
    ) -> Result<PprReport> {
        config.validate()?;
        let n = graph.node_count();
        if let Some(&u) = ranked.iter().find(|&&u| u as usize >= n) {
            self.scores.clear();
            return Err(Error::PprInput(format!("ranked node {u} but the graph has {n} nodes")));
        }
        let need_degree = config.method == PprMethod::Push;
        self.prepare(graph, overlay, teleport, need_degree)?;
        Ok(match config.method {
            PprMethod::Power => power::solve(self, graph, config, ranked),
            PprMethod::Push => push::solve(self, graph, config),
        })
    }

    /// [`run`](Self::run) with power iteration, whatever `config.method` says.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn power_iteration(
        &mut self,
        graph: &CsrGraph<'_>,
        overlay: Option<&ArcOverlay>,
        teleport: &[f64],
        config: &PprConfig,
    ) -> Result<PprReport> {
        self.run(graph, overlay, teleport, &PprConfig { method: PprMethod::Power, ..*config })
    }

    /// [`run`](Self::run) with forward push (Andersen, Chung & Lang 2006), whatever
    /// `config.method` says.
    ///
    /// The estimate `p̂` satisfies `(1 − c)·π = p + G·res` with `G = (1−d)(I − dM)⁻¹` (column
    /// stochastic, ≥ 0) and `c ≤ d` the mass pushed out of dangling nodes (which returns along
    /// `r`, tracked as one scalar instead of being spread over `r`'s support). The scores are
    /// `p̂ = p / (1 − c)`, so `0 ≤ p̂ ≤ π` componentwise and `‖π − p̂‖₁ = ‖res‖₁ / (1 − c)` exactly,
    /// the reported [`PprReport::l1_change`]. With every residual `≤ ε·deg(u)` that is
    /// `≤ ε·m / (1 − d)`. On undirected graphs with unit weights (every arc has its reverse; no
    /// overlay) ACL's pointwise bound also holds: `deg` is then stationary for `M`, so
    /// `π(v) − p̂(v) ≤ ε·deg(v) / (1 − d)`. Power iteration converges to the same `π`: the two
    /// rankings agree except between nodes whose scores differ by less than the two error bounds
    /// combined (on the 2wiki-6k test graph, `examples/ppr_bench.rs`, the top-5 passages agree at
    /// the default ε = 1e-12).
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn forward_push(
        &mut self,
        graph: &CsrGraph<'_>,
        overlay: Option<&ArcOverlay>,
        teleport: &[f64],
        config: &PprConfig,
    ) -> Result<PprReport> {
        self.run(graph, overlay, teleport, &PprConfig { method: PprMethod::Push, ..*config })
    }

    /// The scores of the last successful run, `[n]` (empty before the first).
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    /// Validate and normalise the teleport, sort the overlay, compute effective out-weights.
    fn prepare(
        &mut self,
        graph: &CsrGraph<'_>,
        overlay: Option<&ArcOverlay>,
        teleport: &[f64],
        need_degree: bool,
    ) -> Result<()> {
        let n = graph.node_count();
        let m = graph.arc_count();
        // The scores of a failed run must not look like a result.
        self.scores.clear();

        // Teleport r: [n], finite, ≥ 0, Σ > 0.
        if teleport.len() != n {
            return Err(Error::PprInput(format!(
                "teleport vector has {} entries, the graph has {n} nodes",
                teleport.len()
            )));
        }
        let mut total = 0.0f64;
        for (u, &x) in teleport.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0) {
                return Err(Error::PprInput(format!("teleport entry {u} is {x}, must be finite and ≥ 0")));
            }
            total += x;
        }
        if total <= 0.0 {
            return Err(Error::ZeroTeleport);
        }
        if !total.is_finite() {
            return Err(Error::PprInput("teleport entries sum to infinity".into()));
        }
        // Power iteration on a sweep layout reads every per-node vector in the layout's
        // numbering: the teleport goes there at once (it is sparse: seeds and passages), and the
        // precomputed out-weights are stored there.
        let pre = graph.precomputed.filter(|_| !need_degree);
        let layout = pre.and_then(|p| p.layout_for(graph));
        // A precomputation whose layout this view cannot use (not declared symmetric) holds its
        // out-weights in the layout's numbering: each run sums the rows itself then.
        let pre = pre.filter(|p| p.layout.is_none() || layout.is_some());
        self.teleport.clear();
        match layout {
            Some(l) => {
                self.teleport.resize(n, 0.0);
                for (&x, &new) in teleport.iter().zip(&l.rank) {
                    if x != 0.0 {
                        self.teleport[new as usize] = x / total;
                    }
                }
            }
            None => self.teleport.extend(teleport.iter().map(|x| x / total)),
        }

        // Overlay: sorted by arc, duplicates composed by product.
        self.overlay.clear();
        if let Some(ov) = overlay {
            if let Some(&(a, _)) = ov.entries.iter().find(|e| e.0 as usize >= m) {
                return Err(Error::PprInput(format!("overlay arc {a} but the graph has {m} arcs")));
            }
            self.overlay.extend(ov.entries.iter().map(|&(a, x)| (a, f64::from(x))));
            self.overlay.sort_unstable_by_key(|e| e.0);
            self.overlay.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 *= later.1;
                    true
                } else {
                    false
                }
            });
        }

        // Effective out-weights. Rows the overlay touches get their effective weights
        // materialised once (exact: f32 × f32 fits in f64); other rows read the stored weights.
        self.inv_out.clear();
        self.row_side.clear();
        self.row_side.resize(n, UNTOUCHED);
        self.row_weights.clear();
        self.dangling.clear();
        self.degree.clear();
        if need_degree {
            self.degree.resize(n, 0);
        }
        let (offsets, weights) = (graph.offsets, graph.weights);
        let local = |u: usize| layout.map_or(u, |l| l.rank[u] as usize);
        if let Some(pre) = pre {
            // Stored out-weights from the graph's precomputation; only the rows the overlay
            // touches are summed here.
            self.inv_out.extend_from_slice(&pre.inv_out);
            self.dangling.extend_from_slice(&pre.dangling);
            let mut cursor = 0;
            while cursor < self.overlay.len() {
                let a = self.overlay[cursor].0 as usize;
                let u = offsets.partition_point(|&o| o as usize <= a) - 1;
                let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
                let (sum, _) = self.overlaid_row(u, lo, &weights[lo..hi], &mut cursor)?;
                if sum > 0.0 {
                    self.inv_out[local(u)] = 1.0 / sum;
                } else if pre.out_weight[u] > 0.0 {
                    self.inv_out[local(u)] = 0.0;
                    self.dangling.push(local(u) as u32);
                }
            }
        } else {
            self.inv_out.resize(n, 0.0);
            self.prepare_rows(graph, need_degree)?;
        }
        self.prepare_corrections(graph, layout);
        Ok(())
    }

    /// Materialise row `u`'s effective weights (its stored weights `row`, arcs from `lo`, times
    /// the overlay's multipliers from `cursor` on, which it advances past the row) into
    /// `row_weights`; returns the row's effective out-weight and its count of positive arcs.
    fn overlaid_row(&mut self, u: usize, lo: usize, row: &[f32], cursor: &mut usize) -> Result<(f64, u32)> {
        self.row_side[u] = u32::try_from(self.row_weights.len())
            .map_err(|_| Error::PprInput("the overlay touches too many arcs".into()))?;
        let (mut sum, mut positive) = (0.0f64, 0u32);
        for (a, &w) in (lo..).zip(row) {
            let mut x = f64::from(w);
            if *cursor < self.overlay.len() && self.overlay[*cursor].0 as usize == a {
                x *= self.overlay[*cursor].1;
                *cursor += 1;
            }
            self.row_weights.push(x);
            sum += x;
            positive += u32::from(x > 0.0);
        }
        Ok((sum, positive))
    }

    /// Effective out-weights of every row (no precomputation, or forward push's degrees).
    fn prepare_rows(&mut self, graph: &CsrGraph<'_>, need_degree: bool) -> Result<()> {
        let n = graph.node_count();
        let (offsets, weights) = (graph.offsets, graph.weights);
        let mut cursor = 0;
        for u in 0..n {
            let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
            let row = &weights[lo..hi];
            let mut sum = 0.0f64;
            let mut positive = 0u32;
            if cursor < self.overlay.len() && (self.overlay[cursor].0 as usize) < hi {
                (sum, positive) = self.overlaid_row(u, lo, row, &mut cursor)?;
            } else if need_degree {
                for &w in row {
                    sum += f64::from(w);
                    positive += u32::from(w > 0.0);
                }
            } else {
                sum = row.iter().map(|&w| f64::from(w)).sum();
            }
            if sum > 0.0 {
                self.inv_out[u] = 1.0 / sum;
            } else {
                self.dangling.push(u as u32);
            }
            if need_degree {
                self.degree[u] = positive;
            }
        }
        Ok(())
    }

    /// The overlay as corrections of the gathered sums (symmetric graphs), in `layout`'s
    /// numbering when there is one.
    fn prepare_corrections(&mut self, graph: &CsrGraph<'_>, layout: Option<&layout::SweepLayout>) {
        let (offsets, weights) = (graph.offsets, graph.weights);
        // Gathering on a symmetric graph reads the stored weights of `v`'s own arcs; an
        // overlaid arc u → v then adds `mass[u] · w · (multiplier − 1)` to `v`.
        self.corrections.clear();
        if graph.symmetric {
            for &(a, x) in &self.overlay {
                let a = a as usize;
                let u = offsets.partition_point(|&o| o as usize <= a) - 1;
                let delta = f64::from(weights[a]) * (x - 1.0);
                if delta != 0.0 {
                    let v = graph.targets[a];
                    self.corrections.push(match layout {
                        Some(l) => (l.rank[u], l.rank[v as usize], delta),
                        None => (u as u32, v, delta),
                    });
                }
            }
        }
    }
}

/// Personalized PageRank in one call: a fresh [`PprSolver`], [`PprSolver::run`], and the scores
/// moved out. Use a long-lived [`PprSolver`] per query instead to reuse its buffers.
///
/// # Errors
/// As [`PprSolver::run`].
pub fn personalized_pagerank(
    graph: &CsrGraph<'_>,
    overlay: Option<&ArcOverlay>,
    teleport: &[f64],
    config: &PprConfig,
) -> Result<PprResult> {
    let mut solver = PprSolver::new();
    let report = solver.run(graph, overlay, teleport, config)?;
    Ok(PprResult { scores: std::mem::take(&mut solver.scores), report })
}

/// A passage ranked by its PPR score ([`rank_passages`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankedPassage {
    /// The passage's ordinal: its position in the `passage_nodes` slice given to
    /// [`rank_passages`].
    pub passage: u32,
    /// Its graph node.
    pub node: u32,
    /// `π[node]`.
    pub score: f64,
}

/// Rank passage nodes by PPR score (docs/method/spec.md §2: "rank passage nodes by π; ties break by passage
/// id"), keeping the best `top_k` (all when `top_k ≥` the number of passages).
///
/// `passage_nodes[i]` is the graph node of passage `i`. Order: score descending, then passage
/// ordinal `i` ascending, so equal scores (for instance passages the walk never reached) come out
/// in a deterministic order. O(P + k log k).
///
/// # Errors
/// [`Error::PprInput`] when a passage node is `≥ scores.len()` or its score is not finite.
pub fn rank_passages(scores: &[f64], passage_nodes: &[u32], top_k: usize) -> Result<Vec<RankedPassage>> {
    let mut ranked = Vec::with_capacity(passage_nodes.len());
    for (i, &node) in passage_nodes.iter().enumerate() {
        let score = *scores.get(node as usize).ok_or_else(|| {
            Error::PprInput(format!("passage {i} is node {node}, there are {} scores", scores.len()))
        })?;
        if !score.is_finite() {
            return Err(Error::PprInput(format!("passage {i} (node {node}) has score {score}")));
        }
        let passage = u32::try_from(i).map_err(|_| Error::PprInput("more than 2³² passages".into()))?;
        ranked.push(RankedPassage { passage, node, score });
    }
    // Finite scores: partial_cmp is a total order here (−0 = +0 tie, broken by the ordinal).
    let order = |a: &RankedPassage, b: &RankedPassage| {
        b.score.partial_cmp(&a.score).unwrap_or(std::cmp::Ordering::Equal).then(a.passage.cmp(&b.passage))
    };
    if top_k == 0 {
        ranked.clear();
        return Ok(ranked);
    }
    if top_k < ranked.len() {
        ranked.select_nth_unstable_by(top_k - 1, order);
        ranked.truncate(top_k);
    }
    ranked.sort_unstable_by(order);
    Ok(ranked)
}

#[cfg(test)]
mod tests;
