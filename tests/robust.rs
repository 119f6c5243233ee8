//! Queries that used to give confident nonsense or nothing, through the public [`Index`] API:
//! accented names typed without accents, NFD passages found by NFC queries and the reverse,
//! accented names in several scripts, a CJK query, and queries that match nothing (every method
//! must say so the same way).

#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::index::{EmbedderSlot, IndexConfig, Method};
use cairn::search::{NOTHING_MATCHES, NOT_ENGLISH, WEAK_BY_MEANING};
use cairn::{Corpus, Index, Passage};

const NFD_CAFE: &str = "Cafe\u{301} Central is a coffee house in Zu\u{308}rich, near the lake.";

fn index() -> Index {
    let rows = [
        ("erdos", "Pál Erdős", "Pál Erdős was a Hungarian mathematician who wrote papers with many collaborators."),
        ("cafe", "Coffee houses", NFD_CAFE),
        ("wall", "长城", "长城是中国古代的军事防御工程。"),
        ("athens", "Ἀθῆναι", "Ἀθῆναι is the Greek name of Athens, the capital of Greece."),
        ("lodz", "Łódź", "Łódź is a city in central Poland."),
        ("thames", "River Thames", "The River Thames flows through London and Oxford in southern England."),
        ("moon", "Moon landing", "Apollo 11 landed two astronauts on the Moon in July 1969."),
    ];
    let mut c = Corpus::new();
    for (id, title, text) in rows {
        c.add(Passage { id: id.into(), title: title.into(), text: text.into() }).unwrap();
    }
    let mut index = Index::build(c, &IndexConfig::default()).unwrap();
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
    index.build_graph(e, &mut |_, _, _| {}).unwrap();
    index
}

fn top(index: &Index, query: &str, method: Method) -> Vec<String> {
    index
        .searcher().search(query, 3, method)
        .unwrap()
        .iter()
        .map(|h| index.corpus().get(h.passage).unwrap().id.clone())
        .collect()
}

#[test]
fn accents_fold_and_nfd_equals_nfc_in_bm25() {
    let index = index();
    // The NFD passage is stored in NFC (same look, one spelling).
    let cafe = index.corpus().get(index.corpus().index_of("cafe").unwrap()).unwrap();
    assert_eq!(cafe.text, "Café Central is a coffee house in Zürich, near the lake.");
    for (query, want) in [
        ("Pal Erdos", "erdos"),
        ("Erdos", "erdos"),
        ("PÁL ERDŐS", "erdos"),
        ("Zurich", "cafe"),
        ("Cafe", "cafe"),
        ("Café", "cafe"),
        ("Cafe\u{301}", "cafe"),
        ("Αθηναι", "athens"), // Greek without its polytonic accents
        ("Lodz", "lodz"),     // Polish stroke and acute
        ("长城", "wall"),
    ] {
        assert_eq!(top(&index, query, Method::Bm25).first().map(String::as_str), Some(want), "{query:?}");
    }
}

#[test]
fn highlights_point_at_the_stored_accented_words() {
    let index = index();
    let terms = index.searcher().query_terms("zurich cafe");
    let cafe = index.corpus().get(index.corpus().index_of("cafe").unwrap()).unwrap();
    let spans: Vec<&str> = index.searcher().highlights(&terms, &cafe.text).iter().map(|&(a, b)| &cafe.text[a..b]).collect();
    assert_eq!(spans, vec!["Café", "Zürich"]);
}

#[test]
fn a_query_that_matches_nothing_gets_nothing_from_every_lexical_and_graph_method() {
    let index = index();
    for query in ["zzqx vvbn", "???", "the of and"] {
        assert!(index.searcher().nothing_matches(query), "{query:?}");
        for method in [Method::Bm25, Method::Hybrid, Method::Hipporag, Method::Catrag] {
            assert!(index.searcher().search(query, 3, method).unwrap().is_empty(), "{query:?} {method:?}");
        }
        let g = index.searcher().search_graph(query, 3, Method::Catrag).unwrap();
        assert!(g.hits.is_empty() && g.retrieval.seeds.is_empty());
        assert_eq!(g.retrieval.warnings, vec![NOTHING_MATCHES.to_string()]);
    }
    assert!(!index.searcher().nothing_matches("Thames"));
}

#[test]
fn a_dense_answer_to_a_query_that_matches_nothing_is_marked_weak() {
    let index = index();
    // Known words (the static embedder gives them a vector), none of them in any passage.
    let query = "rocket spaceflight NASA";
    assert!(index.searcher().nothing_matches(query));
    for method in [Method::Bm25, Method::Hybrid, Method::Hipporag, Method::Catrag] {
        let r = index.searcher().run(&cairn::search::Query::new(query, 3, method)).unwrap();
        assert!(r.hits.is_empty() && r.trace.weak.is_none(), "{method:?}");
    }
    let r = index.searcher().run(&cairn::search::Query::new(query, 3, Method::Dense)).unwrap();
    assert_eq!(r.hits.len(), 3);
    assert_eq!(r.trace.weak, Some(WEAK_BY_MEANING));
    // One word of the query in the corpus: the dense hits are not weak.
    let r = index.searcher().run(&cairn::search::Query::new("Apollo rocket", 3, Method::Dense)).unwrap();
    assert_eq!(r.hits.len(), 3);
    assert_eq!(r.trace.weak, None);
    // Nonsense still embeds (its WordPiece pieces have vectors): dense ranks, marked weak.
    for query in ["zzqx vvbn", "???"] {
        let r = index.searcher().run(&cairn::search::Query::new(query, 3, Method::Dense)).unwrap();
        assert_eq!(r.trace.weak, (!r.hits.is_empty()).then_some(WEAK_BY_MEANING), "{query:?}");
    }
}

#[test]
fn a_cjk_query_puts_its_passage_first_in_every_method() {
    let index = index();
    for method in [Method::Bm25, Method::Dense, Method::Hybrid, Method::Hipporag, Method::Catrag] {
        assert_eq!(top(&index, "长城", method).first().map(String::as_str), Some("wall"), "{method:?}");
    }
    let g = index.searcher().search_graph("长城", 3, Method::Catrag).unwrap();
    assert_eq!(g.retrieval.warnings, vec![NOT_ENGLISH.to_string()]);
    assert!(g.retrieval.fallback.is_some());
    // An English query with accented names stays a graph query.
    let g = index.searcher().search_graph("Who wrote papers with Pál Erdős?", 3, Method::Catrag).unwrap();
    assert!(g.retrieval.fallback.is_none() && !g.retrieval.seeds.is_empty());
}
