//! Stored graph embeddings: CAGE's `Z_p` computed once per passage and kept with the index
//! (docs/method/spec.md §4: `Z_p` depends on passage p alone — its graph, its min-out-degree reweighting
//! and the encoder — so a query only compares the candidates' stored `Z`).
//!
//! Each row is stored as int8 with one f32 scale (symmetric per row, `scale = max|z| / 127`).
//! Coherence only needs cosines, which the per-row scale does not change, so the query-time
//! work is a `N × N` int8 dot-product matrix (N = 20: 190 dot products of 128 values).

use crate::error::{Error, Result};

/// What a set of stored graph embeddings was computed with: rows made with a different encoder,
/// β or channel layout are not comparable and are never mixed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EncoderKey {
    /// CRC32 of the encoder's ONNX bytes ([`super::GraphEncoder::fingerprint`]).
    pub model: u32,
    /// β_cage applied to the passage graphs (1 with the `no_reweight` ablation).
    pub beta: f32,
    /// Relations merged into one channel (the plain-GCN ablation).
    pub merged: bool,
}

/// Per-passage graph embeddings `Z` (`rows × dim`), int8 with a per-row scale, row `i` for
/// passage `i` of the index's corpus. A row that has not been computed yet is absent.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphEmbeddings {
    key: EncoderKey,
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    present: Vec<bool>,
}

impl GraphEmbeddings {
    /// No rows computed yet, for `rows` passages and `dim`-d embeddings.
    pub fn new(key: EncoderKey, dim: usize, rows: usize) -> GraphEmbeddings {
        GraphEmbeddings {
            key,
            dim,
            codes: vec![0; rows * dim],
            scales: vec![0.0; rows],
            present: vec![false; rows],
        }
    }

    /// The encoder settings the rows were made with.
    pub fn key(&self) -> EncoderKey {
        self.key
    }

    /// Embedding dimension (128 for the shipped encoders).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rows (passages) covered, computed or not.
    pub fn rows(&self) -> usize {
        self.present.len()
    }

    /// Whether row `i` has been computed.
    pub fn has(&self, i: usize) -> bool {
        self.present.get(i).copied().unwrap_or(false)
    }

    /// The rows not computed yet, ascending.
    pub fn missing(&self) -> Vec<usize> {
        (0..self.present.len()).filter(|&i| !self.present[i]).collect()
    }

    /// Cover `rows` passages: new rows are absent; a shorter length drops rows at the end
    /// (a corpus only grows at the end, so computed rows keep their passage).
    pub fn resize(&mut self, rows: usize) {
        self.codes.resize(rows * self.dim, 0);
        self.scales.resize(rows, 0.0);
        self.present.resize(rows, false);
    }

    /// Store row `i` from its float embedding `z` (`dim` values), quantised to int8.
    ///
    /// # Errors
    /// [`Error::Config`] when `i` is out of range or `z` is not `dim` finite values.
    pub fn set(&mut self, i: usize, z: &[f32]) -> Result<()> {
        if i >= self.present.len() || z.len() != self.dim {
            return Err(Error::Config(format!(
                "graph embedding for row {i} of {} with {} values, expected {}",
                self.present.len(),
                z.len(),
                self.dim
            )));
        }
        if z.iter().any(|x| !x.is_finite()) {
            return Err(Error::Config(format!("graph embedding for row {i} is not finite")));
        }
        let (codes, scale) = quantize(z);
        self.codes[i * self.dim..(i + 1) * self.dim].copy_from_slice(&codes);
        self.scales[i] = scale;
        self.present[i] = true;
        Ok(())
    }

    /// Row `i` as int8 codes and scale (`z ≈ codes · scale`), if computed.
    pub fn row(&self, i: usize) -> Option<(&[i8], f32)> {
        if !self.has(i) {
            return None;
        }
        Some((&self.codes[i * self.dim..(i + 1) * self.dim], self.scales[i]))
    }

    /// Row `i` dequantised, if computed.
    pub fn row_f32(&self, i: usize) -> Option<Vec<f32>> {
        self.row(i).map(|(c, s)| c.iter().map(|&q| f32::from(q) * s).collect())
    }

    /// The cosine matrix (`rows.len()²`, row-major) of the passages `rows` from their stored
    /// `Z`, computed on the int8 codes with exact integer dot products (the per-row scale does
    /// not change a cosine); 0 where either row is the zero vector.
    ///
    /// # Errors
    /// [`Error::Config`] when a row is out of range or not computed.
    pub fn cosines(&self, rows: &[usize]) -> Result<Vec<f32>> {
        let codes: Vec<&[i8]> = rows
            .iter()
            .map(|&i| {
                self.row(i).map(|(c, _)| c).ok_or_else(|| {
                    Error::Config(format!("passage {i} has no stored graph embedding (compute them first)"))
                })
            })
            .collect::<Result<_>>()?;
        let n = codes.len();
        let norms: Vec<f64> = codes.iter().map(|c| f64::from(dot_i8(c, c)).sqrt()).collect();
        let mut cos = vec![0.0f32; n * n];
        for p in 0..n {
            for q in p..n {
                let c = if norms[p] > 0.0 && norms[q] > 0.0 {
                    (f64::from(dot_i8(codes[p], codes[q])) / (norms[p] * norms[q])) as f32
                } else {
                    0.0
                };
                cos[p * n + q] = c;
                cos[q * n + p] = c;
            }
        }
        Ok(cos)
    }

    /// The raw parts for the index file: key, dim, per-row presence, scales and codes.
    pub(crate) fn parts(&self) -> (EncoderKey, usize, &[bool], &[f32], &[i8]) {
        (self.key, self.dim, &self.present, &self.scales, &self.codes)
    }

    /// From raw parts (the index file's); `codes.len()` must be `rows × dim`.
    ///
    /// # Errors
    /// [`Error::Config`] when the lengths disagree or a scale is negative or not finite.
    pub(crate) fn from_parts(
        key: EncoderKey,
        dim: usize,
        present: Vec<bool>,
        scales: Vec<f32>,
        codes: Vec<i8>,
    ) -> Result<GraphEmbeddings> {
        if dim == 0 || scales.len() != present.len() || codes.len() != present.len() * dim {
            return Err(Error::Config("graph embeddings: lengths do not match rows × dim".into()));
        }
        if scales.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return Err(Error::Config("graph embeddings: a scale is negative or not finite".into()));
        }
        Ok(GraphEmbeddings { key, dim, codes, scales, present })
    }
}

fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
}

/// Symmetric int8 quantisation of one row: `scale = max|z| / 127` (0 for the zero row),
/// `code = round(z / scale)` clamped to ±127.
pub fn quantize(z: &[f32]) -> (Vec<i8>, f32) {
    let m = z.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if m <= 0.0 {
        return (vec![0; z.len()], 0.0);
    }
    let scale = m / 127.0;
    (z.iter().map(|&x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect(), scale)
}
