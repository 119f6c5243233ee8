//! The static embedder: a lookup table of one vector per WordPiece token, made from
//! all-MiniLM-L6-v2.
//!
//! all-MiniLM-L6-v2's sentence vector is the mean of its last-layer output vectors over a text's
//! tokens. `tools/train_static.py` replaces each token's output vector by its average over every
//! occurrence of the token in about 7,700 Wikipedia passages and their sentences (the
//! "aggregated" static reduction of a contextual model, Bommasani et al., ACL 2020, §3), projects
//! the rows on the teacher's 256 leading principal axes, shrinks rarely seen tokens towards the
//! Model2Vec-style token-only row of `tools/distill_static.py`, weights each row by its
//! Zipf-estimated frequency (SIF) and quantises to int8 with one scale per row ([`StaticTable`],
//! `assets/static-minilm.bin`, format below and in `assets/README.md`). A text's vector is then the
//! mean of the rows of its WordPiece tokens (no `[CLS]`/`[SEP]`; `[UNK]` tokens are skipped, as
//! Model2Vec does), L2-normalised. No truncation: every token of the text counts. A text with no
//! known token gets the zero vector.
//!
//! Table format, version 1 (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `CAIRNSTE` |
//! | 8 | 4 | u32 format version, 1 |
//! | 12 | 4 | u32 vocabulary size V |
//! | 16 | 4 | u32 dimensions D |
//! | 20 | 4 | u32 quantisation, 1 = int8 values with one f32 scale per row |
//! | 24 | 8 | u64 vocabulary hash: FNV-1a 64 of the tokens in id order, each followed by `\n` |
//! | 32 | 8 | u64 checksum: FNV-1a 64 of every other byte of the file (offsets 0–31, then 40 to the end) |
//! | 40 | 4·V | f32 scale of each row |
//! | 40 + 4·V | V·D | i8 values, row-major; row `i` (token id `i`) is `values[i] * scale[i]` |

use super::wordpiece::{fnv1a64, WordCache, FNV_OFFSET};
use super::{l2_normalize, Embedder, WordPiece};
use crate::error::{Error, Result};

/// First eight bytes of a table file.
pub const MAGIC: &[u8; 8] = b"CAIRNSTE";
/// The format version this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Quantisation code: int8 values, one f32 scale per row.
pub const QUANT_INT8_ROW_SCALE: u32 = 1;
/// Bytes before the scales.
pub const HEADER_LEN: usize = 40;
/// Largest dimension accepted (a guard against absurd headers).
pub const MAX_DIMS: usize = 4096;

/// The committed table made from all-MiniLM-L6-v2 (`assets/static-minilm.bin`). It is
/// only linked into a binary (or the wasm) that calls [`StaticEmbedder::minilm`] or reads it.
pub static MINILM_TABLE: &[u8] = include_bytes!("../../assets/static-minilm.bin");

/// The file's checksum: FNV-1a 64 over bytes 0..32 and 40..end (all but the checksum field).
/// `bytes` must be at least [`HEADER_LEN`] long.
fn checksum(bytes: &[u8]) -> u64 {
    let h = fnv1a64(bytes[..32].iter().copied(), FNV_OFFSET);
    fnv1a64(bytes[HEADER_LEN..].iter().copied(), h)
}

fn table_error(message: impl Into<String>) -> Error {
    Error::Model { what: "static embedding table".into(), message: message.into() }
}

/// A quantised token-embedding table: one int8 row and one f32 scale per vocabulary id.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticTable {
    dims: usize,
    vocab_hash: u64,
    scales: Vec<f32>,
    values: Vec<i8>,
}

impl StaticTable {
    /// Parse a table file (format in the module docs).
    ///
    /// # Errors
    /// [`Error::Model`] for bytes that are too short or too long for their header, a wrong magic,
    /// an unknown version or quantisation, zero or absurd sizes, a checksum that does not match
    /// (corruption), or a negative or non-finite scale. Never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() < HEADER_LEN {
            return Err(table_error(format!(
                "{} bytes, shorter than the {HEADER_LEN}-byte header",
                bytes.len()
            )));
        }
        if &bytes[..8] != MAGIC {
            return Err(table_error("not a Cairn static table (wrong magic bytes)"));
        }
        let u32_at = |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | (u64::from(u32_at(o + 4)) << 32);
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(table_error(format!(
                "format version {version}; this build reads version {FORMAT_VERSION}"
            )));
        }
        let (vocab, dims, quant) = (u32_at(12) as usize, u32_at(16) as usize, u32_at(20));
        if quant != QUANT_INT8_ROW_SCALE {
            return Err(table_error(format!("unknown quantisation code {quant}")));
        }
        if vocab == 0 || dims == 0 || dims > MAX_DIMS {
            return Err(table_error(format!("vocabulary size {vocab}, dimensions {dims}: out of range")));
        }
        let expected = vocab
            .checked_mul(dims)
            .and_then(|v| v.checked_add(vocab.checked_mul(4)?))
            .and_then(|v| v.checked_add(HEADER_LEN));
        if expected != Some(bytes.len()) {
            return Err(table_error(format!(
                "{} bytes, but a {vocab} x {dims} table takes {} (truncated or padded file)",
                bytes.len(),
                expected.map_or_else(|| "more than memory".to_string(), |e| e.to_string())
            )));
        }
        if checksum(bytes) != u64_at(32) {
            return Err(table_error("checksum mismatch (the file is corrupt)"));
        }
        let payload = &bytes[HEADER_LEN..];
        let (scale_bytes, value_bytes) = payload.split_at(vocab * 4);
        let scales: Vec<f32> =
            scale_bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if let Some(i) = scales.iter().position(|s| !s.is_finite() || *s < 0.0) {
            return Err(table_error(format!("row {i} has scale {}", scales[i])));
        }
        let values = value_bytes.iter().map(|&b| b as i8).collect();
        Ok(StaticTable { dims, vocab_hash: u64_at(24), scales, values })
    }

    /// Quantise float rows (row-major, `rows.len()` a multiple of `dims`) the way
    /// `tools/distill_static.py` does: scale = max|row| / 127, values rounded half to even.
    ///
    /// # Errors
    /// [`Error::Model`] for an empty or ragged matrix, `dims` out of range, or a non-finite value.
    pub fn quantize(rows: &[f32], dims: usize, vocab_hash: u64) -> Result<Self> {
        if dims == 0 || dims > MAX_DIMS || rows.is_empty() || rows.len() % dims != 0 {
            return Err(table_error(format!("{} floats cannot be rows of dimension {dims}", rows.len())));
        }
        if rows.iter().any(|x| !x.is_finite()) {
            return Err(table_error("non-finite value"));
        }
        let mut scales = Vec::with_capacity(rows.len() / dims);
        let mut values = Vec::with_capacity(rows.len());
        for row in rows.chunks_exact(dims) {
            let absmax = row.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs())));
            let scale = (absmax / 127.0) as f32;
            let div = if scale > 0.0 { f64::from(scale) } else { 1.0 };
            scales.push(scale);
            values.extend(
                row.iter().map(|&x| (f64::from(x) / div).round_ties_even().clamp(-127.0, 127.0) as i8),
            );
        }
        Ok(StaticTable { dims, vocab_hash, scales, values })
    }

    /// The table file (format in the module docs); [`StaticTable::from_bytes`] reads it back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(self.scales.len() * 4 + self.values.len());
        for s in &self.scales {
            payload.extend_from_slice(&s.to_le_bytes());
        }
        payload.extend(self.values.iter().map(|&v| v as u8));
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(MAGIC);
        for v in [FORMAT_VERSION, self.scales.len() as u32, self.dims as u32, QUANT_INT8_ROW_SCALE] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.vocab_hash.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&payload);
        let sum = checksum(&out);
        out[32..40].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// Dimensions of a row.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Number of rows (the vocabulary size).
    pub fn vocab_size(&self) -> usize {
        self.scales.len()
    }

    /// The vocabulary hash recorded in the file (see [`WordPiece::vocab_hash`]).
    pub fn vocab_hash(&self) -> u64 {
        self.vocab_hash
    }

    /// Row `id`, dequantised, or `None` past the end.
    pub fn row(&self, id: u32) -> Option<Vec<f32>> {
        let i = id as usize;
        let s = *self.scales.get(i)?;
        Some(self.values[i * self.dims..(i + 1) * self.dims].iter().map(|&v| f32::from(v) * s).collect())
    }

    /// Row `id` as stored: its `i8` entries `[dims]` and its scale (the row is
    /// `scale · entries`), or `None` past the end.
    pub fn row_i8(&self, id: u32) -> Option<(&[i8], f32)> {
        let i = id as usize;
        Some((self.values.get(i * self.dims..(i + 1) * self.dims)?, *self.scales.get(i)?))
    }

    /// `acc += row(id)` (ids past the end are ignored).
    #[inline]
    pub(crate) fn add_row(&self, id: u32, acc: &mut [f32]) {
        let i = id as usize;
        if let (Some(&s), Some(vals)) =
            (self.scales.get(i), self.values.get(i * self.dims..(i + 1) * self.dims))
        {
            for (a, &v) in acc.iter_mut().zip(vals) {
                *a += s * f32::from(v);
            }
        }
    }
}

/// The default [`Embedder`]: mean of the table's rows of a text's WordPiece tokens
/// (module docs). Embeds thousands of passages a second on one core.
#[derive(Debug, Clone)]
pub struct StaticEmbedder {
    tokenizer: WordPiece,
    table: StaticTable,
}

impl StaticEmbedder {
    /// An embedder over `table`, whose rows are indexed by `tokenizer`'s ids.
    ///
    /// # Errors
    /// [`Error::Model`] when the table was made for another vocabulary (size or hash differ).
    pub fn new(tokenizer: WordPiece, table: StaticTable) -> Result<Self> {
        if table.vocab_size() != tokenizer.vocab_size() || table.vocab_hash() != tokenizer.vocab_hash() {
            return Err(table_error(format!(
                "made for another vocabulary ({} rows, vocabulary hash {:016x}; the tokenizer has {} tokens, hash {:016x})",
                table.vocab_size(),
                table.vocab_hash(),
                tokenizer.vocab_size(),
                tokenizer.vocab_hash()
            )));
        }
        Ok(StaticEmbedder { tokenizer, table })
    }

    /// Load from the bytes of a table file and the text of its `vocab.txt` (natively from files,
    /// in the browser from fetched bytes).
    ///
    /// # Errors
    /// As [`StaticTable::from_bytes`], [`WordPiece::from_vocab`] and [`StaticEmbedder::new`].
    pub fn from_bytes(table: &[u8], vocab_txt: &str) -> Result<Self> {
        Self::new(WordPiece::from_vocab(vocab_txt)?, StaticTable::from_bytes(table)?)
    }

    /// The bundled embedder made from all-MiniLM-L6-v2 (`assets/`; 256 dimensions).
    /// Parsing and checking the 7.6 MB table takes a few milliseconds: build it once and share it.
    ///
    /// # Errors
    /// None in practice (the bundled files are checked by the tests).
    pub fn minilm() -> Result<Self> {
        Self::from_bytes(MINILM_TABLE, super::wordpiece::MINILM_VOCAB)
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The table.
    pub fn table(&self) -> &StaticTable {
        &self.table
    }

    /// The table rows whose sum, normalised, is the embedding of `text`: its WordPiece ids
    /// without `[UNK]`, in text order, with repeats (ids past the table are never produced by
    /// a tokenizer [`StaticEmbedder::new`] accepted). `ids` is cleared first; `scratch` is
    /// working space and `cache` an optional per-batch word cache. An embedding is then
    /// `Σ row(id) / ‖Σ row(id)‖` over these ids (the zero vector when the sum is zero), which
    /// is what lets the graph score facts from their tokens' rows without their vectors.
    pub fn row_ids_into(&self, text: &str, scratch: &mut String, cache: Option<&mut WordCache>, ids: &mut Vec<u32>) {
        ids.clear();
        match cache {
            Some(cache) => self.tokenizer.encode_into_cached(text, scratch, cache, ids),
            None => self.tokenizer.encode_into(text, scratch, ids),
        }
        let unk = self.tokenizer.unk_id();
        ids.retain(|&id| id != unk);
    }

    /// Embed `text` into `out` (length [`Embedder::dim`]), reusing `ids` and `scratch` as
    /// working space.
    fn embed_into(&self, text: &str, ids: &mut Vec<u32>, scratch: &mut String, cache: Option<&mut WordCache>, out: &mut [f32]) {
        self.row_ids_into(text, scratch, cache, ids);
        out.iter_mut().for_each(|x| *x = 0.0);
        // Model2Vec's mean over the known tokens; the division by their count is left out
        // because the normalisation below removes it anyway.
        for &id in ids.iter() {
            self.table.add_row(id, out);
        }
        l2_normalize(out);
    }
}

impl Embedder for StaticEmbedder {
    fn dim(&self) -> usize {
        self.table.dims
    }

    fn as_static(&self) -> Option<&StaticEmbedder> {
        Some(self)
    }

    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<f32>> {
        let d = self.table.dims;
        let n = texts.len();
        // each row is zeroed just before it is filled (embed_into), not the whole batch up front
        let mut out = Vec::with_capacity(n * d);
        let (mut ids, mut scratch) = (Vec::new(), String::new());
        // texts of one batch repeat words (a corpus, entity names and the facts made of them);
        // a single text (a query) has nothing to share
        let mut cache = (n > 1).then(WordCache::new);
        let every = (n / 100).max(1);
        for (i, text) in texts.iter().enumerate() {
            out.resize((i + 1) * d, 0.0);
            self.embed_into(text, &mut ids, &mut scratch, cache.as_mut(), &mut out[i * d..]);
            if (i + 1) % every == 0 && i + 1 < n {
                progress(i + 1, n);
            }
        }
        progress(n, n);
        Ok(out)
    }
}

/// A three-dimensional embedder over a nine-token vocabulary whose rows `i8` holds exactly, for
/// tests worked by hand: red = (1, 0, 0), blue = (0, 1, 0), car = (0, 0, 2), ##s = (0, 0, −0.5),
/// boat = (0, 0.5, 0.5); [UNK]'s row (9, 9, 9) must never be summed.
#[cfg(test)]
pub(crate) fn tiny_for_tests() -> StaticEmbedder {
    let rows: Vec<f32> = [
        [0.0, 0.0, 0.0],  // [PAD]
        [9.0, 9.0, 9.0],  // [UNK]: never used
        [0.0, 0.0, 0.0],  // [CLS]
        [0.0, 0.0, 0.0],  // [SEP]
        [1.0, 0.0, 0.0],  // red
        [0.0, 1.0, 0.0],  // blue
        [0.0, 0.0, 2.0],  // car
        [0.0, 0.0, -0.5], // ##s
        [0.0, 0.5, 0.5],  // boat
    ]
    .iter()
    .flatten()
    .copied()
    .collect();
    let wp = WordPiece::from_vocab(TINY_VOCAB).unwrap();
    let table = StaticTable::quantize(&rows, 3, wp.vocab_hash()).unwrap();
    StaticEmbedder::new(wp, table).unwrap()
}

/// The vocabulary of [`tiny_for_tests`].
#[cfg(test)]
pub(crate) const TINY_VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nred\nblue\ncar\n##s\nboat\n";

#[cfg(test)]
mod tests {
    use super::super::{dot, is_zero, VectorMatrix};
    use super::*;

    use super::{tiny_for_tests as tiny, TINY_VOCAB as VOCAB};

    #[test]
    fn mean_of_rows_normalised_and_unknown_skipped() {
        let e = tiny();
        assert_eq!(e.dim(), 3);
        let v = e.embed("Red car").unwrap();
        let (a, b) = (1.0 / 5f32.sqrt(), 2.0 / 5f32.sqrt());
        assert!((v[0] - a).abs() < 1e-6 && v[1].abs() < 1e-6 && (v[2] - b).abs() < 1e-6, "{v:?}");
        // "cars" = car + ##s; the unknown word "zebra" is skipped.
        let w = e.embed("red cars zebra").unwrap();
        let (a, b) = (1.0 / 3.25f32.sqrt(), 1.5 / 3.25f32.sqrt());
        assert!((w[0] - a).abs() < 1e-6 && (w[2] - b).abs() < 1e-6, "{w:?}");
        // Nothing known, or nothing at all: the zero vector.
        assert!(is_zero(&e.embed("zebra").unwrap()));
        assert!(is_zero(&e.embed("").unwrap()));
        assert!(is_zero(&e.embed("   ").unwrap()));
    }

    #[test]
    fn batch_equals_one_by_one_and_reports_progress() {
        let e = tiny();
        let texts = ["red", "blue boat", "", "cars"];
        let mut calls = Vec::new();
        let batch = e.embed_batch(&texts, &mut |d, n| calls.push((d, n))).unwrap();
        assert_eq!(batch.len(), 4 * 3);
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(&batch[i * 3..i * 3 + 3], &e.embed(t).unwrap()[..]);
        }
        assert_eq!(calls.last(), Some(&(4, 4)));
        assert!(calls.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn table_round_trip() {
        let e = tiny();
        let bytes = e.table().to_bytes();
        assert_eq!(bytes.len(), HEADER_LEN + 9 * 4 + 9 * 3);
        assert_eq!(&bytes[..8], b"CAIRNSTE");
        let back = StaticTable::from_bytes(&bytes).unwrap();
        assert_eq!(&back, e.table());
        assert_eq!(back.to_bytes(), bytes);
        // Exact values: a row with max |x| = 2 has scale 2/127 and values 0, 0, 127.
        assert_eq!(back.row(6).unwrap(), vec![0.0, 0.0, 2.0]);
        assert_eq!(back.row(4).unwrap(), vec![1.0, 0.0, 0.0]);
        let e2 = StaticEmbedder::from_bytes(&bytes, VOCAB).unwrap();
        assert_eq!(e2.embed("blue boats").unwrap(), e.embed("blue boats").unwrap());
    }

    #[test]
    fn corrupt_tables_are_errors_not_panics() {
        let good = tiny().table().to_bytes();
        let bad = |b: &[u8]| matches!(StaticTable::from_bytes(b), Err(Error::Model { .. }));
        // Every truncation, including the empty file and a cut inside the header.
        for n in 0..good.len() {
            assert!(bad(&good[..n]), "truncated to {n} bytes");
        }
        // One byte more.
        let mut long = good.clone();
        long.push(0);
        assert!(bad(&long));
        // Any single flipped bit, in the header or the payload.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0x10;
            assert!(bad(&b), "byte {i} flipped");
        }
        // A header claiming an enormous table.
        let mut huge = good.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        huge[16..20].copy_from_slice(&4096u32.to_le_bytes());
        assert!(bad(&huge));
        // A table for another vocabulary.
        let other = WordPiece::from_vocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\nred\nblue\ncar\n##s\nship\n").unwrap();
        assert!(matches!(
            StaticEmbedder::new(other, StaticTable::from_bytes(&good).unwrap()),
            Err(Error::Model { .. })
        ));
    }

    #[test]
    fn bundled_minilm_table_loads_and_ranks_sensibly() {
        let e = StaticEmbedder::minilm().unwrap();
        assert_eq!(e.table().vocab_size(), 30522);
        assert_eq!(e.dim(), e.table().dims());
        let docs = [
            "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
            "Photosynthesis converts light energy into chemical energy in plants.",
            "The stock market fell sharply after the central bank raised interest rates.",
        ];
        let m = VectorMatrix::from_rows(e.dim(), e.embed_batch(&docs, &mut |_, _| {}).unwrap()).unwrap();
        for r in 0..3 {
            let row = m.row(r).unwrap();
            assert!((dot(row, row) - 1.0).abs() < 1e-5);
        }
        let queries = [
            "famous landmark in paris",
            "how do plants make energy from sunlight",
            "interest rate hike and stocks",
        ];
        for (want, q) in queries.iter().enumerate() {
            let top = m.top_k(&e.embed(q).unwrap(), 1).unwrap();
            assert_eq!(top[0].row as usize, want, "query {q:?}");
        }
    }
}
