#!/usr/bin/env bash
# Typo tolerance figures (docs/method/ux.md): the misspelt entity queries of
# tests/fixtures/misspelt-entities (both files) over a corpus, top-1 and top-5 hit rates
# (Recall@1 and Recall@5: one gold passage each) with and without typo tolerance, for bm25 and
# catrag. Needs target/release/cairn (cargo build --release) and ../shared/data.
#
#   bash scripts/typo_eval.sh [corpus folder]   # default ../shared/data/2wikimultihopqa
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data/2wikimultihopqa}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$(realpath "$data/corpus.jsonl")" "$dir/corpus.jsonl"
for fixture in questions surname-questions; do
  cp "tests/fixtures/misspelt-entities/$fixture.jsonl" "$dir/questions.jsonl"
  for method in bm25 catrag; do
    for flag in "" --no-typos; do
      printf '%-18s %-7s %-11s ' "$fixture" "$method" "${flag:-typos}"
      target/release/cairn eval --data "$dir" --setting corpus --method "$method" --k 1 $flag --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin); m=r.get("metrics", r); print(json.dumps({k: v for k, v in m.items() if k in ("recall@1", "recall@5")}))'
    done
  done
done
