//! Fact scoring from the fact texts' tokens, for graphs embedded with the static embedder
//! (CatRAG §3 and HippoRAG 2 §3, "score every fact by cosine"; METHOD.md §3).
//!
//! The static embedder's vector of a text is a normalised sum of table rows,
//! `v(f) = Σₜ rₜ / ‖Σₜ rₜ‖` over the text's WordPiece ids `t` without `[UNK]`
//! ([`StaticEmbedder::row_ids_into`]), each row `rₜ = sₜ·r̂ₜ` stored in `i8` with one scale. So
//! the cosine of a query `q` with a fact is `(Σₜ sₜ·(r̂ₜ·q)) / ‖Σₜ rₜ‖`: one dot product per
//! *distinct token* of the facts, then a sum over each fact's tokens. The graph of
//! 2wiki-corpus-6k has 47,602 facts of 8.7 tokens on average but only 16,657 distinct tokens,
//! so a query reads 16,657 rows (4.3 MB of `i8`) and 1.65 MB of token slots instead of 47,602
//! fact vectors (12.2 MB of `i8`); the graph holds 6.6 MB for its facts' vectors instead of
//! 12.6 MB. Every cosine is the `f32` one (no quantisation of the fact vectors, no
//! re-scoring): [`FactBags::cosines`] equals the dot product of `q` with the embedder's vector
//! of the fact text up to the order of `f32` additions (the tests bound it by 10⁻⁵).
//!
//! Kept per fact: its token slots, `1/‖Σₜ rₜ‖` (0 for a text with no known token, whose
//! vector is the zero vector). Kept per distinct token: its table row (`i8`) and scale, copied
//! from the table once, so the graph scores facts without the embedder.

use crate::embed::{dot, StaticEmbedder};
use crate::error::{Error, Result};

/// Facts as bags of the static embedder's table rows (module docs). Facts are appended in fact
/// id order; entry `i` of [`FactBags::cosines`] is fact `i`.
///
/// Bags are grouped by their number of tokens: a query sums each group's bags with a loop of
/// one fixed length (the branch predictor learns it; a fact's bag in its own variable-length
/// loop cost about as much as the dot products), writing each fact's cosine at its id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FactBags {
    dim: usize,
    /// Slot → the table id it copies (distinct, in order of first use).
    ids: Vec<u32>,
    /// Table id → its slot (`u32::MAX` for none); as long as the table, filled as tokens come.
    slot_of: Vec<u32>,
    /// `[slots × dim]`: each slot's table row as stored (`i8`).
    rows: Vec<i8>,
    /// Per slot: the row's scale.
    scales: Vec<f32>,
    /// `groups[l]`: the facts of `l` tokens.
    groups: Vec<BagGroup>,
    /// Number of facts.
    facts: usize,
    /// Token occurrences over all facts.
    tokens: usize,
}

/// The facts whose bags have one length `l`, in fact id order.
#[derive(Debug, Clone, Default, PartialEq)]
struct BagGroup {
    /// Fact ids.
    facts: Vec<u32>,
    /// Per fact: `1 / ‖Σₜ rₜ‖`, 0 when the sum is zero or not finite.
    inv_norms: Vec<f32>,
    /// `[facts × l]`: each fact's token slots in text order, with repeats.
    slots: Vec<u32>,
}

impl FactBags {
    /// No facts, rows of `dim` entries.
    pub fn with_dim(dim: usize) -> Self {
        FactBags { dim, ..FactBags::default() }
    }

    /// Dimension of the rows (the embedder's).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of facts.
    pub fn len(&self) -> usize {
        self.facts
    }

    /// True without facts.
    pub fn is_empty(&self) -> bool {
        self.facts == 0
    }

    /// Number of distinct tokens (rows copied from the table).
    pub fn distinct_tokens(&self) -> usize {
        self.ids.len()
    }

    /// Token occurrences over all facts.
    pub fn token_count(&self) -> usize {
        self.tokens
    }

    /// Heap bytes held: the rows, 12 bytes per distinct token, 4 per table row (the slot
    /// lookup), 4 per token occurrence and 8 per fact.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity()
            + (self.ids.capacity() + self.slot_of.capacity() + self.scales.capacity()) * 4
            + self.groups.capacity() * std::mem::size_of::<BagGroup>()
            + self
                .groups
                .iter()
                .map(|g| (g.facts.capacity() + g.inv_norms.capacity() + g.slots.capacity()) * 4)
                .sum::<usize>()
    }

    /// Release spare capacity (after the last [`FactBags::extend`] of a build).
    pub fn shrink_to_fit(&mut self) {
        self.ids.shrink_to_fit();
        self.rows.shrink_to_fit();
        self.scales.shrink_to_fit();
        for g in &mut self.groups {
            g.facts.shrink_to_fit();
            g.inv_norms.shrink_to_fit();
            g.slots.shrink_to_fit();
        }
    }

    /// Append the facts `texts` (the next fact ids in order), tokenised with `embedder`, whose
    /// rows they copy. O(total tokens + new distinct tokens × dim).
    ///
    /// # Errors
    /// [`Error::Config`] when `embedder`'s dimension is not this one's; [`Error::Model`] when a
    /// token has no row (a tokenizer the table was not made for) or the fact ids pass
    /// `u32::MAX`.
    pub fn extend(&mut self, embedder: &StaticEmbedder, texts: &[&str]) -> Result<()> {
        let dim = embedder.table().dims();
        if dim != self.dim {
            return Err(Error::Config(format!(
                "the graph holds {}-dimensional fact vectors and this embedder gives {dim}",
                self.dim
            )));
        }
        let vocab = embedder.table().vocab_size();
        if self.slot_of.len() < vocab {
            self.slot_of.resize(vocab, u32::MAX);
        }
        let (mut ids, mut scratch) = (Vec::new(), String::new());
        let mut cache = crate::embed::wordpiece::WordCache::new();
        let mut sum = vec![0.0f32; dim];
        let bad = |message: String| Error::Model { what: "static embedder".into(), message };
        for text in texts {
            let fact = u32::try_from(self.facts).map_err(|_| bad("more than 2³² facts".into()))?;
            embedder.row_ids_into(text, &mut scratch, Some(&mut cache), &mut ids);
            if self.groups.len() <= ids.len() {
                self.groups.resize_with(ids.len() + 1, BagGroup::default);
            }
            sum.iter_mut().for_each(|x| *x = 0.0);
            for &id in &ids {
                let slot = match self.slot_of.get(id as usize) {
                    Some(&slot) if slot != u32::MAX => slot,
                    _ => {
                        let (row, scale) = embedder
                            .table()
                            .row_i8(id)
                            .ok_or_else(|| bad(format!("token {id} has no row in the table")))?;
                        let slot = self.ids.len() as u32;
                        self.ids.push(id);
                        self.rows.extend_from_slice(row);
                        self.scales.push(scale);
                        self.slot_of[id as usize] = slot;
                        slot
                    }
                };
                // The same additions, in the same order, as the embedder's sum of rows.
                embedder.table().add_row(id, &mut sum);
                self.groups[ids.len()].slots.push(slot);
            }
            let norm = dot(&sum, &sum).sqrt();
            let group = &mut self.groups[ids.len()];
            group.facts.push(fact);
            group.inv_norms.push(if norm > 0.0 && norm.is_finite() { 1.0 / norm } else { 0.0 });
            self.facts += 1;
            self.tokens += ids.len();
        }
        Ok(())
    }

    /// Cosine of `query` with every fact, `[facts]` in fact id order: `(Σₜ sₜ·(r̂ₜ·q)) ·
    /// (1/‖Σₜ rₜ‖)` with each distinct token's dot product in `f32` (module docs). A fact with
    /// no known token scores 0. O(distinct tokens × dim + token occurrences).
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have this dimension.
    pub fn cosines(&self, query: &[f32]) -> Result<Vec<f32>> {
        if query.len() != self.dim {
            return Err(Error::Config(format!(
                "query vector has {} dimensions, the fact vectors {}",
                query.len(),
                self.dim
            )));
        }
        let mut out = vec![0.0f32; self.facts];
        if self.dim == 0 {
            return Ok(out);
        }
        let d = token_dots(&self.rows, &self.scales, self.dim, query);
        for (len, g) in self.groups.iter().enumerate().skip(1) {
            for ((&f, &inv), bag) in g.facts.iter().zip(&g.inv_norms).zip(g.slots.chunks_exact(len)) {
                // Two sums (even and odd positions), so consecutive additions do not wait on
                // each other.
                let (mut even, mut odd) = (0.0f32, 0.0f32);
                let mut pairs = bag.chunks_exact(2);
                for p in &mut pairs {
                    even += d[p[0] as usize];
                    odd += d[p[1] as usize];
                }
                if let [last] = pairs.remainder() {
                    even += d[*last as usize];
                }
                if let Some(o) = out.get_mut(f as usize) {
                    *o = (even + odd) * inv;
                }
            }
        }
        Ok(out)
    }
}

/// `sₜ · (r̂ₜ · q)` for every `dim`-long `i8` row `r̂ₜ` of `rows` with scale `sₜ`, in `f32`: with
/// AVX2 and FMA (detected at run time) eight dimensions per step, otherwise
/// [`dot_i8_f32`]. The two differ only in the order and fusing of the `f32` operations.
fn token_dots(rows: &[i8], scales: &[f32], dim: usize, q: &[f32]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    {
        if dim % 16 == 0
            && q.len() == dim
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: AVX2 and FMA were detected; `dim` is a non-zero multiple of 16 (the
            // caller returns early for 0) and `q` has `dim` entries.
            return unsafe { token_dots_avx2(rows, scales, dim, q) };
        }
    }
    rows.chunks_exact(dim).zip(scales).map(|(row, &s)| s * dot_i8_f32(row, q)).collect()
}

/// [`token_dots`] with AVX2: each step sign-extends 8 `i8` to `i32` (`vpmovsxbd`), converts them
/// (`vcvtdq2ps`) and multiply-adds them with 8 query entries (`vfmadd`), two sums per row.
///
/// # Safety
/// The CPU has AVX2 and FMA; `dim` is a non-zero multiple of 16 and `q.len() == dim`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn token_dots_avx2(rows: &[i8], scales: &[f32], dim: usize, q: &[f32]) -> Vec<f32> {
    use core::arch::x86_64::*;
    let mut out = Vec::with_capacity(scales.len());
    for (row, &s) in rows.chunks_exact(dim).zip(scales) {
        let (mut a0, mut a1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        for (x, y) in row.chunks_exact(16).zip(q.chunks_exact(16)) {
            let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(x.as_ptr().cast())));
            let hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(x.as_ptr().add(8).cast())));
            a0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(y.as_ptr()), a0);
            a1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(y.as_ptr().add(8)), a1);
        }
        let v = _mm256_add_ps(a0, a1);
        let half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pair = _mm_add_ps(half, _mm_movehl_ps(half, half));
        let one = _mm_add_ss(pair, _mm_shuffle_ps::<0b01>(pair, pair));
        out.push(s * _mm_cvtss_f32(one));
    }
    out
}

/// `Σ xᵢqᵢ` of an `i8` row and an `f32` query in `f32`, eight independent sums (so the compiler
/// vectorises it) added pairwise at the end.
#[inline]
fn dot_i8_f32(x: &[i8], q: &[f32]) -> f32 {
    let n = x.len().min(q.len());
    let (x, q) = (&x[..n], &q[..n]);
    let mut acc = [0.0f32; 8];
    let mut xc = x.chunks_exact(8);
    let mut qc = q.chunks_exact(8);
    for (a, b) in (&mut xc).zip(&mut qc) {
        for l in 0..8 {
            acc[l] += f32::from(a[l]) * b[l];
        }
    }
    let mut tail = 0.0f32;
    for (&a, &b) in xc.remainder().iter().zip(qc.remainder()) {
        tail += f32::from(a) * b;
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::static_embedder::StaticTable;
    use crate::embed::{Embedder, WordPiece};

    const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nred\nblue\ncar\n##s\nboat\n";

    /// Rows that `i8` with one scale per row holds exactly: red = (1, 0, 0), blue = (0, 1, 0),
    /// car = (0, 0, 2), ##s = (0, 0, −0.5), boat = (0, 0.5, 0.5).
    fn tiny() -> StaticEmbedder {
        let rows: Vec<f32> = [
            [0.0, 0.0, 0.0],
            [9.0, 9.0, 9.0],
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 2.0],
            [0.0, 0.0, -0.5],
            [0.0, 0.5, 0.5],
        ]
        .iter()
        .flatten()
        .copied()
        .collect();
        let wp = WordPiece::from_vocab(VOCAB).unwrap();
        let table = StaticTable::quantize(&rows, 3, wp.vocab_hash()).unwrap();
        StaticEmbedder::new(wp, table).unwrap()
    }

    #[test]
    fn cosines_by_hand() {
        let e = tiny();
        let mut bags = FactBags::with_dim(3);
        // "red cars" = red + car + ##s: sum (1, 0, 1.5), norm √3.25. "zebra" is unknown, so it
        // has no token and scores 0; "red red" sums (2, 0, 0).
        bags.extend(&e, &["red cars", "blue car", "zebra", "red red"]).unwrap();
        assert_eq!(bags.len(), 4);
        assert_eq!(bags.distinct_tokens(), 4); // red, car, ##s, blue
        assert_eq!(bags.token_count(), 3 + 2 + 0 + 2);
        let c = bags.cosines(&[0.6, 0.8, 0.0]).unwrap();
        let want = [0.6 / 3.25f32.sqrt(), 0.8 / 5f32.sqrt(), 0.0, 0.6];
        for (got, want) in c.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{c:?}");
        }
        let c = bags.cosines(&[0.0, 0.0, 1.0]).unwrap();
        let want = [1.5 / 3.25f32.sqrt(), 2.0 / 5f32.sqrt(), 0.0, 0.0];
        for (got, want) in c.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{c:?}");
        }
        assert!(matches!(bags.cosines(&[1.0, 0.0]), Err(Error::Config(_))));
    }

    #[test]
    fn equal_to_the_embedders_vectors_and_extendable() {
        let e = StaticEmbedder::minilm().unwrap();
        let texts = [
            "Scott Derrickson nationality American",
            "Ed Wood directed Plan 9 from Outer Space",
            "Ed Wood Ed Wood Ed Wood",
            "",
            "   ",
            "Müller wurde in Köln geboren",
            "東京 is capital of 日本",
            "1987 award Grammy",
            "Stephen R. Covey wrote The 7 Habits of Highly Effective People",
        ];
        let mut whole = FactBags::with_dim(e.dim());
        whole.extend(&e, &texts).unwrap();
        // Appending in two batches gives the same bags.
        let mut parts = FactBags::with_dim(e.dim());
        parts.extend(&e, &texts[..4]).unwrap();
        parts.extend(&e, &texts[4..]).unwrap();
        assert_eq!(parts, whole);
        let vectors = e.embed_batch(&texts, &mut |_, _| {}).unwrap();
        let mut queries: Vec<Vec<f32>> = ["Who directed Plan 9?", "German city of birth", "habits"]
            .iter()
            .map(|q| e.embed(q).unwrap())
            .collect();
        // A query that is not unit length and has mixed signs everywhere.
        queries.push((0..e.dim()).map(|i| ((i * 37 % 101) as f32 - 50.0) / 40.0).collect());
        queries.push(vec![0.0; e.dim()]);
        for q in &queries {
            let got = whole.cosines(q).unwrap();
            assert_eq!(got.len(), texts.len());
            for (i, v) in vectors.chunks_exact(e.dim()).enumerate() {
                let want = dot(v, q);
                let scale = 1.0f32.max(q.iter().map(|x| x.abs()).sum::<f32>() / 8.0);
                assert!((got[i] - want).abs() <= 1e-5 * scale, "text {i}: {} against {want}", got[i]);
            }
        }
        // Texts with nothing to embed score exactly 0.
        let q = &queries[0];
        let got = whole.cosines(q).unwrap();
        assert_eq!((got[3], got[4]), (0.0, 0.0));
        assert!(FactBags::with_dim(e.dim()).cosines(q).unwrap().is_empty());
    }
}
