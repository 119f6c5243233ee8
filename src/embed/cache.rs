//! A vector cache on disk for evaluation runs: [`CachedEmbedder`] wraps an [`Embedder`] and keeps
//! every vector it computes in an append-only file, keyed by a hash of the text, so that runs
//! over the same passages (the `-scale` folders share one 6k-passage corpus; repeated runs of a
//! table) embed each text once. Native only (it reads and writes files).
//!
//! Files: `DIR/<model key>-<dim>.<process id>.vec` (every process appends to its own, so runs
//! may share the folder at once; all files of the model are read), each a sequence of records
//! `[u64 FNV-1a hash of the text's UTF-8][u32 CRC32 of the same bytes][u32 byte length]
//! [dim × f32 little-endian]`. The model key names the model (its file's CRC32) and the
//! dimension, so vectors of another model are never read. A truncated last record (a run that
//! was killed mid-write) is ignored.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::Embedder;
use crate::error::{Error, Result};

/// The cache key of a text: FNV-1a 64 and CRC32 of its UTF-8 bytes, and their length (a collision
/// needs all three to agree).
type TextKey = (u64, u32, u32);

fn text_key(text: &str) -> TextKey {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h, crc32fast::hash(text.as_bytes()), text.len() as u32)
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io { path: path.display().to_string(), source }
}

/// An [`Embedder`] that answers from a file of earlier vectors and embeds only the texts it has
/// not seen (with the wrapped embedder), appending their vectors to the file.
///
/// The vectors are the wrapped embedder's, bit for bit (stored as `f32`), so results with and
/// without the cache are identical.
pub struct CachedEmbedder {
    inner: Rc<dyn Embedder>,
    path: PathBuf,
    known: RefCell<HashMap<TextKey, Vec<f32>>>,
}

impl CachedEmbedder {
    /// Open (or create) the cache of `model` (a short name, e.g. `minilm-1a2b3c4d`, the model
    /// file's CRC32 in it) in folder `dir` for `inner`, reading every vector already there.
    ///
    /// # Errors
    /// [`Error::Io`] when the folder cannot be created or the file cannot be read.
    pub fn open(inner: Rc<dyn Embedder>, dir: &Path, model: &str) -> Result<CachedEmbedder> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let dim = inner.dim();
        let stem = format!("{model}-{dim}.");
        let mut known = HashMap::new();
        let record = 16 + 4 * dim;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&stem) && n.ends_with(".vec"))
            })
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).map_err(|e| io(&f, e))?;
            // `chunks_exact` leaves out a truncated last record.
            for r in bytes.chunks_exact(record) {
                let u64_at = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap_or([0; 8]));
                let u32_at = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap_or([0; 4]));
                let key = (u64_at(0), u32_at(8), u32_at(12));
                let v =
                    r[16..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                known.insert(key, v);
            }
        }
        // Each process appends to a file of its own, so runs may share the folder at once.
        let path = dir.join(format!("{stem}{}.vec", std::process::id()));
        Ok(CachedEmbedder { inner, path, known: RefCell::new(known) })
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.known.borrow().len()
    }

    /// True when the cache holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn append(&self, rows: &[(TextKey, &[f32])]) -> Result<()> {
        let mut buf = Vec::with_capacity(rows.len() * (16 + 4 * self.inner.dim()));
        for ((h, c, n), v) in rows {
            buf.extend_from_slice(&h.to_le_bytes());
            buf.extend_from_slice(&c.to_le_bytes());
            buf.extend_from_slice(&n.to_le_bytes());
            for x in *v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| io(&self.path, e))?;
        f.write_all(&buf).map_err(|e| io(&self.path, e))
    }
}

impl Embedder for CachedEmbedder {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// One text (a query): the wrapped embedder's vector, neither looked up nor stored, so a
    /// query's embedding time stays in the measured query time.
    fn embed(&self, text: &str) -> Result<Vec<f32>> {
        self.inner.embed(text)
    }

    /// The cached vectors, and the wrapped embedder's for the texts not in the cache (embedded
    /// in batches of 64, each batch appended to the file as soon as it is done, so an
    /// interrupted run keeps what it embedded).
    ///
    /// # Errors
    /// The wrapped embedder's errors; [`Error::Io`] when the file cannot be written.
    fn embed_batch(&self, texts: &[&str], progress: &mut dyn FnMut(usize, usize)) -> Result<Vec<f32>> {
        let dim = self.inner.dim();
        let total = texts.len();
        let mut out = vec![0.0f32; total * dim];
        let keys: Vec<TextKey> = texts.iter().map(|t| text_key(t)).collect();
        let mut missing: Vec<usize> = Vec::new();
        {
            let known = self.known.borrow();
            let mut seen = std::collections::HashSet::new();
            for (i, k) in keys.iter().enumerate() {
                match known.get(k) {
                    Some(v) if v.len() == dim => out[i * dim..(i + 1) * dim].copy_from_slice(v),
                    _ if seen.insert(*k) => missing.push(i),
                    _ => {}
                }
            }
        }
        let mut done = total - missing.len();
        for chunk in missing.chunks(64) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let rows = self.inner.embed_batch(&batch, &mut |_, _| {})?;
            let fresh: Vec<(TextKey, &[f32])> =
                chunk.iter().zip(rows.chunks_exact(dim)).map(|(&i, v)| (keys[i], v)).collect();
            self.append(&fresh)?;
            let mut known = self.known.borrow_mut();
            for (k, v) in fresh {
                known.insert(k, v.to_vec());
            }
            done += chunk.len();
            progress(done, total);
        }
        // Duplicates of a text embedded above, and the rows embedded in this call.
        let known = self.known.borrow();
        for (i, k) in keys.iter().enumerate() {
            if let Some(v) = known.get(k) {
                if v.len() == dim {
                    out[i * dim..(i + 1) * dim].copy_from_slice(v);
                }
            }
        }
        progress(total, total);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A 2-d embedder that counts the texts it embeds: vector (len, 1) normalised.
    struct Counting(Rc<Cell<usize>>);

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            2
        }
        fn embed_batch(&self, texts: &[&str], _: &mut dyn FnMut(usize, usize)) -> Result<Vec<f32>> {
            self.0.set(self.0.get() + texts.len());
            let mut out = Vec::new();
            for t in texts {
                let mut v = vec![t.len() as f32, 1.0];
                crate::embed::l2_normalize(&mut v);
                out.extend(v);
            }
            Ok(out)
        }
    }

    #[test]
    fn second_run_reads_the_file_and_embeds_only_new_texts() {
        let dir = std::env::temp_dir().join(format!("cairn-vector-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let count = Rc::new(Cell::new(0));
        let inner: Rc<dyn Embedder> = Rc::new(Counting(count.clone()));
        let c = CachedEmbedder::open(inner.clone(), &dir, "m").unwrap();
        // "abc" twice: embedded once.
        let v = c.embed_batch(&["abc", "", "abc"], &mut |_, _| {}).unwrap();
        assert_eq!(count.get(), 2);
        // (3, 1) / sqrt(10) = (0.94868, 0.31623); "" → (0, 1).
        assert!((v[0] - 0.948_683).abs() < 1e-6 && (v[1] - 0.316_228).abs() < 1e-6);
        assert_eq!(&v[2..4], &[0.0, 1.0]);
        assert_eq!(&v[4..6], &v[0..2]);
        drop(c);
        let c = CachedEmbedder::open(inner, &dir, "m").unwrap();
        assert_eq!(c.len(), 2);
        let w = c.embed_batch(&["", "abcd", "abc"], &mut |_, _| {}).unwrap();
        assert_eq!(count.get(), 3, "only \"abcd\" is new");
        assert_eq!(&w[4..6], &v[0..2]);
        // (4, 1) / sqrt(17).
        assert!((w[2] - 0.970_143).abs() < 1e-6);
        // A truncated tail (a killed run) is ignored; another model's file is not read.
        let path = dir.join(format!("m-2.{}.vec", std::process::id()));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 3 * 24);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&path, &bytes).unwrap();
        std::fs::write(dir.join("other-2.1.vec"), &bytes).unwrap();
        let c = CachedEmbedder::open(Rc::new(Counting(count.clone())), &dir, "m").unwrap();
        assert_eq!(c.len(), 3);
        let c = CachedEmbedder::open(Rc::new(Counting(count.clone())), &dir, "other").unwrap();
        assert_eq!(c.len(), 3);
        assert!(CachedEmbedder::open(Rc::new(Counting(count)), &dir, "none").unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
