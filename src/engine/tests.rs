//! The engine's lifecycle and the query path's once-per-query bar, counted by the test hook.

use std::rc::Rc;

use super::*;
use crate::embed::StaticEmbedder;

fn passages(rows: &[(&str, &str, &str)]) -> Vec<Passage> {
    rows.iter().map(|&(id, title, text)| Passage { id: id.into(), title: title.into(), text: text.into() }).collect()
}

fn first() -> Vec<Passage> {
    passages(&[
        ("a", "Teutberga", "Teutberga was queen of Lotharingia. She married Lothair II."),
        ("b", "Lothair II", "Lothair II was king of Lotharingia. His father was Lothair I."),
        ("c", "Lothair I", "Lothair I was emperor. He was born in 795."),
    ])
}

fn second() -> Vec<Passage> {
    passages(&[("d", "Paris", "Paris is the capital of France."), ("e", "Lyon", "Lyon is a city in France.")])
}

fn static_embedder() -> Rc<dyn Embedder> {
    Rc::new(StaticEmbedder::minilm().unwrap())
}

/// An engine over all five passages with the static embedder and the knowledge graph.
fn graph_engine() -> Engine {
    let mut e = Engine::new(IndexConfig::default()).unwrap();
    e.set_embedder(EmbedderSlot::Static, static_embedder(), &mut |_, _, _| {}).unwrap();
    e.add_passages(first()).unwrap();
    e.add_passages(second()).unwrap();
    e.build(&mut |_, _, _| {}).unwrap();
    e.build_graph(&mut |_, _, _| {}).unwrap();
    e
}

const QUERY: &str = "Who was the father of Teutberga's husband?";

#[test]
fn collecting_built_and_back() {
    let mut e = Engine::new(IndexConfig::default()).unwrap();
    assert_eq!(e.add_passages(first()).unwrap(), 3);
    let s = e.stats();
    assert_eq!((s.passages, s.built, s.terms), (3, false, 0));
    assert!(matches!(e.search("queen", 3, Method::Bm25, QueryOptions::default()), Err(Error::NotBuilt)));
    e.build(&mut |_, _, _| {}).unwrap();
    assert!(e.stats().built);
    assert_eq!(e.available_methods().into_iter().filter(|m| m.is_built_in()).collect::<Vec<_>>(), vec![Method::Bm25]);
    let hits = e.search("queen", 3, Method::Bm25, QueryOptions::default()).unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(e.corpus().get(hits[0].passage).unwrap().id, "a");
    // A rejected batch (a duplicate id) leaves the engine built.
    assert!(e.add_passages(passages(&[("a", "", "again")])).is_err());
    assert!(e.is_built());
    // An accepted one makes it collect again; truncating back to 3 keeps it collecting.
    assert_eq!(e.add_passages(second()).unwrap(), 2);
    assert_eq!((e.stats().passages, e.stats().built), (5, false));
    e.truncate(3);
    assert_eq!((e.stats().passages, e.stats().built), (3, false));
    e.clear();
    assert_eq!(e.stats().passages, 0);
}

#[test]
fn methods_follow_what_is_built() {
    let mut e = Engine::new(IndexConfig::default()).unwrap();
    e.add_passages(first()).unwrap();
    e.set_embedder(EmbedderSlot::Static, static_embedder(), &mut |_, _, _| {}).unwrap();
    // Collecting with the static embedder: its dense methods are on offer, the graph ones not.
    let available = |e: &Engine| e.available_methods().into_iter().filter(|m| m.is_built_in()).collect::<Vec<_>>();
    assert_eq!(available(&e), vec![Method::Bm25, Method::Dense, Method::Hybrid]);
    assert_eq!(e.stats().embedders, vec![EmbedderInfo { name: "static", dims: 256 }]);
    e.build(&mut |_, _, _| {}).unwrap();
    assert!(e.supports(Method::Dense) && !e.supports(Method::Catrag) && !e.supports(Method::Cage));
    e.build_graph(&mut |_, _, _| {}).unwrap();
    assert!(e.supports(Method::Catrag) && e.supports(Method::Hipporag));
    assert_eq!(available(&e), vec![Method::Bm25, Method::Dense, Method::Hybrid, Method::Hipporag, Method::Catrag]);
}

#[test]
fn the_graph_is_carried_over_and_equals_a_fresh_build() {
    let mut grown = Engine::new(IndexConfig::default()).unwrap();
    grown.set_embedder(EmbedderSlot::Static, static_embedder(), &mut |_, _, _| {}).unwrap();
    grown.add_passages(first()).unwrap();
    grown.build(&mut |_, _, _| {}).unwrap();
    assert_eq!(grown.build_graph(&mut |_, _, _| {}).unwrap().counts.passages, 3);
    grown.add_passages(second()).unwrap();
    let mut phases = Vec::new();
    grown.build(&mut |p, _, _| phases.push(p)).unwrap();
    // Only the two new passages went through OpenIE.
    assert!(phases.contains(&Phase::Extract));
    let report = grown.index().unwrap().knowledge_graph().unwrap().report().clone();
    assert_eq!(report.counts.passages, 5);
    let mut fresh = graph_engine();
    assert_eq!(report.counts, fresh.index().unwrap().knowledge_graph().unwrap().report().counts);
    let a = grown.search(QUERY, 5, Method::Catrag, QueryOptions::default()).unwrap().hits;
    let b = fresh.search(QUERY, 5, Method::Catrag, QueryOptions::default()).unwrap().hits;
    assert_eq!(a, b);
}

#[test]
fn a_graph_search_runs_once_with_and_without_explain() {
    let mut e = graph_engine();
    assert_eq!(e.run_counts().unwrap().get(), (0, 0));
    let found = e.search(QUERY, 3, Method::Catrag, QueryOptions::default()).unwrap();
    assert_eq!(e.run_counts().unwrap().get(), (1, 1));
    let ex = e.explain(&found, &ExplainConfig::default()).unwrap();
    assert_eq!(e.run_counts().unwrap().get(), (1, 1), "explaining a result runs no search");
    assert_eq!(ex.hits, found.hits);
    assert_eq!(ex.passages.len(), found.hits.len());
    e.reset_run_counts();
    assert_eq!(e.run_counts().unwrap().get(), (0, 0));
    // The one-call explanation runs the graph search once too, and explains the same ranking.
    let mut searcher = e.index().unwrap().searcher();
    let again = searcher.explain(QUERY, 3, Method::Catrag, &ExplainConfig::default()).unwrap();
    assert_eq!(searcher.counts().get(), (1, 1));
    assert_eq!(again.hits, found.hits);
}

#[test]
fn a_cage_query_runs_its_first_stage_once() {
    let mut e = graph_engine();
    // Graph embeddings for every passage under the configured key (any finite rows will do:
    // this counts runs, the rerank's values are pinned in `cage`'s own tests).
    let key = e.cage_key(7);
    let z: Vec<f32> = (0..5 * 4).map(|i| ((i * 7 % 11) as f32) - 5.0).collect();
    e.index_mut().unwrap().store_cage_z(key, &[0, 1, 2, 3, 4], &z, 4).unwrap();
    assert!(e.supports(Method::CatragCage));
    let found = e.search(QUERY, 3, Method::CatragCage, QueryOptions::default()).unwrap();
    assert_eq!(e.run_counts().unwrap().get(), (1, 1), "first stages, graph searches");
    assert_eq!(found.hits.len(), 3);
    assert_eq!(found.trace.reranked.len(), 3);
    assert_eq!(found.trace.candidates.len(), 5);
    assert!(found.trace.retrieval.is_some(), "the first stage's graph search is in the trace");
    // The hits are the reranked candidates, in order.
    for (h, r) in found.hits.iter().zip(&found.trace.reranked) {
        assert_eq!(h.passage, found.trace.candidates[r.candidate].passage);
        assert_eq!(h.score, r.score);
    }
    let mut searcher = e.index().unwrap().searcher();
    let pairs = searcher.search_cage(QUERY, 3, Method::CatragCage).unwrap();
    assert_eq!(searcher.counts().get(), (1, 1));
    assert_eq!(pairs.iter().map(|(h, _)| h.clone()).collect::<Vec<_>>(), found.hits);
    // An explanation is for the graph methods themselves.
    assert!(matches!(e.explain(&found, &ExplainConfig::default()), Err(Error::UnknownMethod { .. })));
}

#[test]
fn parts_built_elsewhere_give_the_engine_built_here() {
    let mut built = graph_engine();
    let index = built.index().unwrap();
    let e = static_embedder();
    let vectors = index.dense(EmbedderSlot::Static).unwrap().vectors().clone();
    let pipeline = crate::text::Pipeline::english().unwrap();
    let out = crate::extract::extract_corpus(&pipeline, index.corpus(), &mut |_, _| {});
    let parts = Prebuilt {
        vectors: Some((EmbedderSlot::Static, e, vectors)),
        cage_z: None,
        triples: Some((out.triples, Some(out.stats))),
    };
    let mut other = Engine::build_from_parts(index.corpus().clone(), &IndexConfig::default(), None, parts).unwrap();
    for m in [Method::Bm25, Method::Dense, Method::Hybrid, Method::Hipporag, Method::Catrag] {
        let a = built.search(QUERY, 5, m, QueryOptions::default()).unwrap().hits;
        let b = other.search(QUERY, 5, m, QueryOptions::default()).unwrap().hits;
        assert_eq!(a, b, "{m}");
    }
}

#[test]
fn an_empty_engine_like_another_shares_its_static_embedder_only() {
    let old = graph_engine();
    let mut config = IndexConfig::default();
    config.bm25.k1 = 1.2;
    let mut e = old.empty_like(config).unwrap();
    // The same embedder, not a copy; nothing of the old corpus, graph or configuration.
    assert!(Rc::ptr_eq(
        e.embedder(EmbedderSlot::Static).unwrap(),
        old.embedder(EmbedderSlot::Static).unwrap()
    ));
    assert!(e.embedder(EmbedderSlot::Minilm).is_none());
    let s = e.stats();
    assert_eq!((s.passages, s.built), (0, false));
    assert_eq!(e.config().bm25.k1, 1.2);
    // Built on another corpus, it offers the static embedder's methods, and its dense ranking
    // is that of an engine given the embedder afresh.
    e.add_passages(second()).unwrap();
    e.build(&mut |_, _, _| {}).unwrap();
    assert!(e.supports(Method::Dense) && !e.supports(Method::Catrag));
    let mut fresh = Engine::new(IndexConfig::default()).unwrap();
    fresh.set_embedder(EmbedderSlot::Static, static_embedder(), &mut |_, _, _| {}).unwrap();
    fresh.add_passages(second()).unwrap();
    fresh.build(&mut |_, _, _| {}).unwrap();
    let ranked = |e: &mut Engine| {
        let found = e.search("capital city of France", 2, Method::Dense, QueryOptions::default()).unwrap();
        found.hits.iter().map(|h| (h.passage, h.score.to_bits())).collect::<Vec<_>>()
    };
    assert_eq!(ranked(&mut e), ranked(&mut fresh));
    // An engine without a static embedder gives one without.
    let bare = Engine::new(IndexConfig::default()).unwrap();
    assert!(bare.empty_like(IndexConfig::default()).unwrap().embedder(EmbedderSlot::Static).is_none());
    // Bad BM25 parameters are refused as by `Engine::new`.
    let mut bad = IndexConfig::default();
    bad.bm25.b = 2.0;
    assert!(old.empty_like(bad).is_err());
}
