#!/usr/bin/env bash
# `cairn index` on PDF and Word files: the fixtures of tests/fixtures/documents plus real files
# from Debian packages (R's manuals from r-doc-pdf, ReportLab's user guide from
# python-reportlab-doc, and a .docx that python3-docx writes of the GNU GPL 3 with its section
# headings as Heading 1/2 styles), installed here with apt-get when missing. Prints the index
# run's report (read_ms is the reading of the files) and /usr/bin/time's wall time and peak
# memory. CAIRN names the binary (default target/release/cairn; build it with
# `CAIRN_EMBED_WASM=0 cargo build --release`).
# Usage: bash scripts/bench_documents.sh [--big]   (--big adds R's 3,700-page reference manual)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cairn=${CAIRN:-$root/target/release/cairn}
need=()
[ -f /usr/share/R/doc/manual/R-intro.pdf ] || need+=(r-doc-pdf)
[ -f /usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf ] || need+=(python-reportlab-doc)
/usr/bin/python3 -c 'import docx' 2>/dev/null || need+=(python3-docx)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/site"
cp "$root"/tests/fixtures/documents/*.pdf "$root"/tests/fixtures/documents/*.docx "$dir/site/"
for m in R-FAQ R-admin R-data R-exts R-intro R-ints R-lang; do
  cp "/usr/share/R/doc/manual/$m.pdf" "$dir/site/"
done
cp /usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf "$dir/site/"
if [ "${1:-}" = "--big" ]; then cp /usr/share/R/doc/manual/refman.pdf "$dir/site/"; fi
/usr/bin/python3 - "$dir/site/gpl-3.docx" <<'PY'
import re, sys, docx
d = docx.Document()
text = open('/usr/share/common-licenses/GPL-3', encoding='utf-8').read()
for block in re.split(r'\n\s*\n', text):
    line = ' '.join(block.split())
    if not line:
        continue
    if re.fullmatch(r'[A-Z][A-Z ,.-]+', line) and len(line) < 80:
        d.add_heading(line.title(), level=1)
    elif re.match(r'^\d+\. [A-Z][^.]{2,60}\.$', line):
        d.add_heading(line, level=2)
    else:
        d.add_paragraph(line)
d.save(sys.argv[1])
PY
ls -l "$dir/site" | awk 'NR > 1 { printf "%10d  %s\n", $5, $9 }'
/usr/bin/time -v "$cairn" index "$dir/site" --out "$dir/out" --no-dense > "$dir/report.json" 2> "$dir/stderr.txt" || {
  cat "$dir/stderr.txt"; exit 1; }
grep -v -E '^\s' "$dir/stderr.txt" | grep -v 'Command being timed' || true
python3 - "$dir/report.json" "$dir/stderr.txt" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
wall = re.search(r'Elapsed \(wall clock\) time.*: (\S+)', t).group(1)
rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', t).group(1))
print(f"files {r['pages']}, warnings {r['warnings']}, passages {r['passages']}, text {r['text_bytes']} bytes")
print(f"read_ms {r['read_ms']:.0f}, build_ms {r['build_ms']:.0f}, wall {wall}, peak RSS {rss / 1024:.0f} MiB")
PY
