//! The transformer embedder on the real model (feature `minilm`):
//!
//!     tools/fetch_models.sh && cargo test --features minilm --test minilm
//!
//! Without `models/minilm-int8.onnx` the model tests print why and pass without checking, unless
//! `CAIRN_REQUIRE_MODEL` is set (as `npm test` does), when they fail.
#![cfg(feature = "minilm")]

use std::path::PathBuf;
use std::sync::OnceLock;

use cairn::embed::minilm::{MiniLmEmbedder, DIM};
use cairn::embed::{dot, is_zero, Embedder};

/// The embedder, loaded once for all tests (a load takes seconds in a debug build).
fn load() -> Option<MiniLmEmbedder> {
    static EMBEDDER: OnceLock<Option<MiniLmEmbedder>> = OnceLock::new();
    EMBEDDER.get_or_init(load_uncached).clone()
}

fn load_uncached() -> Option<MiniLmEmbedder> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/minilm-int8.onnx");
    let Ok(bytes) = std::fs::read(&path) else {
        // `npm test` sets this: there the model must have been fetched, so its absence fails.
        assert!(
            std::env::var_os("CAIRN_REQUIRE_MODEL").is_none(),
            "{} is absent and CAIRN_REQUIRE_MODEL is set: run tools/fetch_models.sh",
            path.display()
        );
        eprintln!(
            "SKIPPED: {} is absent; run tools/fetch_models.sh to test the MiniLM embedder",
            path.display()
        );
        return None;
    };
    Some(MiniLmEmbedder::from_onnx_bytes(&bytes).expect("the fetched model loads"))
}

const SENTENCES: [&str; 3] =
    ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."];

/// Cosines between the three sentences from the reference pipeline: onnxruntime 1.32.0 on the
/// same `minilm-int8.onnx`, Hugging Face `tokenizers` 0.23.3 with the model's tokenizer.json
/// (padding off), mean pooling, L2 normalisation — printed by
/// `python3 tools/check_tract.py --sentences`.
const ORT_COS_FOOD_BREAD: f32 = 0.753_486;
const ORT_COS_FOOD_BABY: f32 = -0.105_494;
const ORT_COS_BREAD_BABY: f32 = -0.062_296;
/// The first four components of onnxruntime's vector of "A man is eating food.".
const ORT_FOOD_HEAD: [f32; 4] = [0.030_952, 0.006_671, -0.004_373, 0.047_506];

#[test]
fn three_sentences_match_onnxruntime() {
    let Some(e) = load() else { return };
    assert_eq!(e.dim(), DIM);
    assert_eq!(e.dim(), 384);
    let mut calls = Vec::new();
    let v = e.embed_batch(&SENTENCES, &mut |done, total| calls.push((done, total))).unwrap();
    assert_eq!(v.len(), 3 * 384);
    assert_eq!(calls.last(), Some(&(3, 3)));
    let rows: Vec<&[f32]> = v.chunks_exact(384).collect();
    for r in &rows {
        assert!((dot(r, r).sqrt() - 1.0).abs() < 1e-5, "unit norm");
    }
    let (food_bread, food_baby, bread_baby) =
        (dot(rows[0], rows[1]), dot(rows[0], rows[2]), dot(rows[1], rows[2]));
    assert!(food_bread > food_baby, "{food_bread} > {food_baby}");
    for (got, want) in
        [(food_bread, ORT_COS_FOOD_BREAD), (food_baby, ORT_COS_FOOD_BABY), (bread_baby, ORT_COS_BREAD_BABY)]
    {
        assert!((got - want).abs() < 1e-4, "cosine {got} vs onnxruntime {want}");
    }
    for (got, want) in rows[0].iter().zip(ORT_FOOD_HEAD) {
        assert!((got - want).abs() < 1e-4, "component {got} vs onnxruntime {want}");
    }
}

#[test]
fn batching_padding_and_empty_texts() {
    let Some(e) = load() else { return };
    let e = e.with_batch_size(2);
    // A long text (truncated to 256 tokens), short ones, and texts with no tokens.
    let long = "The quick brown fox jumps over the lazy dog. ".repeat(60);
    let texts = [SENTENCES[1], "", long.as_str(), SENTENCES[0], "  \n ", SENTENCES[2]];
    let mut calls = Vec::new();
    let v = e.embed_batch(&texts, &mut |d, t| calls.push((d, t))).unwrap();
    assert_eq!(v.len(), texts.len() * 384);
    assert_eq!(calls.last(), Some(&(6, 6)));
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(e.token_ids(&long).len(), 256);
    for (i, text) in texts.iter().enumerate() {
        let row = &v[i * 384..(i + 1) * 384];
        if text.trim().is_empty() {
            assert!(is_zero(row), "text {i} has no tokens: zero vector");
            continue;
        }
        // Each text alone (no padding) gives the same vector as inside a padded batch.
        let alone = e.embed(text).unwrap();
        assert!(dot(row, &alone) > 0.999_999, "text {i}: batch vs alone {}", dot(row, &alone));
        assert!((dot(row, row).sqrt() - 1.0).abs() < 1e-5);
    }
    assert!(e.embed_batch(&[], &mut |_, _| {}).unwrap().is_empty());
}
