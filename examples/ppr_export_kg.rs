//! Export a real CatRAG query on the real knowledge graph for `tools/check_ppr.py --kg`
//! (networkx reference; METHOD.md §2).
//!
//!     cargo run --release --example ppr_export_kg -- [--data DIR] [--question N] [--out DIR]
//!
//! Builds the index of a dev folder (default `../shared/data/2wikimultihopqa`) with the static
//! embedder and its knowledge graph (rule-based OpenIE, `Index::build_graph`), runs CatRAG on
//! question N of its `questions.jsonl` (default 0) to get the query's teleport vector and arc
//! overlay, then runs Cairn's power iteration and forward push (default `PprConfig`) with and
//! without that overlay, and writes the files `ppr_export` writes (arcs, teleport, overlay,
//! scores, meta.json) plus `passage_nodes` in meta.json, to DIR (default `/tmp/cairn-ppr-kg`).

#[path = "ppr_support/export.rs"]
mod export;

use std::path::PathBuf;
use std::rc::Rc;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::index::EmbedderSlot;
use cairn::ppr::{ArcOverlay, CsrGraph, PprConfig};
use cairn::{Corpus, Index, IndexConfig, Method};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut data = PathBuf::from("../shared/data/2wikimultihopqa");
    let mut out = PathBuf::from("/tmp/cairn-ppr-kg");
    let mut question = 0usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data" => data = args.next().ok_or("--data needs a folder")?.into(),
            "--out" => out = args.next().ok_or("--out needs a path")?.into(),
            "--question" => question = args.next().ok_or("--question needs a number")?.parse()?,
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let text = std::fs::read_to_string(data.join("corpus.jsonl"))?;
    let mut corpus = Corpus::new();
    corpus.extend(cairn::corpus::parse_jsonl("corpus.jsonl", &text)?)?;
    let q_line = std::fs::read_to_string(data.join("questions.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .nth(question)
        .ok_or("no such question")?
        .to_string();
    let q: serde_json::Value = serde_json::from_str(&q_line)?;
    let query = q["question"].as_str().ok_or("question without text")?.to_string();

    let mut index = Index::build(corpus, &IndexConfig::default())?;
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm()?);
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {})?;
    index.build_graph(e, &mut |_, _, _| {})?;
    let found = index.searcher().search_graph(&query, 5, Method::Catrag)?;
    let r = &found.retrieval;
    let graph = index.graph().ok_or("no graph")?;
    let (offsets, targets, weights) = graph.csr().arrays();
    let csr = CsrGraph::new(offsets, targets, weights)?;
    let mut overlay = ArcOverlay::new();
    for o in &r.overlay {
        overlay.multiply(o.arc as usize, o.multiplier)?;
    }
    println!(
        "query: {query}\ngraph: {} nodes, {} arcs; {} seeds, {} overlay arcs",
        csr.node_count(),
        csr.arc_count(),
        r.seeds.len(),
        overlay.len()
    );

    let config = PprConfig::default();
    let reports = export::write_case(&out, &csr, &r.teleport, &overlay, config)?;
    let meta = serde_json::json!({
        "data": data.display().to_string(),
        "query": query,
        "nodes": csr.node_count(),
        "passages": graph.passage_nodes().len(),
        "passage_nodes": graph.passage_nodes(),
        "arcs": csr.arc_count(),
        "config": config,
        "reports": reports,
    });
    std::fs::write(out.join("meta.json"), serde_json::to_string_pretty(&meta)?)?;
    println!("wrote {}", out.display());
    Ok(())
}
