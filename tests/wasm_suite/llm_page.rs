//! The page's LLM NER and LLM OpenIE through the JS API (`LlmEndpoint.entities`,
//! `LlmEndpoint.openiePassage`, `Engine.planLlmTiers(query, options, names)`,
//! `Engine.buildGraphFromLlmTriples`) in headless Chromium against the loopback fault server
//! (`tools/llm_fault_server.py`; `CAIRN_LLM_FAULT_URL` set by `npm run test:wasm-browser`).
//! Expected values come from the fault server's fixed answers and from the rule-based extractor
//! run directly (`cairn::extract`).

use cairn::wasm::{Engine, LlmEndpoint, QueryArg};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

const TABLE: &[u8] = include_bytes!("../../assets/static-minilm.bin");
const VOCAB: &str = include_str!("../../assets/minilm-vocab.txt");

const PASSAGES: &str = r#"[
  {"id":"a","title":"Teutberga","text":"Teutberga was queen of Lotharingia. She married Lothair II."},
  {"id":"b","title":"Cairn Fault Entity","text":"The drummer played in a band from Toronto."},
  {"id":"c","title":"Lothair I","text":"Lothair I was emperor. He was born in 795."}
]"#;

fn base() -> &'static str {
    option_env!("CAIRN_LLM_FAULT_URL")
        .expect("CAIRN_LLM_FAULT_URL is not set: run `npm run test:wasm-browser` (it starts tools/llm_fault_server.py)")
}

fn message(e: wasm_bindgen::JsError) -> String {
    let v: JsValue = e.into();
    v.dyn_into::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default()
}

fn endpoint(route: &str, extra: Value) -> LlmEndpoint {
    let mut cfg = json!({"base_url": format!("{}/{route}", base()), "model": "fault", "retries": 0,
                         "backoff_ms": 10, "timeout_ms": 5000});
    for (k, v) in extra.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    LlmEndpoint::new(&cfg.to_string(), None).map_err(message).unwrap()
}

async fn resolve(p: js_sys::Promise) -> Value {
    let v = JsFuture::from(p).await.expect("the promise never rejects");
    serde_wasm_bindgen::from_value(v).unwrap()
}

/// `{query: q, k, method: "catrag", explain: true}` and, when given, the LLM NER's `entities`.
fn query(q: &str, k: usize, entities: Option<Vec<String>>) -> QueryArg {
    let mut v = json!({"query": q, "k": k, "method": "catrag", "explain": true});
    if let Some(names) = entities {
        v["entities"] = json!(names);
    }
    js_sys::JSON::parse(&v.to_string()).unwrap().unchecked_into()
}

fn built() -> Engine {
    let mut engine = Engine::new(None).map_err(message).unwrap();
    engine.add_passages(js_sys::JSON::parse(PASSAGES).unwrap()).map_err(message).unwrap();
    engine.load_static_embedder(TABLE, VOCAB, None).map_err(message).unwrap();
    engine.build(None).map_err(message).unwrap();
    engine
}

/// The rule-based triples of passage `i` of PASSAGES (extracted directly), as
/// `(subject, relation, object)`.
fn rule_triples(i: u32) -> Vec<(String, String, String)> {
    let ps: Vec<cairn::Passage> = serde_json::from_str(PASSAGES).unwrap();
    let pipeline = cairn::text::Pipeline::english().unwrap();
    let out = cairn::extract::extract_passages(&pipeline, i, &ps[i as usize..i as usize + 1], &mut |_, _| {});
    out.triples.into_iter().map(|t| (t.subject, t.relation, t.object)).collect()
}

fn graph_triples(engine: &Engine, id: &str) -> Vec<(String, String, String)> {
    let g: Value = serde_wasm_bindgen::from_value(engine.passage_graph(id).map_err(message).unwrap()).unwrap();
    g["triples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap().to_string();
            (s("subject"), s("relation"), s("object"))
        })
        .collect()
}

/// LLM OpenIE: one call per passage, its triples in the graph; a failed passage keeps its
/// rule-based triples and is counted; a passage outside the corpus is an error, not a call.
#[wasm_bindgen_test]
async fn llm_openie_builds_the_graph_with_rule_fallback() {
    let mut engine = built();
    let ok = endpoint("openie", json!({}));
    let r = resolve(ok.openie_passage(&engine, 0)).await;
    assert_eq!(r["triples"], json!([["Teutberga", "is known for", "Cairn Fault Fact"]]));
    assert_eq!((r["error"].clone(), r["cancelled"].clone()), (Value::Null, json!(false)));
    let r1 = resolve(ok.openie_passage(&engine, 1)).await;
    assert_eq!(r1["triples"], json!([["Cairn Fault Entity", "is known for", "Cairn Fault Fact"]]));
    let none = resolve(ok.openie_passage(&engine, 9)).await;
    assert_eq!(none["triples"], json!([]));
    assert!(none["error"].as_str().unwrap().contains("no passage 9"), "{none}");
    assert_eq!(ok.requests_sent(), 2.0);
    // Passage 2 at an endpoint failing with HTTP 500: no triple, an error.
    let bad = endpoint("500", json!({}));
    let r2 = resolve(bad.openie_passage(&engine, 2)).await;
    assert_eq!(r2["triples"], json!([]));
    assert!(r2["error"].as_str().unwrap().contains("HTTP 500"), "{r2}");

    let per = serde_wasm_bindgen::to_value(&json!([r["triples"], r1["triples"], null])).unwrap();
    let per = js_sys::JSON::parse(&js_sys::JSON::stringify(&per).unwrap().as_string().unwrap()).unwrap();
    let out: Value =
        serde_wasm_bindgen::from_value(engine.build_graph_from_llm_triples(per, None).map_err(message).unwrap()).unwrap();
    let fallback = rule_triples(2);
    assert!(!fallback.is_empty(), "the fallback passage has rule-based triples");
    assert_eq!(out["llmPassages"], 2);
    assert_eq!(out["fallbackPassages"], 1);
    assert_eq!(out["llmTriples"], 2);
    assert_eq!(out["report"]["triples"], json!(2 + fallback.len()));
    assert_eq!(out["report"]["counts"]["passages"], 3);
    let fact = |s: &str| vec![(s.to_string(), "is known for".to_string(), "Cairn Fault Fact".to_string())];
    assert_eq!(graph_triples(&engine, "a"), fact("Teutberga"));
    assert_eq!(graph_triples(&engine, "b"), fact("Cairn Fault Entity"));
    // The fallback passage's facts are those of the rule-based graph build.
    let mut rule_engine = built();
    rule_engine.build_graph(None).map_err(message).unwrap();
    let rule_c = graph_triples(&rule_engine, "c");
    assert!(!rule_c.is_empty());
    assert_eq!(graph_triples(&engine, "c"), rule_c);

    // More entries than passages: refused, the graph kept.
    let four = js_sys::JSON::parse("[null, null, null, null]").unwrap();
    let e = engine.build_graph_from_llm_triples(four, None).err().map(message).unwrap();
    assert!(e.contains("4 passages, but the corpus has 3"), "{e}");
    assert_eq!(graph_triples(&engine, "a"), fact("Teutberga"));
}

/// A hung endpoint does not hang the build: each passage's call ends at its deadline, and after
/// `breaker_failures` failures the breaker answers at once, without a request; a cancel ends a
/// call in flight.
#[wasm_bindgen_test]
async fn llm_openie_against_a_hung_endpoint_ends() {
    let engine = built();
    let hung = endpoint("timeout", json!({"query_deadline_ms": 600, "breaker_failures": 2}));
    for i in 0..2 {
        let r = resolve(hung.openie_passage(&engine, i)).await;
        assert_eq!(r["triples"], json!([]));
        assert!(r["error"].as_str().is_some(), "{r}");
    }
    assert_eq!(hung.requests_sent(), 2.0);
    let r = resolve(hung.openie_passage(&engine, 2)).await;
    assert_eq!(r["breakerOpen"], json!(true), "{r}");
    assert_eq!(r["triples"], json!([]));
    assert_eq!(hung.requests_sent(), 2.0, "an open breaker sends nothing");

    let slow = endpoint("timeout", json!({}));
    let p = slow.openie_passage(&engine, 0);
    slow.cancel();
    let r = resolve(p).await;
    assert_eq!((r["cancelled"].clone(), r["triples"].clone()), (json!(true), json!([])), "{r}");
    slow.resume();
}

/// LLM NER: the endpoint's names are what CatRAG anchors on (the query does not mention them);
/// without names, or after a failed call, the rule-based mentions; the names do not outlive the
/// planned search.
#[wasm_bindgen_test]
async fn llm_ner_names_anchor_the_graph_search() {
    let mut engine = built();
    let ok = endpoint("openie", json!({}));
    let mut per = Vec::new();
    for i in 0..3 {
        per.push(resolve(ok.openie_passage(&engine, i)).await["triples"].clone());
    }
    let per = js_sys::JSON::parse(&Value::Array(per).to_string()).unwrap();
    engine.build_graph_from_llm_triples(per, None).map_err(message).unwrap();

    let q = "Who was queen of Lotharingia?";
    let before = engine.query(query(q, 3, None), None).map_err(message).unwrap();
    let before: Value = serde_wasm_bindgen::from_value(before).unwrap();

    let ner = endpoint("ner", json!({}));
    let got = resolve(ner.entities(q)).await;
    assert_eq!(got["names"], json!(["Cairn Fault Entity"]));
    assert_eq!(got["error"], Value::Null);
    assert_eq!(ner.requests_sent(), 1.0);
    let names: Vec<String> = serde_json::from_value(got["names"].clone()).unwrap();

    let tiers_endpoint = endpoint("tiers", json!({}));
    let anchors = |engine: &mut Engine, names: Option<Vec<String>>| -> Vec<(String, bool)> {
        let plan = engine.plan_llm_tiers(query(q, 3, names.clone()), &tiers_endpoint).map_err(message).unwrap();
        let out = engine.query(query(q, 3, names), Some(JsValue::from(plan).unchecked_into())).map_err(message).unwrap();
        let out: Value = serde_wasm_bindgen::from_value(out).unwrap();
        out["explanation"]["retrieval"]["anchors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["mention"].as_str().unwrap().to_string(), !a["node"].is_null()))
            .collect()
    };
    assert_eq!(anchors(&mut engine, Some(names)), vec![("Cairn Fault Entity".to_string(), true)]);
    let rule = anchors(&mut engine, None);
    assert!(!rule.iter().any(|(m, _)| m == "Cairn Fault Entity"), "{rule:?}");
    assert!(rule.iter().any(|(m, _)| m.contains("Lotharingia")), "{rule:?}");
    assert_eq!(anchors(&mut engine, Some(vec![" ".into()])), rule, "blank names: the rule-based NER");
    // The plain search is as before: the names were for that one search.
    let after: Value =
        serde_wasm_bindgen::from_value(engine.query(query(q, 3, None), None).map_err(message).unwrap()).unwrap();
    assert_eq!(after, before);

    // A failed NER call: no names, the error said, the rule-based NER used by the page.
    let bad = endpoint("500", json!({}));
    let got = resolve(bad.entities(q)).await;
    assert_eq!(got["names"], json!([]));
    assert!(got["error"].as_str().unwrap().contains("HTTP 500"), "{got}");
    // An answer naming no entity.
    let empty = endpoint("empty", json!({}));
    let got = resolve(empty.entities(q)).await;
    assert_eq!(got["names"], json!([]));
    assert!(got["error"].as_str().is_some(), "{got}");
}
