//! Sentence embeddings and exact vector search (docs/architecture.md, module `embed`).
//!
//! - [`Embedder`]: texts in, L2-normalised `f32` vectors out, batched, with progress.
//! - [`StaticEmbedder`]: the default embedder, a token table made from all-MiniLM-L6-v2's output
//!   vectors averaged over each token's occurrences in passages (`tools/train_static.py`,
//!   `assets/README.md`); a text's vector is the
//!   normalised mean of its WordPiece tokens' rows. Thousands of passages a second on one core.
//! - [`WordPiece`]: BERT's tokenizer with MiniLM's vocabulary, id for id the same as Hugging Face
//!   `tokenizers` (checked by `tools/check_tokenizer.py`).
//! - [`VectorMatrix`]: a row-major `[n, dim]` matrix of normalised vectors and flat, exact
//!   cosine top-k search over it.
//!
//! Everything here is plain synchronous Rust and runs the same natively and in wasm.

#[cfg(feature = "minilm")]
pub mod minilm;
#[cfg(not(target_arch = "wasm32"))]
pub mod cache;
pub mod static_embedder;
pub mod wordpiece;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::error::{Error, Result};

pub use static_embedder::StaticEmbedder;
pub use wordpiece::WordPiece;

/// Turns texts into sentence vectors.
///
/// Contract for every implementation:
/// - [`Embedder::embed_batch`] returns `texts.len() * dim()` floats, row-major: row `i` is the
///   vector of `texts[i]`;
/// - every row has unit L2 norm, except that a text with nothing to embed (empty, only
///   whitespace, or only tokens the model does not know) gives the **zero vector**: it then
///   scores 0 against every query, and callers can test for it with [`is_zero`];
/// - the output depends only on the text (not on the batch it came in), so results are
///   deterministic.
pub trait Embedder {
    /// Dimension of every vector this embedder returns.
    fn dim(&self) -> usize;

    /// Embed `texts`, calling `progress(done, total)` now and then (at least once, at the end,
    /// with `done == total`; not necessarily after every text).
    ///
    /// # Errors
    /// Implementation-specific (for example a model that fails to run); the static embedder
    /// never fails here.
    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<f32>>;

    /// Embed one text: a vector of length [`Embedder::dim`].
    ///
    /// # Errors
    /// As [`Embedder::embed_batch`].
    fn embed(&self, text: &str) -> Result<Vec<f32>> {
        self.embed_batch(&[text], &mut |_, _| {})
    }

    /// This embedder as the static embedder, when it is one: its vectors are then normalised
    /// sums of table rows ([`StaticEmbedder::row_ids_into`]), which the knowledge graph uses
    /// to score facts from their tokens' rows. `None` (the default) for every other embedder.
    fn as_static(&self) -> Option<&StaticEmbedder> {
        None
    }
}

/// Scale `v` to unit L2 norm in place. A zero (or non-finite-norm) vector is set to all zeros,
/// so the result is always either unit length or zero.
pub fn l2_normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 && norm.is_finite() {
        let inv = 1.0 / norm;
        v.iter_mut().for_each(|x| *x *= inv);
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// True when every component of `v` is zero (the vector of a text with nothing to embed).
pub fn is_zero(v: &[f32]) -> bool {
    v.iter().all(|&x| x == 0.0)
}

/// Dot product of two equally long slices (eight independent accumulators, so the compiler
/// vectorises it; the summation order is fixed, so results are deterministic).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let chunks = n / 8;
    for c in 0..chunks {
        let (x, y) = (&a[c * 8..c * 8 + 8], &b[c * 8..c * 8 + 8]);
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut tail = 0.0f32;
    for i in chunks * 8..n {
        tail += a[i] * b[i];
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// One result of [`VectorMatrix::top_k`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoredRow {
    /// Row index in the matrix.
    pub row: u32,
    /// Cosine similarity (dot product of normalised vectors), in [-1, 1].
    pub score: f32,
}

/// Heap entry ordered so that the *worst* result is the greatest: lower score, then higher row.
#[derive(PartialEq)]
struct Worst(f32, u32);

impl Eq for Worst {}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A row-major `[n, dim]` matrix of (normally L2-normalised) `f32` vectors, searched exactly.
///
/// Cosine similarity is the dot product, so rows and queries should be unit length (as every
/// [`Embedder`] returns them); zero rows score 0. Search is a flat scan: 10^5 rows of 256
/// dimensions is 2.6·10^7 multiply-adds per query, a few milliseconds natively.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorMatrix {
    dim: usize,
    data: Vec<f32>,
}

impl VectorMatrix {
    /// An empty matrix of `dim`-dimensional rows.
    pub fn new(dim: usize) -> Self {
        VectorMatrix { dim, data: Vec::new() }
    }

    /// A matrix over `data` (row-major, `data.len()` a multiple of `dim`), as returned by
    /// [`Embedder::embed_batch`].
    ///
    /// # Errors
    /// [`Error::Config`] when `dim` is 0 or `data.len()` is not a multiple of `dim`.
    pub fn from_rows(dim: usize, data: Vec<f32>) -> Result<Self> {
        if dim == 0 || data.len() % dim != 0 {
            return Err(Error::Config(format!(
                "a vector matrix needs dim > 0 and a length that is a multiple of it (dim {dim}, length {})",
                data.len()
            )));
        }
        Ok(VectorMatrix { dim, data })
    }

    /// Append rows (row-major, a multiple of `dim` floats).
    ///
    /// # Errors
    /// [`Error::Config`] when `rows.len()` is not a multiple of the dimension.
    pub fn extend(&mut self, rows: &[f32]) -> Result<()> {
        if self.dim == 0 || rows.len() % self.dim != 0 {
            return Err(Error::Config(format!(
                "{} floats are not whole rows of dimension {}",
                rows.len(),
                self.dim
            )));
        }
        self.data.extend_from_slice(rows);
        Ok(())
    }

    /// Room for `rows` more rows without reallocating (`Vec::reserve_exact`): a matrix filled
    /// in chunks then holds no spare capacity and is never moved while it grows.
    pub fn reserve_rows(&mut self, rows: usize) {
        self.data.reserve_exact(rows.saturating_mul(self.dim));
    }

    /// Dimension of each row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// True when the matrix has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`, or `None` past the end.
    pub fn row(&self, i: usize) -> Option<&[f32]> {
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    /// The whole matrix, row-major.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    fn check_query(&self, query: &[f32]) -> Result<()> {
        if query.len() != self.dim {
            return Err(Error::Config(format!(
                "query vector has {} dimensions, the matrix has {}",
                query.len(),
                self.dim
            )));
        }
        Ok(())
    }

    /// Cosine score of `query` against every row, in row order.
    ///
    /// # Errors
    /// [`Error::Config`] when `query.len() != dim()`.
    pub fn scores(&self, query: &[f32]) -> Result<Vec<f32>> {
        self.check_query(query)?;
        Ok(self.data.chunks_exact(self.dim).map(|r| dot(r, query)).collect())
    }

    /// The `k` rows most similar to `query`, best first. Exact (every row is scored).
    /// Ties break by row index, lower first, so results are deterministic; a NaN score ranks
    /// below every number.
    ///
    /// # Errors
    /// [`Error::Config`] when `query.len() != dim()`.
    pub fn top_k(&self, query: &[f32], k: usize) -> Result<Vec<ScoredRow>> {
        self.check_query(query)?;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let mut heap: BinaryHeap<Worst> = BinaryHeap::with_capacity(k.min(self.len()) + 1);
        for (i, r) in self.data.chunks_exact(self.dim).enumerate() {
            let mut s = dot(r, query);
            if s.is_nan() {
                s = f32::NEG_INFINITY;
            } else if s == 0.0 {
                s = 0.0; // -0.0 and 0.0 tie (total_cmp would order them)
            }
            let cand = Worst(s, i as u32);
            if heap.len() < k {
                heap.push(cand);
            } else if let Some(mut top) = heap.peek_mut() {
                if cand < *top {
                    *top = cand;
                }
            }
        }
        // `into_sorted_vec` is ascending by `Worst`'s order, i.e. best first.
        Ok(heap.into_sorted_vec().into_iter().map(|Worst(score, row)| ScoredRow { row, score }).collect())
    }
}

/// Test doubles shared by the unit tests of the modules that take an [`Embedder`].
#[cfg(test)]
pub(crate) mod testing {
    use std::collections::HashMap;

    use super::{l2_normalize, Embedder};

    /// A deterministic fake embedder: exact text → the given vector (normalised); any other
    /// text → the zero vector (the [`Embedder`] contract for "nothing to embed").
    pub(crate) struct MapEmbedder {
        pub(crate) dim: usize,
        pub(crate) map: HashMap<String, Vec<f32>>,
    }

    impl MapEmbedder {
        /// `entries` as (text, vector); the vectors are L2-normalised here.
        pub(crate) fn new(dim: usize, entries: &[(&str, Vec<f32>)]) -> Self {
            let map = entries
                .iter()
                .map(|(t, v)| {
                    let mut v = v.clone();
                    l2_normalize(&mut v);
                    (t.to_string(), v)
                })
                .collect();
            MapEmbedder { dim, map }
        }
    }

    impl Embedder for MapEmbedder {
        fn dim(&self) -> usize {
            self.dim
        }

        fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> crate::Result<Vec<f32>> {
            let mut out = Vec::with_capacity(texts.len() * self.dim);
            for t in texts {
                match self.map.get(*t) {
                    Some(v) => out.extend_from_slice(v),
                    None => out.extend(std::iter::repeat(0.0).take(self.dim)),
                }
            }
            progress(texts.len(), texts.len());
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        l2_normalize(&mut v);
        v
    }

    #[test]
    fn normalize_and_zero() {
        let v = unit(&[3.0, 4.0]);
        assert!((v[0] - 0.6).abs() < 1e-7 && (v[1] - 0.8).abs() < 1e-7);
        let z = unit(&[0.0, 0.0, 0.0]);
        assert!(is_zero(&z));
        let inf = unit(&[f32::INFINITY, 1.0]);
        assert!(is_zero(&inf));
    }

    #[test]
    fn dot_matches_naive_on_odd_lengths() {
        for n in [0usize, 1, 7, 8, 9, 17, 384] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            assert!((f64::from(dot(&a, &b)) - naive).abs() < 1e-4, "n = {n}");
        }
    }

    /// A hand-made matrix of 2-d unit vectors at known angles; the query is (1, 0).
    #[test]
    fn cosine_top_k_by_hand() {
        let (c30, s30) = (30f32.to_radians().cos(), 30f32.to_radians().sin());
        let rows = [
            [0.0, 1.0],  // 0: cos 0
            [c30, s30],  // 1: cos 0.866
            [1.0, 0.0],  // 2: cos 1
            [-1.0, 0.0], // 3: cos -1
            [c30, -s30], // 4: cos 0.866, ties with row 1
            [0.0, 0.0],  // 5: zero vector, cos 0, ties with row 0
        ];
        let m = VectorMatrix::from_rows(2, rows.iter().flatten().copied().collect()).unwrap();
        assert_eq!(m.len(), 6);
        let q = [1.0, 0.0];
        let top = m.top_k(&q, 4).unwrap();
        let order: Vec<u32> = top.iter().map(|h| h.row).collect();
        assert_eq!(order, vec![2, 1, 4, 0]);
        assert!((top[0].score - 1.0).abs() < 1e-6);
        assert!((top[1].score - 0.866_025_4).abs() < 1e-6);
        assert_eq!(top[1].score, top[2].score);
        // k larger than n: everything, best first, ties by row.
        let all: Vec<u32> = m.top_k(&q, 100).unwrap().iter().map(|h| h.row).collect();
        assert_eq!(all, vec![2, 1, 4, 0, 5, 3]);
        // The scores agree with the full score vector.
        let s = m.scores(&q).unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(s[3], -1.0);
        assert!(m.top_k(&q, 0).unwrap().is_empty());
        assert!(matches!(m.top_k(&[1.0, 0.0, 0.0], 3), Err(Error::Config(_))));
    }

    #[test]
    fn top_k_equals_full_sort_on_random_rows() {
        // A deterministic pseudo-random 500 x 16 matrix with many exact ties (values on a grid).
        let (n, d) = (500usize, 16usize);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut data = Vec::with_capacity(n * d);
        for _ in 0..n * d {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data.push(((x % 5) as f32) - 2.0);
        }
        let m = VectorMatrix::from_rows(d, data).unwrap();
        let q: Vec<f32> = (0..d).map(|i| if i % 3 == 0 { 1.0 } else { 0.0 }).collect();
        let s = m.scores(&q).unwrap();
        let mut want: Vec<u32> = (0..n as u32).collect();
        want.sort_by(|&a, &b| s[b as usize].total_cmp(&s[a as usize]).then(a.cmp(&b)));
        for k in [1, 5, 37, 500] {
            let got: Vec<u32> = m.top_k(&q, k).unwrap().iter().map(|h| h.row).collect();
            assert_eq!(got, want[..k], "k = {k}");
        }
    }

    #[test]
    fn matrix_shape_errors() {
        assert!(VectorMatrix::from_rows(0, vec![]).is_err());
        assert!(VectorMatrix::from_rows(3, vec![1.0; 4]).is_err());
        let mut m = VectorMatrix::new(2);
        assert!(m.is_empty());
        m.extend(&[1.0, 0.0, 0.0, 1.0]).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.row(1), Some(&[0.0, 1.0][..]));
        assert_eq!(m.row(2), None);
        assert!(m.extend(&[1.0]).is_err());
    }
}
