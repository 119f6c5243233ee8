#!/usr/bin/env python3
"""The module layering of ARCHITECTURE.md, checked against the code's own imports.

    python3 tools/check_layers.py [--src src] [--edges] [--json]

Reads every `.rs` file under `src/`, maps it to its top-level module (`src/graph/knn.rs` -> `graph`,
`src/wasm_llm.rs` -> `wasm`, `src/bin/cairn/*.rs` -> `bin`), and collects the edges
`module -> other module` from `use crate::…` (including grouped `use crate::{a, b::c}`),
inline `crate::x::` paths and, in the CLI, `cairn::x` paths. Comments and doc comments are skipped.

Each module has a layer (LAYERS below, bottom first). An edge may only go down, or sideways
within one layer when the layer lists the pair as allowed; anything else is a **back edge**. Cycles
between top-level modules are reported too, and so are cycles between the files of one module
(`graph/build.rs` <-> `graph/knn.rs`). Exit status 1 when there is a back edge or a cycle, 0 otherwise.

`--edges` prints every edge with the files that make it (the module graph); `--json` prints it as JSON.
Standard library only.
"""
import argparse
import json
import pathlib
import re
import sys

# Bottom first. A module may import from any module of a lower layer.
LAYERS = [
    ["error"],
    ["text", "embed", "ppr"],
    ["corpus", "format"],
    ["extract"],
    ["graph", "llm"],
    ["catrag", "cage"],
    ["index"],
    ["search", "site"],
    ["engine"],
    ["eval", "bench"],
    ["wasm"],
    ["bin"],
]
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}

USE_RE = re.compile(r"\buse\s+(crate|cairn)::(\{[^;]*\}|[A-Za-z_][A-Za-z0-9_]*)", re.S)
PATH_RE = re.compile(r"\b(?:crate|cairn)::([a-z_][a-z0-9_]*)::")
MOD_DECL_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)


def strip_comments(text: str) -> str:
    """Drop `//` line comments (and doc comments) and `/* */` blocks; strings are kept as they are."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] if "//" in line and '"' not in line.split("//", 1)[0] else line
                     for line in text.splitlines())


def module_of(src: pathlib.Path, path: pathlib.Path) -> str | None:
    rel = path.relative_to(src)
    if rel.parts[0] == "bin":
        return "bin"
    if rel.name == "lib.rs" and len(rel.parts) == 1:
        return None
    top = rel.parts[0]
    name = top[:-3] if top.endswith(".rs") else top
    return "wasm" if name == "wasm_llm" else name


def imported_modules(text: str) -> set[str]:
    out = set()
    for _, target in USE_RE.findall(text):
        if target.startswith("{"):
            inner = target[1:-1]
            depth, cur, parts = 0, "", []
            for ch in inner:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    parts.append(cur)
                    cur = ""
                else:
                    cur += ch
            parts.append(cur)
            for p in parts:
                head = p.strip().split("::", 1)[0].strip()
                if head and head != "self":
                    out.add(head)
        else:
            out.add(target)
    out.update(PATH_RE.findall(text))
    return out


def file_edges(src: pathlib.Path, files: list[pathlib.Path]) -> dict:
    """Edges between the files of one module folder, from `use super::x` / `crate::m::x`."""
    edges = {}
    for f in files:
        mod = module_of(src, f)
        rel = f.relative_to(src)
        if len(rel.parts) < 2 or rel.parts[0] == "bin":
            continue
        text = strip_comments(f.read_text(encoding="utf-8"))
        targets = set()
        names = re.findall(r"\b(?:super|crate::" + re.escape(mod) + r")::([a-z_][a-z0-9_]*)", text)
        for group in re.findall(r"\buse\s+(?:super|crate::" + re.escape(mod) + r")::\{([^;]*)\}", text):
            names += [p.strip().split("::", 1)[0] for p in group.split(",")]
        for m in names:
            cand = src / rel.parts[0] / f"{m}.rs"
            if cand.exists() and cand != f:
                targets.add(str(cand.relative_to(src)))
        edges[str(rel)] = targets
    return edges


def cycles(graph: dict) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=str(pathlib.Path(__file__).resolve().parent.parent / "src"))
    ap.add_argument("--edges", action="store_true", help="print the module graph")
    ap.add_argument("--json", action="store_true", help="print the module graph and findings as JSON")
    a = ap.parse_args()
    src = pathlib.Path(a.src)
    files = sorted(src.rglob("*.rs"))

    # Names the crate root re-exports (`pub use corpus::{Corpus, Passage};` in lib.rs) count as
    # imports of the module they come from.
    reexports = {}
    lib = src / "lib.rs"
    if lib.exists():
        for mod, names in re.findall(r"pub use ([a-z_]+)::\{?([^;}]*)\}?;", strip_comments(lib.read_text(encoding="utf-8"))):
            for n in names.split(","):
                if n.strip():
                    reexports[n.strip().split(" as ")[-1].strip()] = mod

    edges: dict[str, dict[str, set[str]]] = {}
    unknown = set()
    for f in files:
        mod = module_of(src, f)
        if mod is None:
            continue
        if mod not in RANK:
            unknown.add(mod)
        text = strip_comments(f.read_text(encoding="utf-8"))
        if mod == "bin":
            # In a binary, `crate::` is the binary's own root (its private modules, such as the
            # CLI's embedded web assets); the library is reached as `cairn::`.
            text = re.sub(r"\bcrate::", "self_bin::", text)
        for target in imported_modules(text):
            target = reexports.get(target, target)
            if target == mod or target in ("self", "super"):
                continue
            edges.setdefault(mod, {}).setdefault(target, set()).add(str(f.relative_to(src)))

    back = []
    for mod, targets in sorted(edges.items()):
        for target, where in sorted(targets.items()):
            if target not in RANK:
                unknown.add(target)
                continue
            if mod in RANK and RANK[target] >= RANK[mod]:
                back.append((mod, target, sorted(where)))
    module_cycles = cycles({m: set(t) for m, t in edges.items()})
    inner_cycles = cycles(file_edges(src, files))

    if a.json:
        print(json.dumps({
            "edges": {m: {t: sorted(w) for t, w in ts.items()} for m, ts in sorted(edges.items())},
            "back_edges": [{"from": m, "to": t, "files": w} for m, t, w in back],
            "module_cycles": module_cycles,
            "file_cycles": inner_cycles,
            "unknown_modules": sorted(unknown),
        }, indent=1))
    else:
        if a.edges:
            for layer in reversed(LAYERS):
                for mod in layer:
                    ts = edges.get(mod, {})
                    if ts:
                        print(f"{mod:8} -> " + ", ".join(sorted(ts)))
        for m, t, w in back:
            print(f"back edge: {m} -> {t} (layer {RANK[m]} -> {RANK[t]}) in {', '.join(w)}")
        for c in module_cycles:
            print("module cycle: " + " <-> ".join(c))
        for c in inner_cycles:
            print("file cycle: " + " <-> ".join(c))
        for u in sorted(unknown):
            print(f"module without a layer: {u} (add it to LAYERS in tools/check_layers.py)")
        if not (back or module_cycles or inner_cycles or unknown):
            print(f"layers ok: {sum(len(t) for t in edges.values())} module edges, all downward, no cycle")
    return 1 if (back or module_cycles or inner_cycles or unknown) else 0


if __name__ == "__main__":
    sys.exit(main())
