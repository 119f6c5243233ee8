//! `cairn methods`: every retrieval method of this build, from the method table
//! (`cairn::index::Method`): its name, family, what it needs and how it ranks. `--json` prints
//! the array the wasm module's `methods()` returns (read by `tools/eval_table.py` and the page's
//! end-to-end test).

use cairn::index::Method;
use clap::Args;

use crate::common::*;

#[derive(Args)]
pub(crate) struct MethodsArgs {
    /// Print the methods as a JSON array of `{name, label, short, family, needs, description,
    /// score, prefix, first_stage, candidates}`, as `methods()` in the JS API.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn methods(a: MethodsArgs) -> CliResult<()> {
    let infos = Method::infos();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&infos).map_err(|e| e.to_string())?);
        return Ok(());
    }
    for info in infos {
        let mut needs = Vec::new();
        if let Some(e) = info.needs.embedder {
            needs.push(format!("the {} embedder", e.name()));
        }
        if info.needs.graph {
            needs.push("the knowledge graph".to_string());
        }
        if info.needs.cage {
            needs.push("CAGE's graph embeddings (--features cage)".to_string());
        }
        if info.needs.llm {
            needs.push("an LLM endpoint, optionally (--llm)".to_string());
        }
        let needs = if needs.is_empty() { "nothing else".to_string() } else { needs.join(", ") };
        println!("{:12} {} [{}]", info.name, info.label, info.family);
        println!("{:12} {}", "", info.description);
        println!("{:12} score: {}; needs {}", "", info.score, needs);
    }
    Ok(())
}
