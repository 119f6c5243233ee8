#!/usr/bin/env python3
"""Train CAGE's R-GCN (docs/method/spec.md §4; Qi et al., 2026) offline, export it to int8 ONNX, and check
tract against JAX and onnxruntime.

Data: passage graphs written by `cargo run --release --example cage_export` (nodes, typed edges
already reweighted with β_cage = 1.5, min-out-degree flags, and the static embedder's vector of
every node lemma). Passages only: no question, answer or gold label is read.

Model (one layer, no bias, so padding contributes nothing):
    h_i = ReLU( Σ_{c=0..C-1} Σ_j Â_c[i, j] · x_j W_c ),   Z = Σ_i h_i ∈ R^128
channel 0 is the self-loop (Â_0 = I on real nodes), channels 1..9 Cairn's relations
(src/cage/graph.rs RELATIONS), Â_c[i, j] = w(i→j) / |N_c(i)|. `--merge` trains the plain GCN
ablation (all relations in channel 1, C = 2).

Objective `--objective bonding` (the shipped `rgcn-int8.onnx`): informational bonding mined
from corpus structure alone (CAGE's bonding and noise resistance; no question, answer or gold
label is read). Positive pairs (A, B): passage A's text mentions passage B's title (a bridge),
or A and B share a rare proper-noun lemma (2 to 5 passages have it). Each pair gets one hard
negative: a passage with the highest overlap of ordinary lemmas with A that shares no proper
noun with it and is not bonded to it. Loss: InfoNCE on the cosine of the R-GCN's Z itself (no
projection head, because coherence at query time is exactly cos(Z_p, Z_q)), temperature 0.1,
candidates B of the batch plus the hard negatives. Passages of the `--exclude` corpora are kept
out of every pair (held out to measure what generalises).

Objective `--objective graphcl` (the ablation, `rgcn-graphcl-int8.onnx`): GraphCL (You et al.,
2020) NT-Xent / InfoNCE. Two views of each graph (edge drop
p = 0.2, feature masking: 20 % of the 256 feature dimensions zeroed per graph), a 2-layer
projection head used for the loss only, temperature 0.2; the other graphs of the batch are the
negatives. So two views of one graph are pulled together and different graphs pushed apart
(a diversity objective). Adam, lr 1e-3, batch 128.

Export: each W_c quantised symmetric per tensor to int8 (scale = max|W_c| / 127), ONNX opset 13:
DequantizeLinear per channel → Concat → MatMul(features) → Reshape/Transpose → MatMul(adjacency)
→ ReduceSum(channels) → Relu → ReduceSum(nodes). Inputs `features` [B, N, 256] and `adjacency`
[B, C, N, N] (float32, dynamic B and N), output `z` [B, 128].

    python3 -m venv /work/venvs/cage && /work/venvs/cage/bin/pip install -r tools/requirements-cage.txt
    cargo run --release --example cage_export -- /tmp/cage/train CORPUS.jsonl ...
    python3 tools/train_cage.py train --data /tmp/cage/train --out assets/cage/rgcn-int8.onnx
    python3 tools/train_cage.py train --data /tmp/cage/train --out assets/cage/gcn-int8.onnx --merge
    python3 tools/train_cage.py check --model assets/cage/rgcn-int8.onnx --dump DUMP.json [--fixture OUT.json]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

F = 256
H = 128
R = 10  # channels: self + 9 relations (src/cage/graph.rs)


def load(data: Path):
    feats = np.fromfile(data / "features.f32", dtype="<f4").reshape(-1, F)
    graphs = []
    with (data / "graphs.jsonl").open() as f:
        for line in f:
            g = json.loads(line)
            if not g["nodes"]:
                continue
            graphs.append(
                (
                    np.asarray(g["nodes"], dtype=np.int64),
                    np.asarray(g["edges"], dtype=np.float32).reshape(-1, 4),
                    np.asarray(g["min"], dtype=bool),
                )
            )
    return feats, graphs


def adjacency(edges: np.ndarray, n: int, stride: int, channels: int, merge: bool) -> np.ndarray:
    """Â as src/cage/graph.rs adjacency_into: identity in channel 0, w / |N_c(i)| elsewhere."""
    a = np.zeros((channels, stride, stride), dtype=np.float32)
    a[0, np.arange(n), np.arange(n)] = 1.0
    if len(edges):
        rel = np.ones(len(edges), dtype=np.int64) if merge else edges[:, 0].astype(np.int64)
        src = edges[:, 1].astype(np.int64)
        dst = edges[:, 2].astype(np.int64)
        counts = np.zeros((channels, n), dtype=np.float32)
        np.add.at(counts, (rel, src), 1.0)
        np.add.at(a, (rel, src, dst), edges[:, 3] / counts[rel, src])
    return a


def batch_tensors(feats, graphs, beta_scale, channels, merge, rng=None, edge_drop=0.0, feat_mask=0.0):
    empty = (np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.float32), np.zeros(0, dtype=bool))
    graphs = [g if g is not None else empty for g in graphs]
    n = max(1, max(len(g[0]) for g in graphs))
    n = int(np.ceil(n / 16) * 16)  # bucket shapes so JAX compiles a few times only
    b = len(graphs)
    x = np.zeros((b, n, F), dtype=np.float32)
    a = np.zeros((b, channels, n, n), dtype=np.float32)
    for k, (rows, edges, mins) in enumerate(graphs):
        m = len(rows)
        xk = feats[rows].copy()
        xk[mins] *= beta_scale
        e = edges
        if rng is not None:
            if edge_drop > 0 and len(e):
                e = e[rng.random(len(e)) >= edge_drop]
            if feat_mask > 0:
                xk[:, rng.random(F) < feat_mask] = 0.0
        x[k, :m] = xk
        a[k] = adjacency(e, m, n, channels, merge)
    return x, a


def read_corpus(paths):
    """id → (title, text) over corpus.jsonl files."""
    out = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    out[d["id"]] = (d.get("title", ""), d.get("text", ""))
    return out


WORD = None


def words(text):
    global WORD
    import re

    if WORD is None:
        WORD = re.compile(r"[A-Za-z0-9À-ÿ]+")
    return [w.lower() for w in WORD.findall(text)]


def mine_pairs(ids, labels, corpus, excluded, rng, max_pairs, max_title_df=5, max_entity_df=5):
    """Bonded pairs and one hard negative each, from passages only (see the module docstring).
    Returns (pairs [(a, b, neg)], stats)."""
    from collections import Counter, defaultdict

    keep = [i for i, pid in enumerate(ids) if pid not in excluded and pid in corpus]
    proper = [set(l for l in labels[i] if l[:1].isupper()) for i in range(len(ids))]
    common = [set(l for l in labels[i] if not l[:1].isupper()) for i in range(len(ids))]
    # 1. B's title mentioned in A's text (token n-gram match; titles stripped of a "(...)" tail).
    title_of = defaultdict(list)
    for i in keep:
        t = corpus[ids[i]][0].split("(")[0].strip()
        tw = tuple(words(t))
        if tw and (len(tw) > 1 or len(tw[0]) > 3):
            title_of[tw].append(i)
    maxn = max((len(t) for t in title_of), default=1)
    bonded = set()
    title_pairs = []
    for a in keep:
        tw = words(corpus[ids[a]][1])
        seen = set()
        for n in range(1, maxn + 1):
            for k in range(len(tw) - n + 1):
                g = tuple(tw[k : k + n])
                if g in title_of and g not in seen:
                    seen.add(g)
                    bs = [b for b in title_of[g] if b != a]
                    if 0 < len(bs) <= max_title_df:
                        for b in bs:
                            if corpus[ids[b]][0] != corpus[ids[a]][0]:
                                title_pairs.append((a, b))
    # 2. a rare proper noun shared by 2..max_entity_df passages.
    holders = defaultdict(list)
    for i in keep:
        for l in proper[i]:
            holders[l].append(i)
    entity_pairs = []
    for l, hs in holders.items():
        if 2 <= len(hs) <= max_entity_df:
            for x in range(len(hs)):
                for y in range(x + 1, len(hs)):
                    entity_pairs.append((hs[x], hs[y]))
    for a, b in title_pairs + entity_pairs:
        bonded.add((a, b))
        bonded.add((b, a))
    pairs = list(dict.fromkeys(title_pairs)) + [p for p in dict.fromkeys(entity_pairs) if p not in set(title_pairs)]
    rng.shuffle(pairs)
    pairs = pairs[:max_pairs]
    # 3. hard negatives: most ordinary lemmas in common with A, no proper noun in common, not bonded.
    df = Counter(l for i in keep for l in common[i])
    inv = defaultdict(list)
    for i in keep:
        for l in common[i]:
            if df[l] <= 100:
                inv[l].append(i)
    out = []
    negs = 0
    for a, b in pairs:
        c = Counter()
        for l in common[a]:
            for j in inv.get(l, ()):
                if j != a:
                    c[j] += 1
        neg = -1
        for j, _ in c.most_common(20):
            if j != b and not (proper[j] & proper[a]) and (a, j) not in bonded:
                neg = j
                break
        if neg < 0:
            neg = int(keep[rng.integers(len(keep))])
        else:
            negs += 1
        out.append((a, b, neg))
    stats = {
        "passages_in_pairs": len(keep),
        "title_pairs": len(set(title_pairs)),
        "entity_pairs": len(set(entity_pairs)),
        "pairs_used": len(out),
        "hard_negatives_found": negs,
    }
    return out, stats


def train_bonding(args):
    import jax
    import jax.numpy as jnp

    channels = 2 if args.merge else R
    feats, graphs, ids, labels = load_with_ids(Path(args.data))
    corpus = read_corpus(args.corpus)
    excluded = set(read_corpus(args.exclude).keys()) if args.exclude else set()
    rng = np.random.default_rng(args.seed)
    pairs, stats = mine_pairs(ids, labels, corpus, excluded, rng, args.max_pairs)
    stats["excluded_passages"] = len(excluded)
    print(json.dumps(stats), file=sys.stderr)
    key = jax.random.PRNGKey(args.seed)
    glorot = np.sqrt(2.0 / (F + H))
    params = {"w": jax.random.normal(key, (channels, F, H)) * glorot}

    def encode(w, x, a):
        xw = jnp.einsum("bnf,cfh->bcnh", x, w)
        h = jax.nn.relu(jnp.einsum("bcij,bcjh->bih", a, xw))
        return h.sum(axis=1)

    def unit(z):
        return z / (jnp.linalg.norm(z, axis=1, keepdims=True) + 1e-8)

    def loss_fn(p, x, a, nb):
        z = unit(encode(p["w"], x, a))
        za, zb, zn = z[:nb], z[nb : 2 * nb], z[2 * nb :]
        pos_all = za @ zb.T / args.temperature  # [nb, nb]
        hard = jnp.sum(za * zn, axis=1, keepdims=True) / args.temperature
        logits = jnp.concatenate([pos_all, hard], axis=1)
        labels_ = jnp.arange(nb)
        l1 = -jnp.mean(jax.nn.log_softmax(logits, axis=1)[labels_, labels_])
        l2 = -jnp.mean(jax.nn.log_softmax(pos_all.T, axis=1)[labels_, labels_])
        return (l1 + l2) / 2

    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    b1, b2, eps = 0.9, 0.999, 1e-8

    from functools import partial

    @partial(jax.jit, static_argnums=(6,))
    def step(p, m, v, t, x, a, nb):
        loss, g = jax.value_and_grad(loss_fn)(p, x, a, nb)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mh = jax.tree_util.tree_map(lambda m: m / (1 - b1**t), m)
        vh = jax.tree_util.tree_map(lambda v: v / (1 - b2**t), v)
        p = jax.tree_util.tree_map(lambda p, mh, vh: p - args.lr * mh / (jnp.sqrt(vh) + eps), p, mh, vh)
        return p, m, v, loss

    size = lambda i: len(graphs[i][0]) if graphs[i] is not None else 1
    order = sorted(range(len(pairs)), key=lambda k: max(size(i) for i in pairs[k]))
    batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
    batches = [bt for bt in batches if len(bt) == args.batch]
    t = 0
    start = time.time()
    for epoch in range(args.epochs):
        rng.shuffle(batches)
        total = 0.0
        for bt in batches:
            gs = [graphs[pairs[k][0]] for k in bt] + [graphs[pairs[k][1]] for k in bt] + [graphs[pairs[k][2]] for k in bt]
            x, a = batch_tensors(feats, gs, args.beta, channels, args.merge)
            t += 1
            params, m, v, loss = step(params, m, v, t, x, a, len(bt))
            total += float(loss)
        print(f"epoch {epoch + 1}: loss {total / len(batches):.4f} ({time.time() - start:.0f} s)", file=sys.stderr)
    # held-in sanity: mean cosine of pairs vs hard negatives on the last batch order
    w = np.asarray(params["w"], dtype=np.float32)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out.with_suffix(".f32.npy"), w)
    export_onnx(w, out)
    print(f"wrote {out} ({out.stat().st_size} bytes) and {out.with_suffix('.f32.npy')}", file=sys.stderr)


def load_with_ids(data: Path):
    """As load, keeping every line (an empty graph is None) with its passage id and labels."""
    feats = np.fromfile(data / "features.f32", dtype="<f4").reshape(-1, F)
    graphs, ids, labels = [], [], []
    with (data / "graphs.jsonl").open() as f:
        for line in f:
            g = json.loads(line)
            ids.append(g["id"])
            labels.append(g.get("labels", []))
            if not g["nodes"]:
                graphs.append(None)
                continue
            graphs.append(
                (
                    np.asarray(g["nodes"], dtype=np.int64),
                    np.asarray(g["edges"], dtype=np.float32).reshape(-1, 4),
                    np.asarray(g["min"], dtype=bool),
                )
            )
    return feats, graphs, ids, labels


def forward_np(w, x, a):
    """The model in numpy (float64), the reference the ONNX graph must equal."""
    xw = np.einsum("bnf,cfh->bcnh", x.astype(np.float64), w.astype(np.float64))
    h = np.maximum(np.einsum("bcij,bcjh->bih", a.astype(np.float64), xw), 0.0)
    return h.sum(axis=1)


def train(args):
    import jax
    import jax.numpy as jnp

    channels = 2 if args.merge else R
    feats, graphs = load(Path(args.data))
    print(f"{len(graphs)} graphs, {feats.shape[0]} lemma features, channels {channels}", file=sys.stderr)
    rng = np.random.default_rng(args.seed)
    key = jax.random.PRNGKey(args.seed)
    k1, k2, k3 = jax.random.split(key, 3)
    glorot = np.sqrt(2.0 / (F + H))
    params = {
        "w": jax.random.normal(k1, (channels, F, H)) * glorot,
        "p1": jax.random.normal(k2, (H, H)) * np.sqrt(1.0 / H),
        "p2": jax.random.normal(k3, (H, H)) * np.sqrt(1.0 / H),
    }

    def encode(w, x, a):
        xw = jnp.einsum("bnf,cfh->bcnh", x, w)
        h = jax.nn.relu(jnp.einsum("bcij,bcjh->bih", a, xw))
        return h.sum(axis=1)

    def project(p, z):
        return jax.nn.relu(z @ p["p1"]) @ p["p2"]

    def loss_fn(p, x1, a1, x2, a2):
        z1 = project(p, encode(p["w"], x1, a1))
        z2 = project(p, encode(p["w"], x2, a2))
        z1 = z1 / (jnp.linalg.norm(z1, axis=1, keepdims=True) + 1e-8)
        z2 = z2 / (jnp.linalg.norm(z2, axis=1, keepdims=True) + 1e-8)
        logits = z1 @ z2.T / args.temperature
        labels = jnp.arange(z1.shape[0])
        l12 = -jnp.mean(jax.nn.log_softmax(logits, axis=1)[labels, labels])
        l21 = -jnp.mean(jax.nn.log_softmax(logits.T, axis=1)[labels, labels])
        return (l12 + l21) / 2

    # Adam by hand (no optax dependency).
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    b1, b2, eps = 0.9, 0.999, 1e-8

    @jax.jit
    def step(p, m, v, t, x1, a1, x2, a2):
        loss, g = jax.value_and_grad(loss_fn)(p, x1, a1, x2, a2)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mh = jax.tree_util.tree_map(lambda m: m / (1 - b1**t), m)
        vh = jax.tree_util.tree_map(lambda v: v / (1 - b2**t), v)
        p = jax.tree_util.tree_map(lambda p, mh, vh: p - args.lr * mh / (jnp.sqrt(vh) + eps), p, mh, vh)
        return p, m, v, loss

    # Batches of similar size (sorted by node count, then shuffled batch order).
    order = np.argsort([len(g[0]) for g in graphs], kind="stable")
    batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
    batches = [bt for bt in batches if len(bt) > 1]
    t = 0
    start = time.time()
    for epoch in range(args.epochs):
        rng.shuffle(batches)
        total = 0.0
        for bt in batches:
            gs = [graphs[i] for i in bt]
            x1, a1 = batch_tensors(feats, gs, args.beta, channels, args.merge, rng, args.edge_drop, args.feat_mask)
            x2, a2 = batch_tensors(feats, gs, args.beta, channels, args.merge, rng, args.edge_drop, args.feat_mask)
            t += 1
            params, m, v, loss = step(params, m, v, t, x1, a1, x2, a2)
            total += float(loss)
        print(f"epoch {epoch + 1}: loss {total / len(batches):.4f} ({time.time() - start:.0f} s)", file=sys.stderr)

    w = np.asarray(params["w"], dtype=np.float32)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out.with_suffix(".f32.npy"), w)  # not committed: only for `check --f32`
    export_onnx(w, out)
    print(f"wrote {out} ({out.stat().st_size} bytes) and {out.with_suffix('.f32.npy')}", file=sys.stderr)


def quantize(w):
    scales = np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127.0
    scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
    q = np.clip(np.round(w / scales[:, None, None]), -127, 127).astype(np.int8)
    return q, scales


def dequantized(q, scales):
    return q.astype(np.float32) * scales[:, None, None]


def export_onnx(w, out: Path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    channels = w.shape[0]
    q, scales = quantize(w)
    inits, nodes, deq = [], [], []
    for c in range(channels):
        inits.append(numpy_helper.from_array(q[c], f"w{c}_int8"))
        inits.append(numpy_helper.from_array(np.array(scales[c], dtype=np.float32), f"w{c}_scale"))
        inits.append(numpy_helper.from_array(np.array(0, dtype=np.int8), f"w{c}_zero"))
        nodes.append(helper.make_node("DequantizeLinear", [f"w{c}_int8", f"w{c}_scale", f"w{c}_zero"], [f"w{c}"]))
        deq.append(f"w{c}")
    inits.append(numpy_helper.from_array(np.array([0, 0, channels, H], dtype=np.int64), "shape_bnch"))
    inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"))
    nodes += [
        helper.make_node("Concat", deq, ["w_all"], axis=1),
        helper.make_node("MatMul", ["features", "w_all"], ["xw"]),
        helper.make_node("Reshape", ["xw", "shape_bnch"], ["xw4"]),
        helper.make_node("Transpose", ["xw4"], ["xwt"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["adjacency", "xwt"], ["msg"]),
        helper.make_node("ReduceSum", ["msg", "axis1"], ["pre"], keepdims=0),
        helper.make_node("Relu", ["pre"], ["h"]),
        helper.make_node("ReduceSum", ["h", "axis1"], ["z"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "cage_rgcn" if channels > 2 else "cage_gcn",
        [
            helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", "nodes", F]),
            helper.make_tensor_value_info("adjacency", TensorProto.FLOAT, ["batch", channels, "nodes", "nodes"]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", H])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="cairn tools/train_cage.py")
    onnx.checker.check_model(model)
    onnx.save(model, out)


def check(args):
    """Compare tract's Z (from the dump) with JAX/numpy on the float32 weights and on the
    dequantised int8 weights, and with onnxruntime running the ONNX file."""
    import onnxruntime as ort

    dump = json.loads(Path(args.dump).read_text())
    b, n, c = dump["batch"], dump["nodes"], dump["channels"]
    x = np.asarray(dump["features"], dtype=np.float32).reshape(b, n, F)
    a = np.asarray(dump["adjacency"], dtype=np.float32).reshape(b, c, n, n)
    z_tract = np.asarray(dump["z"], dtype=np.float32).reshape(b, H)
    import onnx
    from onnx import numpy_helper

    model = Path(args.model)
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}
    q = np.stack([inits[f"w{k}_int8"] for k in range(c)])
    scales = np.array([inits[f"w{k}_scale"] for k in range(c)], dtype=np.float32)
    z_int8 = forward_np(dequantized(q, scales), x, a)
    f32_path = Path(args.f32) if args.f32 else model.with_suffix(".f32.npy")
    z_f32 = forward_np(np.load(f32_path), x, a) if f32_path.exists() else None
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    z_ort = sess.run(["z"], {"features": x, "adjacency": a})[0]

    def cos_rows(u, v):
        return (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1) + 1e-12)

    def rel(u, v):
        return float(np.abs(u - v).max() / (np.abs(v).max() + 1e-12))

    report = {
        "graphs": b,
        "tract_vs_numpy_int8_max_abs": float(np.abs(z_tract - z_int8).max()),
        "tract_vs_numpy_int8_max_rel": rel(z_tract, z_int8),
        "ort_vs_numpy_int8_max_abs": float(np.abs(z_ort - z_int8).max()),
        "tract_vs_ort_max_abs": float(np.abs(z_tract - z_ort).max()),
        "int8_vs_f32_min_cosine": None if z_f32 is None else float(cos_rows(z_int8, z_f32).min()),
        "z_max_abs": float(np.abs(z_int8).max()),
    }
    print(json.dumps(report, indent=1))
    if args.fixture:
        fixture = {
            "about": "CAGE R-GCN reference: z from tools/train_cage.py's float64 forward pass with the "
            "model's dequantised int8 weights, on the inputs Cairn built for these passages",
            "model": model.name,
            "passages": dump["passages"],
            "z_reference": [round(float(v), 6) for v in z_int8.reshape(-1)],
            "z_onnxruntime": [round(float(v), 6) for v in z_ort.reshape(-1)],
            "report": report,
        }
        Path(args.fixture).write_text(json.dumps(fixture, indent=0) + "\n")
    return 0 if report["tract_vs_numpy_int8_max_rel"] < 1e-4 else 1


def heldout(args):
    """Bonding on held-out passages: mine pairs and hard negatives among the `--only` corpora's
    passages (the ones training excluded) and report, for each model, how often a bonded pair's
    cosine of Z beats its hard negative's, and the mean cosines."""
    import onnx
    from onnx import numpy_helper

    feats, graphs, ids, labels = load_with_ids(Path(args.data))
    corpus = read_corpus(args.only)
    others = set(ids) - set(corpus)
    rng = np.random.default_rng(args.seed)
    pairs, stats = mine_pairs(ids, labels, corpus, others, rng, args.max_pairs)
    report = {"pairs": stats}
    for model in args.model:
        inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
        c = sum(1 for k in inits if k.endswith("_int8"))
        w = dequantized(np.stack([inits[f"w{k}_int8"] for k in range(c)]), np.array([inits[f"w{k}_scale"] for k in range(c)], dtype=np.float32))
        need = sorted({i for p in pairs for i in p})
        z = {}
        for k in range(0, len(need), 64):
            chunk = need[k : k + 64]
            x, a = batch_tensors(feats, [graphs[i] for i in chunk], args.beta, c, c == 2)
            out = forward_np(w, x, a)
            for i, row in zip(chunk, out):
                z[i] = row / (np.linalg.norm(row) + 1e-12)
        pos = np.array([z[a] @ z[b] for a, b, _ in pairs])
        neg = np.array([z[a] @ z[n] for a, _, n in pairs])
        report[Path(model).name] = {
            "pair_beats_hard_negative": float((pos > neg).mean()),
            "mean_cos_pair": float(pos.mean()),
            "mean_cos_hard_negative": float(neg.mean()),
        }
    print(json.dumps(report, indent=1))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--merge", action="store_true", help="plain GCN: one relation type")
    t.add_argument("--epochs", type=int, default=8)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--temperature", type=float, default=0.2)
    t.add_argument("--edge-drop", type=float, default=0.2)
    t.add_argument("--feat-mask", type=float, default=0.2)
    t.add_argument("--beta", type=float, default=1.5, help="β_cage on min-out-degree features (edges carry it from the export)")
    t.add_argument("--seed", type=int, default=7)
    t.add_argument("--objective", choices=["graphcl", "bonding"], default="graphcl")
    t.add_argument("--corpus", nargs="*", default=[], help="bonding: corpus.jsonl files (titles and texts)")
    t.add_argument("--exclude", nargs="*", default=[], help="bonding: corpus.jsonl files whose passages stay out of every pair")
    t.add_argument("--max-pairs", type=int, default=12000)
    c = sub.add_parser("check")
    c.add_argument("--model", required=True)
    c.add_argument("--dump", required=True)
    c.add_argument("--fixture")
    c.add_argument("--f32", help="the float32 weights train wrote (MODEL.f32.npy), for the int8-vs-f32 cosine")
    h = sub.add_parser("heldout")
    h.add_argument("--data", required=True)
    h.add_argument("--only", nargs="+", required=True, help="corpus.jsonl files whose passages form the pairs")
    h.add_argument("--model", nargs="+", required=True)
    h.add_argument("--max-pairs", type=int, default=2000)
    h.add_argument("--beta", type=float, default=1.5)
    h.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.cmd == "heldout":
        return heldout(args)
    if args.cmd == "train":
        if args.objective == "bonding":
            train_bonding(args)
        else:
            train(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
