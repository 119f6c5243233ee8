//! Building and extending the graph: [`GraphBuilder`] and [`build_graph`] (module docs of
//! [`super`]; docs/method/spec.md §1; HippoRAG 2 §3 indexing).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::knn::{self, SynonymStats};
use super::{csr, BagSet, Fact, TokenBags, Graph, GraphConfig, NodeKind, QuantizedRows, Store, Triple};
use crate::corpus::Passage;
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::text::normalize::{collapse_whitespace, normalize_entity, normalize_relation};

/// Texts handed to [`Embedder::embed_batch`] per call in [`GraphBuilder::embed`], when a graph
/// is built and when an index file's graph is read: large enough that the embedder's per-batch
/// word cache is warm for most of a batch (entity names and fact texts repeat words), small
/// enough that a batch's `f32` rows (8,192 × 256 × 4 bytes = 8 MB with the static embedder) stay
/// a small part of the page's memory, which never shrinks; the fact rows are quantised batch by
/// batch. Progress comes from the embedder within a batch.
const EMBED_CHUNK: usize = 8192;

/// What [`GraphBuilder::add_passages`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddSummary {
    /// Passages of the batch (each now maps to a passage node).
    pub passages: usize,
    /// Of those, exact duplicates (same title and text) of a passage already in the graph or
    /// earlier in the batch: they joined its node.
    pub duplicate_passages: usize,
    /// New passage nodes.
    pub new_passage_nodes: usize,
    /// New entity nodes.
    pub new_entities: usize,
    /// New distinct facts.
    pub new_facts: usize,
    /// Triples that added a statement (a fact in a passage node it was not yet in).
    pub triples_used: usize,
    /// Triples that repeated a fact already stated in the same passage node (ignored).
    pub triples_repeated: usize,
    /// Triples whose subject or object normalises to the empty string (ignored).
    pub triples_empty: usize,
}

/// Which long step a [`build_graph`] / [`Graph::extend`] progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildStep {
    /// Embedding entity names and fact texts ([`GraphBuilder::embed`]).
    Embedding,
    /// Synonym kNN ([`GraphBuilder::link_synonyms`]).
    Synonyms,
}

/// Builds a [`Graph`] in steps, and extends one ([`Graph::into_builder`]).
///
/// Order: [`add_passages`](GraphBuilder::add_passages) (any number of times), then
/// [`embed`](GraphBuilder::embed), [`link_synonyms`](GraphBuilder::link_synonyms),
/// [`finish`](GraphBuilder::finish). A failed `add_passages`, `embed` or `link_synonyms` leaves
/// the builder usable: `add_passages` checks everything before changing anything, and `embed` /
/// `link_synonyms` resume where they stopped when called again.
#[derive(Debug, Clone)]
pub struct GraphBuilder {
    pub(super) store: Store,
}

/// FNV-1a 128 of (title, 0xFF, text): the identity of a passage for duplicate collapsing. 0xFF
/// never occurs in UTF-8, so ("ab", "c") and ("a", "bc") differ. Stable across platforms and
/// Rust versions.
pub(super) fn passage_hash(title: &str, text: &str) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013B;
    let mut h = OFFSET;
    for &b in title.as_bytes().iter().chain(std::iter::once(&0xFFu8)).chain(text.as_bytes()) {
        h ^= u128::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// Insert `x` into the ascending `v` unless present; true when inserted.
fn insert_sorted(v: &mut Vec<u32>, x: u32) -> bool {
    match v.binary_search(&x) {
        Ok(_) => false,
        Err(pos) => {
            v.insert(pos, x);
            true
        }
    }
}

/// `"subject relation object"` from a triple's surface forms, white space collapsed, without a
/// double space when the relation is empty.
fn fact_text(t: &Triple) -> String {
    join_fact_text(
        &collapse_whitespace(&t.subject),
        &collapse_whitespace(&t.relation),
        &collapse_whitespace(&t.object),
    )
}

/// Entity ordinals `0..keys.len()` sorted by their keys (byte order). O(n log n) comparisons.
pub(super) fn entity_order(keys: &[String]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
    order
}

/// `subject`, `relation` and `object` joined by single spaces, empty parts left out: a fact's
/// text from its parts, sized exactly (the fact table holds one per fact). A saved graph
/// stores a fact's text only where it differs from this join of its entities' names.
pub(super) fn join_fact_text(subject: &str, relation: &str, object: &str) -> String {
    let mut out = String::with_capacity(subject.len() + relation.len() + object.len() + 2);
    for p in [subject, relation, object].into_iter().filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(p);
    }
    out
}

impl GraphBuilder {
    /// An empty builder.
    ///
    /// # Errors
    /// [`Error::Config`] when `config` is out of range ([`GraphConfig::validate`]).
    pub fn new(config: GraphConfig) -> Result<Self> {
        config.validate()?;
        Ok(GraphBuilder { store: Store { config, ..Store::default() } })
    }

    pub(super) fn from_store(store: Store) -> Self {
        GraphBuilder { store }
    }

    /// The configuration.
    pub fn config(&self) -> &GraphConfig {
        &self.store.config
    }

    /// Entity names and fact texts that have no vector yet (what [`GraphBuilder::embed`] will
    /// embed).
    pub fn pending_embeddings(&self) -> usize {
        let s = &self.store;
        (s.entity_nodes.len() - s.embedded_entities()) + (s.facts.len() - s.embedded_facts())
    }

    /// Entities not yet compared for synonyms (what [`GraphBuilder::link_synonyms`] will do).
    pub fn pending_links(&self) -> usize {
        self.store.entity_nodes.len() - self.store.linked
    }

    /// Add a batch of passages and their triples (docs/method/spec.md §1, nodes, relation and context
    /// edges): cheap, no embedding.
    ///
    /// `passages[i]` is corpus passage `first_index + i` (as [`crate::Corpus`] numbers them).
    /// Each `Triple::passage` must be a passage of this batch or one already in the graph (a
    /// triple may add facts to an older passage). A passage whose title and text equal those of a
    /// passage already present joins its node. Passages are processed in order: its node (if
    /// new), then its triples in the order given (triples of older passages first).
    ///
    /// # Errors
    /// [`Error::Passage`] when a passage index is already in the graph, the batch runs past
    /// `u32::MAX`, or a triple names a passage that is neither in the graph nor in the batch;
    /// [`Error::Config`] when the graph would exceed `u32::MAX` nodes. Nothing is changed then.
    pub fn add_passages(
        &mut self,
        first_index: u32,
        passages: &[Passage],
        triples: &[Triple],
    ) -> Result<AddSummary> {
        let s = &mut self.store;
        let n =
            u32::try_from(passages.len()).ok().and_then(|n| first_index.checked_add(n)).ok_or_else(|| {
                Error::Passage {
                    id: format!("#{first_index}"),
                    message: format!(
                        "a batch of {} passages starting here runs past index {}",
                        passages.len(),
                        u32::MAX
                    ),
                }
            })?;
        let batch = first_index..n;
        if let Some(i) = batch.clone().find(|i| s.passage_by_index.contains_key(i)) {
            return Err(Error::Passage {
                id: format!("#{i}"),
                message: "this passage index is already in the graph".into(),
            });
        }
        if let Some(t) = triples
            .iter()
            .find(|t| !batch.contains(&t.passage) && !s.passage_by_index.contains_key(&t.passage))
        {
            return Err(Error::Passage {
                id: format!("#{}", t.passage),
                message: format!(
                    "the triple ({:?}, {:?}, {:?}) refers to this passage index, which is neither in the graph nor in this batch",
                    t.subject, t.relation, t.object
                ),
            });
        }
        let most_nodes = s.nodes.len() as u64 + passages.len() as u64 + 2 * triples.len() as u64;
        if most_nodes > u64::from(u32::MAX) {
            return Err(Error::Config(format!(
                "the graph could grow past {} nodes with this batch; split the corpus",
                u32::MAX
            )));
        }

        // Triples of older passages first, then those of each batch passage in batch order.
        let mut order: Vec<(u32, usize)> = triples
            .iter()
            .enumerate()
            .map(|(i, t)| (if batch.contains(&t.passage) { t.passage - first_index + 1 } else { 0 }, i))
            .collect();
        order.sort_by_key(|&(slot, _)| slot); // stable: keeps the given order within a passage
        let mut summary = AddSummary { passages: passages.len(), ..AddSummary::default() };
        let mut next = 0;
        let run_triples = |s: &mut Store, slot: u32, next: &mut usize, summary: &mut AddSummary| {
            while let Some(&(sl, i)) = order.get(*next) {
                if sl != slot {
                    break;
                }
                *next += 1;
                let t = &triples[i];
                // Checked above: every triple's passage is known by now.
                if let Some(&node) = s.passage_by_index.get(&t.passage) {
                    s.add_triple(t, node, summary);
                }
            }
        };
        run_triples(s, 0, &mut next, &mut summary);
        for (offset, p) in passages.iter().enumerate() {
            let index = first_index + offset as u32;
            let hash = passage_hash(&p.title, &p.text);
            let node = match s.passage_by_hash.get(&hash) {
                Some(&node) => {
                    summary.duplicate_passages += 1;
                    if let Some(ord) = s.passage_ordinal(node) {
                        s.passage_indices[ord].push(index);
                    }
                    node
                }
                None => {
                    summary.new_passage_nodes += 1;
                    let node = s.nodes.len() as u32;
                    s.nodes.push((NodeKind::Passage, s.passage_nodes.len() as u32));
                    s.passage_nodes.push(node);
                    s.passage_indices.push(vec![index]);
                    s.passage_entities.push(Vec::new());
                    s.passage_facts.push(Vec::new());
                    s.passage_by_hash.insert(hash, node);
                    node
                }
            };
            s.passage_by_index.insert(index, node);
            run_triples(s, offset as u32 + 1, &mut next, &mut summary);
        }
        Ok(summary)
    }

    /// Embed every entity name and fact text that has no vector yet (docs/method/spec.md §1: "each triple
    /// (fact) is embedded too"; entity vectors feed the synonym kNN). Display names are embedded
    /// (the first surface form of each entity), and facts as [`Fact::text`].
    ///
    /// `progress(done, total)` counts texts (entities + facts to embed); it is called at least
    /// every 256 texts and once at the end. When this fails part-way, the texts embedded so far
    /// are kept and calling it again resumes.
    ///
    /// # Errors
    /// [`Error::Model`] when the embedder has 0 dimensions or returns the wrong number of floats;
    /// [`Error::Config`] when the graph already holds vectors of another dimension (another
    /// embedder); any error of [`Embedder::embed_batch`].
    pub fn embed(&mut self, embedder: &dyn Embedder, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        let s = &mut self.store;
        let total = (s.entity_nodes.len() - s.embedded_entities()) + (s.facts.len() - s.embedded_facts());
        if total == 0 {
            progress(0, 0);
            return Ok(());
        }
        let dim = embedder.dim();
        if dim == 0 {
            return Err(Error::Model { what: "embedder".into(), message: "it reports 0 dimensions".into() });
        }
        for have in [s.entity_vectors.dim(), s.fact_dim()] {
            if have != 0 && have != dim {
                return Err(Error::Config(format!(
                    "the graph holds {have}-dimensional vectors and this embedder gives {dim}: extend a graph with the embedder it was built with"
                )));
            }
        }
        if s.entity_vectors.dim() == 0 && s.entity_vectors.is_empty() {
            s.entity_vectors = VectorMatrix::new(dim);
        }
        let keep_f32 = s.config.fact_vectors_f32;
        // Facts and entity names as bags of the static embedder's rows (`TokenBags`) when that
        // is the embedder and the graph has no rows of either yet; a graph started with rows
        // keeps them, and one started with bags needs the static embedder again.
        let bags = match embedder.as_static() {
            Some(e) if !keep_f32 && s.fact_vectors.is_empty() && s.entity_vectors.is_empty() => Some(e),
            _ => None,
        };
        if bags.is_none() && !s.bags.is_empty() {
            return Err(Error::Config(
                "the graph holds its facts as the static embedder's tokens: extend it with the static embedder it was built with"
                    .into(),
            ));
        }
        if bags.is_some() {
            if s.bags.dim() == 0 && s.bags.is_empty() {
                s.bags = TokenBags::with_dim(dim);
            }
        } else if s.fact_vectors.dim() == 0 && s.fact_vectors.is_empty() {
            s.fact_vectors = QuantizedRows::with_dim(dim);
        }
        // Room for every row at once: no spare capacity, no copy while the rows grow.
        if bags.is_none() {
            s.entity_vectors.reserve_rows(s.entity_nodes.len() - s.entity_vectors.len());
            s.fact_vectors.reserve(s.facts.len() - s.fact_vectors.len());
        }
        if keep_f32 {
            if s.fact_vectors_f32.len() != s.fact_vectors.len() {
                return Err(Error::Config(
                    "fact_vectors_f32 is set but the graph holds its fact vectors in i8 only: rebuild it"
                        .into(),
                ));
            }
            if s.fact_vectors_f32.dim() == 0 {
                s.fact_vectors_f32 = VectorMatrix::new(dim);
            }
            s.fact_vectors_f32.reserve_rows(s.facts.len() - s.fact_vectors_f32.len());
        }
        // The lists give back their spare room (and the lookups by key go) before the bags and
        // vectors grow, so that these reuse it: the build's peak is the page's memory.
        s.shrink_lists();
        let mut done = 0;
        // one word cache for every chunk: facts are made of the names' words
        let mut cache = crate::embed::wordpiece::WordCache::new();
        for entities in [true, false] {
            loop {
                let (have, want) = if entities {
                    (s.embedded_entities(), s.entity_nodes.len())
                } else {
                    (s.embedded_facts(), s.facts.len())
                };
                if have >= want {
                    break;
                }
                let end = want.min(have + EMBED_CHUNK);
                let texts: Vec<&str> = if entities {
                    s.entity_names[have..end].iter().map(String::as_str).collect()
                } else {
                    s.facts[have..end].iter().map(|f| f.text.as_str()).collect()
                };
                // With the static embedder: facts and names as bags only (their vectors are made
                // from the bags when needed, with the embedder's bits).
                if let Some(e) = bags {
                    let set = if entities { BagSet::Entities } else { BagSet::Facts };
                    s.bags.extend_cached(set, e, &texts, &mut cache)?;
                    done += texts.len();
                    progress(done, total);
                    continue;
                }
                let rows =
                    embedder.embed_batch(&texts, &mut |d, _| progress(done + d.min(texts.len()), total))?;
                if rows.len() != texts.len() * dim {
                    return Err(Error::Model {
                        what: "embedder".into(),
                        message: format!(
                            "returned {} floats for {} texts of dimension {dim}",
                            rows.len(),
                            texts.len()
                        ),
                    });
                }
                if entities {
                    s.entity_vectors.extend(&rows)?;
                } else {
                    // Fact vectors are kept only as their `i8` copy (`Store::fact_vectors`).
                    s.fact_vectors.push_rows(&rows);
                    if keep_f32 {
                        s.fact_vectors_f32.extend(&rows)?;
                    }
                }
                done += texts.len();
                progress(done, total);
            }
        }
        if bags.is_some() {
            s.bags.shrink_to_fit();
        }
        Ok(())
    }

    /// Synonym kNN for the entities not yet linked (docs/method/spec.md §1, synonym edges; HippoRAG 2 §3
    /// "synonym edges"): every new eligible entity is compared with every eligible entity (old
    /// and new, each pair once), and each entity's top-k list (cosine ≥ threshold, best first,
    /// ties to the lower entity) is updated. Old pairs are never compared again.
    ///
    /// With [`GraphConfig::synonym_search`] = [`super::SynonymSearch::Lsh`] (the default) only
    /// the pairs that random-hyperplane LSH puts in a common bucket and whose sketches are close
    /// get the full cosine (sub-quadratic; about 99.7% of the exact edges on 2wiki-6k and
    /// hotpotqa-scale). The rest of this paragraph is the exact search
    /// ([`super::SynonymSearch::Exact`]).
    ///
    /// Cost: m·(n + m/2) pairs for n old and m new eligible entities. Each pair first gets an
    /// upper bound of its cosine, the dot product of the first 48 dimensions (quantised to 16-bit
    /// integers, 8 multiply-adds per SIMD instruction) plus the product of the two vectors'
    /// remaining norms (Cauchy–Schwarz), computed 32 new rows at a time over cache-sized tiles
    /// of older rows; only pairs whose bound reaches the threshold (0.84% of 840M pairs on
    /// 2wiki-6k with the static embedder) get the full `dim`-term cosine. The bound has a margin
    /// for the quantisation and float rounding, so the result is exact: the same as comparing
    /// every pair (tested against brute force). Vectors of 96 dimensions or fewer skip the bound.
    ///
    /// `progress(done, total)` is in units proportional to the pairs compared (not entities),
    /// called after every 512 new entities and at the end.
    ///
    /// # Errors
    /// [`Error::Config`] when some entity has no vector yet (call [`GraphBuilder::embed`] first).
    pub fn link_synonyms(&mut self, progress: &mut dyn FnMut(usize, usize)) -> Result<SynonymStats> {
        let s = &mut self.store;
        if s.embedded_entities() < s.entity_nodes.len() {
            return Err(Error::Config(format!(
                "{} entities have no vector yet: embed before linking synonyms",
                s.entity_nodes.len() - s.embedded_entities()
            )));
        }
        Ok(knn::link(s, progress))
    }

    /// Freeze into a [`Graph`]: build the CSR from the edge lists (relation weights, synonym
    /// lists, passage entities), O(arcs · log degree).
    ///
    /// # Errors
    /// [`Error::Config`] when texts are still to embed or entities still to link (call
    /// [`GraphBuilder::embed`] and [`GraphBuilder::link_synonyms`] first; the builder is consumed
    /// either way, so check [`GraphBuilder::pending_embeddings`] and
    /// [`GraphBuilder::pending_links`] when unsure), or when the graph has more than `u32::MAX`
    /// arcs.
    pub fn finish(mut self) -> Result<Graph> {
        let pending = self.pending_embeddings();
        if pending > 0 {
            return Err(Error::Config(format!(
                "{pending} entity names or facts have no vector yet: embed before finishing"
            )));
        }
        let links = self.pending_links();
        if links > 0 {
            return Err(Error::Config(format!(
                "{links} entities are not linked yet: link synonyms before finishing"
            )));
        }
        if self.store.entity_order.len() != self.store.entity_keys.len() {
            self.store.entity_order = entity_order(&self.store.entity_keys);
        }
        let csr = csr::build(&self.store)?;
        Ok(Graph { store: self.store, csr, entity_quant: std::sync::OnceLock::new() })
    }
}

impl Store {
    /// Give back the spare capacity of the fact table and of the per-entity and per-passage
    /// lists, which grew by doubling (a list of one id holds room for four) while triples were
    /// added. Done once the build's additions are over and before the synonym kNN, whose
    /// buffers then reuse the memory: in the page, whose memory never shrinks, that lowers the
    /// peak (docs/method/speed.md §17). O(facts + entities + passages).
    fn shrink_lists(&mut self) {
        // Only adding triples reads the entity and fact lookups (2.6 and 2.8 MB on 2wiki-6k); a
        // later addition makes them again, and queries search `entity_order`.
        self.entity_by_key = FxHashMap::default();
        self.fact_by_key = FxHashMap::default();
        self.facts.shrink_to_fit();
        for f in &mut self.facts {
            f.passages.shrink_to_fit();
        }
        let lists = [
            &mut self.entity_passages,
            &mut self.entity_facts,
            &mut self.passage_entities,
            &mut self.passage_facts,
        ];
        for lists in lists {
            lists.shrink_to_fit();
            lists.iter_mut().for_each(Vec::shrink_to_fit);
        }
    }

    /// The entity lookup by key, made from `entity_keys` when it was emptied
    /// ([`Store::shrink_lists`]): O(entities) then, O(1) otherwise.
    fn entity_lookup(&mut self) -> &mut FxHashMap<String, u32> {
        if self.entity_by_key.len() != self.entity_keys.len() {
            self.entity_by_key.clear();
            self.entity_by_key.reserve(self.entity_keys.len());
            for (key, &node) in self.entity_keys.iter().zip(&self.entity_nodes) {
                self.entity_by_key.insert(key.clone(), node);
            }
        }
        &mut self.entity_by_key
    }

    /// The fact lookup by (subject, normalised relation, object), made from the fact table when
    /// it was emptied ([`Store::shrink_lists`]) or never made (a loaded graph): O(facts) then,
    /// O(1) otherwise.
    fn fact_lookup(&mut self) -> &mut FxHashMap<(u32, String, u32), u32> {
        if self.fact_by_key.len() != self.facts.len() {
            self.fact_by_key.clear();
            self.fact_by_key.reserve(self.facts.len());
            for (i, f) in self.facts.iter().enumerate() {
                self.fact_by_key.insert((f.subject, normalize_relation(&f.relation), f.object), i as u32);
            }
        }
        &mut self.fact_by_key
    }

    /// Get or create the entity node of `phrase` (normalised key `key`, non-empty).
    fn entity(&mut self, key: String, phrase: &str) -> u32 {
        if let Some(&node) = self.entity_lookup().get(&key) {
            return node;
        }
        let node = self.nodes.len() as u32;
        self.nodes.push((NodeKind::Entity, self.entity_nodes.len() as u32));
        self.entity_nodes.push(node);
        self.entity_names.push(collapse_whitespace(phrase));
        self.entity_keys.push(key.clone());
        // The lookup was made complete by the `get` above; it stays so with this entry.
        self.entity_by_key.insert(key, node);
        self.entity_passages.push(Vec::new());
        self.entity_facts.push(Vec::new());
        self.neighbours.push(Vec::new());
        node
    }

    /// Add one triple stated by passage node `pnode` (module docs, "Facts").
    fn add_triple(&mut self, t: &Triple, pnode: u32, summary: &mut AddSummary) {
        let (skey, okey) = (normalize_entity(&t.subject), normalize_entity(&t.object));
        if skey.is_empty() || okey.is_empty() {
            summary.triples_empty += 1;
            return;
        }
        let before = self.entity_nodes.len();
        let subject = self.entity(skey, &t.subject);
        let object = self.entity(okey, &t.object);
        summary.new_entities += self.entity_nodes.len() - before;
        let key = (subject, normalize_relation(&t.relation), object);
        let fact = match self.fact_lookup().get(&key) {
            Some(&f) => f,
            None => {
                let f = self.facts.len() as u32;
                self.facts.push(Fact {
                    subject,
                    object,
                    relation: collapse_whitespace(&t.relation),
                    text: fact_text(t),
                    // most facts are stated by one passage
                    passages: Vec::with_capacity(1),
                });
                // The lookup was made complete by the `get` above; it stays so with this entry.
                self.fact_by_key.insert(key, f);
                summary.new_facts += 1;
                f
            }
        };
        if !insert_sorted(&mut self.facts[fact as usize].passages, pnode) {
            summary.triples_repeated += 1;
            return;
        }
        summary.triples_used += 1;
        let Some(p) = self.passage_ordinal(pnode) else { return };
        insert_sorted(&mut self.passage_facts[p], fact);
        if subject != object {
            *self.relation_weights.entry((subject.min(object), subject.max(object))).or_insert(0.0) += 1.0;
        }
        for e in [subject, object] {
            insert_sorted(&mut self.passage_entities[p], e);
            if let Some(o) = self.entity_ordinal(e) {
                insert_sorted(&mut self.entity_passages[o], pnode);
                insert_sorted(&mut self.entity_facts[o], fact);
            }
        }
    }
}

/// Build a graph in one call (docs/method/spec.md §1): [`GraphBuilder::new`], `add_passages(0, passages,
/// triples)`, [`GraphBuilder::embed`], [`GraphBuilder::link_synonyms`], [`GraphBuilder::finish`].
/// `passages[i]` is corpus passage `i`. `progress(step, done, total)` reports the two long steps.
///
/// # Errors
/// As the steps.
pub fn build_graph(
    config: GraphConfig,
    passages: &[Passage],
    triples: &[Triple],
    embedder: &dyn Embedder,
    progress: &mut dyn FnMut(BuildStep, usize, usize),
) -> Result<Graph> {
    let mut b = GraphBuilder::new(config)?;
    b.add_passages(0, passages, triples)?;
    b.embed(embedder, &mut |d, t| progress(BuildStep::Embedding, d, t))?;
    b.link_synonyms(&mut |d, t| progress(BuildStep::Synonyms, d, t))?;
    b.finish()
}

impl Graph {
    /// Add passages `first_index..first_index + passages.len()` and their triples to this graph
    /// (module docs, "Adding passages"): only the new entities and facts are embedded and only
    /// new entities are compared against all; the CSR is rebuilt from the edge lists. The result
    /// equals building everything at once.
    ///
    /// Consumes the graph; on error it is lost. To keep a graph safe from a failing embedder, use
    /// [`Graph::into_builder`] and the steps, which can be retried.
    ///
    /// # Errors
    /// As [`GraphBuilder::add_passages`], [`GraphBuilder::embed`], [`GraphBuilder::finish`].
    pub fn extend(
        self,
        first_index: u32,
        passages: &[Passage],
        triples: &[Triple],
        embedder: &dyn Embedder,
        progress: &mut dyn FnMut(BuildStep, usize, usize),
    ) -> Result<(Graph, AddSummary)> {
        let mut b = self.into_builder();
        let summary = b.add_passages(first_index, passages, triples)?;
        b.embed(embedder, &mut |d, t| progress(BuildStep::Embedding, d, t))?;
        b.link_synonyms(&mut |d, t| progress(BuildStep::Synonyms, d, t))?;
        Ok((b.finish()?, summary))
    }
}
