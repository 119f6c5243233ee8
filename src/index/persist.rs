//! [`Index::to_bytes`] and [`Index::from_bytes`]: the index file ([`super::format`]).

use std::rc::Rc;

use super::knowledge::now_ms;
use super::Bm25;
use super::{validate_stages, EmbedderSlot, Index, IndexConfig, KnowledgeGraph};
use crate::corpus::{Corpus, Passage};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::{Error, Result};
use crate::format::{assemble, fingerprint, json_of, split, Reader, SectionKind, Writer};
use crate::graph::Graph;
use crate::index::GraphBuildReport;
use crate::text::{Analyzer, Pipeline};

fn slot_byte(slot: EmbedderSlot) -> u8 {
    match slot {
        EmbedderSlot::Static => 0,
        EmbedderSlot::Minilm => 1,
    }
}

fn slot_index(slot: EmbedderSlot) -> usize {
    slot_byte(slot) as usize
}

/// CRC32 of a vector matrix's little-endian `f32` bytes.
fn vectors_crc(m: &VectorMatrix) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for x in m.as_slice() {
        h.update(&x.to_le_bytes());
    }
    h.finalize()
}

fn slot_of(b: u8) -> Option<EmbedderSlot> {
    match b {
        0 => Some(EmbedderSlot::Static),
        1 => Some(EmbedderSlot::Minilm),
        _ => None,
    }
}

/// The corpus section ([`SectionKind::Corpus`]): the passage count (varint), then four streams
/// ([`Writer::stream`]): every id's byte length, then every title's, then every text's
/// (varints); the ids back to back; the titles; the texts (UTF-8). Columns rather than rows, so
/// gzip meets text next to text.
fn write_corpus(passages: &[Passage]) -> Result<Vec<u8>> {
    write_columns(passages, &[|p| &p.id, |p| &p.title, |p| &p.text])
}

/// The columns `fields` of `passages` in [`write_corpus`]'s layout: the count, one stream of
/// every column's byte lengths (column after column), then one stream per column.
fn write_columns(passages: &[Passage], fields: &[fn(&Passage) -> &str]) -> Result<Vec<u8>> {
    let mut w = Writer::default();
    w.vlen(passages.len())?;
    let mut lens = Writer::default();
    for f in fields {
        for p in passages {
            lens.vlen(f(p).len())?;
        }
    }
    w.stream(lens)?;
    for f in fields {
        let mut col = Writer::default();
        for p in passages {
            col.buf.extend_from_slice(f(p).as_bytes());
        }
        w.stream(col)?;
    }
    Ok(w.buf)
}

/// Read `k` columns written by [`write_columns`] from `r` (section `name`): `k` lists of `n`
/// strings.
fn read_columns(r: &mut Reader<'_>, k: usize, name: &'static str) -> Result<Vec<Vec<String>>> {
    let n = r.vcount(k)?;
    let mut stream = r.stream(name)?;
    let lens = (0..k * n).map(|_| stream.varint().map(|l| l as usize)).collect::<Result<Vec<usize>>>()?;
    stream.finish()?;
    let mut cols: Vec<Vec<String>> = Vec::with_capacity(k);
    for c in 0..k {
        let mut col = r.stream(name)?;
        let mut out = Vec::with_capacity(n);
        for &len in &lens[c * n..(c + 1) * n] {
            let b = col.take(len)?;
            out.push(String::from_utf8(b.to_vec()).map_err(|_| col.corrupt("a string is not UTF-8"))?);
        }
        col.finish()?;
        cols.push(out);
    }
    Ok(cols)
}

/// Read [`write_corpus`]'s section.
fn read_corpus(body: &[u8]) -> Result<Vec<Passage>> {
    let mut r = Reader::new(body, "corpus");
    let mut cols = read_columns(&mut r, 3, "corpus")?;
    r.finish()?;
    let texts = cols.pop().unwrap_or_default();
    let titles = cols.pop().unwrap_or_default();
    let ids = cols.pop().unwrap_or_default();
    Ok(ids
        .into_iter()
        .zip(titles)
        .zip(texts)
        .map(|((id, title), text)| Passage { id, title, text })
        .collect())
}

/// The passages section ([`SectionKind::Passages`]): ids and titles in [`write_corpus`]'s
/// layout, then the CRC32 of `texts`, the [`SectionKind::Texts`] body that completes them.
pub(super) fn write_passage_heads(passages: &[Passage], texts: &[u8]) -> Result<Vec<u8>> {
    let mut body = write_columns(passages, &[|p| &p.id, |p| &p.title])?;
    body.extend_from_slice(&crc32fast::hash(texts).to_le_bytes());
    Ok(body)
}

/// The texts section ([`SectionKind::Texts`]): the texts in [`write_corpus`]'s layout.
pub(super) fn write_texts(passages: &[Passage]) -> Result<Vec<u8>> {
    write_columns(passages, &[|p| &p.text])
}

/// Read [`write_passage_heads`]'s section: the passages with empty texts, and the CRC32 their
/// texts section must have.
fn read_passage_heads(body: &[u8]) -> Result<(Vec<Passage>, u32)> {
    let mut r = Reader::new(body, "passages");
    let mut cols = read_columns(&mut r, 2, "passages")?;
    let crc = r.u32()?;
    r.finish()?;
    let titles = cols.pop().unwrap_or_default();
    let ids = cols.pop().unwrap_or_default();
    let passages = ids.into_iter().zip(titles).map(|(id, title)| Passage { id, title, text: String::new() });
    Ok((passages.collect(), crc))
}

/// Read [`write_texts`]'s section.
pub(super) fn read_texts(body: &[u8]) -> Result<Vec<String>> {
    let mut r = Reader::new(body, "texts");
    let mut cols = read_columns(&mut r, 1, "texts")?;
    r.finish()?;
    Ok(cols.pop().unwrap_or_default())
}

/// The bodies of the sections of `kind`, in file order.
fn find_sections<'a>(
    sections: &'a [(SectionKind, &'a [u8])],
    kind: SectionKind,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    sections.iter().filter(move |(k, _)| *k == kind).map(|(_, b)| *b)
}

/// The body of the one section of `kind`.
///
/// # Errors
/// [`Error::IndexCorrupt`] when there is none or more than one.
pub(super) fn only_section<'a>(
    sections: &'a [(SectionKind, &'a [u8])],
    kind: SectionKind,
) -> Result<&'a [u8]> {
    let mut it = find_sections(sections, kind);
    match (it.next(), it.next()) {
        (Some(b), None) => Ok(b),
        (None, _) => Err(Error::IndexCorrupt(format!("the {} section is missing", kind.name()))),
        (Some(_), Some(_)) => Err(Error::IndexCorrupt(format!("two {} sections", kind.name()))),
    }
}

/// What [`Index::from_bytes`] left out.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LoadNotes {
    /// Embedder slots whose passage vectors the file holds but for which no embedder was given
    /// (their methods are not available on the loaded index).
    pub skipped_slots: Vec<EmbedderSlot>,
    /// Milliseconds spent in each step of the load, in order: `split` (table and checksums),
    /// `corpus`, `bm25` (rebuilt from the passages) or `postings` (read), `dense` (passage vectors: the static
    /// embedder's re-embedded and checked), `text-pipeline`, `graph` (read, entity and fact
    /// vectors re-embedded, synonym cosines, CSR) and `prepare-graph-search`
    /// ([`Index::prepare_graph_search`]); only the steps the bytes hold. In wasm the clock is
    /// JavaScript's `Date.now()` (whole milliseconds).
    pub phases_ms: Vec<(&'static str, f64)>,
}

impl LoadNotes {
    /// Record that the step `name` took the time since `*since` ([`now_ms`]), and restart.
    fn lap(&mut self, name: &'static str, since: &mut f64) {
        let now = now_ms();
        self.phases_ms.push((name, now - *since));
        *since = now;
    }
}

impl Index {
    /// The index as an index file ([`super::format`], version [`super::format::FORMAT_VERSION`]):
    /// configuration, corpus, every attached embedder's passage vectors and, once built, the
    /// knowledge graph. Deterministic: the same corpus and configuration (and embedders) give
    /// the same bytes. About (text bytes + 4 × dim bytes per passage per embedder + the graph's
    /// tables) long.
    ///
    /// # Errors
    /// [`Error::Config`] when the knowledge graph was built with an embedder that is not one of
    /// the index's slots (it could not be re-embedded on load), or a count exceeds `u32::MAX`;
    /// an embedder's error while fingerprinting it.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        assemble(&self.sections()?)
    }

    /// The file's sections in file order ([`Index::to_bytes`]): config, corpus, then the parts
    /// that need an embedder (dense, graph, graph report, CAGE embeddings).
    ///
    /// # Errors
    /// As [`Index::to_bytes`].
    pub(super) fn sections(&self) -> Result<Vec<(SectionKind, Vec<u8>)>> {
        self.require_texts("saving the index")?;
        let mut sections = vec![
            (SectionKind::Config, self.config_section()?),
            (SectionKind::Corpus, write_corpus(self.corpus.passages())?),
        ];
        sections.extend(self.embedder_sections()?);
        Ok(sections)
    }

    /// The config section's body: the [`IndexConfig`] as JSON.
    ///
    /// # Errors
    /// [`Error::Config`] when it does not serialise (never in practice).
    pub(super) fn config_section(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.config).map_err(|e| Error::Config(e.to_string()))
    }

    /// The sections that need an embedder, in file order: dense, graph, graph report, CAGE
    /// embeddings (the extras of a static site's index).
    ///
    /// # Errors
    /// As [`Index::to_bytes`].
    pub(super) fn embedder_sections(&self) -> Result<Vec<(SectionKind, Vec<u8>)>> {
        let mut sections = Vec::new();
        for slot in EmbedderSlot::ALL {
            let Some(field) = self.dense(slot) else { continue };
            let mut w = Writer::default();
            w.u8(slot_byte(slot));
            let m = field.vectors();
            // The static embedder re-embeds 6k passages in about a second in wasm, which is
            // cheaper than downloading their f32 vectors (6.3 MB, 5.8 MB gzipped): only a CRC32
            // of the vectors is stored, and the loader checks the recomputed ones against it.
            let recompute = slot == EmbedderSlot::Static;
            w.u8(u8::from(recompute));
            w.len(if m.is_empty() { field.embedder().dim() } else { m.dim() })?;
            w.len(m.len())?;
            w.u32(fingerprint(field.embedder().as_ref())?);
            if recompute {
                w.u32(vectors_crc(m));
            } else {
                for &x in m.as_slice() {
                    w.f32(x);
                }
            }
            sections.push((SectionKind::Dense, w.buf));
        }
        if let Some(kg) = &self.graph {
            let slot = EmbedderSlot::ALL
                .into_iter()
                .find(|&s| self.dense(s).is_some_and(|d| Rc::ptr_eq(d.embedder(), &kg.embedder)))
                .ok_or_else(|| {
                    Error::Config(
                        "the knowledge graph was built with an embedder the index does not hold: it cannot be saved".into(),
                    )
                })?;
            let mut w = Writer::default();
            w.u8(slot_byte(slot));
            kg.graph.write_to(&mut w)?;
            sections.push((SectionKind::Graph, w.buf));
            let mut report = kg.report.clone();
            (report.extract_ms, report.add_ms, report.embed_ms, report.synonyms_ms, report.csr_ms) =
                (None, None, None, None, None);
            let json = serde_json::to_vec(&report).map_err(|e| Error::Config(e.to_string()))?;
            sections.push((SectionKind::GraphReport, json));
        }
        if let Some(z) = &self.cage_z {
            let (key, dim, present, scales, codes) = z.parts();
            let mut w = Writer::default();
            w.u32(key.model);
            w.f32(key.beta);
            w.u8(u8::from(key.merged));
            w.len(dim)?;
            w.len(present.len())?;
            for &p in present {
                w.u8(u8::from(p));
            }
            for &x in scales {
                w.f32(x);
            }
            w.buf.extend(codes.iter().map(|&c| c as u8));
            sections.push((SectionKind::CageZ, w.buf));
        }
        Ok(sections)
    }

    /// Load an index file written by [`Index::to_bytes`]. `embedders` gives the embedder of each
    /// slot whose vectors should be usable (queries are embedded with it); each must be the one
    /// that made the stored vectors (checked by fingerprint). Slots stored without an embedder
    /// given are skipped and listed in the [`LoadNotes`]. BM25 is rebuilt from the corpus, and the
    /// graph's entity and fact vectors are re-embedded with its slot's embedder and its CSR
    /// assembled (`progress(done, total)` counts those texts). The loaded index ranks exactly as
    /// the saved one for every method it supports.
    ///
    /// The keyword part of a static site's index ([`Index::to_split_bytes`]: ids and titles
    /// with BM25's postings, no texts) opens too, without rebuilding anything: BM25 answers at
    /// once (hits with empty texts) and everything that needs the texts fails with
    /// [`Error::TextsNotLoaded`] until [`Index::attach_texts`] reads them.
    ///
    /// # Errors
    /// [`Error::NotAnIndex`], [`Error::IndexVersion`], [`Error::IndexTruncated`],
    /// [`Error::IndexCorrupt`] (see [`super::format`]); [`Error::Model`] when an embedder's
    /// fingerprint or dimension differs from the stored vectors'; [`Error::MissingEmbedder`] when
    /// the file holds a knowledge graph and its embedder is not given; the embedder's errors.
    pub fn from_bytes(
        bytes: &[u8],
        embedders: &[(EmbedderSlot, Rc<dyn Embedder>)],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Index, LoadNotes)> {
        let mut notes = LoadNotes::default();
        let mut clock = now_ms();
        let sections = split(bytes)?;
        notes.lap("split", &mut clock);
        let one = |kind: SectionKind| only_section(&sections, kind);
        let config: IndexConfig = json_of(one(SectionKind::Config)?)
            .map_err(|e| Error::IndexCorrupt(format!("section config: {e}")))?;
        // a whole file holds the corpus; a static site's keyword part the ids and titles only,
        // with BM25's postings (the texts follow in their own file: Index::attach_texts)
        let has = |kind: SectionKind| find_sections(&sections, kind).next().is_some();
        let (passages, pending) = if has(SectionKind::Passages) {
            if has(SectionKind::Corpus) {
                return Err(Error::IndexCorrupt(
                    "the file holds both a corpus and a passages section".into(),
                ));
            }
            let (passages, crc) = read_passage_heads(one(SectionKind::Passages)?)?;
            (passages, Some(crc))
        } else {
            (read_corpus(one(SectionKind::Corpus)?)?, None)
        };
        let mut corpus = Corpus::new();
        corpus.extend(passages).map_err(|e| Error::IndexCorrupt(format!("section corpus: {e}")))?;
        notes.lap("corpus", &mut clock);
        let mut index = if has(SectionKind::Postings) {
            let config_err = |e: Error| match e {
                Error::Config(m) => Error::IndexCorrupt(format!("section config: {m}")),
                e => e,
            };
            validate_stages(&config).map_err(config_err)?;
            let bm25 = Bm25::read_from(one(SectionKind::Postings)?, config.bm25, corpus.len())
                .map_err(config_err)?;
            let index = Index::with_bm25(&mut corpus, &config, Analyzer::english(), bm25);
            notes.lap("postings", &mut clock);
            index
        } else if pending.is_some() {
            return Err(Error::IndexCorrupt(
                "the passages section comes without its postings section".into(),
            ));
        } else {
            let index = Index::build_taking(&mut corpus, &config, &mut |_, _| {})
                .map_err(|e| Error::IndexCorrupt(format!("section config: {e}")))?;
            notes.lap("bm25", &mut clock);
            index
        };
        if let Some(crc) = pending {
            if let Some((kind, _)) = sections.iter().find(|(k, _)| {
                !matches!(k, SectionKind::Config | SectionKind::Passages | SectionKind::Postings)
            }) {
                return Err(Error::IndexCorrupt(format!(
                    "a keyword part (passages without texts) cannot hold a {} section",
                    kind.name()
                )));
            }
            index.texts_pending = Some(crc);
            return Ok((index, notes));
        }
        index.attach_sections(&sections, embedders, progress, &mut notes)?;
        Ok((index, notes))
    }

    /// Read the sections that need an embedder (dense, graph, graph report, CAGE embeddings) from
    /// `sections` into this index, whose corpus they were written over ([`Index::from_bytes`]
    /// and [`Index::attach_extras`]). Slots without an embedder in `embedders` are listed in
    /// `notes.skipped_slots`.
    ///
    /// # Errors
    /// As [`Index::from_bytes`]; the index may then hold some of the parts (callers discard it
    /// or roll back).
    pub(super) fn attach_sections(
        &mut self,
        sections: &[(SectionKind, &[u8])],
        embedders: &[(EmbedderSlot, Rc<dyn Embedder>)],
        progress: &mut dyn FnMut(usize, usize),
        notes: &mut LoadNotes,
    ) -> Result<()> {
        let index = self;
        let find = |kind: SectionKind| find_sections(sections, kind);
        let one = |kind: SectionKind| only_section(sections, kind);
        let given = |slot: EmbedderSlot| embedders.iter().find(|(s, _)| *s == slot).map(|(_, e)| e.clone());
        let check = |slot: EmbedderSlot, e: &Rc<dyn Embedder>, dim: usize, stored: u32| -> Result<()> {
            let got = fingerprint(e.as_ref())?;
            if e.dim() != dim || got != stored {
                return Err(Error::Model {
                    what: format!("{} embedder", slot.name()),
                    message: format!(
                        "not the one that made the index's vectors (dimension {} vs {dim}, fingerprint {got:08x} vs {stored:08x})",
                        e.dim()
                    ),
                });
            }
            Ok(())
        };
        let mut clock = now_ms();
        for body in find(SectionKind::Dense) {
            let mut r = Reader::new(body, "dense");
            let slot = r.u8()?;
            let slot = slot_of(slot).ok_or_else(|| r.corrupt(format!("unknown embedder slot {slot}")))?;
            let recompute = match r.u8()? {
                0 => false,
                1 => true,
                m => return Err(r.corrupt(format!("unknown vector storage mode {m}"))),
            };
            let dim = r.u32()? as usize;
            let rows = r.u32()? as usize;
            let stored = r.u32()?;
            if rows != index.corpus.len() || dim == 0 {
                return Err(
                    r.corrupt(format!("{rows} rows of dimension {dim} for {} passages", index.corpus.len()))
                );
            }
            let payload =
                if recompute { Some(4) } else { rows.checked_mul(dim).and_then(|c| c.checked_mul(4)) };
            if payload != Some(body.len() - 14) {
                return Err(r.corrupt("the vectors' length does not match rows × dimension"));
            }
            let Some(embedder) = given(slot) else {
                notes.skipped_slots.push(slot);
                continue;
            };
            check(slot, &embedder, dim, stored)?;
            if recompute {
                let want = r.u32()?;
                r.finish()?;
                // already embedded with this very embedder (a page that set it on the index
                // opened from a two-part file's base): only the check below remains
                let done = index.dense(slot).is_some_and(|d| Rc::ptr_eq(d.embedder(), &embedder));
                if !done {
                    index.attach_embedder(slot, embedder, progress)?;
                }
                let got = index.dense(slot).map_or(0, |d| vectors_crc(d.vectors()));
                if got != want {
                    if !done {
                        index.dense[slot_index(slot)] = None;
                    }
                    return Err(Error::Model {
                        what: format!("{} embedder", slot.name()),
                        message: format!(
                            "its vectors of the passages differ from the saved ones (CRC32 {got:08x} vs {want:08x})"
                        ),
                    });
                }
                continue;
            }
            let data = (0..rows * dim).map(|_| r.f32()).collect::<Result<Vec<f32>>>()?;
            r.finish()?;
            let m = if rows == 0 { VectorMatrix::new(dim) } else { VectorMatrix::from_rows(dim, data)? };
            index.attach_vectors(slot, embedder, m)?;
        }
        if find(SectionKind::Dense).next().is_some() {
            notes.lap("dense", &mut clock);
        }
        let mut graphs = find(SectionKind::Graph);
        if let Some(body) = graphs.next() {
            if graphs.next().is_some() {
                return Err(Error::IndexCorrupt("two graph sections".into()));
            }
            let mut r = Reader::new(body, "graph");
            let slot = r.u8()?;
            let slot = slot_of(slot).ok_or_else(|| r.corrupt(format!("unknown embedder slot {slot}")))?;
            let embedder = index.dense(slot).map(|d| d.embedder().clone()).ok_or_else(|| {
                Error::MissingEmbedder { method: "hipporag".into(), embedder: slot.name().into() }
            })?;
            // the graph's query anchoring runs the text pipeline: fail before the graph is read
            // when its resources are not loaded (the page fetches them and loads again)
            let pipeline = Pipeline::english()?;
            notes.lap("text-pipeline", &mut clock);
            let graph = Graph::read_from(&mut r, index.corpus.passages(), embedder.as_ref(), progress)?;
            notes.lap("graph", &mut clock);
            let mut report: GraphBuildReport = json_of(one(SectionKind::GraphReport)?)
                .map_err(|e| Error::IndexCorrupt(format!("section graph-report: {e}")))?;
            report.counts = graph.counts();
            index.graph = Some(KnowledgeGraph::new(graph, embedder, pipeline, report));
            index.prepare_graph_search();
            notes.lap("prepare-graph-search", &mut clock);
        }
        let mut cage = find(SectionKind::CageZ);
        if let Some(body) = cage.next() {
            if cage.next().is_some() {
                return Err(Error::IndexCorrupt("two cage-z sections".into()));
            }
            let mut r = Reader::new(body, "cage-z");
            let model = r.u32()?;
            let beta = r.f32()?;
            let merged = match r.u8()? {
                0 => false,
                1 => true,
                m => return Err(r.corrupt(format!("merged flag {m} is not 0 or 1"))),
            };
            let dim = r.u32()? as usize;
            let rows = r.u32()? as usize;
            if rows != index.corpus.len() || dim == 0 || !(beta.is_finite() && beta > 0.0) {
                return Err(r.corrupt(format!(
                    "{rows} graph embeddings of dimension {dim} (beta {beta}) for {} passages",
                    index.corpus.len()
                )));
            }
            let payload = rows.checked_mul(dim).and_then(|c| c.checked_add(rows * 5));
            if payload != Some(body.len() - 17) {
                return Err(r.corrupt("the graph embeddings' length does not match rows × (dimension + 5)"));
            }
            let present = (0..rows)
                .map(|_| match r.u8()? {
                    0 => Ok(false),
                    1 => Ok(true),
                    m => Err(r.corrupt(format!("presence byte {m} is not 0 or 1"))),
                })
                .collect::<Result<Vec<bool>>>()?;
            let scales = (0..rows).map(|_| r.f32()).collect::<Result<Vec<f32>>>()?;
            let codes: Vec<i8> = r.take(rows * dim)?.iter().map(|&b| b as i8).collect();
            r.finish()?;
            let key = crate::cage::EncoderKey { model, beta, merged };
            index.cage_z = Some(
                crate::cage::GraphEmbeddings::from_parts(key, dim, present, scales, codes)
                    .map_err(|e| Error::IndexCorrupt(format!("section cage-z: {e}")))?,
            );
        }
        Ok(())
    }
}
