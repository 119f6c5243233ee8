//! `cairn graph`: build a dataset folder's knowledge graph and report its size and cost.

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::eval::Dataset;
use cairn::extract::{extract_corpus, extract_passage};
use cairn::graph::GraphConfig;
use cairn::index::{Index, IndexConfig};
use cairn::text::Pipeline;
use clap::Args;
use serde_json::json;

use crate::common::*;

#[derive(Args)]
pub(crate) struct GraphArgs {
    /// Dataset folder with corpus.jsonl.
    #[arg(long)]
    pub(crate) data: PathBuf,
    /// Passages added to a graph built on the others, to time an incremental add.
    #[arg(long, default_value_t = 100)]
    pub(crate) add: usize,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `cairn graph`: build the knowledge graph of a dataset folder (rule-based OpenIE + the
/// static embedder, docs/method/spec.md §1) and report what it holds and what it cost, then time adding
/// the last `--add` passages to a graph built on the others.
pub(crate) fn graph(a: GraphArgs) -> CliResult<()> {
    let dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
    let n = dataset.corpus.len();
    let embedder: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().map_err(|e| e.to_string())?);
    let total = Instant::now();
    let mut index =
        Index::build(dataset.corpus.clone(), &IndexConfig::default()).map_err(|e| e.to_string())?;
    let bm25_ms = total.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let report = index.build_graph(embedder.clone(), &mut |_, _, _| {}).map_err(|e| e.to_string())?.clone();
    let graph_ms = t.elapsed().as_secs_f64() * 1e3;
    let rss_after_build = peak_rss_mb();
    let extract = report.extract.clone().unwrap_or_default();
    let per = |x: usize, d: usize| if d > 0 { x as f64 / d as f64 } else { 0.0 };

    // Incremental add: a graph on the first n − add passages, then the last `add` added.
    let add = a.add.min(n);
    let first = n - add;
    let pipeline = Pipeline::english().map_err(|e| e.to_string())?;
    let passages = dataset.corpus.passages();
    let mut head = cairn::Corpus::new();
    head.extend(passages[..first].to_vec()).map_err(|e| e.to_string())?;
    let base_triples = extract_corpus(&pipeline, &head, &mut |_, _| {}).triples;
    let base = cairn::graph::build_graph(
        GraphConfig::default(),
        &passages[..first],
        &base_triples,
        embedder.as_ref(),
        &mut |_, _, _| {},
    )
    .map_err(|e| e.to_string())?;
    let t = Instant::now();
    let mut new_triples = Vec::new();
    for (i, p) in passages[first..].iter().enumerate() {
        new_triples.extend(extract_passage(&pipeline, (first + i) as u32, &p.title, &p.text).0);
    }
    let add_extract_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let (extended, summary) = base
        .extend(first as u32, &passages[first..], &new_triples, embedder.as_ref(), &mut |_, _, _| {})
        .map_err(|e| e.to_string())?;
    let add_graph_ms = t.elapsed().as_secs_f64() * 1e3;
    let same_as_one_build = extended.counts() == report.counts;

    let c = &report.counts;
    let out = json!({
        "dataset": dataset.name,
        "passages": n,
        "nodes": c.nodes,
        "entity_nodes": c.entity_nodes,
        "passage_nodes": c.passage_nodes,
        "facts": c.facts,
        "edges": {
            "relation": c.relation_edges,
            "synonym": c.synonym_edges,
            "context": c.context_edges,
            "arcs": c.arcs,
        },
        "extraction": {
            "triples": report.triples,
            "triples_per_passage": per(report.triples, extract.passages),
            "triples_per_english_passage": per(report.triples, extract.english_passages),
            "english_passages": extract.english_passages,
            "non_english_passages": extract.non_english_passages,
            "sentences": extract.sentences,
            "triples_used": report.add.triples_used,
            "triples_repeated": report.add.triples_repeated,
            "triples_empty": report.add.triples_empty,
            "duplicate_passages": report.add.duplicate_passages,
        },
        "build_ms": {
            "extract": report.extract_ms,
            "add": report.add_ms,
            "embed": report.embed_ms,
            "synonyms": report.synonyms_ms,
            "csr": report.csr_ms,
            "total": graph_ms,
            "bm25_index": bm25_ms,
        },
        "synonyms": report.synonyms,
        "peak_rss_mb": rss_after_build,
        "add_passages": {
            "passages": add,
            "onto": first,
            "extract_ms": add_extract_ms,
            "graph_ms": add_graph_ms,
            "total_ms": add_extract_ms + add_graph_ms,
            "new_entities": summary.new_entities,
            "new_facts": summary.new_facts,
            "same_counts_as_one_build": same_as_one_build,
        },
    });
    if a.json {
        outln!("{out}");
        return Ok(());
    }
    outln!("dataset {}  passages {n}", dataset.name);
    outln!(
        "nodes {} (entities {}, passages {})  facts {}",
        c.nodes, c.entity_nodes, c.passage_nodes, c.facts
    );
    outln!(
        "edges: relation {}  synonym {}  context {}  ({} arcs)",
        c.relation_edges, c.synonym_edges, c.context_edges, c.arcs
    );
    outln!(
        "extraction: {} triples, {:.2} per passage ({:.2} per English passage); English {} / non-English {}",
        report.triples,
        per(report.triples, extract.passages),
        per(report.triples, extract.english_passages),
        extract.english_passages,
        extract.non_english_passages
    );
    let ms = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0} ms"));
    outln!(
        "build: extract {}  add {}  embed {}  synonyms {}  CSR {}  (graph total {graph_ms:.0} ms)",
        ms(report.extract_ms),
        ms(report.add_ms),
        ms(report.embed_ms),
        ms(report.synonyms_ms),
        ms(report.csr_ms)
    );
    if let Some(r) = rss_after_build {
        outln!("peak RSS {r:.0} MiB");
    }
    outln!(
        "add {add} passages onto {first}: extract {add_extract_ms:.0} ms + graph {add_graph_ms:.0} ms = {:.0} ms (same counts as one build: {same_as_one_build})",
        add_extract_ms + add_graph_ms
    );
    Ok(())
}
