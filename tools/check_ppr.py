#!/usr/bin/env python3
"""Check Cairn's Personalized PageRank (src/ppr) against networkx and an exact sparse solve.

`cargo run --release --example ppr_export` builds a passage-word graph from a corpus JSONL
(default ../shared/data/2wiki-corpus-6k/corpus.jsonl), draws a CatRAG-like teleport vector (5-10
entity seeds plus 0.05 x dense-like passage weights) and overlay (arc multipliers 0, 0.25, 2.5, 5,
3.5, one seed's arcs all zeroed), and writes Cairn's power-iteration and forward-push scores with
the default PprConfig (d = 0.5, tolerance 1e-8, 50 sweeps, push epsilon 1e-12), with and without
the overlay. This script recomputes each case with

- networkx: `nx.pagerank(G, alpha=d, personalization=r, dangling=r, weight="weight")` on a
  DiGraph of the exported arcs (overlay multipliers applied here, to the exported weights), run to
  a tight tolerance (networkx stops when the L1 change is below N * tol); networkx's `alpha` is
  Cairn's damping d;
- exact: pi = (1-d)(I - d M)^-1 r with M = P^T + r delta^T, by one sparse linear solve of
  (I - d P^T) y = r (BiCGSTAB to a relative residual of 1e-15, a Krylov method rather than
  PageRank's power iteration) and the rank-one dangling term: pi = kappa y,
  kappa = (1-d) / (1 - d delta.y);

and prints the L1 differences and whether the top-5 passages agree. Exit status 1 if any Cairn
result is further than --max-l1 (default 1e-6) from networkx.

    python3 -m venv /tmp/ppr-venv && /tmp/ppr-venv/bin/pip install -r tools/requirements-check-ppr.txt
    /tmp/ppr-venv/bin/python tools/check_ppr.py [--corpus CORPUS.jsonl] [--seed N] [--dir DIR]

`--dir DIR --no-export` compares an existing export without running Cargo.

`--kg [--data DIR] [--question N]` checks the real thing instead: the knowledge graph of a dev
folder (rule-based OpenIE, `examples/ppr_export_kg.rs`) and the teleport vector and overlay that
CatRAG computes for one of its questions. Parallel arcs (a relation and a synonym arc joining the
same two entities) are summed for networkx, as the transition matrix sums them.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

ROOT = Path(__file__).resolve().parent.parent


def load(d: Path):
    meta = json.loads((d / "meta.json").read_text())
    n = meta["nodes"]
    arcs = np.loadtxt(d / "arcs.tsv", dtype=np.float64, ndmin=2)
    src, dst, w = arcs[:, 0].astype(np.int64), arcs[:, 1].astype(np.int64), arcs[:, 2]
    tel = np.loadtxt(d / "teleport.tsv", dtype=np.float64, ndmin=2)
    r = np.zeros(n)
    r[tel[:, 0].astype(np.int64)] = tel[:, 1]
    ov = np.loadtxt(d / "overlay.tsv", dtype=np.float64, ndmin=2)
    mult = np.ones(len(w))
    for a, x in ov:
        mult[int(a)] *= x
    return meta, n, src, dst, w, r, mult


def read_scores(path: Path, n: int) -> np.ndarray:
    s = np.loadtxt(path, dtype=np.float64, ndmin=2)
    out = np.zeros(n)
    out[s[:, 0].astype(np.int64)] = s[:, 1]
    return out


def networkx_ppr(n, src, dst, w, r, d) -> np.ndarray:
    # parallel arcs (relation + synonym between the same entities) add up, as in P
    summed = {}
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        summed[(u, v)] = summed.get((u, v), 0.0) + x
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from((u, v, x) for (u, v), x in summed.items())
    pers = {int(u): float(x) for u, x in enumerate(r) if x > 0}
    pr = nx.pagerank(G, alpha=d, personalization=pers, dangling=pers, weight="weight",
                     tol=1e-15 / n, max_iter=10_000)
    return np.array([pr[u] for u in range(n)])


def exact_ppr(n, src, dst, w, r, d) -> np.ndarray:
    r = r / r.sum()
    out = np.bincount(src, weights=w, minlength=n)
    keep = out[src] > 0
    vals = w[keep] / out[src[keep]]
    PT = sps.csr_matrix((vals, (dst[keep], src[keep])), shape=(n, n))  # P transposed
    A = (sps.identity(n, format="csr") - d * PT).tocsr()
    # A is strictly diagonally dominant by columns (column sums of d P^T are <= d < 1): BiCGSTAB
    # converges in a few dozen steps. (A sparse LU of this hub-heavy graph fills in to gigabytes.)
    y, info = spla.bicgstab(A, r, rtol=1e-15, atol=0.0, maxiter=10_000)
    if info != 0:
        sys.exit(f"BiCGSTAB did not converge (info {info})")
    print(f"  exact solve: relative residual {np.linalg.norm(A @ y - r) / np.linalg.norm(r):.1e}")
    dangling = out == 0
    kappa = (1 - d) / (1 - d * y[dangling].sum())
    return kappa * y


def top(scores: np.ndarray, passages, k: int = 5) -> list[int]:
    # score descending, ties by passage id (as cairn::ppr::rank_passages); `passages` is the
    # number of leading passage nodes, or the list of passage node ids
    nodes = np.arange(passages) if isinstance(passages, int) else np.asarray(passages)
    idx = np.lexsort((np.arange(len(nodes)), -scores[nodes]))
    return nodes[idx[:k]].tolist()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared/data/2wiki-corpus-6k/corpus.jsonl"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="/tmp/cairn-ppr-check")
    ap.add_argument("--no-export", action="store_true", help="use the files already in --dir")
    ap.add_argument("--max-l1", type=float, default=1e-6)
    ap.add_argument("--kg", action="store_true", help="the real knowledge graph and a CatRAG query")
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/2wikimultihopqa"))
    ap.add_argument("--question", type=int, default=0)
    args = ap.parse_args()
    d = Path(args.dir)
    if args.kg and args.dir == "/tmp/cairn-ppr-check":
        d = Path("/tmp/cairn-ppr-kg")
    if not args.no_export:
        cmd = ["cargo", "run", "--release", "--quiet", "--example", "ppr_export", "--",
               "--corpus", args.corpus, "--out", str(d), "--seed", str(args.seed)]
        if args.kg:
            cmd = ["cargo", "run", "--release", "--quiet", "--example", "ppr_export_kg", "--",
                   "--data", args.data, "--question", str(args.question), "--out", str(d)]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=ROOT, check=True)

    meta, n, src, dst, w, r, mult = load(d)
    damping = meta["config"]["damping"]
    passages = meta.get("passage_nodes", meta["passages"])
    print(f"graph: {n} nodes ({meta['passages']} passages), {len(w)} arcs, damping {damping}, "
          f"{int((mult != 1).sum())} overlay arcs, {int((r > 0).sum())} teleport entries")
    worst = 0.0
    for case, weights in [("plain", w), ("overlay", w * mult)]:
        ref = networkx_ppr(n, src, dst, weights, r, damping)
        exact = exact_ppr(n, src, dst, weights, r, damping)
        print(f"[{case}] networkx vs exact sparse solve: L1 {np.abs(ref - exact).sum():.3e}")
        for method in ["power", "push"]:
            key = f"{method}_{case}"
            ours = read_scores(d / f"scores_{key}.tsv", n)
            l1_nx = np.abs(ours - ref).sum()
            l1_ex = np.abs(ours - exact).sum()
            same = top(ours, passages) == top(ref, passages)
            rep = meta["reports"][key]
            print(f"[{case}] cairn {method:5}: L1 vs networkx {l1_nx:.3e}, vs exact {l1_ex:.3e}, "
                  f"reported bound {rep['error_bound']:.3e}, iterations {rep['iterations']}, "
                  f"converged {rep['converged']}, top-5 passages {'same' if same else 'DIFFERENT'}")
            worst = max(worst, l1_nx)
    ok = worst <= args.max_l1
    print(f"max L1 vs networkx {worst:.3e} ({'ok' if ok else 'FAIL'}: limit {args.max_l1:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
