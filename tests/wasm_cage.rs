//! CAGE in wasm, in headless Chromium (cargo feature `cage`):
//! `wasm-pack test --headless --chrome -- --features cage --test wasm_cage` (`npm run
//! test:wasm-cage`; manual only: `npm test` checks the same with the release packages in
//! tests/e2e/cage.test.mjs, without compiling tract for wasm in debug).
//!
//! tract's R-GCN equals the training side's reference (the fixture `tests/cage.rs` checks
//! natively), and the time to rerank 20 candidates (a MuSiQue pool) is printed.
#![cfg(target_arch = "wasm32")]

use cairn::cage::tract::RgcnModel;
use cairn::cage::{Cage, CageConfig, GraphBatch, GraphEncoder, PassageGraph};
use cairn::embed::{dot, Embedder, StaticEmbedder};
use cairn::text::Pipeline;
use serde_json::Value;
use std::rc::Rc;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn rgcn_in_wasm_equals_the_training_reference() {
    let fx: Value = serde_json::from_str(include_str!("fixtures/cage/rgcn-reference.json")).unwrap();
    let pipeline = Pipeline::english().unwrap();
    let graphs: Vec<PassageGraph> = fx["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PassageGraph::build(&pipeline.analyze(p[0].as_str().unwrap(), p[1].as_str().unwrap()), 1.5))
        .collect();
    let batch = GraphBatch::new(&graphs, &StaticEmbedder::minilm().unwrap(), false).unwrap();
    let z = RgcnModel::bundled_rgcn().unwrap().encode(&batch).unwrap();
    let want: Vec<f32> =
        fx["z_reference"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    assert_eq!(z.len(), want.len());
    let scale = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let diff = z.iter().zip(&want).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    console_log!("CAGE wasm vs reference: max |Δz| {diff:.3e} (max |z| {scale:.3})");
    assert!(scale > 0.0 && diff <= 1e-4 * scale, "max |Δz| {diff} > 1e-4 · {scale}");
}

#[wasm_bindgen_test]
fn rerank_20_candidates_timed() {
    let fx: Value = serde_json::from_str(include_str!("fixtures/cage/pool20.json")).unwrap();
    let embedder = StaticEmbedder::minilm().unwrap();
    let cage = Cage::new(
        Rc::new(RgcnModel::bundled_rgcn().unwrap()),
        Some(Rc::new(RgcnModel::bundled_gcn().unwrap())),
    )
    .unwrap();
    let ps: Vec<(String, String)> = fx["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["title"].as_str().unwrap().to_string(), p["text"].as_str().unwrap().to_string()))
        .collect();
    let pairs: Vec<(&str, &str)> = ps.iter().map(|(t, x)| (t.as_str(), x.as_str())).collect();
    let q = embedder.embed(fx["question"].as_str().unwrap()).unwrap();
    let config = CageConfig::default();
    let mut times = Vec::new();
    let mut last = Vec::new();
    for _ in 0..5 {
        let t0 = js_sys::Date::now();
        // As Searcher::search_cage: relevance, graphs, R-GCN, coherence, fusion.
        let texts: Vec<String> = ps.iter().map(|(t, x)| format!("{t}\n{x}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let rows = embedder.embed_batch(&refs, &mut |_, _| {}).unwrap();
        let relevance: Vec<f32> = rows.chunks_exact(embedder.dim()).map(|r| dot(r, &q)).collect();
        last = cage.rerank(&pairs, &relevance, &embedder, &config).unwrap();
        times.push(js_sys::Date::now() - t0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    console_log!("CAGE rerank of 20 candidates in wasm: median {:.1} ms (runs {:?})", times[2], times);
    assert_eq!(last.len(), 20);
    assert!(last.iter().all(|r| r.score.is_finite() && r.coherence.is_finite()));
}
