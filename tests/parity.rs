//! Native search on the hotpot sample gives the committed expected rankings for bm25, dense and
//! hybrid (which the wasm tests check too, so native and wasm agree). `CAIRN_BLESS=1` rewrites
//! the expected file.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::rc::Rc;

use cairn::corpus::{parse_jsonl, Corpus};
use cairn::embed::StaticEmbedder;
use cairn::index::{EmbedderSlot, Index, IndexConfig, Method};
use common::Expected;

fn native() -> BTreeMap<String, Vec<Expected>> {
    let mut corpus = Corpus::new();
    corpus.extend(parse_jsonl("corpus.jsonl", common::CORPUS).unwrap()).unwrap();
    let mut index = Index::build(corpus, &IndexConfig::default()).unwrap();
    index
        .attach_embedder(EmbedderSlot::Static, Rc::new(StaticEmbedder::minilm().unwrap()), &mut |_, _| {})
        .unwrap();
    common::METHODS
        .iter()
        .map(|&m| {
            let method: Method = m.parse().unwrap();
            let rows = common::questions()
                .into_iter()
                .map(|q| {
                    let hits = index.searcher().search(&q, common::K, method).unwrap();
                    Expected {
                        ids: hits.iter().map(|h| index.corpus().get(h.passage).unwrap().id.clone()).collect(),
                        scores: hits.iter().map(|h| h.score).collect(),
                        question: q,
                    }
                })
                .collect();
            (m.to_string(), rows)
        })
        .collect()
}

#[test]
fn native_matches_expected() {
    let got = native();
    if std::env::var_os("CAIRN_BLESS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample/expected.json");
        std::fs::write(path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want = common::expected();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    for (m, rows) in &got {
        common::assert_same(rows, &want[m]);
        // The fixture is not trivial: every question retrieves a full top 10.
        assert!(rows.iter().all(|e| e.ids.len() == common::K), "{m}");
    }
}
