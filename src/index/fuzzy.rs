//! A sorted term dictionary with prefix search and typo-tolerant (edit-distance) lookup.
//!
//! The keys are kept sorted (by bytes, which for UTF-8 is code-point order), so
//! - **prefix search** is two binary searches: the keys starting with `p` are one contiguous run;
//! - **fuzzy search** walks the sorted keys as an implicit trie (Schulz & Mihov, "Fast string
//!   correction with Levenshtein automata", IJDAR 2002, §2: dictionary traversal with a bounded
//!   automaton; here the automaton is the dynamic-programming matrix itself, one row per key
//!   character as in Ukkonen's cut-off, "Algorithms for approximate string matching", 1985).
//!   Consecutive keys share their common prefix's rows, and as soon as every entry of a row
//!   exceeds the bound, every key with that prefix is skipped with one binary search. The
//!   distance is the optimal-string-alignment distance (Levenshtein plus the transposition of
//!   two adjacent characters, Damerau 1964), since swapped letters are a common typo.
//!
//! Query cost grows with the number of trie prefixes within the bound rather than with the
//! number of keys (docs/method/ux.md has the query latencies with and without it).

use crate::graph::{normalize_entity, Graph, NodeRef};

use super::Bm25Config;

/// Sorted keys, each with a caller-given id (a term id, an entity node).
#[derive(Debug, Clone, Default)]
pub struct FuzzyDict {
    keys: Vec<Box<str>>,
    ids: Vec<u32>,
    /// `position[id]` = sorted position of the (last) key with that id; `u32::MAX` for none.
    position: Vec<u32>,
}

/// One key found by [`FuzzyDict::fuzzy`]: its id and its edit distance to the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuzzyMatch {
    /// The id given with the key.
    pub id: u32,
    /// Optimal-string-alignment distance in characters (0 for the query itself).
    pub distance: u32,
}

impl FuzzyDict {
    /// Build from `(key, id)` pairs. Duplicate keys are kept (each with its id). Empty keys are
    /// dropped.
    pub fn new(pairs: impl IntoIterator<Item = (String, u32)>) -> Self {
        let mut pairs: Vec<(Box<str>, u32)> = pairs
            .into_iter()
            .filter(|(k, _)| !k.is_empty())
            .map(|(k, id)| (k.into_boxed_str(), id))
            .collect();
        pairs.sort_unstable();
        let (keys, ids): (Vec<Box<str>>, Vec<u32>) = pairs.into_iter().unzip();
        let mut position = vec![u32::MAX; ids.iter().max().map_or(0, |&m| m as usize + 1)];
        for (pos, &id) in ids.iter().enumerate() {
            position[id as usize] = pos as u32;
        }
        FuzzyDict { keys, ids, position }
    }

    /// The key given with `id` (the last one when several keys share it), if any.
    pub fn key_of(&self, id: u32) -> Option<&str> {
        let pos = *self.position.get(id as usize)?;
        self.keys.get(pos as usize).map(|k| k.as_ref())
    }

    /// The id given with `key` (exact match; binary search over the sorted keys), if any; the
    /// first one when several keys are equal.
    pub fn get(&self, key: &str) -> Option<u32> {
        let pos = self.keys.partition_point(|k| k.as_ref() < key);
        (self.keys.get(pos)?.as_ref() == key).then(|| self.ids[pos])
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Heap bytes held (key strings and the two arrays).
    pub fn heap_bytes(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<Box<str>>()
            + self.keys.iter().map(|k| k.len()).sum::<usize>()
            + self.ids.capacity() * 4
            + self.position.capacity() * 4
    }

    /// The key at sorted position `i`.
    fn key(&self, i: usize) -> &str {
        &self.keys[i]
    }

    /// Ids of every key that starts with `prefix`, in key order (an empty prefix gives every
    /// key).
    pub fn prefixed(&self, prefix: &str) -> &[u32] {
        let start = self.keys.partition_point(|k| k.as_ref() < prefix);
        let len = self.keys[start..].partition_point(|k| k.starts_with(prefix));
        &self.ids[start..start + len]
    }

    /// Every key within `max_distance` edits of `query` (optimal string alignment: insertion,
    /// deletion, substitution, adjacent transposition; module docs), with its distance, in key
    /// order. The query itself is included (distance 0) when it is a key.
    pub fn fuzzy(&self, query: &str, max_distance: u32) -> Vec<FuzzyMatch> {
        self.fuzzy_in(query, max_distance, 0..self.keys.len())
    }

    /// [`FuzzyDict::fuzzy`] among the keys that begin with the query's first character (none
    /// for an empty query): a typo on the first letter is rare (Pollock & Zamora, "Automatic
    /// spelling correction in scientific and scholarly text", CACM 1984: about 7% of
    /// misspellings), and holding it fixed confines the walk to one subtree of the dictionary.
    pub fn fuzzy_same_first(&self, query: &str, max_distance: u32) -> Vec<FuzzyMatch> {
        let Some(first) = query.chars().next() else { return Vec::new() };
        let mut buf = [0u8; 4];
        let first: &str = first.encode_utf8(&mut buf);
        let start = self.keys.partition_point(|k| k.as_ref() < first);
        let len = self.keys[start..].partition_point(|k| k.starts_with(first));
        self.fuzzy_in(query, max_distance, start..start + len)
    }

    /// The walk of [`FuzzyDict::fuzzy`] over the sorted positions `range`.
    fn fuzzy_in(&self, query: &str, max_distance: u32, range: std::ops::Range<usize>) -> Vec<FuzzyMatch> {
        let mut out = Vec::new();
        let q: Vec<char> = query.chars().collect();
        let m = q.len();
        if self.keys.is_empty() || range.is_empty() {
            return out;
        }
        let bound = max_distance as usize;
        // rows[k] = DP row after the key's first k characters; rows[0] = 0..=m.
        let mut rows: Vec<Vec<usize>> = vec![(0..=m).collect()];
        let mut cur: Vec<char> = Vec::new(); // characters whose rows are valid: rows[1..=cur.len()]
        let mut chars: Vec<char> = Vec::new();
        let mut i = range.start;
        while i < range.end {
            chars.clear();
            chars.extend(self.key(i).chars());
            let common = cur.iter().zip(&chars).take_while(|(a, b)| a == b).count();
            cur.truncate(common);
            let mut pruned_at = None;
            for k in common + 1..=chars.len() {
                if rows.len() <= k {
                    rows.push(vec![0; m + 1]);
                }
                let c = chars[k - 1];
                let (done, rest) = rows.split_at_mut(k);
                let prev = &done[k - 1];
                let row = &mut rest[0];
                row[0] = k;
                let mut min = row[0];
                for j in 1..=m {
                    let cost = usize::from(q[j - 1] != c);
                    let mut v = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
                    if k > 1 && j > 1 && c == q[j - 2] && chars[k - 2] == q[j - 1] {
                        v = v.min(done[k - 2][j - 2] + 1);
                    }
                    row[j] = v;
                    min = min.min(v);
                }
                cur.push(c);
                if min > bound {
                    pruned_at = Some(k);
                    break;
                }
            }
            match pruned_at {
                Some(k) => {
                    // No key extending chars[..k] can come back within the bound: skip them all.
                    let key = self.key(i);
                    let cut = key.char_indices().nth(k).map_or(key.len(), |(b, _)| b);
                    let prefix = &key[..cut];
                    i += self.keys[i..range.end].partition_point(|key| key.starts_with(prefix));
                }
                None => {
                    let d = rows[chars.len()][m];
                    if d <= bound {
                        out.push(FuzzyMatch { id: self.ids[i], distance: d as u32 });
                    }
                    i += 1;
                }
            }
        }
        out
    }
}

/// Typo-tolerant lookup of entity nodes by their normalised keys, for symbolic anchoring
/// (CatRAG §3; `catrag::anchor`): a query mention that matches no entity exactly ("Neil Pert")
/// is mapped to the entity whose key is nearest ("neil peart"), within the typo budget of the
/// mention key's length ([`Bm25Config::typo_budget`]), when that nearest entity is the only one
/// at its distance (an ambiguous near match is dropped: a wrong anchor is worse than none).
/// Built once per graph.
#[derive(Debug, Clone, Default)]
pub struct EntityLookup {
    dict: FuzzyDict,
}

impl EntityLookup {
    /// Index every entity node of `graph` by its normalised key.
    pub fn new(graph: &Graph) -> Self {
        let pairs = graph.entity_nodes().iter().filter_map(|&node| match graph.node(node) {
            Some(NodeRef::Entity { key, .. }) => Some((key.to_string(), node)),
            _ => None,
        });
        EntityLookup { dict: FuzzyDict::new(pairs) }
    }

    /// Number of entity keys.
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    /// Heap bytes held (the dictionary's keys and arrays).
    pub fn heap_bytes(&self) -> usize {
        self.dict.heap_bytes()
    }

    /// Whether the graph had no entity.
    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    /// The entity node nearest to `mention` (normalised with [`normalize_entity`]) and its
    /// distance: 0 for an exact key, else the unique key at the smallest distance within the
    /// budget. `None` when nothing is within the budget, the nearest is ambiguous, or typos are
    /// off and there is no exact key.
    pub fn nearest(&self, mention: &str, config: &Bm25Config) -> Option<(u32, u32)> {
        let key = normalize_entity(mention);
        if key.is_empty() {
            return None;
        }
        let budget = config.typo_budget(key.chars().count());
        let found = if config.typo_first_char {
            self.dict.fuzzy(&key, budget)
        } else {
            self.dict.fuzzy_same_first(&key, budget)
        };
        let best = found.iter().map(|m| m.distance).min()?;
        let mut at_best = found.iter().filter(|m| m.distance == best);
        let first = at_best.next()?;
        if at_best.any(|m| m.id != first.id) {
            return None;
        }
        Some((first.id, best))
    }
}

/// Optimal-string-alignment distance between `a` and `b` in characters (the distance
/// [`FuzzyDict::fuzzy`] uses), by the full dynamic programme; a reference for tests and for
/// callers comparing two strings.
pub fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=m {
        d[0][j] = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(words: &[&str]) -> FuzzyDict {
        FuzzyDict::new(words.iter().enumerate().map(|(i, w)| (w.to_string(), i as u32)))
    }

    #[test]
    fn exact_lookup_finds_each_key_and_nothing_else() {
        let d = dict(&["pear", "apple", "peach", "apple", "fig"]);
        assert_eq!([d.get("pear"), d.get("peach"), d.get("fig")], [Some(0), Some(2), Some(4)]);
        assert_eq!(d.get("apple"), Some(1), "the first of two equal keys (sorted by id)");
        for absent in ["", "app", "apples", "zebra", "a"] {
            assert_eq!(d.get(absent), None, "{absent}");
        }
        assert_eq!(dict(&[]).get("pear"), None);
    }

    #[test]
    fn distances_by_hand() {
        assert_eq!(osa_distance("pert", "peart"), 1); // insertion
        assert_eq!(osa_distance("drumer", "drummer"), 1);
        assert_eq!(osa_distance("recieve", "receive"), 1); // transposition
        assert_eq!(osa_distance("kitten", "sitting"), 3);
        assert_eq!(osa_distance("", "abc"), 3);
        assert_eq!(osa_distance("ca", "abc"), 3); // OSA, not unrestricted Damerau (which gives 2)
        assert_eq!(osa_distance("東京", "京東"), 1);
    }

    #[test]
    fn fuzzy_finds_exactly_the_keys_within_the_bound() {
        let words =
            ["peart", "pert", "perth", "part", "neil", "nail", "drummer", "drum", "rush", "", "perthshire"];
        let d = dict(&words);
        let mut got: Vec<(&str, u32)> =
            d.fuzzy("pert", 1).iter().map(|m| (words[m.id as usize], m.distance)).collect();
        got.sort();
        assert_eq!(got, vec![("part", 1), ("peart", 1), ("pert", 0), ("perth", 1)]);
        let got: Vec<&str> = d.fuzzy("drumer", 1).iter().map(|m| words[m.id as usize]).collect();
        assert_eq!(got, vec!["drummer"]);
        assert!(d.fuzzy("zzzz", 2).is_empty());
        assert_eq!(d.fuzzy("pert", 0).len(), 1);
    }

    /// The trie walk with pruning gives what the full dynamic programme gives, key by key.
    #[test]
    fn fuzzy_agrees_with_the_full_programme() {
        let words: Vec<String> = [
            "a", "ab", "abc", "abd", "abcd", "b", "ba", "bac", "cab", "receive", "recieve", "receiver",
            "relieve", "believe", "perceive", "deceive", "re", "rec", "résumé", "resume", "resumé", "東京",
            "京東", "京都",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let d = FuzzyDict::new(words.iter().cloned().enumerate().map(|(i, w)| (w, i as u32)));
        for q in ["", "a", "ab", "bca", "recieve", "receve", "resume", "東京", "xyz", "abcde"] {
            for bound in 0..=3u32 {
                let mut got: Vec<(u32, u32)> = d.fuzzy(q, bound).iter().map(|m| (m.id, m.distance)).collect();
                got.sort_unstable();
                let want: Vec<(u32, u32)> = words
                    .iter()
                    .enumerate()
                    .filter_map(|(i, w)| {
                        let dist = osa_distance(q, w) as u32;
                        (dist <= bound).then_some((i as u32, dist))
                    })
                    .collect();
                assert_eq!(got, want, "query {q:?} bound {bound}");
                let mut got: Vec<(u32, u32)> =
                    d.fuzzy_same_first(q, bound).iter().map(|m| (m.id, m.distance)).collect();
                got.sort_unstable();
                let first = q.chars().next();
                let want: Vec<(u32, u32)> = want
                    .into_iter()
                    .filter(|&(i, _)| first.is_some() && words[i as usize].chars().next() == first)
                    .collect();
                assert_eq!(got, want, "same first: query {q:?} bound {bound}");
            }
        }
    }

    #[test]
    fn prefix_runs() {
        let words = ["drum", "drummer", "drums", "dry", "neil", "drumming"];
        let d = dict(&words);
        let mut got: Vec<&str> = d.prefixed("drum").iter().map(|&i| words[i as usize]).collect();
        got.sort_unstable();
        assert_eq!(got, vec!["drum", "drummer", "drumming", "drums"]);
        assert!(d.prefixed("drx").is_empty());
        assert_eq!(d.key_of(1), Some("drummer"));
        assert_eq!(d.key_of(6), None);
        assert!(d.prefixed("zzz").is_empty());
        assert_eq!(d.prefixed("").len(), words.len());
        assert!(FuzzyDict::default().prefixed("a").is_empty());
        assert!(FuzzyDict::default().fuzzy("a", 2).is_empty());
    }

    /// Entity lookup and anchoring through the index on a five-passage graph.
    mod entities {
        use std::rc::Rc;

        use crate::corpus::{Corpus, Passage};
        use crate::embed::{Embedder, StaticEmbedder};
        use crate::extract::Triple;
        use crate::index::{Bm25Config, EmbedderSlot, Index, IndexConfig, Method};

        use super::super::EntityLookup;

        fn graph_index(typos: bool) -> Index {
            let mut c = Corpus::new();
            for (id, title, text) in [
                ("a", "Teutberga", "Teutberga was queen of Lotharingia. She married Lothair II."),
                ("b", "Lothair II", "Lothair II was king of Lotharingia. His father was Lothair I."),
                ("c", "Lothair I", "Lothair I was emperor. He was born in 795."),
                ("d", "Paris", "Paris is the capital of France."),
                ("e", "Lyon", "Lyon is a city in France."),
            ] {
                c.add(Passage { id: id.into(), title: title.into(), text: text.into() }).unwrap();
            }
            let mut cfg = IndexConfig::default();
            cfg.bm25.typos = typos;
            let mut index = Index::build(c, &cfg).unwrap();
            let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
            index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
            let triples = vec![
                Triple::new("Teutberga", "was queen of", "Lotharingia", 0),
                Triple::new("Teutberga", "married", "Lothair II", 0),
                Triple::new("Lothair II", "was king of", "Lotharingia", 1),
                Triple::new("Lothair II", "father was", "Lothair I", 1),
                Triple::new("Lothair I", "was", "emperor", 2),
                Triple::new("Paris", "is capital of", "France", 3),
                Triple::new("Lyon", "is city in", "France", 4),
            ];
            index.build_graph_from_triples(e, &triples, None, &mut |_, _, _| {}).unwrap();
            index
        }

        #[test]
        fn nearest_entity_within_the_budget_and_unambiguous() {
            let index = graph_index(true);
            let graph = index.graph().unwrap();
            let lookup = EntityLookup::new(graph);
            let cfg = Bm25Config::default();
            let id = |name: &str| graph.entity_id(name).unwrap();
            assert_eq!(lookup.nearest("Teutberga", &cfg), Some((id("Teutberga"), 0)));
            assert_eq!(lookup.nearest("Teutbrega", &cfg), Some((id("Teutberga"), 1))); // transposed
            assert_eq!(lookup.nearest("Lyons", &cfg), Some((id("Lyon"), 1)));
            // "lothair iii" (11 characters, 2 edits): "lothair ii" at 1 beats "lothair i" at 2.
            assert_eq!(lookup.nearest("Lothair III", &cfg), Some((id("Lothair II"), 1)));
            // "lothair ix" is 1 edit from both "lothair ii" and "lothair i": ambiguous, dropped.
            assert_eq!(lookup.nearest("Lothair IX", &cfg), None);
            // "lothair" (7 characters, 1 edit) is 2 edits from "lothair i".
            assert_eq!(lookup.nearest("Lothair", &cfg), None);
            assert_eq!(lookup.nearest("Lyons", &Bm25Config { typos: false, ..cfg }), None);
            assert_eq!(lookup.nearest("...", &cfg), None);
        }

        /// CatRAG anchors a misspelt name on its entity when typos are on.
        #[test]
        fn catrag_anchors_a_misspelt_name() {
            let q = "Whom did Teutbrega marry?";
            let index = graph_index(true);
            let want = index.graph().unwrap().entity_id("Teutberga");
            let got = index.searcher().search_graph(q, 3, Method::Catrag).unwrap();
            let anchored: Vec<Option<u32>> = got.retrieval.anchors.iter().map(|a| a.node).collect();
            assert!(anchored.contains(&want), "{:?}", got.retrieval.anchors);
            let off = graph_index(false).searcher().search_graph(q, 3, Method::Catrag).unwrap();
            assert!(
                off.retrieval.anchors.iter().all(|a| a.mention == "Teutbrega"),
                "{:?}",
                off.retrieval.anchors
            );
            // The anchor puts teleport mass on the misspelt name's entity, which it has no other way
            // to get (the static embedder's vectors of the two spellings differ).
            let node = want.unwrap() as usize;
            assert!(got.retrieval.teleport[node] > off.retrieval.teleport[node] + 1e-3);
        }
    }
}
