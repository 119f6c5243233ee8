//! Unit tests of CAGE's graphs, tensors, coherence and fusion, with values worked out by hand.

use std::rc::Rc;

use super::*;
use crate::embed::testing::MapEmbedder;

fn labels(g: &PassageGraph) -> Vec<(String, String, String)> {
    g.edges
        .iter()
        .map(|e| {
            (
                RELATIONS[e.relation as usize].to_string(),
                g.nodes[e.source as usize].clone(),
                g.nodes[e.target as usize].clone(),
            )
        })
        .collect()
}

fn t(r: &str, s: &str, d: &str) -> (String, String, String) {
    (r.to_string(), s.to_string(), d.to_string())
}

#[test]
fn passage_graph_of_a_real_sentence() {
    let doc = Pipeline::english()
        .unwrap()
        .analyze("Paris", "Paris is the capital of France. It has 2.1 million people.");
    let g = PassageGraph::build(&doc, 2.0);
    assert_eq!(g.nodes, ["Paris", "capital", "France", "people", "2.1", "million", "have"]);
    let mut got = labels(&g);
    got.sort();
    let mut want = vec![
        t("cop", "Paris", "capital"),
        t("prep", "capital", "France"),
        // "It" is resolved to the title, Paris.
        t("nsubj", "have", "Paris"),
        t("dobj", "have", "people"),
        t("amod", "people", "2.1"),
        t("amod", "people", "million"),
    ];
    want.sort();
    assert_eq!(got, want);
    // Out-degrees: Paris 1, capital 1, France 0, people 2, 2.1 0, million 0, have 2 → min 0.
    assert_eq!(g.min_out_degree, [false, false, true, false, true, true, false]);
    for e in &g.edges {
        let touches = g.min_out_degree[e.source as usize] || g.min_out_degree[e.target as usize];
        assert_eq!(e.weight, if touches { 2.0 } else { 1.0 }, "{e:?}");
    }
}

#[test]
fn no_content_words_give_an_empty_graph() {
    let doc = Pipeline::english().unwrap().analyze("", "It is what it is, and so on.");
    let g = PassageGraph::build(&doc, 1.5);
    assert!(g.edges.is_empty());
    let doc = Pipeline::english().unwrap().analyze("", "");
    assert!(PassageGraph::build(&doc, 1.5).is_empty());
}

/// a →nsubj b, a →dobj c, b →amod d; out-degrees a 2, b 1, c 0, d 0.
fn small() -> PassageGraph {
    let nodes = ["a", "b", "c", "d"].map(String::from).to_vec();
    PassageGraph::from_parts(
        nodes,
        &[(1, 0, 1), (2, 0, 2), (4, 1, 3), (4, 1, 3), (3, 2, 2), (0, 0, 1), (1, 0, 9)],
        2.0,
    )
}

#[test]
fn reweighting_marks_min_out_degree_nodes_and_their_edges() {
    let g = small();
    // Duplicates, self-loops, relation 0 and out-of-range nodes are dropped.
    assert_eq!(g.edges.len(), 3);
    assert_eq!(g.min_out_degree, [false, false, true, true]);
    let w: Vec<f32> = g.edges.iter().map(|e| e.weight).collect();
    // Sorted by (relation, source, target): nsubj a→b 1, dobj a→c β, amod b→d β.
    assert_eq!(w, [1.0, 2.0, 2.0]);
    assert_eq!(g.degrees(), [(2, 0), (1, 1), (0, 1), (0, 1)]);
    let flat = PassageGraph::from_parts(vec!["x".into()], &[], f32::NAN);
    assert_eq!(flat.beta, 1.0);
}

#[test]
fn normalised_adjacency_by_hand() {
    let g = small();
    let n = 5; // stride larger than the graph: padding stays 0
    let mut a = vec![0.0f32; NUM_RELATIONS * n * n];
    g.adjacency_into(false, n, &mut a);
    let at = |a: &[f32], r: usize, i: usize, j: usize| a[r * n * n + i * n + j];
    for i in 0..4 {
        assert_eq!(at(&a, 0, i, i), 1.0);
    }
    assert_eq!(at(&a, 0, 4, 4), 0.0);
    assert_eq!(at(&a, 1, 0, 1), 1.0); // nsubj a→b: weight 1 / |N_1(a)| = 1
    assert_eq!(at(&a, 2, 0, 2), 2.0); // dobj a→c: β / 1
    assert_eq!(at(&a, 4, 1, 3), 2.0); // amod b→d: β / 1
    assert_eq!(a.iter().sum::<f32>(), 4.0 + 1.0 + 2.0 + 2.0);
    // Merged (plain GCN): a has two edges in channel 1, so each is divided by 2.
    let mut m = vec![0.0f32; 2 * n * n];
    g.adjacency_into(true, n, &mut m);
    assert_eq!(at(&m, 1, 0, 1), 0.5);
    assert_eq!(at(&m, 1, 0, 2), 1.0);
    assert_eq!(at(&m, 1, 1, 3), 2.0);
    assert_eq!(m.iter().sum::<f32>(), 4.0 + 3.5);
}

fn features() -> MapEmbedder {
    MapEmbedder::new(
        2,
        &[("a", vec![1.0, 0.0]), ("b", vec![0.0, 1.0]), ("c", vec![3.0, 4.0]), ("d", vec![1.0, 1.0])],
    )
}

#[test]
fn batch_pads_and_scales_min_out_degree_features() {
    let g = small();
    let one = PassageGraph::from_parts(vec!["b".into()], &[], 2.0);
    let batch = GraphBatch::new(&[g, one], &features(), false).unwrap();
    assert_eq!((batch.batch, batch.nodes, batch.feature_dim, batch.channels), (2, 4, 2, NUM_RELATIONS));
    let s = std::f32::consts::FRAC_1_SQRT_2;
    // Graph 0: a, b as given; c (0.6, 0.8) and d (s, s) times β = 2.
    let want0 = [1.0, 0.0, 0.0, 1.0, 1.2, 1.6, 2.0 * s, 2.0 * s];
    for (x, w) in batch.features[..8].iter().zip(want0) {
        assert!((x - w).abs() < 1e-6, "{x} vs {w}");
    }
    // Graph 1: its only node has out-degree 0 = the minimum, so it is scaled too; the rest is padding.
    assert_eq!(&batch.features[8..], &[0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let a1 = &batch.adjacency[NUM_RELATIONS * 16..];
    assert_eq!(a1[0], 1.0);
    assert_eq!(a1.iter().sum::<f32>(), 1.0);
}

#[test]
fn coherence_and_fusion_by_hand() {
    // cos(z0, z1) = 0, cos(z0, z2) = cos(z1, z2) = 1/√2.
    let z = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let c = coherence(&z, 2);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let want = [h / 2.0, h / 2.0, h];
    for (x, w) in c.iter().zip(want) {
        assert!((x - w).abs() < 1e-6);
    }
    assert_eq!(minmax(&c), [0.0, 0.0, 1.0]);
    let f = fuse(0.5, &[0.2, 0.4, 0.1], &c);
    for (x, w) in f.iter().zip([0.1, 0.2, 0.55]) {
        assert!((x - w).abs() < 1e-6);
    }
    assert_eq!(coherence(&[1.0, 2.0], 2), [0.0]);
    assert_eq!(minmax(&[3.0, 3.0]), [0.0, 0.0]);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
}

/// An encoder whose Z is the sum of a graph's (padded) feature rows: simple enough to follow by
/// hand, so the reranker's plumbing can be checked.
struct SumEncoder {
    channels: usize,
}

impl GraphEncoder for SumEncoder {
    fn dim(&self) -> usize {
        2
    }
    fn channels(&self) -> usize {
        self.channels
    }
    fn feature_dim(&self) -> usize {
        2
    }
    fn fingerprint(&self) -> u32 {
        0x5u32 + self.channels as u32
    }
    fn encode(&self, b: &GraphBatch) -> Result<Vec<f32>> {
        assert_eq!(b.channels, self.channels);
        let mut z = vec![0.0; b.batch * 2];
        for g in 0..b.batch {
            for i in 0..b.nodes {
                for d in 0..2 {
                    z[g * 2 + d] += b.features[(g * b.nodes + i) * 2 + d];
                }
            }
        }
        Ok(z)
    }
}

#[test]
fn rerank_fuses_relevance_and_coherence() {
    let cage = Cage::new(Rc::new(SumEncoder { channels: NUM_RELATIONS }), None).unwrap();
    // One-word passages: each graph is one node of out-degree 0 (so scaled by β; cosines do
    // not see the scale). Z: (1, 0), (0, 1), (1, 1)/√2·β.
    let fruit = MapEmbedder::new(
        2,
        &[("apple", vec![1.0, 0.0]), ("banana", vec![0.0, 1.0]), ("cherry", vec![1.0, 1.0])],
    );
    // docs/method/spec.md §4's coherence: the mean over all other candidates (anchors 0).
    let config = CageConfig { alpha: 0.5, anchors: 0, ..CageConfig::default() };
    let passages = [("Apple", "apple"), ("Banana", "banana"), ("Cherry", "cherry")];
    for (title, text) in passages {
        assert_eq!(cage.passage_graph(title, text, &config).nodes, [text]);
    }
    let out = cage.rerank(&passages, &[0.2, 0.4, 0.1], &fruit, &config).unwrap();
    // As coherence_and_fusion_by_hand: fused [0.1, 0.2, 0.55] → order d, b, a.
    let order: Vec<usize> = out.iter().map(|r| r.candidate).collect();
    assert_eq!(order, [2, 1, 0]);
    assert!((out[0].score - 0.55).abs() < 1e-6);
    assert!((out[2].coherence - std::f32::consts::FRAC_1_SQRT_2 / 2.0).abs() < 1e-6);
    // Errors, not panics.
    assert!(cage.rerank(&passages, &[0.1], &fruit, &config).is_err());
    let bad = CageConfig { alpha: 1.5, ..CageConfig::default() };
    assert!(cage.rerank(&passages, &[0.1, 0.2, 0.3], &fruit, &bad).is_err());
    let gcn = CageConfig { plain_gcn: true, ..config };
    assert!(cage.rerank(&passages, &[0.1, 0.2, 0.3], &fruit, &gcn).is_err());
    assert!(Cage::new(Rc::new(SumEncoder { channels: 3 }), None).is_err());
    assert!(cage.rerank(&[], &[], &fruit, &config).unwrap().is_empty());
}

#[test]
fn stored_embeddings_quantise_and_give_cosines_by_hand() {
    let key = EncoderKey { model: 1, beta: 1.5, merged: false };
    let mut z = GraphEmbeddings::new(key, 2, 3);
    assert_eq!(z.missing(), [0, 1, 2]);
    z.set(0, &[2.0, 0.0]).unwrap();
    z.set(1, &[0.0, -0.5]).unwrap();
    z.set(2, &[1.0, 1.0]).unwrap();
    // Row 1: scale 0.5 / 127, codes (0, −127).
    let (codes, scale) = z.row(1).unwrap();
    assert_eq!(codes, [0, -127]);
    assert!((scale - 0.5 / 127.0).abs() < 1e-9);
    // cos(z0, z1) = 0, cos(z0, z2) = 1/√2, cos(z1, z2) = −1/√2.
    let cos = z.cosines(&[0, 1, 2]).unwrap();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let want = [1.0, 0.0, h, 0.0, 1.0, -h, h, -h, 1.0];
    for (x, w) in cos.iter().zip(want) {
        assert!((x - w).abs() < 1e-6, "{x} vs {w}");
    }
    // Coherence over all: [h/2, −h/2, 0]; with anchors = 1 (the first candidate only):
    // [0 (no other anchor), 0, h].
    let all = coherence_from_cosines(&cos, 0);
    for (x, w) in all.iter().zip([h / 2.0, -h / 2.0, 0.0]) {
        assert!((x - w).abs() < 1e-6);
    }
    let anchored = coherence_from_cosines(&cos, 1);
    for (x, w) in anchored.iter().zip([0.0, 0.0, h]) {
        assert!((x - w).abs() < 1e-6);
    }
    // anchors = 2: p0 vs {1} = 0; p1 vs {0} = 0; p2 vs {0, 1} = 0.
    for x in coherence_from_cosines(&cos, 2) {
        assert!(x.abs() < 1e-6);
    }
    // Errors, not panics.
    assert!(z.set(3, &[1.0, 0.0]).is_err());
    assert!(z.set(0, &[1.0]).is_err());
    assert!(z.set(0, &[f32::NAN, 0.0]).is_err());
    let mut grown = z.clone();
    grown.resize(4);
    assert_eq!(grown.missing(), [3]);
    assert!(grown.cosines(&[0, 3]).is_err());
    assert!(z.cosines(&[7]).is_err());
    // The zero row has scale 0 and cosine 0 with everything.
    let mut zero = GraphEmbeddings::new(key, 2, 2);
    zero.set(0, &[0.0, 0.0]).unwrap();
    zero.set(1, &[1.0, 0.0]).unwrap();
    assert_eq!(zero.cosines(&[0, 1]).unwrap(), [0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn first_stage_fusion_moves_a_candidate_only_past_close_scores() {
    // Relevance (min-max normalised first stage) 1, 0.95, 0.5, 0; coherence favours the last.
    // α = 0.8: a candidate can pass only one within (1 − α)/α = 0.25 of its normalised score.
    let relevance = [1.0, 0.95, 0.5, 0.0];
    let n = 4;
    let mut cos = vec![0.0f32; n * n];
    for i in 0..n {
        cos[i * n + i] = 1.0;
    }
    // cand 1 bonds with cand 3 and 2 strongly; cand 0 bonds with nobody.
    for (p, q, c) in [(1, 2, 0.9), (1, 3, 0.9), (2, 3, 0.9)] {
        cos[p * n + q] = c;
        cos[q * n + p] = c;
    }
    let out = rerank_cosines(&relevance, &cos, 0.8, 0).unwrap();
    let order: Vec<usize> = out.iter().map(|r| r.candidate).collect();
    // coh = [0, 0.6, 0.6, 0.6] → minmax [0, 1, 1, 1]; fused = 0.8, 0.96, 0.6, 0.2.
    assert_eq!(order, [1, 0, 2, 3]);
    assert!((out[0].score - 0.96).abs() < 1e-6);
    assert!((out[3].score - 0.2).abs() < 1e-6);
    assert!(rerank_cosines(&relevance, &cos[..4], 0.8, 0).is_err());
    assert!(rerank_cosines(&relevance, &cos, 1.5, 0).is_err());
}

#[test]
fn rank_relevance_is_scale_free_and_bounds_how_far_a_candidate_moves() {
    // Rank relevance: 1 − i/(n − 1), whatever the scores (ties keep their first-stage order).
    let r = CageRelevance::Rank.of_first_stage(&[5.0, 3.0, 3.0]).unwrap();
    assert_eq!(r, [1.0, 0.5, 0.0]);
    assert_eq!(CageRelevance::Rank.of_first_stage(&[0.7]).unwrap(), [1.0]);
    assert!(CageRelevance::Rank.of_first_stage(&[]).unwrap().is_empty());
    assert_eq!(CageRelevance::FirstStage.of_first_stage(&[5.0, 3.0, 1.0]).unwrap(), [1.0, 0.5, 0.0]);
    assert!(CageRelevance::Cosine.of_first_stage(&[1.0]).is_none());
    // Five candidates, ranks 1, .75, .5, .25, 0; the last bonds with the first (cos .9), so
    // coh = [.225, 0, 0, 0, .225] → minmax [1, 0, 0, 0, 1]. α = .75: a candidate can pass at most
    // ⌊(1 − α)/α · 4⌋ = 1 other. Fused: 1, .5625, .375, .1875, .25 → the last passes one place.
    let relevance = CageRelevance::Rank.of_first_stage(&[9.0, 8.0, 7.0, 6.0, 5.0]).unwrap();
    let n = 5;
    let mut cos = vec![0.0f32; n * n];
    for i in 0..n {
        cos[i * n + i] = 1.0;
    }
    cos[4] = 0.9;
    cos[4 * n] = 0.9;
    let out = rerank_cosines(&relevance, &cos, 0.75, 0).unwrap();
    let order: Vec<usize> = out.iter().map(|r| r.candidate).collect();
    assert_eq!(order, [0, 1, 2, 4, 3]);
    assert!((out[3].score - 0.25).abs() < 1e-6);
    assert!((out[4].score - 0.1875).abs() < 1e-6);
    // The serde name of the mode.
    assert_eq!(serde_json::to_value(CageRelevance::Rank).unwrap(), serde_json::json!("rank"));
}

/// A symmetric `n × n` cosine matrix with 1 on the diagonal and `pairs` elsewhere (0 if unlisted).
fn cos_matrix(n: usize, pairs: &[(usize, usize, f32)]) -> Vec<f32> {
    let mut cos = vec![0.0f32; n * n];
    for i in 0..n {
        cos[i * n + i] = 1.0;
    }
    for &(p, q, c) in pairs {
        cos[p * n + q] = c;
        cos[q * n + p] = c;
    }
    cos
}

#[test]
fn set_selection_scores_each_hit_against_those_chosen_before_it() {
    // Relevance 1, .9, .8, 0; cos(0,2) = .9, cos(0,1) = cos(1,2) = .1, cos(0,3) = .5; α = .8.
    let relevance = [1.0, 0.9, 0.8, 0.0];
    let cos = cos_matrix(4, &[(0, 2, 0.9), (0, 1, 0.1), (1, 2, 0.1), (0, 3, 0.5)]);
    let out = select_set(&relevance, &cos, 0.8).unwrap();
    // Step 1: nothing chosen, coherence 0 → the most relevant, 0 (score .8).
    // Step 2: coh with {0} = [.1, .9, .5] for 1, 2, 3 → minmax [0, 1, .5] → .72, .84, .1 → 2.
    // Step 3: coh with {0, 2} = [.1, .25] for 1, 3 → minmax [0, 1] → .72, .2 → 1.
    // Step 4: 3 alone: coh (.5 + 0 + 0)/3, minmax of one value 0 → score 0.
    let order: Vec<usize> = out.iter().map(|r| r.candidate).collect();
    assert_eq!(order, [0, 2, 1, 3]);
    let want = [(0.8, 0.0), (0.84, 0.9), (0.72, 0.1), (0.0, 0.5 / 3.0)];
    for (r, (score, coh)) in out.iter().zip(want) {
        assert!((r.score - score).abs() < 1e-6 && (r.coherence - coh).abs() < 1e-6, "{r:?}");
    }
    assert_eq!(out[1].relevance, 0.8);
    // Independent scoring with anchors 2 ranks 2 first instead (coh [.1, .1, .5, .25]).
    let independent: Vec<usize> =
        rerank_cosines(&relevance, &cos, 0.8, 2).unwrap().iter().map(|r| r.candidate).collect();
    assert_eq!(independent, [2, 0, 1, 3]);
    // α = 1 keeps the first stage's order; bad input is an error.
    let same: Vec<usize> = select_set(&relevance, &cos, 1.0).unwrap().iter().map(|r| r.candidate).collect();
    assert_eq!(same, [0, 1, 2, 3]);
    assert!(select_set(&relevance, &cos[..9], 0.8).is_err());
    assert!(select_set(&relevance, &cos, -0.1).is_err());
    assert!(select_set(&[], &[], 0.8).unwrap().is_empty());
}

#[test]
fn oracle_coherence_is_the_mean_cosine_with_the_other_gold_rows() {
    // Rows: candidates 0, 1, 2, then a gold passage that is not a candidate (row 3).
    // Gold rows: 0 and 3.
    let cos = cos_matrix(4, &[(0, 3, 0.6), (1, 0, 0.2), (1, 3, 0.4), (2, 3, -0.2)]);
    let coh = oracle_coherence(&cos, 3, &[0, 3]);
    // 0: only the other gold, row 3 → .6; 1: (.2 + .4)/2 = .3; 2: (0 − .2)/2 = −.1.
    for (x, w) in coh.iter().zip([0.6, 0.3, -0.1]) {
        assert!((x - w).abs() < 1e-6, "{coh:?}");
    }
    assert_eq!(coh.len(), 3);
    // A lone gold candidate has no other gold to bond with.
    assert_eq!(oracle_coherence(&cos, 3, &[1]), [0.2, 0.0, 0.0]);
    // Fused as the search fuses: relevance [1, .5, 0], α = .5 → coh minmax [1, .571, 0].
    let ranked = rank_fused(&[1.0, 0.5, 0.0], &coh, 0.5).unwrap();
    assert_eq!(ranked.iter().map(|r| r.candidate).collect::<Vec<_>>(), [0, 1, 2]);
    assert!((ranked[1].score - (0.25 + 0.5 * 0.4 / 0.7)).abs() < 1e-6);
    assert!(rank_fused(&[1.0], &coh, 0.5).is_err());
}
