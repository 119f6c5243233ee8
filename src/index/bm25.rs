//! Okapi BM25 over an inverted index in compressed-sparse-row form.
//!
//! Scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
//! 2009, eq. 3.15, with Lucene's non-negative idf):
//!
//! ```text
//! score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//! idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//! ```
//!
//! `qtf(t)` counts a term repeated in the query once per occurrence, as Lucene's boolean query of
//! one clause per query token does. A document is the passage's title and text analysed together
//! by [`crate::text::Analyzer`]. Defaults k1 = 0.9, b = 0.4 (Anserini's defaults for passage
//! retrieval).

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::format::{Reader, Writer};
use crate::text::Analyzer;

use super::fuzzy::FuzzyDict;

/// BM25 parameters, and the query side's prefix matching and typo tolerance.
///
/// **Typo tolerance** (on by default; [`Bm25Config::typos`]): a query term also matches the
/// index terms within 1 edit when it has at least [`typo_one_chars`](Bm25Config::typo_one_chars)
/// characters and within 2 edits from [`typo_two_chars`](Bm25Config::typo_two_chars) (the
/// length-dependent budget of Typesense's `min_len_1typo`/`min_len_2typo` and Meilisearch's typo
/// rules), by optimal-string-alignment distance between stems ([`super::fuzzy`]). A match at
/// distance `d` is weighted `typo_weight^d`, so it always scores below the exact term.
///
/// **Prefix matching** (per query, [`super::QueryOptions::prefix`], for search as you type):
/// the last query word also matches the [`prefix_max_terms`](Bm25Config::prefix_max_terms)
/// most frequent index terms it begins, weighted `prefix_weight`.
///
/// A query term and everything it matches count once per passage: the passage gets the best
/// weighted BM25 term score among them (as Lucene's `SynonymQuery`/`DisjunctionMaxQuery`, so a
/// passage holding three near-spellings is not counted three times).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bm25Config {
    /// Term-frequency saturation k1 ≥ 0. Default 0.9.
    pub k1: f32,
    /// Length normalisation b ∈ [0, 1]. Default 0.4.
    pub b: f32,
    /// Typo tolerance on. Default true; `false` matches exact terms only (the ablation).
    pub typos: bool,
    /// Also look for near spellings of query terms that are in the vocabulary (a real but
    /// unintended word such as "pert" for "Peart"). Default false: on the dev questions it
    /// lowered BM25 and hybrid recall a little (hotpotqa, musique; confirmed on the held-out
    /// 2wikimultihopqa) and it did not raise the misspelt-entity hit rates (docs/method/ux.md).
    pub typo_known_terms: bool,
    /// Allow an edit on a term's first character too. Default false: near spellings must
    /// begin with the query term's first letter (few misspellings change it, and the lookup
    /// then walks one letter's terms only; docs/method/ux.md has the latency either way).
    pub typo_first_char: bool,
    /// Characters a query term needs before 1 edit is allowed. Default 4.
    pub typo_one_chars: u32,
    /// Characters a query term needs before 2 edits are allowed. Default 8.
    pub typo_two_chars: u32,
    /// Weight of a match per edit, in (0, 1]: distance d weighs `typo_weight^d`. Default 0.5.
    pub typo_weight: f32,
    /// At most this many near terms per query term (closest first, then most frequent).
    /// Default 8.
    pub typo_max_terms: u32,
    /// Weight of a prefix completion of the last query word, in (0, 1]. Default 0.5.
    pub prefix_weight: f32,
    /// At most this many completions (most frequent first). Default 20.
    pub prefix_max_terms: u32,
    /// Characters the last word needs before it is completed. Default 2.
    pub prefix_min_chars: u32,
}

impl Default for Bm25Config {
    fn default() -> Self {
        Bm25Config {
            k1: 0.9,
            b: 0.4,
            typos: true,
            typo_known_terms: false,
            typo_first_char: false,
            typo_one_chars: 4,
            typo_two_chars: 8,
            typo_weight: 0.5,
            typo_max_terms: 8,
            prefix_weight: 0.5,
            prefix_max_terms: 20,
            prefix_min_chars: 2,
        }
    }
}

impl Bm25Config {
    /// Check the ranges.
    ///
    /// # Errors
    /// [`Error::Config`] when k1 is negative or not finite, b is outside [0, 1], a weight is
    /// outside (0, 1], or `typo_two_chars < typo_one_chars`.
    pub fn validate(&self) -> Result<()> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(Error::Config(format!("bm25.k1 must be a finite number ≥ 0, got {}", self.k1)));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(Error::Config(format!("bm25.b must be between 0 and 1, got {}", self.b)));
        }
        for (name, w) in [("typo_weight", self.typo_weight), ("prefix_weight", self.prefix_weight)] {
            if !(w > 0.0 && w <= 1.0) {
                return Err(Error::Config(format!("bm25.{name} must be in (0, 1], got {w}")));
            }
        }
        if self.typo_two_chars < self.typo_one_chars {
            return Err(Error::Config(format!(
                "bm25.typo_two_chars ({}) must be at least bm25.typo_one_chars ({})",
                self.typo_two_chars, self.typo_one_chars
            )));
        }
        Ok(())
    }

    /// Edits allowed for a term of `chars` characters (0, 1 or 2; 0 when typos are off).
    pub fn typo_budget(&self, chars: usize) -> u32 {
        if !self.typos || chars < self.typo_one_chars as usize {
            0
        } else if chars < self.typo_two_chars as usize {
            1
        } else {
            2
        }
    }
}

/// One query term and the index terms it matches, each with its weight (1 for the term
/// itself, `typo_weight^d` for a near spelling, `prefix_weight` for a completion).
#[derive(Debug, Clone, PartialEq)]
pub struct TermGroup {
    /// How often the term occurs in the query (repeats count, see the module docs).
    pub count: f32,
    /// `(term id, weight)`, weights in (0, 1].
    pub variants: Vec<(u32, f32)>,
}

/// The inverted index with precomputed idf and length norms.
///
/// Shapes: `T` terms, `N` documents, `P` postings. `offsets: [T+1]`, `docs: [P]`, `tfs: [P]`,
/// `idf: [T]`, `norm: [N]` where `norm[d] = k1·(1 − b + b·|d|/avgdl)`.
#[derive(Debug, Clone)]
pub struct Bm25 {
    config: Bm25Config,
    offsets: Vec<u32>,
    docs: Vec<u32>,
    tfs: Vec<u32>,
    idf: Vec<f32>,
    doc_len: Vec<u32>,
    norm: Vec<f32>,
    avgdl: f32,
    /// The vocabulary sorted (term id = position), for exact, prefix and typo-tolerant lookup.
    dict: FuzzyDict,
}

/// A scored document: internal passage index and BM25 score.
pub type Scored = (u32, f32);

impl Bm25 {
    /// Index every passage of `corpus` (title and text).
    ///
    /// `progress(done, total)` is called after each chunk of about 1% of the passages.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid parameters; [`Error::Config`] as well when the postings
    /// would exceed `u32::MAX` entries (about 4·10⁹ tokens, far beyond a browser's memory).
    pub fn build(
        corpus: &Corpus,
        analyzer: &Analyzer,
        config: Bm25Config,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Bm25> {
        config.validate()?;
        let n = corpus.len();
        let mut vocab: HashMap<String, u32> = HashMap::default();
        // (term, doc, tf) triples, later counting-sorted by term.
        let mut triples: Vec<(u32, u32, u32)> = Vec::new();
        let mut doc_len = Vec::with_capacity(n);
        let mut counts: HashMap<u32, u32> = HashMap::default();
        let mut cache: HashMap<&str, Option<u32>> = HashMap::default();
        let step = (n / 100).max(1);
        for (d, p) in corpus.passages().iter().enumerate() {
            counts.clear();
            let mut len = 0u32;
            for field in [&p.title, &p.text] {
                for word in analyzer.words(field) {
                    // Stemming dominates indexing time; each distinct surface word is analysed once.
                    let id = match cache.get(word) {
                        Some(&id) => id,
                        None => {
                            let id = analyzer.term_of(word).map(|term| {
                                let next = vocab.len() as u32;
                                *vocab.entry(term).or_insert(next)
                            });
                            cache.insert(word, id);
                            id
                        }
                    };
                    if let Some(id) = id {
                        *counts.entry(id).or_insert(0) += 1;
                        len = len.saturating_add(1);
                    }
                }
            }
            let mut doc_terms: Vec<(u32, u32)> = counts.iter().map(|(&t, &c)| (t, c)).collect();
            doc_terms.sort_unstable();
            triples.extend(doc_terms.into_iter().map(|(t, c)| (t, d as u32, c)));
            doc_len.push(len);
            if (d + 1) % step == 0 || d + 1 == n {
                progress(d + 1, n);
            }
        }
        if triples.len() >= u32::MAX as usize {
            return Err(Error::Config("corpus too large: more than 4·10⁹ postings".into()));
        }
        // Term ids in sorted term order: deterministic, and the order the postings section
        // stores the terms in (sorted strings compress better and are checked on load).
        // (boxed strings: the same sort as the fuzzy dictionary's, compiled once in the wasm)
        let mut terms: Vec<(Box<str>, u32)> =
            vocab.into_iter().map(|(k, v)| (k.into_boxed_str(), v)).collect();
        terms.sort_unstable();
        let mut new_id = vec![0u32; terms.len()];
        for (i, (_, old)) in terms.iter().enumerate() {
            new_id[*old as usize] = i as u32;
        }
        let terms: Vec<String> = terms.into_iter().map(|(term, _)| term.into_string()).collect();
        let t = terms.len();
        let mut offsets = vec![0u32; t + 1];
        for &(term, _, _) in &triples {
            offsets[new_id[term as usize] as usize + 1] += 1;
        }
        for i in 0..t {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut docs = vec![0u32; triples.len()];
        let mut tfs = vec![0u32; triples.len()];
        // Triples are in document order, so each term's postings come out sorted by document.
        for (term, doc, tf) in triples {
            let slot = &mut fill[new_id[term as usize] as usize];
            docs[*slot as usize] = doc;
            tfs[*slot as usize] = tf;
            *slot += 1;
        }
        Ok(Self::assemble(config, terms, offsets, docs, tfs, doc_len))
    }

    /// The index from its terms (sorted; id = position), postings and document lengths: the
    /// idf, the length norms and the lookups, which [`Bm25::build`] and [`Bm25::read_from`]
    /// both derive here, so a read index scores bit for bit as the built one.
    fn assemble(
        config: Bm25Config,
        terms: Vec<String>,
        offsets: Vec<u32>,
        docs: Vec<u32>,
        tfs: Vec<u32>,
        doc_len: Vec<u32>,
    ) -> Bm25 {
        let n = doc_len.len();
        let idf = (0..terms.len()).map(|i| idf_of(offsets[i + 1] - offsets[i], n)).collect();
        let (avgdl, norm) = length_norms(&doc_len, &config);
        let dict = FuzzyDict::new(terms.into_iter().enumerate().map(|(i, k)| (k, i as u32)));
        Bm25 { config, offsets, docs, tfs, idf, doc_len, norm, avgdl, dict }
    }

    /// The postings section's body ([`crate::format::SectionKind::Postings`]): the document
    /// count and the term count (varints), then five streams of varints or bytes: every term's
    /// byte length; the terms (UTF-8, in id order, which is sorted order); every term's document
    /// frequency; each term's documents as gaps (the first as its number, then the difference to
    /// the previous one, ≥ 1); every posting's term frequency (≥ 1). Document lengths are not
    /// stored: a document's length is the sum of its term frequencies. About 1.3 bytes per
    /// posting before gzip.
    ///
    /// # Errors
    /// [`Error::Config`] when a count exceeds `u32::MAX`.
    pub(crate) fn write_to(&self, w: &mut Writer) -> Result<()> {
        let t = self.num_terms();
        w.vlen(self.doc_len.len())?;
        w.vlen(t)?;
        let (mut lens, mut bytes, mut dfs, mut gaps, mut tfs) =
            (Writer::default(), Writer::default(), Writer::default(), Writer::default(), Writer::default());
        for id in 0..t as u32 {
            let term = self.dict.key_of(id).unwrap_or_default();
            lens.vlen(term.len())?;
            bytes.buf.extend_from_slice(term.as_bytes());
            dfs.varint(self.df(id));
            let (s, e) = (self.offsets[id as usize] as usize, self.offsets[id as usize + 1] as usize);
            let mut prev = None;
            for (&d, &tf) in self.docs[s..e].iter().zip(&self.tfs[s..e]) {
                gaps.varint(prev.map_or(d, |p| d - p));
                prev = Some(d);
                tfs.varint(tf);
            }
        }
        for s in [lens, bytes, dfs, gaps, tfs] {
            w.stream(s)?;
        }
        Ok(())
    }

    /// Read [`Bm25::write_to`]'s body for `docs` documents with `config` (the index file's), with
    /// every value checked: the counts, terms non-empty, UTF-8 and strictly increasing, every
    /// document number below `docs` and strictly increasing within a term, every term frequency
    /// ≥ 1, nothing left over. Ranks exactly as the index it was written from.
    ///
    /// # Errors
    /// [`Error::IndexCorrupt`] naming what does not hold; [`Error::Config`] for parameters out of
    /// range.
    pub(crate) fn read_from(body: &[u8], config: Bm25Config, docs: usize) -> Result<Bm25> {
        config.validate()?;
        let mut r = Reader::new(body, "postings");
        let n = r.varint()? as usize;
        if n != docs {
            return Err(r.corrupt(format!("postings for {n} passages, the index has {docs}")));
        }
        let t = r.vcount(2)?;
        let mut lens = r.stream("postings")?;
        let mut bytes = r.stream("postings")?;
        let mut dfs = r.stream("postings")?;
        let mut gaps = r.stream("postings")?;
        let mut tf_stream = r.stream("postings")?;
        r.finish()?;
        let mut terms: Vec<String> = Vec::with_capacity(t);
        let mut offsets: Vec<u32> = Vec::with_capacity(t + 1);
        offsets.push(0);
        let mut total: u64 = 0;
        for _ in 0..t {
            let len = lens.varint()? as usize;
            let b = bytes.take(len)?;
            let term = std::str::from_utf8(b).map_err(|_| bytes.corrupt("a term is not UTF-8"))?;
            if term.is_empty() || terms.last().is_some_and(|p| p.as_str() >= term) {
                return Err(bytes.corrupt("the terms are not distinct, non-empty and in sorted order"));
            }
            terms.push(term.to_string());
            let df = dfs.varint()?;
            if df == 0 || df as usize > n {
                return Err(dfs.corrupt(format!("a document frequency of {df} for {n} passages")));
            }
            total += u64::from(df);
            offsets.push(u32::try_from(total).map_err(|_| dfs.corrupt("more than 4·10⁹ postings"))?);
        }
        for s in [&lens, &bytes, &dfs] {
            s.finish()?;
        }
        let p = total as usize;
        // every posting takes at least one byte in each of the last two streams
        if p > gaps.remaining() || p > tf_stream.remaining() {
            return Err(gaps.corrupt(format!("{p} postings do not fit the bytes left")));
        }
        let mut doc_ids = Vec::with_capacity(p);
        let mut tfs = Vec::with_capacity(p);
        let mut doc_len = vec![0u32; n];
        for w in offsets.windows(2) {
            let start = doc_ids.len();
            read_term_postings(&mut gaps, &mut tf_stream, (w[1] - w[0]) as usize, n, &mut doc_ids, &mut tfs)?;
            for (&d, &tf) in doc_ids[start..].iter().zip(&tfs[start..]) {
                doc_len[d as usize] = doc_len[d as usize].saturating_add(tf);
            }
        }
        gaps.finish()?;
        tf_stream.finish()?;
        Ok(Self::assemble(config, terms, offsets, doc_ids, tfs, doc_len))
    }

    /// The parameters this index was built with.
    pub fn config(&self) -> Bm25Config {
        self.config
    }

    /// Number of distinct terms.
    pub fn num_terms(&self) -> usize {
        self.idf.len()
    }

    /// Number of (term, document) postings.
    pub fn num_postings(&self) -> usize {
        self.docs.len()
    }

    /// Average document length in tokens (after stop-word removal).
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }

    /// Length in tokens of document `d`.
    pub fn doc_len(&self, d: u32) -> Option<u32> {
        self.doc_len.get(d as usize).copied()
    }

    /// idf of an analysed term, if it is in the vocabulary.
    pub fn idf(&self, term: &str) -> Option<f32> {
        self.dict.get(term).map(|t| self.idf[t as usize])
    }

    /// Heap bytes held by the index structures (vocabulary strings included, estimated from
    /// capacities).
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * 4
            + self.docs.capacity() * 4
            + self.tfs.capacity() * 4
            + self.idf.capacity() * 4
            + self.doc_len.capacity() * 4
            + self.norm.capacity() * 4
            + self.dict.heap_bytes()
    }

    /// Document frequency of term id `t`.
    fn df(&self, t: u32) -> u32 {
        self.offsets[t as usize + 1] - self.offsets[t as usize]
    }

    /// Term id `t`'s documents (ascending) and term frequencies; empty for an unknown id.
    pub(crate) fn postings_of(&self, t: u32) -> (&[u32], &[u32]) {
        match (self.offsets.get(t as usize), self.offsets.get(t as usize + 1)) {
            (Some(&s), Some(&e)) => (&self.docs[s as usize..e as usize], &self.tfs[s as usize..e as usize]),
            _ => (&[], &[]),
        }
    }

    /// The analysed term of id `t`.
    pub fn term(&self, t: u32) -> Option<&str> {
        self.dict.key_of(t)
    }

    /// The query's term groups with exact matches only (no typo tolerance, no prefix).
    fn exact_groups(&self, query_terms: &[String]) -> Vec<TermGroup> {
        let mut groups: Vec<TermGroup> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        for term in query_terms {
            if let Some(t) = self.dict.get(term) {
                match seen.iter().position(|&s| s == t) {
                    Some(i) => groups[i].count += 1.0,
                    None => {
                        seen.push(t);
                        groups.push(TermGroup { count: 1.0, variants: vec![(t, 1.0)] });
                    }
                }
            }
        }
        groups
    }

    /// Analyse `query` and find what each of its terms matches (config docs): the term itself,
    /// its near spellings when typos are on, and, when `prefix` is set, the completions of the
    /// query's last word. Repeated terms make one group with a count ([`expand_query`] over
    /// this index's whole vocabulary).
    pub fn expand(&self, analyzer: &Analyzer, query: &str, prefix: bool) -> Vec<TermGroup> {
        expand_query(self, analyzer, query, prefix)
    }

    /// Score every document that contains at least one query term (exact terms only).
    ///
    /// `query_terms` are analysed terms (repeats count, see the module docs). Returns
    /// `(document, score)` pairs in no particular order; all scores are > 0 unless every matched
    /// term has idf 0.
    pub fn score_all(&self, query_terms: &[String]) -> Vec<Scored> {
        self.score_groups(&self.exact_groups(query_terms))
    }

    /// Score every document that matches at least one group ([`Bm25::expand`]): the sum over
    /// groups of `count ×` the best `weight × idf × tf·(k1+1)/(tf + norm)` among the group's
    /// variants present in the document ([`score_postings`]). Pairs in no particular order.
    pub fn score_groups(&self, groups: &[TermGroup]) -> Vec<Scored> {
        score_postings(groups, &self.norm, self.config.k1, |t| {
            let idf = *self.idf.get(t as usize)?;
            let (s, e) = (self.offsets[t as usize] as usize, self.offsets[t as usize + 1] as usize);
            Some((idf, &self.docs[s..e], &self.tfs[s..e]))
        })
    }
}

/// One term's `df` postings from a postings body's two streams (documents as gaps: the first as
/// its number, then the difference to the previous one; term frequencies), appended to `docs`
/// and `tfs`, every value checked: each document below `n` and after the previous one, each
/// frequency ≥ 1. Shared by [`Bm25::read_from`] and a static site's posting shards
/// ([`super::shards::read_postings`]).
///
/// # Errors
/// [`Error::IndexCorrupt`] naming what does not hold; the streams' own errors.
pub(crate) fn read_term_postings(
    gaps: &mut Reader<'_>,
    tf_stream: &mut Reader<'_>,
    df: usize,
    n: usize,
    docs: &mut Vec<u32>,
    tfs: &mut Vec<u32>,
) -> Result<()> {
    let mut prev: Option<u32> = None;
    for _ in 0..df {
        let g = gaps.varint()?;
        let d = match prev {
            None => g,
            Some(_) if g == 0 => return Err(gaps.corrupt("a term lists a document twice")),
            Some(q) => q.checked_add(g).ok_or_else(|| gaps.corrupt("a document number overflows"))?,
        };
        if d as usize >= n {
            return Err(gaps.corrupt(format!("document {d} of {n}")));
        }
        let tf = tf_stream.varint()?;
        if tf == 0 {
            return Err(tf_stream.corrupt("a term frequency of 0"));
        }
        docs.push(d);
        tfs.push(tf);
        prev = Some(d);
    }
    Ok(())
}

/// What query expansion ([`expand_query`]) reads of a vocabulary: the whole of it in [`Bm25`],
/// the parts a query needs in a static site's keyword reader ([`crate::reader`]), which fetches
/// them first (the parts are chosen so that every answer below equals the whole vocabulary's).
pub(crate) trait Vocabulary {
    /// The BM25 and query-side parameters.
    fn config(&self) -> &Bm25Config;
    /// The id of an analysed term, if it is in the vocabulary.
    fn lookup(&self, term: &str) -> Option<u32>;
    /// The document frequency of term id `t` (0 for an unknown id).
    fn df_of(&self, t: u32) -> u32;
    /// Ids of the terms that begin with `prefix`, in term order.
    fn prefixed_ids(&self, prefix: &str) -> Vec<u32>;
    /// The terms within `budget` edits of `term` ([`FuzzyDict::fuzzy`], or
    /// [`FuzzyDict::fuzzy_same_first`] unless [`Bm25Config::typo_first_char`]).
    fn near(&self, term: &str, budget: u32) -> Vec<super::fuzzy::FuzzyMatch>;
}

impl Vocabulary for Bm25 {
    fn config(&self) -> &Bm25Config {
        &self.config
    }
    fn lookup(&self, term: &str) -> Option<u32> {
        self.dict.get(term)
    }
    fn df_of(&self, t: u32) -> u32 {
        if (t as usize) < self.num_terms() {
            self.df(t)
        } else {
            0
        }
    }
    fn prefixed_ids(&self, prefix: &str) -> Vec<u32> {
        self.dict.prefixed(prefix).to_vec()
    }
    fn near(&self, term: &str, budget: u32) -> Vec<super::fuzzy::FuzzyMatch> {
        if self.config.typo_first_char {
            self.dict.fuzzy(term, budget)
        } else {
            self.dict.fuzzy_same_first(term, budget)
        }
    }
}

/// The prefixes under which the query's last word is completed ([`expand_query`]): the
/// analyser's term of the word (so it meets the index's normalisation) and the word lower-cased
/// and accent-folded as typed (a stem of a partial word is not always a prefix of the whole
/// word's stem), each only when it has `prefix_min_chars` characters; with the analyser's term
/// of the last token, which the completions exclude. `None` when the query does not end in a
/// word (a space after it: the word is finished) or the word is too short.
pub(crate) struct CompletionPrefixes {
    /// The prefixes to look up, in order (one or two).
    pub prefixes: Vec<String>,
    /// The last token's own analysed term, if the query ends in it.
    pub own: Option<String>,
}

/// [`CompletionPrefixes`] of `query` whose analysed tokens are `tokens`.
pub(crate) fn completion_prefixes(
    config: &Bm25Config,
    analyzer: &Analyzer,
    query: &str,
    tokens: &[crate::text::Token],
) -> Option<CompletionPrefixes> {
    let trimmed = query.trim_end();
    if trimmed.len() != query.len() {
        return None; // a space after the last word: the word is finished
    }
    let word = analyzer.words(query).last()?;
    // `word` is a slice of `query`: its end offset is where it stands plus its length.
    let word_end = (word.as_ptr() as usize).checked_sub(query.as_ptr() as usize)? + word.len();
    if word_end != query.len() || word.chars().count() < config.prefix_min_chars as usize {
        return None;
    }
    let own = tokens.last().filter(|t| t.end == query.len()).map(|t| t.term.clone());
    // Lower-cased and accent-folded the way the analyser folds index terms.
    let lower = crate::text::fold::fold_diacritics(&word.to_lowercase()).into_owned();
    let prefixes = [own.clone(), Some(lower)]
        .into_iter()
        .flatten()
        .filter(|p| p.chars().count() >= config.prefix_min_chars as usize)
        .collect();
    Some(CompletionPrefixes { prefixes, own })
}

/// Analyse `query` and find what each of its terms matches in `vocab` ([`Bm25Config`]'s docs):
/// the term itself, its near spellings when typos are on (only for a term not in the
/// vocabulary unless [`Bm25Config::typo_known_terms`]; closest first, then most frequent, then
/// by id; at most [`Bm25Config::typo_max_terms`], weighted `typo_weight^d`), and, when `prefix`
/// is set, the completions of the query's last word ([`completion_prefixes`]; the most frequent
/// [`Bm25Config::prefix_max_terms`] terms, the term itself excluded, weighted `prefix_weight`).
/// Repeated terms make one group with a count; groups that match nothing are dropped.
pub(crate) fn expand_query(vocab: &impl Vocabulary, analyzer: &Analyzer, query: &str, prefix: bool) -> Vec<TermGroup> {
    let cfg = *vocab.config();
    let mut keys: Vec<String> = Vec::new();
    let mut groups: Vec<TermGroup> = Vec::new();
    let tokens = analyzer.tokens(query);
    for tok in &tokens {
        if let Some(i) = keys.iter().position(|k| *k == tok.term) {
            groups[i].count += 1.0;
            continue;
        }
        let mut variants: Vec<(u32, f32)> = Vec::new();
        let exact = vocab.lookup(&tok.term);
        if let Some(t) = exact {
            variants.push((t, 1.0));
        }
        let budget = cfg.typo_budget(tok.term.chars().count());
        if budget > 0 && (exact.is_none() || cfg.typo_known_terms) {
            let found = vocab.near(&tok.term, budget);
            let mut near: Vec<(u32, u32)> =
                found.into_iter().filter(|m| m.distance > 0).map(|m| (m.distance, m.id)).collect();
            near.sort_unstable_by(|a, b| {
                a.0.cmp(&b.0).then(vocab.df_of(b.1).cmp(&vocab.df_of(a.1))).then(a.1.cmp(&b.1))
            });
            near.truncate(cfg.typo_max_terms as usize);
            variants.extend(near.into_iter().map(|(d, t)| (t, cfg.typo_weight.powi(d as i32))));
        }
        keys.push(tok.term.clone());
        groups.push(TermGroup { count: 1.0, variants });
    }
    if prefix {
        if let Some(c) = completion_prefixes(&cfg, analyzer, query, &tokens) {
            let mut ids: Vec<u32> = Vec::new();
            for p in &c.prefixes {
                ids.extend(vocab.prefixed_ids(p));
            }
            let exact = c.own.as_deref().and_then(|t| vocab.lookup(t));
            ids.sort_unstable();
            ids.dedup();
            ids.retain(|&t| Some(t) != exact);
            ids.sort_unstable_by(|&a, &b| vocab.df_of(b).cmp(&vocab.df_of(a)).then(a.cmp(&b)));
            ids.truncate(cfg.prefix_max_terms as usize);
            if !ids.is_empty() {
                let variants = ids.into_iter().map(|t| (t, cfg.prefix_weight)).collect();
                groups.push(TermGroup { count: 1.0, variants });
            }
        }
    }
    groups.retain(|g| !g.variants.is_empty());
    groups
}

/// BM25's inverse document frequency of a term in `df` of `n` documents (module docs; Lucene's
/// non-negative form), computed in `f64` and stored as `f32`, the same way wherever it is
/// computed so that every reader scores bit for bit alike.
pub(crate) fn idf_of(df: u32, n: usize) -> f32 {
    let (nf, df) = (n as f64, f64::from(df));
    (1.0 + (nf - df + 0.5) / (df + 0.5)).ln() as f32
}

/// The average document length and every document's length norm `k1·(1 − b + b·|d|/avgdl)`
/// for the document lengths `doc_len` (tokens); avgdl 0 for no documents.
pub(crate) fn length_norms(doc_len: &[u32], config: &Bm25Config) -> (f32, Vec<f32>) {
    let n = doc_len.len();
    let total: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
    let avgdl = if n == 0 { 0.0 } else { (total as f64 / n as f64) as f32 };
    let norm = doc_len
        .iter()
        .map(|&l| {
            let rel = if avgdl > 0.0 { l as f32 / avgdl } else { 0.0 };
            config.k1 * (1.0 - config.b + config.b * rel)
        })
        .collect();
    (avgdl, norm)
}

/// Score every document that matches at least one of `groups`: the sum over groups of `count ×`
/// the best `weight × idf × tf·(k1+1)/(tf + norm)` among the group's variants present in the
/// document (a group of one variant adds `count × weight × idf × …` directly). `postings(t)`
/// gives a term's idf, documents and term frequencies (`None`: the term is skipped); `norm` is
/// [`length_norms`]'s, one per document. Pairs in the order documents are first met.
pub(crate) fn score_postings<'a>(
    groups: &[TermGroup],
    norm: &[f32],
    k1: f32,
    postings: impl Fn(u32) -> Option<(f32, &'a [u32], &'a [u32])>,
) -> Vec<Scored> {
    let n = norm.len();
    let mut acc = vec![0f32; n];
    let mut seen = vec![false; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut best = vec![0f32; if groups.iter().any(|g| g.variants.len() > 1) { n } else { 0 }];
    let mut group_docs: Vec<u32> = Vec::new();
    let k1p1 = k1 + 1.0;
    for g in groups {
        let single = g.variants.len() == 1;
        for &(t, weight) in &g.variants {
            let Some((idf, docs, tfs)) = postings(t) else { continue };
            let w = weight * idf * if single { g.count } else { 1.0 };
            for (&d, &tf) in docs.iter().zip(tfs) {
                let Some(&nd) = norm.get(d as usize) else { continue };
                let tf = tf as f32;
                let c = w * tf * k1p1 / (tf + nd);
                let d = d as usize;
                if !seen[d] {
                    seen[d] = true;
                    touched.push(d as u32);
                }
                if single {
                    acc[d] += c;
                } else {
                    if best[d] == 0.0 {
                        group_docs.push(d as u32);
                    }
                    best[d] = best[d].max(c);
                }
            }
        }
        for d in group_docs.drain(..) {
            acc[d as usize] += g.count * best[d as usize];
            best[d as usize] = 0.0;
        }
    }
    touched.into_iter().map(|d| (d, acc[d as usize])).collect()
}

#[cfg(test)]
mod tests {
    use super::Bm25;
    use crate::corpus::{Corpus, Passage};
    use crate::error::Error;
    use crate::format::Writer;
    use crate::index::{Index, IndexConfig, Method};

    fn index(texts: &[(&str, &str)]) -> Index {
        let mut c = Corpus::new();
        for (id, text) in texts {
            c.add(Passage { id: id.to_string(), title: String::new(), text: text.to_string() }).unwrap();
        }
        Index::build(c, &IndexConfig::default()).unwrap()
    }

    fn scores(idx: &Index, q: &str) -> Vec<(String, f32)> {
        idx.searcher().search(q, 10, Method::Bm25)
            .unwrap()
            .into_iter()
            .map(|h| (idx.corpus().get(h.passage).unwrap().id.clone(), h.score))
            .collect()
    }

    /// Three documents, N = 3, lengths 3, 2, 4 (avgdl = 3), k1 = 0.9, b = 0.4.
    /// norm(|d|) = 0.9·(0.6 + 0.4·|d|/3): 0.9, 0.78, 1.02.
    /// idf(df=1) = ln(1 + 2.5/1.5) = ln(8/3) = 0.980829; idf(df=2) = ln(1 + 1.5/2.5) = ln 1.6 = 0.470004.
    fn fruit() -> Index {
        index(&[("d0", "apple banana apple"), ("d1", "banana cherry"), ("d2", "cherry date elderberry fig")])
    }

    #[test]
    fn single_term_by_hand() {
        let idx = fruit();
        // d0: tf 2 → ln(8/3) · 2·1.9 / (2 + 0.9) = 0.980829 · 1.310345 = 1.285225
        let got = scores(&idx, "apple");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "d0");
        assert!((got[0].1 - 1.285_224_5).abs() < 1e-5, "{got:?}");
        assert!((idx.bm25().idf("appl").unwrap() - (8.0f32 / 3.0).ln()).abs() < 1e-6);
        assert_eq!(idx.bm25().avgdl(), 3.0);
    }

    #[test]
    fn two_terms_by_hand_and_ranked() {
        let idx = fruit();
        // d1: 2 · ln1.6 · 1.9/(1 + 0.78) = 1.003379; d0: ln1.6 · 1.9/1.9 = 0.470004;
        // d2: ln1.6 · 1.9/(1 + 1.02) = 0.442083.
        let got = scores(&idx, "banana cherry");
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, vec!["d1", "d0", "d2"]);
        for ((_, s), want) in got.iter().zip([1.003_378_5f32, 0.470_003_6, 0.442_082_6]) {
            assert!((s - want).abs() < 1e-5, "{got:?}");
        }
    }

    #[test]
    fn repeated_query_terms_count_twice() {
        let idx = fruit();
        let once = scores(&idx, "apple")[0].1;
        let twice = scores(&idx, "apple apples")[0].1;
        assert!((twice - 2.0 * once).abs() < 1e-5);
    }

    #[test]
    fn ties_break_by_passage_id_and_k_cuts() {
        let idx = index(&[("b", "same words"), ("c", "same words"), ("a", "same words"), ("z", "other")]);
        let ids: Vec<String> = scores(&idx, "words").into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, vec!["a", "b", "c"]);
        let top2: Vec<u32> =
            idx.searcher().search("words", 2, Method::Bm25).unwrap().iter().map(|h| h.passage).collect();
        assert_eq!(top2, vec![2, 0]);
        assert!(idx.searcher().search("words", 0, Method::Bm25).unwrap().is_empty());
    }

    #[test]
    fn stop_words_and_unknown_terms_match_nothing() {
        let idx = fruit();
        assert!(scores(&idx, "the and of").is_empty());
        assert!(scores(&idx, "zucchini").is_empty());
        assert!(scores(&idx, "").is_empty());
    }

    #[test]
    fn empty_corpus_and_empty_passages_are_fine() {
        let idx = index(&[]);
        assert!(scores(&idx, "apple").is_empty());
        let idx = index(&[("e", ""), ("f", "apple")]);
        assert_eq!(scores(&idx, "apple")[0].0, "f");
        assert_eq!(idx.bm25().doc_len(0), Some(0));
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let mut cfg = IndexConfig::default();
        cfg.bm25.b = 1.5;
        let e = Index::build(Corpus::new(), &cfg).unwrap_err();
        assert_eq!(e.to_string(), "invalid configuration: bm25.b must be between 0 and 1, got 1.5");
        cfg.bm25 = super::Bm25Config { k1: f32::NAN, ..Default::default() };
        assert!(Index::build(Corpus::new(), &cfg).is_err());
    }

    fn scores_with(idx: &Index, q: &str, prefix: bool) -> Vec<(String, f32)> {
        idx.searcher().search_with(q, 10, Method::Bm25, crate::index::QueryOptions { prefix })
            .unwrap()
            .into_iter()
            .map(|h| (idx.corpus().get(h.passage).unwrap().id.clone(), h.score))
            .collect()
    }

    fn fruit_without_typos() -> Index {
        let mut c = Corpus::new();
        for (id, text) in
            [("d0", "apple banana apple"), ("d1", "banana cherry"), ("d2", "cherry date elderberry fig")]
        {
            c.add(Passage { id: id.into(), title: String::new(), text: text.into() }).unwrap();
        }
        let mut cfg = IndexConfig::default();
        cfg.bm25.typos = false;
        Index::build(c, &cfg).unwrap()
    }

    /// "banan" (5 characters, 1 edit allowed) is 1 edit from "banana": each passage gets
    /// 0.5¹ × its exact "banana" score. d1: 0.5 · ln1.6 · 1.9/1.78 = 0.250845;
    /// d0: 0.5 · ln1.6 · 1.9/1.9 = 0.235002. Without typo tolerance nothing matches.
    #[test]
    fn a_misspelt_term_matches_at_typo_weight() {
        let got = scores(&fruit(), "banan");
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, vec!["d1", "d0"]);
        for ((_, s), want) in got.iter().zip([0.250_845_1f32, 0.235_001_8]) {
            assert!((s - want).abs() < 1e-5, "{got:?}");
        }
        assert!(scores(&fruit_without_typos(), "banan").is_empty());
        // Transposed letters are one edit: "cherry" → "cherri", "cehrry" → "cehrri".
        assert_eq!(scores(&fruit(), "cehrry").len(), 2);
        // Three characters allow no edit.
        assert!(scores(&fruit(), "fog").is_empty());
        let terms = fruit().searcher().query_terms("banan");
        assert!(terms.contains("banana") && terms.contains("banan"), "{terms:?}");
    }

    /// The exact term outranks a near spelling: "pert" is in d0, "peart" (1 edit) in d1, same
    /// lengths and document frequencies, so with typo_known_terms d1 scores exactly half of d0;
    /// by default a term in the vocabulary is taken as meant.
    #[test]
    fn exact_terms_score_above_near_spellings() {
        let idx = index(&[("d0", "pert remark"), ("d1", "peart drummer")]);
        assert_eq!(scores(&idx, "pert").len(), 1);
        let mut c = Corpus::new();
        c.add(Passage { id: "d0".into(), title: String::new(), text: "pert remark".into() }).unwrap();
        c.add(Passage { id: "d1".into(), title: String::new(), text: "peart drummer".into() }).unwrap();
        let mut cfg = IndexConfig::default();
        cfg.bm25.typo_known_terms = true;
        let idx = Index::build(c, &cfg).unwrap();
        let got = scores(&idx, "pert");
        assert_eq!(got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), vec!["d0", "d1"]);
        assert!((got[1].1 - 0.5 * got[0].1).abs() < 1e-6, "{got:?}");
    }

    /// A passage holding several near spellings of one query term gets the best one, once.
    #[test]
    fn near_spellings_count_once_per_passage() {
        let idx = index(&[("d0", "perth peart"), ("d1", "perth")]);
        let got = scores(&idx, "pert");
        // Both are 1 edit from "pert"; d0's best term score is its "peart" (df 1, higher idf).
        let df1 = (1.0f32 + 1.5 / 1.5).ln(); // ln 2, "peart"
        let norm0 = 0.9 * (0.6 + 0.4 * 2.0 / 1.5);
        let want0 = 0.5 * df1 * 1.9 / (1.0 + norm0);
        assert!((got[0].1 - want0).abs() < 1e-5, "{got:?}");
        assert_eq!(got[0].0, "d0");
    }

    /// The last word completes to the index terms it begins, at prefix_weight (0.5), only when
    /// asked and only when the query does not end in a space.
    #[test]
    fn prefix_completes_the_last_word() {
        let idx = fruit_without_typos();
        assert!(scores_with(&idx, "ban", false).is_empty());
        let got = scores_with(&idx, "ban", true);
        assert_eq!(got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), vec!["d1", "d0"]);
        for ((_, s), want) in got.iter().zip([0.250_845_1f32, 0.235_001_8]) {
            assert!((s - want).abs() < 1e-5, "{got:?}");
        }
        assert!(scores_with(&idx, "ban ", true).is_empty());
        // "apple el": apple exact (d0 1.285225) and elderberry at 0.5 (d2: 0.5 · ln(8/3) · 1.9/2.02).
        let got = scores_with(&idx, "apple el", true);
        assert_eq!(got.len(), 2);
        assert!((got[0].1 - 1.285_224_5).abs() < 1e-5);
        assert!((got[1].1 - 0.5 * (8.0f32 / 3.0).ln() * 1.9 / 2.02).abs() < 1e-5, "{got:?}");
        // A one-character word is not completed; a finished word still matches exactly.
        assert!(scores_with(&idx, "e", true).is_empty());
        assert_eq!(scores_with(&idx, "apple", true)[0].0, "d0");
        // Stop words are completed as typed ("the" → nothing here, "da" → "date").
        assert_eq!(scores_with(&idx, "the da", true)[0].0, "d2");
        let terms = idx.searcher().query_terms_with("ban", crate::index::QueryOptions { prefix: true });
        assert!(terms.contains("banana"));
    }

    /// Odd queries with prefix and typos on: no panic, and results only from real matches.
    #[test]
    fn odd_queries_with_prefix_and_typos_are_fine() {
        let idx = index(&[("d0", "Café owners’ union 東京 Москва"), ("d1", "apple banana")]);
        let long = "ab".repeat(80);
        for q in [
            "",
            " ",
            "é",
            "東",
            "東京",
            "моск",
            "caf",
            "café'",
            "a-b",
            "🦀",
            "the",
            "'",
            long.as_str(),
            "ban\u{0301}",
        ] {
            for prefix in [false, true] {
                let hits =
                    idx.searcher().search_with(q, 5, Method::Bm25, crate::index::QueryOptions { prefix }).unwrap();
                assert!(hits.iter().all(|h| h.score > 0.0), "{q:?}");
            }
        }
        assert_eq!(scores_with(&idx, "моск", true)[0].0, "d0");
        assert_eq!(scores_with(&idx, "caf", true)[0].0, "d0");
    }

    #[test]
    fn typo_parameters_are_validated() {
        let mut cfg = IndexConfig::default();
        cfg.bm25.typo_weight = 0.0;
        let e = Index::build(Corpus::new(), &cfg).unwrap_err();
        assert_eq!(e.to_string(), "invalid configuration: bm25.typo_weight must be in (0, 1], got 0");
        let mut cfg = IndexConfig::default();
        cfg.bm25.typo_two_chars = 3;
        assert!(Index::build(Corpus::new(), &cfg).is_err());
        let b = super::Bm25Config::default();
        assert_eq!([b.typo_budget(3), b.typo_budget(4), b.typo_budget(7), b.typo_budget(8)], [0, 1, 1, 2]);
        let parsed: super::Bm25Config = serde_json::from_str(r#"{"typos": false}"#).unwrap();
        assert_eq!(parsed.typo_budget(10), 0);
    }

    #[test]
    fn highlights_are_byte_ranges_of_matching_words() {
        let idx = fruit();
        let text = "Apples and a banana.";
        assert_eq!(idx.searcher().highlights(&idx.searcher().query_terms("apple banana"), text), vec![(0, 6), (13, 19)]);
    }

    /// The postings section of a real index, written and read back: every array equal, every
    /// float bit for bit (the same derivation), the terms in sorted id order.
    #[test]
    fn postings_written_and_read_are_the_built_index() {
        let mut c = Corpus::new();
        c.extend(crate::corpus::hotpot_sample()).unwrap();
        let idx = Index::build(c, &IndexConfig::default()).unwrap();
        let built = idx.bm25();
        let mut w = Writer::default();
        built.write_to(&mut w).unwrap();
        let read = Bm25::read_from(&w.buf, built.config(), idx.corpus().len()).unwrap();
        assert_eq!(read.offsets, built.offsets);
        assert_eq!(read.docs, built.docs);
        assert_eq!(read.tfs, built.tfs);
        assert_eq!(read.doc_len, built.doc_len);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        assert_eq!(bits(&read.idf), bits(&built.idf));
        assert_eq!(bits(&read.norm), bits(&built.norm));
        assert_eq!(read.avgdl.to_bits(), built.avgdl.to_bits());
        let terms: Vec<&str> = (0..built.num_terms() as u32).map(|t| built.term(t).unwrap()).collect();
        assert!(terms.windows(2).all(|p| p[0] < p[1]), "term ids follow sorted order");
        assert!(terms.iter().enumerate().all(|(t, k)| read.term(t as u32) == Some(*k)));
        // a posting costs about 1.3 bytes before gzip here (a gap and a term frequency, most of
        // them one byte each), the terms a few bytes each
        assert!(w.buf.len() < 2 * built.num_postings() + 10 * built.num_terms(), "{} bytes", w.buf.len());
    }

    /// Two terms over three documents, written byte by byte: `appl` in d0 twice; `banana` in d0
    /// and d1 once. |d0| = 3, |d1| = 1, |d2| = 0 (from the term frequencies), avgdl = 4/3,
    /// norm(d) = 0.9·(0.6 + 0.4·|d|/avgdl): 1.35, 0.87, 0.54.
    fn by_hand() -> Vec<u8> {
        let mut b = vec![3, 2]; // documents, terms
        b.extend([2, 4, 6]); // term byte lengths
        b.push(10);
        b.extend(b"applbanana");
        b.extend([2, 1, 2]); // document frequencies
        b.extend([3, 0, 0, 1]); // gaps: appl d0; banana d0, d1
        b.extend([3, 2, 1, 1]); // term frequencies
        b
    }

    #[test]
    fn a_postings_body_written_by_hand_scores_as_computed_by_hand() {
        let bm = Bm25::read_from(&by_hand(), super::Bm25Config::default(), 3).unwrap();
        assert_eq!(
            (bm.num_terms(), bm.num_postings(), bm.doc_len(0), bm.doc_len(2)),
            (2, 3, Some(3), Some(0))
        );
        // ln(8/3) · 2·1.9 / (2 + 1.35)
        let got = bm.score_all(&["appl".to_string()]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 0);
        assert!((got[0].1 - 1.112_582_4).abs() < 1e-5, "{got:?}");
        // ln 1.6 · 1.9 / (1 + 1.35) and ln 1.6 · 1.9 / (1 + 0.87)
        let mut got = bm.score_all(&["banana".to_string()]);
        got.sort_by_key(|&(d, _)| d);
        assert!((got[0].1 - 0.380_002_9).abs() < 1e-5 && (got[1].1 - 0.493_374).abs() < 1e-5, "{got:?}");
    }

    #[test]
    fn damaged_postings_are_refused_without_a_panic() {
        let cfg = super::Bm25Config::default();
        let good = by_hand();
        let change = |at: usize, v: u8| {
            let mut b = good.clone();
            b[at] = v;
            b
        };
        for (bytes, docs, want) in [
            (good.clone(), 4, "postings for 3 passages, the index has 4"),
            (change(6, b'b'), 3, "not distinct, non-empty and in sorted order"), // "bppl" > "banana"
            (change(22, 0), 3, "a term lists a document twice"),
            (change(20, 3), 3, "document 3 of 3"),
            (change(24, 0), 3, "a term frequency of 0"),
            (change(17, 0), 3, "a document frequency of 0"),
            ([good.clone(), vec![0]].concat(), 3, "bytes left over"),
        ] {
            let err = Bm25::read_from(&bytes, cfg, docs).unwrap_err();
            assert!(matches!(err, Error::IndexCorrupt(_)) && err.to_string().contains(want), "{want}: {err}");
        }
        // every truncation and every byte changed: an error or an index, never a panic
        for len in 0..good.len() {
            assert!(Bm25::read_from(&good[..len], cfg, 3).is_err());
        }
        for at in 0..good.len() {
            for v in [0u8, 1, 2, 0x7f, 0x80, 0xff] {
                let _ = Bm25::read_from(&change(at, v), cfg, 3);
            }
        }
    }
}
