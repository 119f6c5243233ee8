//! `cairn query`: search a corpus and print the top passages, or the graph walk's explanation.

use std::path::PathBuf;

use cairn::catrag::ExplainConfig;
use cairn::index::{Index, Method};
use cairn::search::Query;
use clap::Args;
use serde_json::json;

use crate::common::*;
use crate::options::*;

#[derive(Args)]
pub(crate) struct QueryArgs {
    /// A dataset folder (its corpus.jsonl) or a .jsonl file of passages.
    #[arg(long)]
    pub(crate) data: PathBuf,
    #[arg(long, default_value = "bm25", help = method_help("Retrieval method"))]
    pub(crate) method: String,
    /// Passages to print (at least 1).
    #[arg(long, default_value_t = 5, value_parser = at_least_one)]
    pub(crate) k: usize,
    /// Graph methods: explain each hit as a tree (the query's seeds and anchors, then per
    /// passage the best paths seed → … → passage); with --json, the whole explanation as one
    /// JSON object.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Print one JSON object instead of text: `{query, method, hits: [{rank, id, title, score,
    /// text, highlights, title_highlights}], weak}` (`highlights`: byte ranges of the query's
    /// terms in the text and title; `weak`: why the hits are weak, or null); with --explain, the
    /// whole explanation.
    #[arg(long)]
    pub(crate) json: bool,
    /// The question.
    #[arg(required = true)]
    pub(crate) query: Vec<String>,
    #[command(flatten)]
    pub(crate) bm25: Bm25Args,
    #[command(flatten)]
    pub(crate) catrag: CatragArgs,
    #[command(flatten)]
    pub(crate) models: ModelArgs,
}

pub(crate) fn query(a: QueryArgs) -> CliResult<()> {
    let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
    let embedders = load_embedders(method, &a.models)?;
    let corpus = load_corpus(&a.data)?;
    let config = index_config(&a.bm25, &a.catrag)?;
    let index = build_index(corpus, &config, method, &embedders)?;
    let q = a.query.join(" ");
    if a.explain && (method.graph_method().is_none() || method.cage_first_stage().is_some()) {
        return Err(format!("--explain needs a graph method (hipporag or catrag), not {method}"));
    }
    // the one door: the search, its explanation when asked, the hits as shown
    let mut query = Query::new(q.as_str(), a.k, method);
    query.explain = a.explain;
    let out = index.searcher().query(&query).map_err(|e| e.to_string())?;
    if let Some(ex) = out.explanation {
        if !a.json {
            out!("{}", explain_tree(&index, &q, &ex));
            return Ok(());
        }
        let mut v = json!(ex);
        // Corpus ids next to the internal passage indices.
        for (i, h) in ex.hits.iter().enumerate() {
            if let Some(p) = index.corpus().get(h.passage) {
                v["hits"][i]["id"] = json!(p.id);
                v["hits"][i]["title"] = json!(p.title);
            }
        }
        outln!("{v}");
        return Ok(());
    }
    let (found, hits) = (&out.result, &out.hits);
    if a.json {
        let hits: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                json!({"rank": h.rank, "id": h.id, "title": h.title, "score": h.score, "text": h.text,
                    "highlights": h.highlights, "title_highlights": h.title_highlights})
            })
            .collect();
        outln!("{}", json!({"query": q, "method": method.name(), "hits": hits, "weak": found.trace.weak}));
        return Ok(());
    }
    if hits.is_empty() {
        outln!("no passage matches {q:?}");
    }
    if let Some(why) = found.trace.weak {
        outln!("weak results: {why}");
    }
    for h in hits {
        let snippet: String = h.text.chars().take(160).collect();
        outln!("{:>2}. {:>8.3}  {}  [{}]\n    {}", h.rank, h.score, h.title, h.id, snippet);
    }
    Ok(())
}

/// The explanation as a tree for a person: the query's anchors and seeds, then per hit its
/// best paths from a seed, one arc per line (type, fact, this query's multiplier), ending at
/// the passage.
pub(crate) fn explain_tree(index: &Index, query: &str, ex: &cairn::search::SearchExplanation) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let r = &ex.retrieval;
    let _ = writeln!(o, "{} for {:?}", ex.method.name(), query);
    if let Some(f) = &r.fallback {
        let _ = writeln!(
            o,
            "no entity seed ({}): ranked by dense similarity",
            json!(f).as_str().unwrap_or("fallback")
        );
    }
    if !r.anchors.is_empty() {
        let _ = writeln!(o, "anchors");
        let n = r.anchors.len();
        for (i, a) in r.anchors.iter().enumerate() {
            let branch = if i + 1 == n { "└─" } else { "├─" };
            let target = match (a.node, a.how) {
                (Some(node), Some(how)) => format!(
                    "{} ({}, similarity {:.2})",
                    node_name(index, node),
                    json!(how).as_str().unwrap_or(""),
                    a.similarity
                ),
                _ => format!("nothing (best similarity {:.2})", a.similarity),
            };
            let _ = writeln!(o, "{branch} {:?} → {target}", a.mention);
        }
    }
    let _ = writeln!(o, "seeds (share of the teleport vector)");
    let shown = r.seeds.len().min(8);
    for (i, sd) in r.seeds.iter().take(shown).enumerate() {
        let branch = if i + 1 == shown && r.seeds.len() <= shown { "└─" } else { "├─" };
        let channel = json!(sd.channel);
        let _ = writeln!(
            o,
            "{branch} {:<40} {:>5.1}%  {}",
            sd.name,
            sd.share * 100.0,
            channel.as_str().unwrap_or("")
        );
    }
    if r.seeds.len() > shown {
        let _ = writeln!(o, "└─ … {} more", r.seeds.len() - shown);
    }
    if r.fallback.is_none() {
        let t = &r.sources;
        let _ = writeln!(
            o,
            "teleport by source: fact seeds {:.1}%, anchors {:.1}%, dense prior {:.1}%, lexical prior {:.1}%, title bridges {:.1}%, query titles {:.1}%{}",
            100.0 * t.fact_seeds,
            100.0 * t.anchors,
            100.0 * t.dense_prior,
            100.0 * t.lexical_prior,
            100.0 * t.title_bridges,
            100.0 * t.query_titles,
            if t.residual > 0.0 { format!(", residual {:.1}%", 100.0 * t.residual) } else { String::new() }
        );
        let c = &ex.changes;
        let _ = writeln!(
            o,
            "walk changed: {} arcs boosted (key facts), {} pruned; tiers by {}: {} direct, {} high, {} weak, {} irrelevant",
            c.boosted,
            c.pruned,
            ex.tierer.as_deref().unwrap_or("none"),
            c.direct,
            c.high,
            c.weak,
            c.irrelevant
        );
    }
    for (rank, (hit, pe)) in ex.hits.iter().zip(&ex.passages).enumerate() {
        let (id, title) =
            index.corpus().get(hit.passage).map_or(("?", ""), |p| (p.id.as_str(), p.title.as_str()));
        let _ = writeln!(o, "\n{}. {title} [{id}]  score {:.4}", rank + 1, hit.score);
        if r.fallback.is_none() {
            let t = &pe.sources;
            let mut parts = Vec::new();
            for (name, x) in [
                ("dense prior", t.dense_prior),
                ("lexical prior", t.lexical_prior),
                ("title bridge", t.title_bridges),
                ("query title", t.query_titles),
                ("residual", t.residual),
            ] {
                if x > 0.0 {
                    parts.push(format!("{name} {:.2}%", 100.0 * x));
                }
            }
            let changed = pe.changed_arcs.len();
            let _ = writeln!(
                o,
                "   own teleport {:.2}% ({}){}",
                100.0 * pe.teleport,
                if parts.is_empty() { "none".to_string() } else { parts.join(", ") },
                if changed > 0 { format!("; {changed} arc(s) into it reweighted (key-fact boost)") } else { String::new() }
            );
        }
        if pe.paths.is_empty() {
            let _ = writeln!(
                o,
                "   no path from a seed within {} arcs{}",
                ExplainConfig::default().max_path_arcs,
                if pe.truncated { " (search budget spent)" } else { "" }
            );
        }
        let np = pe.paths.len();
        for (pi, path) in pe.paths.iter().enumerate() {
            let last = pi + 1 == np;
            let (branch, stem) = if last { ("└─", "   ") } else { ("├─", "│  ") };
            let seed = path.nodes.first().map_or("?", |n| n.name.as_str());
            let _ = writeln!(o, "   {branch} seed {seed}  (path probability {:.2e})", path.probability);
            for (e, to) in path.edges.iter().zip(path.nodes.iter().skip(1)) {
                let kind = json!(e.edge_type);
                let mut label = kind.as_str().unwrap_or("edge").to_string();
                if let Some(f) = &e.fact {
                    let _ = write!(label, " \"{f}\"");
                }
                if (e.multiplier - 1.0).abs() > 1e-6 {
                    let _ = write!(label, " ×{:.2}", e.multiplier);
                }
                let target = if to.kind == cairn::graph::NodeKind::Passage {
                    format!("passage {title}")
                } else {
                    to.name.clone()
                };
                let _ = writeln!(o, "   {stem}  ─[{label}]→ {target}");
            }
        }
    }
    o
}

/// An entity node's display name (its id when it has none).
pub(crate) fn node_name(index: &Index, node: u32) -> String {
    match index.graph().and_then(|g| g.node(node)) {
        Some(cairn::graph::NodeRef::Entity { name, .. }) => name.to_string(),
        _ => format!("node {node}"),
    }
}
