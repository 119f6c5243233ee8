//! Hand-worked CatRAG / HippoRAG 2 queries on an 8-node graph: the teleport vector, every overlay
//! multiplier (boost with its cap, pruning, tiers), the ranking against an independent PPR, the
//! anchoring of matched and unmatched mentions, the dense fallbacks, explanation paths and the
//! hub diagnostics.

use std::collections::HashMap;

use super::*;
use crate::embed::l2_normalize;
use crate::graph::{build_graph, GraphConfig, Triple};
use crate::text::EntityKind;
use crate::Passage;

use crate::embed::testing::MapEmbedder;

const DIM: usize = 8;

fn basis(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    v[i] = 1.0;
    v
}

/// `c·e_a + √(1 − c²)·e_b`: cosine `c` with `e_a`.
fn at(c: f32, a: usize, b: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    v[a] = c;
    v[b] = (1.0 - c * c).sqrt();
    v
}

/// Fact texts and their cosine with the query (`e5`).
const FACTS: [(&str, f32); 6] = [
    ("Alice r1 Bob", 0.9),
    ("Alice r2 Carol", 0.5),
    ("Alice r6 Bob", 0.85),
    ("Bob r3 Dave", 0.8),
    ("Carol r4 Eve", 0.3),
    ("Alice r5 Eve", 0.1),
];

fn embedder() -> MapEmbedder {
    let mut map = HashMap::new();
    for (i, name) in ["Alice", "Bob", "Carol", "Dave", "Eve"].iter().enumerate() {
        map.insert(name.to_string(), basis(i));
    }
    for (text, c) in FACTS {
        map.insert(text.to_string(), at(c, 5, 6));
    }
    map.insert("Alicia".to_string(), at(0.9, 0, 7)); // cosine 0.9 with "Alice": anchors
    map.insert("Zed".to_string(), at(0.5, 0, 7)); // cosine 0.5 with "Alice": dropped
    map.insert("query".to_string(), basis(5));
    for v in map.values_mut() {
        l2_normalize(v);
    }
    MapEmbedder { dim: DIM, map }
}

/// Node ids (creation order): P0 0, Alice 1, Bob 2, Carol 3, P1 4, Dave 5, P2 6, Eve 7.
const P0: u32 = 0;
const A: u32 = 1;
const B: u32 = 2;
const C: u32 = 3;
const P1: u32 = 4;
const D: u32 = 5;
const P2: u32 = 6;
const E: u32 = 7;

fn hand_graph() -> Graph {
    let passages: Vec<Passage> = (0..3)
        .map(|i| Passage { id: format!("p{i}"), title: format!("T{i}"), text: format!("text {i}") })
        .collect();
    let triples = vec![
        Triple::new("Alice", "r1", "Bob", 0),
        Triple::new("Alice", "r2", "Carol", 0),
        Triple::new("Alice", "r6", "Bob", 0),
        Triple::new("Bob", "r3", "Dave", 1),
        Triple::new("Carol", "r4", "Eve", 2),
        Triple::new("Alice", "r5", "Eve", 2),
    ];
    // f32 fact vectors: the hand-worked cosines (0.9, 0.5, …) exactly.
    let config = GraphConfig { fact_vectors_f32: true, ..GraphConfig::default() };
    let g = build_graph(config, &passages, &triples, &embedder(), &mut |_, _, _| {}).unwrap();
    assert_eq!(g.node_count(), 8);
    for (name, id) in [("Alice", A), ("Bob", B), ("Carol", C), ("Dave", D), ("Eve", E)] {
        assert_eq!(g.entity_id(name), Some(id), "{name}");
    }
    assert_eq!(g.passage_nodes(), &[P0, P1, P2]);
    assert_eq!(g.counts().synonym_edges, 0);
    g
}

fn mention(text: &str, kind: EntityKind) -> Mention {
    Mention { start: 0, end: text.len(), text: text.to_string(), kind }
}

/// Dense cosines of the three corpus passages: min–max 0, 1, 0.5 → weights 0, 0.05, 0.025.
const DENSE: [f32; 3] = [0.2, 0.6, 0.4];

/// The hand-worked configuration: 4 seed facts, 3 fact seeds, pruning to 1 edge for the top 2
/// seeds, anchoring threshold 0.8, tier thresholds 0.85 / 0.7 / 0.4, PPR to the L1 rule.
fn config() -> CatragConfig {
    CatragConfig {
        linking_top_k: 4,
        seed_top_k: 3,
        tier_seeds: 2,
        k_edge: 1,
        anchor_threshold: 0.8,
        similarity_tiers: SimilarityTierThresholds { direct: 0.85, high: 0.7, weak: 0.4 },
        // The L1 rule alone: the tests read PPR scores to 1e-7 (the ranking rules stop earlier).
        ppr: crate::ppr::PprConfig { rank_top_k: 0, rank_stable_sweeps: 0, ..Default::default() },
        ..CatragConfig::default()
    }
}

fn run(g: &Graph, method: GraphMethod, mentions: &[Mention], cfg: &CatragConfig) -> Retrieval {
    let e = embedder();
    let q = e.embed("query").unwrap();
    let tierer = EmbeddingSimilarityTierer { thresholds: cfg.similarity_tiers };
    let input = QueryInput { query: "query", query_vector: &q, passage_scores: &DENSE, lexical_scores: &[], titles: None, mentions, prior_vectors: None };
    Retriever::new().retrieve(g, method, &input, &e, &tierer, cfg).unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// PPR by plain power iteration over the arcs with the given multipliers keyed by (from, to,
/// type): independent of `crate::ppr` and of the overlay construction.
fn reference_ppr(g: &Graph, teleport: &[f64], mult: &HashMap<(u32, u32, EdgeType), f64>, d: f64) -> Vec<f64> {
    let csr = g.csr();
    let n = g.node_count();
    let total: f64 = teleport.iter().sum();
    let r: Vec<f64> = teleport.iter().map(|x| x / total).collect();
    let w = |u: u32, a: usize| {
        f64::from(csr.weights[a]) * mult.get(&(u, csr.targets[a], csr.edge_types[a])).copied().unwrap_or(1.0)
    };
    let mut pi = r.clone();
    for _ in 0..500 {
        let mut next = vec![0.0; n];
        let mut dangling = 0.0;
        for u in 0..n as u32 {
            let out: f64 = csr.arcs_of(u).map(|a| w(u, a)).sum();
            if out <= 0.0 {
                dangling += pi[u as usize];
                continue;
            }
            for a in csr.arcs_of(u) {
                next[csr.targets[a] as usize] += d * pi[u as usize] * w(u, a) / out;
            }
        }
        for v in 0..n {
            next[v] += ((1.0 - d) + d * dangling) * r[v];
        }
        pi = next;
    }
    pi
}

fn ranking(scores: &[f64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..3).collect();
    order.sort_by(|&a, &b| scores[b as usize].partial_cmp(&scores[a as usize]).unwrap().then(a.cmp(&b)));
    order
}

#[test]
fn hipporag_teleport_and_ranking_by_hand() {
    let g = hand_graph();
    let cfg = config();
    let r = run(&g, GraphMethod::HippoRag, &[mention("Eve", EntityKind::Name)], &cfg);
    assert!(r.fallback.is_none());
    assert!(r.overlay.is_empty(), "HippoRAG 2 has no overlay");
    assert!(r.anchors.is_empty(), "HippoRAG 2 does not anchor");

    // Seed facts: cosines 0.9, 0.85, 0.8, 0.5 of 0.9 … 0.1 → min–max 1, 0.9375, 0.875, 0.5.
    let texts: Vec<&str> = r.facts.iter().map(|f| g.facts()[f.fact as usize].text.as_str()).collect();
    assert_eq!(texts, ["Alice r1 Bob", "Alice r6 Bob", "Bob r3 Dave", "Alice r2 Carol"]);
    for (f, want) in r.facts.iter().zip([1.0, 0.9375, 0.875, 0.5]) {
        assert!(close(f.score, want, 1e-6), "{} vs {want}", f.score);
    }
    // Entity weights: score ÷ |passages|, averaged over the entity's seed facts.
    // Alice (2 passages): (1/2 + 0.9375/2 + 0.5/2) / 3 = 0.40625
    // Bob (2 passages):   (1/2 + 0.9375/2 + 0.875/2) / 3 = 0.46875
    // Dave (1 passage):   0.875
    // Carol (2 passages): 0.5/2 = 0.25, fourth: dropped by seed_top_k = 3.
    let seeds: Vec<(u32, f64)> = r.seeds.iter().map(|s| (s.node, s.weight)).collect();
    assert_eq!(seeds.iter().map(|s| s.0).collect::<Vec<_>>(), [D, B, A]);
    for ((_, got), want) in seeds.iter().zip([0.875, 0.46875, 0.40625]) {
        assert!(close(*got, want, 1e-6), "{got} vs {want}");
    }
    // Teleport: seeds + passage weights (0, 0.05, 0.025); total 1.825.
    let raw = [0.0, 0.40625, 0.46875, 0.0, 0.05, 0.875, 0.025, 0.0];
    let total: f64 = raw.iter().sum();
    assert!(close(total, 1.825, 1e-12));
    for (u, want) in raw.iter().enumerate() {
        assert!(
            close(r.teleport[u], want / total, 1e-6),
            "teleport[{u}] = {} vs {}",
            r.teleport[u],
            want / total
        );
    }
    // Ranking against an independent PPR without multipliers.
    let pi = reference_ppr(&g, &raw, &HashMap::new(), 0.5);
    let want: Vec<f64> = [P0, P1, P2].iter().map(|&p| pi[p as usize]).collect();
    for (got, w) in r.passage_scores.iter().zip(&want) {
        assert!(close(*got, *w, 1e-7), "{got} vs {w}");
    }
    assert_eq!(ranking(&r.passage_scores), ranking(&want));
    let ppr = r.ppr.unwrap();
    assert!(ppr.converged);
    // The fixed point sums to 1; the Gauss–Seidel iterate is within its L1 error bound of it.
    let sum: f64 = r.node_scores.iter().sum();
    assert!((sum - 1.0).abs() <= ppr.error_bound + 1e-12, "{sum} vs {ppr:?}");
}

#[test]
fn catrag_overlay_by_hand() {
    let g = hand_graph();
    let cfg = config();
    let mentions = [
        mention("Eve", EntityKind::Name),    // exact: + 0.2 / 1
        mention("Alicia", EntityKind::Name), // embedding 0.9 ≥ 0.8 → Alice: + 0.2 / 2
        mention("Zed", EntityKind::Name),    // embedding 0.5 < 0.8: dropped
    ];
    let r = run(&g, GraphMethod::CatRag, &mentions, &cfg);
    assert!(r.fallback.is_none());

    // Anchors.
    assert_eq!(r.anchors.len(), 3);
    assert_eq!((r.anchors[0].node, r.anchors[0].how), (Some(E), Some(MatchKind::Exact)));
    assert_eq!((r.anchors[1].node, r.anchors[1].how), (Some(A), Some(MatchKind::Embedding)));
    assert!(close(f64::from(r.anchors[1].similarity), 0.9, 1e-6));
    assert_eq!((r.anchors[2].node, r.anchors[2].how), (None, None));
    assert!(close(f64::from(r.anchors[2].similarity), 0.5, 1e-6), "the near miss is reported");

    // Seeds: Dave 0.875, Alice 0.40625 + 0.1, Bob 0.46875, Eve 0.2 (anchor only).
    let seeds: Vec<(u32, f64, SeedChannel)> = r.seeds.iter().map(|s| (s.node, s.weight, s.channel)).collect();
    let want = [
        (D, 0.875, SeedChannel::Facts),
        (A, 0.50625, SeedChannel::Both),
        (B, 0.46875, SeedChannel::Facts),
        (E, 0.2, SeedChannel::Anchor),
    ];
    assert_eq!(seeds.len(), want.len());
    for (got, w) in seeds.iter().zip(want) {
        assert_eq!((got.0, got.2), (w.0, w.2));
        assert!(close(got.1, w.1, 1e-6), "{got:?} vs {w:?}");
    }

    // The overlay, by (from, to, type) → (multiplier, cause).
    let got: HashMap<(u32, u32, EdgeType), (f32, OverlayCause)> =
        r.overlay.iter().map(|o| ((o.from, o.to, o.edge_type), (o.multiplier, o.cause))).collect();
    assert_eq!(got.len(), r.overlay.len(), "no arc twice");
    use EdgeType::{Context, Relation};
    use OverlayCause::{KeyFactBoost, Pruned, Tiered};
    type Entry = ((u32, u32, EdgeType), (f32, OverlayCause));
    let want: Vec<Entry> = vec![
        // Key facts: Alice has 3 seed facts in P0 → 1 + 3·2.5 = 8.5, capped at 2·3.5 = 7.
        ((A, P0, Context), (7.0, KeyFactBoost { key_facts: 3 })),
        // Bob: 2 in P0 (1 + 5 = 6), 1 in P1 (3.5); Dave 1 in P1; Carol 1 in P0.
        ((B, P0, Context), (6.0, KeyFactBoost { key_facts: 2 })),
        ((B, P1, Context), (3.5, KeyFactBoost { key_facts: 1 })),
        ((D, P1, Context), (3.5, KeyFactBoost { key_facts: 1 })),
        ((C, P0, Context), (3.5, KeyFactBoost { key_facts: 1 })),
        // Tiered seeds: Dave, Alice (the top 2). Dave's only relation edge (to Bob, fact cosine
        // 0.8) is kept: High. Alice has 3 (Bob 0.9, Carol 0.5, Eve 0.1) > K_edge = 1: Bob kept
        // and Direct, Carol and Eve pruned to Weak.
        ((D, B, Relation), (2.5, Tiered { tier: Tier::High })),
        ((A, B, Relation), (5.0, Tiered { tier: Tier::Direct })),
        ((A, C, Relation), (0.25, Pruned)),
        ((A, E, Relation), (0.25, Pruned)),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (k, v) in &want {
        assert_eq!(got.get(k), Some(v), "{k:?}");
    }
    assert_eq!(r.tierer.as_deref(), Some("embedding-similarity"));

    // Teleport: 0.50625 + 0.46875 + 0.875 + 0.2 + 0.05 + 0.025 = 2.125.
    let raw = [0.0, 0.50625, 0.46875, 0.0, 0.05, 0.875, 0.025, 0.2];
    for (u, w) in raw.iter().enumerate() {
        assert!(close(r.teleport[u], w / 2.125, 1e-6), "teleport[{u}]");
    }
    // Ranking against the independent PPR with the hand multipliers.
    let mult: HashMap<(u32, u32, EdgeType), f64> = want.iter().map(|(k, v)| (*k, f64::from(v.0))).collect();
    let pi = reference_ppr(&g, &raw, &mult, 0.5);
    let expect: Vec<f64> = [P0, P1, P2].iter().map(|&p| pi[p as usize]).collect();
    for (got, w) in r.passage_scores.iter().zip(&expect) {
        assert!(close(*got, *w, 1e-7), "{got} vs {w}");
    }
    assert_eq!(ranking(&r.passage_scores), ranking(&expect));
    // The boost and the tiers pull mass onto P0 (Alice's and Bob's key facts) compared with
    // HippoRAG 2 on the same seeds.
    let static_pi = reference_ppr(&g, &raw, &HashMap::new(), 0.5);
    assert!(r.passage_scores[0] > static_pi[P0 as usize]);

    // The stored graph is unchanged.
    assert_eq!(g.csr().weights, hand_graph().csr().weights);
}

#[test]
fn ablations_switch_steps_off() {
    let g = hand_graph();
    let mentions = [mention("Eve", EntityKind::Name)];
    let base = config();
    let no_anchor =
        run(&g, GraphMethod::CatRag, &mentions, &CatragConfig { no_anchor: true, ..base.clone() });
    assert!(no_anchor.anchors.is_empty());
    assert!(no_anchor.seeds.iter().all(|s| s.channel == SeedChannel::Facts));
    assert_eq!(no_anchor.ablations, ["--no-anchor"]);

    let no_boost = run(&g, GraphMethod::CatRag, &mentions, &CatragConfig { no_boost: true, ..base.clone() });
    assert!(no_boost.overlay.iter().all(|o| !matches!(o.cause, OverlayCause::KeyFactBoost { .. })));

    let no_prune = run(&g, GraphMethod::CatRag, &mentions, &CatragConfig { no_prune: true, ..base.clone() });
    assert!(no_prune.overlay.iter().all(|o| o.cause != OverlayCause::Pruned));
    // Alice's three edges are all tiered now: Bob Direct (0.9), Carol Weak (0.5), Eve Irrelevant (0.1).
    let tier_of = |to: u32| {
        no_prune
            .overlay
            .iter()
            .find(|o| o.from == A && o.to == to && o.edge_type == EdgeType::Relation)
            .map(|o| o.cause)
    };
    // Seeds without anchors on Alice: Dave 0.875, Bob 0.46875 are the top 2 → Alice not tiered.
    assert_eq!(tier_of(B), None);
    let no_prune_anchored = run(
        &g,
        GraphMethod::CatRag,
        &[mention("Alicia", EntityKind::Name)],
        &CatragConfig { no_prune: true, ..base.clone() },
    );
    let tier_of = |to: u32| {
        no_prune_anchored
            .overlay
            .iter()
            .find(|o| o.from == A && o.to == to && o.edge_type == EdgeType::Relation)
            .map(|o| (o.cause, o.multiplier))
    };
    assert_eq!(tier_of(B), Some((OverlayCause::Tiered { tier: Tier::Direct }, 5.0)));
    assert_eq!(tier_of(C), Some((OverlayCause::Tiered { tier: Tier::Weak }, 0.25)));
    assert_eq!(tier_of(E), Some((OverlayCause::Tiered { tier: Tier::Irrelevant }, 0.0)));

    let no_tier = run(&g, GraphMethod::CatRag, &mentions, &CatragConfig { no_tier: true, ..base.clone() });
    assert!(no_tier.overlay.iter().all(|o| !matches!(o.cause, OverlayCause::Tiered { .. })));
    assert!(no_tier.tierer.is_none());

    let all_off =
        CatragConfig { no_anchor: true, no_boost: true, no_prune: true, no_tier: true, ..base.clone() };
    let off = run(&g, GraphMethod::CatRag, &mentions, &all_off);
    let hippo = run(&g, GraphMethod::HippoRag, &mentions, &base);
    assert!(off.overlay.is_empty());
    assert_eq!(off.passage_scores, hippo.passage_scores, "every step off is HippoRAG 2");
}

#[test]
fn boost_preserving_mass_keeps_the_context_total() {
    let g = hand_graph();
    let cfg = CatragConfig { boost_preserve_mass: true, ..config() };
    let r = run(&g, GraphMethod::CatRag, &[], &cfg);
    // Alice's context arcs: P0 (3 key facts → 7) and P2 (none → 1); total 2 before, 8 after:
    // scale 1/4 → 1.75 and 0.25.
    let m = |from: u32, to: u32| {
        r.overlay
            .iter()
            .find(|o| o.from == from && o.to == to && o.edge_type == EdgeType::Context)
            .map(|o| o.multiplier)
    };
    assert!(close(f64::from(m(A, P0).unwrap()), 1.75, 1e-6));
    assert!(close(f64::from(m(A, P2).unwrap()), 0.25, 1e-6));
    // Dave has one context arc: rescaled back to 1.
    assert!(close(f64::from(m(D, P1).unwrap()), 1.0, 1e-6));
}

/// A tierer that always fails: the batch becomes Weak and the failure is counted.
struct Failing;

impl EdgeTierer for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn tier(&self, _: &TierRequest<'_>) -> crate::Result<Vec<Tier>> {
        Err(Error::Config("endpoint down".into()))
    }
}

#[test]
fn failed_tiering_is_weak_and_reported() {
    let g = hand_graph();
    let e = embedder();
    let q = e.embed("query").unwrap();
    let input = QueryInput { query: "query", query_vector: &q, passage_scores: &DENSE, lexical_scores: &[], titles: None, mentions: &[], prior_vectors: None };
    let r = Retriever::new().retrieve(&g, GraphMethod::CatRag, &input, &e, &Failing, &config()).unwrap();
    assert_eq!(r.tier_failures, 2);
    assert!(r.warnings.iter().any(|w| w.contains("tiering failed")));
    for o in &r.overlay {
        if let OverlayCause::Tiered { tier } = o.cause {
            assert_eq!((tier, o.multiplier), (Tier::Weak, 0.25));
        }
    }
}

#[test]
fn anchoring_drops_what_matches_nothing() {
    let g = hand_graph();
    let e = embedder();
    let mentions = [
        mention("Zed", EntityKind::Name), // nearest is Alice at 0.5: dropped, not forced
        mention("Nobody", EntityKind::Name), // zero vector: dropped
        mention("1987", EntityKind::Date), // dates never fuzzy-match
        mention("the Eve", EntityKind::Name), // exact after normalisation (article dropped)
        mention("!!", EntityKind::QuotedTitle), // normalises to nothing
    ];
    let anchors = anchor::anchor_mentions(&g, &mentions, &e, 0.8).unwrap();
    let nodes: Vec<Option<u32>> = anchors.iter().map(|a| a.node).collect();
    assert_eq!(nodes, [None, None, None, Some(E), None]);
    // A threshold low enough takes Zed to Alice.
    let loose = anchor::anchor_mentions(&g, &mentions[..1], &e, 0.4).unwrap();
    assert_eq!(loose[0].node, Some(A));

    // In a query: the unmatched mentions add no seed.
    let r = run(&g, GraphMethod::CatRag, &mentions, &config());
    assert!(r.seeds.iter().all(|s| s.node != A || s.channel == SeedChannel::Facts));
    assert_eq!(r.seeds.iter().filter(|s| s.channel == SeedChannel::Anchor).count(), 1);
}

#[test]
fn no_seeds_falls_back_to_dense() {
    // A graph without a single fact.
    let passages: Vec<Passage> = (0..3)
        .map(|i| Passage { id: format!("p{i}"), title: format!("T{i}"), text: format!("text {i}") })
        .collect();
    let g = build_graph(GraphConfig::default(), &passages, &[], &embedder(), &mut |_, _, _| {}).unwrap();
    for method in [GraphMethod::HippoRag, GraphMethod::CatRag] {
        let r = run(&g, method, &[mention("Eve", EntityKind::Name)], &config());
        assert_eq!(r.fallback, Some(Fallback::NoSeeds));
        assert!(r.ppr.is_none() && r.node_scores.is_empty());
        let scores: Vec<f64> = DENSE.iter().map(|&x| f64::from(x)).collect();
        assert_eq!(r.passage_scores, scores);
        assert_eq!(r.top_passages(&g, 3).iter().map(|x| x.0).collect::<Vec<_>>(), [1, 2, 0]);
    }
    // Facts, but none kept (linking_top_k = 0) and no mention: the same.
    let g = hand_graph();
    let r = run(&g, GraphMethod::HippoRag, &[], &CatragConfig { linking_top_k: 0, ..config() });
    assert_eq!(r.fallback, Some(Fallback::NoSeeds));
    // A query vector the embedder could not fill: no arbitrary seed facts.
    let e = embedder();
    let zero = vec![0.0; DIM];
    let input = QueryInput { query: "?", query_vector: &zero, passage_scores: &DENSE, lexical_scores: &[], titles: None, mentions: &[], prior_vectors: None };
    let r = Retriever::new()
        .retrieve(&g, GraphMethod::HippoRag, &input, &e, &EmbeddingSimilarityTierer::default(), &config())
        .unwrap();
    assert_eq!(r.fallback, Some(Fallback::NoSeeds));
    assert!(r.facts.is_empty());
    // But an anchored mention alone is a seed: PPR runs.
    let input = QueryInput {
        query: "?",
        query_vector: &zero,
        passage_scores: &DENSE,
        lexical_scores: &[],
        titles: None,
        mentions: &[mention("Eve", EntityKind::Name)],
        prior_vectors: None,
    };
    let r = Retriever::new()
        .retrieve(&g, GraphMethod::CatRag, &input, &e, &EmbeddingSimilarityTierer::default(), &config())
        .unwrap();
    assert!(r.fallback.is_none());
    assert_eq!(r.seeds.len(), 1);
}

#[test]
fn bad_inputs_are_errors() {
    let g = hand_graph();
    let e = embedder();
    let t = EmbeddingSimilarityTierer::default();
    let q = e.embed("query").unwrap();
    let short = [0.1f32];
    let input = QueryInput { query: "q", query_vector: &q, passage_scores: &short, lexical_scores: &[], titles: None, mentions: &[], prior_vectors: None };
    assert!(Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &t, &config()).is_err());
    let input = QueryInput { query: "q", query_vector: &q[..3], passage_scores: &DENSE, lexical_scores: &[], titles: None, mentions: &[], prior_vectors: None };
    assert!(Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &t, &config()).is_err());
    let input = QueryInput { query: "q", query_vector: &q, passage_scores: &DENSE, lexical_scores: &[], titles: None, mentions: &[], prior_vectors: None };
    let bad = CatragConfig { epsilon: f64::NAN, ..config() };
    assert!(Retriever::new().retrieve(&g, GraphMethod::CatRag, &input, &e, &t, &bad).is_err());
    let bad = CatragConfig {
        similarity_tiers: SimilarityTierThresholds { direct: 0.1, high: 0.5, weak: 0.0 },
        ..config()
    };
    assert!(bad.validate().is_err());
    assert!(CatragConfig { epsilon: 0.6, ..config() }.warnings()[0].contains("above 0.5"));
    assert!(CatragConfig::default().warnings().is_empty());
}

#[test]
fn explanation_paths_by_hand() {
    let g = hand_graph();
    let r = run(&g, GraphMethod::HippoRag, &[], &config());
    let ex = explain(&g, &r, P1, 0.5, &ExplainConfig::default()).unwrap();
    // Shares: Dave 0.875, Bob 0.46875, Alice 0.40625 of 1.825.
    let (sd, sb) = (0.875 / 1.825, 0.46875 / 1.825);
    // Dave's arcs: Bob (relation 1), P1 (context 1): out 2. Bob's: Alice (relation 2: two
    // facts), Dave 1, P0 1, P1 1: out 5.
    // Dave → P1:        sd · ½ · ½           = 0.11986
    // Bob → P1:         sb · ½ · ⅕           = 0.02568
    // Dave → Bob → P1:  sd · ½ · ½ · ½ · ⅕   = 0.01199  (Alice → Bob → P1 is 0.00371)
    let want = [(vec![D, P1], sd * 0.25), (vec![B, P1], sb * 0.1), (vec![D, B, P1], sd * 0.025)];
    assert_eq!(ex.paths.len(), 3);
    for (p, (nodes, prob)) in ex.paths.iter().zip(&want) {
        assert_eq!(&p.nodes.iter().map(|n| n.node).collect::<Vec<_>>(), nodes);
        assert!(close(p.probability, *prob, 1e-7), "{} vs {prob}", p.probability);
        assert_eq!(p.edges.len(), nodes.len() - 1);
    }
    let e = &ex.paths[2].edges;
    assert_eq!((e[0].edge_type, e[1].edge_type), (EdgeType::Relation, EdgeType::Context));
    assert_eq!(e[0].fact.as_deref(), Some("Bob r3 Dave"));
    assert!(close(e[0].transition, 0.5, 1e-12) && close(e[1].transition, 0.2, 1e-12));
    assert_eq!(e[0].multiplier, 1.0);
    assert_eq!(ex.seeds.iter().map(|s| s.node).collect::<Vec<_>>(), [D, B]);
    // P1's entities by mass: Bob and Dave.
    let mut ents: Vec<u32> = ex.entities.iter().map(|n| n.node).collect();
    ents.sort_unstable();
    assert_eq!(ents, [B, D]);
    assert!(ex.entities[0].mass >= ex.entities[1].mass);
    assert!(close(ex.score, r.passage_scores[1], 0.0));
    assert!(close(ex.teleport, 0.05 / 1.825, 1e-7));
    // The explanation serialises.
    let json = serde_json::to_value(&ex).unwrap();
    assert_eq!(json["paths"][0]["edges"][0]["edge_type"], "context");

    // With CatRAG, the path's arcs carry their multipliers and causes.
    let r = run(&g, GraphMethod::CatRag, &[], &config());
    let ex = explain(&g, &r, P1, 0.5, &ExplainConfig::default()).unwrap();
    let first = &ex.paths[0];
    assert_eq!(first.nodes.iter().map(|n| n.node).collect::<Vec<_>>(), [D, P1]);
    assert_eq!(first.edges[0].multiplier, 3.5);
    assert_eq!(first.edges[0].cause, Some(OverlayCause::KeyFactBoost { key_facts: 1 }));
    // Not a passage: an error, not a panic.
    assert!(explain(&g, &r, A, 0.5, &ExplainConfig::default()).is_err());
    assert!(explain(&g, &r, 99, 0.5, &ExplainConfig::default()).is_err());
    // Query-level top entities.
    let top = top_entities(&g, &r, 2);
    assert_eq!(top.len(), 2);
    assert!(top[0].mass >= top[1].mass);
}

#[test]
fn hub_diagnostics_by_hand() {
    let g = hand_graph();
    // 8 nodes → ⌈0.08⌉ = 1 hub: Alice has the most arcs (Bob, Carol, Eve, P0, P2 = 5 arcs;
    // relation Alice–Bob is one edge of weight 2).
    assert_eq!(hub_nodes(&g, 0.01), [A]);
    let scores = [0.1, 0.3, 0.2, 0.0, 0.1, 0.2, 0.05, 0.05];
    let m = mass_shares(&scores, &[A]).unwrap();
    assert!(close(m.hub_mass_share, 0.3, 1e-12));
    assert!(close(m.top1_mass_share, 0.3, 1e-12));
    let m = mass_shares(&scores, &[B]).unwrap();
    assert!(close(m.hub_mass_share, 0.2, 1e-12));
    assert!(mass_shares(&[], &[]).is_none());
    assert!(mass_shares(&[0.0, 0.0], &[0]).is_none());
    let q = fact_cosine_quantiles(&[0.1, 0.2, 0.3, 0.4, f32::NAN]).unwrap();
    assert_eq!((q.p50, q.p90, q.max), (0.2, 0.4, 0.4));
    assert!(fact_cosine_quantiles(&[]).is_none());
}

#[test]
fn config_serde_defaults() {
    let c: CatragConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(c, CatragConfig::default());
    assert_eq!(c.linking_top_k, 5);
    assert_eq!(c.seed_top_k, 5);
    assert_eq!(c.passage_node_weight, 0.05);
    assert_eq!(c.epsilon, 0.2);
    assert_eq!(c.key_fact_boost, 2.5);
    assert_eq!(c.anchor_threshold, 0.9);
    assert_eq!(c.k_edge, 15);
    assert_eq!(c.tiers, TierMultipliers { irrelevant: 0.0, weak: 0.25, high: 2.5, direct: 5.0 });
    assert_eq!(c.ppr.damping, 0.5);
    assert_eq!((c.lexical_passage_weight, c.lexical_top_n, c.dense_top_n), (2.0, 20, 0));
    assert_eq!((c.bridge_weight, c.bridge_sources, c.bridge_floor, c.bridge_specificity), (3.0, 4, 0.8, 0.5));
    assert!(!c.no_lexical && !c.no_bridge);
    assert_eq!((c.transformer_passage_weight, c.transformer_top_n, c.transformer_bridge_dense_share), (1.0, 0, 0.5));
    assert_eq!((c.bridge_dense_share, c.bridge_hop2_weight), (0.0, 1.0));
    assert_eq!((c.query_title_weight, c.residual_weight, c.residual_top_n), (3.0, 0.0, 10));
    assert!(!c.no_query_title && !c.no_residual);
    assert!(!c.no_transformer_prior);
    let c: CatragConfig = serde_json::from_str(r#"{"no_anchor": true, "tiers": {"high": 3.0}}"#).unwrap();
    assert!(c.no_anchor);
    assert_eq!(c.tiers.high, 3.0);
    assert_eq!(c.tiers.direct, 5.0);
    assert!(serde_json::from_str::<CatragConfig>(r#"{"epsilonn": 1}"#).is_err());
}

#[test]
fn unconverged_ppr_is_floored_and_reported() {
    let g = hand_graph();
    let cfg =
        CatragConfig { ppr: crate::ppr::PprConfig { max_iterations: 2, ..Default::default() }, ..config() };
    let r = run(&g, GraphMethod::CatRag, &[], &cfg);
    assert!(r.floored, "rerun with multipliers floored at 1e-6");
    let report = r.ppr.unwrap();
    assert!(!report.converged);
    assert!(r.warnings.iter().any(|w| w.contains("did not converge")), "{:?}", r.warnings);
    assert_eq!(r.passage_scores.len(), 3);
    // HippoRAG 2 has no overlay to floor: reported, not retried.
    let r = run(&g, GraphMethod::HippoRag, &[], &cfg);
    assert!(!r.floored && !r.ppr.unwrap().converged);
    assert!(r.warnings.iter().any(|w| w.contains("did not converge")));
}

#[test]
fn lexical_passage_prior_by_hand() {
    let g = hand_graph();
    // BM25 scores of the three corpus passages: 3, 0, 1.5 → weight × score ÷ 3.
    let lexical = [3.0f32, 0.0, 1.5];
    let w = seeds::lexical_passage_weights(&g, &lexical, 20, 0.5).unwrap();
    assert_eq!(w, vec![0.5, 0.0, 0.25]);
    // Top 1 only: P0.
    assert_eq!(seeds::lexical_passage_weights(&g, &lexical, 1, 0.5).unwrap(), vec![0.5, 0.0, 0.0]);
    // No lexical evidence, or no passage with a query term: nothing.
    assert_eq!(seeds::lexical_passage_weights(&g, &[], 20, 0.5).unwrap(), vec![0.0; 3]);
    assert_eq!(seeds::lexical_passage_weights(&g, &[0.0; 3], 20, 0.5).unwrap(), vec![0.0; 3]);
    // Scores that do not cover the graph's passages are an error, not a panic.
    assert!(seeds::lexical_passage_weights(&g, &[1.0], 20, 0.5).is_err());
    // The dense prior restricted to the top 1 passage node: (0, 0.05, 0.025) → (0, 0.05, 0).
    assert_eq!(seeds::dense_passage_weights(&g, &DENSE, 1, 0.05).unwrap(), vec![0.0, 0.05, 0.0]);

    // In the teleport vector: HippoRAG 2's hand-worked vector plus (0.5, 0, 0.25) on P0, P2.
    let cfg = CatragConfig { lexical_passage_weight: 0.5, bridge_weight: 0.0, ..config() };
    let e = embedder();
    let q = e.embed("query").unwrap();
    let tierer = EmbeddingSimilarityTierer { thresholds: cfg.similarity_tiers };
    let input =
        QueryInput { query: "query", query_vector: &q, passage_scores: &DENSE, lexical_scores: &lexical, titles: None, mentions: &[], prior_vectors: None };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &cfg).unwrap();
    let raw = [0.5, 0.40625, 0.46875, 0.0, 0.05, 0.875, 0.025 + 0.25, 0.0];
    let total: f64 = raw.iter().sum();
    for (u, want) in raw.iter().enumerate() {
        assert!(close(r.teleport[u], want / total, 1e-6), "teleport[{u}] = {} vs {}", r.teleport[u], want / total);
    }
    let pi = reference_ppr(&g, &raw, &HashMap::new(), 0.5);
    for (got, p) in r.passage_scores.iter().zip([P0, P1, P2]) {
        assert!(close(*got, pi[p as usize], 1e-7), "{got} vs {}", pi[p as usize]);
    }
    // The ablation flag turns it off: the teleport is HippoRAG 2's again.
    let off = CatragConfig { no_lexical: true, ..cfg };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &off).unwrap();
    assert!(close(r.teleport[P0 as usize], 0.0, 1e-12));
    assert!(close(r.teleport[P2 as usize], 0.025 / 1.825, 1e-6));
}

#[test]
fn title_bridges_by_hand() {
    assert_eq!(bridge::title_entity_name("Nadja (film)"), "Nadja");
    assert_eq!(bridge::title_entity_name("(film)"), "(film)");
    assert_eq!(bridge::title_entity_name("A (b) c"), "A (b) c");
    // The hand graph's passages retitled: P0 "Alice (film)", P1 "Bob", P2 "Zed" (no entity).
    // Entities: P0 {Alice, Bob, Carol}, P1 {Bob, Dave}, P2 {Alice, Carol, Eve}.
    let g = hand_graph();
    let titles = ["Alice (film)", "Bob", "Zed"];
    let index = bridge::TitleIndex::build(&g, |i| titles.get(i as usize).copied());
    assert_eq!(index.len(), 2);
    assert_eq!(index.passages_titled(A), &[0]);
    assert_eq!(index.passages_titled(B), &[1]);
    assert!(index.passages_titled(C).is_empty());
    // Relevance (BM25 ÷ best) 1, 0, 0.5: sources P0 (1) and P2 (0.5).
    // P0 names Bob → P1: 2 × 1 × (0.25 + 0.75 × 0) = 0.5 (Alice titles P0 itself: no bridge).
    // P2 names Alice → P0: 2 × 0.5 × (0.25 + 0.75 × 1) = 1.
    let rel = [1.0, 0.0, 0.5];
    assert_eq!(bridge::bridge_weights(&g, &index, &rel, &rel, 3, 2.0, 0.25, 0.0, false), vec![1.0, 0.5, 0.0]);
    // Specificity γ = 1: Bob and Alice are each in 2 passages → factor (2 ÷ 2)¹ = 1, unchanged.
    assert_eq!(bridge::bridge_weights(&g, &index, &rel, &rel, 3, 2.0, 0.25, 1.0, false), vec![1.0, 0.5, 0.0]);
    // One source (P0) only.
    assert_eq!(bridge::bridge_weights(&g, &index, &rel, &rel, 1, 2.0, 0.25, 0.0, false), vec![0.0, 0.5, 0.0]);
    // Off: weight 0, no source, or no titled entity.
    assert_eq!(bridge::bridge_weights(&g, &index, &rel, &rel, 3, 0.0, 0.25, 0.0, false), vec![0.0; 3]);
    assert_eq!(bridge::bridge_weights(&g, &index, &[0.0; 3], &rel, 3, 2.0, 0.25, 0.0, false), vec![0.0; 3]);
    // A title shared by P0 and P1 ("Bob"): P0 names Bob → P1 gets 2 × 1 × 0.25 = 0.5, split
    // between the two passages titled Bob → 0.25 (P2 names no title entity); unsplit 0.5.
    let shared = bridge::TitleIndex::build(&g, |i| ["Bob", "Bob", "Zed"].get(i as usize).copied());
    assert_eq!(shared.passages_titled(B), &[0, 1]);
    assert_eq!(bridge::bridge_weights(&g, &shared, &rel, &rel, 3, 2.0, 0.25, 0.0, true), vec![0.0, 0.25, 0.0]);
    assert_eq!(bridge::bridge_weights(&g, &shared, &rel, &rel, 3, 2.0, 0.25, 0.0, false), vec![0.0, 0.5, 0.0]);
    // One passage per title: splitting changes nothing.
    assert_eq!(bridge::bridge_weights(&g, &index, &rel, &rel, 3, 2.0, 0.25, 0.0, true), vec![1.0, 0.5, 0.0]);
    let none = bridge::TitleIndex::build(&g, |_| Some("Zed"));
    assert!(none.is_empty());
    assert_eq!(bridge::bridge_weights(&g, &none, &rel, &rel, 3, 2.0, 0.25, 0.0, false), vec![0.0; 3]);

    // In the teleport vector (lexical prior off): the bridge weights (1, 0.5, 0) are added to
    // HippoRAG 2's hand-worked passage weights (0, 0.05, 0.025); `--no-bridge` removes them.
    let lexical = [3.0f32, 0.0, 1.5];
    let cfg = CatragConfig { lexical_passage_weight: 0.0, bridge_weight: 2.0, bridge_floor: 0.25, ..config() };
    let e = embedder();
    let q = e.embed("query").unwrap();
    let tierer = EmbeddingSimilarityTierer { thresholds: cfg.similarity_tiers };
    let input = QueryInput {
        query: "query",
        query_vector: &q,
        passage_scores: &DENSE,
        lexical_scores: &lexical,
        titles: Some(&index),
        mentions: &[],
        prior_vectors: None,
    };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &cfg).unwrap();
    let raw = [1.0, 0.40625, 0.46875, 0.0, 0.05 + 0.5, 0.875, 0.025, 0.0];
    let total: f64 = raw.iter().sum();
    for (u, want) in raw.iter().enumerate() {
        assert!(close(r.teleport[u], want / total, 1e-6), "teleport[{u}] = {} vs {}", r.teleport[u], want / total);
    }
    // The same teleport by source (total 3.325): fact seeds 1.75, dense prior 0.075, title
    // bridges 1.5; per passage P0 bridge 1, P1 dense 0.05 + bridge 0.5 (P2: dense only, not
    // listed).
    let t = r.sources;
    for (got, want) in [(t.fact_seeds, 1.75), (t.dense_prior, 0.075), (t.title_bridges, 1.5)] {
        assert!(close(got, want / 3.325, 1e-6), "{got} vs {}", want / 3.325);
    }
    assert_eq!((t.anchors, t.lexical_prior, t.query_titles, t.residual), (0.0, 0.0, 0.0, 0.0));
    assert_eq!(r.passage_sources.iter().map(|p| p.node).collect::<Vec<_>>(), [P0, P1]);
    let p1 = r.passage_sources[1];
    assert!(close(p1.dense_prior, 0.05 / 3.325, 1e-6) && close(p1.title_bridges, 0.5 / 3.325, 1e-6));
    assert!(close(r.passage_sources[0].title_bridges, 1.0 / 3.325, 1e-6));
    let off = CatragConfig { no_bridge: true, ..cfg.clone() };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &off).unwrap();
    assert!(close(r.teleport[P0 as usize], 0.0, 1e-12));
    assert!(close(r.teleport[P1 as usize], 0.05 / 1.825, 1e-6));
    // Bridge evidence fused with the dense score, share 0.5: relevance ½ (1, 0, 0.5) +
    // ½ (0, 1, 0.5) (DENSE min–max) = (0.5, 0.5, 0.5), renormalised to (1, 1, 1). Sources P0, P1,
    // P2 at strength 1: P0 names Bob → P1 gets 2 × (0.25 + 0.75 × 1) = 2; P2 names Alice → P0
    // gets 2. So P0's bridge weight goes 1 → 2 and P1's 0.5 → 2.
    // Bridges of bridges, weight 4: the bridged passages P0 (1) and P1 (0.5) are the sources.
    // P0 names Bob → P1: 4 × 1 × (0.25 + 0.75 × 0) = 1 > 0.5; P1 names no other title. So
    // P1's bridge weight goes 0.5 → 1 (P0 keeps its 1).
    let hop2 = CatragConfig { bridge_hop2_weight: 4.0, ..cfg.clone() };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &hop2).unwrap();
    let mut raw2 = raw;
    raw2[P1 as usize] += 0.5;
    let total: f64 = raw2.iter().sum();
    for (u, want) in raw2.iter().enumerate() {
        assert!(close(r.teleport[u], want / total, 1e-6), "hop-2 teleport[{u}] = {} vs {}", r.teleport[u], want / total);
    }
    let fused = CatragConfig { bridge_dense_share: 0.5, ..cfg };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &fused).unwrap();
    let mut raw = raw;
    raw[P0 as usize] += 1.0;
    raw[P1 as usize] += 1.5;
    let total: f64 = raw.iter().sum();
    for (u, want) in raw.iter().enumerate() {
        assert!(close(r.teleport[u], want / total, 1e-6), "fused teleport[{u}] = {} vs {}", r.teleport[u], want / total);
    }
}

#[test]
fn with_transformer_prior_swaps_the_prior_weight_and_cut() {
    let c = CatragConfig {
        transformer_passage_weight: 0.7,
        transformer_top_n: 30,
        transformer_bridge_dense_share: 0.25,
        ..CatragConfig::default()
    };
    let t = c.with_transformer_prior();
    assert_eq!((t.passage_node_weight, t.dense_top_n, t.bridge_dense_share), (0.7, 30, 0.25));
    assert_eq!(CatragConfig { passage_node_weight: 0.05, dense_top_n: 0, bridge_dense_share: 0.0, ..t }, c);
    assert!(CatragConfig { bridge_dense_share: 1.5, ..CatragConfig::default() }.validate().is_err());
    let bad = CatragConfig { transformer_passage_weight: f64::NAN, ..CatragConfig::default() };
    assert!(bad.validate().is_err());
}

#[test]
fn query_titles_by_hand() {
    // The hand graph's passages titled P0 "Bob Dave", P1 "Bob (film)", P2 "Zed" (no entity).
    let g = hand_graph();
    let titles = ["Bob Dave", "Bob (film)", "Zed"];
    let index = bridge::TitleIndex::build(&g, |i| titles.get(i as usize).copied());
    assert_eq!(index.passages_keyed("bob dave"), &[0]);
    assert_eq!(index.passages_keyed("bob"), &[1]);
    let found = |q: &str| index.titles_in_query(q).into_iter().map(|(k, p)| (k, p.to_vec())).collect::<Vec<_>>();
    // A capitalised run not at the query's start; a possessive still names the title.
    assert_eq!(found("Where did Zed's Bob go"), vec![("zed".to_string(), vec![2]), ("bob".to_string(), vec![1])]);
    // The longest run wins: "Bob Dave" is P0's title, "Bob" inside it is dropped.
    assert_eq!(found("Where is Bob Dave from"), vec![("bob dave".to_string(), vec![0])]);
    // Lowercase or only the first word: no proper name, no title.
    assert!(found("where is bob dave from").is_empty());
    assert!(found("Zed went home").is_empty());
    // Weights: relevance 1, 0, 0.5; weight 2, floor 0.25. "Bob" → P1: 2 × (0.25 + 0.75 × 0) =
    // 0.5; "Zed" (no entity: specificity 1) → P2: 2 × (0.25 + 0.75 × 0.5) = 1.25.
    let rel = [1.0, 0.0, 0.5];
    let w = |q: &str, weight: f64, split: bool, idx: &bridge::TitleIndex| {
        bridge::query_title_weights(&g, idx, q, &rel, weight, 0.25, 0.5, split)
    };
    assert_eq!(w("Did Bob meet Zed", 2.0, true, &index), vec![0.0, 0.5, 1.25]);
    assert_eq!(w("Did Bob meet Zed", 0.0, true, &index), vec![0.0; 3]);
    // A title shared by P0 and P1: split, each gets half. P0: 2 × ½ × 1 = 1; P1: 2 × ½ × 0.25.
    let shared = bridge::TitleIndex::build(&g, |i| ["Bob", "Bob", "Zed"].get(i as usize).copied());
    assert_eq!(w("Did Bob go", 2.0, true, &shared), vec![1.0, 0.25, 0.0]);
    assert_eq!(w("Did Bob go", 2.0, false, &shared), vec![2.0, 0.5, 0.0]);

    // In the teleport vector (lexical prior and bridges off): BM25 3, 0, 1.5 → relevance 1, 0,
    // 0.5; "Zed" titles P2: 2 × (0.25 + 0.75 × 0.5) = 1.25 added to its dense weight 0.025;
    // `--no-query-title` removes it.
    let lexical = [3.0f32, 0.0, 1.5];
    let cfg = CatragConfig {
        lexical_passage_weight: 0.0,
        bridge_weight: 0.0,
        bridge_floor: 0.25,
        query_title_weight: 2.0,
        ..config()
    };
    let e = embedder();
    let q = e.embed("query").unwrap();
    let tierer = EmbeddingSimilarityTierer { thresholds: cfg.similarity_tiers };
    let input = QueryInput {
        query: "Did Zed go",
        query_vector: &q,
        passage_scores: &DENSE,
        lexical_scores: &lexical,
        titles: Some(&index),
        mentions: &[],
        prior_vectors: None,
    };
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &cfg).unwrap();
    // Nodes P0, A, B, C, P1, D, P2, E; the entity seeds as in `title_bridges_by_hand`.
    let raw = [0.0, 0.40625, 0.46875, 0.0, 0.05, 0.875, 0.025 + 1.25, 0.0];
    let total: f64 = raw.iter().sum();
    for (u, want) in raw.iter().enumerate() {
        assert!(close(r.teleport[u], want / total, 1e-6), "teleport[{u}] = {} vs {}", r.teleport[u], want / total);
    }
    let off = CatragConfig { no_query_title: true, ..cfg };
    assert_eq!(off.ablations(), vec!["--no-query-title"]);
    let r = Retriever::new().retrieve(&g, GraphMethod::HippoRag, &input, &e, &tierer, &off).unwrap();
    assert!(close(r.teleport[P2 as usize], 0.025 / (total - 1.25), 1e-6));
}

#[test]
fn query_residual_by_hand() {
    // Passage vectors e0, e1, (0.8, 0.6, 0); query (e0 + e1) ÷ √2; first hop P0. The residual
    // q − (q·e0) e0 = (0, 1/√2, 0) → e1; cosines with it 0, 1, 0.6 → min–max 0, 1, 0.6.
    let g = hand_graph();
    let passages = crate::embed::VectorMatrix::from_rows(3, vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.8, 0.6, 0.0]).unwrap();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let query = [h, h, 0.0];
    let v = seeds::PriorVectors { query: &query, passages: &passages };
    let w = seeds::residual_passage_weights(&g, &v, 0, 0, 2.0).unwrap();
    for (got, want) in w.iter().zip([0.0, 2.0, 1.2]) {
        assert!(close(*got, want, 1e-6), "{w:?}");
    }
    // The top 1 only; weight 0; a query that is its first passage (no residual): nothing.
    let w = seeds::residual_passage_weights(&g, &v, 0, 1, 2.0).unwrap();
    assert!(close(w[1], 2.0, 1e-6) && w[0] == 0.0 && w[2] == 0.0, "{w:?}");
    assert_eq!(seeds::residual_passage_weights(&g, &v, 0, 0, 0.0).unwrap(), vec![0.0; 3]);
    let along = [1.0, 0.0, 0.0];
    let same = seeds::PriorVectors { query: &along, passages: &passages };
    assert_eq!(seeds::residual_passage_weights(&g, &same, 0, 0, 2.0).unwrap(), vec![0.0; 3]);
    // A query of the wrong dimension is an error, not a panic.
    let short = [1.0, 0.0];
    assert!(seeds::residual_passage_weights(&g, &seeds::PriorVectors { query: &short, passages: &passages }, 0, 0, 2.0).is_err());
}

#[test]
fn top_facts_matches_a_full_sort_with_min_max() {
    // Reference: min–max over every cosine, then every fact sorted by (cosine desc, id asc) with a
    // non-finite cosine last, the first k kept. Few distinct values (many ties), some NaN and
    // infinite cosines, flat and all-non-finite vectors.
    let reference = |c: &[f32], k: usize| -> Vec<(u32, u32, u64)> {
        let norm = seeds::min_max(c, 1.0);
        let key = |i: usize| if c[i].is_finite() { c[i] } else { f32::NEG_INFINITY };
        let mut order: Vec<usize> = (0..c.len()).collect();
        order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
        order.into_iter().take(k).map(|i| (i as u32, c[i].to_bits(), norm[i].to_bits())).collect()
    };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    let values = [-0.5f32, -0.0, 0.0, 0.1, 0.3, 0.3, 0.7, f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    for case in 0..500 {
        let n = next(40);
        let mut c: Vec<f32> = (0..n).map(|_| values[next(7)]).collect();
        if case % 5 == 0 && n > 0 {
            c[next(n)] = values[7 + next(3)];
        }
        if case % 17 == 0 {
            c.iter_mut().for_each(|x| *x = 0.25); // flat
        }
        if case % 23 == 0 {
            c.iter_mut().for_each(|x| *x = f32::NAN); // nothing finite
        }
        let k = next(8);
        let got: Vec<(u32, u32, u64)> =
            seeds::top_facts(&c, k).iter().map(|f| (f.fact, f.cosine.to_bits(), f.score.to_bits())).collect();
        assert_eq!(got, reference(&c, k), "case {case}: {c:?} k {k}");
    }
    // By hand: cosines 0.2, 0.6, 0.6, −0.2 → min −0.2, max 0.6; top 2 are facts 1 and 2 (tie:
    // lower id first), each normalised to 1; fact 0 would be 0.5.
    let f = seeds::top_facts(&[0.2, 0.6, 0.6, -0.2], 3);
    assert_eq!(f.iter().map(|f| f.fact).collect::<Vec<_>>(), vec![1, 2, 0]);
    assert_eq!(f[0].score, 1.0);
    assert!((f[2].score - 0.5).abs() < 1e-6);
}
