//! The index file: an [`crate::index::Index`] as bytes, to save, load, ship with a static site and
//! share. Written by [`crate::index::Index::to_bytes`], read by [`crate::index::Index::from_bytes`].
//!
//! **Layout, version 3** (version 4 is the same layout with the section kinds of a static site's
//! split index, [`SectionKind::Passages`], [`SectionKind::Texts`] and [`SectionKind::Postings`];
//! versions 1 and 2 wrote the corpus and the graph as fixed-width lists and
//! the graph with every derived list; this build refuses them with [`Error::IndexOutdated`], which
//! asks to rebuild the file). Little-endian throughout; every length is explicit; nothing comes
//! from a serde-derived binary layout that could change silently. Inside the corpus and graph
//! sections, values of one kind are kept together in streams of varints,
//! which gzip compresses far better than interleaved fixed-width records
//! (`docs/method/index-size.md` has the sizes).
//!
//! ```text
//! offset  size        field
//! 0       8           magic  b"CAIRNIDX"
//! 8       4           format version (u32) = FORMAT_VERSION
//! 12      4           section count n (u32)
//! 16      24·n        section table, per section:
//!                       kind (u32), offset from file start (u64), length (u64), CRC32 of the body (u32)
//! 16+24n  4           CRC32 of bytes 0 .. 16+24n (magic, version, count and table)
//! …                   section bodies, in table order, back to back
//! ```
//!
//! Sections (kinds in [`SectionKind`]): `config` (the [`crate::index::IndexConfig`] as JSON: small,
//! readable, and serde_json writes struct fields in declaration order), `corpus` (passages, as
//! columns: lengths, ids, titles, texts),
//! one `dense` per embedder slot with passage vectors (`f32`, exactly as held, so a loaded index
//! ranks exactly as the saved one; for the static embedder only their checksum, see
//! [`SectionKind::Dense`]), and, once built, `graph` (the knowledge graph's node, entity,
//! passage and fact tables and synonym pairs, without the lists that follow from others:
//! [`crate::graph::Graph::write_to`]) and
//! `graph-report` (its build report as JSON, timings dropped). A static site's index is split
//! in three files of this format ([`crate::index::SplitIndex`]): `config`, `passages` (ids and
//! titles) and `postings` (BM25's inverted index); `texts`; `config` and the sections above that
//! need an embedder.
//!
//! **Not stored, rebuilt on load** (each a pure function of what is stored, so results are
//! identical): BM25 (the corpus is re-tokenised; a site's keyword part stores its postings
//! instead, so that the first keyword result waits for no text), the static embedder's passage vectors (checked
//! against a stored CRC32), the graph's entity and fact vectors (re-embedded with the static
//! embedder, checked against a stored fingerprint), its derived tables, synonym cosines and CSR.
//! On 2wiki-corpus-6k with its graph the gzipped file is 1.81× the gzipped text of the corpus
//! (`docs/method/index-size.md`).
//!
//! **Deterministic**: the same corpus and configuration give the same bytes (no hash-map
//! iteration order, no timestamps, no build timings).
//!
//! **Decoding never panics** on any input: every read is bounds-checked and every allocation is
//! capped by the bytes that remain. A file shorter than its table says is
//! [`Error::IndexTruncated`]; a checksum mismatch or an inconsistent body is
//! [`Error::IndexCorrupt`]; a version above [`FORMAT_VERSION`] is [`Error::IndexVersion`]; a file
//! without the magic bytes is [`Error::NotAnIndex`].

use crate::error::{Error, Result};

/// The 8 magic bytes that open every index file.
pub const MAGIC: [u8; 8] = *b"CAIRNIDX";

/// The newest format version this build reads and writes. Version 3 stores the corpus
/// and the knowledge graph as streams of varints (the graph without the lists that follow from
/// others, see [`crate::graph`]'s persistence); versions 1 and 2 (fixed-width lists) are no
/// longer read: [`Error::IndexOutdated`] asks to rebuild such a file.
///
/// Version 4 adds the kinds of a static site's split index ([`SectionKind::Passages`],
/// [`SectionKind::Texts`], [`SectionKind::Postings`]); a file is written as version 4 only when
/// it holds one of them, so every other file is still version 3 and byte-equal to before (a
/// Cairn that reads version 3 only then asks to be updated instead of calling the file
/// corrupt).
///
/// Version 5 adds the kinds of a static site's sharded keyword index
/// ([`SectionKind::KeywordMeta`], [`SectionKind::Dictionary`], [`SectionKind::PostingShard`],
/// [`SectionKind::Fragments`]), by the same rule.
pub const FORMAT_VERSION: u32 = 5;

/// The version of a file that holds version 4's kinds and none of version 5's.
pub const SPLIT_FORMAT_VERSION: u32 = 4;

/// The version of a file that holds none of version 4's section kinds.
pub const BASE_FORMAT_VERSION: u32 = 3;

/// The oldest format version this build reads.
pub const OLDEST_FORMAT_VERSION: u32 = 3;

/// Bytes before the section table: magic, version, section count.
const HEADER_LEN: usize = 16;
/// Bytes per section-table entry.
const ENTRY_LEN: usize = 24;

/// The kind of a section (the `kind` field of the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SectionKind {
    /// [`crate::index::IndexConfig`] as UTF-8 JSON.
    Config = 1,
    /// The passages: count (varint), then four streams: the byte lengths of every id, then of
    /// every title, then of every text (varints); the ids, the titles and the texts (UTF-8).
    Corpus = 2,
    /// One embedder slot's passage vectors: slot (u8: 0 static, 1 MiniLM), storage (u8),
    /// dimension (u32), rows (u32), the embedder's fingerprint (u32, [`fingerprint`]), then
    /// with storage 0 rows × dimension `f32`, with storage 1 (the static embedder: re-embedding
    /// is cheaper than downloading the vectors) the CRC32 of those `f32` bytes, which the
    /// loader checks the re-embedded vectors against.
    Dense = 3,
    /// The knowledge graph ([`crate::graph::Graph::write_to`]).
    Graph = 4,
    /// The graph's build report as UTF-8 JSON (timings `null`).
    GraphReport = 5,
    /// CAGE's per-passage graph embeddings `Z` ([`crate::cage::store`]):
    /// encoder fingerprint (u32), β (f32), merged channels (u8), dimension (u32), rows (u32),
    /// then per row a presence byte (0/1), then per row its scale (f32), then rows × dimension
    /// int8 codes (`z ≈ code · scale`). 128 + 5 bytes per passage.
    CageZ = 6,
    /// The passages' ids and titles without their texts (a static site's keyword part): count
    /// (varint), then three streams: the byte lengths of every id, then of every title
    /// (varints); the ids; the titles (UTF-8); then the CRC32 (u32) of the [`SectionKind::Texts`]
    /// body that completes them.
    Passages = 7,
    /// The passages' texts, to complete a [`SectionKind::Passages`] section: count (varint),
    /// then two streams: every text's byte length (varints); the texts (UTF-8).
    Texts = 8,
    /// BM25's inverted index, stored so that it is read instead of rebuilt from the texts
    /// ([`crate::index::Bm25`]'s `write_to`: terms in sorted order, document frequencies,
    /// document gaps and term frequencies as streams of varints).
    Postings = 9,
    /// A static site's sharded keyword index, its fixed part ([`crate::index::shards`]): the
    /// shards' tag, BM25's parameters, every document's length and the tables that say which
    /// shard holds which terms and documents.
    KeywordMeta = 10,
    /// One shard of the sorted vocabulary: terms and their document frequencies.
    Dictionary = 11,
    /// One shard of BM25's postings: a run of term ids with their documents and frequencies.
    PostingShard = 12,
    /// One shard of the passages: ids, titles and texts of a run of documents.
    Fragments = 13,
}

impl SectionKind {
    /// The kind with this number, if any.
    pub fn from_u32(k: u32) -> Option<SectionKind> {
        match k {
            1 => Some(SectionKind::Config),
            2 => Some(SectionKind::Corpus),
            3 => Some(SectionKind::Dense),
            4 => Some(SectionKind::Graph),
            5 => Some(SectionKind::GraphReport),
            6 => Some(SectionKind::CageZ),
            7 => Some(SectionKind::Passages),
            8 => Some(SectionKind::Texts),
            9 => Some(SectionKind::Postings),
            10 => Some(SectionKind::KeywordMeta),
            11 => Some(SectionKind::Dictionary),
            12 => Some(SectionKind::PostingShard),
            13 => Some(SectionKind::Fragments),
            _ => None,
        }
    }

    /// The section's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            SectionKind::Config => "config",
            SectionKind::Corpus => "corpus",
            SectionKind::Dense => "dense",
            SectionKind::Graph => "graph",
            SectionKind::GraphReport => "graph-report",
            SectionKind::CageZ => "cage-z",
            SectionKind::Passages => "passages",
            SectionKind::Texts => "texts",
            SectionKind::Postings => "postings",
            SectionKind::KeywordMeta => "keyword-meta",
            SectionKind::Dictionary => "dictionary",
            SectionKind::PostingShard => "posting-shard",
            SectionKind::Fragments => "fragments",
        }
    }
}

/// A fixed text whose embedding identifies an embedder: the CRC32 of its vector's little-endian
/// bytes is stored with the vectors it made, and a loader refuses an embedder whose fingerprint
/// differs (vectors from another model would rank nonsense).
pub const FINGERPRINT_TEXT: &str =
    "Cairn index fingerprint: Which river flows through the capital of France?";

/// The fingerprint of `embedder` ([`FINGERPRINT_TEXT`]).
///
/// # Errors
/// The embedder's own error.
pub fn fingerprint(embedder: &dyn crate::embed::Embedder) -> Result<u32> {
    let v = embedder.embed(FINGERPRINT_TEXT)?;
    let mut h = crc32fast::Hasher::new();
    for x in v {
        h.update(&x.to_le_bytes());
    }
    Ok(h.finalize())
}

/// Appends little-endian values to a section body.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A length or count as u32.
    ///
    /// # Errors
    /// [`Error::Config`] past `u32::MAX`.
    pub(crate) fn len(&mut self, n: usize) -> Result<()> {
        let n = u32::try_from(n)
            .map_err(|_| Error::Config(format!("{n} items do not fit the index file's 32-bit lengths")))?;
        self.u32(n);
        Ok(())
    }
    pub(crate) fn str(&mut self, s: &str) -> Result<()> {
        self.len(s.len())?;
        self.buf.extend_from_slice(s.as_bytes());
        Ok(())
    }
    /// An unsigned LEB128 varint: 7 bits a byte, low bits first, at most 5 bytes for a `u32`.
    pub(crate) fn varint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    /// A signed difference as a zigzag varint (0, -1, 1, -2, … → 0, 1, 2, 3, …).
    ///
    /// # Errors
    /// [`Error::Config`] when `v` does not fit 32 bits zigzagged.
    pub(crate) fn zigzag(&mut self, v: i64) -> Result<()> {
        let z = if v >= 0 { (v as u64) << 1 } else { ((-(v + 1)) as u64) << 1 | 1 };
        let z = u32::try_from(z).map_err(|_| {
            Error::Config(format!("a difference of {v} does not fit the index file's varints"))
        })?;
        self.varint(z);
        Ok(())
    }
    /// A length or count as a varint.
    ///
    /// # Errors
    /// [`Error::Config`] past `u32::MAX`.
    pub(crate) fn vlen(&mut self, n: usize) -> Result<()> {
        let n = u32::try_from(n)
            .map_err(|_| Error::Config(format!("{n} items do not fit the index file's 32-bit lengths")))?;
        self.varint(n);
        Ok(())
    }
    /// A string as a varint length and its UTF-8 bytes.
    pub(crate) fn vstr(&mut self, s: &str) -> Result<()> {
        self.vlen(s.len())?;
        self.buf.extend_from_slice(s.as_bytes());
        Ok(())
    }
    /// A stream: another writer's bytes after their varint length. A section made of streams
    /// keeps values of one kind together, which compresses better (gzip sees like next to like).
    pub(crate) fn stream(&mut self, s: Writer) -> Result<()> {
        self.vlen(s.buf.len())?;
        self.buf.extend_from_slice(&s.buf);
        Ok(())
    }
}

/// Bounds-checked little-endian reads from one section body. Every failure is
/// [`Error::IndexCorrupt`] naming the section (its checksum matched, so a body that does not
/// parse was written wrong or forged).
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    section: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], section: &'static str) -> Self {
        Reader { bytes, pos: 0, section }
    }

    pub(crate) fn corrupt(&self, what: impl std::fmt::Display) -> Error {
        Error::IndexCorrupt(format!(
            "section {}: {what} (at byte {} of {})",
            self.section,
            self.pos,
            self.bytes.len()
        ))
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.corrupt(format!("needs {n} more bytes, {} left", self.remaining())));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_bits(self.u32()?))
    }
    /// A count of items of at least `min_item_bytes` each, checked against the bytes left (so
    /// no allocation exceeds the input).
    pub(crate) fn count(&mut self, min_item_bytes: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_bytes.max(1)) > self.remaining() {
            return Err(
                self.corrupt(format!("a count of {n} items exceeds the {} bytes left", self.remaining()))
            );
        }
        Ok(n)
    }
    pub(crate) fn string(&mut self) -> Result<String> {
        let n = self.count(1)?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.corrupt("a string is not UTF-8"))
    }
    /// An unsigned LEB128 varint ([`Writer::varint`]); more than 5 bytes or a value past
    /// `u32::MAX` is corrupt.
    pub(crate) fn varint(&mut self) -> Result<u32> {
        let mut v: u64 = 0;
        for i in 0..5 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| self.corrupt("a varint exceeds 32 bits"));
            }
        }
        Err(self.corrupt("a varint runs past 5 bytes"))
    }
    /// A zigzag varint ([`Writer::zigzag`]).
    pub(crate) fn zigzag(&mut self) -> Result<i64> {
        let z = i64::from(self.varint()?);
        Ok(if z & 1 == 0 { z >> 1 } else { -(z >> 1) - 1 })
    }
    /// A varint count of items of at least `min_item_bytes` each, checked against the bytes
    /// left (so no allocation exceeds the input).
    pub(crate) fn vcount(&mut self, min_item_bytes: usize) -> Result<usize> {
        let n = self.varint()? as usize;
        if n.saturating_mul(min_item_bytes.max(1)) > self.remaining() {
            return Err(
                self.corrupt(format!("a count of {n} items exceeds the {} bytes left", self.remaining()))
            );
        }
        Ok(n)
    }
    /// A string written by [`Writer::vstr`].
    pub(crate) fn vstr(&mut self) -> Result<String> {
        let n = self.vcount(1)?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.corrupt("a string is not UTF-8"))
    }
    /// A stream written by [`Writer::stream`], as a reader of its own named `name` in messages.
    pub(crate) fn stream(&mut self, name: &'static str) -> Result<Reader<'a>> {
        let n = self.vcount(1)?;
        Ok(Reader::new(self.take(n)?, name))
    }
    /// Fails unless every byte was read.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(self.corrupt(format!("{} bytes left over", self.remaining())));
        }
        Ok(())
    }
}

/// A JSON section body (UTF-8) as `T`, read through a [`serde_json::Value`]: the page's wasm
/// already parses configurations from JavaScript that way, so reading them from a file does not
/// compile a second deserialiser for every configuration struct (15 KB of the gzipped wasm).
///
/// # Errors
/// The message of the UTF-8 or JSON error, or of the value that does not fit `T`.
pub(crate) fn json_of<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> std::result::Result<T, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// Assemble a file from `(kind, body)` sections, in the order given.
///
/// # Errors
/// [`Error::Config`] when there are more than `u32::MAX` sections (never in practice).
pub(crate) fn assemble(sections: &[(SectionKind, Vec<u8>)]) -> Result<Vec<u8>> {
    let n = sections.len();
    let table_end = HEADER_LEN + ENTRY_LEN * n;
    let total = table_end + 4 + sections.iter().map(|(_, b)| b.len()).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&MAGIC);
    let newest = sections.iter().map(|(k, _)| *k as u32).max().unwrap_or(0);
    let version = if newest > SectionKind::Postings as u32 {
        FORMAT_VERSION
    } else if newest > SectionKind::CageZ as u32 {
        SPLIT_FORMAT_VERSION
    } else {
        BASE_FORMAT_VERSION
    };
    out.extend_from_slice(&version.to_le_bytes());
    let mut w = Writer::default();
    w.len(n)?;
    out.extend_from_slice(&w.buf);
    let mut offset = (table_end + 4) as u64;
    for (kind, body) in sections {
        out.extend_from_slice(&(*kind as u32).to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        offset += body.len() as u64;
    }
    let header_crc = crc32fast::hash(&out);
    out.extend_from_slice(&header_crc.to_le_bytes());
    for (_, body) in sections {
        out.extend_from_slice(body);
    }
    Ok(out)
}

/// Split a file into its checked `(kind, body)` sections, in table order.
///
/// # Errors
/// [`Error::NotAnIndex`] without the magic bytes; [`Error::IndexVersion`] for a newer (or zero)
/// version; [`Error::IndexOutdated`] for a version older than [`OLDEST_FORMAT_VERSION`]; [`Error::IndexTruncated`] when the file ends before its table or a section;
/// [`Error::IndexCorrupt`] when the table's or a section's CRC32 does not match, a section's kind
/// is unknown, sections overlap or bytes follow the last one.
pub(crate) fn split(bytes: &[u8]) -> Result<Vec<(SectionKind, &[u8])>> {
    let have = bytes.len();
    let truncated =
        |needed: usize, what: &str| Error::IndexTruncated { needed, have, what: what.to_string() };
    let magic_len = have.min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(Error::NotAnIndex);
    }
    if have < HEADER_LEN {
        return Err(truncated(HEADER_LEN, "the header"));
    }
    let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version == 0 || version > FORMAT_VERSION {
        return Err(Error::IndexVersion { found: version, supported: FORMAT_VERSION });
    }
    if version < OLDEST_FORMAT_VERSION {
        return Err(Error::IndexOutdated { found: version, oldest: OLDEST_FORMAT_VERSION });
    }
    let n = word(12) as usize;
    let table_end = n.checked_mul(ENTRY_LEN).and_then(|t| t.checked_add(HEADER_LEN + 4));
    let table_end = match table_end {
        Some(e) if e <= have => e,
        Some(e) => return Err(truncated(e, "the section table")),
        None => return Err(Error::IndexCorrupt(format!("a section count of {n} is impossible"))),
    };
    let stored = word(table_end - 4);
    let computed = crc32fast::hash(&bytes[..table_end - 4]);
    if stored != computed {
        return Err(Error::IndexCorrupt(format!(
            "the header's checksum does not match (stored {stored:08x}, computed {computed:08x})"
        )));
    }
    let mut out = Vec::with_capacity(n);
    let mut expected_offset = table_end as u64;
    for i in 0..n {
        let e = HEADER_LEN + ENTRY_LEN * i;
        let kind_raw = word(e);
        let offset = u64::from(word(e + 4)) | (u64::from(word(e + 8)) << 32);
        let len = u64::from(word(e + 12)) | (u64::from(word(e + 16)) << 32);
        let crc = word(e + 20);
        let kind = SectionKind::from_u32(kind_raw)
            .ok_or_else(|| Error::IndexCorrupt(format!("section {i} has the unknown kind {kind_raw}")))?;
        if offset != expected_offset {
            return Err(Error::IndexCorrupt(format!(
                "section {} starts at byte {offset}, expected {expected_offset}",
                kind.name()
            )));
        }
        let end = offset.checked_add(len).ok_or_else(|| {
            Error::IndexCorrupt(format!("section {} has an impossible length {len}", kind.name()))
        })?;
        if end > have as u64 {
            return Err(truncated(
                usize::try_from(end).unwrap_or(usize::MAX),
                &format!("section {}", kind.name()),
            ));
        }
        let body = &bytes[offset as usize..end as usize];
        let computed = crc32fast::hash(body);
        if computed != crc {
            return Err(Error::IndexCorrupt(format!(
                "the {} section's checksum does not match (stored {crc:08x}, computed {computed:08x})",
                kind.name()
            )));
        }
        out.push((kind, body));
        expected_offset = end;
    }
    if expected_offset != have as u64 {
        return Err(Error::IndexCorrupt(format!(
            "{} bytes follow the last section",
            have as u64 - expected_offset
        )));
    }
    Ok(out)
}
