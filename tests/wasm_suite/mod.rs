//! The wasm test suite, run in Node (`tests/wasm_node.rs`) and in headless Chromium
//! (`tests/wasm_browser.rs`): the JS-facing `Engine` gives the same BM25 ranking as native
//! (via the committed expected file that `tests/bm25_parity.rs` checks natively), and its
//! errors are JS `Error`s with messages a user can act on.

use cairn::wasm::{Engine, QueryArg};
use serde::Deserialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::common::{self, Expected};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hit {
    rank: usize,
    id: String,
    title: String,
    text: String,
    score: f32,
    highlights: Vec<(u32, u32)>,
}

fn message(e: wasm_bindgen::JsError) -> String {
    let v: JsValue = e.into();
    v.dyn_into::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default()
}

/// The static embedder's files, as the page fetches them.
const TABLE: &[u8] = include_bytes!("../../assets/static-minilm.bin");
const VOCAB: &str = include_str!("../../assets/minilm-vocab.txt");

/// `{query: q, k, method}` (explain off), as the page sends it.
fn query(q: &str, k: usize, method: &str) -> QueryArg {
    let o = js_sys::Object::new();
    js_sys::Reflect::set(&o, &"query".into(), &q.into()).unwrap();
    js_sys::Reflect::set(&o, &"k".into(), &JsValue::from(k as f64)).unwrap();
    js_sys::Reflect::set(&o, &"method".into(), &method.into()).unwrap();
    o.unchecked_into()
}

/// [`query`] with `explain` on.
fn explained(q: &str, k: usize, method: &str) -> QueryArg {
    let o: QueryArg = query(q, k, method);
    js_sys::Reflect::set(&o, &"explain".into(), &true.into()).unwrap();
    o
}

/// `Engine.query`'s whole answer.
fn ask(engine: &mut Engine, q: QueryArg) -> serde_json::Value {
    serde_wasm_bindgen::from_value(engine.query(q, None).map_err(message).unwrap()).unwrap()
}

fn search_with(engine: &mut Engine, q: &str, k: usize, method: &str) -> Vec<Hit> {
    serde_json::from_value(ask(engine, query(q, k, method))["hits"].clone()).unwrap()
}

fn search(engine: &mut Engine, q: &str, k: usize) -> Vec<Hit> {
    search_with(engine, q, k, "bm25")
}

fn available(engine: &Engine) -> Vec<String> {
    serde_wasm_bindgen::from_value(engine.available_methods()).unwrap()
}

#[wasm_bindgen_test]
fn wasm_search_equals_native_for_every_method() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    assert_eq!(engine.add_jsonl("corpus.jsonl", common::CORPUS).map_err(message).unwrap(), 100);
    engine.build(None).map_err(message).unwrap();
    assert_eq!(available(&engine), vec!["bm25"]);
    let e = engine.query(query("x", 5, "dense"), None).err().map(message).unwrap();
    assert!(e.contains("needs the static embedder"), "{e}");
    // Loading the embedder after build embeds the built index's passages at once.
    engine.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    assert_eq!(available(&engine), vec!["bm25", "dense", "hybrid"]);
    let want = common::expected();
    for method in common::METHODS {
        let got: Vec<Expected> = common::questions()
            .into_iter()
            .map(|q| {
                let hits = search_with(&mut engine, &q, common::K, method);
                assert!(hits.iter().enumerate().all(|(i, h)| h.rank == i + 1));
                Expected {
                    ids: hits.iter().map(|h| h.id.clone()).collect(),
                    scores: hits.iter().map(|h| h.score).collect(),
                    question: q,
                }
            })
            .collect();
        common::assert_same(&got, &want[method]);
    }
}

#[wasm_bindgen_test]
fn an_empty_engine_like_another_shares_its_embedder() {
    let mut first = Engine::new(None).map_err(message).unwrap();
    first.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    let mut engine = first.empty_like(None).map_err(message).unwrap();
    // The old engine can go: the new one holds the embedder itself.
    drop(first);
    let stats: serde_json::Value = serde_wasm_bindgen::from_value(engine.stats()).unwrap();
    assert_eq!(stats["passages"], 0);
    assert_eq!(engine.add_jsonl("corpus.jsonl", common::CORPUS).map_err(message).unwrap(), 100);
    engine.build(None).map_err(message).unwrap();
    assert_eq!(available(&engine), vec!["bm25", "dense", "hybrid"]);
    // The same dense ranking, ids and scores, as the native reference.
    let want = common::expected();
    let got: Vec<Expected> = common::questions()
        .into_iter()
        .map(|q| {
            let hits = search_with(&mut engine, &q, common::K, "dense");
            Expected {
                ids: hits.iter().map(|h| h.id.clone()).collect(),
                scores: hits.iter().map(|h| h.score).collect(),
                question: q,
            }
        })
        .collect();
    common::assert_same(&got, &want["dense"]);
    // A configuration is read as by the constructor: unknown keys are refused.
    let bad = js_sys::JSON::parse(r#"{"nope": 1}"#).unwrap();
    let e = engine.empty_like(Some(bad.unchecked_into())).err().map(message).unwrap();
    assert!(e.starts_with("invalid configuration"), "{e}");
}

#[wasm_bindgen_test]
fn a_corrupt_embedding_table_is_rejected() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    let e = engine.load_static_embedder(&TABLE[..1000], VOCAB, None).err().map(message).unwrap();
    assert!(e.starts_with("static embedding table"), "{e}");
    assert_eq!(available(&engine), vec!["bm25"]);
}

#[wasm_bindgen_test]
fn highlights_are_utf16_ranges_of_query_words() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    engine
        .add_jsonl("x.jsonl", "{\"id\":\"e\",\"title\":\"Émile\",\"text\":\"𝄞 Émile Zola wrote novels\"}")
        .map_err(message)
        .unwrap();
    engine.build(None).map_err(message).unwrap();
    let hits = search(&mut engine, "zola novel", 5);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].title, "Émile");
    // "𝄞" is two UTF-16 units: "Zola" starts at 2 + 1 + 5 + 1 = 9, "novels" at 19.
    assert_eq!(hits[0].highlights, vec![(9, 13), (20, 26)]);
    let units: Vec<u16> = hits[0].text.encode_utf16().collect();
    assert_eq!(String::from_utf16(&units[9..13]).unwrap(), "Zola");
}

#[wasm_bindgen_test]
fn errors_are_js_errors_with_actionable_messages() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    let e = engine.query(query("anything", 5, "bm25"), None).err().map(message).unwrap();
    assert!(e.contains("not built"), "{e}");
    let e = engine.add_jsonl("bad.jsonl", "{\"text\":\"ok\"}\n{\"text\": oops}").err().map(message).unwrap();
    assert!(e.starts_with("bad.jsonl, line 2: not valid JSON"), "{e}");
    assert_eq!(
        engine.add_jsonl("good.jsonl", "{\"id\":\"a\",\"text\":\"alpha\"}").map_err(message).unwrap(),
        1
    );
    engine.build(None).map_err(message).unwrap();
    assert_eq!(search(&mut engine, "alpha", 5).len(), 1);
    // A rejected batch after build leaves the index built and searchable.
    let e = engine.add_jsonl("dup.jsonl", "{\"id\":\"a\",\"text\":\"again\"}").err().map(message).unwrap();
    assert_eq!(e, "passage \"a\": this id is already in the corpus");
    let e = engine.add_jsonl("bad.jsonl", "{\"id\":\"b\",\"text\":\"x\"}\n{").err().map(message).unwrap();
    assert!(e.starts_with("bad.jsonl, line 2: not valid JSON"), "{e}");
    assert_eq!(search(&mut engine, "alpha", 5).len(), 1);
    let bad_k = js_sys::JSON::parse(r#"{"query":"alpha","k":0.5}"#).unwrap();
    let e = engine.query(bad_k.unchecked_into(), None).err().map(message).unwrap();
    assert!(e.contains("k must be a whole number"), "{e}");
    let e = engine.query(query("alpha", 5, "colbert"), None).err().map(message).unwrap();
    assert!(e.contains("unknown method \"colbert\""), "{e}");
    let unknown = js_sys::JSON::parse(r#"{"query":"alpha","methd":"bm25"}"#).unwrap();
    let e = engine.query(unknown.unchecked_into(), None).err().map(message).unwrap();
    assert!(e.starts_with("invalid query") && e.contains("methd"), "{e}");
    let bad_config = js_sys::JSON::parse("{\"bm25\":{\"k\":1}}").unwrap();
    let e = Engine::new(Some(bad_config.unchecked_into())).err().map(message).unwrap();
    assert!(e.starts_with("invalid configuration"), "{e}");
}

#[wasm_bindgen_test]
fn truncate_undoes_a_partly_added_batch() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    engine.add_document("one.md", "Alpha river.").map_err(message).unwrap();
    engine.build(None).map_err(message).unwrap();
    // A batch of two documents whose second is rejected: the first went in, so undo it.
    engine.add_document("two.md", "Beta mountain.").map_err(message).unwrap();
    assert!(engine.add_document("one.md", "Gamma lake.").is_err());
    engine.truncate(1);
    engine.build(None).map_err(message).unwrap();
    assert_eq!(search(&mut engine, "alpha", 5).len(), 1);
    assert!(search(&mut engine, "beta", 5).is_empty());
    // Truncating to the current size changes nothing and keeps the index built.
    engine.truncate(1);
    assert_eq!(search(&mut engine, "alpha", 5).len(), 1);
}

#[wasm_bindgen_test]
fn documents_split_into_passages() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    let n = engine
        .add_document("notes.md", "# Rivers\n\nThe Rhine flows north.\n\n# Mountains\n\nThe Alps are high.")
        .map_err(message)
        .unwrap();
    assert_eq!(n, 2);
    engine.build(None).map_err(message).unwrap();
    let hits = search(&mut engine, "alps", 5);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, "notes.md#2");
    assert_eq!(hits[0].title, "notes.md › Mountains");
}

/// `attachVectors`: vectors made outside the engine (the page's MiniLM package) serve
/// `dense-minilm`, with a JS function embedding the query. Hand-made 2-d vectors: passage i sits
/// at angle 0°, 60°, 120°; a query "b" at 50° is nearest passage 2 (cos 10° = 0.985), then 1
/// (cos 50° = 0.643), then 3 (cos 70° = 0.342).
#[wasm_bindgen_test]
fn attached_vectors_rank_dense_minilm_with_a_js_query_embedder() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    let passages = js_sys::JSON::parse(
        r#"[{"id":"p1","title":"A","text":"first"},{"id":"p2","title":"","text":"second"},{"id":"p3","title":"C","text":""}]"#,
    )
    .unwrap();
    engine.add_passages(passages).map_err(message).unwrap();
    let embed = js_sys::Function::new_with_args(
        "t",
        "const a = t === 'b' ? 50 : 0; return new Float32Array([Math.cos(a * Math.PI / 180), Math.sin(a * Math.PI / 180)]);",
    );
    let rad = |d: f32| d.to_radians();
    let vectors: Vec<f32> = [0.0f32, 60.0, 120.0].iter().flat_map(|&d| [rad(d).cos(), rad(d).sin()]).collect();

    // not built yet
    let e = engine.attach_vectors("minilm", 2, vectors.clone(), embed.clone()).err().map(message).unwrap();
    assert!(e.contains("not built"), "{e}");
    engine.build(None).map_err(message).unwrap();

    // the texts an outside embedder gets: "{title} {text}", clamped to the corpus
    let texts: Vec<String> = serde_wasm_bindgen::from_value(engine.passage_texts(0, 10)).unwrap();
    assert_eq!(texts, vec!["A first", "second", "C"]);
    let tail: Vec<String> = serde_wasm_bindgen::from_value(engine.passage_texts(2, 3)).unwrap();
    assert_eq!(tail, vec!["C"]);
    let none: Vec<String> = serde_wasm_bindgen::from_value(engine.passage_texts(5, 2)).unwrap();
    assert!(none.is_empty());

    // wrong shapes and slots are errors that name the problem
    let e = engine.attach_vectors("minilm", 3, vectors.clone(), embed.clone()).err().map(message).unwrap();
    assert!(e.contains("dimension") || e.contains("multiple"), "{e}");
    let e = engine.attach_vectors("minilm", 2, vectors[..4].to_vec(), embed.clone()).err().map(message).unwrap();
    assert!(e.contains("2 vectors") && e.contains("3 passages"), "{e}");
    let e = engine.attach_vectors("static", 2, vectors.clone(), embed.clone()).err().map(message).unwrap();
    assert!(e.contains("only \"minilm\""), "{e}");
    assert_eq!(available(&engine), vec!["bm25"]);

    engine.attach_vectors("minilm", 2, vectors, embed).map_err(message).unwrap();
    assert_eq!(available(&engine), vec!["bm25", "dense-minilm"]);
    let hits = search_with(&mut engine, "b", 3, "dense-minilm");
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, vec!["p2", "p1", "p3"]);
    let want = [10f32, 50.0, 70.0].map(|d| rad(d).cos());
    for (h, w) in hits.iter().zip(want) {
        assert!((h.score - w).abs() < 1e-5, "{} scored {}, expected {w}", h.id, h.score);
    }

    // a query embedder that returns the wrong thing is a clear error, not a panic
    let bad = js_sys::Function::new_with_args("t", "return [1, 2];");
    let mut engine2 = Engine::new(None).map_err(message).unwrap();
    engine2.add_passages(js_sys::JSON::parse(r#"[{"text":"x"}]"#).unwrap()).map_err(message).unwrap();
    engine2.build(None).map_err(message).unwrap();
    engine2.attach_vectors("minilm", 2, vec![1.0, 0.0], bad).map_err(message).unwrap();
    let e = engine2.query(query("q", 1, "dense-minilm"), None).err().map(message).unwrap();
    assert!(e.contains("embedQuery must return a Float32Array"), "{e}");

    // a new build drops the attached vectors
    engine.build(None).map_err(message).unwrap();
    assert_eq!(available(&engine), vec!["bm25"]);
}

/// The knowledge graph through the JS API: `buildGraph` needs the static embedder, makes
/// `hipporag` and `catrag` available, `passageGraph` shows a passage's triples (none for text
/// that is not English), `explain` gives per-hit explanations, and a later add extends the graph.
#[wasm_bindgen_test]
fn knowledge_graph_builds_explains_and_grows() {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    let passages = js_sys::JSON::parse(
        r#"[{"id":"a","title":"Teutberga","text":"Teutberga was queen of Lotharingia. She married Lothair II."},
            {"id":"b","title":"Lothair II","text":"Lothair II was king of Lotharingia. His father was Lothair I."},
            {"id":"c","title":"Москва","text":"Москва — столица России и крупнейший город страны."}]"#,
    )
    .unwrap();
    engine.add_passages(passages).map_err(message).unwrap();
    engine.build(None).map_err(message).unwrap();
    let e = engine.build_graph(None).err().map(message).unwrap();
    assert!(e.contains("needs the static embedder"), "{e}");
    assert!(engine.graph_report().is_null());

    engine.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    let report: serde_json::Value = serde_wasm_bindgen::from_value(engine.build_graph(None).map_err(message).unwrap()).unwrap();
    assert_eq!(report["counts"]["passages"], 3);
    assert_eq!(report["extract"]["english_passages"], 2);
    assert_eq!(report["extract"]["non_english_passages"], 1);
    assert!(report["triples"].as_u64().unwrap() >= 3, "{report}");
    assert_eq!(available(&engine), vec!["bm25", "dense", "hybrid", "hipporag", "catrag"]);

    let g: serde_json::Value = serde_wasm_bindgen::from_value(engine.passage_graph("a").map_err(message).unwrap()).unwrap();
    assert_eq!(g["english"], true);
    let triples = g["triples"].as_array().unwrap();
    assert!(
        triples.iter().any(|t| t["subject"] == "Teutberga" && t["object"] == "Lotharingia"),
        "expected (Teutberga, …, Lotharingia) among {triples:?}"
    );
    let ru: serde_json::Value = serde_wasm_bindgen::from_value(engine.passage_graph("c").map_err(message).unwrap()).unwrap();
    assert_eq!(ru["english"], false);
    assert!(ru["triples"].as_array().unwrap().is_empty());
    let e = engine.passage_graph("zzz").err().map(message).unwrap();
    assert!(e.contains("no passage has the id"), "{e}");

    let hits = search_with(&mut engine, "Who was the father of the husband of Teutberga?", 3, "catrag");
    assert_eq!(hits.len(), 3);
    let out = ask(&mut engine, explained("Who was the father of the husband of Teutberga?", 3, "catrag"));
    let x = &out["explanation"];
    assert_eq!(x["passages"].as_array().unwrap().len(), 3);
    assert_eq!(x["method"], "catrag");
    assert_eq!(out["tierer"], "embedding-similarity");
    // a method that walks no graph has no explanation
    assert!(ask(&mut engine, explained("x", 3, "bm25"))["explanation"].is_null());

    // adding a passage and building again extends the graph (only the new passage is extracted)
    let more = js_sys::JSON::parse(r#"[{"id":"d","title":"Lothair I","text":"Lothair I was emperor. He was born in 795."}]"#).unwrap();
    engine.add_passages(more).map_err(message).unwrap();
    assert!(engine.graph_report().is_null(), "an unbuilt engine has no graph to report");
    engine.build(None).map_err(message).unwrap();
    let grown: serde_json::Value = serde_wasm_bindgen::from_value(engine.graph_report()).unwrap();
    assert_eq!(grown["counts"]["passages"], 4);
    assert_eq!(grown["extract"]["passages"], 4);
    assert!(grown["triples"].as_u64() > report["triples"].as_u64());
    assert_eq!(available(&engine), vec!["bm25", "dense", "hybrid", "hipporag", "catrag"]);
}

/// `len crc32` of the index file of the hotpot sample (static embedder and knowledge graph),
/// computed natively by `index::format_tests::native_bytes_match_the_committed_digest`: wasm
/// must write the very same bytes.
const INDEX_DIGEST: &str = include_str!("../fixtures/hotpot-sample/index.digest");

fn built_sample_with_graph() -> Engine {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    engine.add_jsonl("corpus.jsonl", common::CORPUS).map_err(message).unwrap();
    engine.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    engine.build(None).map_err(message).unwrap();
    engine.build_graph(None).map_err(message).unwrap();
    engine
}

#[wasm_bindgen_test]
fn saved_index_has_the_native_bytes_and_loads_with_identical_rankings() {
    let mut engine = built_sample_with_graph();
    let bytes = engine.save_index().map_err(message).unwrap();
    assert_eq!(format!("{} {:08x}", bytes.len(), crc32fast::hash(&bytes)), INDEX_DIGEST.trim());
    let mut loaded = Engine::new(None).map_err(message).unwrap();
    loaded.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    loaded.load_index(&bytes, None).map_err(message).unwrap();
    assert_eq!(available(&loaded), vec!["bm25", "dense", "hybrid", "hipporag", "catrag"]);
    // each step of the load, timed with Date.now()
    let phases: Vec<(String, f64)> = serde_wasm_bindgen::from_value(loaded.load_phases()).unwrap();
    let names: Vec<&str> = phases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["split", "corpus", "bm25", "dense", "text-pipeline", "graph", "prepare-graph-search"]);
    assert!(phases.iter().all(|(_, ms)| ms.is_finite() && *ms >= 0.0), "{phases:?}");
    for method in ["bm25", "dense", "hybrid", "hipporag", "catrag"] {
        for q in common::questions() {
            let a: Vec<(String, f32)> =
                search_with(&mut engine, &q, 10, method).into_iter().map(|h| (h.id, h.score)).collect();
            let b: Vec<(String, f32)> =
                search_with(&mut loaded, &q, 10, method).into_iter().map(|h| (h.id, h.score)).collect();
            assert_eq!(a, b, "{method}: {q}");
        }
    }
    assert_eq!(loaded.save_index().map_err(message).unwrap(), bytes);
    // The corpus as JSONL (share links) reads back into the same passages.
    let jsonl = loaded.corpus_jsonl().map_err(message).unwrap();
    assert_eq!(jsonl, engine.corpus_jsonl().map_err(message).unwrap());
    let mut again = Engine::new(None).map_err(message).unwrap();
    assert_eq!(again.add_jsonl("shared.jsonl", &jsonl).map_err(message).unwrap(), 100);
    again.build(None).map_err(message).unwrap();
    assert_eq!(search(&mut again, "Playboy Club", 5).iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
        search(&mut engine, "Playboy Club", 5).iter().map(|h| h.id.clone()).collect::<Vec<_>>());
}

/// A static site's index in three parts (`cairn index` writes them natively): the keyword
/// part answers BM25 as the whole index does, with ids and titles, before the texts; the texts
/// and then the extras complete it to the whole index.
#[wasm_bindgen_test]
fn a_site_index_answers_from_its_keyword_part_and_completes_with_its_texts_and_extras() {
    let mut engine = built_sample_with_graph();
    let whole = engine.save_index().map_err(message).unwrap();
    let (native, _) = cairn::index::Index::from_bytes(
        &whole,
        &[(cairn::index::EmbedderSlot::Static, std::rc::Rc::new(cairn::embed::StaticEmbedder::minilm().unwrap()))],
        &mut |_, _| {},
    )
    .unwrap();
    let parts = native.to_split_bytes().unwrap();
    let mut site = Engine::new(None).map_err(message).unwrap();
    site.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    site.load_index(&parts.base, None).map_err(message).unwrap();
    assert!(!site.texts_loaded());
    assert_eq!(available(&site), vec!["bm25"]);
    for q in common::questions() {
        let want = search(&mut engine, &q, 10);
        let got = search(&mut site, &q, 10);
        assert_eq!(got.len(), want.len(), "{q}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.rank, &g.id, &g.title, g.score), (w.rank, &w.id, &w.title, w.score), "{q}");
            assert_eq!(g.text, "", "{q}: no text before the texts file");
        }
    }
    // what needs the texts says so, and nothing changes
    let e = site.corpus_jsonl().err().map(message).unwrap();
    assert!(e.starts_with("the passages' texts are not loaded yet"), "{e}");
    let e = site.add_jsonl("more.jsonl", r#"{"id": "new", "text": "More text."}"#).err().map(message).unwrap();
    assert!(e.contains("adding passages needs them"), "{e}");
    let e = site.load_index_extras(parts.extras.as_ref().unwrap(), None).err().map(message).unwrap();
    assert!(e.starts_with("the passages' texts are not loaded yet"), "{e}");
    let e = site.load_index_texts(&parts.base).err().map(message).unwrap();
    assert!(e.starts_with("the index file is corrupt"), "{e}");
    assert!(!site.texts_loaded());
    site.load_index_texts(&parts.texts).map_err(message).unwrap();
    assert!(site.texts_loaded());
    site.load_index_extras(parts.extras.as_ref().unwrap(), None).map_err(message).unwrap();
    assert_eq!(available(&site), vec!["bm25", "dense", "hybrid", "hipporag", "catrag"]);
    for method in ["bm25", "dense", "hybrid", "hipporag", "catrag"] {
        for q in common::questions() {
            let a: Vec<(String, String, f32)> =
                search_with(&mut engine, &q, 10, method).into_iter().map(|h| (h.id, h.text, h.score)).collect();
            let b: Vec<(String, String, f32)> =
                search_with(&mut site, &q, 10, method).into_iter().map(|h| (h.id, h.text, h.score)).collect();
            assert_eq!(a, b, "{method}: {q}");
        }
    }
    assert_eq!(site.save_index().map_err(message).unwrap(), whole);
}

#[wasm_bindgen_test]
fn load_index_rejects_bad_files_with_their_own_messages_and_keeps_the_engine() {
    let engine = built_sample_with_graph();
    let bytes = engine.save_index().map_err(message).unwrap();
    let mut target = Engine::new(None).map_err(message).unwrap();
    target.add_jsonl("corpus.jsonl", common::CORPUS).map_err(message).unwrap();
    target.build(None).map_err(message).unwrap();
    // The graph needs the static embedder, which `target` has not loaded.
    let e = target.load_index(&bytes, None).err().map(message).unwrap();
    assert!(e.contains("needs the static embedder"), "{e}");
    target.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    let e = target.load_index(&bytes[..bytes.len() / 2], None).err().map(message).unwrap();
    assert!(e.starts_with("the index file is truncated"), "{e}");
    let mut flipped = bytes.clone();
    let at = flipped.len() - 100;
    flipped[at] ^= 4;
    let e = target.load_index(&flipped, None).err().map(message).unwrap();
    assert!(e.starts_with("the index file is corrupt") && e.contains("checksum"), "{e}");
    let mut newer = bytes.clone();
    newer[8] = 9;
    let e = target.load_index(&newer, None).err().map(message).unwrap();
    assert!(e.contains("format version 9"), "{e}");
    let e = target.load_index(b"hello", None).err().map(message).unwrap();
    assert!(e.starts_with("not a Cairn index file"), "{e}");
    // Still the engine it was: built, searchable.
    assert_eq!(search(&mut target, "Playboy Club", 3).len(), 3);
}

// --- CAGE over stored graph embeddings: the main package builds the inputs of passages without
// Z (cageMissing), stores Z computed elsewhere (cageStore; the R-GCN runs in the MiniLM package,
// tests/wasm_cage.rs) and searches with no model (cageSearch). With identical graph embeddings
// every coherence is equal, min-max gives 0, so the fused score is α·relevance with relevance the
// first stage's min-max normalised score: dense's order.
#[wasm_bindgen_test]
fn cage_stored_embeddings_with_equal_values_give_dense_order() {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Missing {
        rows: Vec<u32>,
        remaining: usize,
        batch: usize,
        nodes: usize,
        channels: usize,
        feature_dim: usize,
        features: Vec<f32>,
        adjacency: Vec<f32>,
    }
    #[derive(Deserialize)]
    struct CageHit {
        id: String,
        score: f32,
        relevance: f32,
        coherence: f32,
    }
    let mut engine = Engine::new(None).map_err(message).unwrap();
    engine.add_jsonl("corpus.jsonl", common::CORPUS).map_err(message).unwrap();
    engine.build(None).map_err(message).unwrap();
    engine.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    assert!(!available(&engine).contains(&"cage".to_string()), "no graph embeddings yet");
    let n = common::CORPUS.lines().filter(|l| !l.trim().is_empty()).count();
    let missing = |engine: &Engine, limit: f64| -> Missing {
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &JsValue::from_str("limit"), &JsValue::from(limit)).unwrap();
        let o: JsValue = o.into();
        serde_wasm_bindgen::from_value(engine.cage_missing(7, o).map_err(message).unwrap()).unwrap()
    };
    let first = missing(&engine, 16.0);
    assert_eq!(first.rows, (0..16.min(n as u32)).collect::<Vec<u32>>());
    assert_eq!(first.remaining, n);
    assert_eq!((first.batch, first.channels, first.feature_dim), (first.rows.len(), 10, 256));
    assert_eq!(first.features.len(), first.batch * first.nodes * 256);
    assert_eq!(first.adjacency.len(), first.batch * 10 * first.nodes * first.nodes);
    let e = engine.cage_store(7, first.rows.clone(), &[1.0; 7], 4).err().map(message).unwrap();
    assert!(e.contains("graph embeddings of 4 floats"), "{e}");
    loop {
        let m = missing(&engine, 256.0);
        if m.rows.is_empty() {
            break;
        }
        let left = engine.cage_store(7, m.rows.clone(), &vec![1.0f32; m.rows.len() * 4], 4).map_err(message).unwrap();
        assert_eq!(left, m.remaining - m.rows.len());
    }
    assert!(available(&engine).contains(&"cage".to_string()), "every passage has its Z");
    let q = "Which hotel houses the Playboy Club?";
    let dense = search_with(&mut engine, q, 20, "dense");
    let (lo, hi) = (dense.last().unwrap().score, dense[0].score);
    let out = ask(&mut engine, query(q, 5, "cage"));
    assert_eq!(out["candidates"], 20);
    assert!(out["rerankMs"].as_f64().is_some_and(|ms| ms >= 0.0), "{}", out["rerankMs"]);
    let hits: Vec<CageHit> = serde_json::from_value(out["hits"].clone()).unwrap();
    assert_eq!(hits.len(), 5);
    // equal coherence everywhere min–maxes to 0: the fused score is α · relevance
    let alpha = cairn::cage::CageConfig::default().alpha;
    for (h, d) in hits.iter().zip(&dense) {
        let r = (d.score - lo) / (hi - lo);
        assert_eq!(h.id, d.id);
        assert!((h.relevance - r).abs() < 1e-5 && (h.score - alpha * r).abs() < 1e-5, "{} {}", h.relevance, r);
        assert!((h.coherence - 1.0).abs() < 1e-5);
    }
    // the other methods' hits carry no CAGE terms
    assert!(ask(&mut engine, query(q, 5, "dense"))["hits"][0].get("relevance").is_none());
}

/// "Work is done once per query", counted by the engine's test hook (`__runCounts`:
/// `[firstStages, graphSearches]`): the page's one query door with its explanation runs the
/// graph search once, and a CAGE query over CatRAG runs its first stage once.
#[wasm_bindgen_test]
fn the_page_runs_each_stage_once_per_query() {
    let mut engine = built_sample_with_graph();
    let q = "Which hotel houses the Playboy Club?";
    engine.run_counts(true);
    let out = ask(&mut engine, explained(q, 5, "catrag"));
    assert_eq!(engine.run_counts(false), vec![1, 1], "a query with its explanation");
    let hits = out["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 5);
    assert_eq!(out["explanation"]["passages"].as_array().unwrap().len(), 5);
    // The same hits without the explanation, which also runs one graph search.
    let plain = search_with(&mut engine, q, 5, "catrag");
    assert_eq!(engine.run_counts(true), vec![2, 2]);
    let ids: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, plain.iter().map(|h| h.id.as_str()).collect::<Vec<_>>());
    // A non-graph method has no explanation and no graph search.
    let out = ask(&mut engine, explained(q, 5, "bm25"));
    assert!(out["explanation"].is_null());
    assert_eq!(engine.run_counts(true), vec![1, 0]);

    // catrag+cage: every passage's graph embedding stored (equal rows: this counts runs), then
    // one CAGE query runs CatRAG once as its first stage.
    let n = common::CORPUS.lines().filter(|l| !l.trim().is_empty()).count() as u32;
    engine.cage_store(7, (0..n).collect(), &vec![1.0f32; n as usize * 4], 4).map_err(message).unwrap();
    assert!(available(&engine).contains(&"catrag+cage".to_string()));
    engine.run_counts(true);
    let out = ask(&mut engine, explained(q, 5, "catrag+cage"));
    assert_eq!(out["hits"].as_array().unwrap().len(), 5);
    assert_eq!(engine.run_counts(false), vec![1, 1], "first stages, graph searches");
}

/// The page's query with LLM tiers as the worker runs it (`planLlmTiers`, the endpoint's tiers,
/// `query(q, plan)` with its explanation): one first stage and one graph search per query, for
/// catrag and for catrag+cage (whose first stage's walk takes the tiers, then CAGE reranks). The
/// endpoint's answers arrive between the two calls and touch no index (`LlmEndpoint::tier` reads
/// only the plan); here the plan goes unanswered, so every batch is Weak.
#[wasm_bindgen_test]
fn the_page_runs_one_graph_search_with_llm_tiers() {
    let mut engine = built_sample_with_graph();
    let endpoint = cairn::wasm::LlmEndpoint::new(r#"{"base_url":"http://127.0.0.1:9","model":"m"}"#, None)
        .map_err(message)
        .unwrap();
    let q = "Which hotel houses the Playboy Club?";
    engine.run_counts(true);
    let plan = engine.plan_llm_tiers(explained(q, 5, "catrag"), &endpoint).map_err(message).unwrap();
    assert_eq!(engine.run_counts(false), vec![1, 1], "the plan prepares the graph search");
    let plan = JsValue::from(plan);
    let out: serde_json::Value =
        serde_wasm_bindgen::from_value(engine.query(explained(q, 5, "catrag"), Some(plan.clone().unchecked_into())).map_err(message).unwrap())
            .unwrap();
    assert_eq!(engine.run_counts(false), vec![1, 1], "the tiered search and its explanation add none");
    assert_eq!(out["hits"].as_array().unwrap().len(), 5);
    assert_eq!(out["explanation"]["passages"].as_array().unwrap().len(), 5);
    assert_eq!(out["tierer"], "llm:m");
    assert!(out["tierFailures"].as_u64().unwrap() > 0, "unanswered batches are Weak, counted");
    // The same passages as the offline search with Weak tiers is not asserted: the offline
    // search tiers by embedding similarity. A plan is used once.
    let again = engine.query(explained(q, 5, "catrag"), Some(plan.unchecked_into())).err().map(message).unwrap();
    assert!(again.contains("LlmPlan"), "{again}");
    // Another query than the plan's is refused.
    let plan = JsValue::from(engine.plan_llm_tiers(query(q, 5, "catrag"), &endpoint).map_err(message).unwrap());
    let e = engine.query(query("another question", 5, "catrag"), Some(plan.unchecked_into())).err().map(message).unwrap();
    assert!(e.contains("plan the query again"), "{e}");

    // catrag+cage with LLM tiers: the plan walks the first stage (CAGE's candidates), the query
    // resumes it and reranks; still one first stage and one graph search.
    let n = common::CORPUS.lines().filter(|l| !l.trim().is_empty()).count() as u32;
    engine.cage_store(7, (0..n).collect(), &vec![1.0f32; n as usize * 4], 4).map_err(message).unwrap();
    engine.run_counts(true);
    let plan = JsValue::from(engine.plan_llm_tiers(query(q, 5, "catrag+cage"), &endpoint).map_err(message).unwrap());
    let out: serde_json::Value =
        serde_wasm_bindgen::from_value(engine.query(query(q, 5, "catrag+cage"), Some(plan.unchecked_into())).map_err(message).unwrap()).unwrap();
    assert_eq!(engine.run_counts(false), vec![1, 1], "plan and rerank: one walk");
    assert_eq!(out["hits"].as_array().unwrap().len(), 5);
    assert_eq!(out["tierer"], "llm:m");
    assert!(out["rerankMs"].as_f64().is_some(), "CAGE reranked the tiered walk");
    assert!(out["hits"][0]["coherence"].as_f64().is_some());
}
