//! Native BM25 on the hotpot sample gives the committed expected ranking (which the wasm tests
//! check too, so native and wasm agree). `CAIRN_BLESS=1` rewrites the expected file.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use cairn::corpus::{parse_jsonl, Corpus};
use cairn::index::{Index, IndexConfig, Method};
use common::Expected;

fn native() -> Vec<Expected> {
    let mut corpus = Corpus::new();
    corpus.extend(parse_jsonl("corpus.jsonl", common::CORPUS).unwrap()).unwrap();
    let index = Index::build(corpus, &IndexConfig::default()).unwrap();
    common::questions()
        .into_iter()
        .map(|q| {
            let hits = index.search(&q, common::K, Method::Bm25);
            Expected {
                ids: hits.iter().map(|h| index.corpus().get(h.passage).unwrap().id.clone()).collect(),
                scores: hits.iter().map(|h| h.score).collect(),
                question: q,
            }
        })
        .collect()
}

#[test]
fn native_matches_expected() {
    let got = native();
    if std::env::var_os("CAIRN_BLESS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample/bm25_expected.json");
        std::fs::write(path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    common::assert_same(&got, &common::expected());
    // The fixture is not trivial: every question retrieves a full top 10.
    assert!(got.iter().all(|e| e.ids.len() == common::K));
}
