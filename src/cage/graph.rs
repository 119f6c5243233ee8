//! CAGE passage graphs (Qi et al., 2026, §3.1; docs/method/spec.md §4 "Passage graph" and
//! "Min-out-degree reweighting").
//!
//! A passage becomes a small directed graph whose nodes are its lemmatised content words and
//! whose edges carry one of [`RELATIONS`]. Cairn has no dependency parser, so the edges come from
//! the text pipeline's tags, chunks and pronoun resolution ([`crate::text::Pipeline`]) by the
//! documented heuristics of [`PassageGraph::build`].

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::text::{Antecedent, ChunkKind, Document, Upos, VerbForm};

/// The relation set, numbered: channel `r` of the adjacency tensor and weight matrix `W_r` of
/// the R-GCN. Channel 0 is the self-loop (`W_0 x_i`); 1–9 are syntactic relations, each edge
/// pointing from the head word to its dependent (messages flow dependent → head).
///
/// | r | name | heuristic |
/// |---|---|---|
/// | 0 | `self` | every node to itself |
/// | 1 | `nsubj` | verb → the clause's subject chunk head (the last free chunk before the verb) |
/// | 2 | `dobj` | verb → the first chunk head after it, before any preposition |
/// | 3 | `prep` | the content word before a preposition → the chunk head after it (all `prep_X` merged) |
/// | 4 | `amod` | chunk head → adjective, number or participle inside the chunk; word → adjective right after it |
/// | 5 | `compound` | chunk head → another noun or proper noun inside the chunk |
/// | 6 | `poss` | possessed head → possessor (`X's Y`, or a resolved possessive pronoun) |
/// | 7 | `appos` | chunk head → chunk head after a comma or an opening bracket (`Paris, France`) |
/// | 8 | `conj` | chunk → chunk or verb → verb joined by a coordinating conjunction |
/// | 9 | `cop` | subject head → the chunk head or adjective after a form of *be* |
pub const RELATIONS: [&str; 10] =
    ["self", "nsubj", "dobj", "prep", "amod", "compound", "poss", "appos", "conj", "cop"];

/// Number of adjacency channels (relations, self-loop included): `R + 1` in docs/method/spec.md's terms.
pub const NUM_RELATIONS: usize = RELATIONS.len();

/// Nodes kept per passage graph: the first 128 distinct content lemmas in text order (longer
/// passages lose their tail; HotpotQA/MuSiQue/2Wiki passages stay below this almost always).
pub const MAX_NODES: usize = 128;

const NSUBJ: u8 = 1;
const DOBJ: u8 = 2;
const PREP: u8 = 3;
const AMOD: u8 = 4;
const COMPOUND: u8 = 5;
const POSS: u8 = 6;
const APPOS: u8 = 7;
const CONJ: u8 = 8;
const COP: u8 = 9;

/// One typed, directed edge `source → target` of relation `relation` (1–9, see [`RELATIONS`])
/// with weight `weight` (1, or β_cage when it touches a min-out-degree node).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Edge {
    /// Head node index.
    pub source: u32,
    /// Dependent node index.
    pub target: u32,
    /// Relation index into [`RELATIONS`] (never 0: self-loops are implicit).
    pub relation: u8,
    /// Edge weight after reweighting.
    pub weight: f32,
}

/// A passage graph (CAGE §3.1): distinct lemmas as nodes, typed edges, and which nodes have the
/// minimum out-degree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassageGraph {
    /// Node labels: the lemma (proper nouns keep their case; a pronoun resolved to the title
    /// becomes the title).
    pub nodes: Vec<String>,
    /// Distinct edges (one per relation, source and target), sorted.
    pub edges: Vec<Edge>,
    /// Per node: whether its out-degree is the graph's minimum (CAGE's "factual end points").
    pub min_out_degree: Vec<bool>,
    /// The β_cage applied to those nodes' features and adjacent edges (1 = no reweighting).
    pub beta: f32,
}

#[derive(Clone, Copy, Debug)]
enum Unit {
    /// A noun phrase (its head's node).
    Np(u32),
    Verb(u32),
    Adj(u32),
    Be,
    Adp,
    Cconj,
    /// A comma or opening bracket.
    Comma,
    Other,
}

struct Builder {
    index: FxHashMap<String, u32>,
    nodes: Vec<String>,
    edges: Vec<(u8, u32, u32)>,
}

impl Builder {
    fn node(&mut self, label: &str) -> Option<u32> {
        let label = label.trim();
        if label.is_empty() {
            return None;
        }
        if let Some(&i) = self.index.get(label) {
            return Some(i);
        }
        if self.nodes.len() >= MAX_NODES {
            return None;
        }
        let i = self.nodes.len() as u32;
        self.nodes.push(label.to_string());
        self.index.insert(label.to_string(), i);
        Some(i)
    }

    fn edge(&mut self, relation: u8, source: Option<u32>, target: Option<u32>) {
        if let (Some(s), Some(t)) = (source, target) {
            if s != t {
                self.edges.push((relation, s, t));
            }
        }
    }
}

fn is_content(upos: Upos) -> bool {
    matches!(upos, Upos::Noun | Upos::Propn | Upos::Verb | Upos::Adj | Upos::Num)
}

impl PassageGraph {
    /// Build the graph of an analysed passage ([`crate::text::Pipeline::analyze`]) and apply
    /// min-out-degree reweighting with `beta` (CAGE §3.2; `beta = 1` turns it off).
    ///
    /// Nodes: every NOUN, PROPN, VERB, ADJ and NUM word that is not a stop word, by lemma; a
    /// resolved third-person pronoun stands for its antecedent (the antecedent chunk's head, or
    /// the passage title). One node per distinct lemma; at most [`MAX_NODES`].
    ///
    /// Edges, per sentence (see [`RELATIONS`] for the table): inside each chunk the head takes
    /// `amod`/`compound` edges to its modifiers and `poss` to a possessor before `'s` or to a
    /// resolved possessive pronoun; then the sentence is read left to right as a sequence of
    /// chunk heads, verbs, free adjectives, forms of *be*, prepositions, conjunctions and commas,
    /// and a chunk after a preposition attaches to the last content word (`prep`), after *be* to
    /// the subject (`cop`), after a conjunction to the last chunk (`conj`), after a comma to the
    /// last chunk (`appos`), after a verb to the verb (`dobj`); otherwise it becomes the subject,
    /// which every following verb of the sentence takes as `nsubj`. These are heuristics, not a
    /// parse: they give the R-GCN typed structure, not linguistically exact dependencies.
    ///
    /// Reweighting: the nodes whose out-degree (distinct relation edges, self-loop excluded)
    /// equals the minimum are marked; every edge with such a node at either end gets weight
    /// `beta` (others 1). Their features are multiplied by `beta` in [`PassageGraph::features`].
    /// A non-finite or non-positive `beta` is treated as 1.
    pub fn build(doc: &Document, beta: f32) -> PassageGraph {
        let mut b = Builder { index: FxHashMap::default(), nodes: Vec::new(), edges: Vec::new() };
        // Which chunk covers each word.
        let mut chunk_of: Vec<Option<usize>> = vec![None; doc.words.len()];
        for (k, c) in doc.chunks.iter().enumerate() {
            for w in c.words.clone() {
                if let Some(slot) = chunk_of.get_mut(w) {
                    *slot = Some(k);
                }
            }
        }
        let antecedent_node = |b: &mut Builder, a: Antecedent| -> Option<u32> {
            match a {
                Antecedent::Title => b.node(&doc.title),
                Antecedent::Chunk(k) => doc.chunks.get(k).and_then(|c| {
                    let w = doc.words.get(c.head)?;
                    if is_content(w.upos) {
                        b.node(doc.lemma(c.head))
                    } else {
                        None
                    }
                }),
            }
        };
        let word_node = |b: &mut Builder, i: usize| -> Option<u32> {
            let w = doc.words.get(i)?;
            if let Some(a) = doc.antecedent_of(i) {
                return antecedent_node(b, a);
            }
            if is_content(w.upos) && !w.is_stop {
                b.node(doc.lemma(i))
            } else {
                None
            }
        };
        // Chunk heads first (and their internal edges), in text order.
        let mut chunk_node: Vec<Option<u32>> = vec![None; doc.chunks.len()];
        for (k, c) in doc.chunks.iter().enumerate() {
            if c.kind == ChunkKind::Pronoun {
                chunk_node[k] = doc.antecedent_of(c.head).and_then(|a| antecedent_node(&mut b, a));
                continue;
            }
            // A possessive mark splits the chunk: possessor words before it, possessed after.
            let mark = c.words.clone().find(|&w| {
                doc.words.get(w).is_some_and(|x| x.upos == Upos::Part)
                    && matches!(doc.word_text(w), "'s" | "’s" | "'" | "’")
            });
            let head = word_node(&mut b, c.head);
            chunk_node[k] = head;
            let mut possessor_head = None;
            if let Some(m) = mark {
                // The possessor's head: its last nominal or number before the mark.
                let ph = (c.words.start..m).rev().find(|&w| {
                    doc.words.get(w).is_some_and(|x| matches!(x.upos, Upos::Noun | Upos::Propn | Upos::Num))
                });
                if let Some(ph) = ph {
                    possessor_head = word_node(&mut b, ph);
                    b.edge(POSS, head, possessor_head);
                }
            }
            for w in c.words.clone() {
                let Some(word) = doc.words.get(w) else { continue };
                if w == c.head {
                    continue;
                }
                let owner = match mark {
                    Some(m) if w < m => possessor_head,
                    _ => head,
                };
                if word.upos == Upos::Pron || word.upos == Upos::Det {
                    // A resolved possessive pronoun (`his`, `its`) is a possessor.
                    if let Some(a) = doc.antecedent_of(w) {
                        let p = antecedent_node(&mut b, a);
                        b.edge(POSS, head, p);
                    }
                    continue;
                }
                let n = word_node(&mut b, w);
                match word.upos {
                    Upos::Noun | Upos::Propn => b.edge(COMPOUND, owner, n),
                    Upos::Adj | Upos::Num | Upos::Verb => b.edge(AMOD, owner, n),
                    _ => {}
                }
            }
        }
        // Then each sentence as a sequence of units.
        for s in &doc.sentences {
            let mut units: Vec<Unit> = Vec::new();
            let mut i = s.words.start;
            while i < s.words.end {
                if let Some(k) = chunk_of.get(i).copied().flatten() {
                    let c = &doc.chunks[k];
                    units.push(chunk_node[k].map_or(Unit::Other, Unit::Np));
                    i = c.words.end.max(i + 1);
                    continue;
                }
                let Some(w) = doc.words.get(i) else { break };
                let text = doc.word_text(i);
                let unit = match w.upos {
                    Upos::Aux | Upos::Verb if doc.lemma(i) == "be" => {
                        // `was born`: a passive participle after be is the verb, not a copula.
                        let next_participle = doc
                            .words
                            .get(i + 1)
                            .is_some_and(|n| n.upos == Upos::Verb && n.verb_form == Some(VerbForm::Part));
                        if next_participle {
                            Unit::Other
                        } else {
                            Unit::Be
                        }
                    }
                    // A verb is a node even when it is a stop word (`has`, `did`).
                    Upos::Verb => b.node(doc.lemma(i)).map_or(Unit::Other, Unit::Verb),
                    // A main-verb auxiliary (`It has 2 million people`; not `has won`) is a verb
                    // node even though `have`/`do` are stop words.
                    Upos::Aux
                        if !doc.words.get(i + 1).is_some_and(|n| {
                            matches!(n.upos, Upos::Verb | Upos::Aux | Upos::Part | Upos::Adv)
                        }) =>
                    {
                        b.node(doc.lemma(i)).map_or(Unit::Other, Unit::Verb)
                    }
                    Upos::Adj => word_node(&mut b, i).map_or(Unit::Other, Unit::Adj),
                    Upos::Adp => Unit::Adp,
                    Upos::Cconj => Unit::Cconj,
                    Upos::Punct if matches!(text, "," | "(" | "–" | "—") => Unit::Comma,
                    _ => Unit::Other,
                };
                units.push(unit);
                i += 1;
            }
            let mut subject: Option<u32> = None;
            let mut last_np: Option<u32> = None;
            let mut last_verb: Option<u32> = None;
            let mut verb_open = false;
            let mut prev_content: Option<u32> = None;
            let (mut adp, mut cconj, mut comma, mut be) = (false, false, false, false);
            for u in units {
                match u {
                    Unit::Np(n) => {
                        if adp {
                            b.edge(PREP, prev_content, Some(n));
                        } else if be {
                            b.edge(COP, subject.or(last_np), Some(n));
                        } else if cconj && last_np.is_some() {
                            b.edge(CONJ, last_np, Some(n));
                        } else if comma && last_np.is_some() {
                            b.edge(APPOS, last_np, Some(n));
                        } else if verb_open {
                            b.edge(DOBJ, last_verb, Some(n));
                            verb_open = false;
                        } else {
                            subject = Some(n);
                        }
                        last_np = Some(n);
                        prev_content = Some(n);
                        (adp, cconj, comma, be) = (false, false, false, false);
                    }
                    Unit::Verb(v) => {
                        if cconj && last_verb.is_some() && !verb_open {
                            b.edge(CONJ, last_verb, Some(v));
                        }
                        b.edge(NSUBJ, Some(v), subject);
                        last_verb = Some(v);
                        verb_open = true;
                        prev_content = Some(v);
                        (adp, cconj, comma, be) = (false, false, false, false);
                    }
                    Unit::Adj(a) => {
                        if be {
                            b.edge(COP, subject.or(last_np), Some(a));
                        } else {
                            b.edge(AMOD, prev_content, Some(a));
                        }
                        prev_content = Some(a);
                        (adp, cconj, comma, be) = (false, false, false, false);
                    }
                    Unit::Be => {
                        be = true;
                        verb_open = false;
                    }
                    Unit::Adp => {
                        adp = true;
                        verb_open = false;
                    }
                    Unit::Cconj => cconj = true,
                    Unit::Comma => comma = true,
                    Unit::Other => {}
                }
            }
        }
        Self::finish(b.nodes, b.edges, beta)
    }

    /// A graph from given nodes and `(relation, source, target)` edges (duplicates and
    /// self-loops dropped, out-of-range ones ignored), reweighted with `beta` as in
    /// [`PassageGraph::build`]. For tests and for graphs made elsewhere.
    pub fn from_parts(nodes: Vec<String>, edges: &[(u8, u32, u32)], beta: f32) -> PassageGraph {
        let n = nodes.len() as u32;
        let kept: Vec<(u8, u32, u32)> = edges
            .iter()
            .copied()
            .filter(|&(r, s, t)| s < n && t < n && s != t && r >= 1 && (r as usize) < NUM_RELATIONS)
            .collect();
        Self::finish(nodes, kept, beta)
    }

    fn finish(nodes: Vec<String>, mut edges: Vec<(u8, u32, u32)>, beta: f32) -> PassageGraph {
        let beta = if beta.is_finite() && beta > 0.0 { beta } else { 1.0 };
        edges.sort_unstable();
        edges.dedup();
        let mut out_degree = vec![0usize; nodes.len()];
        for &(_, s, _) in &edges {
            out_degree[s as usize] += 1;
        }
        let min = out_degree.iter().copied().min().unwrap_or(0);
        let min_out_degree: Vec<bool> = out_degree.iter().map(|&d| d == min).collect();
        let edges = edges
            .into_iter()
            .map(|(relation, source, target)| {
                let touches = min_out_degree[source as usize] || min_out_degree[target as usize];
                Edge { source, target, relation, weight: if touches { beta } else { 1.0 } }
            })
            .collect();
        PassageGraph { nodes, edges, min_out_degree, beta }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node (a passage without content words).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The normalised adjacency of this graph, `[channels, n, n]` row-major for `n = self.len()`
    /// and `channels = merge.map_or(NUM_RELATIONS, |_| 2)`: entry `[r][i][j]` =
    /// `weight(i → j of relation r) / |N_r(i)|` with `N_r(i)` the targets of `i`'s `r`-edges
    /// (Schlichtkrull et al. 2018's `1/c_{i,r}`, counting edges so that β survives), and channel
    /// 0 the identity (self-loop). `merge = true` folds every relation into channel 1 (the plain
    /// GCN ablation: one relation type). Written into `out` at row stride `stride ≥ n`.
    pub fn adjacency_into(&self, merge: bool, stride: usize, out: &mut [f32]) {
        let channels = if merge { 2 } else { NUM_RELATIONS };
        let n = self.len();
        debug_assert!(stride >= n && out.len() >= channels * stride * stride);
        for i in 0..n {
            out[i * stride + i] = 1.0;
        }
        let mut counts = vec![0u32; channels * n];
        for e in &self.edges {
            let r = if merge { 1 } else { e.relation as usize };
            counts[r * n + e.source as usize] += 1;
        }
        for e in &self.edges {
            let r = if merge { 1 } else { e.relation as usize };
            let (s, t) = (e.source as usize, e.target as usize);
            let c = counts[r * n + s].max(1) as f32;
            out[r * stride * stride + s * stride + t] += e.weight / c;
        }
    }

    /// Per-node degrees for display: `(out, in)`.
    pub fn degrees(&self) -> Vec<(u32, u32)> {
        let mut d = vec![(0u32, 0u32); self.len()];
        for e in &self.edges {
            d[e.source as usize].0 += 1;
            d[e.target as usize].1 += 1;
        }
        d
    }
}
