//! Shared by the native and wasm parity tests: the hotpot sample fixture and its expected ranking.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};

/// 100 HotpotQA passages (the pools of the first 10 questions).
pub const CORPUS: &str = include_str!("../fixtures/hotpot-sample/corpus.jsonl");
/// Those 10 questions.
pub const QUESTIONS: &str = include_str!("../fixtures/hotpot-sample/questions.jsonl");
/// The native engine's top 10 per question, per method (`bm25`, `dense`, `hybrid`).
pub const EXPECTED: &str = include_str!("../fixtures/hotpot-sample/expected.json");
/// The methods the parity tests compare.
pub const METHODS: [&str; 3] = ["bm25", "dense", "hybrid"];
/// Results compared at this depth.
pub const K: usize = 10;

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Expected {
    pub question: String,
    pub ids: Vec<String>,
    pub scores: Vec<f32>,
}

pub fn questions() -> Vec<String> {
    cairn::eval::parse_questions("questions.jsonl", QUESTIONS)
        .expect("fixture questions parse")
        .into_iter()
        .map(|q| q.question)
        .collect()
}

pub fn expected() -> std::collections::BTreeMap<String, Vec<Expected>> {
    serde_json::from_str(EXPECTED).expect("expected.json parses")
}

/// Same ids in the same order, scores equal to 1e-5 relative.
pub fn assert_same(got: &[Expected], want: &[Expected]) {
    assert_eq!(got.len(), want.len(), "number of questions");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.question, w.question);
        assert_eq!(g.ids, w.ids, "ranking for {:?}", w.question);
        for (a, b) in g.scores.iter().zip(&w.scores) {
            assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "score {a} vs {b} for {:?}", w.question);
        }
    }
}
