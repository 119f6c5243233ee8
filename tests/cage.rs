//! CAGE's encoders run by tract (feature `cage`) against the training side's reference:
//! `tools/train_cage.py check` computed `z_reference` in float64 numpy from the same dequantised
//! int8 weights and the inputs Cairn built for the fixture's passages (and `z_onnxruntime` with
//! onnxruntime). Tolerance: max |Δz| ≤ 1e-4 · max |z| (float32 summation order differs).
//!
//!     cargo test --features minilm,cage --test cage

use cairn::cage::tract::RgcnModel;
use cairn::cage::{GraphBatch, GraphEncoder, PassageGraph};
use cairn::embed::StaticEmbedder;
use cairn::text::Pipeline;
use serde_json::Value;

fn check(fixture: &str, model: &RgcnModel, merge: bool) {
    let fx: Value = serde_json::from_str(fixture).unwrap();
    let pipeline = Pipeline::english().unwrap();
    let graphs: Vec<PassageGraph> = fx["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PassageGraph::build(&pipeline.analyze(p[0].as_str().unwrap(), p[1].as_str().unwrap()), 1.5))
        .collect();
    let batch = GraphBatch::new(&graphs, &StaticEmbedder::minilm().unwrap(), merge).unwrap();
    let z = model.encode(&batch).unwrap();
    for key in ["z_reference", "z_onnxruntime"] {
        let want: Vec<f32> = fx[key].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        assert_eq!(z.len(), want.len());
        assert_eq!(z.len(), graphs.len() * model.dim());
        let scale = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!(scale > 0.0, "a reference of zeros checks nothing");
        let diff = z.iter().zip(&want).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff <= 1e-4 * scale, "{key}: max |Δz| {diff} > 1e-4 · {scale}");
    }
}

#[test]
fn rgcn_in_tract_equals_the_training_reference() {
    let model = RgcnModel::bundled_rgcn().unwrap();
    assert_eq!((model.feature_dim(), model.channels(), model.dim()), (256, 10, 128));
    check(include_str!("fixtures/cage/rgcn-reference.json"), &model, false);
}

#[test]
fn gcn_in_tract_equals_the_training_reference() {
    let model = RgcnModel::bundled_gcn().unwrap();
    assert_eq!((model.feature_dim(), model.channels(), model.dim()), (256, 2, 128));
    check(include_str!("fixtures/cage/gcn-reference.json"), &model, true);
}

#[test]
fn bad_model_bytes_and_shapes_are_errors() {
    assert!(RgcnModel::from_onnx_bytes(&[]).is_err());
    assert!(RgcnModel::from_onnx_bytes(b"not onnx").is_err());
    let model = RgcnModel::bundled_rgcn().unwrap();
    let g = PassageGraph::from_parts(vec!["x".into()], &[], 1.0);
    let merged = GraphBatch::new(&[g], &StaticEmbedder::minilm().unwrap(), true).unwrap();
    assert!(model.encode(&merged).is_err(), "2 channels into the 10-channel R-GCN");
}

/// CAGE's known limit (§6), kept visible: two passages that differ only by one substituted entity
/// (Paris → Rome) get almost the same graph embedding, far closer than an unrelated passage, so
/// coherence cannot tell the contradiction apart. (GraphCL encoder, measured with
/// tools/train_cage.py's numpy forward pass: cos 0.9955 vs 0.70.)
#[test]
fn one_substituted_entity_embeds_alike() {
    let passages = [
        ("Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was designed by the engineer Gustave Eiffel and completed in 1889."),
        ("Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Rome, France. It was designed by the engineer Gustave Eiffel and completed in 1889."),
        ("Kakapo", "The kakapo is a large flightless parrot endemic to New Zealand. It feeds at night on seeds, fruit and pollen."),
    ];
    let pipeline = Pipeline::english().unwrap();
    let graphs: Vec<PassageGraph> =
        passages.iter().map(|(t, x)| PassageGraph::build(&pipeline.analyze(t, x), 1.5)).collect();
    let batch = GraphBatch::new(&graphs, &StaticEmbedder::minilm().unwrap(), false).unwrap();
    let model = RgcnModel::bundled_graphcl().unwrap();
    let z = model.encode(&batch).unwrap();
    let d = model.dim();
    let (a, b, c) = (&z[..d], &z[d..2 * d], &z[2 * d..]);
    let substituted = cairn::cage::cosine(a, b);
    let unrelated = cairn::cage::cosine(a, c);
    assert!(substituted > 0.98, "Paris vs Rome: cos {substituted}");
    assert!(substituted > unrelated + 0.2, "substituted {substituted} vs unrelated {unrelated}");
}
