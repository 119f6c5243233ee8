//! A static site's keyword index in shards: what the first keyword result needs is a small fixed
//! part plus the shards of the query's own terms, so that the bytes a visitor downloads before
//! the first result (and per later query) stay nearly flat as the site grows (Pagefind's layout:
//! a small meta file, the index in chunks by term, one fragment per result).
//!
//! Files ([`Index::to_keyword_shards`]), each an index file of its own ([`crate::format`],
//! version 5) holding one section:
//! - **meta** ([`SectionKind::KeywordMeta`]): the shards' tag, BM25's parameters, every
//!   document's length (BM25's length norm needs them all) and three tables: the first term and
//!   the term count of every dictionary shard, the term count of every posting shard, the
//!   document count of every fragment shard.
//! - **dictionary shards** `d0, d1, …` ([`SectionKind::Dictionary`]): runs of the sorted
//!   vocabulary with their document frequencies, cut at about [`ShardSizes::dictionary`] bytes.
//!   A term's exact lookup needs one; a near spelling (typo tolerance keeps the first letter,
//!   [`super::Bm25Config::typo_first_char`]) needs the shards of the term's first letter; a
//!   completion those of its prefix.
//! - **posting shards** `p0, p1, …` ([`SectionKind::PostingShard`]): the postings of runs of term
//!   ids (term id = position in the sorted vocabulary, so a prefix's completions are neighbours),
//!   cut at about [`ShardSizes::postings`] bytes.
//! - **fragment shards** `f0, f1, …` ([`SectionKind::Fragments`]): the passages' ids, titles and
//!   texts, for the results shown only, cut at about [`ShardSizes::fragments`] bytes.
//!
//! Documents are numbered in the order of their passage ids (not the corpus order), so that
//! ranking's tie-break by passage id ([`crate::search::rank`]) is a tie-break by number and the
//! reader needs no id before it has its top `k`; one page's sections stay neighbours.
//!
//! Every shard repeats the tag (the CRC32 of all shards' contents) and its own number, so a shard
//! from another build of the site (a stale cache) or in the wrong place is refused; every value
//! is checked on reading ([`KeywordMeta::read`], [`read_dictionary`], [`read_postings`],
//! [`read_fragments`]). [`crate::reader::KeywordReader`] reads them and ranks exactly as
//! [`crate::search::Searcher::query`] with the `bm25` method (tested).

use std::ops::Range;

use super::bm25::read_term_postings;
use super::{Bm25Config, Index};
use crate::error::{Error, Result};
use crate::format::{assemble, split, Reader, SectionKind, Writer};

/// Target sizes of the shards, in bytes before gzip. A shard closes once it reaches its target,
/// so a shard is larger only by its last item (one term's postings, one passage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSizes {
    /// Dictionary shards. Default 8 KiB (about 700 terms).
    pub dictionary: usize,
    /// Posting shards. Default 16 KiB.
    pub postings: usize,
    /// Fragment shards. Default 6 KiB (a few passages).
    pub fragments: usize,
}

impl Default for ShardSizes {
    fn default() -> Self {
        ShardSizes { dictionary: 8 << 10, postings: 16 << 10, fragments: 6 << 10 }
    }
}

/// The files of [`Index::to_keyword_shards`] (module docs), as index-file bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct KeywordShards {
    /// The CRC32 of every shard's contents; every file carries it.
    pub tag: u32,
    /// The fixed part.
    pub meta: Vec<u8>,
    /// Dictionary shards, `d0, d1, …`.
    pub dictionary: Vec<Vec<u8>>,
    /// Posting shards, `p0, p1, …`.
    pub postings: Vec<Vec<u8>>,
    /// Fragment shards, `f0, f1, …`.
    pub fragments: Vec<Vec<u8>>,
}

impl KeywordShards {
    /// Every shard as `(name, bytes)`: `d0…`, `p0…`, `f0…` ([`Part::name`]); the meta is not
    /// among them.
    pub fn named_shards(&self) -> impl Iterator<Item = (String, &[u8])> {
        named(PartKind::Dictionary, &self.dictionary)
            .chain(named(PartKind::Postings, &self.postings))
            .chain(named(PartKind::Fragments, &self.fragments))
    }
}

/// `(name, bytes)` of every shard of `list`, of `kind`.
fn named(kind: PartKind, list: &[Vec<u8>]) -> impl Iterator<Item = (String, &[u8])> {
    list.iter().enumerate().map(move |(i, b)| (Part { kind, index: i }.name(), b.as_slice()))
}

/// The kind of a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PartKind {
    /// A dictionary shard (`d`).
    Dictionary,
    /// A posting shard (`p`).
    Postings,
    /// A fragment shard (`f`).
    Fragments,
}

/// One shard: its kind and number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Part {
    /// Which list.
    pub kind: PartKind,
    /// Its number in the list, from 0.
    pub index: usize,
}

impl Part {
    /// The shard's name: `d`, `p` or `f` and its number (`"d12"`); a site stores it as
    /// `NAME.cairn.gz` in the folder the manifest names.
    pub fn name(&self) -> String {
        let letter = match self.kind {
            PartKind::Dictionary => 'd',
            PartKind::Postings => 'p',
            PartKind::Fragments => 'f',
        };
        format!("{letter}{}", self.index)
    }

    /// The shard named `name` ([`Part::name`]).
    ///
    /// # Errors
    /// [`Error::IndexCorrupt`] for a name of no shard.
    pub fn parse(name: &str) -> Result<Part> {
        let bad = || Error::IndexCorrupt(format!("\"{name}\" names no shard of a keyword index"));
        let mut chars = name.chars();
        let kind = match chars.next() {
            Some('d') => PartKind::Dictionary,
            Some('p') => PartKind::Postings,
            Some('f') => PartKind::Fragments,
            _ => return Err(bad()),
        };
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        Ok(Part { kind, index: digits.parse().map_err(|_| bad())? })
    }
}

/// The meta file, read ([`KeywordMeta::read`]).
#[derive(Debug, Clone)]
pub struct KeywordMeta {
    /// The shards' tag.
    pub tag: u32,
    /// BM25's parameters.
    pub config: Bm25Config,
    /// Every document's length in tokens, by document number (passage-id order).
    pub doc_len: Vec<u32>,
    /// The first term of every dictionary shard.
    pub dict_first: Vec<String>,
    /// Cumulative term counts: dictionary shard `i` holds term ids `dict_start[i]..dict_start[i+1]`.
    pub dict_start: Vec<u32>,
    /// Cumulative term counts of the posting shards.
    pub post_start: Vec<u32>,
    /// Cumulative document counts of the fragment shards.
    pub frag_start: Vec<u32>,
}

/// A dictionary shard, read: term ids `start..start + terms.len()`.
#[derive(Debug, Clone)]
pub struct DictionaryShard {
    /// The id of its first term.
    pub start: u32,
    /// Its terms, sorted.
    pub terms: Vec<String>,
    /// Their document frequencies.
    pub dfs: Vec<u32>,
}

/// A posting shard, read: term ids `start..start + docs.len()`.
#[derive(Debug, Clone)]
pub struct PostingShard {
    /// The id of its first term.
    pub start: u32,
    /// Per term, its documents, ascending.
    pub docs: Vec<Vec<u32>>,
    /// Per term, its term frequencies.
    pub tfs: Vec<Vec<u32>>,
}

/// A fragment shard, read: documents `start..start + passages.len()`.
#[derive(Debug, Clone)]
pub struct FragmentShard {
    /// The number of its first document.
    pub start: u32,
    /// Per document: passage id, title, text.
    pub passages: Vec<(String, String, String)>,
}

impl Index {
    /// The index's BM25 side as a sharded keyword index (module docs), with shards cut at about
    /// `sizes`. Deterministic: the same index gives the same bytes.
    ///
    /// # Errors
    /// [`Error::TextsNotLoaded`] when the passages' texts are not in (an index opened from a
    /// site's keyword part); [`Error::Config`] when a count exceeds `u32::MAX`.
    pub fn to_keyword_shards(&self, sizes: ShardSizes) -> Result<KeywordShards> {
        self.require_texts("writing a sharded keyword index")?;
        let passages = self.corpus.passages();
        let n = passages.len();
        // document number = position in passage-id order
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by(|&a, &b| passages[a as usize].id.cmp(&passages[b as usize].id));
        let mut number = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            number[old as usize] = new as u32;
        }
        let bm25 = &self.bm25;
        let t = bm25.num_terms();

        // dictionary shards
        let mut dict_bodies: Vec<Writer> = Vec::new();
        let (mut dict_first, mut dict_counts) = (Vec::new(), Vec::new());
        let mut id = 0u32;
        while (id as usize) < t {
            let start = id;
            let (mut lens, mut bytes, mut dfs) = (Writer::default(), Writer::default(), Writer::default());
            while (id as usize) < t && bytes.buf.len() + lens.buf.len() + dfs.buf.len() < sizes.dictionary {
                let term = bm25.term(id).unwrap_or_default();
                lens.vlen(term.len())?;
                bytes.buf.extend_from_slice(term.as_bytes());
                dfs.varint(bm25.postings_of(id).0.len() as u32);
                id += 1;
            }
            dict_first.push(bm25.term(start).unwrap_or_default().to_string());
            dict_counts.push(id - start);
            let mut w = Writer::default();
            w.varint(start);
            w.varint(id - start);
            for s in [lens, bytes, dfs] {
                w.stream(s)?;
            }
            dict_bodies.push(w);
        }

        // posting shards
        let mut post_bodies: Vec<Writer> = Vec::new();
        let mut post_counts = Vec::new();
        let mut id = 0u32;
        let mut renumbered: Vec<(u32, u32)> = Vec::new();
        while (id as usize) < t {
            let start = id;
            let (mut dfs, mut gaps, mut tfs) = (Writer::default(), Writer::default(), Writer::default());
            while (id as usize) < t && dfs.buf.len() + gaps.buf.len() + tfs.buf.len() < sizes.postings {
                let (docs, freqs) = bm25.postings_of(id);
                renumbered.clear();
                renumbered.extend(docs.iter().zip(freqs).map(|(&d, &f)| (number[d as usize], f)));
                renumbered.sort_unstable();
                dfs.varint(renumbered.len() as u32);
                let mut prev = None;
                for &(d, f) in &renumbered {
                    gaps.varint(prev.map_or(d, |p| d - p));
                    prev = Some(d);
                    tfs.varint(f);
                }
                id += 1;
            }
            post_counts.push(id - start);
            let mut w = Writer::default();
            w.varint(start);
            w.varint(id - start);
            for s in [dfs, gaps, tfs] {
                w.stream(s)?;
            }
            post_bodies.push(w);
        }

        // fragment shards
        let mut frag_bodies: Vec<Writer> = Vec::new();
        let mut frag_counts = Vec::new();
        let mut d = 0usize;
        while d < n {
            let start = d;
            let (mut lens, mut ids, mut titles, mut texts) =
                (Writer::default(), Writer::default(), Writer::default(), Writer::default());
            let mut size = 0usize;
            while d < n && size < sizes.fragments {
                let p = &passages[order[d] as usize];
                for (stream, s) in [(&mut ids, &p.id), (&mut titles, &p.title), (&mut texts, &p.text)] {
                    lens.vlen(s.len())?;
                    stream.buf.extend_from_slice(s.as_bytes());
                }
                size += p.id.len() + p.title.len() + p.text.len();
                d += 1;
            }
            frag_counts.push((d - start) as u32);
            let mut w = Writer::default();
            w.vlen(start)?;
            w.vlen(d - start)?;
            for s in [lens, ids, titles, texts] {
                w.stream(s)?;
            }
            frag_bodies.push(w);
        }

        let mut hasher = crc32fast::Hasher::new();
        for w in dict_bodies.iter().chain(&post_bodies).chain(&frag_bodies) {
            hasher.update(&w.buf);
        }
        let tag = hasher.finalize();
        let file = |kind: SectionKind, index: usize, w: &Writer| -> Result<Vec<u8>> {
            let mut body = Writer::default();
            body.u32(tag);
            body.vlen(index)?;
            body.buf.extend_from_slice(&w.buf);
            assemble(&[(kind, body.buf)])
        };
        let dictionary =
            dict_bodies.iter().enumerate().map(|(i, w)| file(SectionKind::Dictionary, i, w)).collect::<Result<_>>()?;
        let postings =
            post_bodies.iter().enumerate().map(|(i, w)| file(SectionKind::PostingShard, i, w)).collect::<Result<_>>()?;
        let fragments =
            frag_bodies.iter().enumerate().map(|(i, w)| file(SectionKind::Fragments, i, w)).collect::<Result<_>>()?;

        let mut m = Writer::default();
        m.u32(tag);
        write_config(&mut m, &bm25.config());
        let mut lens = Writer::default();
        m.vlen(n)?;
        for &old in &order {
            lens.varint(bm25.doc_len(old).unwrap_or(0));
        }
        m.stream(lens)?;
        m.vlen(t)?;
        let (mut firsts, mut counts) = (Writer::default(), Writer::default());
        m.vlen(dict_first.len())?;
        for (f, &c) in dict_first.iter().zip(&dict_counts) {
            firsts.vstr(f)?;
            counts.varint(c);
        }
        m.stream(firsts)?;
        m.stream(counts)?;
        for list in [&post_counts, &frag_counts] {
            let mut counts = Writer::default();
            m.vlen(list.len())?;
            for &c in list.iter() {
                counts.varint(c);
            }
            m.stream(counts)?;
        }
        let meta = assemble(&[(SectionKind::KeywordMeta, m.buf)])?;
        Ok(KeywordShards { tag, meta, dictionary, postings, fragments })
    }
}

/// BM25's parameters in the meta file: k1, b (f32); a flag byte (1 typos, 2 typo_known_terms,
/// 4 typo_first_char); typo_one_chars, typo_two_chars (varints); typo_weight (f32);
/// typo_max_terms (varint); prefix_weight (f32); prefix_max_terms, prefix_min_chars (varints).
fn write_config(w: &mut Writer, c: &Bm25Config) {
    w.f32(c.k1);
    w.f32(c.b);
    w.u8(u8::from(c.typos) | u8::from(c.typo_known_terms) << 1 | u8::from(c.typo_first_char) << 2);
    w.varint(c.typo_one_chars);
    w.varint(c.typo_two_chars);
    w.f32(c.typo_weight);
    w.varint(c.typo_max_terms);
    w.f32(c.prefix_weight);
    w.varint(c.prefix_max_terms);
    w.varint(c.prefix_min_chars);
}

/// [`write_config`]'s fields, validated.
fn read_config(r: &mut Reader<'_>) -> Result<Bm25Config> {
    let (k1, b) = (r.f32()?, r.f32()?);
    let flags = r.u8()?;
    if flags > 7 {
        return Err(r.corrupt(format!("unknown BM25 flags {flags}")));
    }
    let c = Bm25Config {
        k1,
        b,
        typos: flags & 1 != 0,
        typo_known_terms: flags & 2 != 0,
        typo_first_char: flags & 4 != 0,
        typo_one_chars: r.varint()?,
        typo_two_chars: r.varint()?,
        typo_weight: r.f32()?,
        typo_max_terms: r.varint()?,
        prefix_weight: r.f32()?,
        prefix_max_terms: r.varint()?,
        prefix_min_chars: r.varint()?,
    };
    c.validate()?;
    Ok(c)
}

/// The one section of a shard file of `kind`, after the format's checks.
fn only(bytes: &[u8], kind: SectionKind) -> Result<&[u8]> {
    match split(bytes)?.as_slice() {
        [(k, body)] if *k == kind => Ok(body),
        _ => Err(Error::IndexCorrupt(format!("not a {} file of a keyword index", kind.name()))),
    }
}

/// Cumulative starts from counts: `[0, c0, c0+c1, …]`, checked to add up to `total`.
fn starts(counts: &mut Reader<'_>, shards: usize, total: usize, what: &str) -> Result<Vec<u32>> {
    let mut out = Vec::with_capacity(shards + 1);
    out.push(0u32);
    let mut sum = 0u64;
    for _ in 0..shards {
        let c = counts.varint()?;
        if c == 0 {
            return Err(counts.corrupt(format!("an empty {what} shard")));
        }
        sum += u64::from(c);
        out.push(u32::try_from(sum).map_err(|_| counts.corrupt("a count overflows"))?);
    }
    counts.finish()?;
    if sum != total as u64 {
        return Err(counts.corrupt(format!("{what} shards hold {sum}, the index {total}")));
    }
    Ok(out)
}

impl KeywordMeta {
    /// Read a meta file ([`Index::to_keyword_shards`]), every value checked.
    ///
    /// # Errors
    /// The format's errors ([`crate::format`]); [`Error::IndexCorrupt`] naming what does not hold.
    pub fn read(bytes: &[u8]) -> Result<KeywordMeta> {
        let mut r = Reader::new(only(bytes, SectionKind::KeywordMeta)?, "keyword-meta");
        let tag = r.u32()?;
        let config = read_config(&mut r)?;
        let n = r.vcount(1)?;
        let mut lens = r.stream("keyword-meta")?;
        let doc_len = (0..n).map(|_| lens.varint()).collect::<Result<Vec<u32>>>()?;
        lens.finish()?;
        let t = r.varint()? as usize;
        let shards = r.vcount(2)?;
        let mut firsts = r.stream("keyword-meta")?;
        let mut counts = r.stream("keyword-meta")?;
        let mut dict_first: Vec<String> = Vec::with_capacity(shards);
        for _ in 0..shards {
            let f = firsts.vstr()?;
            if f.is_empty() || dict_first.last().is_some_and(|p| *p >= f) {
                return Err(firsts.corrupt("the dictionary shards' first terms are not in order"));
            }
            dict_first.push(f);
        }
        firsts.finish()?;
        let dict_start = starts(&mut counts, shards, t, "dictionary")?;
        let post_shards = r.vcount(1)?;
        let mut c = r.stream("keyword-meta")?;
        let post_start = starts(&mut c, post_shards, t, "posting")?;
        let frag_shards = r.vcount(1)?;
        let mut c = r.stream("keyword-meta")?;
        let frag_start = starts(&mut c, frag_shards, n, "fragment")?;
        r.finish()?;
        Ok(KeywordMeta { tag, config, doc_len, dict_first, dict_start, post_start, frag_start })
    }

    /// Number of documents.
    pub fn docs(&self) -> usize {
        self.doc_len.len()
    }

    /// The dictionary shard that would hold `term` (`None` when it sorts before every term).
    pub fn dictionary_of(&self, term: &str) -> Option<usize> {
        self.dict_first.partition_point(|f| f.as_str() <= term).checked_sub(1)
    }

    /// The dictionary shards that may hold terms beginning with `prefix` (every shard for an
    /// empty prefix).
    pub fn dictionaries_of_prefix(&self, prefix: &str) -> Range<usize> {
        let start = self.dictionary_of(prefix).unwrap_or(0);
        let end = self.dict_first.partition_point(|f| f.as_str() < prefix || f.starts_with(prefix));
        start..end.max(start)
    }

    /// The dictionary shard that holds term id `t`.
    pub fn dictionary_of_id(&self, t: u32) -> Option<usize> {
        shard_of(&self.dict_start, t)
    }

    /// The posting shard that holds term id `t`.
    pub fn postings_of(&self, t: u32) -> Option<usize> {
        shard_of(&self.post_start, t)
    }

    /// The fragment shard that holds document `d`.
    pub fn fragments_of(&self, d: u32) -> Option<usize> {
        shard_of(&self.frag_start, d)
    }

    /// Number of shards of `kind`.
    pub fn shards(&self, kind: PartKind) -> usize {
        match kind {
            PartKind::Dictionary => self.dict_first.len(),
            PartKind::Postings => self.post_start.len() - 1,
            PartKind::Fragments => self.frag_start.len() - 1,
        }
    }

    /// The shard file's header: tag and number, checked against `part`.
    fn check_header(&self, r: &mut Reader<'_>, part: Part) -> Result<()> {
        let tag = r.u32()?;
        if tag != self.tag {
            return Err(r.corrupt(format!(
                "shard {} belongs to another build of the index (tag {tag:08x}, the meta file's {:08x})",
                part.name(),
                self.tag
            )));
        }
        let index = r.varint()? as usize;
        if index != part.index {
            return Err(r.corrupt(format!("shard {} is shard {index}", part.name())));
        }
        Ok(())
    }

    /// A shard's first item and count as its header says, checked against the tables.
    fn check_range(&self, r: &mut Reader<'_>, table: &[u32], part: Part) -> Result<(u32, usize)> {
        let (start, count) = (r.varint()?, r.varint()? as usize);
        match (table.get(part.index), table.get(part.index + 1)) {
            (Some(&s), Some(&e)) if s == start && (e - s) as usize == count => Ok((start, count)),
            _ => Err(r.corrupt(format!("shard {} does not hold what the meta file says", part.name()))),
        }
    }
}

/// The shard `i` with `starts[i] <= x < starts[i+1]`.
fn shard_of(starts: &[u32], x: u32) -> Option<usize> {
    let i = starts.partition_point(|&s| s <= x).checked_sub(1)?;
    (i + 1 < starts.len()).then_some(i)
}

/// Read dictionary shard `index` of `meta`'s index.
///
/// # Errors
/// As [`KeywordMeta::read`]; also a shard of another build or number, terms out of order or
/// outside the shard's range, a document frequency of 0 or above the document count.
pub fn read_dictionary(meta: &KeywordMeta, index: usize, bytes: &[u8]) -> Result<DictionaryShard> {
    let part = Part { kind: PartKind::Dictionary, index };
    let mut r = Reader::new(only(bytes, SectionKind::Dictionary)?, "dictionary");
    meta.check_header(&mut r, part)?;
    let (start, count) = meta.check_range(&mut r, &meta.dict_start, part)?;
    let (mut lens, mut bytes_s, mut dfs) = (r.stream("dictionary")?, r.stream("dictionary")?, r.stream("dictionary")?);
    r.finish()?;
    let next = meta.dict_first.get(index + 1);
    let mut terms: Vec<String> = Vec::with_capacity(count.min(lens.remaining()));
    let mut df_list = Vec::with_capacity(count.min(dfs.remaining()));
    for _ in 0..count {
        let len = lens.varint()? as usize;
        let term = std::str::from_utf8(bytes_s.take(len)?)
            .map_err(|_| bytes_s.corrupt("a term is not UTF-8"))?
            .to_string();
        let ordered = match terms.last() {
            None => term == meta.dict_first[index],
            Some(p) => *p < term,
        };
        if !ordered || next.is_some_and(|n| term >= *n) {
            return Err(bytes_s.corrupt("the terms are not in order or not in the shard's range"));
        }
        let df = dfs.varint()?;
        if df == 0 || df as usize > meta.docs() {
            return Err(dfs.corrupt(format!("a document frequency of {df} for {} passages", meta.docs())));
        }
        terms.push(term);
        df_list.push(df);
    }
    for s in [&lens, &bytes_s, &dfs] {
        s.finish()?;
    }
    Ok(DictionaryShard { start, terms, dfs: df_list })
}

/// Read posting shard `index` of `meta`'s index.
///
/// # Errors
/// As [`read_dictionary`]; also a document number out of range or not increasing within a term,
/// a term frequency of 0.
pub fn read_postings(meta: &KeywordMeta, index: usize, bytes: &[u8]) -> Result<PostingShard> {
    let part = Part { kind: PartKind::Postings, index };
    let mut r = Reader::new(only(bytes, SectionKind::PostingShard)?, "posting-shard");
    meta.check_header(&mut r, part)?;
    let (start, count) = meta.check_range(&mut r, &meta.post_start, part)?;
    let (mut dfs, mut gaps, mut tf_s) =
        (r.stream("posting-shard")?, r.stream("posting-shard")?, r.stream("posting-shard")?);
    r.finish()?;
    let n = meta.docs();
    let (mut docs, mut tfs) = (Vec::with_capacity(count.min(dfs.remaining())), Vec::new());
    for _ in 0..count {
        let df = dfs.varint()? as usize;
        if df == 0 || df > n || df > gaps.remaining() {
            return Err(dfs.corrupt(format!("a document frequency of {df} for {n} passages")));
        }
        let (mut d_list, mut f_list) = (Vec::with_capacity(df), Vec::with_capacity(df));
        read_term_postings(&mut gaps, &mut tf_s, df, n, &mut d_list, &mut f_list)?;
        docs.push(d_list);
        tfs.push(f_list);
    }
    for s in [&dfs, &gaps, &tf_s] {
        s.finish()?;
    }
    Ok(PostingShard { start, docs, tfs })
}

/// Read fragment shard `index` of `meta`'s index.
///
/// # Errors
/// As [`read_dictionary`]; also text that is not UTF-8.
pub fn read_fragments(meta: &KeywordMeta, index: usize, bytes: &[u8]) -> Result<FragmentShard> {
    let part = Part { kind: PartKind::Fragments, index };
    let mut r = Reader::new(only(bytes, SectionKind::Fragments)?, "fragments");
    meta.check_header(&mut r, part)?;
    let (start, count) = meta.check_range(&mut r, &meta.frag_start, part)?;
    let mut lens = r.stream("fragments")?;
    let mut fields = [r.stream("fragments")?, r.stream("fragments")?, r.stream("fragments")?];
    r.finish()?;
    let mut passages = Vec::with_capacity(count.min(lens.remaining() / 3 + 1));
    for _ in 0..count {
        let mut three: [String; 3] = Default::default();
        for (slot, stream) in three.iter_mut().zip(fields.iter_mut()) {
            let len = lens.varint()? as usize;
            *slot = std::str::from_utf8(stream.take(len)?)
                .map_err(|_| stream.corrupt("a passage's text is not UTF-8"))?
                .to_string();
        }
        let [id, title, text] = three;
        passages.push((id, title, text));
    }
    lens.finish()?;
    for s in &fields {
        s.finish()?;
    }
    Ok(FragmentShard { start, passages })
}
