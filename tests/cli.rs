//! The `cairn` command line, run as a user runs it: the evaluation harness on a three-question
//! fixture whose metrics are computed by hand, and its errors.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn cairn(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cairn");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn eval_json(setting: &str) -> serde_json::Value {
    let (code, out, err) =
        cairn(&["eval", "--data", "tests/fixtures/tiny", "--setting", setting, "--method", "bm25", "--json"]);
    assert_eq!(code, 0, "stderr: {err}");
    assert_eq!(out.lines().count(), 1, "exactly one JSON line: {out}");
    serde_json::from_str(&out).expect("JSON")
}

fn close(v: &serde_json::Value, want: f64) -> bool {
    (v.as_f64().unwrap() - want).abs() < 1e-9
}

/// Corpus setting. The rankings follow from which passages share a term with the question:
/// q1 "alpha river" → [p1] (gold p1, p2): R@2 = R@5 = 1/2, FCR@5 = 0.
/// q2 "beta mountain gamma lake" → {p2, p3} (gold p2, p3): R@2 = R@5 = 1, FCR@5 = 1.
/// q3 "omega" → [p4 (tf 3, 3 words), p5 (tf 2, 4 words), p6 (tf 1, 7 words)] (gold p6):
///    R@2 = 0, R@5 = 1, FCR@5 = 1.
/// Means: R@2 = 1.5/3 = 0.5, R@5 = 2.5/3, FCR@5 = 2/3.
#[test]
fn eval_corpus_setting_by_hand() {
    let v = eval_json("corpus");
    assert_eq!(v["method"], "bm25");
    assert_eq!(v["setting"], "corpus");
    assert_eq!(v["questions"], 3);
    assert!(close(&v["recall@2"], 0.5), "{v}");
    assert!(close(&v["recall@5"], 2.5 / 3.0), "{v}");
    assert!(close(&v["fcr@5"], 2.0 / 3.0), "{v}");
    assert!(v["ms_per_query"].as_f64().unwrap() >= 0.0);
    // By type: bridge = q1, q3 → R@2 = 0.25, FCR@5 = 0.5; comparison = q2 → all 1.
    assert!(close(&v["by_type"]["bridge"]["recall@2"], 0.25), "{v}");
    assert!(close(&v["by_type"]["bridge"]["fcr@5"], 0.5), "{v}");
    assert!(close(&v["by_type"]["comparison"]["recall@5"], 1.0), "{v}");
}

/// Pool setting: q3's pool is {p5, p6} only, so p6 is 2nd → R@2 = 1 for q3.
/// Means: R@2 = (0.5 + 1 + 1)/3, R@5 = the same, FCR@5 = 2/3.
#[test]
fn eval_pool_setting_by_hand() {
    let v = eval_json("pool");
    assert_eq!(v["setting"], "pool");
    assert!(close(&v["recall@2"], 2.5 / 3.0), "{v}");
    assert!(close(&v["recall@5"], 2.5 / 3.0), "{v}");
    assert!(close(&v["fcr@5"], 2.0 / 3.0), "{v}");
}

#[test]
fn eval_text_output_has_the_table() {
    let (code, out, _) = cairn(&["eval", "--data", "tests/fixtures/tiny"]);
    assert_eq!(code, 0);
    assert!(out.contains("Recall@2") && out.contains("FCR@5"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("all") && l.contains("0.500") && l.contains("0.833")), "{out}");
}

#[test]
fn k_adds_its_own_cutoff() {
    let (code, out, _) = cairn(&["eval", "--data", "tests/fixtures/tiny", "--k", "1", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // @1: q1 finds p1 (1/2), q2 finds one of p2/p3 (1/2), q3 finds p4 (0) → 1/3.
    assert!(close(&v["recall@1"], 1.0 / 3.0), "{v}");
    assert!(close(&v["fcr@1"], 0.0), "{v}");
}

fn one_line_error(args: &[&str], needle: &str) {
    let (code, out, err) = cairn(args);
    assert_eq!(code, 2, "exit code for {args:?}; stderr {err}");
    assert!(out.is_empty(), "nothing on stdout: {out}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
}

#[test]
fn errors_are_one_line_with_exit_code_2() {
    one_line_error(
        &["eval", "--data", "tests/fixtures/tiny", "--method", "colbert"],
        "unknown method \"colbert\"",
    );
    one_line_error(&["eval", "--data", "tests/fixtures/nope"], "no such folder");
    one_line_error(&["eval", "--data", "tests/fixtures/bad"], "line 2: not valid JSON");
    one_line_error(&["eval", "--data", "tests/fixtures/tiny", "--setting", "web"], "unknown setting");
    one_line_error(&["eval", "--data", "tests/fixtures/tiny", "--b", "2"], "bm25.b must be between 0 and 1");
    one_line_error(&["bench", "--data", "tests/fixtures/nope"], "no such folder");
}

#[test]
fn bench_prints_one_json_object() {
    let (code, out, err) = cairn(&["bench", "--data", "tests/fixtures/tiny"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "passages",
        "index_ms",
        "passages_per_s",
        "query_ms_p50",
        "query_ms_p95",
        "index_bytes",
        "peak_rss_mb",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["passages"], 6);
    assert_eq!(v["queries"], 3);
    assert!(v["index_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn query_prints_ranked_passages() {
    let (code, out, _) = cairn(&["query", "--data", "tests/fixtures/tiny", "--k", "2", "omega"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("[p4]") && lines[1].contains("[p5]"), "{out}");
}

/// The graph methods run end to end on the tiny fixture (rule-based OpenIE, static embedder),
/// with their ablation label, configuration and diagnostics in the JSON report.
#[test]
fn eval_graph_methods_with_ablations_and_diagnostics() {
    for (method, flags, label) in [
        ("hipporag", vec![], "hipporag"),
        ("catrag", vec![], "catrag"),
        ("catrag", vec!["--no-anchor", "--no-tier"], "catrag --no-anchor --no-tier"),
    ] {
        let mut args =
            vec!["eval", "--data", "tests/fixtures/tiny", "--method", method, "--json", "--diagnostics"];
        args.extend(flags.iter().copied());
        let (code, out, err) = cairn(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(out.lines().count(), 1, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["method"], method);
        assert_eq!(v["label"], label);
        assert_eq!(v["questions"], 3);
        for key in ["recall@2", "recall@5", "fcr@5"] {
            let x = v[key].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&x), "{key}: {v}");
        }
        assert_eq!(v["catrag"]["no_anchor"], label.contains("--no-anchor"));
        assert_eq!(v["diagnostics"]["queries"], 3);
        assert!(v["graph"]["counts"]["passage_nodes"].as_u64().unwrap() > 0);
    }
    // The pool setting builds one small graph per question.
    let (code, out, err) = cairn(&[
        "eval",
        "--data",
        "tests/fixtures/tiny",
        "--setting",
        "pool",
        "--method",
        "catrag",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["setting"].as_str(), v["questions"].as_u64()), (Some("pool"), Some(3)));
    // Text output with --diagnostics names the drift measure.
    let (code, out, _) =
        cairn(&["eval", "--data", "tests/fixtures/tiny", "--method", "catrag", "--diagnostics"]);
    assert_eq!(code, 0);
    assert!(out.contains("top 1% of nodes"), "{out}");
    // A bad configuration is one error line; an ε above 0.5 a warning.
    one_line_error(
        &[
            "eval",
            "--data",
            "tests/fixtures/tiny",
            "--method",
            "catrag",
            "--catrag-config",
            "{\"epsilon\": -1}",
        ],
        "catrag.epsilon",
    );
    let (code, _, err) = cairn(&[
        "eval",
        "--data",
        "tests/fixtures/tiny",
        "--method",
        "catrag",
        "--catrag-config",
        "{\"epsilon\": 0.7}",
    ]);
    assert_eq!(code, 0);
    assert!(err.contains("warning: catrag.epsilon"), "{err}");
}

#[test]
fn graph_subcommand_reports_sizes_and_times() {
    let (code, out, err) = cairn(&["graph", "--data", "tests/fixtures/tiny", "--add", "2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passages"], 6);
    assert_eq!(v["passage_nodes"], 6);
    for key in ["relation", "synonym", "context", "arcs"] {
        assert!(v["edges"][key].is_u64(), "{key}: {v}");
    }
    for key in ["extract", "embed", "synonyms", "csr"] {
        assert!(v["build_ms"][key].as_f64().unwrap() >= 0.0, "{key}: {v}");
    }
    assert_eq!(
        v["extraction"]["english_passages"].as_u64().unwrap()
            + v["extraction"]["non_english_passages"].as_u64().unwrap(),
        6
    );
    assert_eq!(v["add_passages"]["passages"], 2);
    assert_eq!(v["add_passages"]["same_counts_as_one_build"], true);
    let (code, out, _) = cairn(&["graph", "--data", "tests/fixtures/tiny"]);
    assert_eq!(code, 0);
    assert!(out.contains("edges: relation") && out.contains("add 6 passages onto 0"), "{out}");
}

#[test]
fn query_explains_graph_methods() {
    let (code, out, err) = cairn(&[
        "query",
        "--data",
        "tests/fixtures/tiny",
        "--method",
        "catrag",
        "--k",
        "2",
        "--explain",
        "--json",
        "Alpha river",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["method"], "catrag");
    assert_eq!(v["hits"].as_array().unwrap().len(), 2);
    assert!(v["hits"][0]["id"].is_string());
    assert_eq!(v["passages"].as_array().unwrap().len(), 2);
    // Without --json: the same explanation as a tree, one numbered line per hit with its id, and
    // one arc line per arc of its paths.
    let (code, tree, err) = cairn(&[
        "query",
        "--data",
        "tests/fixtures/tiny",
        "--method",
        "catrag",
        "--k",
        "2",
        "--explain",
        "Alpha river",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(tree.starts_with("catrag for \"Alpha river\"\n"), "{tree}");
    assert!(tree.contains("seeds (share of the teleport vector)"), "{tree}");
    for (rank, hit) in v["hits"].as_array().unwrap().iter().enumerate() {
        let id = hit["id"].as_str().unwrap();
        let line = tree.lines().find(|l| l.starts_with(&format!("{}. ", rank + 1))).unwrap_or_default();
        assert!(line.contains(&format!("[{id}]")), "{tree}");
    }
    let arcs: usize = v["passages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["paths"].as_array().unwrap())
        .map(|path| path["edges"].as_array().unwrap().len())
        .sum();
    assert_eq!(tree.lines().filter(|l| l.contains("─[")).count(), arcs, "{tree}");
    assert!(serde_json::from_str::<serde_json::Value>(&tree).is_err());
    one_line_error(&["query", "--data", "tests/fixtures/tiny", "--explain", "alpha"], "needs a graph method");
    let (code, out, _) =
        cairn(&["query", "--data", "tests/fixtures/tiny", "--method", "hipporag", "--k", "2", "alpha"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 2, "{out}");
}

/// `cairn index` on a JSONL corpus with a stand-in wasm package: the files it writes, the index
/// inside the gzip loads into an index equal to one built directly, two runs give the same
/// bytes, and its errors.
#[test]
fn index_subcommand_writes_a_loadable_deterministic_site_bundle() {
    use std::io::Read;
    let tmp = std::env::temp_dir().join(format!("cairn-cli-index-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let pkg = tmp.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("cairn.js"), "// stand-in").unwrap();
    std::fs::write(pkg.join("cairn_bg.wasm"), b"\0asm").unwrap();
    std::fs::write(pkg.join("cairn_reader.js"), "// stand-in reader").unwrap();
    std::fs::write(pkg.join("cairn_reader_bg.wasm"), b"\0asm").unwrap();
    let run = |out: &str| {
        let out = tmp.join(out);
        let (code, stdout, err) = cairn(&[
            "index",
            "--jsonl",
            "tests/fixtures/tiny/corpus.jsonl",
            "--out",
            out.to_str().unwrap(),
            "--pkg",
            pkg.to_str().unwrap(),
            "--method",
            "hybrid",
        ]);
        assert_eq!(code, 0, "{err}");
        // the fixture's ids (p1, p2, …) are not URLs: the widget will show titles without links
        assert!(
            err.contains("note: 6 of 6 passage ids are not URLs (root-relative or http(s)://; the first: \"p1\", passage 1)"),
            "{err}"
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        (out, v)
    };
    let (a, report) = run("a");
    let (b, _) = run("b");
    for f in [
        "index.cairn.gz",
        "cairn.js",
        "cairn_bg.wasm",
        "cairn_bg.wasm.gz",
        "cairn-loader.js",
        "cairn-worker.js",
        "cairn-search.js",
        "manifest.json",
        "static-minilm.bin",
        "minilm-vocab.txt",
        "texts.cairn.gz",
        "extras.cairn.gz",
    ] {
        assert!(a.join(f).is_file(), "{f}");
    }
    let gz = std::fs::read(a.join("index.cairn.gz")).unwrap();
    assert_eq!(gz, std::fs::read(b.join("index.cairn.gz")).unwrap(), "deterministic");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).unwrap();
    assert_eq!(report["index_bytes"], raw.len());
    assert_eq!(report["index_gz_bytes"], gz.len());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["default_method"], "hybrid");
    assert_eq!(manifest["methods"], serde_json::json!(["bm25", "dense", "hybrid"]));
    // the keyword reader (from the --pkg folder) and its sharded index: the meta file and one
    // shard of each kind for six passages, in a folder named by the shards' tag, the same for
    // the same corpus
    let kw = &manifest["keyword"];
    assert_eq!(kw["js"], "cairn_reader.js");
    assert_eq!(kw["wasm"], "cairn_reader_bg.wasm.gz");
    assert!(a.join("cairn_reader.js").is_file() && a.join("cairn_reader_bg.wasm.gz").is_file());
    assert_eq!(kw["shards"], serde_json::json!({"dictionary": 1, "postings": 1, "fragments": 1}));
    let dir = a.join(kw["dir"].as_str().unwrap());
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["d0.cairn.gz", "f0.cairn.gz", "meta.cairn.gz", "p0.cairn.gz"]);
    let total: u64 = names.iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().len()).sum();
    assert_eq!(kw["gz_bytes"], total);
    assert_eq!(kw["dir"], report["keyword"]["dir"]);
    let b_manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(b_manifest["keyword"]["dir"], kw["dir"], "deterministic");
    assert_eq!(manifest["links"], false);
    // the compressed wasm is named, and every written file is listed with its size
    assert_eq!(manifest["wasm"], "cairn_bg.wasm.gz");
    for f in ["index.cairn.gz", "texts.cairn.gz", "cairn_bg.wasm.gz", "cairn-worker.js", "static-minilm.bin"] {
        assert_eq!(manifest["sizes"][f], std::fs::metadata(a.join(f)).unwrap().len(), "{f}");
    }
    // `cairn index --jsonl JSONL --out OUT` with `extra` arguments: its stderr (a success) and the
    // manifest it wrote
    let index_jsonl = |jsonl: &std::path::Path, out: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["index", "--jsonl", jsonl.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend(["--pkg", pkg.to_str().unwrap()]);
        args.extend(extra);
        let (code, _, err) = cairn(&args);
        assert_eq!(code, 0, "{err}");
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
        (err, manifest)
    };
    // ids that are URLs (one root-relative, one absolute, one with a part number after a space)
    let urls = tmp.join("urls.jsonl");
    std::fs::write(
        &urls,
        "{\"id\": \"/a.html#x\", \"text\": \"alpha\"}\n{\"id\": \"https://example.org/b\", \"text\": \"beta\"}\n\
         {\"id\": \"/a.html#x 2\", \"text\": \"gamma\"}\n",
    )
    .unwrap();
    let out = tmp.join("urls");
    let (err, linked) = index_jsonl(&urls, &out, &["--no-dense"]);
    assert!(!err.contains("note:"), "{err}");
    assert_eq!(linked["links"], true);
    // one id that is not a URL turns the links off, and the note names it
    let mixed = tmp.join("mixed.jsonl");
    let text = std::fs::read_to_string(&urls).unwrap() + "{\"id\": \"doc-x\", \"text\": \"delta\"}\n";
    std::fs::write(&mixed, text).unwrap();
    let (err, relinked) = index_jsonl(&mixed, &out, &["--graph"]);
    assert!(
        err.contains("note: 1 of 4 passage ids is not a URL (root-relative or http(s)://; the first: \"doc-x\", passage 4)"),
        "{err}"
    );
    assert_eq!(relinked["links"], false);
    // written again without the vectors: the table, the vocabulary, the extras and the text
    // pipeline of the run before are removed, not left to be deployed
    let stale = ["static-minilm.bin", "minilm-vocab.txt", "extras.cairn.gz", "text/pos-perceptron.bin"];
    for f in stale {
        assert!(out.join(f).is_file(), "{f} written by the run with the graph");
    }
    index_jsonl(&mixed, &out, &["--no-dense"]);
    for f in stale {
        assert!(!out.join(f).exists(), "{f} left behind");
    }
    assert!(!out.join("text").exists(), "the emptied text/ folder left behind");
    assert!(out.join("index.cairn.gz").is_file());
    let out_s = out.to_str().unwrap();
    // an empty corpus, a corpus given as the site, a file given as --out: one-line errors
    let empty = tmp.join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let p = pkg.to_str().unwrap();
    one_line_error(
        &["index", "--jsonl", empty.to_str().unwrap(), "--out", out_s, "--pkg", p],
        "empty.jsonl: no passages to index",
    );
    one_line_error(
        &["index", mixed.to_str().unwrap(), "--out", out_s, "--pkg", p],
        "mixed.jsonl: not a folder (give the folder of the built site, or index a JSONL corpus with --jsonl)",
    );
    one_line_error(
        &["index", "--jsonl", mixed.to_str().unwrap(), "--out", mixed.to_str().unwrap(), "--pkg", p],
        "mixed.jsonl: a file, not a folder",
    );

    use cairn::embed::{Embedder, StaticEmbedder};
    use cairn::index::{EmbedderSlot, Index, IndexConfig, Method};
    use std::rc::Rc;
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
    // the base holds the ids, titles and postings (all BM25 needs), the texts file the texts,
    // the extras the passage vectors
    let texts_gz = std::fs::read(a.join("texts.cairn.gz")).unwrap();
    assert_eq!(texts_gz, std::fs::read(b.join("texts.cairn.gz")).unwrap(), "deterministic");
    assert_eq!(report["texts_gz_bytes"], texts_gz.len());
    assert_eq!(manifest["texts"], "texts.cairn.gz");
    let mut texts = Vec::new();
    flate2::read::GzDecoder::new(&texts_gz[..]).read_to_end(&mut texts).unwrap();
    let extras_gz = std::fs::read(a.join("extras.cairn.gz")).unwrap();
    assert_eq!(extras_gz, std::fs::read(b.join("extras.cairn.gz")).unwrap(), "deterministic");
    assert_eq!(report["extras_gz_bytes"], extras_gz.len());
    assert_eq!(manifest["extras"], "extras.cairn.gz");
    let mut extras = Vec::new();
    flate2::read::GzDecoder::new(&extras_gz[..]).read_to_end(&mut extras).unwrap();
    let slots = [(EmbedderSlot::Static, e.clone())];
    let (mut loaded, _) = Index::from_bytes(&raw, &slots, &mut |_, _| {}).unwrap();
    assert!(loaded.dense(EmbedderSlot::Static).is_none() && !loaded.texts_loaded());
    let keyword_hits = loaded.searcher().search("river mountain", 3, Method::Bm25).unwrap();
    loaded.attach_texts(&texts).unwrap();
    assert_eq!(keyword_hits, loaded.searcher().search("river mountain", 3, Method::Bm25).unwrap());
    loaded.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
    let text = std::fs::read_to_string("tests/fixtures/tiny/corpus.jsonl").unwrap();
    let mut corpus = cairn::Corpus::new();
    corpus.extend(cairn::corpus::parse_jsonl("tiny", &text).unwrap()).unwrap();
    let mut direct = Index::build(corpus, &IndexConfig::default()).unwrap();
    direct.attach_embedder(EmbedderSlot::Static, e, &mut |_, _| {}).unwrap();
    assert_eq!(loaded.corpus().passages(), direct.corpus().passages());
    for m in [Method::Bm25, Method::Dense, Method::Hybrid] {
        let hits = loaded.searcher().search("river mountain", 3, m).unwrap();
        assert!(!hits.is_empty());
        assert_eq!(hits, direct.searcher().search("river mountain", 3, m).unwrap());
    }

    let out = tmp.join("c");
    let out = out.to_str().unwrap();
    let nopkg = tmp.join("nopkg");
    one_line_error(
        &[
            "index",
            "--jsonl",
            "tests/fixtures/tiny/corpus.jsonl",
            "--out",
            out,
            "--pkg",
            nopkg.to_str().unwrap(),
        ],
        "no cairn.js in the wasm package folder",
    );
    one_line_error(
        &["index", "--jsonl", "tests/fixtures/tiny/corpus.jsonl", "--out", out, "--method", "catrag"],
        "--method catrag needs the knowledge graph: add --graph",
    );
    one_line_error(
        &["index", "tests/fixtures/nope", "--out", out, "--pkg", pkg.to_str().unwrap()],
        "tests/fixtures/nope",
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `cairn index` on a site folder: a page that is not UTF-8 or has no text is a warning on
/// stderr, not the end of the run; a site with no text at all, or a file given as the site,
/// is a one-line error that says so.
#[test]
fn index_site_warns_about_odd_pages_and_refuses_a_site_without_text() {
    let tmp = std::env::temp_dir().join(format!("cairn-cli-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let pkg = tmp.join("pkg");
    let site = tmp.join("site");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(site.join("blog")).unwrap();
    std::fs::write(pkg.join("cairn.js"), "// stand-in").unwrap();
    std::fs::write(pkg.join("cairn_bg.wasm"), b"\0asm").unwrap();
    std::fs::write(pkg.join("cairn_reader.js"), "// stand-in reader").unwrap();
    std::fs::write(pkg.join("cairn_reader_bg.wasm"), b"\0asm").unwrap();
    std::fs::write(site.join("index.html"), "<title>Home</title><p>Welcome home.</p>").unwrap();
    std::fs::write(site.join("blog/old.html"), b"<p>Caf\xe9 cr\xe8me.</p>").unwrap();
    std::fs::write(site.join("blog/empty.html"), b"").unwrap();
    let (s, p) = (site.to_str().unwrap(), pkg.to_str().unwrap());
    let out = site.join("cairn");
    let (code, stdout, err) = cairn(&["index", s, "--out", out.to_str().unwrap(), "--pkg", p, "--no-dense"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("warning: ") && lines[0].contains("empty.html: no text to index"), "{err}");
    assert!(lines[1].contains("old.html: not UTF-8: read as Windows-1252"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((report["pages"].as_u64(), report["warnings"].as_u64()), (Some(3), Some(2)), "{report}");
    assert_eq!(report["passages"], 2);

    let blank = tmp.join("blank");
    std::fs::create_dir_all(&blank).unwrap();
    std::fs::write(blank.join("a.html"), "<nav>menu only</nav>").unwrap();
    let out = tmp.join("out");
    let out = out.to_str().unwrap();
    let (code, _, err) = cairn(&["index", blank.to_str().unwrap(), "--out", out, "--pkg", p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a.html: no text to index"), "{err}");
    assert!(err.trim_end().ends_with("no page has any text to index (1 read)"), "{err}");
    one_line_error(
        &["index", site.join("index.html").to_str().unwrap(), "--out", out, "--pkg", p],
        "index.html: not a folder (give the folder of the built site)",
    );
    // a BM25 site (no flags) gets no embedder files; --dense adds them and the vector methods
    let plain = tmp.join("plain");
    let (code, stdout, err) = cairn(&["index", s, "--out", plain.to_str().unwrap(), "--pkg", p]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["methods"], serde_json::json!(["bm25"]), "{report}");
    for f in ["static-minilm.bin", "minilm-vocab.txt", "extras.cairn.gz"] {
        assert!(!plain.join(f).exists(), "{f} written for a BM25 site");
    }
    let (code, stdout, err) = cairn(&["index", s, "--out", plain.to_str().unwrap(), "--pkg", p, "--dense"]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["methods"], serde_json::json!(["bm25", "dense", "hybrid"]), "{report}");
    for f in ["static-minilm.bin", "minilm-vocab.txt", "extras.cairn.gz"] {
        assert!(plain.join(f).is_file(), "{f} not written with --dense");
    }
    // --selector reads only what it matches; a selector that is not CSS is a one-line error
    let (code, stdout, err) =
        cairn(&["index", s, "--out", plain.to_str().unwrap(), "--pkg", p, "--selector", "p", "--no-dense"]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["passages"], 2, "{report}");
    let (code, _, err) =
        cairn(&["index", s, "--out", plain.to_str().unwrap(), "--pkg", p, "--selector", "p["]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--selector") && err.contains("\"p[\" is not a CSS selector"), "{err}");

    // a folder without pages: said of the folder, as a site
    let nopages = tmp.join("nopages");
    std::fs::create_dir_all(&nopages).unwrap();
    let (code, _, err) = cairn(&["index", nopages.to_str().unwrap(), "--out", out, "--pkg", p]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        format!("error: {}: no .html, .htm, .md, .markdown, .pdf or .docx file found", nopages.display()),
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `cairn index` on a folder of PDF and Word files (tests/fixtures/documents): the readable ones
/// are indexed (11 paragraphs of the .docx, the 2 PDF pages with text), each broken one is one
/// warning line naming the file and the reason, and the run succeeds; no panic reaches the
/// output (pdf-extract panics on some files; they are caught).
#[test]
fn index_reads_pdf_and_docx_and_warns_about_broken_ones() {
    let tmp = std::env::temp_dir().join(format!("cairn-cli-documents-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let pkg = tmp.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("cairn.js"), "// stand-in").unwrap();
    std::fs::write(pkg.join("cairn_bg.wasm"), b"\0asm").unwrap();
    std::fs::write(pkg.join("cairn_reader.js"), "// stand-in reader").unwrap();
    std::fs::write(pkg.join("cairn_reader_bg.wasm"), b"\0asm").unwrap();
    let out = tmp.join("out");
    let (code, stdout, err) = cairn(&[
        "index",
        "tests/fixtures/documents",
        "--out",
        out.to_str().unwrap(),
        "--pkg",
        pkg.to_str().unwrap(),
        "--base-url",
        "/docs/",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "warning: tests/fixtures/documents/broken.pdf: skipped: not a PDF that can be read \
             (failed parsing cross reference table: invalid start value)",
            "warning: tests/fixtures/documents/locked.pdf: skipped: the PDF is password-protected",
            "warning: tests/fixtures/documents/not-a-zip.docx: skipped: not a Word (.docx) file that can be read \
             (it is not a zip archive, as every .docx is)",
            "warning: tests/fixtures/documents/scanned.pdf: skipped: no text in it (a scanned PDF holds images of \
             text, which Cairn cannot read)",
        ],
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((report["pages"].as_u64(), report["warnings"].as_u64()), (Some(6), Some(4)), "{report}");
    assert_eq!(report["passages"], 13, "{report}");
    // every passage id is a link (the widget links each result to its file)
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        (manifest["links"].as_bool(), manifest["passages"].as_u64()),
        (Some(true), Some(13)),
        "{manifest}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `cairn methods --json` is the method table as `methods()` gives it, and every subcommand's
/// `--method` help and parser follow the same table.
#[test]
fn methods_lists_the_table_and_the_method_flag_follows_it() {
    let (code, out, err) = cairn(&["methods", "--json"]);
    assert_eq!(code, 0, "{err}");
    let infos: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = infos.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..9], ["bm25", "dense", "dense-minilm", "hybrid", "hipporag", "catrag", "cage", "bm25+cage", "catrag+cage"]);
    assert_eq!(names.len(), cairn::index::Method::COUNT);
    let catrag_cage = &infos[8];
    assert_eq!(catrag_cage["needs"], serde_json::json!({"graph": true, "embedder": "static", "cage": true, "llm": true}));
    assert_eq!(catrag_cage["first_stage"], "catrag");
    assert_eq!(infos[0]["first_stage"], serde_json::Value::Null);
    for sub in ["eval", "query", "bench", "index"] {
        let (code, help, err) = cairn(&[sub, "--help"]);
        assert_eq!(code, 0, "{err}");
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&names.join(", ")), "{sub} --help lists every method: {help}");
    }
    let (code, text, _) = cairn(&["methods"]);
    assert_eq!(code, 0);
    for n in &names {
        assert!(text.lines().any(|l| l.starts_with(&format!("{n} "))), "{n} in {text}");
    }
    // the parser: any case; an unknown name is one line listing the names
    let (code, out, _) = cairn(&["query", "--data", "tests/fixtures/tiny", "--k", "2", "--method", "BM25", "omega"]);
    assert_eq!(code, 0);
    assert!(out.contains("[p4]"), "{out}");
    one_line_error(&["query", "--data", "tests/fixtures/tiny", "--method", "pagerank", "x"], &names.join(", "));
}

/// A method is its table row: the test row `test-bm25` (feature `test-method`) is listed by
/// `cairn methods`, offered by `--method`'s help and parser, and ranks as BM25, with no CLI code
/// that names it. Run with `cargo test --features test-method --test cli methods`.
#[cfg(feature = "test-method")]
#[test]
fn methods_a_test_row_alone_reaches_the_cli() {
    let (_, out, _) = cairn(&["methods", "--json"]);
    let infos: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let row = infos.iter().find(|i| i["name"] == "test-bm25").expect("the test row");
    assert_eq!(row["family"], "lexical");
    let (_, help, _) = cairn(&["query", "--help"]);
    assert!(help.contains("test-bm25"), "{help}");
    let ranked = |method: &str| {
        let (code, out, err) = cairn(&["query", "--data", "tests/fixtures/tiny", "--k", "3", "--method", method, "omega"]);
        assert_eq!(code, 0, "{err}");
        out.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).map(str::to_string).collect::<Vec<_>>()
    };
    let bm25 = ranked("bm25");
    assert_eq!(bm25.len(), 3);
    assert_eq!(ranked("test-bm25"), bm25);
}

/// `cairn query … | head`: a reader that closes the pipe before `cairn` writes ends it quietly
/// with status 0 (as `grep` ends), not with a "Broken pipe" panic (status 101).
#[test]
fn a_closed_output_pipe_ends_query_quietly() {
    use std::process::Stdio;
    for args in [
        &["query", "--data", "tests/fixtures/tiny", "--k", "6", "omega"][..],
        &["query", "--data", "tests/fixtures/tiny", "--json", "omega"][..],
        &["eval", "--data", "tests/fixtures/tiny", "--method", "bm25"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run cairn");
        // The reader goes away before cairn has built its index, so every write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait for cairn");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {:?}, stderr {err}", out.status);
        assert!(err.is_empty(), "{args:?}: nothing on stderr, got {err}");
    }
}

/// Counts of 0 are argument errors (status 2, naming the flag), not an empty result.
#[test]
fn zero_counts_are_argument_errors() {
    for (args, flag) in [
        (&["query", "--data", "tests/fixtures/tiny", "--k", "0", "omega"][..], "--k"),
        (&["eval", "--data", "tests/fixtures/tiny", "--k", "0"][..], "--k"),
        (&["eval", "--data", "tests/fixtures/tiny", "--limit", "0"][..], "--limit"),
        (&["bench", "--data", "tests/fixtures/tiny", "--queries", "0"][..], "--queries"),
        (&["eval", "--data", "tests/fixtures/tiny", "--llm-answer-deadline-ms", "0"][..], "--llm-answer-deadline-ms"),
    ] {
        let (code, out, err) = cairn(args);
        assert_eq!(code, 2, "{args:?}: stdout {out}, stderr {err}");
        assert!(out.is_empty(), "{args:?}: nothing on stdout: {out}");
        assert!(err.contains(flag) && err.contains("must be at least 1"), "{args:?}: {err}");
    }
    let (code, _, err) = cairn(&["query", "--data", "tests/fixtures/tiny", "--k", "two", "omega"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\"two\" is not a whole number"), "{err}");
}

/// `query --json` alone: one JSON object with the ranked hits (the order computed by hand in
/// `eval_corpus_setting_by_hand`: p4, p5, p6 for "omega").
#[test]
fn query_json_without_explain() {
    let (code, out, err) = cairn(&["query", "--data", "tests/fixtures/tiny", "--k", "3", "--json", "omega"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["query"], "omega");
    assert_eq!(v["method"], "bm25");
    assert!(v["weak"].is_null());
    let hits = v["hits"].as_array().unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["p4", "p5", "p6"]);
    assert_eq!(hits[0]["rank"], 1);
    assert_eq!(hits[0]["title"], "P4");
    assert_eq!(hits[0]["text"], "omega omega omega");
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores[0] > scores[1] && scores[1] > scores[2], "{scores:?}");
    // a query that matches nothing: no hits, still one object
    let (code, out, _) = cairn(&["query", "--data", "tests/fixtures/tiny", "--json", "zebra"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 0);
}

/// `--answer` against an endpoint that accepts the connection and never answers: each answer
/// ends at --llm-answer-deadline-ms (here 400 ms) and counts as failed; after three failures in a
/// row the circuit breaker refuses the rest at once. Without the deadline each question waited
/// for the request timeout (120 s by default).
#[test]
fn answers_from_a_hung_endpoint_end_at_their_deadline() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming() {
            held.push(c); // accepted, never read, never answered
        }
    });
    let (code, out, err) = cairn(&[
        "eval",
        "--data",
        "tests/fixtures/tiny",
        "--method",
        "bm25",
        "--llm",
        &url,
        "--llm-model",
        "m",
        "--answer",
        "--llm-answer-deadline-ms",
        "400",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let llm = &v["llm"];
    assert_eq!(llm["answer_deadline_ms"], 400, "{llm}");
    assert_eq!(llm["answer_calls"], 3, "{llm}");
    assert_eq!(v["answers"]["failed"], 3, "{v}");
    assert_eq!(v["answers"]["questions"], 3, "{v}");
    // Each question waited for its answer's deadline (400 ms; a loaded machine may add some),
    // never for the request timeout (120 s) or its retries.
    let per_query = llm["answer_ms_per_query"].as_f64().unwrap();
    assert!(per_query <= 400.0 + 1_000.0, "answers took {per_query} ms per question: {llm}");
    assert!(per_query >= 380.0, "the calls were not waited for: {llm}");
}
