//! The keyword reader of a static site: BM25 over a sharded keyword index
//! ([`crate::index::shards`]) that holds only the shards a query has needed so far, so that the
//! first result waits for the meta file and a handful of small shards instead of the whole index
//! and the whole engine. Built alone as a small wasm module (`npm run build:reader`, feature
//! `reader`), it answers the site widget's keyword searches; the full engine loads only for the
//! other methods.
//!
//! A query runs in stages ([`KeywordQuery::advance`]); each stage needs shards, which the caller
//! fetches and hands over ([`KeywordReader::add`]) before the next call, and each stage's work is
//! done once:
//! 1. analyse the query; the dictionary shards of its terms and of its last word's prefixes;
//! 2. for a term not in the vocabulary (typo tolerance), the dictionary shards of its first
//!    letter (of every letter with [`crate::index::Bm25Config::typo_first_char`]); then expand
//!    ([`crate::index::bm25`]'s expansion, the same function the engine runs);
//! 3. the posting shards of every matched term; then score (the same scoring) and keep the top
//!    `k`, equal scores by passage id;
//! 4. the fragment shards of those `k` passages; then [`KeywordQuery::hits`].
//!
//! The shards chosen are exactly those that hold every term the whole vocabulary would answer
//! with, so the ranking is the engine's `bm25` method's, bit for bit (tested against
//! [`crate::search::Searcher::query`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::error::{Error, Result};
use crate::index::bm25::{completion_prefixes, expand_query, idf_of, length_norms, score_postings, Vocabulary};
use crate::index::fuzzy::{FuzzyDict, FuzzyMatch};
use crate::index::shards::{
    read_dictionary, read_fragments, read_postings, DictionaryShard, FragmentShard, KeywordMeta, Part, PartKind,
    PostingShard,
};
use crate::index::{Bm25Config, TermGroup};
use crate::text::highlight::{highlight_ranges, utf16_ranges};
use crate::text::Analyzer;

/// A sharded keyword index, opened from its meta file, with the shards added so far.
#[derive(Debug)]
pub struct KeywordReader {
    meta: KeywordMeta,
    analyzer: Analyzer,
    norm: Vec<f32>,
    dictionary: HashMap<usize, DictionaryShard>,
    postings: HashMap<usize, PostingShard>,
    fragments: HashMap<usize, FragmentShard>,
}

/// One result of [`KeywordQuery::hits`], as the engine's search hits are shown: rank from 1, the
/// passage, its BM25 score and the query terms' ranges in its text and title (UTF-16 code units).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReaderHit {
    /// Rank from 1.
    pub rank: usize,
    /// Passage id (for a site, its link).
    pub id: String,
    /// Title.
    pub title: String,
    /// Text.
    pub text: String,
    /// BM25 score.
    pub score: f32,
    /// Matching words in `text`, `[start, end)` in UTF-16 code units.
    pub highlights: Vec<(u32, u32)>,
    /// Matching words in `title`.
    pub title_highlights: Vec<(u32, u32)>,
}

impl KeywordReader {
    /// Open the index from its meta file.
    ///
    /// # Errors
    /// [`KeywordMeta::read`]'s.
    pub fn open(meta: &[u8]) -> Result<KeywordReader> {
        let meta = KeywordMeta::read(meta)?;
        let (_, norm) = length_norms(&meta.doc_len, &meta.config);
        Ok(KeywordReader {
            meta,
            analyzer: Analyzer::english(),
            norm,
            dictionary: HashMap::new(),
            postings: HashMap::new(),
            fragments: HashMap::new(),
        })
    }

    /// Number of passages.
    pub fn docs(&self) -> usize {
        self.meta.docs()
    }

    /// Add the shard named `name` ([`Part::name`]) from its file's bytes. Adding a shard that is
    /// in already does nothing.
    ///
    /// # Errors
    /// [`Part::parse`]'s for an unknown name, [`Error::IndexCorrupt`] for a number past the
    /// meta file's, and the shard readers' errors (a damaged file, one of another build); the
    /// reader is left as it was.
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let part = Part::parse(name)?;
        if part.index >= self.meta.shards(part.kind) {
            return Err(Error::IndexCorrupt(format!("the index has no shard {name}")));
        }
        if self.has(part) {
            return Ok(());
        }
        match part.kind {
            PartKind::Dictionary => {
                self.dictionary.insert(part.index, read_dictionary(&self.meta, part.index, bytes)?);
            }
            PartKind::Postings => {
                self.postings.insert(part.index, read_postings(&self.meta, part.index, bytes)?);
            }
            PartKind::Fragments => {
                self.fragments.insert(part.index, read_fragments(&self.meta, part.index, bytes)?);
            }
        }
        Ok(())
    }

    /// Whether shard `part` is in.
    pub fn has(&self, part: Part) -> bool {
        match part.kind {
            PartKind::Dictionary => self.dictionary.contains_key(&part.index),
            PartKind::Postings => self.postings.contains_key(&part.index),
            PartKind::Fragments => self.fragments.contains_key(&part.index),
        }
    }

    /// Start a query: `k` results at most (1 to 1000), `prefix` for search as you type (the last
    /// word also matches the words it begins).
    pub fn query(&self, text: &str, k: usize, prefix: bool) -> KeywordQuery {
        KeywordQuery {
            text: crate::text::fold::nfc(text).into_owned(),
            k: k.clamp(1, 1000),
            prefix,
            stage: Stage::Terms,
            groups: Vec::new(),
            ranked: Vec::new(),
            matched: 0,
            window: usize::MAX,
        }
    }

    /// The dictionary shard of term id `t`, if in.
    fn dictionary_of_id(&self, t: u32) -> Option<&DictionaryShard> {
        self.dictionary.get(&self.meta.dictionary_of_id(t)?)
    }

    /// The analysed term of id `t`, if its shard is in.
    fn term(&self, t: u32) -> Option<&str> {
        let s = self.dictionary_of_id(t)?;
        s.terms.get((t - s.start) as usize).map(String::as_str)
    }

    /// The passage of document `d`, if its shard is in.
    fn passage(&self, d: u32) -> Option<&(String, String, String)> {
        let s = self.fragments.get(&self.meta.fragments_of(d)?)?;
        s.passages.get((d - s.start) as usize)
    }

    /// Term `t`'s idf, documents and term frequencies, if its posting shard is in.
    fn postings(&self, t: u32) -> Option<(f32, &[u32], &[u32])> {
        let s = self.postings.get(&self.meta.postings_of(t)?)?;
        let i = (t - s.start) as usize;
        let docs = s.docs.get(i)?;
        Some((idf_of(docs.len() as u32, self.meta.docs()), docs, s.tfs.get(i)?))
    }

    /// The dictionary shards that hold the terms beginning with the first character of `term`
    /// (every shard when an edit may change it).
    fn typo_range(&self, term: &str) -> std::ops::Range<usize> {
        match term.chars().next() {
            Some(c) if !self.meta.config.typo_first_char => {
                let mut buf = [0u8; 4];
                self.meta.dictionaries_of_prefix(c.encode_utf8(&mut buf))
            }
            _ => 0..self.meta.shards(PartKind::Dictionary),
        }
    }
}

impl Vocabulary for KeywordReader {
    fn config(&self) -> &Bm25Config {
        &self.meta.config
    }
    fn lookup(&self, term: &str) -> Option<u32> {
        let s = self.dictionary.get(&self.meta.dictionary_of(term)?)?;
        let i = s.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()?;
        Some(s.start + i as u32)
    }
    fn df_of(&self, t: u32) -> u32 {
        self.dictionary_of_id(t).and_then(|s| s.dfs.get((t - s.start) as usize).copied()).unwrap_or(0)
    }
    fn prefixed_ids(&self, prefix: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for i in self.meta.dictionaries_of_prefix(prefix) {
            if let Some(s) = self.dictionary.get(&i) {
                out.extend(
                    s.terms.iter().enumerate().filter(|(_, t)| t.starts_with(prefix)).map(|(j, _)| s.start + j as u32),
                );
            }
        }
        out
    }
    fn near(&self, term: &str, budget: u32) -> Vec<FuzzyMatch> {
        // the terms of the shards the whole vocabulary's walk would visit, with their global ids
        let pairs = self.typo_range(term).filter_map(|i| self.dictionary.get(&i)).flat_map(|s| {
            s.terms.iter().enumerate().map(move |(j, t)| (t.clone(), s.start + j as u32))
        });
        let dict = FuzzyDict::new(pairs);
        if self.meta.config.typo_first_char {
            dict.fuzzy(term, budget)
        } else {
            dict.fuzzy_same_first(term, budget)
        }
    }
}

/// Where a [`KeywordQuery`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Needs the dictionary shards of its terms and prefixes.
    Terms,
    /// Needs the dictionary shards for its near spellings.
    Near,
    /// Needs the posting shards of its matched terms.
    Postings,
    /// Needs the fragment shards of its top `k`.
    Fragments,
    /// Ready for [`KeywordQuery::hits`].
    Done,
}

/// A query on a [`KeywordReader`] (module docs): call [`KeywordQuery::advance`] until it needs
/// nothing, fetching and adding what it names, then [`KeywordQuery::hits`].
#[derive(Debug, Clone)]
pub struct KeywordQuery {
    text: String,
    k: usize,
    prefix: bool,
    stage: Stage,
    groups: Vec<TermGroup>,
    ranked: Vec<(u32, f32)>,
    /// Passages that match at all (before the cut to `k`).
    matched: usize,
    /// How many of the ranked results get their passages (fragment shards).
    window: usize,
}

impl KeywordQuery {
    /// Run the stages whose shards are in and return the shards the next stage needs that are
    /// not (sorted, no repeats); empty when the hits are ready.
    pub fn advance(&mut self, reader: &KeywordReader) -> Vec<Part> {
        loop {
            let needed: BTreeSet<Part> = match self.stage {
                Stage::Done => return Vec::new(),
                Stage::Terms => self.term_shards(reader),
                Stage::Near => self.near_shards(reader),
                Stage::Postings => self
                    .groups
                    .iter()
                    .flat_map(|g| &g.variants)
                    .filter_map(|&(t, _)| reader.meta.postings_of(t))
                    .map(|index| Part { kind: PartKind::Postings, index })
                    .collect(),
                Stage::Fragments => self
                    .ranked
                    .iter()
                    .take(self.window)
                    .filter_map(|&(d, _)| reader.meta.fragments_of(d))
                    .map(|index| Part { kind: PartKind::Fragments, index })
                    .collect(),
            };
            let missing: Vec<Part> = needed.into_iter().filter(|&p| !reader.has(p)).collect();
            if !missing.is_empty() {
                return missing;
            }
            self.stage = match self.stage {
                Stage::Terms => Stage::Near,
                Stage::Near => {
                    self.groups = expand_query(reader, &reader.analyzer, &self.text, self.prefix);
                    Stage::Postings
                }
                Stage::Postings => {
                    let scored =
                        score_postings(&self.groups, &reader.norm, reader.meta.config.k1, |t| reader.postings(t));
                    self.matched = scored.len();
                    self.ranked = top_k(scored, self.k);
                    Stage::Fragments
                }
                Stage::Fragments | Stage::Done => Stage::Done,
            };
        }
    }

    /// Fetch the passages of the best `window` results only (default: all `k`), so that a
    /// widget that shows a few results fetches the fragment shards of those. A larger window
    /// later asks for the next ones (the ranking is not run again).
    pub fn set_window(&mut self, window: usize) {
        if window > self.window && self.stage == Stage::Done {
            self.stage = Stage::Fragments;
        }
        self.window = window;
    }

    /// Number of ranked results (at most `k`), once the postings are scored; 0 before.
    pub fn ranked(&self) -> usize {
        self.ranked.len()
    }

    /// Number of passages that match the query at all (before the cut to `k`), once the
    /// postings are scored; 0 before.
    pub fn matched(&self) -> usize {
        self.matched
    }

    /// The dictionary shards of the query's terms and, for search as you type, of its last
    /// word's prefixes.
    fn term_shards(&self, reader: &KeywordReader) -> BTreeSet<Part> {
        let tokens = reader.analyzer.tokens(&self.text);
        let mut out: BTreeSet<Part> = tokens
            .iter()
            .filter_map(|t| reader.meta.dictionary_of(&t.term))
            .map(|index| Part { kind: PartKind::Dictionary, index })
            .collect();
        if self.prefix {
            if let Some(c) = completion_prefixes(&reader.meta.config, &reader.analyzer, &self.text, &tokens) {
                for p in &c.prefixes {
                    out.extend(
                        reader.meta.dictionaries_of_prefix(p).map(|index| Part { kind: PartKind::Dictionary, index }),
                    );
                }
            }
        }
        out
    }

    /// The dictionary shards the near spellings of the query's terms need: those of a term's
    /// first letter, for each term typo tolerance looks up ([`expand_query`]'s rule).
    fn near_shards(&self, reader: &KeywordReader) -> BTreeSet<Part> {
        let cfg = reader.meta.config;
        let mut out = BTreeSet::new();
        for tok in reader.analyzer.tokens(&self.text) {
            let budget = cfg.typo_budget(tok.term.chars().count());
            if budget > 0 && (cfg.typo_known_terms || reader.lookup(&tok.term).is_none()) {
                out.extend(reader.typo_range(&tok.term).map(|index| Part { kind: PartKind::Dictionary, index }));
            }
        }
        out
    }

    /// The best `window` results (all `k` by default, [`KeywordQuery::set_window`]), once
    /// [`KeywordQuery::advance`] needs nothing.
    ///
    /// # Errors
    /// [`Error::Config`] when called before that.
    pub fn hits(&self, reader: &KeywordReader) -> Result<Vec<ReaderHit>> {
        if self.stage != Stage::Done {
            return Err(Error::Config("the query still needs shards (call advance until it needs none)".into()));
        }
        let mut terms: HashSet<String> = reader.analyzer.terms(&self.text).into_iter().collect();
        for g in &self.groups {
            terms.extend(g.variants.iter().filter_map(|&(t, _)| reader.term(t)).map(str::to_string));
        }
        let mut out = Vec::with_capacity(self.ranked.len());
        for (rank, &(d, score)) in self.ranked.iter().enumerate().take(self.window) {
            let Some((id, title, text)) = reader.passage(d) else { continue };
            out.push(ReaderHit {
                rank: rank + 1,
                id: id.clone(),
                title: title.clone(),
                text: text.clone(),
                score,
                highlights: utf16_ranges(text, &highlight_ranges(&reader.analyzer, &terms, text)),
                title_highlights: utf16_ranges(title, &highlight_ranges(&reader.analyzer, &terms, title)),
            });
        }
        Ok(out)
    }
}

/// The best `k` of `scored`, by score descending, equal scores by document number ascending
/// (document numbers follow the passage ids: [`crate::search::rank`]'s order).
fn top_k(mut scored: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    let cmp = |a: &(u32, f32), b: &(u32, f32)| {
        b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then(a.0.cmp(&b.0))
    };
    if scored.len() > k {
        scored.select_nth_unstable_by(k - 1, cmp);
        scored.truncate(k);
    }
    scored.sort_unstable_by(cmp);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{hotpot_sample, Corpus, Passage};
    use crate::index::shards::{KeywordShards, ShardSizes};
    use crate::index::{Index, IndexConfig, Method, QueryOptions};
    use crate::search::{Query, Searcher};

    /// Run `q` on a reader over `shards`, fetching what it names; the hits and the shards
    /// fetched, in the order asked.
    fn run(reader: &mut KeywordReader, shards: &KeywordShards, q: &str, k: usize, prefix: bool) -> (Vec<ReaderHit>, Vec<String>) {
        let files: HashMap<String, &[u8]> = shards.named_shards().collect();
        let mut query = reader.query(q, k, prefix);
        let mut fetched = Vec::new();
        loop {
            let need = query.advance(reader);
            if need.is_empty() {
                break;
            }
            for p in need {
                let name = p.name();
                reader.add(&name, files[&name]).unwrap();
                fetched.push(name);
            }
        }
        (query.hits(reader).unwrap(), fetched)
    }

    fn sample_index() -> Index {
        let mut c = Corpus::new();
        for p in hotpot_sample() {
            c.add(p).unwrap();
        }
        Index::build(c, &IndexConfig::default()).unwrap()
    }

    /// Queries of every kind: exact words, a question, typos (one and two edits), words being
    /// typed, repeats, stop words only, unknown words, other scripts, nothing.
    const QUERIES: [&str; 18] = [
        "El Rancho Vegas",
        "Which hotel on the Las Vegas Strip was destroyed by fire in 1960?",
        "Rancho Vegs casino",
        "Archduke Frantz Ferdinnad",
        "Premier League Premier League",
        "Konopiště castle",
        "Konopiste",
        "Nobuteru Yuki",
        "the of and",
        "qqqzzx",
        "Nanda De",
        "Chinese people in Ger",
        "Wh",
        "東京 Straße",
        "",
        "   ",
        "Boyzone Keith Duffy",
        "509th Bomb",
    ];

    #[test]
    fn the_reader_ranks_as_the_engine_with_small_and_large_shards() {
        let index = sample_index();
        for sizes in [ShardSizes { dictionary: 64, postings: 64, fragments: 200 }, ShardSizes::default()] {
            let shards = index.to_keyword_shards(sizes).unwrap();
            let mut reader = KeywordReader::open(&shards.meta).unwrap();
            assert_eq!(reader.docs(), index.corpus().len());
            let mut answered = 0;
            for q in QUERIES {
                for prefix in [false, true] {
                    let (hits, _) = run(&mut reader, &shards, q, 10, prefix);
                    let want = Searcher::new(&index)
                        .query(&Query::new(q, 10, Method::Bm25).with_options(QueryOptions { prefix }))
                        .unwrap()
                        .hits;
                    let got: Vec<(String, u32)> = hits.iter().map(|h| (h.id.clone(), h.score.to_bits())).collect();
                    let expected: Vec<(String, u32)> = want.iter().map(|h| (h.id.clone(), h.score.to_bits())).collect();
                    assert_eq!(got, expected, "{q:?} prefix {prefix}");
                    for (h, w) in hits.iter().zip(&want) {
                        assert_eq!((&h.title, &h.text), (&w.title, &w.text));
                        assert_eq!(h.highlights, utf16_ranges(&w.text, &w.highlights), "{q:?}");
                        assert_eq!(h.title_highlights, utf16_ranges(&w.title, &w.title_highlights), "{q:?}");
                    }
                    answered += usize::from(!got.is_empty());
                }
            }
            // every query but the unknown word, the blank ones and "東京 Straße" finds something
            // with and without prefix; "Wh" and the stop words only as a prefix ("and" begins
            // other words)
            assert_eq!(answered, 2 * 13);
        }
    }

    #[test]
    fn a_query_fetches_its_own_shards_only() {
        let index = sample_index();
        let shards = index.to_keyword_shards(ShardSizes { dictionary: 256, postings: 256, fragments: 400 }).unwrap();
        let total = shards.dictionary.len() + shards.postings.len() + shards.fragments.len();
        let mut reader = KeywordReader::open(&shards.meta).unwrap();
        let (hits, fetched) = run(&mut reader, &shards, "Konopiště", 3, false);
        assert_eq!(hits[0].title, "Konopiště");
        // one dictionary shard, one posting shard, at most three fragment shards
        assert_eq!(fetched.iter().filter(|n| n.starts_with('d')).count(), 1, "{fetched:?}");
        assert_eq!(fetched.iter().filter(|n| n.starts_with('p')).count(), 1, "{fetched:?}");
        assert!(fetched.iter().filter(|n| n.starts_with('f')).count() <= 3, "{fetched:?}");
        assert!(fetched.len() * 10 < total, "{} of {total}", fetched.len());
        // the same query again needs nothing more
        let (again, fetched) = run(&mut reader, &shards, "Konopiště", 3, false);
        assert_eq!((again, fetched.len()), (hits, 0));
    }

    #[test]
    fn a_window_fetches_the_passages_of_the_first_results_only_then_the_next() {
        let index = sample_index();
        let shards = index.to_keyword_shards(ShardSizes { dictionary: 256, postings: 256, fragments: 300 }).unwrap();
        let files: HashMap<String, &[u8]> = shards.named_shards().collect();
        let mut reader = KeywordReader::open(&shards.meta).unwrap();
        let mut query = reader.query("Las Vegas hotel casino", 40, false);
        query.set_window(3);
        let fetch = |reader: &mut KeywordReader, query: &mut KeywordQuery| {
            let mut fragments = 0;
            loop {
                let need = query.advance(reader);
                if need.is_empty() {
                    return fragments;
                }
                for p in need {
                    fragments += usize::from(p.kind == PartKind::Fragments);
                    reader.add(&p.name(), files[&p.name()]).unwrap();
                }
            }
        };
        let first = fetch(&mut reader, &mut query);
        assert!((1..=3).contains(&first), "{first}");
        let three = query.hits(&reader).unwrap();
        assert_eq!(three.len(), 3);
        let want = Searcher::new(&index).query(&Query::new("Las Vegas hotel casino", 40, Method::Bm25)).unwrap().hits;
        assert_eq!(query.ranked(), want.len());
        assert!(query.matched() >= want.len());
        query.set_window(10);
        fetch(&mut reader, &mut query);
        let ten = query.hits(&reader).unwrap();
        assert_eq!(&ten[..3], &three[..]);
        let ids: Vec<&str> = ten.iter().map(|h| h.id.as_str()).collect();
        let expected: Vec<&str> = want[..10].iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn documents_follow_passage_ids_so_ties_break_as_the_engine() {
        // equal texts, so equal scores: the engine ranks them by id, whatever the corpus order
        let mut c = Corpus::new();
        for id in ["m", "b", "z", "a"] {
            c.add(Passage { id: id.into(), title: String::new(), text: "same words here".into() }).unwrap();
        }
        let index = Index::build(c, &IndexConfig::default()).unwrap();
        let shards = index.to_keyword_shards(ShardSizes::default()).unwrap();
        let mut reader = KeywordReader::open(&shards.meta).unwrap();
        let (hits, _) = run(&mut reader, &shards, "words", 3, false);
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "m"]);
    }

    #[test]
    fn shards_of_another_build_or_damaged_are_refused_and_change_nothing() {
        let index = sample_index();
        let sizes = ShardSizes { dictionary: 256, postings: 256, fragments: 400 };
        let shards = index.to_keyword_shards(sizes).unwrap();
        let mut c = Corpus::new();
        for p in hotpot_sample().into_iter().take(50) {
            c.add(p).unwrap();
        }
        let other = Index::build(c, &IndexConfig::default()).unwrap().to_keyword_shards(sizes).unwrap();
        assert_ne!(other.tag, shards.tag);
        let mut reader = KeywordReader::open(&shards.meta).unwrap();
        let err = reader.add("d0", &other.dictionary[0]).unwrap_err();
        assert!(matches!(err, Error::IndexCorrupt(ref m) if m.contains("another build")), "{err}");
        let err = reader.add("d1", &shards.dictionary[0]).unwrap_err();
        assert!(matches!(err, Error::IndexCorrupt(ref m) if m.contains("is shard 0")), "{err}");
        let mut damaged = shards.postings[0].clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0x55;
        assert!(matches!(reader.add("p0", &damaged), Err(Error::IndexCorrupt(_))));
        assert!(matches!(reader.add("p0", &damaged[..damaged.len() / 2]), Err(Error::IndexTruncated { .. })));
        assert!(matches!(reader.add("x0", &shards.postings[0]), Err(Error::IndexCorrupt(_))));
        assert!(matches!(reader.add("p99999", &shards.postings[0]), Err(Error::IndexCorrupt(_))));
        assert!(matches!(reader.add("p0", &shards.dictionary[0]), Err(Error::IndexCorrupt(_))));
        assert!(!reader.has(Part { kind: PartKind::Postings, index: 0 }));
        assert!(matches!(KeywordReader::open(&shards.dictionary[0]), Err(Error::IndexCorrupt(_))));
        assert!(matches!(KeywordReader::open(b"not an index"), Err(Error::NotAnIndex)));
        // after all that, the reader still answers as the engine
        let (hits, _) = run(&mut reader, &shards, "Konopiště", 1, false);
        assert_eq!(hits[0].title, "Konopiště");
    }

    #[test]
    fn shard_bytes_are_deterministic_and_the_meta_reads_back() {
        let index = sample_index();
        let a = index.to_keyword_shards(ShardSizes::default()).unwrap();
        let b = index.to_keyword_shards(ShardSizes::default()).unwrap();
        assert_eq!(a, b);
        let meta = KeywordMeta::read(&a.meta).unwrap();
        assert_eq!(meta.config, index.config().bm25);
        assert_eq!(meta.docs(), 100);
        let total: u64 = meta.doc_len.iter().map(|&l| u64::from(l)).sum();
        assert_eq!(total, (0..100).map(|d| u64::from(index.bm25.doc_len(d).unwrap())).sum::<u64>());
        assert_eq!(*meta.dict_start.last().unwrap() as usize, index.bm25.num_terms());
    }
}
