//! The graph methods through the [`Index`]: availability, errors before the graph exists, ranking
//! and ties, the dense fallback, explanations, and a build with the real extractor.

use std::rc::Rc;

use crate::index::*;

use crate::catrag::{CatragConfig, ExplainConfig, GraphMethod};
use crate::corpus::{Corpus, Passage};
use crate::embed::Embedder;
use crate::error::Error;
use crate::extract::Triple;
use crate::catrag::{Fallback, SeedChannel};
use crate::embed::StaticEmbedder;

fn corpus() -> Corpus {
    let mut c = Corpus::new();
    let rows = [
        ("a", "Teutberga", "Teutberga was queen of Lotharingia. She married Lothair II."),
        ("b", "Lothair II", "Lothair II was king of Lotharingia. His father was Lothair I."),
        ("c", "Lothair I", "Lothair I was emperor. He was born in 795."),
        ("d", "Paris", "Paris is the capital of France."),
        ("e", "Lyon", "Lyon is a city in France."),
    ];
    for (id, title, text) in rows {
        c.add(Passage { id: id.into(), title: title.into(), text: text.into() }).unwrap();
    }
    c
}

fn triples() -> Vec<Triple> {
    vec![
        Triple::new("Teutberga", "was queen of", "Lotharingia", 0),
        Triple::new("Teutberga", "married", "Lothair II", 0),
        Triple::new("Lothair II", "was king of", "Lotharingia", 1),
        Triple::new("Lothair II", "father was", "Lothair I", 1),
        Triple::new("Lothair I", "was", "emperor", 2),
        Triple::new("Lothair I", "was born in", "795", 2),
        Triple::new("Paris", "is capital of", "France", 3),
        Triple::new("Lyon", "is city in", "France", 4),
    ]
}

fn index() -> Index {
    let mut index = Index::build(corpus(), &IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e, &mut |_, _| {}).unwrap();
    index
}

fn static_embedder(index: &Index) -> Rc<dyn Embedder> {
    index.dense(EmbedderSlot::Static).unwrap().embedder().clone()
}

#[test]
fn method_names_round_trip() {
    assert_eq!(Method::NAMES.len(), Method::ALL.len());
    for (m, name) in Method::ALL.iter().zip(Method::NAMES.iter()) {
        assert_eq!(m.name(), *name);
        assert_eq!(name.parse::<Method>().unwrap(), *m);
        assert_eq!(serde_json::to_value(m).unwrap(), serde_json::json!(name));
    }
    assert_eq!("CatRAG".parse::<Method>().unwrap(), Method::Catrag);
    assert_eq!(Method::Hipporag.graph_method(), Some(GraphMethod::HippoRag));
    assert_eq!(Method::Bm25.graph_method(), None);
}

#[test]
fn graph_methods_need_the_graph() {
    let mut index = index();
    for m in [Method::Hipporag, Method::Catrag] {
        assert!(!index.supports(m));
        let e = index.searcher().search("Who was Teutberga's husband's father?", 3, m).unwrap_err();
        assert!(matches!(e, Error::MissingGraph { .. }), "{e}");
    }
    let e = static_embedder(&index);
    let report = index.build_graph_from_triples(e, &triples(), None, &mut |_, _, _| {}).unwrap();
    assert_eq!(report.triples, 8);
    assert_eq!(report.counts.passage_nodes, 5);
    assert!(report.embed_ms.is_some());
    assert!(index.supports(Method::Catrag) && index.supports(Method::Hipporag));
    assert!(index.graph().is_some());
    // Without the static embedder's passage vectors: not supported.
    let bare = Index::build(corpus(), &IndexConfig::default()).unwrap();
    assert!(!bare.supports(Method::Catrag));
    // A non-graph method through search_graph is an error, not a panic.
    assert!(index.searcher().search_graph("q", 3, Method::Bm25).is_err());
}

#[test]
fn graph_search_ranks_every_passage_and_explains() {
    let mut index = index();
    let e = static_embedder(&index);
    index.build_graph_from_triples(e, &triples(), None, &mut |_, _, _| {}).unwrap();
    let q = "Who was the father of the husband of Teutberga?";
    for m in [Method::Hipporag, Method::Catrag] {
        let hits = index.searcher().search(q, 10, m).unwrap();
        assert_eq!(hits.len(), 5, "every passage is ranked");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        let top3: Vec<&str> =
            hits[..3].iter().map(|h| index.corpus().get(h.passage).unwrap().id.as_str()).collect();
        let mut sorted = top3.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["a", "b", "c"], "{m}: the Lotharingian chain first, got {top3:?}");
        assert_eq!(index.searcher().search(q, 10, m).unwrap(), hits, "deterministic");
    }
    let found = index.searcher().search_graph(q, 3, Method::Catrag).unwrap();
    assert!(found.retrieval.fallback.is_none());
    assert!(found.retrieval.anchors.iter().any(|a| a.mention == "Teutberga" && a.node.is_some()));
    assert!(found.retrieval.seeds.iter().any(|s| s.channel != SeedChannel::Facts));

    let ex = index.searcher().explain(q, 3, Method::Catrag, &ExplainConfig::default()).unwrap();
    assert_eq!(ex.passages.len(), 3);
    assert!(ex.passages.iter().all(|p| !p.paths.is_empty()), "every top passage has a path from a seed");
    assert!(!ex.top_entities.is_empty());
    let json = serde_json::to_value(&ex).unwrap();
    assert_eq!(json["method"], "catrag");
    assert!(json["passages"][0]["paths"][0]["edges"].is_array());

    // Ablations through the index configuration.
    index.set_catrag_config(CatragConfig { no_anchor: true, ..CatragConfig::default() }).unwrap();
    let found = index.searcher().search_graph(q, 3, Method::Catrag).unwrap();
    assert!(found.retrieval.anchors.is_empty());
    assert_eq!(found.retrieval.ablations, ["--no-anchor"]);
    assert!(index.set_catrag_config(CatragConfig { epsilon: -1.0, ..CatragConfig::default() }).is_err());
}

#[test]
fn no_triples_means_the_dense_ranking() {
    let mut index = index();
    let e = static_embedder(&index);
    index.build_graph_from_triples(e, &[], None, &mut |_, _, _| {}).unwrap();
    let q = "capital of France";
    let dense: Vec<u32> = index.searcher().search(q, 5, Method::Dense).unwrap().iter().map(|h| h.passage).collect();
    for m in [Method::Hipporag, Method::Catrag] {
        let found = index.searcher().search_graph(q, 5, m).unwrap();
        assert_eq!(found.retrieval.fallback, Some(Fallback::NoSeeds));
        assert_eq!(found.hits.iter().map(|h| h.passage).collect::<Vec<_>>(), dense, "{m}");
        let ex = index.searcher().explain(q, 5, m, &ExplainConfig::default()).unwrap();
        assert!(ex.passages.iter().all(|p| p.paths.is_empty()));
    }
}

#[test]
fn build_graph_with_the_extractor() {
    let mut index = index();
    let e = static_embedder(&index);
    let mut stages = Vec::new();
    let report = index.build_graph(e, &mut |s, _, _| stages.push(s)).unwrap().clone();
    let stats = report.extract.clone().unwrap();
    assert_eq!(stats.passages, 5);
    assert_eq!(report.triples, stats.triples);
    assert!(report.extract_ms.is_some());
    assert!(stages.contains(&GraphStage::Extracting) && stages.contains(&GraphStage::Embedding));
    let hits = index.searcher().search("Who was the father of the husband of Teutberga?", 3, Method::Catrag).unwrap();
    assert_eq!(hits.len(), 3);
    // Bad triples are an error and keep the graph already built.
    let e = static_embedder(&index);
    let bad = [Triple::new("x", "y", "z", 99)];
    assert!(index.build_graph_from_triples(e, &bad, None, &mut |_, _, _| {}).is_err());
    assert!(index.graph().is_some());
}

/// The incremental add through the index: a graph built over the first three passages,
/// carried over with `take_graph` and extended with the last two by `extend_graph`, equals the
/// graph built over all five at once (same counts, facts and CSR), and the two rank alike.
#[test]
fn extending_a_carried_graph_equals_building_it_at_once() {
    let mut full = index();
    let e = static_embedder(&full);
    full.build_graph(e.clone(), &mut |_, _, _| {}).unwrap();

    let mut first = Corpus::new();
    for p in corpus().passages().iter().take(3) {
        first.add(p.clone()).unwrap();
    }
    let mut small = Index::build(first, &IndexConfig::default()).unwrap();
    small.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    small.build_graph(e.clone(), &mut |_, _, _| {}).unwrap();
    let carried = small.take_graph().unwrap();
    assert!(small.graph().is_none());
    assert_eq!(carried.report().counts.passages, 3);

    let mut grown = index();
    let mut extracted = 0;
    let report = grown
        .extend_graph(carried, &mut |stage, _, total| {
            if stage == GraphStage::Extracting {
                extracted = total;
            }
        })
        .unwrap()
        .clone();
    assert_eq!(extracted, 2, "only the two new passages go through OpenIE");
    let whole = full.knowledge_graph().unwrap().report();
    assert_eq!(report.counts, whole.counts);
    assert_eq!(report.triples, whole.triples);
    assert_eq!(report.extract.as_ref().unwrap().passages, 5);
    assert_eq!(report.extract.as_ref().unwrap().triples, whole.extract.as_ref().unwrap().triples);
    let (a, b) = (grown.graph().unwrap(), full.graph().unwrap());
    assert_eq!(a.facts(), b.facts());
    assert_eq!(a.csr().arrays(), b.csr().arrays());
    for q in ["Who was the father of the husband of Teutberga?", "capital of France"] {
        assert_eq!(grown.searcher().search(q, 5, Method::Catrag).unwrap(), full.searcher().search(q, 5, Method::Catrag).unwrap());
    }

    // a graph of more passages than the corpus has is refused, and the index keeps none
    let mut other = Index::build(corpus(), &IndexConfig::default()).unwrap();
    let mut tiny = Corpus::new();
    tiny.add(corpus().passages()[0].clone()).unwrap();
    let mut tiny = Index::build(tiny, &IndexConfig::default()).unwrap();
    let g = other.take_graph();
    assert!(g.is_none());
    let carried = full.take_graph().unwrap();
    let err = tiny.extend_graph(carried, &mut |_, _, _| {}).unwrap_err().to_string();
    assert!(err.contains("covers 5 passages but the corpus has 1"), "{err}");
    assert!(tiny.graph().is_none());
}

/// A query the static embedder knows no token of (emoji only) embeds to the zero vector: dense
/// methods then find nothing instead of listing passages in corpus order with score 0, and the
/// graph methods (seeded by the same embedder) find nothing either.
#[test]
fn a_query_with_no_known_token_matches_nothing() {
    let mut index = index();
    let e = static_embedder(&index);
    assert!(crate::embed::is_zero(&e.embed("🦀 🦀").unwrap()), "the emoji query should embed to zero");
    assert!(index.searcher().search("🦀 🦀", 5, Method::Dense).unwrap().is_empty());
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    assert!(index.searcher().search("🦀 🦀", 5, Method::Catrag).unwrap().is_empty());
    assert!(index.searcher().search("🦀 🦀", 5, Method::Hipporag).unwrap().is_empty());
    assert!(!index.searcher().search("capital of France", 5, Method::Dense).unwrap().is_empty());
}
