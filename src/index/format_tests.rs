//! The index file ([`super::format`]): round trip with equal rankings for every method,
//! determinism, and rejection of truncated, bit-flipped, future-version and foreign files, each
//! with its own error. Over the 100 real HotpotQA dev passages of `tests/fixtures/hotpot-sample`
//! with the real extractor's graph.

use std::rc::Rc;

use super::format::{FORMAT_VERSION, MAGIC};
use super::*;
use crate::catrag::ExplainConfig;
use crate::embed::StaticEmbedder;

fn sample() -> (Index, Rc<dyn Embedder>, Vec<String>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
    let text = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
    let mut corpus = Corpus::new();
    corpus.extend(crate::corpus::parse_jsonl("corpus.jsonl", &text).unwrap()).unwrap();
    let questions: Vec<String> = std::fs::read_to_string(format!("{dir}/questions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["question"].as_str().unwrap().to_string()
        })
        .collect();
    let mut index = Index::build(corpus, &IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e.clone(), &mut |_, _, _| {}).unwrap();
    (index, e, questions)
}

fn load(bytes: &[u8], e: &Rc<dyn Embedder>) -> Result<Index> {
    Index::from_bytes(bytes, &[(EmbedderSlot::Static, e.clone())], &mut |_, _| {}).map(|(i, _)| i)
}

#[test]
fn round_trip_ranks_identically_for_every_method() {
    let (index, e, questions) = sample();
    assert!(questions.len() >= 10);
    let bytes = index.to_bytes().unwrap();
    assert_eq!(&bytes[..8], &MAGIC);
    let loaded = load(&bytes, &e).unwrap();
    assert_eq!(loaded.corpus().passages(), index.corpus().passages());
    assert_eq!(loaded.config(), index.config());
    assert_eq!(loaded.stats(), index.stats());
    assert_eq!(loaded.graph().unwrap().counts(), index.graph().unwrap().counts());
    assert_eq!(loaded.graph().unwrap().csr().arrays(), index.graph().unwrap().csr().arrays());
    assert_eq!(loaded.graph().unwrap().entity_vectors(), index.graph().unwrap().entity_vectors());
    assert_eq!(loaded.graph().unwrap().fact_vectors(), index.graph().unwrap().fact_vectors());
    assert_eq!(loaded.graph().unwrap().token_bags(), index.graph().unwrap().token_bags());
    assert_eq!(loaded.knowledge_graph().unwrap().hubs(), index.knowledge_graph().unwrap().hubs());
    // Every table of the graph, derived ones included, as built.
    loaded.graph().unwrap().same_tables(index.graph().unwrap()).unwrap();
    let mut compared = 0;
    for m in Method::all().filter(|m| m.is_built_in()) {
        if !index.supports(m) {
            // MiniLM vectors and the CAGE model are attached, not built, in this sample.
            assert!(m == Method::DenseMinilm || m.cage_first_stage().is_some(), "{m}");
            continue;
        }
        for q in &questions {
            let a = index.searcher().search(q, 10, m).unwrap();
            let b = loaded.searcher().search(q, 10, m).unwrap();
            assert_eq!(a, b, "{m} on {q:?}");
            assert!(!a.is_empty());
            compared += 1;
        }
    }
    assert_eq!(compared, 5 * questions.len());
    // Saving the loaded index gives the same bytes again.
    assert_eq!(loaded.to_bytes().unwrap(), bytes);
}

#[test]
fn load_notes_time_each_step_natively() {
    let (index, e, _) = sample();
    let (_, notes) =
        Index::from_bytes(&index.to_bytes().unwrap(), &[(EmbedderSlot::Static, e.clone())], &mut |_, _| {})
            .unwrap();
    let names: Vec<&str> = notes.phases_ms.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["split", "corpus", "bm25", "dense", "text-pipeline", "graph", "prepare-graph-search"]);
    assert!(notes.phases_ms.iter().all(|(_, ms)| ms.is_finite() && *ms >= 0.0));
    // a site's parts: the base's steps (BM25 read, not rebuilt), then the extras'
    let split = index.to_split_bytes().unwrap();
    let (base, extras) = (split.base, split.extras);
    let (mut opened, notes) =
        Index::from_bytes(&base, &[(EmbedderSlot::Static, e.clone())], &mut |_, _| {}).unwrap();
    assert_eq!(notes.phases_ms.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["split", "corpus", "postings"]);
    opened.attach_texts(&split.texts).unwrap();
    let notes = opened.attach_extras(&extras.unwrap(), &[(EmbedderSlot::Static, e)], &mut |_, _| {}).unwrap();
    let names: Vec<&str> = notes.phases_ms.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["dense", "text-pipeline", "graph", "prepare-graph-search"]);
}

#[test]
fn same_corpus_same_bytes() {
    let (a, _, _) = sample();
    let (b, _, _) = sample();
    assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
}

#[test]
fn loaded_graph_extends_like_the_original() {
    // The graph's synonym lists and maps are what an incremental add needs: extending the loaded
    // graph gives the same graph as extending the original.
    let (index, e, _) = sample();
    let loaded = load(&index.to_bytes().unwrap(), &e).unwrap();
    let extra = Passage {
        id: "new".into(),
        title: "Playboy Club".into(),
        text: "The Playboy Club is housed in the Palms Casino Resort in Las Vegas.".into(),
    };
    let grow = |mut i: Index| {
        let g = i.take_graph().unwrap();
        let mut c = i.into_corpus();
        c.add(extra.clone()).unwrap();
        let mut i = Index::build(c, &IndexConfig::default()).unwrap();
        i.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        i.extend_graph(g, &mut |_, _, _| {}).unwrap();
        i
    };
    let (a, b) = (grow(index), grow(loaded));
    assert_eq!(a.graph().unwrap().counts(), b.graph().unwrap().counts());
    assert_eq!(a.graph().unwrap().csr().arrays(), b.graph().unwrap().csr().arrays());
    assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
}

#[test]
fn bm25_only_index_round_trips_without_embedders() {
    let (index, _, questions) = sample();
    let mut c = Corpus::new();
    c.extend(index.corpus().passages().to_vec()).unwrap();
    let plain = Index::build(c, &IndexConfig::default()).unwrap();
    let (loaded, notes) = Index::from_bytes(&plain.to_bytes().unwrap(), &[], &mut |_, _| {}).unwrap();
    assert!(notes.skipped_slots.is_empty());
    for q in &questions {
        assert_eq!(plain.searcher().search(q, 5, Method::Bm25).unwrap(), loaded.searcher().search(q, 5, Method::Bm25).unwrap());
    }
    // Without the embedder, a file with vectors and a graph: the vectors are skipped and the graph
    // is refused with the missing embedder named.
    let err = Index::from_bytes(&index.to_bytes().unwrap(), &[], &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, Error::MissingEmbedder { .. }), "{err}");
}

#[test]
fn truncated_file_is_rejected_as_truncated() {
    let (index, e, _) = sample();
    let bytes = index.to_bytes().unwrap();
    let err = load(&bytes[..bytes.len() - 1], &e).unwrap_err();
    assert!(matches!(err, Error::IndexTruncated { .. }), "{err}");
    assert!(err.to_string().starts_with("the index file is truncated: section "), "{err}");
    // Every prefix is rejected, none panics; prefixes past the magic are "truncated".
    for len in (0..bytes.len()).step_by(97).chain([1, 7, 8, 15, 16, 40]) {
        match load(&bytes[..len], &e) {
            Err(Error::IndexTruncated { have, .. }) => assert_eq!(have, len),
            Err(Error::NotAnIndex) => assert_eq!(len, 0, "an empty file is not an index"),
            other => panic!("prefix of {len} bytes: {other:?}"),
        }
    }
}

#[test]
fn bit_flip_is_rejected_as_corrupt() {
    let (index, e, _) = sample();
    let bytes = index.to_bytes().unwrap();
    // One flipped bit in every 101st byte past the version field: the header's or a section's
    // checksum catches it.
    for at in (12..bytes.len()).step_by(101).chain([bytes.len() - 1]) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let err = load(&bad, &e).unwrap_err();
        assert!(
            matches!(err, Error::IndexCorrupt(_)) || matches!(err, Error::IndexTruncated { .. }),
            "byte {at}: {err}"
        );
    }
    let mut bad = bytes.clone();
    let last = bad.len() - 10;
    bad[last] ^= 1;
    let err = load(&bad, &e).unwrap_err();
    assert!(matches!(err, Error::IndexCorrupt(_)), "{err}");
    assert!(err.to_string().contains("checksum does not match"), "{err}");
}

#[test]
fn future_version_is_rejected_with_its_version() {
    let (index, e, _) = sample();
    let mut bytes = index.to_bytes().unwrap();
    bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = load(&bytes, &e).unwrap_err();
    assert!(matches!(err, Error::IndexVersion { found: 6, supported: 5 }), "{err}");
    assert_eq!(
        err.to_string(),
        "the index file has format version 6; this Cairn reads version 5 and older: update Cairn or rebuild the index"
    );
}

/// Files of versions 1 and 2 (fixed-width lists, written before the varint layout) are refused
/// before any section is parsed, with a message that says to rebuild them.
#[test]
fn older_versions_are_refused_with_a_request_to_rebuild() {
    let (index, e, _) = sample();
    let bytes = index.to_bytes().unwrap();
    assert_eq!(&bytes[8..12], &3u32.to_le_bytes());
    let n = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    for old in [1u32, 2] {
        let mut b = bytes.clone();
        b[8..12].copy_from_slice(&old.to_le_bytes());
        // A genuine old file has a valid header checksum: recompute it.
        let crc = crc32fast::hash(&b[..16 + 24 * n]);
        b[16 + 24 * n..16 + 24 * n + 4].copy_from_slice(&crc.to_le_bytes());
        let err = load(&b, &e).unwrap_err();
        assert!(matches!(err, Error::IndexOutdated { found, oldest: 3 } if found == old), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "the index file has format version {old}, written by an older Cairn; this Cairn reads version 3 and newer: rebuild the index (cairn index …) with this version"
            )
        );
    }
}

/// CAGE graph embeddings are a `cage-z` section that loads back row for row and ranks the CAGE
/// methods identically with no encoder attached (no R-GCN at query time).
#[test]
fn cage_embeddings_round_trip() {
    let (mut index, e, questions) = sample();
    let v1 = index.to_bytes().unwrap();
    assert_eq!(&v1[8..12], &3u32.to_le_bytes());
    let n = index.corpus().len();
    let dim = 8;
    // Deterministic, varied rows: z[i][j] = sin(i·7 + j) · (1 + i mod 3).
    let z: Vec<f32> =
        (0..n * dim).map(|k| ((k / dim * 7 + k % dim) as f32).sin() * (1 + (k / dim) % 3) as f32).collect();
    let key = crate::cage::EncoderKey { model: 0xC0FFEE, beta: 1.5, merged: false };
    // Half first (memoised rows survive), then the rest.
    let first: Vec<usize> = (0..n / 2).collect();
    index.store_cage_z(key, &first, &z[..n / 2 * dim], dim).unwrap();
    assert!(!index.supports(Method::Cage), "half the passages have no Z yet");
    assert_eq!(index.cage_missing(key), (n / 2..n).collect::<Vec<_>>());
    let rest: Vec<usize> = (n / 2..n).collect();
    index.store_cage_z(key, &rest, &z[n / 2 * dim..], dim).unwrap();
    assert!(
        index.supports(Method::Cage)
            && index.supports(Method::Bm25Cage)
            && index.supports(Method::CatragCage)
    );
    let bytes = index.to_bytes().unwrap();
    assert_eq!(&bytes[8..12], &3u32.to_le_bytes());
    assert_eq!(bytes.len(), v1.len() + 24 + 17 + n * (dim + 5));
    let loaded = load(&bytes, &e).unwrap();
    assert_eq!(loaded.cage_embeddings(), index.cage_embeddings());
    // int8 storage: each stored row is within half a quantisation step of z.
    let stored = loaded.cage_embeddings().unwrap();
    for i in 0..n {
        let row = stored.row_f32(i).unwrap();
        let (_, scale) = stored.row(i).unwrap();
        for j in 0..dim {
            assert!((row[j] - z[i * dim + j]).abs() <= scale / 2.0 + 1e-6);
        }
    }
    for m in [Method::Cage, Method::Bm25Cage, Method::CatragCage] {
        for q in questions.iter().take(5) {
            assert_eq!(index.searcher().search(q, 10, m).unwrap(), loaded.searcher().search(q, 10, m).unwrap(), "{m} on {q:?}");
        }
    }
}

#[test]
fn foreign_file_and_wrong_embedder_are_rejected() {
    let err = Index::from_bytes(b"{\"not\": \"an index\"}", &[], &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, Error::NotAnIndex), "{err}");
    let (index, _, _) = sample();
    // Another embedder of the same dimension: the fingerprint differs.
    let other: Rc<dyn Embedder> = Rc::new(crate::embed::testing::MapEmbedder::new(256, &[]));
    let err = Index::from_bytes(&index.to_bytes().unwrap(), &[(EmbedderSlot::Static, other)], &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(err, Error::Model { .. }), "{err}");
    assert!(err.to_string().contains("not the one that made the index's vectors"), "{err}");
}

#[test]
fn corrupt_body_with_valid_checksums_is_an_error_not_a_panic() {
    // A forged graph section (checksums recomputed) that claims one entity fewer than its
    // streams hold.
    let (index, e, _) = sample();
    let bytes = index.to_bytes().unwrap();
    let sections = super::format::split(&bytes).unwrap();
    let mut owned: Vec<(super::format::SectionKind, Vec<u8>)> =
        sections.iter().map(|(k, b)| (*k, b.to_vec())).collect();
    let g = owned.iter_mut().find(|(k, _)| *k == super::format::SectionKind::Graph).unwrap();
    // Byte 0 is the slot, then the configuration (u32 length + JSON), then the entity count, a
    // varint of two bytes for this sample's 1,000 or so entities.
    let json_len = u32::from_le_bytes([g.1[1], g.1[2], g.1[3], g.1[4]]) as usize;
    let at = 5 + json_len;
    let ne = u32::from(g.1[at] & 0x7F) | u32::from(g.1[at + 1]) << 7;
    assert!(g.1[at] & 0x80 != 0 && g.1[at + 1] & 0x80 == 0 && ne > 128, "{ne}");
    let fewer = ne - 1;
    g.1[at] = (fewer & 0x7F) as u8 | 0x80;
    g.1[at + 1] = (fewer >> 7) as u8;
    let forged = super::format::assemble(&owned).unwrap();
    let err = load(&forged, &e).unwrap_err();
    assert!(matches!(err, Error::IndexCorrupt(_)), "{err}");
    assert!(err.to_string().contains("section graph (node kinds)"), "{err}");
}

#[test]
fn native_bytes_match_the_committed_digest() {
    // The wasm suite (tests/wasm_suite) checks the same digest: native and wasm write the same
    // bytes for the same corpus and configuration.
    let (index, _, _) = sample();
    let bytes = index.to_bytes().unwrap();
    let digest = format!("{} {:08x}", bytes.len(), crc32fast::hash(&bytes));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample/index.digest");
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(
        digest,
        want.trim(),
        "the index bytes of the hotpot sample changed: when that is on purpose (a format change, or a \
         change to BM25's configuration, the static embedder, OpenIE or the graph builder), write \
         the new digest to {path}; the wasm suite checks the same file"
    );
}

#[test]
fn forged_bodies_never_panic() {
    // Bytes changed *with* valid checksums (a forged or buggy writer): every section's body is
    // damaged at about 20 places each, and the loader must return (an error or an index), never
    // panic or allocate without bound.
    let (index, e, _) = sample();
    let bytes = index.to_bytes().unwrap();
    let sections: Vec<(super::format::SectionKind, Vec<u8>)> =
        super::format::split(&bytes).unwrap().into_iter().map(|(k, b)| (k, b.to_vec())).collect();
    let mut tried = 0;
    for s in 0..sections.len() {
        let len = sections[s].1.len();
        for at in (0..len).step_by((len / 20).max(1)) {
            for flip in [0x01u8, 0xFF] {
                let mut forged = sections.clone();
                forged[s].1[at] ^= flip;
                let file = super::format::assemble(&forged).unwrap();
                let _ = load(&file, &e);
                tried += 1;
            }
        }
    }
    assert!(tried > 150, "{tried}");
}

/// A small xorshift generator: the fuzz loop below needs no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
#[ignore = "a long fuzz loop: cargo test --release fuzz_ -- --ignored (CAIRN_FUZZ_ITERS, CAIRN_FUZZ_SEED)"]
fn fuzz_loader_and_queries_never_panic() {
    let iters: usize = std::env::var("CAIRN_FUZZ_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let seed: u64 = std::env::var("CAIRN_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9E37_79B9);
    let (index, e, questions) = sample();
    let bytes = index.to_bytes().unwrap();
    let sections: Vec<(super::format::SectionKind, Vec<u8>)> =
        super::format::split(&bytes).unwrap().into_iter().map(|(k, b)| (k, b.to_vec())).collect();
    let mut rng = XorShift(seed);
    let interesting: [u32; 8] = [0, 1, 2, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFE, u32::MAX];
    let (mut loaded, mut refused) = (0usize, 0usize);
    for it in 0..iters {
        let file = match it % 4 {
            // A random prefix of the real file.
            0 => bytes[..rng.below(bytes.len())].to_vec(),
            // Raw bit flips (the checksums should catch them).
            1 => {
                let mut b = bytes.clone();
                for _ in 0..=rng.below(4) {
                    let at = rng.below(b.len());
                    b[at] ^= 1 << rng.below(8);
                }
                b
            }
            // Forged: a section's body changed, its checksum recomputed.
            _ => {
                let mut forged = sections.clone();
                // Most changes to the corpus or the vectors are caught by the vectors' CRC32: the
                // graph section, whose checks are structural, gets half of the forgeries.
                let graph = forged.iter().position(|(k, _)| *k == super::format::SectionKind::Graph);
                let s = match graph {
                    Some(g) if rng.below(2) == 0 => g,
                    _ => rng.below(forged.len()),
                };
                let body = &mut forged[s].1;
                for _ in 0..=rng.below(3) {
                    if body.len() < 4 {
                        break;
                    }
                    match rng.below(4) {
                        0 => {
                            let at = rng.below(body.len());
                            body[at] ^= 1 << rng.below(8);
                        }
                        1 => {
                            let at = rng.below(body.len() - 3);
                            let v = interesting[rng.below(interesting.len())];
                            body[at..at + 4].copy_from_slice(&v.to_le_bytes());
                        }
                        2 => {
                            let at = rng.below(body.len() - 3);
                            let old =
                                u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
                            let v = old.wrapping_add(rng.below(5) as u32).wrapping_sub(2);
                            body[at..at + 4].copy_from_slice(&v.to_le_bytes());
                        }
                        _ => {
                            let cut = rng.below(body.len());
                            body.truncate(cut);
                        }
                    }
                }
                super::format::assemble(&forged).unwrap()
            }
        };
        let Ok(idx) = load(&file, &e) else {
            refused += 1;
            continue;
        };
        loaded += 1;
        let q = &questions[rng.below(questions.len())];
        for m in Method::ALL {
            if idx.supports(m) {
                let _ = idx.searcher().search(q, 10, m);
                if m.graph_method().is_some() {
                    let _ = idx.searcher().explain(q, 5, m, &ExplainConfig::default());
                }
            }
        }
        let _ = idx.to_bytes();
        // What the page does when passages are added to an opened index: extend its graph.
        if idx.graph().is_some() {
            let mut idx = idx;
            let Some(g) = idx.take_graph() else { continue };
            let mut c = idx.into_corpus();
            let extra = Passage { id: format!("extra-{it}"), title: "Extra".into(), text: q.clone() };
            if c.add(extra).is_ok() {
                if let Ok(mut grown) = Index::build(c, &IndexConfig::default()) {
                    if grown.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).is_ok()
                        && grown.extend_graph(g, &mut |_, _, _| {}).is_ok()
                    {
                        let _ = grown.searcher().search(q, 10, Method::Catrag);
                    }
                }
            }
        }
    }
    eprintln!("fuzz: {iters} files, {loaded} loaded and queried, {refused} refused");
}
