//! `cairn index`: a static site's (or a JSONL corpus's) search index, with the wasm package,
//! the loader and the widget beside it.

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use cairn::corpus::Corpus;
use cairn::embed::{Embedder, StaticEmbedder};
use cairn::engine::Engine;
use cairn::index::{EmbedderSlot, IndexConfig, Method};
use clap::Args;
use serde_json::json;

use crate::common::*;
use crate::options::*;

#[derive(Args)]
pub(crate) struct IndexArgs {
    /// The site's folder: every .html, .htm, .md and .markdown page, and every .pdf and .docx
    /// file, under it (not the --out folder, hidden entries or node_modules). PDF and Word files
    /// are split as the page splits them: a passage a paragraph, titled "file › heading" or
    /// "file › page N", linked to the file (a PDF's to its page, #page=N).
    pub(crate) site: Option<PathBuf>,
    /// Index a dataset folder (its corpus.jsonl) or a .jsonl file of passages instead of a site.
    /// The widget links each result to its passage's id (up to its first space) when every id
    /// is a URL (root-relative or http(s)://); otherwise it shows the titles without links.
    #[arg(long, conflicts_with = "site")]
    pub(crate) jsonl: Option<PathBuf>,
    /// Where to write the index, the wasm package, the loader and the widget (for a site,
    /// usually <site>/cairn/, served at /cairn/).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// A wasm package folder to copy (cairn.js and cairn_bg.wasm; `npm run build:wasm` makes
    /// pkg/) instead of the one built into this binary.
    #[arg(long)]
    pub(crate) pkg: Option<PathBuf>,
    /// Also build the knowledge graph (methods hipporag and catrag; seconds per thousand
    /// passages, and a bigger index).
    #[arg(long)]
    pub(crate) graph: bool,
    /// Also the vector methods (dense, hybrid): the static embedder's vectors of every passage,
    /// and its table and vocabulary (8.2 MB) beside the index. Without it, a site gets them only
    /// when --method, --graph or --cage needs them: a BM25 site writes no embedder files.
    #[arg(long, conflicts_with = "no_dense")]
    pub(crate) dense: bool,
    /// BM25 only, refusing any option that needs the static embedder. BM25 alone is the default
    /// (without --dense, --graph, --cage or a vector --method); kept for scripts that pass it.
    #[arg(long)]
    pub(crate) no_dense: bool,
    /// A CSS selector for each page's content (`div.body`, `main article`): only what it
    /// matches is indexed. Without it: the elements marked `data-cairn-body` when a page has
    /// any, else `<main>` or `[role=main]`, else `<body>`; navigation, sidebars, headers and
    /// footers are left out either way (see --exclude-selector).
    #[arg(long)]
    pub(crate) selector: Option<String>,
    /// A CSS selector for more to leave out of every page (repeatable), besides the built-in
    /// chrome list (nav, header, footer, aside, [role=navigation], Sphinx's .sphinxsidebar and
    /// .related, rustdoc's sidebar and version links, [data-cairn-ignore], …).
    #[arg(long = "exclude-selector")]
    pub(crate) exclude_selector: Vec<String>,
    /// Also index pages that are lists of links (half their text or more is link text, with
    /// 30 links or more: tables of contents, generated indexes) and Sphinx's genindex,
    /// *-modindex and search pages, which are left out by default.
    #[arg(long)]
    pub(crate) keep_link_pages: bool,
    /// Also compute CAGE's graph embedding of every passage (methods cage, bm25+cage and
    /// catrag+cage; needs a build with `--features cage`; 133 bytes per passage).
    #[arg(long)]
    pub(crate) cage: bool,
    #[arg(long, default_value = "bm25", help = method_help("The widget's default method (the div's data-method attribute overrides it)"))]
    pub(crate) method: String,
    /// The URL path the site is served under (prefix of every result link).
    #[arg(long, default_value = "/")]
    pub(crate) base_url: String,
}

pub(crate) fn index_site(a: IndexArgs) -> CliResult<()> {
    let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
    let needs_dense = method.embedder() == Some(EmbedderSlot::Static);
    // The static embedder's vectors and files: only when a method asked for needs them.
    let dense = !a.no_dense && (a.dense || a.graph || a.cage || needs_dense);
    if method == Method::DenseMinilm
        || (a.no_dense && needs_dense)
        || (method.graph_method().is_some() && !a.graph)
    {
        return Err(format!(
            "--method {method} needs {}",
            if method == Method::DenseMinilm {
                "MiniLM vectors, which `cairn index` does not compute".to_string()
            } else if a.no_dense && needs_dense {
                "the static embedder: drop --no-dense".to_string()
            } else {
                "the knowledge graph: add --graph".to_string()
            }
        ));
    }
    if a.graph && a.no_dense {
        return Err("--graph needs the static embedder: drop --no-dense".into());
    }
    let web = crate::site_assets::web_files(a.pkg.as_deref())?;
    if let Some(site) = &a.site {
        if !site.is_dir() {
            let jsonl = site.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
            return Err(format!(
                "{}: not a folder (give the folder of the built site{})",
                site.display(),
                if jsonl { ", or index a JSONL corpus with --jsonl" } else { "" }
            ));
        }
    }
    if a.out.exists() && !a.out.is_dir() {
        return Err(format!("--out {}: a file, not a folder", a.out.display()));
    }
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let clock = Instant::now();
    let mut pages = None;
    let mut warnings = Vec::new();
    let mut link_pages = None;
    let mut title_suffix = None;
    let corpus = match (&a.site, &a.jsonl) {
        (Some(site), None) => {
            let skip = vec![a.out.canonicalize().map_err(|e| format!("{}: {e}", a.out.display()))?];
            let opts = cairn::site::ReadOptions {
                selector: a.selector.clone(),
                exclude: a.exclude_selector.clone(),
                keep_link_pages: a.keep_link_pages,
            };
            let read =
                cairn::site::read_site_with(site, &a.base_url, &skip, &opts).map_err(|e| e.to_string())?;
            for w in &read.warnings {
                eprintln!("warning: {w}");
            }
            if let Some(first) = read.link_pages.first() {
                eprintln!(
                    "note: {} page{} of links left out (tables of contents, generated indexes; the first: {first}); \
                     --keep-link-pages indexes them",
                    read.link_pages.len(),
                    if read.link_pages.len() == 1 { "" } else { "s" },
                );
            }
            link_pages = Some(read.link_pages.len());
            title_suffix = read.title_suffix.clone();
            if read.passages.is_empty() {
                return Err(format!(
                    "{}: no page has any text to index ({} read)",
                    site.display(),
                    read.pages
                ));
            }
            pages = Some(read.pages);
            warnings = read.warnings;
            let mut c = Corpus::new();
            c.extend(read.passages).map_err(|e| e.to_string())?;
            c
        }
        (None, Some(path)) => {
            let corpus = load_corpus(path)?;
            if corpus.is_empty() {
                return Err(format!("{}: no passages to index", path.display()));
            }
            corpus
        }
        _ => return Err("give a site folder or --jsonl".into()),
    };
    // A site's ids are its pages' URLs; a JSONL corpus's are links only if every one is.
    let passages = corpus.passages();
    let not_link = |p: &&cairn::Passage| !cairn::site::is_link(&p.id);
    let first = if pages.is_some() { None } else { passages.iter().position(|p| not_link(&p)) };
    let links = first.is_none();
    if let Some(i) = first {
        let n = passages[i..].iter().filter(not_link).count();
        eprintln!(
            "note: {n} of {} passage ids {} (root-relative or http(s)://; the first: {:?}, passage {}): \
             the widget shows the results' titles without links",
            passages.len(),
            if n == 1 { "is not a URL" } else { "are not URLs" },
            passages[i].id,
            i + 1
        );
    }
    let read_ms = ms(clock);
    let clock = Instant::now();
    let err = |e: cairn::Error| e.to_string();
    let mut engine = Engine::with_corpus(IndexConfig::default(), corpus).map_err(err)?;
    if dense {
        let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().map_err(err)?);
        engine.set_embedder(EmbedderSlot::Static, e, &mut |_, _, _| {}).map_err(err)?;
    }
    engine.build(&mut |_, _, _| {}).map_err(err)?;
    let build_ms = ms(clock);
    let clock = Instant::now();
    if a.graph && dense {
        engine.build_graph(&mut |_, _, _| {}).map_err(err)?;
    }
    let graph_ms = ms(clock);
    let clock = Instant::now();
    if a.cage {
        if a.no_dense {
            return Err("--cage needs the static embedder (drop --no-dense)".into());
        }
        engine.set_cage(load_cage()?);
        engine.compute_cage_z(&mut |_, _, _| {}).map_err(err)?;
    }
    let cage_ms = ms(clock);
    let index = engine.index().map_err(err)?;
    let cage_bytes = index.cage_embeddings().map(|z| 17 + z.rows() * (z.dim() + 5));
    // Three files: the base (config, passage ids and titles, BM25's postings: all a first
    // keyword result needs, so it waits for nothing else), the passages' texts, and the
    // extras (passage vectors, graph, CAGE), which the loader reads once the texts and the
    // embedder are in place.
    let clock = Instant::now();
    let split = engine.index().and_then(|i| i.to_split_bytes()).map_err(err)?;
    let (bytes, texts, extras) = (split.base, split.texts, split.extras);
    let save_ms = ms(clock);
    let clock = Instant::now();
    let gzip = |data: &[u8]| -> CliResult<Vec<u8>> {
        let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, data).map_err(|e| e.to_string())?;
        Ok(gz.finish().map_err(|e| e.to_string())?)
    };
    let gz = gzip(&bytes)?;
    let texts_gz = gzip(&texts)?;
    let extras_gz = extras.as_deref().map(gzip).transpose()?;
    let gzip_ms = ms(clock);
    let clock = Instant::now();
    let mut loaded = Engine::new(IndexConfig::default()).map_err(err)?;
    loaded.load(&bytes, &mut |_, _, _| {}).map_err(err)?;
    loaded.load_texts(&texts).map_err(err)?;
    if let Some(e) = engine.embedder(EmbedderSlot::Static) {
        loaded.set_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _, _| {}).map_err(err)?;
    }
    if let Some(x) = &extras {
        loaded.load_extras(x, &mut |_, _, _| {}).map_err(err)?;
    }
    let load_ms = ms(clock);
    drop(loaded);
    // every file written, with its size, for the manifest's `sizes` (what the widget says a
    // method costs before it fetches its files)
    let sizes = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let write = |name: &str, data: &[u8]| -> CliResult<()> {
        let path = a.out.join(name);
        std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
        sizes.borrow_mut().insert(name.to_string(), data.len());
        Ok(())
    };
    write("index.cairn.gz", &gz)?;
    write("texts.cairn.gz", &texts_gz)?;
    // Files an earlier run into this folder wrote and this one does not (a BM25-only index
    // written over one with vectors): removed, so that they are not deployed with it.
    let remove_stale = |name: &str| -> CliResult<()> {
        let path = a.out.join(name);
        if path.is_file() {
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    };
    match &extras_gz {
        Some(x) => write("extras.cairn.gz", x)?,
        None => remove_stale("extras.cairn.gz")?,
    }
    let extras_bytes = extras.as_ref().map(Vec::len);
    let extras_gz_bytes = extras_gz.as_ref().map(Vec::len);
    for (name, data) in web.files() {
        write(name, data)?;
    }
    // The sharded keyword index for the keyword reader (`keyword/<tag>/`: a new folder per
    // content, so a cache never mixes shards of two builds); earlier runs' folders are removed.
    let keyword_root = a.out.join("keyword");
    if keyword_root.is_dir() {
        for entry in std::fs::read_dir(&keyword_root).map_err(|e| format!("{}: {e}", keyword_root.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let ours = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.len() == 8 && n.bytes().all(|b| b.is_ascii_hexdigit()));
            if ours && path.is_dir() {
                std::fs::remove_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    let clock = Instant::now();
    let keyword = match &web.reader {
        Ok(_) => {
            let shards = index.to_keyword_shards(cairn::index::ShardSizes::default()).map_err(err)?;
            let dir = format!("keyword/{:08x}", shards.tag);
            let folder = a.out.join(&dir);
            std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
            let mut total = 0usize;
            let mut put = |name: &str, data: &[u8]| -> CliResult<usize> {
                let gz = gzip(data)?;
                let path = folder.join(format!("{name}.cairn.gz"));
                std::fs::write(&path, &gz).map_err(|e| format!("{}: {e}", path.display()))?;
                total += gz.len();
                Ok(gz.len())
            };
            let meta_gz = put("meta", &shards.meta)?;
            for (name, data) in shards.named_shards() {
                put(&name, data)?;
            }
            Some(json!({
                "dir": format!("{dir}/"),
                "meta": "meta.cairn.gz",
                "meta_gz_bytes": meta_gz,
                "js": "cairn_reader.js",
                "wasm": crate::site_assets::READER_WASM_GZ,
                "shards": {
                    "dictionary": shards.dictionary.len(),
                    "postings": shards.postings.len(),
                    "fragments": shards.fragments.len(),
                },
                "gz_bytes": total,
            }))
        }
        Err(why) => {
            for name in crate::site_assets::WebFiles::reader_files() {
                remove_stale(name)?;
            }
            eprintln!("cairn index: {why}; the widget's first result waits for the engine");
            None
        }
    };
    let shards_ms = ms(clock);
    if dense {
        write("static-minilm.bin", cairn::embed::static_embedder::MINILM_TABLE)?;
        write("minilm-vocab.txt", cairn::embed::wordpiece::MINILM_VOCAB.as_bytes())?;
    } else {
        remove_stale("static-minilm.bin")?;
        remove_stale("minilm-vocab.txt")?;
    }
    // The English text pipeline's resources, which the web package fetches to load an index
    // with a knowledge graph (its query anchoring runs the pipeline; BM25 needs none).
    let needs_text = index.graph().is_some();
    let mut text_files = Vec::new();
    if needs_text {
        let dir = a.out.join("text");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let r = cairn::text::TextResources::embedded();
        let bytes = [r.pos_perceptron, r.lemma_rules, r.lemma_index, r.gazetteer];
        for (name, data) in cairn::text::RESOURCE_FILES.iter().zip(bytes) {
            let file = format!("text/{name}");
            write(&file, data)?;
            text_files.push(file);
        }
    } else {
        for name in cairn::text::RESOURCE_FILES {
            remove_stale(&format!("text/{name}"))?;
        }
        // the folder too, when that leaves it empty (it is left alone otherwise)
        let _ = std::fs::remove_dir(a.out.join("text"));
    }
    let stats = index.stats();
    let methods: Vec<&str> =
        Method::ALL.into_iter().filter(|m| index.supports(*m)).map(Method::name).collect();
    let manifest = json!({
        "format_version": bytes.get(8..12).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        "index": "index.cairn.gz",
        "wasm": crate::site_assets::WASM_GZ,
        "sizes": &*sizes.borrow(),
        "passages": stats.passages,
        "text_bytes": stats.text_bytes,
        "index_bytes": bytes.len(),
        "index_gz_bytes": gz.len(),
        "texts": "texts.cairn.gz",
        "texts_bytes": texts.len(),
        "texts_gz_bytes": texts_gz.len(),
        "extras": extras.as_ref().map(|_| "extras.cairn.gz"),
        "extras_bytes": extras_bytes,
        "extras_gz_bytes": extras_gz_bytes,
        "methods": methods,
        "default_method": method.name(),
        "graph": index.graph().is_some(),
        "links": links,
        "keyword": keyword,
        "text_pipeline": if needs_text { json!(text_files) } else { json!(null) },
        "embedder": if dense {
            json!({"table": "static-minilm.bin", "vocab": "minilm-vocab.txt"})
        } else {
            json!(null)
        },
    });
    write("manifest.json", format!("{manifest:#}\n").as_bytes())?;
    let per_mb = |n: usize| n as f64 / (stats.text_bytes.max(1) as f64 / 1e6);
    let wasm_bytes = web.wasm_bytes();
    outln!(
        "{}",
        json!({
            "out": a.out.display().to_string(),
            "pages": pages,
            "link_pages_left_out": link_pages,
            "title_suffix": title_suffix,
            "warnings": warnings.len(),
            "passages": stats.passages,
            "text_bytes": stats.text_bytes,
            "index_bytes": bytes.len(),
            "index_gz_bytes": gz.len(),
            "index_bytes_per_mb_text": per_mb(bytes.len()),
            "index_gz_bytes_per_mb_text": per_mb(gz.len()),
            "texts_bytes": texts.len(),
            "texts_gz_bytes": texts_gz.len(),
            "extras_bytes": extras_bytes,
            "extras_gz_bytes": extras_gz_bytes,
            "total_gz_bytes": gz.len() + texts_gz.len() + extras_gz_bytes.unwrap_or(0),
            "total_gz_bytes_per_mb_text": per_mb(gz.len() + texts_gz.len() + extras_gz_bytes.unwrap_or(0)),
            "wasm_bytes": wasm_bytes,
            "wasm_package": web.source.to_string(),
            "keyword": keyword,
            "keyword_reader": web.reader.as_ref().err(),
            "shards_ms": shards_ms,
            "cage_z_bytes": cage_bytes,
            "cage_ms": cage_ms,
            "graph": index.knowledge_graph().map(|g| json!(g.report().counts)),
            "read_ms": read_ms,
            "build_ms": build_ms,
            "graph_ms": graph_ms,
            "save_ms": save_ms,
            "gzip_ms": gzip_ms,
            "native_load_ms": load_ms,
            "methods": methods,
        })
    );
    Ok(())
}
