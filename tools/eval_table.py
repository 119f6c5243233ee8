#!/usr/bin/env python3
"""One table of Recall@2, Recall@5 and FCR@5 per dataset, setting and method, from `cairn eval`.

    python3 tools/eval_table.py [--cairn target/release/cairn] [--data ../shared/data]
                                [--methods bm25,dense,hybrid,dense-minilm] [--settings corpus,pool]
                                [--datasets hotpotqa,musique,2wikimultihopqa] [--json out.json]

Runs `cairn eval --json` once per (dataset, setting, method) and prints a Markdown table (the form
the closing notes use). Each run is independent; nothing is cached, so the figures are exactly
what `cairn eval` prints for that combination. `dense-minilm` needs a cairn built with
`--features minilm` and the model from tools/fetch_models.sh (it embeds about 10 passages a second
on one core: several minutes per dataset and setting).
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
    ap.add_argument("--methods", default="bm25,dense,hybrid")
    ap.add_argument("--settings", default="corpus,pool")
    ap.add_argument("--datasets", default="hotpotqa,musique,2wikimultihopqa")
    ap.add_argument("--model", default=str(ROOT / "models" / "minilm-int8.onnx"))
    ap.add_argument("--json", help="also write every report to this file")
    a = ap.parse_args()

    rows = []
    for ds in a.datasets.split(","):
        for setting in a.settings.split(","):
            for method in a.methods.split(","):
                cmd = [a.cairn, "eval", "--data", str(pathlib.Path(a.data) / ds), "--setting", setting,
                       "--method", method, "--json"]
                if method == "dense-minilm":
                    cmd += ["--model", a.model]
                t0 = time.time()
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"eval_table: {' '.join(cmd)} failed: {out.stderr.strip()}", file=sys.stderr)
                    return 1
                r = json.loads(out.stdout)
                r["wall_s"] = round(time.time() - t0, 1)
                rows.append(r)
                print(f"  {ds:<16} {setting:<7} {method:<13} R@5 {r['recall@5']:.3f}  ({r['wall_s']} s)",
                      file=sys.stderr)

    print("| dataset | setting | method | questions | Recall@2 | Recall@5 | FCR@5 |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['dataset']} | {r['setting']} | {r['method']} | {r['questions']} | "
              f"{r['recall@2']:.3f} | {r['recall@5']:.3f} | {r['fcr@5']:.3f} |")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
