#!/usr/bin/env python3
"""Check Cairn's tract embedder against the reference: onnxruntime + Hugging Face `tokenizers`.

Embeds N dev passages (title + " " + text, in corpus order) from a corpus JSONL twice:

- reference: the `tokenizers` library with all-MiniLM-L6-v2's tokenizer.json (padding off,
  truncation at 256 tokens, all-MiniLM-L6-v2's max_seq_length), onnxruntime running
  models/minilm-int8.onnx one passage at a time, mean pooling over the attention mask
  (Reimers & Gurevych 2019; the sentence-transformers model card), L2 normalisation;
- Cairn: `cargo run --release --features minilm --example embed_minilm` (Cairn's WordPiece and
  tract's optimised plan, batched and padded to the longest passage of each batch),

and prints the minimum and mean cosine between the two vectors of each passage. Exit status 1 if
the minimum is below --min-cosine (default 0.999).

    tools/fetch_models.sh
    python3 -m pip install -r tools/requirements-check-tract.txt
    python3 tools/check_tract.py [--corpus ../shared/data/hotpotqa/corpus.jsonl] [-n 100]

`--sentences` instead prints the reference cosines of the three sentences that
tests/minilm.rs checks (and the first components of the first vector), and runs no Cargo.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
MAX_TOKENS = 256
DIM = 384


def load_texts(corpus: Path, n: int) -> list[str]:
    texts = []
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            p = json.loads(line)
            title = p.get("title") or ""
            texts.append(f"{title} {p['text']}" if title else p["text"])
            if len(texts) == n:
                break
    return texts


def reference(texts: list[str], model: Path, tokenizer: Path) -> tuple[np.ndarray, list[int]]:
    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_padding()  # the file pads to a fixed 128: padded positions would carry mask 1
    tok.enable_truncation(MAX_TOKENS)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    lengths = []
    for i, text in enumerate(texts):
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = sess.run(["last_hidden_state"], feeds)[0][0]  # [T, 384]
        m = mask[0].astype(np.float32)[:, None]
        v = (hidden * m).sum(axis=0) / max(m.sum(), 1e-9)
        out[i] = v / max(np.linalg.norm(v), 1e-12)
        lengths.append(len(enc.ids))
    return out, lengths


SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]


def print_sentences(model: Path, tokenizer: Path) -> None:
    v, _ = reference(SENTENCES, model, tokenizer)
    print(f"onnxruntime {ort.__version__}, tokenizers (reference), {model.name}")
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        print(f"cos({SENTENCES[i]!r}, {SENTENCES[j]!r}) = {float(v[i] @ v[j]):.6f}")
    print(f"first components of {SENTENCES[0]!r}: {[round(float(x), 6) for x in v[0, :4]]}")


def cairn(texts: list[str], model: Path, release: bool) -> np.ndarray:
    cmd = ["cargo", "run", "--quiet", "--features", "minilm", "--example", "embed_minilm"]
    if release:
        cmd.insert(2, "--release")
    cmd += ["--", "--model", str(model), "--format", "f32"]
    stdin = "".join(json.dumps({"text": t}) + "\n" for t in texts).encode("utf-8")
    run = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, cwd=ROOT, check=True)
    vecs = np.frombuffer(run.stdout, dtype="<f4")
    if vecs.size != len(texts) * DIM:
        sys.exit(f"check_tract: expected {len(texts)}x{DIM} floats from Cairn, got {vecs.size}")
    return vecs.reshape(len(texts), DIM)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/hotpotqa/corpus.jsonl")
    ap.add_argument("-n", type=int, default=100, help="number of passages (default 100)")
    ap.add_argument("--model", type=Path, default=ROOT / "models/minilm-int8.onnx")
    ap.add_argument("--tokenizer", type=Path, default=ROOT / "models/minilm-tokenizer.json")
    ap.add_argument("--min-cosine", type=float, default=0.999)
    ap.add_argument("--sentences", action="store_true", help="print the values tests/minilm.rs checks")
    ap.add_argument("--debug", action="store_true", help="build the example without --release")
    args = ap.parse_args()
    for p in (args.model, args.tokenizer):
        if not p.exists():
            sys.exit(f"check_tract: {p} is missing; run tools/fetch_models.sh")

    if args.sentences:
        print_sentences(args.model, args.tokenizer)
        return 0

    texts = load_texts(args.corpus, args.n)
    t = time.perf_counter()
    ref, lengths = reference(texts, args.model, args.tokenizer)
    t_ref = time.perf_counter() - t
    t = time.perf_counter()
    got = cairn(texts, args.model, release=not args.debug)
    t_cairn = time.perf_counter() - t

    cos = (ref * got).sum(axis=1)  # both sides are unit vectors
    norms = np.linalg.norm(got, axis=1)
    worst = int(cos.argmin())
    print(f"passages: {len(texts)} from {args.corpus}")
    print(f"tokens per passage: mean {np.mean(lengths):.1f}, max {max(lengths)} "
          f"({sum(n >= MAX_TOKENS for n in lengths)} truncated at {MAX_TOKENS})")
    diff = np.abs(ref - got).max()
    print(f"cosine(onnxruntime, Cairn/tract): min {cos.min():.8f} (passage {worst}), "
          f"mean {cos.mean():.8f}; largest component difference {diff:.2e}")
    print(f"Cairn norms: min {norms.min():.6f}, max {norms.max():.6f}")
    print(f"time: onnxruntime {t_ref:.1f} s (1 thread, unbatched); "
          f"Cairn {t_cairn:.1f} s (including cargo and model load)")
    if cos.min() < args.min_cosine:
        print(f"FAIL: minimum cosine below {args.min_cosine}")
        return 1
    print(f"OK: minimum cosine >= {args.min_cosine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
