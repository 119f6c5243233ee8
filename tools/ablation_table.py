#!/usr/bin/env python3
"""CatRAG's ablation table with its ceiling rows: R@5 / FCR@5 per folder and configuration.

    python3 tools/ablation_table.py [--cairn target/release/cairn] [--data ../shared/data]
                                    [--datasets hotpotqa,musique,...] [--rows ROWS.jsonl]
                                    [--out runs.jsonl] [--reuse runs.jsonl] [--catrag-config JSON]

One `cairn eval --method catrag --sweep ROWS --json` per folder (corpus setting): the corpus index
and its graph are built once per folder and every row is evaluated on it. A row is one JSON
object: CatRAG configuration keys (`{"no_anchor": true}`, `{"epsilon": 2.0}`) and, for a ceiling,
`"oracle": {"tiers": true}` (evaluation-only: `cairn eval --oracle-tiers`, `--oracle-anchors`,
`--oracle-boost`). `"label"` names the row in the table and is not passed to cairn. The default
rows are the issue's ablations (defaults, --no-anchor, --no-tier, --no-prune, --no-boost,
--no-bridge, --no-query-title, --no-lexical) and the three ceilings.

Prints a Markdown table (rows × folders, `R@5 / FCR@5`), then each row's FCR@5 difference from
the defaults in points, and the per-row diagnostics that say whether a mechanism fired (mentions
anchored, arcs boosted, pruned, tiered). `--out` keeps every report (one JSON line each);
`--reuse` skips folders an earlier `--out` file already has. Standard library only.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

DEFAULT_ROWS = [
    {"label": "defaults"},
    {"label": "--no-anchor", "no_anchor": True},
    {"label": "--no-tier", "no_tier": True},
    {"label": "--no-prune", "no_prune": True},
    {"label": "--no-boost", "no_boost": True},
    {"label": "--no-bridge", "no_bridge": True},
    {"label": "--no-query-title", "no_query_title": True},
    {"label": "--no-lexical", "no_lexical": True},
    {"label": "ceiling: oracle tiers", "oracle": {"tiers": True}},
    {"label": "ceiling: oracle anchors", "oracle": {"anchors": True}},
    {"label": "ceiling: oracle boost", "oracle": {"boost": True}},
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", default=str(ROOT / "target" / "release" / "cairn"))
    ap.add_argument("--data", default="/work/shared/data")
    ap.add_argument("--datasets", default="hotpotqa,2wikimultihopqa,musique,"
                    "hotpotqa-scale,2wikimultihopqa-scale,musique-scale")
    ap.add_argument("--rows", help="JSONL file of rows (default: the ablations and the three ceilings)")
    ap.add_argument("--catrag-config", help="JSON passed to --catrag-config (the base every row is merged over)")
    ap.add_argument("--out", help="append every report to this JSONL file")
    ap.add_argument("--reuse", help="a JSONL file of an earlier --out: its folders are not run again")
    a = ap.parse_args()

    rows = DEFAULT_ROWS
    if a.rows:
        rows = [json.loads(l) for l in pathlib.Path(a.rows).read_text().splitlines() if l.strip()]
    labels = [r.get("label") or json.dumps({k: v for k, v in r.items() if k != "label"}) for r in rows]
    sweep = [json.dumps({k: v for k, v in r.items() if k != "label"}) for r in rows]

    reports = {}  # (dataset, row index) → report
    if a.reuse:
        for line in pathlib.Path(a.reuse).read_text().splitlines():
            r = json.loads(line)
            if r.get("row_label") in labels:
                reports[(r["dataset"], labels.index(r["row_label"]))] = r
    datasets = a.datasets.split(",")
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(sweep) + "\n")
        sweep_path = f.name
    for ds in datasets:
        if all((ds, i) in reports for i in range(len(rows))):
            continue
        cmd = [a.cairn, "eval", "--data", str(pathlib.Path(a.data) / ds), "--method", "catrag",
               "--sweep", sweep_path, "--json", "--diagnostics"]
        if a.catrag_config:
            cmd += ["--catrag-config", a.catrag_config]
        t = time.time()
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{ds}: cairn eval failed: {out.stderr.strip()}", file=sys.stderr)
            return 1
        lines = [json.loads(l) for l in out.stdout.splitlines() if l.strip().startswith("{")]
        if len(lines) != len(rows):
            print(f"{ds}: {len(lines)} reports for {len(rows)} rows", file=sys.stderr)
            return 1
        print(f"{ds}: {time.time() - t:.0f} s", file=sys.stderr)
        for i, r in enumerate(lines):
            r["row_label"] = labels[i]
            reports[(ds, i)] = r
            if a.out:
                with open(a.out, "a") as o:
                    o.write(json.dumps(r) + "\n")

    def cell(ds, i):
        r = reports.get((ds, i))
        if not r:
            return "–"
        return f'{r["recall@5"]:.3f} / {r["fcr@5"]:.3f}'

    print("| row | " + " | ".join(datasets) + " |")
    print("|---|" + "---|" * len(datasets))
    for i, lab in enumerate(labels):
        print(f"| {lab} | " + " | ".join(cell(ds, i) for ds in datasets) + " |")
    print()
    print("FCR@5 minus the first row, points:")
    print("| row | " + " | ".join(datasets) + " |")
    print("|---|" + "---|" * len(datasets))
    for i, lab in enumerate(labels[1:], 1):
        diffs = []
        for ds in datasets:
            r, base = reports.get((ds, i)), reports.get((ds, 0))
            diffs.append(f'{100 * (r["fcr@5"] - base["fcr@5"]):+.1f}' if r and base else "–")
        print(f"| {lab} | " + " | ".join(diffs) + " |")
    print()
    print("Diagnostics of the first row (per folder): mentions, anchored exact / embedding, "
          "mean anchored seeds, mean boosted arcs, mean pruned arcs, tiers")
    for ds in datasets:
        r = reports.get((ds, 0))
        if not r or not r.get("diagnostics"):
            continue
        d = r["diagnostics"]
        t = d.get("teleport_sources", {})
        print(f'{ds}: mentions {d["mentions"]}, anchored {d["anchored_exact"]} / {d["anchored_embedding"]}, '
              f'gold title entities anchored {d.get("gold_title_entities_anchored")} of {d.get("gold_title_entities")}, '
              f'anchored seeds {d["mean_anchored_seeds"]:.2f}, boosted {d["mean_boosted_arcs"]:.1f} '
              f'(into gold {d.get("boosted_to_gold")}), pruned {d["mean_pruned_arcs"]:.2f}, tiers {d["tiers"]}; '
              f'chain edges {d.get("chain_edge_tiers")} sim {d.get("chain_edge_similarity", 0):.3f}, '
              f'others {d.get("other_edge_tiers")} sim {d.get("other_edge_similarity", 0):.3f}, '
              f'AUC {d.get("chain_edge_auc", 0):.3f}; teleport ' +
              ", ".join(f"{k} {v:.3f}" for k, v in t.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
