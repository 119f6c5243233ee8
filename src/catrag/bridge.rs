//! Title bridges: the second hop of a multi-hop question through a passage's title entity.
//!
//! In HotpotQA and 2WikiMultihopQA (and in any encyclopaedic corpus) a passage's title is its
//! main entity, and the bridge of a two-hop question is an entity named in the first passage
//! whose own passage is titled by it ("the director of film A" → passage A names director X →
//! the passage titled X). The knowledge graph already holds the first half of that path (passage
//! A —context→ entity X); this module adds the second half at query time: each entity node is
//! mapped to the passage nodes whose title normalises to the entity's key ([`TitleIndex`], built
//! once per graph), and [`bridge_weights`] gives those passages teleport mass from the lexical
//! passage prior of the passages that name them. It is the lexical evidence of the query carried
//! one hop along the graph, as HippoRAG 2's PPR carries the dense passage prior (docs/method/spec.md §2–3),
//! but with a weight comparable to the evidence itself instead of the share that survives two
//! damped PPR steps through a passage's many entities.
//!
//! A bridged passage keeps part of its weight only when the query also points at it: its weight
//! is scaled by `floor + (1 − floor) × its own BM25 score ÷ the best`, so an unrelated passage
//! that happens to be titled by an entity of a top passage gets at most `floor` of the weight.

use std::collections::HashMap;

use crate::graph::{normalize_entity, Graph};

/// Entity node → the passage nodes titled by it, as positions in [`Graph::passage_nodes`]
/// (module docs), and every title's normalised key → the passage nodes it titles (for titles
/// named in the query, [`query_title_weights`]). Built once per graph.
#[derive(Debug, Clone, Default)]
pub struct TitleIndex {
    by_entity: HashMap<u32, Vec<u32>>,
    by_key: HashMap<String, Vec<u32>>,
    /// Words in the longest title key.
    max_words: usize,
}

/// A title without a trailing parenthesised qualifier: `"Nadja (film)"` → `"Nadja"`
/// (Wikipedia's disambiguation style). The title itself when nothing precedes the parenthesis.
pub fn title_entity_name(title: &str) -> &str {
    let t = title.trim();
    if t.ends_with(')') {
        if let Some(open) = t.rfind(" (") {
            let head = t[..open].trim_end();
            if !head.is_empty() {
                return head;
            }
        }
    }
    t
}

impl TitleIndex {
    /// Map every passage node of `graph` to the entity node its title names (exact normalised
    /// key of [`title_entity_name`] of the title, [`normalize_entity`]), if any. `title(i)` is
    /// the title of corpus passage `i`; a passage node standing for duplicates uses its first.
    pub fn build<'a>(graph: &Graph, title: impl Fn(u32) -> Option<&'a str>) -> TitleIndex {
        let mut by_entity: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut by_key: HashMap<String, Vec<u32>> = HashMap::new();
        let mut max_words = 0;
        for (pos, &node) in graph.passage_nodes().iter().enumerate() {
            let Some(&first) = graph.passage_indices(node).first() else { continue };
            let Some(t) = title(first) else { continue };
            let name = title_entity_name(t);
            let key = normalize_entity(&strip_possessives(name));
            if key.is_empty() {
                continue;
            }
            max_words = max_words.max(key.split(' ').count());
            by_key.entry(key).or_default().push(pos as u32);
            if let Some(e) = graph.entity_id(name) {
                by_entity.entry(e).or_default().push(pos as u32);
            }
        }
        TitleIndex { by_entity, by_key, max_words }
    }

    /// The passage nodes whose title ([`title_entity_name`], normalised) is `key` exactly.
    pub fn passages_keyed(&self, key: &str) -> &[u32] {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }

    /// The passage nodes titled by entity node `entity`, as positions in
    /// [`Graph::passage_nodes`] (empty when none).
    pub fn passages_titled(&self, entity: u32) -> &[u32] {
        self.by_entity.get(&entity).map_or(&[], Vec::as_slice)
    }

    /// Entities that title at least one passage.
    pub fn len(&self) -> usize {
        self.by_entity.len()
    }

    /// No entity titles a passage.
    pub fn is_empty(&self) -> bool {
        self.by_entity.is_empty()
    }

    /// The titles named in `query` (module docs of [`query_title_weights`]): every maximal run
    /// of the query's words whose normalised form is a title key and that holds a capitalised
    /// word other than the query's first (a proper name, not a common phrase: "the story" in
    /// "who wrote the story" names nothing, "The Story" in "the song The Story" does). Returns
    /// `(key, passage nodes)` in query order; a run inside a longer matching run is dropped
    /// ("Thelma" inside "Thelma & Louise"). Runs of up to the longest title's word count.
    pub fn titles_in_query(&self, query: &str) -> Vec<(String, &[u32])> {
        // (normalised word, capitalised and not the first word)
        let words: Vec<(String, bool)> = query
            .split(|c: char| !(c.is_alphanumeric() || is_apostrophe(c)))
            .filter(|w| !w.is_empty())
            .enumerate()
            .filter_map(|(i, w)| {
                let key = normalize_entity(&strip_possessives(w));
                let proper = i > 0 && w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_numeric());
                (!key.is_empty()).then_some((key, proper))
            })
            .collect();
        let mut spans: Vec<(usize, usize, String, &[u32])> = Vec::new();
        for start in 0..words.len() {
            let mut best: Option<(usize, String, &[u32])> = None;
            let mut joined = String::new();
            let mut proper = false;
            for end in start..words.len().min(start + self.max_words.max(1)) {
                if end > start {
                    joined.push(' ');
                }
                joined.push_str(&words[end].0);
                proper |= words[end].1;
                if !proper {
                    continue;
                }
                let key = normalize_entity(&joined);
                if let Some(p) = self.by_key.get(&key) {
                    best = Some((end, key, p.as_slice()));
                }
            }
            if let Some((end, key, p)) = best {
                spans.push((start, end, key, p));
            }
        }
        let inside = |a: &(usize, usize, String, &[u32]), b: &(usize, usize, String, &[u32])| {
            b.0 <= a.0 && a.1 <= b.1 && (b.1 - b.0) > (a.1 - a.0)
        };
        let mut out: Vec<(String, &[u32])> = Vec::new();
        for a in &spans {
            if spans.iter().any(|b| inside(a, b)) || out.iter().any(|(k, _)| *k == a.2) {
                continue;
            }
            out.push((a.2.clone(), a.3));
        }
        out
    }
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02BC}')
}

/// `s` without the possessive `'s` / `’s` at the end of its words ("Wang's husband" →
/// "Wang husband"), so a title is found in the possessive form of its name.
fn strip_possessives(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let possessive = is_apostrophe(c)
            && matches!(chars.get(i + 1), Some('s' | 'S'))
            && chars.get(i + 2).map_or(true, |n| !n.is_alphanumeric());
        if possessive {
            i += 2;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Teleport weights of the passages titled by a name in the query (query titles),
/// `[passage nodes]` in [`Graph::passage_nodes`] order.
///
/// A multi-hop question names its first hop's entity ("In *A League of Their Own*, who played
/// the husband of …"), and in an encyclopaedic corpus the passage titled by it is the first hop,
/// however few of the question's other words it shares (BM25 ranks it below passages that share
/// the question's common words). Every passage node P titled by a name in the query
/// ([`TitleIndex::titles_in_query`]) gets
/// `weight × (2 ÷ |passages containing the title's entity|)^specificity × share ×
/// (floor + (1 − floor) × relevance[P])`, with `share` = 1 ÷ |passages with that title| under
/// `split_title` (as [`bridge_weights`]). A title that is no entity of the graph keeps the
/// full specificity. All zeros when `weight` is 0 or no title is named.
#[allow(clippy::too_many_arguments)]
pub fn query_title_weights(
    graph: &Graph,
    titles: &TitleIndex,
    query: &str,
    relevance: &[f64],
    weight: f64,
    floor: f64,
    specificity: f64,
    split_title: bool,
) -> Vec<f64> {
    let n = graph.passage_nodes().len();
    let mut out = vec![0.0f64; n];
    if weight <= 0.0 {
        return out;
    }
    for (key, titled) in titles.titles_in_query(query) {
        let spread = graph.entity_id(&key).map_or(2, |e| graph.passages_of(e).len().max(2)) as f64;
        let specific = if specificity == 0.0 { 1.0 } else { (2.0 / spread).powf(specificity) };
        let share = if split_title { 1.0 / titled.len().max(1) as f64 } else { 1.0 };
        for &to in titled {
            let j = to as usize;
            if j >= n {
                continue;
            }
            let rel = relevance.get(j).copied().filter(|r| r.is_finite()).unwrap_or(0.0).clamp(0.0, 1.0);
            let w = weight * specific * share * (floor + (1.0 - floor) * rel);
            if w > out[j] {
                out[j] = w;
            }
        }
    }
    out
}

/// Teleport weights of bridged passages, `[passage nodes]` in [`Graph::passage_nodes`] order
/// (module docs).
///
/// `source` is every passage node's lexical prior (from [`super::seeds::lexical_passage_weights`])
/// and `relevance` every passage node's own BM25 score ÷ the best, in [0, 1]. The `sources`
/// passage nodes with the largest positive `source` weights (ties: lower position) are the
/// sources. Every entity of a source that titles another passage node P bridges to it: P gets
/// `weight × (source's weight ÷ the best source weight) × (floor + (1 − floor) × relevance[P])`,
/// the largest over its sources, times `(2 ÷ |passages containing the bridging entity|)^specificity`
/// (an entity in two passages, the source and the one it titles, keeps it all; a generic entity
/// such as a country named in hundreds of passages bridges weakly; `specificity` 0 turns this
/// off). A source never bridges to itself; a passage that is a source
/// keeps its own prior and may be bridged to as well. With `split_title`, a title shared by
/// several passages (one article cut into paragraphs, as in MuSiQue's corpus) gives each of them
/// 1/|passages with that title| of the weight, so one bridge adds one passage's worth of mass
/// however many paragraphs carry the title. All zeros when `weight` is 0, no source has weight,
/// or the index is empty.
pub fn bridge_weights(
    graph: &Graph,
    titles: &TitleIndex,
    source: &[f64],
    relevance: &[f64],
    sources: usize,
    weight: f64,
    floor: f64,
    specificity: f64,
    split_title: bool,
) -> Vec<f64> {
    let nodes = graph.passage_nodes();
    let mut out = vec![0.0f64; nodes.len()];
    if weight <= 0.0 || titles.is_empty() || sources == 0 {
        return out;
    }
    let mut order: Vec<usize> = (0..source.len().min(nodes.len())).filter(|&i| source[i] > 0.0).collect();
    order.sort_by(|&a, &b| source[b].total_cmp(&source[a]).then(a.cmp(&b)));
    order.truncate(sources);
    let Some(&best) = order.first() else { return out };
    let top = source[best];
    for &s in &order {
        let from = nodes[s];
        let strength = source[s] / top;
        for &e in graph.entities_of(from) {
            let titled = titles.passages_titled(e);
            if titled.is_empty() {
                continue;
            }
            let spread = graph.passages_of(e).len().max(2) as f64;
            let specific = if specificity == 0.0 { 1.0 } else { (2.0 / spread).powf(specificity) };
            let share = if split_title { 1.0 / titled.len() as f64 } else { 1.0 };
            for &to in titled {
                let j = to as usize;
                if j == s || j >= out.len() {
                    continue;
                }
                let rel = relevance.get(j).copied().filter(|r| r.is_finite()).unwrap_or(0.0).clamp(0.0, 1.0);
                let w = weight * strength * specific * share * (floor + (1.0 - floor) * rel);
                if w > out[j] {
                    out[j] = w;
                }
            }
        }
    }
    out
}
