//! Unit tests: exact dense solves, hand-computed values, push vs power, errors.

use super::*;

/// CSR arrays built from an edge list (stable order within each source row).
struct Owned {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    weights: Vec<f32>,
    /// `(source, target, weight)` in arc order.
    arcs: Vec<(usize, usize, f32)>,
}

impl Owned {
    fn new(n: usize, edges: &[(usize, usize, f32)]) -> Owned {
        let mut arcs = edges.to_vec();
        arcs.sort_by_key(|e| e.0);
        let mut offsets = vec![0u32; n + 1];
        for &(s, _, _) in &arcs {
            offsets[s + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let targets = arcs.iter().map(|e| e.1 as u32).collect();
        let weights = arcs.iter().map(|e| e.2).collect();
        Owned { offsets, targets, weights, arcs }
    }

    fn graph(&self) -> CsrGraph<'_> {
        CsrGraph::new(&self.offsets, &self.targets, &self.weights).unwrap()
    }
}

/// π = (1−d)(I − dM)⁻¹ r by Gaussian elimination with partial pivoting, M = Pᵀ + r·δᵀ built
/// directly from the arc list and the overlay multipliers (independently of the solvers).
fn dense_ppr(n: usize, g: &Owned, overlay: &[(usize, f64)], teleport: &[f64], d: f64) -> Vec<f64> {
    let total: f64 = teleport.iter().sum();
    let r: Vec<f64> = teleport.iter().map(|x| x / total).collect();
    let mut w: Vec<f64> = g.arcs.iter().map(|e| f64::from(e.2)).collect();
    for &(a, x) in overlay {
        w[a] *= x;
    }
    let mut out = vec![0.0; n];
    for (a, e) in g.arcs.iter().enumerate() {
        out[e.0] += w[a];
    }
    // m[v][u] = M[v][u]
    let mut mm = vec![vec![0.0; n]; n];
    for (a, e) in g.arcs.iter().enumerate() {
        if out[e.0] > 0.0 {
            mm[e.1][e.0] += w[a] / out[e.0];
        }
    }
    for u in 0..n {
        if out[u] == 0.0 {
            for v in 0..n {
                mm[v][u] += r[v];
            }
        }
    }
    // A = I − dM, b = (1−d) r
    let mut a: Vec<Vec<f64>> =
        (0..n).map(|i| (0..n).map(|j| f64::from(u8::from(i == j)) - d * mm[i][j]).collect()).collect();
    let mut b: Vec<f64> = r.iter().map(|x| (1.0 - d) * x).collect();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap();
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            if f != 0.0 {
                let (pivot_rows, rest) = a.split_at_mut(row);
                for (x, p) in rest[0][col..].iter_mut().zip(&pivot_rows[col][col..]) {
                    *x -= f * p;
                }
                b[row] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x
}

fn l1(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

/// Tiny deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, k: usize) -> usize {
        (self.next() % k as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

fn overlay_of(entries: &[(usize, f64)]) -> ArcOverlay {
    let mut ov = ArcOverlay::new();
    for &(a, x) in entries {
        ov.multiply(a, x as f32).unwrap();
    }
    ov
}

fn top_k(scores: &[f64], k: usize) -> Vec<u32> {
    let nodes: Vec<u32> = (0..scores.len() as u32).collect();
    rank_passages(scores, &nodes, k).unwrap().iter().map(|p| p.node).collect()
}

#[test]
fn three_node_cycle_by_hand() {
    // 0 → 1 → 2 → 0, r = e0, d = 0.5: π0 = 1/2 + π2/2, π1 = π0/2, π2 = π1/2 ⇒ (4/7, 2/7, 1/7).
    let g = Owned::new(3, &[(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]);
    let cfg = PprConfig::default();
    let res = personalized_pagerank(&g.graph(), None, &[1.0, 0.0, 0.0], &cfg).unwrap();
    let want = [4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0];
    assert!(l1(&res.scores, &want) < 1e-7, "{:?}", res.scores);
    assert!(res.report.converged);
    assert!(res.report.l1_change < 1e-8);
    assert!(res.report.iterations <= 50);
}

#[test]
fn three_node_weighted_with_dangling_by_hand() {
    // 0 → 1 (w 1), 0 → 2 (w 3), 1 → 0; node 2 dangling. r = e0, d = 0.5:
    // π1 = d·π0/4, π2 = 3d·π0/4, π0 = (1−d) + d·π1 + d·π2 (node 2's mass back to r = e0)
    // ⇒ π0 = 1/2 + π0/4 ⇒ (2/3, 1/12, 1/4).
    let g = Owned::new(3, &[(0, 1, 1.0), (0, 2, 3.0), (1, 0, 1.0)]);
    let want = [2.0 / 3.0, 1.0 / 12.0, 1.0 / 4.0];
    for method in [PprMethod::Power, PprMethod::Push] {
        let cfg = PprConfig { method, ..PprConfig::default() };
        let res = personalized_pagerank(&g.graph(), None, &[2.0, 0.0, 0.0], &cfg).unwrap();
        assert!(l1(&res.scores, &want) < 1e-7, "{method:?} {:?}", res.scores);
        assert!(res.report.converged);
    }
    // Overlay: zero 0 → 2, so node 0's only arc is 0 → 1: π0 = 1/2 + π1/2, π1 = π0/2 ⇒ (2/3, 1/3, 0).
    let ov = overlay_of(&[(1, 0.0)]);
    let res = personalized_pagerank(&g.graph(), Some(&ov), &[1.0, 0.0, 0.0], &PprConfig::default()).unwrap();
    assert!(l1(&res.scores, &[2.0 / 3.0, 1.0 / 3.0, 0.0]) < 1e-7, "{:?}", res.scores);
}

/// Random graphs with dangling and isolated nodes, parallel arcs, self-loops and overlays that
/// zero arcs (and whole rows), against the dense solve, for both solvers.
#[test]
fn random_graphs_match_dense_solve() {
    let mut rng = Lcg(7);
    for case in 0..40 {
        let n = 2 + rng.below(24);
        let mut edges = Vec::new();
        let isolated = rng.below(n); // no arc in or out
        let sink = rng.below(n); // no arc out
        for _ in 0..rng.below(4 * n) {
            let (s, t) = (rng.below(n), rng.below(n));
            if s == isolated || t == isolated || s == sink {
                continue;
            }
            let w = [0.0, 0.5, 1.0, 2.0, 3.0, 0.8][rng.below(6)];
            edges.push((s, t, w as f32));
        }
        let g = Owned::new(n, &edges);
        let m = g.arcs.len();
        let mut overlay = Vec::new();
        if m > 0 && case % 2 == 1 {
            for _ in 0..1 + rng.below(m) {
                let x = [0.0, 0.25, 2.5, 5.0, 3.5][rng.below(5)];
                overlay.push((rng.below(m), x));
            }
            // zero every arc of one node: it becomes dangling for this query only
            let u = g.arcs[rng.below(m)].0;
            for a in g.graph().out_arcs(u as u32).unwrap() {
                overlay.push((a, 0.0));
            }
        }
        let mut teleport = vec![0.0; n];
        for _ in 0..1 + rng.below(3) {
            teleport[rng.below(n)] += 0.1 + rng.unit();
        }
        if case % 3 == 0 {
            for x in teleport.iter_mut() {
                *x += 0.05 * rng.unit(); // dense-like passage weights
            }
        }
        for d in [0.15, 0.5, 0.85] {
            let want = dense_ppr(n, &g, &overlay, &teleport, d);
            let ov = overlay_of(&overlay);
            let ov = if overlay.is_empty() { None } else { Some(&ov) };
            let cfg = PprConfig { damping: d, max_iterations: 500, ..PprConfig::default() };
            let power = personalized_pagerank(&g.graph(), ov, &teleport, &cfg).unwrap();
            let push = personalized_pagerank(
                &g.graph(),
                ov,
                &teleport,
                &PprConfig { method: PprMethod::Push, ..cfg },
            )
            .unwrap();
            assert!(power.report.converged && push.report.converged, "case {case} d {d}");
            let (ep, eq) = (l1(&power.scores, &want), l1(&push.scores, &want));
            assert!(ep < 1e-6, "case {case} d {d}: power L1 {ep}");
            assert!(eq < 1e-6, "case {case} d {d}: push L1 {eq}");
            // The reported bounds hold.
            assert!(ep <= power.report.error_bound + 1e-12, "case {case}: {ep} > {:?}", power.report);
            assert!(eq <= push.report.error_bound + 1e-12, "case {case}: {eq} > {:?}", push.report);
            // Push is a lower bound of π.
            assert!(push.scores.iter().zip(&want).all(|(p, w)| *p <= w + 1e-12));
            assert!((power.scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            // The isolated node keeps only reset mass: π = r·(1 − d + d·D) for a dangling node
            // with no in-arcs, i.e. zero when it has no teleport weight.
            if teleport[isolated] == 0.0 {
                assert_eq!(power.scores[isolated], 0.0);
            }
        }
    }
}

#[test]
fn push_and_power_agree_on_top_k() {
    // A larger random graph with well-separated scores: same top-10.
    let mut rng = Lcg(11);
    let n = 300;
    let mut edges = Vec::new();
    for u in 0..n {
        for _ in 0..rng.below(8) {
            let v = rng.below(n);
            let w = 1.0 + rng.below(3) as f32;
            edges.push((u, v, w));
            edges.push((v, u, w));
        }
    }
    let g = Owned::new(n, &edges);
    let mut teleport = vec![0.0; n];
    for s in [3, 50, 51, 200, 299] {
        teleport[s] = 1.0;
    }
    for x in teleport.iter_mut() {
        *x += 0.05 * rng.unit();
    }
    let cfg = PprConfig::default();
    let mut solver = PprSolver::new();
    solver.power_iteration(&g.graph(), None, &teleport, &cfg).unwrap();
    let power = solver.scores().to_vec();
    let report = solver.forward_push(&g.graph(), None, &teleport, &cfg).unwrap();
    assert!(report.converged && report.pushes > 0);
    let push = solver.scores().to_vec();
    assert!(l1(&power, &push) < 1e-7, "{}", l1(&power, &push));
    assert_eq!(top_k(&power, 10), top_k(&push, 10));
    // A coarse ε still ranks the top the same here, with a larger reported bound.
    let coarse = PprConfig { push_epsilon: 1e-6, ..cfg };
    let report = solver.forward_push(&g.graph(), None, &teleport, &coarse).unwrap();
    let push = solver.scores().to_vec();
    let err = l1(&power, &push);
    assert!(err <= report.error_bound + 1e-8, "{err} > {}", report.error_bound);
    assert_eq!(top_k(&power, 5), top_k(&push, 5));
}

#[test]
fn overlay_is_per_query_and_never_stored() {
    let g = Owned::new(4, &[(0, 1, 1.0), (0, 2, 1.0), (1, 3, 1.0), (2, 3, 1.0), (3, 0, 1.0)]);
    let before = g.weights.clone();
    let teleport = [1.0, 0.0, 0.0, 0.0];
    let cfg = PprConfig::default();
    let mut solver = PprSolver::new();
    solver.run(&g.graph(), None, &teleport, &cfg).unwrap();
    let plain = solver.scores().to_vec();
    let ov = overlay_of(&[(0, 5.0), (1, 0.0)]);
    solver.run(&g.graph(), Some(&ov), &teleport, &cfg).unwrap();
    let boosted = solver.scores().to_vec();
    assert_eq!(boosted[2], 0.0);
    assert!(boosted[1] > plain[1]);
    solver.run(&g.graph(), None, &teleport, &cfg).unwrap();
    assert_eq!(solver.scores(), &plain[..]);
    assert_eq!(g.weights, before);
    // Repeated entries compose by product: 2 × 2.5 = 5.
    let twice = overlay_of(&[(0, 2.0), (1, 0.0), (0, 2.5)]);
    assert_eq!(twice.multiplier(0), 5.0);
    solver.run(&g.graph(), Some(&twice), &teleport, &cfg).unwrap();
    assert!(l1(solver.scores(), &boosted) < 1e-15);
}

#[test]
fn all_dangling_returns_teleport() {
    // No arcs at all: every node dangling, π = r.
    let g = Owned::new(3, &[]);
    for method in [PprMethod::Power, PprMethod::Push] {
        let cfg = PprConfig { method, ..PprConfig::default() };
        let res = personalized_pagerank(&g.graph(), None, &[1.0, 3.0, 0.0], &cfg).unwrap();
        assert!(l1(&res.scores, &[0.25, 0.75, 0.0]) < 1e-12, "{method:?} {:?}", res.scores);
    }
}

#[test]
fn convergence_report() {
    let g = Owned::new(3, &[(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]);
    let cfg = PprConfig { max_iterations: 3, ..PprConfig::default() };
    let res = personalized_pagerank(&g.graph(), None, &[1.0, 0.0, 0.0], &cfg).unwrap();
    assert_eq!(res.report.iterations, 3);
    assert!(!res.report.converged);
    assert!(res.report.l1_change > 1e-3);
    let want = [4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0];
    assert!(l1(&res.scores, &want) <= res.report.error_bound + 1e-12);
    // d = 0: π = r after one sweep.
    let cfg = PprConfig { damping: 0.0, ..PprConfig::default() };
    let res = personalized_pagerank(&g.graph(), None, &[0.0, 1.0, 1.0], &cfg).unwrap();
    assert_eq!(res.scores, vec![0.0, 0.5, 0.5]);
    assert!(res.report.converged);
}

#[test]
fn errors_not_panics() {
    let t = [1u32, 0];
    let w = [1.0f32, 1.0];
    assert!(matches!(CsrGraph::new(&[], &[], &[]), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[1, 2], &t, &w), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 2, 1], &t, &w), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 3], &t, &w), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 2], &t, &w[..1]), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 2], &[2, 0], &w), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 2], &t, &[1.0, -1.0]), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 2], &t, &[f32::NAN, 1.0]), Err(Error::PprInput(_))));
    assert!(matches!(CsrGraph::new(&[0, 1, 2], &t, &[f32::INFINITY, 1.0]), Err(Error::PprInput(_))));
    let g = CsrGraph::new(&[0, 1, 2], &t, &w).unwrap();
    assert_eq!((g.node_count(), g.arc_count()), (2, 2));
    assert_eq!(g.find_arc(1, 0), Some(1));
    assert_eq!(g.find_arc(0, 0), None);
    assert_eq!(g.out_arcs(2), None);

    let cfg = PprConfig::default();
    let mut solver = PprSolver::new();
    for method in [PprMethod::Power, PprMethod::Push] {
        let cfg = PprConfig { method, ..cfg };
        assert!(matches!(solver.run(&g, None, &[0.0, 0.0], &cfg), Err(Error::ZeroTeleport)));
        assert!(matches!(solver.run(&g, None, &[1.0, -0.5], &cfg), Err(Error::PprInput(_))));
        assert!(matches!(solver.run(&g, None, &[1.0, f64::NAN], &cfg), Err(Error::PprInput(_))));
        assert!(matches!(solver.run(&g, None, &[f64::INFINITY, 1.0], &cfg), Err(Error::PprInput(_))));
        assert!(matches!(solver.run(&g, None, &[f64::MAX, f64::MAX], &cfg), Err(Error::PprInput(_))));
        assert!(matches!(solver.run(&g, None, &[1.0], &cfg), Err(Error::PprInput(_))));
        let mut ov = ArcOverlay::new();
        ov.multiply(2, 1.0).unwrap();
        assert!(matches!(solver.run(&g, Some(&ov), &[1.0, 0.0], &cfg), Err(Error::PprInput(_))));
        assert!(solver.scores().is_empty());
    }
    let mut ov = ArcOverlay::new();
    assert!(ov.multiply(0, -1.0).is_err());
    assert!(ov.multiply(0, f32::NAN).is_err());
    assert!(ov.multiply(0, f32::INFINITY).is_err());
    assert!(ov.is_empty());
    for bad in [
        PprConfig { damping: 1.0, ..cfg },
        PprConfig { damping: -0.1, ..cfg },
        PprConfig { damping: f64::NAN, ..cfg },
        PprConfig { tolerance: -1.0, ..cfg },
        PprConfig { max_iterations: 0, ..cfg },
        PprConfig { push_epsilon: 0.0, ..cfg },
    ] {
        assert!(matches!(solver.run(&g, None, &[1.0, 0.0], &bad), Err(Error::Config(_))), "{bad:?}");
    }
    // The empty graph has no teleport mass to give.
    let empty = CsrGraph::new(&[0], &[], &[]).unwrap();
    assert!(matches!(solver.run(&empty, None, &[], &cfg), Err(Error::ZeroTeleport)));
}

#[test]
fn rank_passages_breaks_ties_by_passage() {
    // Node ids deliberately not in passage order.
    let scores = [0.1, 0.3, 0.3, 0.0, 0.3, 0.0];
    let passages = [5, 4, 2, 1, 3];
    let ranked = rank_passages(&scores, &passages, 10).unwrap();
    let order: Vec<u32> = ranked.iter().map(|p| p.passage).collect();
    assert_eq!(order, vec![1, 2, 3, 0, 4]);
    assert_eq!(ranked[0].node, 4);
    assert_eq!(ranked[0].score, 0.3);
    let top2 = rank_passages(&scores, &passages, 2).unwrap();
    assert_eq!(top2.iter().map(|p| p.passage).collect::<Vec<_>>(), vec![1, 2]);
    assert!(rank_passages(&scores, &passages, 0).unwrap().is_empty());
    assert!(matches!(rank_passages(&scores, &[6], 1), Err(Error::PprInput(_))));
    assert!(matches!(rank_passages(&[f64::NAN], &[0], 1), Err(Error::PprInput(_))));
}

#[test]
fn config_serde_defaults() {
    let cfg: PprConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(cfg, PprConfig::default());
    assert_eq!((cfg.damping, cfg.tolerance, cfg.max_iterations), (0.5, 1e-8, 50));
    assert_eq!((cfg.rank_top_k, cfg.rank_stable_sweeps), (10, 3));
    let off = PprConfig { rank_top_k: 0, rank_stable_sweeps: 0, ..cfg };
    let back: PprConfig = serde_json::from_str(&serde_json::to_string(&off).unwrap()).unwrap();
    assert_eq!(back, off);
    let cfg: PprConfig = serde_json::from_str(r#"{"method": "push", "damping": 0.85}"#).unwrap();
    assert_eq!(cfg.method, PprMethod::Push);
    assert_eq!(cfg.damping, 0.85);
    assert!(serde_json::from_str::<PprConfig>(r#"{"dampng": 0.85}"#).is_err());
}

#[test]
fn order_is_certain_by_hand() {
    let scores = [0.5, 0.3, 0.29, 0.1, 0.0];
    let all = [0, 1, 2, 3, 4];
    let mut buf = Vec::new();
    // Best 1 of all: gap 0.5 − 0.3 = 0.2.
    assert!(power::order_is_certain(&scores, &all, 1, 0.1, &mut buf));
    assert!(!power::order_is_certain(&scores, &all, 1, 0.2, &mut buf));
    // Best 2: gaps 0.2 and 0.01.
    assert!(!power::order_is_certain(&scores, &all, 2, 0.1, &mut buf));
    assert!(power::order_is_certain(&scores, &all, 2, 0.005, &mut buf));
    // Only the ranked nodes count: without node 2 the gaps are 0.2 and 0.2.
    assert!(power::order_is_certain(&scores, &[4, 3, 1, 0], 2, 0.1, &mut buf));
    // k ≥ the ranked nodes: every gap counts; one node alone certifies nothing.
    assert!(power::order_is_certain(&scores, &[0, 1, 3], 10, 0.15, &mut buf));
    assert!(!power::order_is_certain(&scores, &[0], 10, 0.0, &mut buf));
    // Ties never certify.
    assert!(!power::order_is_certain(&[0.4, 0.4, 0.2], &[0, 1, 2], 1, 0.0, &mut buf));
}

#[test]
fn ranking_rule_gives_the_exact_top_k() {
    // Random graphs of 300 nodes, the first 100 "passages", a seed teleport plus passage
    // weights: the ranking rule stops earlier than the L1 rule and its top 5 passages (and
    // their order) are those of the dense solve, on every case where the rule fired.
    let mut rng = Lcg(23);
    let mut fired = 0;
    for case in 0..12 {
        let n = 300;
        let mut edges = Vec::new();
        for u in 0..n {
            for _ in 0..1 + rng.below(6) {
                let v = rng.below(n);
                let w = [0.5f32, 1.0, 2.0, 3.0][rng.below(4)];
                edges.push((u, v, w));
                edges.push((v, u, w));
            }
        }
        let g = Owned::new(n, &edges);
        let mut teleport = vec![0.0; n];
        for _ in 0..5 {
            teleport[100 + rng.below(200)] += 0.2 + rng.unit();
        }
        for x in teleport[..100].iter_mut() {
            *x += 0.05 * rng.unit();
        }
        let overlay: Vec<(usize, f64)> =
            (0..20).map(|_| (rng.below(g.arcs.len()), [0.0, 0.25, 2.5, 5.0][rng.below(4)])).collect();
        let ov = overlay_of(&overlay);
        let ov = if case % 2 == 0 { Some(&ov) } else { None };
        let want = dense_ppr(n, &g, if ov.is_some() { &overlay } else { &[] }, &teleport, 0.5);
        let passages: Vec<u32> = (0..100).collect();
        let want_top: Vec<u32> =
            rank_passages(&want, &passages, 5).unwrap().iter().map(|p| p.passage).collect();

        let cfg = PprConfig { rank_top_k: 5, rank_stable_sweeps: 0, ..PprConfig::default() };
        let mut solver = PprSolver::new();
        let l1_rule = solver.run(&g.graph(), ov, &teleport, &cfg).unwrap();
        assert!(!l1_rule.ranking_certified && l1_rule.converged);
        let ranked = solver.run_ranked(&g.graph(), ov, &teleport, &passages, &cfg).unwrap();
        assert!(ranked.converged, "case {case}: {ranked:?}");
        assert!(ranked.iterations <= l1_rule.iterations);
        let got = solver.scores().to_vec();
        let err = l1(&got, &want);
        assert!(err <= ranked.error_bound + 1e-12, "case {case}: {err} > {:?}", ranked);
        let got_top: Vec<u32> =
            rank_passages(&got, &passages, 5).unwrap().iter().map(|p| p.passage).collect();
        assert_eq!(got_top, want_top, "case {case}: {ranked:?}");
        if ranked.ranking_certified {
            fired += 1;
            assert!(ranked.iterations < l1_rule.iterations, "case {case}");
            assert!(ranked.l1_change >= cfg.tolerance);
        }
    }
    assert!(fired >= 8, "the ranking rule fired on {fired} of 12 cases");
}

#[test]
fn ranking_rule_off_or_tied_falls_back_to_l1() {
    // Two symmetric passages (1 and 2, both hanging off seed 0): tied forever, so the rule
    // never certifies and the L1 rule stops the run.
    let g = Owned::new(3, &[(0, 1, 1.0), (1, 0, 1.0), (0, 2, 1.0), (2, 0, 1.0)]);
    let teleport = [1.0, 0.0, 0.0];
    let mut solver = PprSolver::new();
    let cfg = PprConfig { rank_top_k: 1, rank_stable_sweeps: 0, ..PprConfig::default() };
    let tied = solver.run_ranked(&g.graph(), None, &teleport, &[1, 2], &cfg).unwrap();
    assert!(!tied.ranking_certified && tied.converged && tied.l1_change < cfg.tolerance);
    // rank_top_k = 0 is the L1 rule, whatever is ranked.
    let off = PprConfig { rank_top_k: 0, rank_stable_sweeps: 0, ..PprConfig::default() };
    let g = Owned::new(3, &[(0, 1, 3.0), (1, 0, 3.0), (0, 2, 1.0), (2, 0, 1.0)]);
    let a = solver.run_ranked(&g.graph(), None, &teleport, &[1, 2], &off).unwrap();
    let b = solver.run(&g.graph(), None, &teleport, &off).unwrap();
    assert_eq!(a, b);
    let c = solver.run_ranked(&g.graph(), None, &teleport, &[1, 2], &cfg).unwrap();
    assert!(c.ranking_certified && c.iterations < b.iterations, "{c:?} vs {b:?}");
    // By hand (d = 0.5): π1 = ½·¾·π0, π2 = ½·¼·π0, π0 = ½ + ½(π1 + π2) ⇒ π0 = 2/3, π1 = 1/4,
    // π2 = 1/12.
    let s = solver.scores();
    assert!(s[1] > s[2]);
    assert!(
        (s[1] - 0.25).abs() <= c.error_bound + 1e-12 && (s[2] - 1.0 / 12.0).abs() <= c.error_bound + 1e-12
    );
    // A ranked node outside the graph is an error, not a panic.
    assert!(matches!(solver.run_ranked(&g.graph(), None, &teleport, &[7], &cfg), Err(Error::PprInput(_))));
    assert!(solver.scores().is_empty());
}

#[test]
fn gathering_on_symmetric_graphs_matches_dense_solve() {
    // Undirected random graphs (parallel edges of different weights, self-loops, isolated
    // nodes), with and without an overlay that also empties one node's arcs: the gathering
    // sweeps of a symmetric graph reach the dense solve and the scattering sweeps' scores.
    let mut rng = Lcg(31);
    for case in 0..30 {
        let n = 2 + rng.below(30);
        let mut edges = Vec::new();
        for _ in 0..rng.below(3 * n) {
            let (s, t) = (rng.below(n), rng.below(n));
            let w = [0.0f32, 0.5, 1.0, 2.0, 3.0][rng.below(5)];
            edges.push((s, t, w));
            if s != t {
                edges.push((t, s, w));
            }
        }
        let g = Owned::new(n, &edges);
        let m = g.arcs.len();
        let mut overlay = Vec::new();
        if m > 0 && case % 2 == 1 {
            for _ in 0..1 + rng.below(m) {
                overlay.push((rng.below(m), [0.0, 0.25, 2.5, 5.0][rng.below(4)]));
            }
            let u = g.arcs[rng.below(m)].0;
            for a in g.graph().out_arcs(u as u32).unwrap() {
                overlay.push((a, 0.0));
            }
        }
        let mut teleport = vec![0.0; n];
        for _ in 0..1 + rng.below(3) {
            teleport[rng.below(n)] += 0.1 + rng.unit();
        }
        let sym = CsrGraph::new_symmetric(&g.offsets, &g.targets, &g.weights).unwrap();
        assert!(sym.is_symmetric() && !g.graph().is_symmetric());
        let ov = overlay_of(&overlay);
        let ov = if overlay.is_empty() { None } else { Some(&ov) };
        for d in [0.15, 0.5, 0.85] {
            let want = dense_ppr(n, &g, &overlay, &teleport, d);
            let cfg = PprConfig { damping: d, max_iterations: 500, ..PprConfig::default() };
            let mut solver = PprSolver::new();
            let report = solver.run(&sym, ov, &teleport, &cfg).unwrap();
            let gathered = solver.scores().to_vec();
            let scattered_report = solver.run(&g.graph(), ov, &teleport, &cfg).unwrap();
            let scattered = solver.scores().to_vec();
            let err = l1(&gathered, &want);
            assert!(report.converged && err < 1e-6, "case {case} d {d}: L1 {err}");
            assert!(err <= report.error_bound + 1e-12, "case {case} d {d}: {err} > {report:?}");
            // Gathering (Gauss–Seidel) and scattering (Jacobi) are different iterations to one
            // fixed point: each within its own bound of it.
            assert!(l1(&scattered, &want) <= scattered_report.error_bound + 1e-12, "case {case} d {d}");
            // The graph's precomputed out-weights (only the overlay's rows summed per run) and
            // the sweep layout (another node order): the same fixed point, including the
            // dangling node the overlay makes.
            let pre = StaticOut::new(&sym);
            let with = sym.with_static(&pre).unwrap();
            let report = solver.run(&with, ov, &teleport, &cfg).unwrap();
            let err = l1(solver.scores(), &want);
            assert!(report.converged && err <= report.error_bound + 1e-12, "case {case} d {d}: {err}");
            solver.run(&g.graph().with_static(&pre).unwrap(), ov, &teleport, &cfg).unwrap();
            assert!(l1(solver.scores(), &scattered) < 1e-12, "case {case} d {d}");
            // The bound holds after every sweep, not only at the end (module docs of `power`:
            // the Gauss–Seidel residual is at most d times the sweep's L1 change); the layout's
            // scalar rows (the wasm path) and its AVX2 rows (where the CPU has them) agree.
            for sweeps in 1..12 {
                let fixed = PprConfig { tolerance: 0.0, max_iterations: sweeps, ..cfg };
                let mut layout_scores = Vec::new();
                for (graph, scalar) in [(&sym, false), (&with, false), (&with, true)] {
                    power::SCALAR_ROWS.with(|c| c.set(scalar));
                    let r = solver.run(graph, ov, &teleport, &fixed).unwrap();
                    power::SCALAR_ROWS.with(|c| c.set(false));
                    let err = l1(solver.scores(), &want);
                    assert!(
                        err <= r.error_bound * (1.0 + 1e-9) + 1e-12,
                        "case {case} d {d} sweeps {sweeps} scalar {scalar}: {err} > {r:?}"
                    );
                    if !std::ptr::eq(graph, &sym) {
                        layout_scores.push(solver.scores().to_vec());
                    }
                }
                assert!(l1(&layout_scores[0], &layout_scores[1]) < 1e-12, "case {case} d {d} sweeps {sweeps}");
            }
        }
    }
}

#[test]
fn static_out_weights_by_hand_and_wrong_size() {
    // Node 0: arcs of 1 and 2 (out-weight 3); node 1: one arc of 0.5; node 2: none (dangling).
    let g = Owned::new(3, &[(0, 1, 1.0), (0, 2, 2.0), (1, 0, 0.5)]);
    let pre = StaticOut::new(&g.graph());
    assert_eq!(pre.out_weight, vec![3.0, 0.5, 0.0]);
    assert_eq!(pre.inv_out, vec![1.0 / 3.0, 2.0, 0.0]);
    assert_eq!(pre.dangling, vec![2]);
    let other = Owned::new(2, &[(0, 1, 1.0)]);
    assert!(matches!(other.graph().with_static(&pre), Err(Error::PprInput(_))));
}

#[test]
fn stability_rule_stops_when_the_top_k_stops_changing() {
    // The run stops after the first sweep whose top k (in order) equals that of the
    // `rank_stable_sweeps` sweeps before it; the reference is a run per sweep count with the
    // L1 rule off (tolerance 0), whose top k is compared by hand here.
    let mut rng = Lcg(77);
    let mut fired = 0;
    for case in 0..8 {
        let n = 200;
        let mut edges = Vec::new();
        for _ in 0..900 {
            let (a, b) = (rng.below(n), rng.below(n));
            let w = 0.5 + rng.unit() as f32;
            edges.push((a, b, w));
            edges.push((b, a, w));
        }
        let g = Owned::new(n, &edges);
        let sym = CsrGraph::new_symmetric(&g.offsets, &g.targets, &g.weights).unwrap();
        let mut teleport = vec![0.0; n];
        for _ in 0..4 {
            teleport[60 + rng.below(140)] += 0.2 + rng.unit();
        }
        let ranked: Vec<u32> = (0..60).collect();
        let (k, s) = (5u32, 1 + (case % 3) as u32);
        let cfg = PprConfig { rank_top_k: k, rank_stable_sweeps: s, tolerance: 0.0, ..PprConfig::default() };
        let mut solver = PprSolver::new();
        let stable = solver.run_ranked(&sym, None, &teleport, &ranked, &cfg).unwrap();
        let top_after = |solver: &mut PprSolver, sweeps: u32| {
            let fixed = PprConfig { tolerance: 0.0, max_iterations: sweeps, ..PprConfig::default() };
            solver.run(&sym, None, &teleport, &fixed).unwrap();
            rank_passages(solver.scores(), &ranked, k as usize)
                .unwrap()
                .iter()
                .map(|p| p.node)
                .collect::<Vec<_>>()
        };
        let tops: Vec<Vec<u32>> = (1..=50).map(|i| top_after(&mut solver, i)).collect();
        let want =
            (s as usize..50).find(|&i| (1..=s as usize).all(|j| tops[i] == tops[i - j])).map(|i| i + 1);
        let want = want.expect("the top 5 settles within 50 sweeps");
        // The ranking rule (on with rank_top_k) may stop the run first, never later.
        assert!(stable.converged && stable.ranking_stable != stable.ranking_certified, "{stable:?}");
        if stable.ranking_stable {
            fired += 1;
            assert_eq!(stable.iterations as usize, want, "case {case}: {stable:?}");
        } else {
            // Certified at or before the sweep the stability rule would stop at (the
            // certificate is checked first within a sweep).
            assert!((stable.iterations as usize) <= want, "case {case}: {stable:?}");
        }
    }
    assert!(fired >= 4, "the stability rule fired on {fired} of 8 cases");
}

#[test]
fn sweep_layout_by_hand() {
    // A path 0 – 3 – 1 – 4 – 2 stored scrambled. Cuthill–McKee starts at the least-degree node
    // with the lowest id (0) and walks the path: 0, 3, 1, 4, 2; reversed: 2, 4, 1, 3, 0.
    let mut edges = Vec::new();
    for (a, b, w) in [(0, 3, 1.0f32), (3, 1, 2.0), (1, 4, 3.0), (4, 2, 4.0)] {
        edges.push((a, b, w));
        edges.push((b, a, w));
    }
    let g = Owned::new(5, &edges);
    let sym = CsrGraph::new_symmetric(&g.offsets, &g.targets, &g.weights).unwrap();
    let pre = StaticOut::new(&sym);
    let l = pre.layout.as_ref().unwrap();
    assert_eq!(l.order, vec![2, 4, 1, 3, 0]);
    assert_eq!(l.rank, vec![4, 2, 0, 3, 1]);
    // New node 1 (stored 4) has arcs to stored 1 (new 2, weight 3) and 2 (new 0, weight 4),
    // sorted by new target and padded with zero weights to the row's last target.
    let row: Vec<(u32, f32)> =
        l.arcs[l.offsets[1] as usize..l.offsets[2] as usize].iter().map(|a| (a.target, a.weight)).collect();
    assert_eq!(row, vec![(0, 4.0), (2, 3.0), (2, 0.0), (2, 0.0)]);
    assert_eq!(l.offsets, vec![0, 4, 8, 12, 16, 20]);
    // The out-weights power iteration reads, stored in the new numbering: stored 2 (weight 4),
    // 4 (3 + 4), 1 (2 + 3), 3 (1 + 2), 0 (1).
    assert_eq!(pre.inv_out, vec![0.25, 1.0 / 7.0, 0.2, 1.0 / 3.0, 1.0]);
    assert_eq!(l.arcs.capacity(), 20);
    // A graph that is not declared symmetric has no layout.
    assert!(StaticOut::new(&g.graph()).layout.is_none());
}

#[test]
fn sweep_layout_keeps_every_row() {
    // Random symmetric graphs with isolated nodes, parallel arcs and self-loops: the order is a
    // permutation, `rank` its inverse, and every new row holds the stored row's arcs (renamed)
    // plus zero-weight padding to a multiple of LANES.
    let mut rng = Lcg(5);
    for case in 0..10 {
        let n = 1 + rng.below(60);
        let mut edges = Vec::new();
        for _ in 0..rng.below(4 * n) {
            let (s, t) = (rng.below(n), rng.below(n));
            let w = [0.0f32, 0.5, 1.0, 2.0][rng.below(4)];
            edges.push((s, t, w));
            if s != t {
                edges.push((t, s, w));
            }
        }
        let g = Owned::new(n, &edges);
        let sym = CsrGraph::new_symmetric(&g.offsets, &g.targets, &g.weights).unwrap();
        let l = layout::SweepLayout::new(&g.offsets, &g.targets, &g.weights).unwrap();
        let mut seen = vec![false; n];
        for (new, &old) in l.order.iter().enumerate() {
            assert!(!seen[old as usize], "case {case}");
            seen[old as usize] = true;
            assert_eq!(l.rank[old as usize] as usize, new, "case {case}");
        }
        for (new, &old) in l.order.iter().enumerate() {
            let (lo, hi) = (l.offsets[new] as usize, l.offsets[new + 1] as usize);
            assert_eq!(lo % layout::LANES, 0, "case {case}");
            let stored = sym.out_arcs(old).unwrap();
            assert_eq!(hi - lo, stored.len().div_ceil(layout::LANES) * layout::LANES, "case {case}");
            let mut want: Vec<(u32, u32)> =
                stored.map(|a| (l.rank[g.targets[a] as usize], g.weights[a].to_bits())).collect();
            let mut got: Vec<(u32, u32)> =
                l.arcs[lo..hi].iter().map(|a| (a.target, a.weight.to_bits())).collect();
            want.sort_unstable();
            got.sort_unstable();
            // The padding: zero weights; the rest the stored arcs.
            let padding = got.len() - want.len();
            let zeros = got.iter().filter(|a| a.1 == 0.0f32.to_bits()).count();
            assert!(zeros >= padding, "case {case}");
            for a in &want {
                let i = got.iter().position(|b| b == a).unwrap();
                got.swap_remove(i);
            }
            assert!(got.iter().all(|a| a.1 == 0.0f32.to_bits()), "case {case}");
        }
    }
}

#[test]
fn best_of_matches_selection() {
    // The one-pass top k + 1 against the selections it replaced: the stability rule's top k
    // (positions, ties to the lower position, non-finite last) and the ranking rule's verdict.
    let mut rng = Lcg(31);
    let (mut best, mut top, mut buf) = (Vec::new(), Vec::new(), Vec::new());
    for case in 0..300 {
        let n = 1 + rng.below(40);
        // Few distinct values, so ties are common; some NaN / infinite scores.
        let mut scores: Vec<f64> = (0..n).map(|_| [0.0, 0.1, 0.2, 0.25, 0.5][rng.below(5)]).collect();
        if case % 7 == 0 {
            scores[rng.below(n)] = f64::NAN;
        }
        if case % 11 == 0 {
            scores[rng.below(n)] = f64::INFINITY;
        }
        let ranked: Vec<u32> = (0..rng.below(n + 1)).map(|_| rng.below(n) as u32).collect();
        let k = rng.below(6);
        let finite = power::best_of(&scores, &ranked, k + 1, &mut best);
        assert_eq!(finite, ranked.iter().all(|&u| scores[u as usize].is_finite()), "case {case}");
        assert_eq!(best.len(), (k + 1).min(ranked.len()), "case {case}");
        power::top_of(&scores, &ranked, k, &mut top);
        let positions: Vec<u32> = best.iter().take(k).map(|e| e.1).collect();
        let want: Vec<u32> = top.iter().map(|e| e.1).collect();
        assert_eq!(positions, want, "case {case}");
        for bound in [0.0, 0.04, 0.1] {
            let certain = finite && best.len() >= 2 && best.windows(2).all(|w| w[0].0 - w[1].0 > bound);
            assert_eq!(
                certain,
                k > 0 && power::order_is_certain(&scores, &ranked, k, bound, &mut buf),
                "case {case} bound {bound}"
            );
        }
    }
}
