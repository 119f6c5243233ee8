//! Hand-worked graphs (docs/method/spec.md §1): counts, weights, normalisation, duplicates, synonym edges
//! from hand-chosen vectors, incremental adds equal to one build, and bad input.

use std::collections::BTreeMap;

use super::*;
use crate::embed::{l2_normalize, Embedder};
use crate::Passage;

use crate::embed::testing::MapEmbedder;

/// A deterministic embedder for generated data: texts whose first word is the same share a base
/// direction (a "cluster"), plus noise from the whole text. `dim` > 96 exercises the bound (48-dimension prefix).
struct ClusterEmbedder {
    dim: usize,
    noise: f32,
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

fn pseudo_random_vec(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed | 1;
    (0..dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

impl Embedder for ClusterEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> crate::Result<Vec<f32>> {
        let mut out = Vec::new();
        for t in texts {
            let first = t.split_whitespace().next().unwrap_or("");
            let base = pseudo_random_vec(fnv(&first.to_lowercase()), self.dim);
            let noise = pseudo_random_vec(fnv(t), self.dim);
            let mut v: Vec<f32> = base.iter().zip(&noise).map(|(b, n)| b + self.noise * n).collect();
            l2_normalize(&mut v);
            out.extend(v);
        }
        progress(texts.len(), texts.len());
        Ok(out)
    }
}

fn passage(id: &str, title: &str, text: &str) -> Passage {
    Passage { id: id.into(), title: title.into(), text: text.into() }
}

fn arcs(g: &Graph, u: u32) -> Vec<(u32, EdgeType, f32)> {
    let c = g.csr();
    c.arcs_of(u).map(|a| (c.targets[a], c.edge_types[a], c.weights[a])).collect()
}

fn build(config: GraphConfig, passages: &[Passage], triples: &[Triple], e: &dyn Embedder) -> Graph {
    build_graph(config, passages, triples, e, &mut |_, _, _| {}).unwrap()
}

/// Every arc u→v has its twin v→u with the same type and weight.
fn assert_symmetric(g: &Graph) {
    let c = g.csr();
    for u in 0..c.node_count() as u32 {
        for a in c.arcs_of(u) {
            let (v, t, w) = (c.targets[a], c.edge_types[a], c.weights[a]);
            let back = arcs(g, v);
            assert!(
                back.iter().any(|&(x, tt, ww)| x == u && tt == t && ww == w),
                "{u}->{v} {t:?} has no twin"
            );
        }
    }
}

/// Four passages (the third an exact duplicate of the first) and ten triples, worked by hand.
fn beatles() -> (Vec<Passage>, Vec<Triple>) {
    let passages = vec![
        passage("p0", "The Beatles", "The Beatles were formed in Liverpool."),
        passage("p1", "John Lennon", "John Lennon was a member of the Beatles. He was born in Liverpool."),
        passage("p2", "The Beatles", "The Beatles were formed in Liverpool."), // duplicate of p0
        passage("p3", "Liverpool", "Liverpool is a city in England, home of the Beatles and of Lennon."),
    ];
    let triples = vec![
        Triple::new("The Beatles", "formed in", "Liverpool", 0), // t0
        Triple::new("beatles", "formed  in", "Liverpool.", 0),   // t1 = t0 after normalisation
        Triple::new("John Lennon", "member of", "the  Beatles.", 1), // t2
        Triple::new("John Lennon", "born in", "Liverpool", 1),   // t3
        Triple::new("The Beatles", "formed in", "Liverpool", 2), // t4: the duplicate passage
        Triple::new("Liverpool", "city in", "England", 3),       // t5
        Triple::new("Liverpool", "is home of", "The Beatles", 3), // t6
        Triple::new("!!!", "is", "x", 3),                        // t7: empty subject
        Triple::new("England", "", "England", 3),                // t8: self-loop, empty relation
        Triple::new("John Lennon", "born in", "Liverpool", 3),   // t9: fact of t3, another passage
    ];
    (passages, triples)
}

fn one_hot(dim: usize, i: usize) -> Vec<f32> {
    let mut v = vec![0.0; dim];
    v[i] = 1.0;
    v
}

fn beatles_embedder() -> MapEmbedder {
    MapEmbedder::new(
        4,
        &[
            ("The Beatles", one_hot(4, 0)),
            ("Liverpool", one_hot(4, 1)),
            ("John Lennon", one_hot(4, 2)),
            ("England", one_hot(4, 3)),
        ],
    )
}

#[test]
fn hand_worked_graph() {
    let (passages, triples) = beatles();
    let mut b = GraphBuilder::new(GraphConfig::default()).unwrap();
    let summary = b.add_passages(0, &passages, &triples).unwrap();
    assert_eq!(
        summary,
        AddSummary {
            passages: 4,
            duplicate_passages: 1,
            new_passage_nodes: 3,
            new_entities: 4,
            new_facts: 6,
            triples_used: 7,     // t0 t2 t3 t5 t6 t8 t9
            triples_repeated: 2, // t1 (same passage), t4 (duplicate passage = same node)
            triples_empty: 1,    // t7
        }
    );
    assert_eq!(b.pending_embeddings(), 4 + 6);
    b.embed(&beatles_embedder(), &mut |_, _| {}).unwrap();
    b.link_synonyms(&mut |_, _| {}).unwrap();
    let g = b.finish().unwrap();

    // Nodes in creation order: P0, beatles, liverpool, P1, lennon, P3, england.
    assert_eq!(
        g.counts(),
        GraphCounts {
            nodes: 7,
            entity_nodes: 4,
            passage_nodes: 3,
            passages: 4,
            facts: 6,
            relation_edges: 4,
            synonym_edges: 0, // one-hot vectors: cosine 0
            context_edges: 9, // P0: 2, P1: 3, P3: 4
            arcs: 26,
        }
    );
    assert_eq!(g.node(0), Some(NodeRef::Passage { passages: &[0, 2] }));
    assert_eq!(g.node(1), Some(NodeRef::Entity { name: "The Beatles", key: "beatles" }));
    assert_eq!(g.node(2), Some(NodeRef::Entity { name: "Liverpool", key: "liverpool" }));
    assert_eq!(g.node(3), Some(NodeRef::Passage { passages: &[1] }));
    assert_eq!(g.node(4), Some(NodeRef::Entity { name: "John Lennon", key: "john lennon" }));
    assert_eq!(g.node(5), Some(NodeRef::Passage { passages: &[3] }));
    assert_eq!(g.node(6), Some(NodeRef::Entity { name: "England", key: "england" }));
    assert_eq!(g.node(7), None);
    assert_eq!(g.node_kind(3), Some(NodeKind::Passage));
    assert_eq!(g.node_kind(6), Some(NodeKind::Entity));

    // Normalised lookups.
    for phrase in ["The Beatles", "beatles", "the  Beatles.", "BEATLES!"] {
        assert_eq!(g.entity_id(phrase), Some(1), "{phrase:?}");
    }
    assert_eq!(g.entity_id("Ringo"), None);
    assert_eq!(g.entity_id(""), None);
    assert_eq!(g.passage_node(0), Some(0));
    assert_eq!(g.passage_node(2), Some(0)); // the duplicate
    assert_eq!(g.passage_node(3), Some(5));
    assert_eq!(g.passage_node(4), None);
    assert_eq!(g.passage_indices(0), &[0, 2]);
    assert_eq!(g.passage_indices(1), &[] as &[u32]); // an entity

    // Relation weights: +1 per fact per passage node.
    assert_eq!(g.relation_weight(1, 2), 2.0); // beatles—liverpool: t0 in P0, t6 in P3
    assert_eq!(g.relation_weight(2, 1), 2.0);
    assert_eq!(g.relation_weight(4, 1), 1.0); // lennon—beatles: t2
    assert_eq!(g.relation_weight(4, 2), 2.0); // lennon—liverpool: t3 in P1, t9 in P3
    assert_eq!(g.relation_weight(2, 6), 1.0); // liverpool—england: t5
    assert_eq!(g.relation_weight(6, 6), 0.0); // no self-loop from t8
    assert_eq!(g.relation_weight(1, 6), 0.0);

    // The CSR row of Liverpool, sorted by target.
    use EdgeType::{Context as C, Relation as R};
    assert_eq!(
        arcs(&g, 2),
        vec![(0, C, 1.0), (1, R, 2.0), (3, C, 1.0), (4, R, 2.0), (5, C, 1.0), (6, R, 1.0)]
    );
    assert_eq!(arcs(&g, 0), vec![(1, C, 1.0), (2, C, 1.0)]);
    assert_eq!(arcs(&g, 6), vec![(2, R, 1.0), (5, C, 1.0)]);
    let csr = g.csr();
    assert_eq!(csr.offsets.len(), 8);
    assert_eq!(csr.offsets[0], 0);
    assert_eq!(*csr.offsets.last().unwrap() as usize, csr.targets.len());
    let (o, t, w) = csr.arrays();
    assert_eq!((o.len(), t.len(), w.len(), csr.edge_types.len()), (8, 26, 26, 26));
    let total: f32 = w.iter().sum();
    assert_eq!(total, 2.0 * (2.0 + 1.0 + 2.0 + 1.0) + 2.0 * 9.0);
    assert_symmetric(&g);

    // Containment.
    assert_eq!(g.passages_of(1), &[0, 3, 5]); // beatles
    assert_eq!(g.passages_of(6), &[5]); // england
    assert_eq!(g.passages_of(0), &[] as &[u32]); // a passage node
    assert_eq!(g.entities_of(5), &[1, 2, 4, 6]);
    assert_eq!(g.entities_of(0), &[1, 2]);
    assert_eq!(g.entities_of(3), &[1, 2, 4]);

    // The fact table.
    let f = g.facts();
    assert_eq!(f.len(), 6);
    assert_eq!(f[0].text, "The Beatles formed in Liverpool");
    assert_eq!((f[0].subject, f[0].object, f[0].passages.as_slice()), (1, 2, &[0u32][..]));
    assert_eq!(f[1].text, "John Lennon member of the Beatles.");
    assert_eq!(f[2].text, "John Lennon born in Liverpool");
    assert_eq!(f[2].passages, vec![3, 5]);
    assert_eq!(f[4].relation, "is home of");
    assert_eq!((f[4].subject, f[4].object), (2, 1));
    assert_eq!(f[5].text, "England England");
    assert_eq!((f[5].subject, f[5].object, f[5].relation.as_str()), (6, 6, ""));
    assert_eq!(g.facts_of_entity(6), &[3, 5]);
    assert_eq!(g.facts_of_entity(1), &[0, 1, 4]);
    assert_eq!(g.facts_of_passage(5), &[2, 3, 4, 5]);
    assert_eq!(g.facts_of_passage(0), &[0]);

    // Vectors: one row per entity (in entity order) and per fact.
    assert_eq!(g.entity_nodes(), &[1, 2, 4, 6]);
    assert_eq!(g.passage_nodes(), &[0, 3, 5]);
    assert_eq!(g.entity_ordinal(4), Some(2));
    assert_eq!(g.entity_ordinal(3), None);
    assert_eq!(g.entity_vectors().len(), 4);
    assert_eq!(g.entity_vectors().row(2), Some(&one_hot(4, 2)[..]));
    assert_eq!(g.fact_vectors().len(), 6);
    assert_eq!(g.fact_vectors().dim(), 4);
    // Memory: the rows were reserved at once, so no spare capacity. Entities 4 × 4 f32; facts
    // 6 × 4 i8 and two f32 per row; no f32 fact rows by default.
    let memory: std::collections::HashMap<_, _> = g.memory_breakdown().into_iter().collect();
    assert_eq!(memory["entity vectors f32"], 4 * 4 * 4);
    assert_eq!(memory["fact vectors i8"], 6 * 4 + 6 * 8);
    assert_eq!(memory["fact vectors f32"], 0);
    assert_eq!(memory["entity vectors i8"], 0, "made by prepare_search only");
}

/// Unit 2-d vectors at angles 0°, 18°, 40°, 60°: cosines are cos of the angle differences.
fn angle(deg: f32) -> Vec<f32> {
    vec![deg.to_radians().cos(), deg.to_radians().sin()]
}

fn synonym_data() -> (Vec<Passage>, Vec<Triple>, MapEmbedder) {
    let passages = vec![passage("a", "", "one"), passage("b", "", "two"), passage("c", "", "three")];
    let triples = vec![
        Triple::new("Alpha", "r", "Delta", 0),
        Triple::new("Bravo", "r", "NY", 1),
        Triple::new("Charlie", "r", "Zulu", 2),
    ];
    let e = MapEmbedder::new(
        2,
        &[
            ("Alpha", angle(0.0)),
            ("Bravo", angle(18.0)),
            ("Charlie", angle(40.0)),
            ("Delta", angle(60.0)),
            ("NY", angle(0.0)), // cosine 1 with Alpha, but only 2 letters
                                // "Zulu": not in the map, so the zero vector
        ],
    );
    (passages, triples, e)
}

/// Synonym edges of `g` as (name, name) → weight, names sorted within the pair.
fn synonyms(g: &Graph) -> BTreeMap<(String, String), f32> {
    let c = g.csr();
    let name = |u: u32| match g.node(u) {
        Some(NodeRef::Entity { name, .. }) => name.to_string(),
        other => panic!("synonym arc at {other:?}"),
    };
    let mut out = BTreeMap::new();
    for u in 0..c.node_count() as u32 {
        for a in c.arcs_of(u) {
            if c.edge_types[a] == EdgeType::Synonym {
                let (x, y) = (name(u), name(c.targets[a]));
                out.insert(if x < y { (x, y) } else { (y, x) }, c.weights[a]);
            }
        }
    }
    out
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn synonym_edges_by_hand() {
    let (passages, triples, e) = synonym_data();
    let cos = |d: f32| d.to_radians().cos();
    // Default: cosine ≥ 0.8. Alpha–Bravo cos 18° = 0.951, Bravo–Charlie cos 22° = 0.927,
    // Charlie–Delta cos 20° = 0.940; Alpha–Charlie cos 40° = 0.766 and Bravo–Delta cos 42° =
    // 0.743 are below; NY (2 letters) and Zulu (zero vector) take no part.
    let g = build(GraphConfig::default(), &passages, &triples, &e);
    let s = synonyms(&g);
    assert_eq!(s.len(), 3, "{s:?}");
    assert!(close(s[&("Alpha".into(), "Bravo".into())], cos(18.0)));
    assert!(close(s[&("Bravo".into(), "Charlie".into())], cos(22.0)));
    assert!(close(s[&("Charlie".into(), "Delta".into())], cos(20.0)));
    assert_eq!(g.counts().synonym_edges, 3);
    assert_eq!(g.counts().relation_edges, 3);
    assert_eq!(g.counts().arcs, 2 * (3 + 3 + 6));
    assert_symmetric(&g);
    let alpha = g.entity_id("alpha").unwrap();
    let bravo = g.entity_id("bravo").unwrap();
    let cands = g.synonym_candidates(bravo);
    assert_eq!(cands.len(), 2);
    assert_eq!(cands[0].0, alpha); // best first
    assert!(close(cands[0].1, cos(18.0)) && close(cands[1].1, cos(22.0)));
    // Alpha—Delta has a relation edge and no synonym edge: one arc.
    let delta = g.entity_id("Delta").unwrap();
    assert_eq!(arcs(&g, alpha).iter().filter(|a| a.0 == delta).count(), 1);

    // k = 1: Alpha→Bravo, Bravo→Alpha, Charlie→Delta (0.940 > 0.927), Delta→Charlie.
    // Bravo–Charlie is in neither list: gone.
    let g1 = build(GraphConfig { synonym_top_k: 1, ..GraphConfig::default() }, &passages, &triples, &e);
    let s1 = synonyms(&g1);
    assert_eq!(
        s1.keys().cloned().collect::<Vec<_>>(),
        vec![("Alpha".into(), "Bravo".into()), ("Charlie".into(), "Delta".into())]
    );

    // Weight factor 3 (CatRAG's code).
    let g3 = build(GraphConfig { synonym_weight: 3.0, ..GraphConfig::default() }, &passages, &triples, &e);
    assert!(close(synonyms(&g3)[&("Alpha".into(), "Bravo".into())], 3.0 * cos(18.0)));

    // Threshold 0.95: only Alpha–Bravo (0.951).
    let g95 =
        build(GraphConfig { synonym_threshold: 0.95, ..GraphConfig::default() }, &passages, &triples, &e);
    assert_eq!(synonyms(&g95).len(), 1);

    // Letting 2-letter names in: NY—Alpha (cos 1) and NY—Bravo (cos 18°) appear.
    let g2 = build(GraphConfig { synonym_min_alnum: 2, ..GraphConfig::default() }, &passages, &triples, &e);
    let s2 = synonyms(&g2);
    assert_eq!(s2.len(), 5);
    assert!(close(s2[&("Alpha".into(), "NY".into())], 1.0));

    // k = 0 turns them off.
    let g0 = build(GraphConfig { synonym_top_k: 0, ..GraphConfig::default() }, &passages, &triples, &e);
    assert_eq!(g0.counts().synonym_edges, 0);
}

/// Everything that makes up a graph, for equality checks.
fn fingerprint(g: &Graph) -> String {
    let c = g.csr();
    let nodes: Vec<_> = (0..g.node_count() as u32).map(|u| format!("{:?}", g.node(u))).collect();
    format!(
        "{nodes:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        c.offsets,
        c.targets,
        c.weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
        c.edge_types,
        g.facts(),
        g.entity_vectors(),
        g.fact_vectors(),
        g.counts()
    )
}

#[test]
fn incremental_add_evicts_like_a_rebuild() {
    // k = 1. After the first batch (Alpha, Bravo, Charlie, …) Charlie's best is Bravo, so
    // Bravo—Charlie is an edge; adding Delta (passage 0's triple moved to the second batch)
    // displaces it, exactly as building everything at once does.
    let passages = vec![passage("a", "", "one"), passage("b", "", "two"), passage("c", "", "three")];
    let triples = vec![
        Triple::new("Alpha", "r", "Bravo", 0),
        Triple::new("Charlie", "r", "Zulu", 1),
        Triple::new("Delta", "r", "NY", 2),
    ];
    let (_, _, e) = synonym_data();
    let config = GraphConfig { synonym_top_k: 1, ..GraphConfig::default() };
    let whole = build(config.clone(), &passages, &triples, &e);

    let first = build(config, &passages[..2], &triples[..2], &e);
    assert!(synonyms(&first).contains_key(&("Bravo".into(), "Charlie".into())));
    let mut steps = Vec::new();
    let (second, summary) =
        first.extend(2, &passages[2..], &triples[2..], &e, &mut |s, d, t| steps.push((s, d, t))).unwrap();
    assert_eq!(summary.new_entities, 2);
    assert!(!synonyms(&second).contains_key(&("Bravo".into(), "Charlie".into())));
    assert_eq!(fingerprint(&second), fingerprint(&whole));
    // Progress: only the new texts (2 entities + 1 fact) were embedded.
    assert!(steps.contains(&(BuildStep::Embedding, 3, 3)), "{steps:?}");
    assert!(steps.iter().any(|&(s, d, t)| s == BuildStep::Synonyms && d == t));
}

/// Generated data: 40 passages (some duplicates), clustered entity names, triples with
/// repeats, empty and short names; a 128-dimensional clustered embedder (so the bound is used).
fn generated() -> (Vec<Passage>, Vec<Triple>) {
    let clusters = ["Aldor", "Brin", "Cato", "Dunmore", "Esk", "Fenwick", "Gorm"];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut passages: Vec<Passage> = Vec::new();
    let mut triples = Vec::new();
    for i in 0..40u32 {
        if i % 9 == 5 {
            let j = next(u64::from(i)) as usize;
            let copy = passage(&format!("p{i}"), &passages[j].title, &passages[j].text);
            passages.push(copy);
        } else {
            passages.push(passage(&format!("p{i}"), &format!("T{}", i % 7), &format!("text {i}")));
        }
        for _ in 0..next(7) {
            let name = |r: u64| -> String {
                match r % 23 {
                    0 => "Al".into(),  // too short for synonyms
                    1 => "...".into(), // normalises to nothing
                    2 => "北京市".into(),
                    _ => format!("{} {}", clusters[(r % 7) as usize], r / 7),
                }
            };
            let (s, o) = (name(next(1000)), name(next(1000)));
            let rel = ["born in", "part of", "near"][next(3) as usize];
            triples.push(Triple::new(&s, rel, &o, i));
            if next(4) == 0 {
                triples.push(Triple::new(&s.to_uppercase(), rel, &format!("the {o}"), i));
                // a repeat
            }
        }
    }
    (passages, triples)
}

/// The synonym edges by brute force: every eligible pair's cosine, each entity's top-k by
/// sorting, union of both ends.
fn brute_force_synonyms(g: &Graph, config: &GraphConfig) -> BTreeMap<(u32, u32), f32> {
    let v = g.entity_vectors();
    let ents = g.entity_nodes();
    let eligible = |o: usize| {
        let key = match g.node(ents[o]) {
            Some(NodeRef::Entity { key, .. }) => key,
            _ => unreachable!(),
        };
        alnum_count(key) >= config.synonym_min_alnum && !crate::embed::is_zero(v.row(o).unwrap())
    };
    let mut out = BTreeMap::new();
    for a in (0..ents.len()).filter(|&a| eligible(a)) {
        let mut cands: Vec<(usize, f32)> = (0..ents.len())
            .filter(|&b| b != a && eligible(b))
            .map(|b| (b, crate::embed::dot(v.row(a).unwrap(), v.row(b).unwrap())))
            .filter(|&(_, c)| c >= config.synonym_threshold)
            .collect();
        cands.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        for &(b, c) in cands.iter().take(config.synonym_top_k) {
            out.insert((ents[a.min(b)], ents[a.max(b)]), c * config.synonym_weight);
        }
    }
    out
}

fn synonym_arcs(g: &Graph) -> BTreeMap<(u32, u32), f32> {
    let c = g.csr();
    let mut out = BTreeMap::new();
    for u in 0..c.node_count() as u32 {
        for a in c.arcs_of(u) {
            if c.edge_types[a] == EdgeType::Synonym {
                let t = c.targets[a];
                out.insert((u.min(t), u.max(t)), c.weights[a]);
            }
        }
    }
    out
}

#[test]
fn incremental_add_equals_one_build_on_generated_data() {
    let (passages, triples) = generated();
    let e = ClusterEmbedder { dim: 128, noise: 0.6 };
    let config = GraphConfig {
        synonym_top_k: 3,
        synonym_threshold: 0.6,
        synonym_weight: 3.0,
        synonym_search: SynonymSearch::Exact,
        ..GraphConfig::default()
    };
    let whole = build(config.clone(), &passages, &triples, &e);
    let counts = whole.counts();
    assert!(counts.synonym_edges > 10 && counts.entity_nodes > 50, "{counts:?}");
    assert!(counts.passages == 40 && counts.passage_nodes < 40);
    assert_symmetric(&whole);
    // The bound skips nothing it should not: same edges as comparing every pair.
    assert_eq!(synonym_arcs(&whole), brute_force_synonyms(&whole, &config));

    let in_batch = |lo: u32, hi: u32| -> Vec<Triple> {
        triples.iter().filter(|t| (lo..hi).contains(&t.passage)).cloned().collect()
    };
    for cuts in [vec![0, 40], vec![1, 40], vec![17, 40], vec![39, 40], vec![10, 11, 30, 40], vec![40, 40]] {
        let mut b = GraphBuilder::new(config.clone()).unwrap();
        let mut lo = 0u32;
        let mut g: Option<Graph> = None;
        for &hi in &cuts {
            if let Some(built) = g.take() {
                b = built.into_builder();
            }
            b.add_passages(lo, &passages[lo as usize..hi as usize], &in_batch(lo, hi)).unwrap();
            b.embed(&e, &mut |_, _| {}).unwrap();
            let stats = b.link_synonyms(&mut |_, _| {}).unwrap();
            assert!(stats.exact <= stats.pairs);
            g = Some(std::mem::replace(&mut b, GraphBuilder::new(config.clone()).unwrap()).finish().unwrap());
            lo = hi;
        }
        assert_eq!(fingerprint(g.as_ref().unwrap()), fingerprint(&whole), "cuts {cuts:?}");
    }
}

#[test]
fn bound_prunes_on_unrelated_vectors() {
    // 300 entities in 7 clusters (128 dims): most pairs are far apart.
    let passages: Vec<Passage> = (0..30).map(|i| passage(&format!("p{i}"), "", &format!("t{i}"))).collect();
    let clusters = ["Aldor", "Brin", "Cato", "Dunmore", "Esk", "Fenwick", "Gorm"];
    let triples: Vec<Triple> = (0..300)
        .map(|i| Triple::new(&format!("{} {i}", clusters[i % 7]), "r", "Hub", (i % 30) as u32))
        .collect();
    let e = ClusterEmbedder { dim: 128, noise: 0.3 };
    let exact = GraphConfig { synonym_search: SynonymSearch::Exact, ..GraphConfig::default() };
    let mut b = GraphBuilder::new(exact.clone()).unwrap();
    b.add_passages(0, &passages, &triples).unwrap();
    b.embed(&e, &mut |_, _| {}).unwrap();
    let stats = b.link_synonyms(&mut |_, _| {}).unwrap();
    assert_eq!(stats.pairs, 301 * 300 / 2);
    assert!(stats.above_threshold > 0);
    assert!(stats.exact < stats.pairs, "{stats:?}");
    let g = b.finish().unwrap();
    assert_eq!(synonym_arcs(&g), brute_force_synonyms(&g, &exact));
}

#[test]
fn empty_and_odd_input_never_panics() {
    let e = MapEmbedder::new(3, &[]);
    // Nothing at all.
    let g = build(GraphConfig::default(), &[], &[], &e);
    assert_eq!(g.counts(), GraphCounts::default());
    assert_eq!(g.csr().offsets, &[0]);
    assert_eq!(g.node(0), None);
    assert!(arcs(&g, 5).is_empty());
    // Passages without triples: isolated passage nodes; no embedding needed.
    let ps = vec![passage("a", "", ""), passage("b", "", "x"), passage("c", "", "")]; // a = c
    let g = build(GraphConfig::default(), &ps, &[], &e);
    assert_eq!((g.counts().nodes, g.counts().passages, g.counts().arcs), (2, 3, 0));
    // Empty, punctuation-only, non-ASCII and huge names; empty relation.
    let long = "Ω".repeat(100_000);
    let triples = vec![
        Triple::new("", "", "", 0),
        Triple::new("   ", "is", "x", 0),
        Triple::new("Zürich", "", "Москва", 0),
        Triple::new("zürich", "", "москва", 1),
        Triple::new("北京", "是", "中国的首都", 1),
        Triple::new(&long, "x", "🙂 smile", 1),
        Triple::new("🙂", "x", "y", 1), // an emoji alone normalises to nothing
    ];
    let g = build(GraphConfig::default(), &ps[..2], &triples, &e);
    let c = g.counts();
    // zürich, москва, 北京, 中国的首都, ωωω…, smile; three facts, the first stated twice.
    assert_eq!((c.entity_nodes, c.facts, c.relation_edges, c.synonym_edges), (6, 3, 3, 0));
    let (zurich, moskva) = (g.entity_id("ZÜRICH").unwrap(), g.entity_id("москва").unwrap());
    assert_eq!(g.entity_id("Zürich"), Some(zurich));
    assert_eq!(g.entity_id("zurich"), Some(zurich)); // accents fold (normalize_entity)
    assert_eq!(g.relation_weight(zurich, moskva), 2.0);
    assert_eq!(g.entity_id("smile"), g.entity_id("🙂 smile"));
    assert_eq!(g.entity_id(&long.to_lowercase()).map(|n| g.node_kind(n)), Some(Some(NodeKind::Entity)));
    assert_symmetric(&g);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let (passages, triples) = beatles();
    let e = beatles_embedder();
    let mut b = GraphBuilder::new(GraphConfig::default()).unwrap();

    // A triple naming a passage that is not there: error, nothing added.
    let stray = vec![Triple::new("a", "b", "c", 9)];
    assert!(matches!(b.add_passages(0, &passages, &stray), Err(crate::Error::Passage { .. })));
    assert_eq!((b.pending_embeddings(), b.pending_links()), (0, 0));
    // A batch running past u32::MAX.
    assert!(matches!(b.add_passages(u32::MAX - 1, &passages, &[]), Err(crate::Error::Passage { .. })));

    b.add_passages(0, &passages, &triples).unwrap();
    // The same index twice.
    assert!(matches!(b.add_passages(3, &passages[..1], &[]), Err(crate::Error::Passage { .. })));
    // Linking or finishing before embedding.
    assert!(matches!(b.link_synonyms(&mut |_, _| {}), Err(crate::Error::Config(_))));
    assert!(matches!(b.clone().finish(), Err(crate::Error::Config(_))));
    // An embedder that returns too few floats.
    struct Short;
    impl Embedder for Short {
        fn dim(&self) -> usize {
            4
        }
        fn embed_batch(&self, _: &[&str], _: &mut dyn FnMut(usize, usize)) -> crate::Result<Vec<f32>> {
            Ok(vec![0.0; 3])
        }
    }
    assert!(matches!(b.embed(&Short, &mut |_, _| {}), Err(crate::Error::Model { .. })));
    // The builder still works after all that.
    b.embed(&e, &mut |_, _| {}).unwrap();
    b.link_synonyms(&mut |_, _| {}).unwrap();
    let g = b.finish().unwrap();
    assert_eq!(g.counts().nodes, 7);

    // Extending with an embedder of another dimension.
    let other = MapEmbedder::new(5, &[]);
    let more = vec![passage("p4", "", "new")];
    let r = g.extend(4, &more, &[Triple::new("New", "r", "Thing", 4)], &other, &mut |_, _, _| {});
    assert!(matches!(r, Err(crate::Error::Config(_))));

    // Bad configurations.
    for c in [
        GraphConfig { synonym_threshold: f32::NAN, ..GraphConfig::default() },
        GraphConfig { synonym_threshold: 1.5, ..GraphConfig::default() },
        GraphConfig { synonym_weight: -1.0, ..GraphConfig::default() },
        GraphConfig { context_weight: f32::INFINITY, ..GraphConfig::default() },
    ] {
        assert!(matches!(GraphBuilder::new(c), Err(crate::Error::Config(_))));
    }
}

#[test]
fn config_serde_defaults() {
    let c: GraphConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(c, GraphConfig::default());
    assert_eq!(
        (c.synonym_threshold, c.synonym_top_k, c.synonym_weight, c.synonym_min_alnum),
        (0.8, 100, 1.0, 3)
    );
    let c: GraphConfig = serde_json::from_str(r#"{"synonym_weight": 3.0}"#).unwrap();
    assert_eq!(c.synonym_weight, 3.0);
    assert_eq!(c.synonym_top_k, 100);
    let json = serde_json::to_string(&GraphConfig::default()).unwrap();
    assert!(json.contains("\"synonym_threshold\":0.8"), "{json}");
    assert_eq!(EdgeType::from_u8(EdgeType::Context as u8), Some(EdgeType::Context));
    assert_eq!(EdgeType::from_u8(3), None);
}

#[test]
fn progress_reaches_the_total() {
    let (passages, triples) = generated();
    let e = ClusterEmbedder { dim: 128, noise: 0.6 };
    let mut seen: Vec<(BuildStep, usize, usize)> = Vec::new();
    let g = build_graph(GraphConfig::default(), &passages, &triples, &e, &mut |s, d, t| seen.push((s, d, t)))
        .unwrap();
    let texts = g.counts().entity_nodes + g.counts().facts;
    assert_eq!(
        seen.iter().rfind(|x| x.0 == BuildStep::Embedding),
        Some(&(BuildStep::Embedding, texts, texts))
    );
    let last = seen.iter().rfind(|x| x.0 == BuildStep::Synonyms).unwrap();
    assert!(last.1 == last.2 && last.2 > 0);
    for w in seen.windows(2) {
        if w[0].0 == w[1].0 {
            assert!(w[0].1 <= w[1].1, "{seen:?}");
        }
    }
}

#[test]
fn blocked_knn_across_tiles_matches_brute_force() {
    // 1100 entities: more than one 512-row pass and one 1024-row tile; the second batch starts
    // at an entity that is not on a block boundary.
    let words =
        ["Kestrel", "Lumen", "Marrow", "Nadir", "Osprey", "Pellucid", "Quarry", "Rune", "Sable", "Tarn"];
    let names: Vec<String> = (0..1100).map(|i| format!("{} {}", words[i % 10], i / 10)).collect();
    let passages: Vec<Passage> = (0..20).map(|i| passage(&format!("p{i}"), "", &format!("t{i}"))).collect();
    let triples: Vec<Triple> = names
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| Triple::new(&pair[0], "r", &pair[1], (i % 20) as u32))
        .collect();
    let e = ClusterEmbedder { dim: 128, noise: 0.45 };
    let config =
        GraphConfig { synonym_top_k: 5, synonym_search: SynonymSearch::Exact, ..GraphConfig::default() };
    let whole = build(config.clone(), &passages, &triples, &e);
    assert_eq!(whole.counts().entity_nodes, 1100);
    let syn = synonym_arcs(&whole);
    assert!(syn.len() > 1000, "{}", syn.len());
    assert_eq!(syn, brute_force_synonyms(&whole, &config));

    let first: Vec<Triple> = triples.iter().filter(|t| t.passage < 11).cloned().collect();
    let second: Vec<Triple> = triples.iter().filter(|t| t.passage >= 11).cloned().collect();
    let g = build(config, &passages[..11], &first, &e);
    assert!(g.entity_nodes().len() % 32 != 0);
    let (g, _) = g.extend(11, &passages[11..], &second, &e, &mut |_, _, _| {}).unwrap();
    assert_eq!(fingerprint(&g), fingerprint(&whole));
}

/// Entities `xx{i}`: pseudo-random 256-dimensional directions (pairwise cosines near 0);
/// `yy{i}`: `xx{i}` plus a third of another random vector (cosine ≈ 0.94 with `xx{i}`).
struct PlantedEmbedder;

impl Embedder for PlantedEmbedder {
    fn dim(&self) -> usize {
        256
    }

    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> crate::Result<Vec<f32>> {
        let mut out = Vec::new();
        for t in texts {
            let i: u64 = t[2..].parse().unwrap_or(0);
            let mut v = pseudo_random_vec(fnv(&format!("x{i}")), 256);
            if t.starts_with("yy") {
                let noise = pseudo_random_vec(fnv(&format!("noise{i}")), 256);
                v.iter_mut().zip(&noise).for_each(|(v, n)| *v += 0.35 * n);
            }
            l2_normalize(&mut v);
            out.extend(v);
        }
        progress(texts.len(), texts.len());
        Ok(out)
    }
}

#[test]
fn lsh_finds_planted_pairs_and_only_compares_few() {
    let n = 400;
    let passages: Vec<Passage> = (0..40).map(|i| passage(&format!("p{i}"), "", &format!("t{i}"))).collect();
    let triples: Vec<Triple> =
        (0..n).map(|i| Triple::new(&format!("xx{i}"), "r", &format!("yy{i}"), (i % 40) as u32)).collect();
    let config = GraphConfig::default();
    assert_eq!(config.synonym_search, SynonymSearch::Lsh);
    let mut b = GraphBuilder::new(config.clone()).unwrap();
    b.add_passages(0, &passages, &triples).unwrap();
    b.embed(&PlantedEmbedder, &mut |_, _| {}).unwrap();
    let stats = b.link_synonyms(&mut |_, _| {}).unwrap();
    let g = b.finish().unwrap();
    let arcs = synonym_arcs(&g);
    // Every planted pair, and nothing else (the random pairs are far below 0.8).
    let want = brute_force_synonyms(&g, &config);
    assert_eq!(want.len(), n);
    assert_eq!(arcs, want);
    for (&(a, b), _) in &arcs {
        let name = |id: u32| match g.node(id) {
            Some(NodeRef::Entity { key, .. }) => key.to_string(),
            _ => String::new(),
        };
        assert_eq!(name(a)[2..], name(b)[2..], "planted partners share the index");
    }
    // Full cosines: a small share of the 800·799/2 pairs.
    assert_eq!(stats.pairs, 800 * 799 / 2);
    assert!(stats.exact >= n as u64 && stats.exact < stats.pairs / 20, "{stats:?}");
    assert_eq!(stats.above_threshold, n as u64);
}

#[test]
fn lsh_edges_are_true_cosines_and_extending_equals_a_rebuild() {
    // The 1100 clustered entities of the blocked test, now with the LSH search.
    let words =
        ["Kestrel", "Lumen", "Marrow", "Nadir", "Osprey", "Pellucid", "Quarry", "Rune", "Sable", "Tarn"];
    let names: Vec<String> = (0..1100).map(|i| format!("{} {}", words[i % 10], i / 10)).collect();
    let passages: Vec<Passage> = (0..20).map(|i| passage(&format!("p{i}"), "", &format!("t{i}"))).collect();
    let triples: Vec<Triple> = names
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| Triple::new(&pair[0], "r", &pair[1], (i % 20) as u32))
        .collect();
    let e = ClusterEmbedder { dim: 128, noise: 0.45 };
    let config = GraphConfig { synonym_top_k: 5, synonym_weight: 2.0, ..GraphConfig::default() };
    let whole = build(config.clone(), &passages, &triples, &e);
    let syn = synonym_arcs(&whole);
    let exact = brute_force_synonyms(&whole, &config);
    let v = whole.entity_vectors();
    let ents = whole.entity_nodes();
    let ordinal = |id: u32| ents.iter().position(|&x| x == id).unwrap();
    for (&(a, b), &w) in &syn {
        let c = crate::embed::dot(v.row(ordinal(a)).unwrap(), v.row(ordinal(b)).unwrap());
        assert!(c >= config.synonym_threshold, "({a}, {b}): cosine {c}");
        assert_eq!(w, 2.0 * c, "({a}, {b})");
    }
    let found = syn.keys().filter(|k| exact.contains_key(k)).count();
    assert!(exact.len() > 1000 && found as f64 >= 0.98 * exact.len() as f64, "{found} of {}", exact.len());

    let first: Vec<Triple> = triples.iter().filter(|t| t.passage < 11).cloned().collect();
    let second: Vec<Triple> = triples.iter().filter(|t| t.passage >= 11).cloned().collect();
    let g = build(config, &passages[..11], &first, &e);
    let (g, _) = g.extend(11, &passages[11..], &second, &e, &mut |_, _, _| {}).unwrap();
    assert_eq!(fingerprint(&g), fingerprint(&whole));
}

#[test]
fn names_held_as_bags_give_the_edges_of_their_vectors() {
    // With the static embedder the entity names are held as bags of its rows and each vector
    // is made when needed; a graph that keeps f32 rows (fact_vectors_f32 keeps every vector)
    // must come out with the same synonym edges, bit for bit, for both searches, built whole
    // or extended.
    let e = crate::embed::StaticEmbedder::minilm().unwrap();
    let words = ["Kestrel Lake", "Lumen Street", "Marrow Hall", "Nadir Bay", "Osprey Road", "Rune Hill"];
    let names: Vec<String> = (0..360).map(|i| format!("{} {}", words[i % 6], i / 6)).collect();
    let passages: Vec<Passage> = (0..12).map(|i| passage(&format!("p{i}"), "", &format!("t{i}"))).collect();
    let triples: Vec<Triple> = names
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| Triple::new(&pair[0], "near", &pair[1], (i % 12) as u32))
        .collect();
    for search in [SynonymSearch::Lsh, SynonymSearch::Exact] {
        let config = GraphConfig { synonym_search: search, ..GraphConfig::default() };
        let bags = build(config.clone(), &passages, &triples, &e);
        let rows = build(GraphConfig { fact_vectors_f32: true, ..config.clone() }, &passages, &triples, &e);
        assert!(bags.entity_vectors().is_empty());
        assert_eq!(bags.token_bags().len(BagSet::Entities), names.len());
        assert_eq!(rows.entity_vectors().len(), names.len());
        assert_eq!((bags.embedded_entities(), bags.entity_dim()), (names.len(), e.dim()));
        for o in 0..names.len() {
            let made = bags.entity_vector(o).unwrap();
            let kept = rows.entity_vectors().row(o).unwrap();
            assert!(made.iter().zip(kept).all(|(a, b)| a.to_bits() == b.to_bits()), "entity {o}");
        }
        assert_eq!(bags.entity_vector(names.len()), None);
        let syn = synonym_arcs(&bags);
        assert!(syn.len() > 100, "{search:?}: {} synonym edges", syn.len());
        let bits = |m: &BTreeMap<(u32, u32), f32>| m.iter().map(|(k, w)| (*k, w.to_bits())).collect::<Vec<_>>();
        assert_eq!(bits(&syn), bits(&synonym_arcs(&rows)), "{search:?}");
        // Extending a graph held as bags gives the graph one build gives.
        let first: Vec<Triple> = triples.iter().filter(|t| t.passage < 5).cloned().collect();
        let second: Vec<Triple> = triples.iter().filter(|t| t.passage >= 5).cloned().collect();
        let g = build(config, &passages[..5], &first, &e);
        let (g, _) = g.extend(5, &passages[5..], &second, &e, &mut |_, _, _| {}).unwrap();
        assert_eq!(fingerprint(&g), fingerprint(&bags), "{search:?}");
    }
}

#[test]
fn the_lists_keep_no_spare_room_after_the_build() {
    // Triples add to the fact table and to each entity's and passage's lists one id at a time;
    // once embedded (before the synonym kNN) every list holds exactly its ids, built whole or
    // extended, and the graph is the same as before the lists were shrunk (the other tests).
    let (passages, triples) = generated();
    let e = crate::embed::StaticEmbedder::minilm().unwrap();
    let whole = build(GraphConfig::default(), &passages, &triples, &e);
    let first: Vec<Triple> = triples.iter().filter(|t| t.passage < 10).cloned().collect();
    let second: Vec<Triple> = triples.iter().filter(|t| t.passage >= 10).cloned().collect();
    let part = build(GraphConfig::default(), &passages[..10], &first, &e);
    let (extended, _) = part.extend(10, &passages[10..], &second, &e, &mut |_, _, _| {}).unwrap();
    for g in [&whole, &extended] {
        let s = &g.store;
        assert!(s.facts.len() > 50, "{} facts", s.facts.len());
        assert_eq!(s.facts.capacity(), s.facts.len());
        assert!(s.facts.iter().all(|f| f.passages.capacity() == f.passages.len()));
        for lists in [&s.entity_passages, &s.entity_facts, &s.passage_entities, &s.passage_facts] {
            assert_eq!(lists.capacity(), lists.len());
            assert!(lists.iter().all(|l| l.capacity() == l.len()));
        }
        assert!(s.facts.iter().all(|f| f.text.capacity() <= f.text.len() + 2));
    }
    assert_eq!(fingerprint(&whole), fingerprint(&extended));
}

#[test]
fn facts_and_entities_stated_again_after_the_build_are_found_in_the_remade_lookups() {
    // The entity and fact lookups are emptied once the build's triples are in. A passage added
    // later states t3's fact again ("john lennon" born in "liverpool", written differently) and
    // a new one: the first joins that fact's passages, the second is a new fact with one new
    // entity, as in one whole build.
    let (passages, triples) = beatles();
    let e = beatles_embedder();
    let g = build(GraphConfig::default(), &passages, &triples, &e);
    assert!(g.store.fact_by_key.is_empty());
    let facts = g.facts().len();
    let g_before = g.clone();
    let born = g.facts().iter().position(|f| f.relation == "born in").unwrap();
    let more =
        vec![passage("p4", "Lennon", "John Lennon was born in Liverpool, where he met Paul McCartney.")];
    let new_triples = vec![
        Triple::new("john  lennon", "born in", "Liverpool.", 4),
        Triple::new("John Lennon", "met", "Paul McCartney", 4),
    ];
    let (g2, _) = g.extend(4, &more, &new_triples, &e, &mut |_, _, _| {}).unwrap();
    assert_eq!(g2.facts().len(), facts + 1);
    let p4 = g2.passage_node(4).unwrap();
    assert_eq!(g2.facts()[born].passages.last(), Some(&p4));
    assert_eq!(g2.facts()[born].passages.len(), 3);
    assert_eq!(g2.facts()[facts].text, "John Lennon met Paul McCartney");
    assert!(g2.store.fact_by_key.is_empty() && g2.store.entity_by_key.is_empty());
    // "john  lennon" is the entity John Lennon; Paul McCartney is the one new entity.
    assert_eq!(g2.store.entity_keys.len(), g_before.store.entity_keys.len() + 1);
    // Every entity is found from its name and from its key, through the sorted order alone.
    for g in [&g_before, &g2] {
        for (o, (name, key)) in g.store.entity_names.iter().zip(&g.store.entity_keys).enumerate() {
            let node = g.store.entity_nodes[o];
            assert_eq!((g.entity_id(name), g.entity_id(key)), (Some(node), Some(node)), "{name}");
        }
        assert_eq!(g.entity_id("Ringo Starr"), None);
        assert_eq!(g.entity_id("!!!"), None);
    }
    let all_passages: Vec<Passage> = passages.iter().chain(&more).cloned().collect();
    let mut all_triples = triples.clone();
    all_triples.extend(new_triples.iter().cloned());
    let whole = build(GraphConfig::default(), &all_passages, &all_triples, &e);
    assert_eq!(fingerprint(&g2), fingerprint(&whole));
}
