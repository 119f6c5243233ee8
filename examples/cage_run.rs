//! Run CAGE's R-GCN through tract on passages and dump its inputs and outputs as JSON, for
//! `tools/train_cage.py check` (tract vs JAX/numpy vs onnxruntime).
//!
//!     cargo run --release --features cage --example cage_run -- CORPUS.jsonl [--n 3] [--skip 0] [--gcn] > DUMP.json
//!
//! Takes `n` passages from `skip` in corpus order, builds their graphs (β = 1.5) and the
//! [`cairn::cage::GraphBatch`], runs the bundled model and prints
//! `{"passages": [[title, text]], "batch", "nodes", "channels", "features", "adjacency", "z"}`.

use cairn::cage::tract::RgcnModel;
use cairn::cage::{GraphBatch, GraphEncoder, PassageGraph};
use cairn::corpus::parse_jsonl;
use cairn::embed::StaticEmbedder;
use cairn::text::Pipeline;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: CORPUS.jsonl [--n N] [--skip S] [--gcn]")?;
    let get = |flag: &str, default: usize| -> Result<usize, Box<dyn std::error::Error>> {
        match args.iter().position(|a| a == flag) {
            Some(i) => Ok(args.get(i + 1).ok_or("missing number")?.parse()?),
            None => Ok(default),
        }
    };
    let (n, skip) = (get("--n", 3)?, get("--skip", 0)?);
    let gcn = args.iter().any(|a| a == "--gcn");
    let passages: Vec<_> =
        parse_jsonl(path, &std::fs::read_to_string(path)?)?.into_iter().skip(skip).take(n).collect();
    let pipeline = Pipeline::english()?;
    let embedder = StaticEmbedder::minilm()?;
    let graphs: Vec<PassageGraph> =
        passages.iter().map(|p| PassageGraph::build(&pipeline.analyze(&p.title, &p.text), 1.5)).collect();
    let batch = GraphBatch::new(&graphs, &embedder, gcn)?;
    let model = if gcn { RgcnModel::bundled_gcn()? } else { RgcnModel::bundled_rgcn()? };
    let z = model.encode(&batch)?;
    let pairs: Vec<_> = passages.iter().map(|p| json!([p.title, p.text])).collect();
    println!(
        "{}",
        json!({"passages": pairs, "batch": batch.batch, "nodes": batch.nodes, "channels": batch.channels,
               "features": batch.features, "adjacency": batch.adjacency, "z": z})
    );
    Ok(())
}
