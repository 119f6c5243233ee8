//! Key-fact passage weight enhancement (CatRAG §3, "Key-Fact Passage Weight Enhancement";
//! docs/method/spec.md §3): context arcs from a seed fact's entity to a passage that states that fact are
//! strengthened, so the walk leaving the entity favours the passages holding the evidence. Zero
//! model calls.
//!
//! For every entity `e` of a seed fact and every passage node `p`, let `k(e, p)` be the number of
//! seed facts that mention `e` and are stated by `p`. The arc `e → p` (context type) gets the
//! multiplier `min(1 + β·k, 2·(1 + β))`: `1 + β` (3.5 at β = 2.5) for one key fact, as docs/method/spec.md
//! states; each further key fact in the same passage adds β again; and the total is capped at
//! `2·(1 + β)` (7.0), docs/method/spec.md's cap on any arc's boost. Only the entity → passage direction is
//! boosted (CatRAG's code updates the directed edge from the entity).
//!
//! The entities are those of all seed facts (CatRAG's code boosts every phrase of the top facts,
//! not only the entities kept as teleport seeds).
//!
//! Option [`super::CatragConfig::boost_preserve_mass`] (off by default) does what CatRAG's
//! released code does instead of a plain multiplication: it rescales all of `e`'s context arcs so
//! their total weight is unchanged, which moves the walk between `e`'s passages without taking
//! mass from `e`'s relation and synonym edges.

use rustc_hash::FxHashMap;

use crate::graph::{EdgeType, Graph};

use super::seeds::ScoredFact;

/// The arc `from → to` of type `kind`, by binary search (a node's arcs are sorted by (target,
/// type), [`crate::graph`] module docs).
pub(crate) fn find_arc(graph: &Graph, from: u32, to: u32, kind: EdgeType) -> Option<usize> {
    let csr = graph.csr();
    let range = csr.arcs_of(from);
    let start = range.start;
    let slice_t = &csr.targets[range.clone()];
    let slice_k = &csr.edge_types[range];
    let pos = slice_t.partition_point(|&t| t < to);
    (pos..slice_t.len()).take_while(|&i| slice_t[i] == to).find(|&i| slice_k[i] == kind).map(|i| start + i)
}

/// One boosted context arc.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boost {
    /// Arc index (`entity → passage`, context type).
    pub arc: u32,
    /// The entity.
    pub entity: u32,
    /// The passage node.
    pub passage: u32,
    /// `k(e, p)`: seed facts of `e` stated by `p`.
    pub key_facts: u32,
    /// The multiplier put on the arc (after the cap, and after rescaling when
    /// `preserve_mass`; rescaled arcs with `key_facts == 0` appear too in that mode).
    pub multiplier: f32,
}

/// The key-fact boosts for `facts` (module docs), in (entity first-seen, passage) order.
pub fn key_fact_boosts(graph: &Graph, facts: &[ScoredFact], beta: f64, preserve_mass: bool) -> Vec<Boost> {
    let cap = 2.0 * (1.0 + beta);
    // entity → (passage → k), entities in first-seen order.
    let mut order: Vec<u32> = Vec::new();
    let mut counts: FxHashMap<u32, FxHashMap<u32, u32>> = FxHashMap::default();
    for f in facts {
        let Some(fact) = graph.facts().get(f.fact as usize) else { continue };
        let ends =
            if fact.subject == fact.object { vec![fact.subject] } else { vec![fact.subject, fact.object] };
        for e in ends {
            let per = counts.entry(e).or_insert_with(|| {
                order.push(e);
                FxHashMap::default()
            });
            for &p in &fact.passages {
                *per.entry(p).or_insert(0) += 1;
            }
        }
    }
    let csr = graph.csr();
    let mut out = Vec::new();
    for e in order {
        let Some(per) = counts.get(&e) else { continue };
        let mut passages: Vec<(u32, u32)> = per.iter().map(|(&p, &k)| (p, k)).collect();
        passages.sort_unstable();
        let mult = |k: u32| (1.0 + beta * f64::from(k)).min(cap);
        if !preserve_mass {
            for (p, k) in passages {
                if let Some(a) = find_arc(graph, e, p, EdgeType::Context) {
                    out.push(Boost {
                        arc: a as u32,
                        entity: e,
                        passage: p,
                        key_facts: k,
                        multiplier: mult(k) as f32,
                    });
                }
            }
            continue;
        }
        // Preserve the total context weight of e: every context arc of e is rescaled.
        let mut arcs: Vec<(usize, u32, u32, f64)> = Vec::new(); // (arc, passage, k, raw new weight)
        let (mut before, mut after) = (0.0f64, 0.0f64);
        for a in csr.arcs_of(e) {
            if csr.edge_types[a] != EdgeType::Context {
                continue;
            }
            let p = csr.targets[a];
            let k = per.get(&p).copied().unwrap_or(0);
            let w = f64::from(csr.weights[a]);
            let m = if k > 0 { mult(k) } else { 1.0 };
            before += w;
            after += w * m;
            arcs.push((a, p, k, m));
        }
        if after <= 0.0 || !arcs.iter().any(|x| x.2 > 0) {
            continue;
        }
        let scale = before / after;
        for (a, p, k, m) in arcs {
            out.push(Boost {
                arc: a as u32,
                entity: e,
                passage: p,
                key_facts: k,
                multiplier: (m * scale) as f32,
            });
        }
    }
    out
}
