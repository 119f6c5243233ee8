//! The knowledge graph (docs/architecture.md, module `graph`; docs/method/spec.md §1; HippoRAG 2 §3, CatRAG §3.1).
//!
//! Passages and their OpenIE [`Triple`]s become one undirected, weighted graph:
//!
//! - **entity nodes** V_E: one per distinct normalised subject/object phrase
//!   ([`normalize_entity`]), keeping the first surface form seen as its display name;
//! - **passage nodes** V_P: one per distinct passage; exact duplicates (same title and text)
//!   collapse into one node that keeps all their corpus indices;
//! - **relation edges** subject—object: +1 for every fact that links them, per passage node that
//!   states it (accumulates; see "Facts" below);
//! - **synonym edges** entity—entity: cosine ≥ [`GraphConfig::synonym_threshold`] (0.8) among
//!   each entity's [`GraphConfig::synonym_top_k`] (100) nearest neighbours, weight
//!   [`GraphConfig::synonym_weight`] (1.0; CatRAG's code uses 3.0) × cosine. An edge exists when
//!   either end has the other in its top-k list. Entities whose key has fewer than
//!   [`GraphConfig::synonym_min_alnum`] (3) letters/digits, or whose vector is zero, take no part;
//! - **context edges** passage—entity: weight [`GraphConfig::context_weight`] (1.0) for every
//!   entity that appears in a fact of the passage.
//!
//! Every undirected edge is stored as two directed arcs in CSR form ([`CsrView`]): `u32`
//! offsets (length nodes + 1), `u32` targets and `f32` weights, plus one [`EdgeType`] byte per
//! arc. Two entities may be joined by both a relation and a synonym edge: those are two arcs
//! each way, which a PPR solver simply adds. Arcs of a node are sorted by (target, type).
//!
//! **Facts.** Each distinct (subject node, normalised relation, object node) is one [`Fact`],
//! with its text `"subject relation object"` (embedded, for CatRAG's fact scoring, docs/method/spec.md §3
//! channel A), its two entity nodes and the passage nodes that state it. A triple repeated in the
//! same passage node (including the copy in an exact duplicate passage) counts once, as HippoRAG
//! 2's `filter_invalid_triples` does; the same fact in two different passages counts twice. A
//! fact whose subject and object are the same entity adds no relation arc (no self-loops). A
//! triple whose subject or object normalises to the empty string is skipped.
//!
//! **Node ids** are assigned in creation order and never change when passages are added: within
//! each batch, passages are taken in order, each passage's node first, then the entities of its
//! triples (subject, then object) in the order the triples were given.
//!
//! **Building** ([`GraphBuilder`]): [`GraphBuilder::add_passages`] (cheap: nodes, facts,
//! relation and context edges), [`GraphBuilder::embed`] (entity and fact vectors, the long
//! step), [`GraphBuilder::link_synonyms`] (exact kNN among entity vectors, the other long step),
//! [`GraphBuilder::finish`] (the CSR). [`build_graph`] does all four.
//!
//! **Adding passages to a built graph** ([`Graph::into_builder`], then the same four steps, or
//! [`Graph::extend`]) embeds only the new entities and facts and compares only the new entities
//! with all entities: with n old and m new entities, m·(n + m/2) pairs instead of (n + m)²/2
//! (HippoRAG 2 recomputes every entity's neighbours on each insert). Each pair costs a 48-term
//! 16-bit integer bound, and the ~1% of pairs that pass it a full cosine
//! ([`GraphBuilder::link_synonyms`]).
//! Each entity's top-k list is kept, so a new entity displaces an old neighbour exactly as a
//! rebuild would: the result is the graph that building everything at once gives (same node
//! ids, edges and weights; tested), provided each batch's triples name passages of that batch
//! (a triple added later to an older passage gives the same graph up to node order). The CSR
//! is rebuilt from the edge lists, O(arcs · log degree): tens of milliseconds at 6k passages.
//!
//! **Measured** (`examples/graph_bench.rs`, 2wiki-6k with *stand-in* triples, not OpenIE: 46k
//! entities, 141k facts, static 256-d embedder; a 2-core machine shared with other jobs): the
//! one-shot build takes 5.5–6 s of CPU, 4.6–5 s of it the synonym kNN (10⁹ pairs); adding 100
//! passages takes about 0.2 s of CPU. The same kNN in wasm under Node takes 29 s without SIMD
//! and 11 s when built with `-C target-feature=+simd128`, and 0.85 s / 0.28 s for 100 passages.
//! Memory: 4·dim bytes per entity (`f32`, which the synonym kNN and the index file's derived
//! cosines need) plus dim bytes for their `i8` copy (anchoring), dim bytes per fact (the fact
//! vectors are kept only as `i8` rows unless [`GraphConfig::fact_vectors_f32`]), 9 bytes per arc
//! for the CSR; [`Graph::memory_breakdown`] lists every structure.

mod bags;
mod build;
mod csr;
mod knn;

mod persist;
mod quant;
#[cfg(test)]
mod tests;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::embed::VectorMatrix;
use crate::error::{Error, Result};
pub use crate::extract::Triple;

pub use crate::text::normalize::{alnum_count, collapse_whitespace, normalize_entity, normalize_relation};
pub use bags::{BagSet, BagVectors, TokenBags};
pub use build::{build_graph, AddSummary, BuildStep, GraphBuilder};
pub use knn::{
    lsh_hamming_limit, SynonymSearch, SynonymStats, LSH_BITS, LSH_MIN_DIM, LSH_MIN_THRESHOLD, LSH_TABLES,
};
pub use quant::{QuantizedRows, EXACT_TOP};

/// Settings of the graph (docs/method/spec.md §1). Serde names are the field names; every field has a
/// default, so `{}` is the default configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GraphConfig {
    /// Minimum cosine for a synonym edge. Default 0.8 (HippoRAG 2 `synonymy_edge_sim_threshold`).
    /// Must be finite and in [-1, 1].
    pub synonym_threshold: f32,
    /// Neighbours kept per entity for synonym edges (the k of the kNN). Default 100. 0 turns
    /// synonym edges off.
    pub synonym_top_k: usize,
    /// Synonym edge weight = this factor × cosine. Default 1.0 (docs/method/spec.md §1); CatRAG's code uses
    /// 3.0. Must be finite and ≥ 0.
    pub synonym_weight: f32,
    /// Entities whose normalised name has fewer letters/digits than this get no synonym edges.
    /// Default 3 (HippoRAG 2: more than 2).
    pub synonym_min_alnum: usize,
    /// Weight of each context edge passage—entity. Default 1.0 (HippoRAG 2). Finite, ≥ 0.
    pub context_weight: f32,
    /// How the synonym kNN finds its pairs: `"lsh"` (default; random-hyperplane LSH, then the
    /// full cosine on the candidates only: sub-quadratic, about 99.7% of the exact edges) or
    /// `"exact"` (every pair; quadratic). See [`SynonymSearch`].
    pub synonym_search: SynonymSearch,
    /// Keep the fact vectors in `f32` beside their `i8` rows (4 more bytes per dimension per
    /// fact: 48.7 MB on 2wiki-6k). With it, the best [`EXACT_TOP`] fact cosines and the minimum
    /// are those of the embedder's `f32` vectors bit for bit ([`QuantizedRows::cosines`]);
    /// without it (the default), they are exact for the stored `i8` rows and within their
    /// quantisation error (about 5·10⁻⁴) of the `f32` ones ([`QuantizedRows::cosines_of_rows`]):
    /// R@2, R@5 and FCR@5 identical on the dev folders (docs/method/speed.md §10). Default false
    /// (then not written, so the configuration's JSON is as it was before this field).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fact_vectors_f32: bool,
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            synonym_threshold: 0.8,
            synonym_top_k: 100,
            synonym_weight: 1.0,
            synonym_min_alnum: 3,
            context_weight: 1.0,
            synonym_search: SynonymSearch::default(),
            fact_vectors_f32: false,
        }
    }
}

impl GraphConfig {
    /// Check the ranges stated on each field.
    ///
    /// # Errors
    /// [`Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        let t = self.synonym_threshold;
        if !t.is_finite() || !(-1.0..=1.0).contains(&t) {
            return Err(Error::Config(format!("synonym_threshold must be in [-1, 1], got {t}")));
        }
        for (name, v) in [("synonym_weight", self.synonym_weight), ("context_weight", self.context_weight)] {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::Config(format!("{name} must be a finite number ≥ 0, got {v}")));
            }
        }
        Ok(())
    }
}

/// The kind of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// A normalised entity phrase (V_E).
    Entity,
    /// A distinct passage (V_P), possibly standing for several duplicate corpus passages.
    Passage,
}

/// The type of an arc, one byte per arc in the CSR ([`CsrView::edge_types`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum EdgeType {
    /// Entity—entity, from facts: weight = number of (fact, passage node) statements.
    Relation = 0,
    /// Entity—entity, from embeddings: weight = synonym_weight × cosine.
    Synonym = 1,
    /// Passage—entity: weight = context_weight.
    Context = 2,
}

impl EdgeType {
    /// The type with this byte value, if any.
    pub fn from_u8(b: u8) -> Option<EdgeType> {
        match b {
            0 => Some(EdgeType::Relation),
            1 => Some(EdgeType::Synonym),
            2 => Some(EdgeType::Context),
            _ => None,
        }
    }
}

/// A node as seen from outside: an entity's names or a passage node's corpus indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum NodeRef<'a> {
    /// An entity node.
    Entity {
        /// Display name: the first surface form seen, white space collapsed.
        name: &'a str,
        /// Normalised key ([`normalize_entity`]).
        key: &'a str,
    },
    /// A passage node.
    Passage {
        /// Corpus indices of the passages it stands for (more than one for exact duplicates),
        /// in the order they were added; the first is the canonical one.
        passages: &'a [u32],
    },
}

/// One distinct fact (triple) of the graph: CatRAG's fact table (docs/method/spec.md §3, channel A: facts
/// are scored by cosine to the query; a fact's entities are seeded; an entity's weight is divided
/// by the number of passages containing it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    /// Entity node id of the subject.
    pub subject: u32,
    /// Entity node id of the object.
    pub object: u32,
    /// The relation as first seen, white space collapsed (may be empty).
    pub relation: String,
    /// `"subject relation object"` from the first triple that stated it (white space collapsed):
    /// the text that is embedded (row `i` of [`Graph::fact_vectors`] is fact `i`).
    pub text: String,
    /// Passage node ids that state this fact, ascending, without repeats.
    pub passages: Vec<u32>,
}

/// Numbers of nodes and edges by type (for the page and the closing notes). Edges are undirected
/// (each is two arcs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphCounts {
    /// All nodes (entity + passage).
    pub nodes: usize,
    /// Entity nodes.
    pub entity_nodes: usize,
    /// Passage nodes (distinct passages).
    pub passage_nodes: usize,
    /// Corpus passages represented (passage nodes plus collapsed duplicates).
    pub passages: usize,
    /// Distinct facts.
    pub facts: usize,
    /// Relation edges.
    pub relation_edges: usize,
    /// Synonym edges.
    pub synonym_edges: usize,
    /// Context edges.
    pub context_edges: usize,
    /// Directed arcs in the CSR (2 × all edges).
    pub arcs: usize,
}

/// A borrowed view of the CSR arrays, what a PPR solver takes (docs/method/spec.md §2). For node `u`, its
/// arcs are `offsets[u]..offsets[u + 1]`; arc `a` goes to `targets[a]` with weight `weights[a]`
/// (> 0 unless a weight factor is 0) and type `edge_types[a]`.
#[derive(Debug, Clone, Copy)]
pub struct CsrView<'a> {
    /// Length nodes + 1, non-decreasing, `offsets[0] = 0`, last = number of arcs.
    pub offsets: &'a [u32],
    /// Target node of each arc.
    pub targets: &'a [u32],
    /// Weight of each arc (the static weight; per-query overlays multiply it).
    pub weights: &'a [f32],
    /// Type of each arc.
    pub edge_types: &'a [EdgeType],
}

impl<'a> CsrView<'a> {
    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of arcs.
    pub fn arc_count(&self) -> usize {
        self.targets.len()
    }

    /// The plain `(offsets, targets, weights)` triple.
    pub fn arrays(&self) -> (&'a [u32], &'a [u32], &'a [f32]) {
        (self.offsets, self.targets, self.weights)
    }

    /// Arc index range of node `u` (empty past the end).
    pub fn arcs_of(&self, u: u32) -> std::ops::Range<usize> {
        let u = u as usize;
        match (self.offsets.get(u), self.offsets.get(u + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }
}

/// Everything the graph knows apart from the CSR: shared by [`GraphBuilder`] (mutable) and
/// [`Graph`] (frozen).
#[derive(Debug, Clone, Default)]
struct Store {
    config: GraphConfig,
    /// Node id → (kind, ordinal within its kind).
    nodes: Vec<(NodeKind, u32)>,

    /// Entity ordinal → node id (row of `entity_vectors`).
    entity_nodes: Vec<u32>,
    entity_names: Vec<String>,
    entity_keys: Vec<String>,
    /// Normalised key → entity node id, for adding triples only: emptied once the build's
    /// additions are over and made again from `entity_keys` when passages are added later
    /// ([`Store::entity_lookup`]). Complete whenever it is not empty.
    entity_by_key: FxHashMap<String, u32>,
    /// Entity ordinals sorted by key (keys are unique): what [`Graph::entity_id`] searches, 4
    /// bytes per entity instead of a map holding a second copy of every key. Made by
    /// [`GraphBuilder::finish`] (and checked for repeated keys when a graph is read).
    entity_order: Vec<u32>,
    /// Entity ordinal → passage node ids containing it (ascending).
    entity_passages: Vec<Vec<u32>>,
    /// Entity ordinal → fact ids it is subject or object of (ascending).
    entity_facts: Vec<Vec<u32>>,

    /// Passage ordinal → node id.
    passage_nodes: Vec<u32>,
    /// Passage ordinal → corpus indices.
    passage_indices: Vec<Vec<u32>>,
    /// Passage ordinal → entity node ids it contains (ascending).
    passage_entities: Vec<Vec<u32>>,
    /// Passage ordinal → fact ids it states (ascending).
    passage_facts: Vec<Vec<u32>>,
    /// Corpus index → passage node id.
    passage_by_index: FxHashMap<u32, u32>,
    /// 128-bit content hash of (title, text) → passage node id.
    passage_by_hash: FxHashMap<u128, u32>,

    facts: Vec<Fact>,
    /// (subject node, normalised relation, object node) → fact id, for adding triples only:
    /// emptied once the build's additions are over and made again from [`Store::facts`] when
    /// passages are added later ([`Store::fact_lookup`]). Complete whenever it is not empty.
    fact_by_key: FxHashMap<(u32, String, u32), u32>,
    /// Unordered entity pair (low id, high id) → relation weight.
    relation_weights: FxHashMap<(u32, u32), f32>,

    /// Rows: embedded entities (a prefix of the entity ordinals).
    entity_vectors: VectorMatrix,
    /// Rows: embedded facts (a prefix of the fact ids), kept only as an `i8` copy with one
    /// scale per row ([`QuantizedRows`]): each row is quantised as soon as it is embedded.
    fact_vectors: QuantizedRows,
    /// The same rows in `f32`, kept only with [`GraphConfig::fact_vectors_f32`] (else empty).
    fact_vectors_f32: VectorMatrix,
    /// When the graph's embedder is the static one (and `fact_vectors_f32` is off): the
    /// embedded facts (a prefix of the fact ids) as bags of its table rows, in place of
    /// [`Store::fact_vectors`] (one of the two is empty), and the embedded entity names (a
    /// prefix of the entity ordinals) in place of [`Store::entity_vectors`] (then empty): the
    /// synonym kNN and the saved synonym lists make each vector from its bag when they need it
    /// ([`EntityRows`]), and [`Graph::nearest_entity`] scores the bags.
    bags: TokenBags,
    /// Entity ordinal → its top-k synonym candidates (entity ordinal, cosine), best first
    /// (cosine descending, ordinal ascending), all ≥ the threshold.
    neighbours: Vec<Vec<(u32, f32)>>,
    /// Entities whose kNN is done (a prefix of the entity ordinals).
    linked: usize,
}

/// CSR arrays (see [`CsrView`]).
#[derive(Debug, Clone, Default)]
struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    weights: Vec<f32>,
    edge_types: Vec<EdgeType>,
    relation_edges: usize,
    synonym_edges: usize,
    context_edges: usize,
    /// Checked once, the first time PPR runs on this CSR ([`Graph::ppr_graph`]): the arrays'
    /// validity and the stored out-weights, or why the arrays are not a valid PPR graph.
    ppr: std::sync::OnceLock<std::result::Result<crate::ppr::StaticOut, String>>,
}

/// A built knowledge graph: the node table, the fact table, entity and fact vectors and the CSR
/// (module docs). Immutable; to add passages, [`Graph::into_builder`] or [`Graph::extend`].
#[derive(Debug, Clone)]
pub struct Graph {
    store: Store,
    csr: Csr,
    /// The entity vectors' `i8` copy for anchoring ([`Graph::nearest_entity`]), made on first use.
    entity_quant: std::sync::OnceLock<QuantizedRows>,
}

impl Graph {
    /// The configuration it was built with.
    pub fn config(&self) -> &GraphConfig {
        &self.store.config
    }

    /// The CSR arrays, borrowed (docs/method/spec.md §2's input).
    pub fn csr(&self) -> CsrView<'_> {
        CsrView {
            offsets: &self.csr.offsets,
            targets: &self.csr.targets,
            weights: &self.csr.weights,
            edge_types: &self.csr.edge_types,
        }
    }

    /// The CSR as Personalized PageRank's symmetric input (docs/method/spec.md §2;
    /// [`crate::ppr::CsrGraph::new_symmetric`]: every edge is stored as two arcs of one weight),
    /// with the stored out-weights attached ([`crate::ppr::StaticOut`]). The arrays are checked
    /// and the out-weights summed once, on the first call (O(nodes + arcs)); later calls are O(1),
    /// so a query does not pay for either.
    ///
    /// # Errors
    /// [`Error::PprInput`] when the arrays are not a valid CSR graph (not expected: the graph
    /// builds them).
    pub fn ppr_graph(&self) -> Result<crate::ppr::CsrGraph<'_>> {
        let (offsets, targets, weights) =
            (&self.csr.offsets[..], &self.csr.targets[..], &self.csr.weights[..]);
        let pre = self.csr.ppr.get_or_init(|| {
            crate::ppr::CsrGraph::new_symmetric(offsets, targets, weights)
                .map(|g| crate::ppr::StaticOut::new(&g))
                .map_err(|e| e.to_string())
        });
        match pre {
            Ok(pre) => crate::ppr::CsrGraph::prechecked(offsets, targets, weights, true).with_static(pre),
            Err(why) => Err(Error::PprInput(why.clone())),
        }
    }

    /// Nodes and edges by type.
    pub fn counts(&self) -> GraphCounts {
        let s = &self.store;
        GraphCounts {
            nodes: s.nodes.len(),
            entity_nodes: s.entity_nodes.len(),
            passage_nodes: s.passage_nodes.len(),
            passages: s.passage_by_index.len(),
            facts: s.facts.len(),
            relation_edges: self.csr.relation_edges,
            synonym_edges: self.csr.synonym_edges,
            context_edges: self.csr.context_edges,
            arcs: self.csr.targets.len(),
        }
    }

    /// Number of nodes (entity + passage).
    pub fn node_count(&self) -> usize {
        self.store.nodes.len()
    }

    /// The kind of node `id`, `None` past the end.
    pub fn node_kind(&self, id: u32) -> Option<NodeKind> {
        self.store.nodes.get(id as usize).map(|&(k, _)| k)
    }

    /// Node `id`: an entity's names or a passage node's corpus indices; `None` past the end.
    pub fn node(&self, id: u32) -> Option<NodeRef<'_>> {
        self.store.node(id)
    }

    /// The entity node of a phrase, after normalisation ([`normalize_entity`]): `"The Beatles"`
    /// finds the node of `"beatles"`. `None` when there is none (or the phrase normalises to
    /// nothing).
    pub fn entity_id(&self, phrase: &str) -> Option<u32> {
        let key = normalize_entity(phrase);
        let s = &self.store;
        let at = s.entity_order.binary_search_by(|&o| s.entity_keys[o as usize].as_str().cmp(&key)).ok()?;
        s.entity_nodes.get(s.entity_order[at] as usize).copied()
    }

    /// The passage node standing for corpus passage `index` (duplicates share one).
    pub fn passage_node(&self, index: u32) -> Option<u32> {
        self.store.passage_by_index.get(&index).copied()
    }

    /// Corpus indices of passage node `node` (first = canonical); empty for an entity or an
    /// unknown id.
    pub fn passage_indices(&self, node: u32) -> &[u32] {
        self.store.passage_ordinal(node).map_or(&[], |p| &self.store.passage_indices[p])
    }

    /// Passage node ids containing entity `node` (its context edges), ascending; empty for a
    /// passage or an unknown id. Its length is CatRAG's |passages containing the entity|.
    pub fn passages_of(&self, node: u32) -> &[u32] {
        self.store.entity_ordinal(node).map_or(&[], |e| &self.store.entity_passages[e])
    }

    /// Entity node ids in passage node `node`, ascending; empty for an entity or an unknown id.
    pub fn entities_of(&self, node: u32) -> &[u32] {
        self.store.passage_ordinal(node).map_or(&[], |p| &self.store.passage_entities[p])
    }

    /// Fact ids in which entity `node` is subject or object, ascending (CatRAG's "target's
    /// context"); empty for a passage or an unknown id.
    pub fn facts_of_entity(&self, node: u32) -> &[u32] {
        self.store.entity_ordinal(node).map_or(&[], |e| &self.store.entity_facts[e])
    }

    /// Fact ids stated by passage node `node`, ascending; empty for an entity or an unknown id.
    pub fn facts_of_passage(&self, node: u32) -> &[u32] {
        self.store.passage_ordinal(node).map_or(&[], |p| &self.store.passage_facts[p])
    }

    /// The fact table; fact id = index.
    pub fn facts(&self) -> &[Fact] {
        &self.store.facts
    }

    /// Entity node ids in entity-ordinal order: row `i` of [`Graph::entity_vectors`] is the
    /// vector of node `entity_nodes()[i]`.
    pub fn entity_nodes(&self) -> &[u32] {
        &self.store.entity_nodes
    }

    /// Entity ordinal (row of [`Graph::entity_vectors`]) of entity node `node`.
    pub fn entity_ordinal(&self, node: u32) -> Option<usize> {
        self.store.entity_ordinal(node)
    }

    /// Passage node ids in passage-ordinal order (creation order).
    pub fn passage_nodes(&self) -> &[u32] {
        &self.store.passage_nodes
    }

    /// Entity vectors `[entities, dim]`, row-major, L2-normalised (from the embedder the graph was
    /// built with; the display names are embedded). Empty when the graph's embedder is the
    /// static one: the names are then held as bags of its rows ([`Graph::token_bags`]) and a
    /// vector is made when asked for ([`Graph::entity_vector`]; [`Graph::embedded_entities`]
    /// and [`Graph::entity_dim`] hold for both forms).
    pub fn entity_vectors(&self) -> &VectorMatrix {
        &self.store.entity_vectors
    }

    /// Fact vectors `[facts, dim]`: row `i` embeds [`Fact::text`] of fact `i`. Held only as
    /// an `i8` copy with one scale per row ([`QuantizedRows`], `max|xᵢ|/127`: 1 byte per
    /// dimension instead of 4); row `i` is `scale · entries` ([`QuantizedRows::row_f32`]),
    /// within `scale/2` of the embedder's vector in every dimension.
    pub fn fact_vectors(&self) -> &QuantizedRows {
        &self.store.fact_vectors
    }

    /// The facts ([`BagSet::Facts`]) and entity names ([`BagSet::Entities`]) as bags of the
    /// static embedder's table rows ([`TokenBags`]), which the graph keeps instead of
    /// [`Graph::fact_vectors`] and of an `i8` copy of the entity vectors when it was embedded
    /// with the static embedder (and [`GraphConfig::fact_vectors_f32`] is off); empty
    /// otherwise.
    pub fn token_bags(&self) -> &TokenBags {
        &self.store.bags
    }

    /// Dimension of the fact vectors, however they are held (0 before they are made).
    pub fn fact_dim(&self) -> usize {
        self.store.fact_dim()
    }

    /// Cosine of `query` with every fact vector, `[facts]` (CatRAG / HippoRAG 2 fact scoring,
    /// docs/method/spec.md §3), from the fact vectors' `i8` form ([`Graph::fact_vectors`]): an integer scan,
    /// with the best [`EXACT_TOP`] and the minimum scored again in `f32` against the stored rows
    /// ([`QuantizedRows::cosines_of_rows`]), so the seed facts and both ends of the min–max
    /// normalisation are exact for the stored vectors; each cosine is within the rows'
    /// quantisation error (`(s/2)·‖q‖₁`, about 5·10⁻⁴ typically) of the embedder's `f32`
    /// vectors. With [`GraphConfig::fact_vectors_f32`] the rows are scored again against the
    /// `f32` vectors instead ([`QuantizedRows::cosines`]): those cosines equal
    /// [`VectorMatrix::scores`] bit for bit. Empty without facts.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have the fact vectors' dimension.
    pub fn fact_cosines(&self, query: &[f32]) -> Result<Vec<f32>> {
        let bags = &self.store.bags;
        if bags.len(BagSet::Facts) > 0 {
            return bags.cosines(BagSet::Facts, query);
        }
        let m = &self.store.fact_vectors;
        if m.is_empty() {
            return Ok(Vec::new());
        }
        if query.len() != m.dim() {
            return Err(Error::Config(format!(
                "query vector has {} dimensions, the fact vectors {}",
                query.len(),
                m.dim()
            )));
        }
        let exact = &self.store.fact_vectors_f32;
        if exact.len() == m.len() {
            m.cosines(exact, query)
        } else {
            m.cosines_of_rows(query)
        }
    }

    /// Make now what the first search would otherwise make: the PPR view's checks and stored
    /// out-weights ([`Graph::ppr_graph`]) and the `i8` copy of the entity vectors
    /// ([`Graph::nearest_entity`]). O(nodes + arcs + vector entries), once per graph; later
    /// calls cost nothing. A CSR that fails its checks is reported by the searches, as before.
    pub fn prepare_search(&self) {
        let _ = self.ppr_graph();
        let entities = &self.store.entity_vectors;
        if !entities.is_empty() {
            self.entity_quant.get_or_init(|| QuantizedRows::new(entities));
        }
    }

    /// The entity vector most similar to `query` (row of [`Graph::entity_vectors`] and cosine),
    /// exactly as `entity_vectors().top_k(query, 1)` gives it (ties to the lower row), read from
    /// an `i8` copy of the entity vectors (quantised once, on the first call) with the rows
    /// that could be the best scored again in `f32` ([`QuantizedRows::best`]). `None` without
    /// entity vectors.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have the entity vectors' dimension.
    pub fn nearest_entity(&self, query: &[f32]) -> Result<Option<crate::embed::ScoredRow>> {
        if self.store.entities_as_bags() {
            return self.store.bags.best(BagSet::Entities, query);
        }
        let m = &self.store.entity_vectors;
        if m.is_empty() {
            return Ok(None);
        }
        self.entity_quant.get_or_init(|| QuantizedRows::new(m)).best(m, query)
    }

    /// Entities that have a vector, however the vectors are held (all of them in a finished
    /// graph; 0 when the graph was built without an embedder).
    pub fn embedded_entities(&self) -> usize {
        self.store.embedded_entities()
    }

    /// Dimension of the entity vectors, however they are held (0 before they are made).
    pub fn entity_dim(&self) -> usize {
        if self.store.entities_as_bags() { self.store.bags.dim() } else { self.store.entity_vectors.dim() }
    }

    /// Entity `e`'s vector (entity ordinal; `dim` floats, L2-normalised, the embedder's bits),
    /// however it is held: copied from [`Graph::entity_vectors`], or made from the name's bag
    /// of the static embedder's rows ([`TokenBags::vector_into`]). `None` for an ordinal
    /// without a vector.
    pub fn entity_vector(&self, e: usize) -> Option<Vec<f32>> {
        let s = &self.store;
        if s.entities_as_bags() {
            let mut out = vec![0.0f32; s.bags.dim()];
            return s.bags.vector_into(BagSet::Entities, e, &mut out).then_some(out);
        }
        s.entity_vectors.row(e).map(<[f32]>::to_vec)
    }

    /// Heap bytes held by each of the graph's structures, estimated from capacities (hash
    /// tables at one entry plus one control byte per bucket): `(name, bytes)` in a fixed order.
    /// What the page keeps of a graph; `cairn bench` and `examples/memory.rs` print it.
    pub fn memory_breakdown(&self) -> Vec<(&'static str, usize)> {
        let s = &self.store;
        let strings = |v: &[String]| std::mem::size_of_val(v) + v.iter().map(String::capacity).sum::<usize>();
        let lists =
            |v: &[Vec<u32>]| std::mem::size_of_val(v) + v.iter().map(|l| l.capacity() * 4).sum::<usize>();
        let map = |buckets: usize, entry: usize| buckets * (entry + 1);
        let vectors = |m: &VectorMatrix| m.len() * m.dim() * 4;
        let quant = |q: Option<&QuantizedRows>| q.map_or(0, QuantizedRows::heap_bytes);
        let facts = s.facts.capacity() * std::mem::size_of::<Fact>()
            + s.facts
                .iter()
                .map(|f| f.relation.capacity() + f.text.capacity() + f.passages.capacity() * 4)
                .sum::<usize>();
        let ppr = match self.csr.ppr.get() {
            Some(Ok(p)) => p.heap_bytes(),
            _ => 0,
        };
        vec![
            (
                "node table",
                s.nodes.capacity() * 8 + s.entity_nodes.capacity() * 4 + s.passage_nodes.capacity() * 4,
            ),
            ("entity names and keys", strings(&s.entity_names) + strings(&s.entity_keys)),
            (
                "entity lookup by key",
                map(s.entity_by_key.capacity(), std::mem::size_of::<(String, u32)>())
                    + s.entity_by_key.keys().map(String::capacity).sum::<usize>()
                    + s.entity_order.capacity() * 4,
            ),
            ("entity passages and facts", lists(&s.entity_passages) + lists(&s.entity_facts)),
            (
                "passage tables",
                lists(&s.passage_indices)
                    + lists(&s.passage_entities)
                    + lists(&s.passage_facts)
                    + map(s.passage_by_index.capacity(), 8)
                    + map(s.passage_by_hash.capacity(), 32),
            ),
            ("fact table", facts),
            (
                "fact lookup by key",
                map(s.fact_by_key.capacity(), std::mem::size_of::<((u32, String, u32), u32)>())
                    + s.fact_by_key.keys().map(|k| k.1.capacity()).sum::<usize>(),
            ),
            ("relation weights", map(s.relation_weights.capacity(), 12)),
            ("entity vectors f32", vectors(&s.entity_vectors)),
            ("entity vectors i8", quant(self.entity_quant.get())),
            ("fact vectors f32", vectors(&s.fact_vectors_f32)),
            ("fact vectors i8", s.fact_vectors.heap_bytes()),
            (
                "token rows of facts and names",
                s.bags.heap_bytes() - s.bags.heap_bytes_of(BagSet::Facts) - s.bags.heap_bytes_of(BagSet::Entities),
            ),
            ("fact token bags", s.bags.heap_bytes_of(BagSet::Facts)),
            ("entity token bags", s.bags.heap_bytes_of(BagSet::Entities)),
            (
                "synonym lists",
                s.neighbours.len() * std::mem::size_of::<Vec<(u32, f32)>>()
                    + s.neighbours.iter().map(|l| l.capacity() * 8).sum::<usize>(),
            ),
            (
                "CSR",
                self.csr.offsets.capacity() * 4
                    + self.csr.targets.capacity() * 4
                    + self.csr.weights.capacity() * 4
                    + self.csr.edge_types.capacity(),
            ),
            ("PPR layout and out-weights", ppr),
        ]
    }

    /// The synonym candidates kept for entity `node`: (entity node id, cosine), best first, at
    /// most `synonym_top_k`, all ≥ `synonym_threshold`. (A synonym edge exists when either end
    /// lists the other.) Empty for a passage or an unknown id.
    pub fn synonym_candidates(&self, node: u32) -> Vec<(u32, f32)> {
        self.store.entity_ordinal(node).map_or_else(Vec::new, |e| {
            self.store.neighbours[e].iter().map(|&(o, c)| (self.store.entity_nodes[o as usize], c)).collect()
        })
    }

    /// Weight of the relation edge between two entity nodes (0 when there is none).
    pub fn relation_weight(&self, a: u32, b: u32) -> f32 {
        self.store.relation_weights.get(&(a.min(b), a.max(b))).copied().unwrap_or(0.0)
    }

    /// Reopen the graph to add passages (module docs: only new entities are embedded and
    /// compared). Drops the CSR; moves everything else.
    pub fn into_builder(self) -> GraphBuilder {
        GraphBuilder::from_store(self.store)
    }
}

/// The entity vectors in whichever form the graph holds them: rows of a [`VectorMatrix`], or
/// the static embedder's bags of the names, made one at a time ([`BagVectors`]); both give the
/// same bits for the same names. Built from the two fields, so a caller can hold it beside a
/// mutable borrow of another field of the store.
pub(crate) enum EntityRows<'a> {
    Matrix(&'a VectorMatrix),
    Bags(BagVectors<'a>),
}

impl<'a> EntityRows<'a> {
    /// The bags when `vectors` is empty and `bags` holds entity names, else `vectors`.
    fn of(vectors: &'a VectorMatrix, bags: &'a TokenBags) -> Self {
        if vectors.is_empty() && bags.len(BagSet::Entities) > 0 {
            EntityRows::Bags(bags.vectors(BagSet::Entities))
        } else {
            EntityRows::Matrix(vectors)
        }
    }

    /// Entities with a vector.
    pub(crate) fn len(&self) -> usize {
        match self {
            EntityRows::Matrix(m) => m.len(),
            EntityRows::Bags(b) => b.len(),
        }
    }

    /// Dimension of the vectors.
    pub(crate) fn dim(&self) -> usize {
        match self {
            EntityRows::Matrix(m) => m.dim(),
            EntityRows::Bags(b) => b.dim(),
        }
    }

    /// Entity `e`'s vector: the stored row, or made into `scratch` (resized to `dim`).
    /// `e` must be below [`EntityRows::len`].
    #[inline]
    pub(crate) fn row<'s>(&'s self, e: u32, scratch: &'s mut Vec<f32>) -> &'s [f32] {
        match self {
            EntityRows::Matrix(m) => {
                let dim = m.dim();
                &m.as_slice()[e as usize * dim..(e as usize + 1) * dim]
            }
            EntityRows::Bags(b) => {
                scratch.resize(b.dim(), 0.0);
                b.vector_into(e as usize, scratch);
                scratch
            }
        }
    }

    /// True when entity `e`'s vector is the zero vector (for the bags, without making it).
    pub(crate) fn is_zero(&self, e: u32) -> bool {
        match self {
            EntityRows::Matrix(m) => {
                let dim = m.dim();
                crate::embed::is_zero(&m.as_slice()[e as usize * dim..(e as usize + 1) * dim])
            }
            EntityRows::Bags(b) => b.is_zero(e as usize),
        }
    }

    /// Entity `e`'s vector written into `out` (resized to `dim`), in either form.
    pub(crate) fn row_into(&self, e: u32, out: &mut Vec<f32>) {
        match self {
            EntityRows::Matrix(m) => {
                let dim = m.dim();
                out.clear();
                out.extend_from_slice(&m.as_slice()[e as usize * dim..(e as usize + 1) * dim]);
            }
            EntityRows::Bags(b) => {
                out.resize(b.dim(), 0.0);
                b.vector_into(e as usize, out);
            }
        }
    }

    /// All vectors, `[len × dim]` row-major: the stored rows, or every bag's vector made now.
    pub(crate) fn dense(&self) -> std::borrow::Cow<'a, [f32]> {
        match self {
            EntityRows::Matrix(m) => std::borrow::Cow::Borrowed(m.as_slice()),
            EntityRows::Bags(b) => {
                let dim = b.dim();
                let mut out = vec![0.0f32; b.len() * dim];
                for (e, row) in out.chunks_exact_mut(dim.max(1)).enumerate().take(b.len()) {
                    b.vector_into(e, row);
                }
                std::borrow::Cow::Owned(out)
            }
        }
    }
}

impl Store {
    /// Facts that have a vector (in either form: [`Store::fact_vectors`] or [`Store::bags`]).
    fn embedded_facts(&self) -> usize {
        self.fact_vectors.len() + self.bags.len(BagSet::Facts)
    }

    /// Dimension of the fact vectors in whichever form holds them (0 before any).
    fn fact_dim(&self) -> usize {
        if self.bags.len(BagSet::Facts) == 0 { self.fact_vectors.dim() } else { self.bags.dim() }
    }

    /// Entities that have a vector, in either form: rows of [`Store::entity_vectors`], or, when
    /// that is empty, bags of [`BagSet::Entities`] (a prefix of the entity ordinals).
    fn embedded_entities(&self) -> usize {
        if self.entity_vectors.is_empty() { self.bags.len(BagSet::Entities) } else { self.entity_vectors.len() }
    }

    /// The entity vectors in whichever form they are held.
    fn entity_rows(&self) -> EntityRows<'_> {
        EntityRows::of(&self.entity_vectors, &self.bags)
    }

    /// True when the entity names are held as bags only ([`Store::bags`]), with no
    /// [`Store::entity_vectors`] rows.
    fn entities_as_bags(&self) -> bool {
        self.entity_vectors.is_empty() && self.bags.len(BagSet::Entities) > 0
    }

    fn node(&self, id: u32) -> Option<NodeRef<'_>> {
        let &(kind, ord) = self.nodes.get(id as usize)?;
        let ord = ord as usize;
        Some(match kind {
            NodeKind::Entity => {
                NodeRef::Entity { name: &self.entity_names[ord], key: &self.entity_keys[ord] }
            }
            NodeKind::Passage => NodeRef::Passage { passages: &self.passage_indices[ord] },
        })
    }

    fn entity_ordinal(&self, node: u32) -> Option<usize> {
        match self.nodes.get(node as usize) {
            Some(&(NodeKind::Entity, o)) => Some(o as usize),
            _ => None,
        }
    }

    fn passage_ordinal(&self, node: u32) -> Option<usize> {
        match self.nodes.get(node as usize) {
            Some(&(NodeKind::Passage, o)) => Some(o as usize),
            _ => None,
        }
    }
}
