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
use crate::text::Analyzer;

/// BM25 parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bm25Config {
    /// Term-frequency saturation k1 ≥ 0. Default 0.9.
    pub k1: f32,
    /// Length normalisation b ∈ [0, 1]. Default 0.4.
    pub b: f32,
}

impl Default for Bm25Config {
    fn default() -> Self {
        Bm25Config { k1: 0.9, b: 0.4 }
    }
}

impl Bm25Config {
    /// Check the ranges.
    ///
    /// # Errors
    /// [`Error::Config`] when k1 is negative or not finite, or b is outside [0, 1].
    pub fn validate(&self) -> Result<()> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(Error::Config(format!("bm25.k1 must be a finite number ≥ 0, got {}", self.k1)));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(Error::Config(format!("bm25.b must be between 0 and 1, got {}", self.b)));
        }
        Ok(())
    }
}

/// The inverted index with precomputed idf and length norms.
///
/// Shapes: `T` terms, `N` documents, `P` postings. `offsets: [T+1]`, `docs: [P]`, `tfs: [P]`,
/// `idf: [T]`, `norm: [N]` where `norm[d] = k1·(1 − b + b·|d|/avgdl)`.
#[derive(Debug, Clone)]
pub struct Bm25 {
    config: Bm25Config,
    vocab: HashMap<String, u32>,
    offsets: Vec<u32>,
    docs: Vec<u32>,
    tfs: Vec<u32>,
    idf: Vec<f32>,
    doc_len: Vec<u32>,
    norm: Vec<f32>,
    avgdl: f32,
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
        let t = vocab.len();
        let mut offsets = vec![0u32; t + 1];
        for &(term, _, _) in &triples {
            offsets[term as usize + 1] += 1;
        }
        for i in 0..t {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut docs = vec![0u32; triples.len()];
        let mut tfs = vec![0u32; triples.len()];
        // Triples are in document order, so each term's postings come out sorted by document.
        for (term, doc, tf) in triples {
            let slot = &mut fill[term as usize];
            docs[*slot as usize] = doc;
            tfs[*slot as usize] = tf;
            *slot += 1;
        }
        let nf = n as f64;
        let idf = (0..t)
            .map(|i| {
                let df = f64::from(offsets[i + 1] - offsets[i]);
                (1.0 + (nf - df + 0.5) / (df + 0.5)).ln() as f32
            })
            .collect();
        let total: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if n == 0 { 0.0 } else { (total as f64 / nf) as f32 };
        let norm = doc_len
            .iter()
            .map(|&l| {
                let rel = if avgdl > 0.0 { l as f32 / avgdl } else { 0.0 };
                config.k1 * (1.0 - config.b + config.b * rel)
            })
            .collect();
        Ok(Bm25 { config, vocab, offsets, docs, tfs, idf, doc_len, norm, avgdl })
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
        self.vocab.get(term).map(|&t| self.idf[t as usize])
    }

    /// Heap bytes held by the index structures (vocabulary strings and hash table included,
    /// estimated from capacities).
    pub fn heap_bytes(&self) -> usize {
        let vocab = self.vocab.capacity() * (std::mem::size_of::<String>() + 4 + 8)
            + self.vocab.keys().map(|k| k.capacity()).sum::<usize>();
        vocab
            + self.offsets.capacity() * 4
            + self.docs.capacity() * 4
            + self.tfs.capacity() * 4
            + self.idf.capacity() * 4
            + self.doc_len.capacity() * 4
            + self.norm.capacity() * 4
    }

    /// Score every document that contains at least one query term.
    ///
    /// `query_terms` are analysed terms (repeats count, see the module docs). Returns
    /// `(document, score)` pairs in no particular order; all scores are > 0 unless every matched
    /// term has idf 0.
    pub fn score_all(&self, query_terms: &[String]) -> Vec<Scored> {
        let mut qtf: Vec<(u32, f32)> = Vec::new();
        for term in query_terms {
            if let Some(&t) = self.vocab.get(term) {
                match qtf.iter_mut().find(|(id, _)| *id == t) {
                    Some((_, c)) => *c += 1.0,
                    None => qtf.push((t, 1.0)),
                }
            }
        }
        let mut acc = vec![0f32; self.doc_len.len()];
        let mut touched: Vec<u32> = Vec::new();
        let k1p1 = self.config.k1 + 1.0;
        for (t, q) in qtf {
            let w = q * self.idf[t as usize];
            let (s, e) = (self.offsets[t as usize] as usize, self.offsets[t as usize + 1] as usize);
            for (&d, &tf) in self.docs[s..e].iter().zip(&self.tfs[s..e]) {
                let tf = tf as f32;
                let slot = &mut acc[d as usize];
                if *slot == 0.0 {
                    touched.push(d);
                }
                *slot += w * tf * k1p1 / (tf + self.norm[d as usize]);
            }
        }
        touched.into_iter().map(|d| (d, acc[d as usize])).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::corpus::{Corpus, Passage};
    use crate::index::{Index, IndexConfig, Method};

    fn index(texts: &[(&str, &str)]) -> Index {
        let mut c = Corpus::new();
        for (id, text) in texts {
            c.add(Passage { id: id.to_string(), title: String::new(), text: text.to_string() }).unwrap();
        }
        Index::build(c, &IndexConfig::default()).unwrap()
    }

    fn scores(idx: &Index, q: &str) -> Vec<(String, f32)> {
        idx.search(q, 10, Method::Bm25)
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
            idx.search("words", 2, Method::Bm25).unwrap().iter().map(|h| h.passage).collect();
        assert_eq!(top2, vec![2, 0]);
        assert!(idx.search("words", 0, Method::Bm25).unwrap().is_empty());
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
        cfg.bm25 = super::Bm25Config { k1: f32::NAN, b: 0.4 };
        assert!(Index::build(Corpus::new(), &cfg).is_err());
    }

    #[test]
    fn highlights_are_byte_ranges_of_matching_words() {
        let idx = fruit();
        let text = "Apples and a banana.";
        assert_eq!(idx.highlights(&idx.query_terms("apple banana"), text), vec![(0, 6), (13, 19)]);
    }
}
