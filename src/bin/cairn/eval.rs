//! `cairn eval`: Recall@k, FCR@k (and with an endpoint EM, F1, JSR) of a method on a dataset
//! folder (docs: README "What works today"; the metrics are docs/method/spec.md §5).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cairn::catrag::{CatragConfig, LlmTierer};
use cairn::eval::{evaluate_with, Dataset, EvalHooks, Report, Setting};
use cairn::index::Method;
use cairn::llm::{LlmClient, LlmNer, LlmOpenIe};
use clap::Args;
use serde_json::json;

use crate::common::*;
use crate::options::*;

#[derive(Args)]
pub(crate) struct EvalArgs {
    /// Dataset folder with corpus.jsonl and questions.jsonl (e.g. ../shared/data/hotpotqa).
    #[arg(long)]
    pub(crate) data: PathBuf,
    /// corpus: one index over the whole corpus; pool: one index per question over its pool.
    #[arg(long, default_value = "corpus")]
    pub(crate) setting: String,
    #[arg(long, default_value = "bm25", help = method_help("Retrieval method"))]
    pub(crate) method: String,
    /// CAGE methods: evaluate every α of a grid (`alpha=0:1:0.1`) and print one line each.
    #[arg(long)]
    pub(crate) grid: Option<String>,
    #[command(flatten)]
    pub(crate) cage: CageArgs,
    /// CAGE methods, evaluation only: the oracle-coherence ceiling. Each candidate's coherence
    /// is its mean cosine with the question's gold passages' stored graph embeddings (itself
    /// excluded), fused with the first stage as the search fuses.
    #[arg(long)]
    pub(crate) oracle_coherence: bool,
    /// Cut-off for the extra Recall@k / FCR@k figures; max(k, 5) passages are retrieved.
    /// At least 1.
    #[arg(long, default_value_t = 5, value_parser = at_least_one)]
    pub(crate) k: usize,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Graph methods: print the per-query diagnostics (share of PPR mass on the top 1% of
    /// nodes by degree and by mass, seeds, anchors, overlay, convergence). With --json they
    /// are under "diagnostics".
    #[arg(long)]
    pub(crate) diagnostics: bool,
    /// Evaluate only the first N questions (at least 1).
    #[arg(long, value_parser = at_least_one)]
    pub(crate) limit: Option<usize>,
    /// Graph methods: a file of CatRAG configurations, one JSON object a line, each merged
    /// over --catrag-config (ablation flags on top); the graph is built once and every line
    /// is evaluated on it (one output line each; with --json one JSON object each).
    #[arg(long)]
    pub(crate) sweep: Option<PathBuf>,
    /// Write every question's ranked passage ids (and its gold ids) to this JSON file.
    #[arg(long)]
    pub(crate) rankings: Option<PathBuf>,
    /// Evaluation-only ceiling (catrag): edges on a gold chain are tiered Direct, the others as
    /// the tierer says (the offline one, or --llm's). A --sweep line may set the ceilings with
    /// `"oracle": {"tiers": true, "anchors": true, "boost": true}`.
    #[arg(long)]
    pub(crate) oracle_tiers: bool,
    /// Evaluation-only ceiling (catrag): the gold passages' title entities are the anchor set.
    #[arg(long)]
    pub(crate) oracle_anchors: bool,
    /// Evaluation-only ceiling (catrag): the key-fact boost strengthens exactly the context arcs
    /// from the seed facts' entities to gold passages.
    #[arg(long)]
    pub(crate) oracle_boost: bool,
    #[command(flatten)]
    pub(crate) bm25: Bm25Args,
    #[command(flatten)]
    pub(crate) catrag: CatragArgs,
    #[command(flatten)]
    pub(crate) models: ModelArgs,
    #[command(flatten)]
    pub(crate) llm: LlmArgs,
}

/// `alpha=0:1:0.1` → [0, 0.1, …, 1].
pub(crate) fn parse_grid(spec: &str) -> CliResult<Vec<f32>> {
    let bad = || format!("--grid {spec:?}: expected alpha=START:END:STEP, e.g. alpha=0:1:0.1");
    let range = spec.strip_prefix("alpha=").ok_or_else(bad)?;
    let parts: Vec<f64> =
        range.split(':').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| bad())?;
    let [start, end, step] = parts[..] else { return Err(bad()) };
    if !(step > 0.0) || end < start {
        return Err(bad());
    }
    let n = ((end - start) / step + 1e-9).floor() as usize;
    Ok((0..=n).map(|i| (start + i as f64 * step) as f32).collect())
}

/// The evaluation-only ceilings asked for on the command line.
fn oracle_flags(a: &EvalArgs) -> cairn::eval::Oracle {
    cairn::eval::Oracle { tiers: a.oracle_tiers, anchors: a.oracle_anchors, boost: a.oracle_boost }
}

pub(crate) fn eval(a: EvalArgs) -> CliResult<()> {
    let method: Method = a.method.parse().map_err(|e: cairn::Error| e.to_string())?;
    let setting: Setting = a.setting.parse().map_err(|e: cairn::Error| e.to_string())?;
    let mut config = index_config(&a.bm25, &a.catrag)?;
    if let Some(b) = a.llm.llm_budget {
        config.catrag.llm_call_budget = b;
    }
    config.cage = a.cage.config()?;
    let mut dataset = Dataset::load(&a.data).map_err(|e| e.to_string())?;
    if let Some(n) = a.limit {
        dataset.questions.truncate(n);
    }
    let embedders = load_embedders(method, &a.models)?;
    if a.oracle_coherence && method.cage_first_stage().is_none() {
        return Err(format!("--oracle-coherence is CAGE's ceiling: use a CAGE method, not {method}"));
    }
    if let Some(spec) = &a.grid {
        if method.cage_first_stage().is_none() {
            return Err(format!("--grid tunes CAGE's alpha: use a CAGE method, not {method}"));
        }
        let mut rows = Vec::new();
        for alpha in parse_grid(spec)? {
            config.cage.alpha = alpha;
            let hooks = EvalHooks { oracle_coherence: a.oracle_coherence, ..EvalHooks::default() };
            let r = evaluate_with(&dataset, setting, method, a.k, &config, &embedders, hooks)
                .map_err(|e| e.to_string())?;
            if a.json {
                let mut v = report_json(&r);
                v["alpha"] = json!(alpha);
                rows.push(v);
            } else {
                let types: Vec<String> = r
                    .by_type
                    .iter()
                    .map(|(t, s)| format!("{t} R@5 {:.3} FCR@5 {:.3}", s.recall_at_5, s.fcr_at_5))
                    .collect();
                outln!(
                    "alpha {alpha:.2}  R@2 {:.3}  R@5 {:.3}  FCR@5 {:.3}  ({})",
                    r.all.recall_at_2,
                    r.all.recall_at_5,
                    r.all.fcr_at_5,
                    types.join("; ")
                );
            }
        }
        if a.json {
            outln!("{}", json!(rows));
        }
        return Ok(());
    }
    if let Some(path) = &a.sweep {
        if method.graph_method().is_none() {
            return Err(format!(
                "--sweep varies the graph methods' configuration: use hipporag or catrag, not {method}"
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = serde_json::to_value(&config.catrag).map_err(|e| e.to_string())?;
        let mut configs = Vec::new();
        let mut oracles = Vec::new();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let over: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            let mut merged = base.clone();
            let mut oracle = oracle_flags(&a);
            if let (Some(m), Some(o)) = (merged.as_object_mut(), over.as_object()) {
                for (k, v) in o {
                    if k == "oracle" {
                        oracle = serde_json::from_value(v.clone())
                            .map_err(|e| format!("{}:{}: oracle: {e}", path.display(), i + 1))?;
                        continue;
                    }
                    m.insert(k.clone(), v.clone());
                }
            }
            oracles.push(oracle);
            let c: CatragConfig =
                serde_json::from_value(merged).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            c.validate().map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            configs.push((over, c));
        }
        let only: Vec<CatragConfig> = configs.iter().map(|(_, c)| c.clone()).collect();
        let reports = cairn::eval::evaluate_sweep(
            &dataset,
            setting,
            method,
            a.k,
            &config,
            &embedders,
            EvalHooks { oracle: oracles, ..EvalHooks::default() },
            &only,
        )
        .map_err(|e| e.to_string())?;
        for ((over, _), r) in configs.iter().zip(&reports) {
            if a.json {
                let mut v = report_json(r);
                v["sweep"] = over.clone();
                if a.diagnostics {
                    v["diagnostics"] = json!(r.diagnostics);
                }
                outln!("{v}");
            } else {
                outln!(
                    "{} {over}  R@2 {:.3}  R@5 {:.3}  FCR@5 {:.3}  {:.2} ms/query",
                    r.dataset, r.all.recall_at_2, r.all.recall_at_5, r.all.fcr_at_5, r.ms_per_query
                );
            }
        }
        return Ok(());
    }
    let client = a.llm.client()?;
    if client.is_none() {
        let hooks = EvalHooks {
            rankings: a.rankings.is_some(),
            oracle: vec![oracle_flags(&a)],
            oracle_coherence: a.oracle_coherence,
            ..EvalHooks::default()
        };
        let report = evaluate_with(&dataset, setting, method, a.k, &config, &embedders, hooks)
            .map_err(|e| e.to_string())?;
        if let (Some(path), Some(r)) = (&a.rankings, &report.rankings) {
            std::fs::write(path, json!(r).to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        print_eval(&a, &report, None, None);
        return Ok(());
    }
    let client = client.ok_or("no client")?;
    let is_catrag = method.graph_method() == Some(cairn::catrag::GraphMethod::CatRag);
    let openie_graph = a.llm.llm_openie && method.graph_method().is_some();
    if !(is_catrag || a.llm.answer || openie_graph) {
        return Err(format!(
            "--llm tiers CatRAG's edges: use --method catrag (or add --answer, or --llm-openie with a graph method), not {method}"
        ));
    }
    if a.llm.llm_ner && !is_catrag {
        return Err(format!("--llm-ner feeds CatRAG's anchoring: use --method catrag, not {method}"));
    }
    if a.llm.llm_openie && setting == Setting::Corpus {
        eprintln!(
            "note: --llm-openie in the corpus setting makes one LLM call per corpus passage ({}); --setting pool --limit N calls only for the N questions' pools",
            dataset.corpus.len()
        );
    }
    let ner = Arc::new(LlmNer::new(client.clone() as Arc<dyn LlmClient>));
    let make_ner = {
        let n = ner.clone();
        move || -> Box<dyn cairn::catrag::EntityRecognizer> { Box::new(n.clone()) }
    };
    let openie = LlmOpenIe::new(client.clone() as Arc<dyn LlmClient>);
    let run_openie = |p: &cairn::Passage, i: u32, rule: &[cairn::extract::Triple]| {
        openie.extract(i, &p.title, &p.text, rule)
    };
    let tierer = Arc::new(LlmTierer::new(client.clone() as Arc<dyn LlmClient>));
    let make = {
        let t = tierer.clone();
        move || -> Box<dyn cairn::catrag::EdgeTierer> { Box::new(t.clone()) }
    };
    let mut answer_ms = 0.0;
    let mut answers_log: Vec<serde_json::Value> = Vec::new();
    let mut answerer = |q: &str, top: &[(String, String)]| -> cairn::Result<String> {
        let t = Instant::now();
        // A generated answer has its own deadline (--llm-answer-deadline-ms), not the query's.
        client.begin_answer(q);
        let r = client.chat(&cairn::llm::prompts::answer_prompt(q, top));
        answer_ms += t.elapsed().as_secs_f64() * 1e3;
        let a = cairn::llm::parse::parse_answer(&r?.content);
        answers_log.push(json!({"question": q, "answer": a}));
        Ok(a)
    };
    let hooks = EvalHooks {
        tierer: (method.graph_method() == Some(cairn::catrag::GraphMethod::CatRag)).then_some(&make as _),
        answerer: if a.llm.answer { Some(&mut answerer) } else { None },
        recognizer: (is_catrag && a.llm.llm_ner).then_some(&make_ner as _),
        openie: a.llm.llm_openie.then_some(&run_openie as _),
        rankings: false,
        oracle: vec![oracle_flags(&a)],
        oracle_coherence: a.oracle_coherence,
    };
    let report = evaluate_with(&dataset, setting, method, a.k, &config, &embedders, hooks)
        .map_err(|e| e.to_string())?;
    let n = dataset.questions.len().max(1) as f64;
    let st = tierer.stats();
    let llm = json!({
        "endpoint": client.config().completions_url(),
        "model": client.config().model,
        "call_budget": config.catrag.llm_call_budget,
        "tier_queries": st.queries,
        "calls": st.calls,
        "calls_per_query": st.calls as f64 / n,
        "max_calls_per_query": st.max_calls_per_query,
        "tier_calls": st.tier_calls,
        "summary_calls": st.summary_calls,
        "failed_calls": st.failed_calls,
        "tiered_edges": st.tiered_edges,
        "unparsed_edges": st.unparsed_edges,
        "cached_edges": st.cached_edges,
        "budget_skips": st.budget_skips,
        "tiers": {"irrelevant": st.tiers[0], "weak": st.tiers[1], "high": st.tiers[2], "direct": st.tiers[3]},
        "added_ms_per_query": st.llm_ms / n,
        "answer_calls": if a.llm.answer { dataset.questions.len() } else { 0 },
        "answer_ms_per_query": answer_ms / n,
        "http_requests": client.requests_sent(),
        "query_deadline_ms": client.config().query_deadline_ms,
        "answer_deadline_ms": client.config().answer_deadline_ms,
        "refused_calls": client.policy_counters().0,
        "breaker_opened": client.policy_counters().1,
        "log": st.log,
    });
    let mut llm = llm;
    if a.llm.llm_ner {
        llm["ner"] = json!(ner.stats());
    }
    if a.llm.llm_openie {
        llm["openie"] = json!(openie.stats());
    }
    print_eval(&a, &report, Some(llm), a.llm.answer.then_some(answers_log));
    Ok(())
}

pub(crate) fn print_eval(
    a: &EvalArgs,
    report: &Report,
    llm: Option<serde_json::Value>,
    answers: Option<Vec<serde_json::Value>>,
) {
    if a.json {
        let mut v = report_json(report);
        if a.diagnostics {
            v["diagnostics"] = json!(report.diagnostics);
        }
        if let Some(l) = llm {
            v["llm"] = l;
        }
        if let Some(s) = &report.answers {
            v["answers"] = json!(s);
            v["generated"] = json!(answers);
        }
        outln!("{v}");
    } else {
        print_report(report);
        if a.diagnostics {
            print_diagnostics(report);
        }
        if let Some(l) = llm {
            outln!(
                "LLM {} ({}): {:.1} calls/query (max {}, budget {}), {} failed, {} of {} tiered edges unparsed (made Weak), {} budget skips; tiers {}; +{:.0} ms/query for tiers",
                l["model"].as_str().unwrap_or_default(),
                l["endpoint"].as_str().unwrap_or_default(),
                l["calls_per_query"].as_f64().unwrap_or_default(),
                l["max_calls_per_query"],
                l["call_budget"],
                l["failed_calls"],
                l["unparsed_edges"],
                l["unparsed_edges"].as_u64().unwrap_or(0) + l["tiered_edges"].as_u64().unwrap_or(0),
                l["budget_skips"],
                l["tiers"],
                l["added_ms_per_query"].as_f64().unwrap_or_default(),
            );
            if l["refused_calls"].as_u64().unwrap_or(0) > 0 {
                outln!(
                    "LLM endpoint failing: {} calls not made (query deadline {} ms spent, or circuit breaker open; it opened {} times): those edges fell back to Weak at once",
                    l["refused_calls"], l["query_deadline_ms"], l["breaker_opened"]
                );
            }
            for (key, what, unit) in [("ner", "query NER", "question"), ("openie", "OpenIE", "passage")] {
                let x = &l[key];
                if x.is_null() {
                    continue;
                }
                let calls = x["calls"].as_u64().unwrap_or(0);
                outln!(
                    "LLM {what}: {calls} calls (one per {unit}), {} failed, {} empty answers, {} fell back to the rule-based output; {} {} taken; {:.0} ms in all ({:.0} ms/call)",
                    x["failed_calls"],
                    x["empty_answers"],
                    x["fallbacks"],
                    x["items"],
                    if key == "ner" { "entities" } else { "triples" },
                    x["llm_ms"].as_f64().unwrap_or_default(),
                    x["llm_ms"].as_f64().unwrap_or_default() / calls.max(1) as f64,
                );
                if let Some(log) = x["log"].as_array() {
                    for line in log.iter().take(3) {
                        outln!("  {key} log: {}", line.as_str().unwrap_or_default());
                    }
                }
            }
            if let Some(log) = l["log"].as_array() {
                for line in log.iter().take(5) {
                    outln!("  llm log: {}", line.as_str().unwrap_or_default());
                }
            }
            if let Some(s) = &report.answers {
                outln!(
                    "answers from the top 5: EM {:.3}  F1 {:.3}  JSR {:.3}  ({} questions, {} failed; +{:.0} ms/query)",
                    s.em,
                    s.f1,
                    s.jsr,
                    s.questions,
                    s.failed,
                    l["answer_ms_per_query"].as_f64().unwrap_or_default()
                );
            }
        }
    }
}

pub(crate) fn print_diagnostics(r: &Report) {
    let Some(d) = &r.diagnostics else {
        outln!("diagnostics: {} does not walk a graph (no PPR mass to report)", r.method);
        return;
    };
    outln!(
        "PPR mass on the top 1% of nodes: by degree (hubs) {:.3}, by mass {:.3}  (mean over {} PPR queries)",
        d.hub_mass_share, d.top1_mass_share, d.ppr_queries
    );
    outln!(
        "queries {}  dense fallbacks {}  not converged {}  floored {}  mean PPR iterations {:.1}",
        d.queries, d.fallbacks, d.not_converged, d.floored, d.mean_iterations
    );
    outln!(
        "seeds/query {:.2} (anchored {:.2})  mentions {}: exact {}, embedding {}, dropped {}",
        d.mean_seeds,
        d.mean_anchored_seeds,
        d.mentions,
        d.anchored_exact,
        d.anchored_embedding,
        d.mentions_dropped
    );
    let tiers: Vec<String> = d.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
    outln!(
        "boosted arcs/query {:.1}  pruned arcs/query {:.1}  tiered: {}  tier failures {}",
        d.mean_boosted_arcs,
        d.mean_pruned_arcs,
        if tiers.is_empty() { "none".to_string() } else { tiers.join(", ") },
        d.tier_failures
    );
    let q: Vec<String> = d.fact_cosines.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
    outln!("query-fact cosine quantiles (mean per query): {}", q.join(", "));
    let t = &d.teleport_sources;
    outln!(
        "teleport by source (mean share): fact seeds {:.3}, anchors {:.3}, dense {:.3}, lexical {:.3}, title bridges {:.3}, query titles {:.3}, residual {:.3}",
        t.fact_seeds, t.anchors, t.dense_prior, t.lexical_prior, t.title_bridges, t.query_titles, t.residual
    );
    outln!(
        "gold title entities anchored {} of {}; boosted arcs into gold passages {}",
        d.gold_title_entities_anchored, d.gold_title_entities, d.boosted_to_gold
    );
    let tiers = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join(", ")
    };
    outln!(
        "tiered chain edges: {} (mean similarity {:.3}); other edges: {} (mean {:.3}); chain-edge AUC of the similarity {:.3}",
        tiers(&d.chain_edge_tiers),
        d.chain_edge_similarity,
        tiers(&d.other_edge_tiers),
        d.other_edge_similarity,
        d.chain_edge_auc
    );
}

pub(crate) fn report_json(r: &Report) -> serde_json::Value {
    let mut v = json!({
        "dataset": r.dataset,
        "method": r.method,
        "label": r.label,
        "setting": r.setting,
        "questions": r.all.questions,
        "recall@2": r.all.recall_at_2,
        "recall@5": r.all.recall_at_5,
        "fcr@5": r.all.fcr_at_5,
        "ms_per_query": r.ms_per_query,
        "index_ms": r.index_ms,
        "k": r.k,
        "by_type": r.by_type,
    });
    if r.k != 5 {
        v[format!("recall@{}", r.k)] = json!(r.all.recall_at_k);
        v[format!("fcr@{}", r.k)] = json!(r.all.fcr_at_k);
    }
    if let Some(c) = &r.catrag {
        v["catrag"] = json!(c);
    }
    if let Some(g) = &r.graph {
        v["graph"] = json!(g);
    }
    if let Some(d) = &r.diagnostics {
        v["hub_mass_share"] = json!(d.hub_mass_share);
        v["top1_mass_share"] = json!(d.top1_mass_share);
    }
    v
}

pub(crate) fn print_report(r: &Report) {
    outln!(
        "dataset {}  method {}  setting {}  questions {}",
        r.dataset, r.label, r.setting, r.all.questions
    );
    let extra = if r.k != 5 { format!("  Recall@{k}  FCR@{k}", k = r.k) } else { String::new() };
    outln!("{:<16} {:>5}  {:>9}  {:>9}  {:>6}{extra}", "type", "n", "Recall@2", "Recall@5", "FCR@5");
    let row = |name: &str, s: &cairn::eval::Scores| {
        let extra =
            if r.k != 5 { format!("  {:>8.3}  {:>6.3}", s.recall_at_k, s.fcr_at_k) } else { String::new() };
        outln!(
            "{:<16} {:>5}  {:>9.3}  {:>9.3}  {:>6.3}{extra}",
            name, s.questions, s.recall_at_2, s.recall_at_5, s.fcr_at_5
        );
    };
    row("all", &r.all);
    if r.by_type.len() > 1 {
        for (t, s) in &r.by_type {
            row(t, s);
        }
    }
    outln!("{:.3} ms per query; {:.1} ms building indexes", r.ms_per_query, r.index_ms);
}
