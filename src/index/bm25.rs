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

use std::collections::HashMap;

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
        let mut vocab: HashMap<String, u32> = HashMap::new();
        // (term, doc, tf) triples, later counting-sorted by term.
        let mut triples: Vec<(u32, u32, u32)> = Vec::new();
        let mut doc_len = Vec::with_capacity(n);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let step = (n / 100).max(1);
        for (d, p) in corpus.passages().iter().enumerate() {
            counts.clear();
            let mut len = 0u32;
            for field in [&p.title, &p.text] {
                analyzer.for_each_token(field, |term, _, _| {
                    let next = vocab.len() as u32;
                    let id = match vocab.get(term) {
                        Some(&id) => id,
                        None => {
                            vocab.insert(term.to_string(), next);
                            next
                        }
                    };
                    *counts.entry(id).or_insert(0) += 1;
                    len = len.saturating_add(1);
                });
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
