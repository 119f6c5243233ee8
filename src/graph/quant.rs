//! Fact scoring at corpus scale: the cosine of a query with every fact vector (CatRAG §3 and
//! HippoRAG 2 §3, "score every fact by cosine", docs/method/spec.md §3) from an `i8` copy of the fact
//! vectors, with the rows that decide the seeds scored again exactly.
//!
//! An `f32` scan reads 4 bytes per dimension (47.6k facts × 256 dimensions = 48.7 MB per query
//! on the 2wiki-6k graph); the `i8` copy reads one. Each row `x` is stored as `x̂ = round(x / s)`
//! with `s = max|xᵢ| / 127`, the query `q` as `i16` (`q̂ = round(q / t)`, `t = max|qᵢ| / Q` with
//! `Q` keeping every sum within `i32`), and the approximate cosine is `s·t·Σ x̂ᵢq̂ᵢ` (SSE2
//! `pmaddwd` on x86-64, `i32x4.dot_i16x8_s` on wasm simd128, plain integers elsewhere). Its error
//! against `x·q` is at most `e = (s/2)·‖q‖₁ + (t/2)·s‖x̂‖₁ (+ rounding margin)`.
//!
//! Exact where it matters: every row that could be among the best [`EXACT_TOP`] by cosine (its
//! approximation plus `e` reaches the [`EXACT_TOP`]-th best approximation minus its `e`), and
//! every row that could be the minimum, is scored again with the `f32` dot product
//! ([`crate::embed::dot`], the same bits as [`VectorMatrix::scores`]). So the seed facts (the
//! best `linking_top_k ≤ EXACT_TOP`), their cosines and the min–max normalisation's two ends are
//! exactly those of the `f32` scan; other facts' cosines are within `e` of it (about 5·10⁻⁴
//! typically, at most about 1.5·10⁻² for unit vectors of 256 dimensions).
//!
//! The same copy of the entity vectors finds the entity most similar to a query mention
//! (CatRAG's symbolic anchoring, docs/method/spec.md §3): [`QuantizedRows::best`] gives exactly the row and
//! score of the `f32` scan, re-scoring only the rows that could beat the best lower bound.

use crate::embed::{dot, VectorMatrix};
use crate::error::{Error, Result};

/// Rows whose cosines are exact whatever the approximation: the best this many (and the
/// minimum). At least CatRAG's `linking_top_k` (5 by default).
pub const EXACT_TOP: usize = 64;

/// Margin added to each row's error bound for the rounding of the `f32` dot product it is
/// compared with (`≤ dim · 2⁻²⁴ · Σ|xᵢqᵢ|`, below 2·10⁻⁵ for unit vectors of 256 dimensions).
pub(super) const ROUNDING: f32 = 1e-4;

/// An `i8` copy of a row-major `f32` matrix with one scale per row (module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuantizedRows {
    dim: usize,
    /// `[rows × dim]`, `round(x / scale)`.
    data: Vec<i8>,
    /// Per row: `max|xᵢ| / 127` (0 for a zero row).
    scale: Vec<f32>,
    /// Per row: `scale · Σ|x̂ᵢ|`, the L1 norm of the stored row.
    l1: Vec<f32>,
}

impl QuantizedRows {
    /// Quantise every row of `m` (O(rows × dim), once per graph).
    pub fn new(m: &VectorMatrix) -> Self {
        let mut out = QuantizedRows::with_dim(m.dim());
        out.reserve(m.len());
        out.push_rows(m.as_slice());
        out
    }

    /// An empty copy of `dim`-dimensional rows, to fill with [`QuantizedRows::push_rows`].
    pub fn with_dim(dim: usize) -> Self {
        QuantizedRows { dim, ..QuantizedRows::default() }
    }

    /// Room for `rows` more rows without reallocating (so a copy filled in chunks holds no
    /// spare capacity and is never moved while it grows).
    pub fn reserve(&mut self, rows: usize) {
        self.data.reserve_exact(rows * self.dim);
        self.scale.reserve_exact(rows);
        self.l1.reserve_exact(rows);
    }

    /// Quantise `rows` (row-major, `dim` wide; a trailing partial row is ignored) and append
    /// them: `x̂ = round(x / s)`, `s = max|xᵢ| / 127` (module docs). A non-finite entry is
    /// stored as 0 and left out of the scale.
    pub fn push_rows(&mut self, rows: &[f32]) {
        if self.dim == 0 {
            return;
        }
        let dim = self.dim;
        for row in rows.chunks_exact(dim) {
            let at = self.data.len();
            // The bits of a non-negative finite f32 order as the number does, and every
            // non-finite value's bits are ≥ those of infinity: one integer max (which
            // vectorises, where a float max chain does not) gives max|xᵢ| and says whether the
            // row is finite.
            let max_bits = row.iter().fold(0u32, |a, x| a.max(x.to_bits() & 0x7fff_ffff));
            let finite = max_bits < f32::INFINITY.to_bits();
            let max = if finite {
                f32::from_bits(max_bits)
            } else {
                row.iter().fold(0.0f32, |a, &x| if x.is_finite() { a.max(x.abs()) } else { a })
            };
            let s = if max > 0.0 { max / 127.0 } else { 0.0 };
            if s > 0.0 && finite {
                // (branch-free, so it vectorises: an embedder's rows are finite)
                self.data.extend(row.iter().map(|&x| round_code(x / s)));
            } else if s > 0.0 {
                self.data.extend(row.iter().map(|&x| if x.is_finite() { round_code(x / s) } else { 0 }));
            } else {
                self.data.resize(at + dim, 0);
            }
            let sum: i32 = self.data[at..].iter().map(|&q| i32::from(q).abs()).sum();
            self.scale.push(s);
            self.l1.push(s * sum as f32);
        }
    }

    /// Dimension of the rows.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Row `r` as stored: its `i8` entries and its scale (the row is `scale · entries`).
    pub fn row(&self, r: usize) -> Option<(&[i8], f32)> {
        let entries = self.data.get(r * self.dim..(r + 1) * self.dim)?;
        Some((entries, *self.scale.get(r)?))
    }

    /// Row `r` as `f32` (`scale · entries`), empty past the end.
    pub fn row_f32(&self, r: usize) -> Vec<f32> {
        self.row(r).map_or_else(Vec::new, |(x, s)| x.iter().map(|&v| s * f32::from(v)).collect())
    }

    /// The dot product of stored row `r` with `query`, `scale · Σ x̂ᵢqᵢ` in `f32` (the cosine
    /// when both are unit vectors). Every score of [`QuantizedRows::cosines_of_rows`] that is
    /// exact is this one.
    fn row_dot(&self, r: usize, query: &[f32]) -> f32 {
        self.scale[r] * dot_i8_f32(&self.data[r * self.dim..(r + 1) * self.dim], query)
    }

    /// Cosines of `query` with every stored row, the rows themselves being the vectors (the
    /// graph keeps its fact vectors only in this form): approximate from the integer scan with
    /// the query as `i16`, and exact — [`QuantizedRows::row_dot`], `scale · Σ x̂ᵢqᵢ` in `f32` —
    /// for every row that could be among the best [`EXACT_TOP`] or the minimum. The
    /// approximation's error against the stored row is only the query's rounding,
    /// `(t/2)·s‖x̂‖₁` (+ a margin for `f32` rounding), so few rows are scored twice. Against
    /// the `f32` vectors the rows were made from, each cosine is within `(s/2)·‖q‖₁` (module
    /// docs; about 5·10⁻⁴ typically).
    ///
    /// # Errors
    /// [`Error::Config`] when `query` does not have this copy's dimension.
    pub fn cosines_of_rows(&self, query: &[f32]) -> Result<Vec<f32>> {
        if query.len() != self.dim {
            return Err(Error::Config(format!(
                "fact scoring: a query of {} dimensions against rows of {}",
                query.len(),
                self.dim
            )));
        }
        let n = self.len();
        if n == 0 || self.dim == 0 {
            return Ok(vec![0.0; n]);
        }
        let Some((q16, t, _)) = self.scaled_query(query) else {
            // A zero query or one with a non-finite entry: every row scored directly.
            return Ok((0..n).map(|r| self.row_dot(r, query)).collect());
        };
        let mut out = Vec::with_capacity(n);
        let mut err = Vec::with_capacity(n);
        for (r, &x) in row_dots(&self.data, self.dim, &q16).iter().enumerate() {
            let s = self.scale[r];
            out.push(s * t * x as f32);
            err.push(0.5 * t * self.l1[r] + ROUNDING);
        }
        let (top_floor, min_ceil) = exact_band(&out, &err);
        for (r, (c, &e)) in out.iter_mut().zip(&err).enumerate() {
            if *c + e >= top_floor || *c - e <= min_ceil || !c.is_finite() {
                *c = self.row_dot(r, query);
            }
        }
        Ok(out)
    }

    /// Heap bytes held: one byte per entry and two `f32` per row.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() + (self.scale.capacity() + self.l1.capacity()) * 4
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.scale.len()
    }

    /// True without rows.
    pub fn is_empty(&self) -> bool {
        self.scale.is_empty()
    }

    /// Cosines of `query` with every row of `exact` (the matrix this copy was made from), in row
    /// order: approximate from the `i8` copy, exact (`f32` dot) for the rows that could be among
    /// the best [`EXACT_TOP`] or the minimum (module docs).
    ///
    /// # Errors
    /// [`Error::Config`] when `query` or `exact` do not have this copy's dimension and rows.
    pub fn cosines(&self, exact: &VectorMatrix, query: &[f32]) -> Result<Vec<f32>> {
        if query.len() != self.dim || exact.dim() != self.dim || exact.len() != self.len() {
            return Err(Error::Config(format!(
                "fact scoring: a query of {} dimensions against {} rows of {} (quantised: {} rows of {})",
                query.len(),
                exact.len(),
                exact.dim(),
                self.len(),
                self.dim
            )));
        }
        let n = self.len();
        if n == 0 || self.dim == 0 {
            return Ok(vec![0.0; n]);
        }
        // Query as i16 with every |Σ x̂ᵢq̂ᵢ| ≤ dim · 127 · Q < 2³¹.
        let qmax_int = ((i32::MAX as usize) / (127 * self.dim)).clamp(1, 32767) as f32;
        let qmax = query.iter().fold(0.0f32, |a, &x| if x.is_finite() { a.max(x.abs()) } else { a });
        if qmax == 0.0 {
            return Ok(exact.as_slice().chunks_exact(self.dim).map(|r| dot(r, query)).collect());
        }
        let t = qmax / qmax_int;
        let q16: Vec<i16> = query
            .iter()
            .map(|&x| if x.is_finite() { (x / t).round().clamp(-qmax_int, qmax_int) as i16 } else { 0 })
            .collect();
        let q_l1: f32 = query.iter().filter(|x| x.is_finite()).map(|x| x.abs()).sum();

        let mut out = Vec::with_capacity(n);
        let mut err = Vec::with_capacity(n);
        let dots = row_dots(&self.data, self.dim, &q16);
        for (r, &x) in dots.iter().enumerate() {
            let s = self.scale[r];
            out.push(s * t * x as f32);
            err.push(0.5 * s * q_l1 + 0.5 * t * self.l1[r] + ROUNDING);
        }

        let (top_floor, min_ceil) = exact_band(&out, &err);
        let rows = exact.as_slice().chunks_exact(self.dim);
        for ((c, &e), row) in out.iter_mut().zip(&err).zip(rows) {
            if *c + e >= top_floor || *c - e <= min_ceil || !c.is_finite() {
                *c = dot(row, query);
            }
        }
        Ok(out)
    }
}

impl QuantizedRows {
    /// The row of `exact` (the matrix this copy was made from) most similar to `query`, as
    /// [`VectorMatrix::top_k`]`(query, 1)` returns it — the same row and the same `f32` score,
    /// ties to the lower row, a NaN score below every number — but read from the `i8` copy:
    /// only the rows whose approximation plus its error bound reaches the best lower end are
    /// scored exactly (the best row is always among them). `None` for an empty matrix.
    ///
    /// # Errors
    /// [`Error::Config`] when `query` or `exact` do not have this copy's dimension and rows.
    pub fn best(&self, exact: &VectorMatrix, query: &[f32]) -> Result<Option<crate::embed::ScoredRow>> {
        if query.len() != self.dim || exact.dim() != self.dim || exact.len() != self.len() {
            return Err(Error::Config(format!(
                "entity search: a query of {} dimensions against {} rows of {} (quantised: {} rows of {})",
                query.len(),
                exact.len(),
                exact.dim(),
                self.len(),
                self.dim
            )));
        }
        let Some(scaled) = self.scaled_query(query) else {
            // A zero or non-finite query: the plain scan decides (all rows score alike).
            return Ok(exact.top_k(query, 1)?.into_iter().next());
        };
        let (q16, t, q_l1) = scaled;
        let mut approx = Vec::with_capacity(self.len());
        let mut best_lower = f32::NEG_INFINITY;
        for (r, &x) in row_dots(&self.data, self.dim, &q16).iter().enumerate() {
            let s = self.scale[r];
            let c = s * t * x as f32;
            let e = 0.5 * s * q_l1 + 0.5 * t * self.l1[r] + ROUNDING;
            best_lower = best_lower.max(c - e);
            approx.push((c, e));
        }
        let mut best: Option<crate::embed::ScoredRow> = None;
        for (r, (&(c, e), row)) in approx.iter().zip(exact.as_slice().chunks_exact(self.dim)).enumerate() {
            if c + e < best_lower {
                continue;
            }
            let mut score = dot(row, query);
            if score.is_nan() {
                score = f32::NEG_INFINITY;
            } else if score == 0.0 {
                score = 0.0;
            }
            // Rows come in increasing order, so a tie keeps the lower row.
            if best.is_none_or(|b| score > b.score) {
                best = Some(crate::embed::ScoredRow { row: r as u32, score });
            }
        }
        Ok(best)
    }

    /// The query as `i16` (module docs), its scale `t` and L1 norm; `None` for a zero query or
    /// one with a non-finite entry.
    fn scaled_query(&self, query: &[f32]) -> Option<(Vec<i16>, f32, f32)> {
        scaled_query(query, self.dim)
    }
}

/// `Σ xᵢqᵢ` of an `i8` row and an `f32` query in `f32` (four independent sums, added pairwise,
/// then the tail): the exact score of a stored row, the same bits natively and in wasm.
pub(super) fn dot_i8_f32(x: &[i8], query: &[f32]) -> f32 {
    let mut acc = [0.0f32; 4];
    let mut xc = x.chunks_exact(4);
    let mut qc = query.chunks_exact(4);
    for (a, b) in (&mut xc).zip(&mut qc) {
        for l in 0..4 {
            acc[l] += f32::from(a[l]) * b[l];
        }
    }
    let mut sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&a, &b) in xc.remainder().iter().zip(qc.remainder()) {
        sum += f32::from(a) * b;
    }
    sum
}

/// `query` as `i16` for `i8` rows of `dim` entries (module docs: every `|Σ x̂ᵢq̂ᵢ| ≤ dim · 127 ·
/// Q < 2³¹`), its scale `t` (`qᵢ ≈ t·q̂ᵢ`, each within `t/2`) and its L1 norm; `None` for a
/// zero query or one with a non-finite entry.
pub(super) fn scaled_query(query: &[f32], dim: usize) -> Option<(Vec<i16>, f32, f32)> {
    if query.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let qmax_int = ((i32::MAX as usize) / (127 * dim.max(1))).clamp(1, 32767) as f32;
    let qmax = query.iter().fold(0.0f32, |a, &x| a.max(x.abs()));
    if qmax == 0.0 {
        return None;
    }
    let t = qmax / qmax_int;
    let q16 = query.iter().map(|&x| (x / t).round().clamp(-qmax_int, qmax_int) as i16).collect();
    Some((q16, t, query.iter().map(|x| x.abs()).sum()))
}

/// The [`EXACT_TOP`]-th best lower end `c − e` (in `total_cmp` order, as a selection would
/// give it), kept in one pass over a sorted list of the best [`EXACT_TOP`], and the smallest
/// upper end `c + e`: rows reaching the first or below the second are scored exactly.
pub(super) fn exact_band(out: &[f32], err: &[f32]) -> (f32, f32) {
    let k = EXACT_TOP.min(out.len());
    let mut best: Vec<f32> = Vec::with_capacity(k + 1);
    for (&c, &e) in out.iter().zip(err) {
        let x = c - e;
        if best.len() == k {
            match best.last() {
                Some(last) if x.total_cmp(last).is_gt() => {
                    best.pop();
                }
                _ => continue,
            }
        }
        let at = best.partition_point(|b| b.total_cmp(&x).is_ge());
        best.insert(at, x);
    }
    let top_floor = best.last().copied().unwrap_or(f32::NEG_INFINITY);
    let min_ceil = out.iter().zip(err).map(|(&c, &e)| c + e).fold(f32::INFINITY, f32::min);
    (top_floor, min_ceil)
}

/// [`dot_i8_i16`] of every `dim`-long row of `data` with `q`, in row order: with AVX2 (detected
/// at run time) 16 dimensions per step in 256-bit registers, otherwise the 128-bit
/// [`dot_i8_i16`]. The same integers either way (exact integer arithmetic).
pub(super) fn row_dots(data: &[i8], dim: usize, q: &[i16]) -> Vec<i32> {
    if dim == 0 {
        return Vec::new();
    }
    #[cfg(target_arch = "x86_64")]
    {
        if dim % 16 == 0 && q.len() == dim && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected; `dim` is a multiple of 16 and `q` has `dim` entries.
            return unsafe { row_dots_avx2(data, dim, q) };
        }
    }
    data.chunks_exact(dim).map(|row| dot_i8_i16(row, q)).collect()
}

/// [`row_dots`] with AVX2: each step sign-extends 16 `i8` to `i16` (`vpmovsxbw`) and
/// multiply-adds them with 16 query entries (`vpmaddwd`) into eight `i32` lanes.
///
/// # Safety
/// The CPU has AVX2; `dim` is a non-zero multiple of 16 and `q.len() == dim`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row_dots_avx2(data: &[i8], dim: usize, q: &[i16]) -> Vec<i32> {
    use core::arch::x86_64::*;
    let mut out = Vec::with_capacity(data.len() / dim);
    for row in data.chunks_exact(dim) {
        let mut acc = _mm256_setzero_si256();
        for (ca, cb) in row.chunks_exact(16).zip(q.chunks_exact(16)) {
            let x = _mm256_cvtepi8_epi16(_mm_loadu_si128(ca.as_ptr().cast()));
            let y = _mm256_loadu_si256(cb.as_ptr().cast());
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
        }
        let half = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
        let pair = _mm_add_epi32(half, _mm_unpackhi_epi64(half, half));
        let one = _mm_add_epi32(pair, _mm_shuffle_epi32::<0b01>(pair));
        out.push(_mm_cvtsi128_si32(one));
    }
    out
}

/// `Σ aᵢbᵢ` over an `i8` row and an `i16` query of the same length, in `i32` (no overflow for
/// the ranges [`QuantizedRows::cosines`] uses).
#[inline]
fn dot_i8_i16(a: &[i8], b: &[i16]) -> i32 {
    let n = a.len().min(b.len());
    let chunks = n / 16;
    let mut sum = simd_dot(&a[..chunks * 16], &b[..chunks * 16]);
    for i in chunks * 16..n {
        sum += i32::from(a[i]) * i32::from(b[i]);
    }
    sum
}

/// `y.round().clamp(-127.0, 127.0) as i8` for a finite `y` (rounding half away from zero), without
/// the `roundf` call that `f32::round` is on x86-64 without SSE4.1 and in wasm: clamping first
/// changes nothing (127 and −127 are whole), and on `|y| ≤ 127` the truncation `t` and the
/// fraction `y − t` are exact.
#[inline]
fn round_code(y: f32) -> i8 {
    let y = y.clamp(-127.0, 127.0);
    let t = y as i32;
    let f = y - t as f32;
    (t + i32::from(f >= 0.5) - i32::from(f <= -0.5)) as i8
}

/// [`dot_i8_i16`] over whole 16-lane chunks: SSE2 on x86-64.
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)] // SSE2 intrinsics are safe to call on x86-64 from Rust 1.87 on
#[inline]
fn simd_dot(a: &[i8], b: &[i16]) -> i32 {
    use core::arch::x86_64::*;
    debug_assert!(a.len() % 16 == 0 && b.len() == a.len());
    // SAFETY: every load reads 16 bytes inside `a` (chunks of 16 i8) or `b` (chunks of 8 i16);
    // SSE2 is part of x86-64.
    unsafe {
        let mut acc = _mm_setzero_si128();
        for (ca, cb) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
            let x = _mm_loadu_si128(ca.as_ptr().cast());
            // Sign-extend the 16 i8 to two vectors of 8 i16: interleave with themselves, shift.
            let lo = _mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8);
            let hi = _mm_srai_epi16(_mm_unpackhi_epi8(x, x), 8);
            let y0 = _mm_loadu_si128(cb.as_ptr().cast());
            let y1 = _mm_loadu_si128(cb[8..].as_ptr().cast());
            acc = _mm_add_epi32(acc, _mm_madd_epi16(lo, y0));
            acc = _mm_add_epi32(acc, _mm_madd_epi16(hi, y1));
        }
        let mut lanes = [0i32; 4];
        _mm_storeu_si128(lanes.as_mut_ptr().cast(), acc);
        lanes.iter().sum()
    }
}

/// [`dot_i8_i16`] over whole 16-lane chunks: simd128 on wasm32.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
fn simd_dot(a: &[i8], b: &[i16]) -> i32 {
    use core::arch::wasm32::*;
    let mut acc = i32x4_splat(0);
    for (ca, cb) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        // SAFETY: 16 bytes inside `ca`, 16 bytes inside each half of `cb`.
        let (x, y0, y1) = unsafe {
            (v128_load(ca.as_ptr().cast()), v128_load(cb.as_ptr().cast()), v128_load(cb[8..].as_ptr().cast()))
        };
        acc = i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_low_i8x16(x), y0));
        acc = i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_high_i8x16(x), y1));
    }
    i32x4_extract_lane::<0>(acc)
        + i32x4_extract_lane::<1>(acc)
        + i32x4_extract_lane::<2>(acc)
        + i32x4_extract_lane::<3>(acc)
}

/// [`dot_i8_i16`] over whole chunks: plain integers elsewhere.
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
#[inline]
fn simd_dot(a: &[i8], b: &[i16]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantiser as first written (a float max over the finite values, `f32::round`), row by row.
    fn reference(m: &VectorMatrix) -> QuantizedRows {
        let (mut data, mut scale, mut l1) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..m.len() {
            let row = m.row(r).unwrap();
            let max = row.iter().fold(0.0f32, |a, &x| if x.is_finite() { a.max(x.abs()) } else { a });
            let s = if max > 0.0 { max / 127.0 } else { 0.0 };
            let mut sum = 0i32;
            for &x in row {
                let q = if s > 0.0 && x.is_finite() { (x / s).round().clamp(-127.0, 127.0) as i8 } else { 0 };
                sum += i32::from(q).abs();
                data.push(q);
            }
            scale.push(s);
            l1.push(s * sum as f32);
        }
        QuantizedRows { dim: m.dim(), data, scale, l1 }
    }

    #[test]
    fn quantises_as_the_reference_does() {
        let mut rows = matrix(300, 64, 11).as_slice().to_vec();
        let odd: [&[f32]; 5] = [
            &[0.0; 64],
            &[-0.0; 64],
            &[f32::NAN, 0.5, -0.25, f32::INFINITY],
            &[f32::NEG_INFINITY, 1e-40, -1e-40, 3.0e38],
            &[1e-42, -1e-45, 0.0, -0.0],
        ];
        for (i, o) in odd.iter().enumerate() {
            rows[i * 64..i * 64 + o.len()].copy_from_slice(o);
        }
        let m = VectorMatrix::from_rows(64, rows).unwrap();
        let (got, want) = (QuantizedRows::new(&m), reference(&m));
        assert_eq!(got.data, want.data);
        assert_eq!(
            got.scale.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.scale.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            got.l1.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.l1.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        // the rows with a NaN or an infinity: quantised over their finite values only
        assert_eq!((got.scale[2], &got.data[128..132]), (0.5 / 127.0, &[0i8, 127, -64, 0][..]));
        assert_eq!(QuantizedRows::new(&VectorMatrix::new(8)).len(), 0);
    }

    #[test]
    fn round_code_is_round_then_clamp() {
        let reference = |y: f32| y.round().clamp(-127.0, 127.0) as i8;
        // ties, their neighbours, the ends and beyond them
        let mut ys = vec![0.0f32, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, 127.0, -127.0];
        ys.extend([127.49, 127.5, 128.0, 1e9, -1e9, f32::MAX, f32::MIN]);
        for y in [0.5f32, 1.5, 2.5, 63.5, 126.5] {
            // the floats just below and above each tie (positive: one step of the bits)
            let (below, above) = (f32::from_bits(y.to_bits() - 1), f32::from_bits(y.to_bits() + 1));
            ys.extend([below, above, -below, -above]);
        }
        let mut state = 7u64;
        for _ in 0..100_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ys.push(((state >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 300.0);
        }
        for y in ys {
            assert_eq!(round_code(y), reference(y), "y = {y}");
        }
        assert_eq!((round_code(2.5), round_code(-2.5), round_code(126.6)), (3, -3, 127));
    }

    /// A deterministic pseudo-random unit matrix.
    fn matrix(rows: usize, dim: usize, seed: u64) -> VectorMatrix {
        let mut state = seed;
        let mut data = Vec::with_capacity(rows * dim);
        for _ in 0..rows {
            let row: Vec<f32> = (0..dim)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                })
                .collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            data.extend(row.iter().map(|x| x / norm));
        }
        VectorMatrix::from_rows(dim, data).unwrap()
    }

    #[test]
    fn integer_dot_matches_scalar_on_odd_lengths() {
        for n in [0usize, 1, 15, 16, 17, 33, 256, 300] {
            let a: Vec<i8> = (0..n).map(|i| ((i * 37) % 255) as i32 - 127).map(|x| x as i8).collect();
            let b: Vec<i16> = (0..n).map(|i| ((i * 7919) % 65535) as i32 - 32767).map(|x| x as i16).collect();
            let want: i64 = a.iter().zip(&b).map(|(&x, &y)| i64::from(x) * i64::from(y)).sum();
            assert_eq!(i64::from(dot_i8_i16(&a, &b)), want, "n = {n}");
        }
    }

    #[test]
    fn row_dots_match_the_row_by_row_dot() {
        // The AVX2 rows (where the CPU has it) against the 128-bit dot per row, extremes
        // included; and a dimension that is not a multiple of 16 (the per-row path).
        for dim in [16usize, 48, 256, 20] {
            let rows = 37;
            let data: Vec<i8> = (0..rows * dim)
                .map(|i| [-128i32, -127, -1, 0, 1, 126, 127][(i * 31 + i / 7) % 7] as i8)
                .collect();
            let q: Vec<i16> =
                (0..dim).map(|i| ((i * 7919) % 65535) as i32 - 32767).map(|x| x as i16).collect();
            let want: Vec<i32> = data.chunks_exact(dim).map(|r| dot_i8_i16(r, &q)).collect();
            let by_hand: Vec<i64> = data
                .chunks_exact(dim)
                .map(|r| r.iter().zip(&q).map(|(&x, &y)| i64::from(x) * i64::from(y)).sum())
                .collect();
            assert_eq!(row_dots(&data, dim, &q), want, "dim {dim}");
            assert_eq!(want.iter().map(|&x| i64::from(x)).collect::<Vec<_>>(), by_hand, "dim {dim}");
        }
    }

    #[test]
    fn top_and_minimum_are_exact_and_the_rest_within_the_bound() {
        let m = matrix(3000, 256, 7);
        let quant = QuantizedRows::new(&m);
        let queries = matrix(5, 256, 99);
        for qi in 0..5 {
            let q = queries.row(qi).unwrap();
            let exact = m.scores(q).unwrap();
            let got = quant.cosines(&m, q).unwrap();
            assert_eq!(got.len(), exact.len());
            // The best EXACT_TOP rows (by the f32 scan) carry their exact cosines, bit for bit.
            let mut order: Vec<usize> = (0..exact.len()).collect();
            order.sort_by(|&a, &b| exact[b].total_cmp(&exact[a]));
            for &r in &order[..EXACT_TOP] {
                assert_eq!(got[r].to_bits(), exact[r].to_bits(), "query {qi}, row {r}");
            }
            let min_row = order[order.len() - 1];
            assert_eq!(got[min_row].to_bits(), exact[min_row].to_bits());
            // Every other row: within the documented error bound.
            let q_l1: f32 = q.iter().map(|x| x.abs()).sum();
            let qmax = q.iter().fold(0.0f32, |a, x| a.max(x.abs()));
            let t = qmax / 32767.0;
            for r in 0..exact.len() {
                let e = 0.5 * quant.scale[r] * q_l1 + 0.5 * t * quant.l1[r] + ROUNDING;
                assert!((got[r] - exact[r]).abs() <= e, "row {r}: {} vs {}", got[r], exact[r]);
            }
        }
    }

    #[test]
    fn rows_scored_against_themselves() {
        let m = matrix(3000, 256, 17);
        let quant = QuantizedRows::new(&m);
        // Filled in chunks, as the graph builder fills it: the same copy.
        let mut chunked = QuantizedRows::with_dim(256);
        chunked.reserve(3000);
        for rows in m.as_slice().chunks(7 * 256) {
            chunked.push_rows(rows);
        }
        assert_eq!(chunked, quant);
        let queries = matrix(5, 256, 23);
        for qi in 0..5 {
            let q = queries.row(qi).unwrap();
            let got = quant.cosines_of_rows(q).unwrap();
            // Reference: each stored row (scale · entries) against the query, in f64.
            let reference: Vec<f64> = (0..quant.len())
                .map(|r| {
                    let (x, s) = quant.row(r).unwrap();
                    f64::from(s) * x.iter().zip(q).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum::<f64>()
                })
                .collect();
            let mut order: Vec<usize> = (0..reference.len()).collect();
            order.sort_by(|&a, &b| reference[b].total_cmp(&reference[a]));
            let exact_rows = order[..EXACT_TOP].iter().chain(order.last());
            for &r in exact_rows {
                // Scored exactly: the f32 dot product with the stored row.
                assert_eq!(got[r].to_bits(), quant.row_dot(r, q).to_bits(), "query {qi}, row {r}");
                assert!((f64::from(got[r]) - reference[r]).abs() < 1e-5, "row {r}");
            }
            let t = q.iter().fold(0.0f32, |a, x| a.max(x.abs())) / 32767.0;
            let q_l1: f32 = q.iter().map(|x| x.abs()).sum();
            let exact = m.scores(q).unwrap();
            for r in 0..got.len() {
                let e = 0.5 * t * quant.l1[r] + ROUNDING;
                assert!((f64::from(got[r]) - reference[r]).abs() <= f64::from(e), "row {r}");
                // Against the f32 vectors the rows were made from: within the quantisation bound.
                let e_f32 = 0.5 * quant.scale[r] * q_l1 + e;
                assert!((got[r] - exact[r]).abs() <= e_f32, "row {r}: {} vs {}", got[r], exact[r]);
            }
        }
        let empty = QuantizedRows::with_dim(4);
        assert_eq!(empty.cosines_of_rows(&[1.0, 0.0, 0.0, 0.0]).unwrap(), Vec::<f32>::new());
        assert!(quant.cosines_of_rows(&[1.0]).is_err());
        // A zero query: every row scores 0.
        assert!(quant.cosines_of_rows(&[0.0; 256]).unwrap().iter().all(|&c| c == 0.0));
    }

    #[test]
    fn best_row_is_the_plain_scans() {
        let m = matrix(3000, 256, 11);
        let quant = QuantizedRows::new(&m);
        let queries = matrix(20, 256, 5);
        for qi in 0..20 {
            let q = queries.row(qi).unwrap();
            let want = m.top_k(q, 1).unwrap()[0];
            let got = quant.best(&m, q).unwrap().unwrap();
            assert_eq!((got.row, got.score.to_bits()), (want.row, want.score.to_bits()), "query {qi}");
        }
        // A query equal to a row finds that row; a duplicated row ties to the lower one.
        let mut rows = m.as_slice()[..256 * 50].to_vec();
        rows.extend_from_slice(&m.as_slice()[256 * 7..256 * 8]);
        let dup = VectorMatrix::from_rows(256, rows).unwrap();
        let quant = QuantizedRows::new(&dup);
        let q = dup.row(50).unwrap().to_vec();
        let got = quant.best(&dup, &q).unwrap().unwrap();
        assert_eq!(
            (got.row, got.score),
            (dup.top_k(&q, 1).unwrap()[0].row, dup.top_k(&q, 1).unwrap()[0].score)
        );
        assert_eq!(got.row, 7);
        // Zero query and an empty matrix: as the plain scan.
        assert_eq!(
            quant.best(&dup, &[0.0; 256]).unwrap(),
            dup.top_k(&[0.0; 256], 1).unwrap().first().copied()
        );
        let empty = VectorMatrix::new(256);
        assert_eq!(QuantizedRows::new(&empty).best(&empty, &q).unwrap(), None);
    }

    #[test]
    fn zero_query_and_shape_errors() {
        let m = matrix(10, 32, 3);
        let quant = QuantizedRows::new(&m);
        let zero = vec![0.0f32; 32];
        assert_eq!(quant.cosines(&m, &zero).unwrap(), vec![0.0; 10]);
        assert!(matches!(quant.cosines(&m, &[0.0; 31]), Err(Error::Config(_))));
        let other = matrix(11, 32, 3);
        assert!(matches!(quant.cosines(&other, &zero), Err(Error::Config(_))));
    }
}
