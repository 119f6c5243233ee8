#!/usr/bin/env python3
"""One table of Recall@2, Recall@5 and FCR@5 per dataset, setting and method, from `cairn eval`.

    python3 tools/eval_table.py [--cairn target/release/cairn] [--data ../shared/data]
                                [--methods bm25,dense,dense-minilm,hybrid,hipporag,catrag]
                                [--settings corpus] [--datasets hotpotqa,...,musique-scale]
                                [--json out.json] [--reuse out.json] [--vector-cache DIR]
                                [--catrag-config JSON] [--diagnostics] [--by-type hotpotqa]

A method may carry CatRAG ablation flags after a colon, joined by `+`: `catrag:no-anchor` runs
`cairn eval --method catrag --no-anchor`, `catrag:no-prune+no-tier` both flags. The graph methods
(`hipporag`, `catrag`) take `--catrag-config` (JSON, passed through); CAGE's ablations the same
way: `cage:no-reweight`, `catrag+cage:plain-gcn` (a cairn built with `--features cage`); `--diagnostics` adds the
share of PPR mass on the top 1% of nodes by degree (hubs) and by mass as two more columns.

Runs `cairn eval --json` once per (dataset, setting, method) and prints a Markdown table (the form
the closing notes use). Each run is independent; nothing is cached, so the figures are exactly
what `cairn eval` prints for that combination. `dense-minilm` needs a cairn built with
`--features minilm` and the model from tools/fetch_models.sh (it embeds about 10 passages a second
on one core: several minutes per dataset and setting).
By default: the six folders (three dev folders and their `-scale` versions, corpus setting) and
the six methods the graph methods are measured against; after the table, one line per dataset
gives the graph methods' margins over the best flat method of the run (max of bm25, dense,
hybrid, dense-minilm) in R@5 and FCR@5 points. `catrag:graph-minilm` runs catrag with MiniLM's
passage vectors attached (its passage prior from them; `cairn eval --graph-minilm`).
`--vector-cache DIR` keeps MiniLM's passage vectors between runs. `--reuse FILE` takes the rows of an earlier
`--json FILE` run for the (dataset, setting, label) combinations it has instead of running them
again (dense-minilm at scale costs minutes per folder).
The methods, their families and needs come from the method table (`cairn methods --json`): the
default list is every method outside the CAGE family, the flat methods of the margins are those of
the lexical, dense and hybrid families, the graph methods those of the graph family; a method that
needs MiniLM's vectors gets `--model`, a CAGE method `--cage-args`.
Standard library only.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", default=str(ROOT / "target" / "release" / "cairn"))
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--methods", help="comma-separated (default: every method outside the CAGE family, "
                    "from `cairn methods --json`)")
    ap.add_argument("--settings", default="corpus")
    ap.add_argument("--datasets", default="hotpotqa,2wikimultihopqa,musique,"
                    "hotpotqa-scale,2wikimultihopqa-scale,musique-scale")
    ap.add_argument("--reuse", help="a --json file of an earlier run: its rows are not run again")
    ap.add_argument("--model", default=str(ROOT / "models" / "minilm-int8.onnx"))
    ap.add_argument("--vector-cache", help="folder of MiniLM passage vectors kept between runs "
                    "(`cairn eval --vector-cache`): the -scale folders share one corpus")
    ap.add_argument("--json", help="also write every report to this file")
    ap.add_argument("--catrag-config", help="JSON passed to the graph methods' --catrag-config")
    ap.add_argument("--diagnostics", action="store_true", help="add the hub-mass columns")
    ap.add_argument("--cage-args", default="", help="extra arguments for the CAGE methods, e.g. '--alpha 0.8'")
    ap.add_argument("--by-type", help="datasets (comma-separated) whose question types get rows of their own, "
                    "e.g. hotpotqa (bridge / comparison)")
    a = ap.parse_args()
    listed = subprocess.run([a.cairn, "methods", "--json"], capture_output=True, text=True)
    if listed.returncode != 0:
        print(f"eval_table: {a.cairn} methods --json failed: {listed.stderr.strip()}", file=sys.stderr)
        return 1
    table = {m["name"]: m for m in json.loads(listed.stdout)}
    if not a.methods:
        a.methods = ",".join(n for n, m in table.items() if m["family"] != "cage")
    for spec in a.methods.split(","):
        if spec.partition(":")[0] not in table:
            print(f"eval_table: unknown method {spec!r} (cairn methods: {', '.join(table)})", file=sys.stderr)
            return 1

    rows = []
    reuse = {}
    if a.reuse and pathlib.Path(a.reuse).exists():
        for r in json.loads(pathlib.Path(a.reuse).read_text()):
            reuse[(r["dataset"], r["setting"], r.get("label", r["method"]))] = r
    for ds in a.datasets.split(","):
        for setting in a.settings.split(","):
            for spec in a.methods.split(","):
                method, _, flags = spec.partition(":")
                label = method + "".join(f" --{f}" for f in flags.split("+") if f)
                if (ds, setting, label) in reuse:
                    rows.append(reuse[(ds, setting, label)])
                    continue
                cmd = [a.cairn, "eval", "--data", str(pathlib.Path(a.data) / ds), "--setting", setting,
                       "--method", method, "--json"]
                cmd += [f"--{f}" for f in flags.split("+") if f]
                needs = table[method]["needs"]
                if needs["embedder"] == "minilm" or "graph-minilm" in flags.split("+"):
                    cmd += ["--model", a.model]
                    if a.vector_cache:
                        cmd += ["--vector-cache", a.vector_cache]
                if needs["cage"] and a.cage_args:
                    cmd += a.cage_args.split()
                if needs["graph"] and not needs["cage"] and a.catrag_config:
                    cmd += ["--catrag-config", a.catrag_config]
                t0 = time.time()
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"eval_table: {' '.join(cmd)} failed: {out.stderr.strip()}", file=sys.stderr)
                    return 1
                r = json.loads(out.stdout)
                r["wall_s"] = round(time.time() - t0, 1)
                rows.append(r)
                label = r.get("label", method)
                print(f"  {ds:<16} {setting:<7} {label:<24} R@5 {r['recall@5']:.3f}  ({r['wall_s']} s)",
                      file=sys.stderr)

    extra_head = " hub mass (top 1% by degree) | top-1% mass |" if a.diagnostics else ""
    extra_rule = "---:|---:|" if a.diagnostics else ""
    print(f"| dataset | setting | method | questions | Recall@2 | Recall@5 | FCR@5 | ms/query |{extra_head}")
    print(f"|---|---|---|---:|---:|---:|---:|---:|{extra_rule}")
    for r in rows:
        extra = ""
        if a.diagnostics:
            hub, top = r.get("hub_mass_share"), r.get("top1_mass_share")
            extra = (f" {hub:.3f} | {top:.3f} |" if hub is not None else " – | – |")
        print(f"| {r['dataset']} | {r['setting']} | {r.get('label', r['method'])} | {r['questions']} | "
              f"{r['recall@2']:.3f} | {r['recall@5']:.3f} | {r['fcr@5']:.3f} | {r['ms_per_query']:.2f} |{extra}")
        if a.by_type and r["dataset"] in a.by_type.split(","):
            for t, sc in sorted(r.get("by_type", {}).items()):
                print(f"| {r['dataset']} ({t}) | {r['setting']} | {r.get('label', r['method'])} | {sc['questions']} | "
                      f"{sc['recall@2']:.3f} | {sc['recall@5']:.3f} | {sc['fcr@5']:.3f} | |"
                      + (" | |" if a.diagnostics else ""))
    flat = [n for n, m in table.items() if m["family"] in ("lexical", "dense", "hybrid")]
    graph = [n for n, m in table.items() if m["family"] == "graph"]
    print()
    for ds in a.datasets.split(","):
        for setting in a.settings.split(","):
            here = [r for r in rows if r["dataset"] == ds and r["setting"] == setting]
            best = [r for r in here if r["method"] in flat]
            if not best:
                continue
            r5 = max(r["recall@5"] for r in best)
            f5 = max(r["fcr@5"] for r in best)
            margins = [f"{r.get('label', r['method'])} R@5 {100 * (r['recall@5'] - r5):+.1f} FCR@5 {100 * (r['fcr@5'] - f5):+.1f}"
                       for r in here if r["method"] in graph]
            print(f"{ds} {setting}: best flat R@5 {r5:.3f} FCR@5 {f5:.3f}; " + "; ".join(margins))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
