#!/usr/bin/env python3
"""The module layering of docs/architecture.md, checked against the code's own imports.

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

Three more checks run with it (each also fails the exit status):
- **the page's imports** (`www/`): the graph of static `import … from './x.js'` between the page's
  own files; a cycle between them is reported as `www cycle: a <-> b`.
- **citations**: a `.md` file that `src/` or `www/` cites (a path with a `/`, or an upper-case name
  such as `README.md`) must be in the repository, and a section `docs/method/spec.md §N` must be
  one of that file's anchors (`<a id="sN">`). Paths under `../shared/data/` name the dataset folders,
  which are inputs, not design files, and are not checked.
- **docs/architecture.md**: the block between its `check_layers.py: generated` markers is the
  layer table and module graph this script prints; `--write-doc` rewrites it, and the check fails
  when it is stale. Its module table must name every top-level module of `src/`.

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
    ["corpus", "format", "documents"],
    ["extract"],
    ["graph", "llm"],
    ["catrag", "cage"],
    ["index"],
    ["search", "site"],
    ["reader"],
    ["engine"],
    ["eval", "bench"],
    ["wasm", "wasm_reader"],
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


IMPORT_RE = re.compile(r"""^\s*import\s+(?:[^'";]*?\s+from\s+)?['"](\.{1,2}/[^'"]+)['"]""", re.M)


def www_graph(www: pathlib.Path) -> dict:
    """The page's own files and the files each one imports statically (relative specifiers only:
    packages, the wasm package's glue and dynamic `import()` are not edges of the page's layering)."""
    graph = {}
    if not www.is_dir():
        return graph
    for f in sorted(www.rglob("*.js")):
        if "node_modules" in f.parts:
            continue
        text = re.sub(r"/\*.*?\*/", "", f.read_text(encoding="utf-8"), flags=re.S)
        targets = set()
        for spec in IMPORT_RE.findall(text):
            target = (f.parent / spec).resolve()
            if target.suffix == ".js" and target.is_file() and www.resolve() in target.parents:
                targets.add(str(target.relative_to(www.resolve())))
        graph[str(f.relative_to(www))] = targets
    return graph


def www_import_cycles(www: pathlib.Path) -> list[list[str]]:
    """Cycles between the page's files (strongly connected components, as for the crate)."""
    return cycles(www_graph(www))


def www_edge_count(www: pathlib.Path) -> int:
    return sum(len(t) for t in www_graph(www).values())


# Where the repository's own files live: a path that starts elsewhere is a user's, not a citation.
REPO_DIRS = ("../", "docs/", "assets/", "tools/", "tests/", "www/", "src/", "scripts/", "examples/")
CITE_RE = re.compile(r"((?:\.\./|[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)\b(?:\s*§\s*([0-9]+))?")


def citation_problems(root: pathlib.Path, dirs: list[pathlib.Path]) -> list[str]:
    """Citations of `.md` files in `dirs` that do not resolve inside the repository (see the
    module docs), as `file:line: what`."""
    names = {p.name for p in root.rglob("*.md") if ".git" not in p.parts and "node_modules" not in p.parts
             and "target" not in p.parts}
    problems = []
    for d in dirs:
        if not d.is_dir():
            continue
        for f in sorted(list(d.rglob("*.rs")) + list(d.rglob("*.js")) + list(d.rglob("*.html"))):
            if "node_modules" in f.parts:
                continue
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                for path, section in CITE_RE.findall(line):
                    if path.startswith("../shared/data/"):
                        continue
                    base = path.rsplit("/", 1)[-1]
                    if "/" not in path and not base[:1].isupper():
                        continue  # a file name as data (a test's `guide.md`), not a citation
                    if "/" in path and not path.startswith(REPO_DIRS):
                        continue  # a path of a user's site or corpus (`guide/intro.md`), not of the repository
                    if "/" in path:
                        target = root / path
                        if path.startswith("../") or not target.is_file():
                            target = (f.parent / path).resolve()
                        found = target.is_file() and root.resolve() in target.resolve().parents
                    else:
                        target = None
                        found = base in names
                    where = f"{f.relative_to(root)}:{n}"
                    if not found:
                        problems.append(f"{where}: cites {path}, which is not in the repository")
                    elif section and target is not None:
                        body = target.read_text(encoding="utf-8")
                        heading = re.search(rf"^#+ (?:§\s*)?{section}[.\s]", body, re.M)
                        if f'<a id="s{section}">' not in body and not heading:
                            problems.append(f"{where}: cites {path} §{section}, which has no such section")
    return problems


DOC_BEGIN = "<!-- check_layers.py: generated (python3 tools/check_layers.py --write-doc), begin -->"
DOC_END = "<!-- check_layers.py: generated, end -->"


def layer_block(edges: dict) -> str:
    """The generated part of docs/architecture.md: the layers, bottom first, and the module graph."""
    lines = ["Layers, bottom first (`LAYERS` in tools/check_layers.py):", ""]
    for i, layer in enumerate(LAYERS):
        lines.append(f"{i}. " + ", ".join(f"`{m}`" for m in layer))
    lines += ["", "The module graph (`python3 tools/check_layers.py --edges`), top first:", "", "```"]
    for layer in reversed(LAYERS):
        for mod in layer:
            ts = edges.get(mod, {})
            if ts:
                lines.append(f"{mod:8} -> " + ", ".join(sorted(ts)))
    lines.append("```")
    lines.append("")
    lines.append(f"{sum(len(t) for t in edges.values())} module edges.")
    return "\n".join(lines)


def check_doc(doc: pathlib.Path, block: str, modules: list[str], write: bool) -> list[str]:
    """Check (or, with `write`, rewrite) the generated block of `doc`; check its module table."""
    if not doc.is_file():
        return ["missing"]
    text = doc.read_text(encoding="utf-8")
    if DOC_BEGIN not in text or DOC_END not in text:
        return [f"no generated block (markers {DOC_BEGIN!r} … {DOC_END!r})"]
    head, rest = text.split(DOC_BEGIN, 1)
    current, tail = rest.split(DOC_END, 1)
    problems = []
    if current.strip("\n") != block:
        if write:
            text = head + DOC_BEGIN + "\n" + block + "\n" + DOC_END + tail
            doc.write_text(text, encoding="utf-8")
        else:
            problems.append("the layer table or module graph is stale: run python3 tools/check_layers.py --write-doc")
    table = set(re.findall(r"^\| `([a-z_]+)`", text, re.M))
    for m in modules:
        if m not in table:
            problems.append(f"the module table has no row for `{m}`")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=str(pathlib.Path(__file__).resolve().parent.parent / "src"))
    ap.add_argument("--edges", action="store_true", help="print the module graph")
    ap.add_argument("--json", action="store_true", help="print the module graph and findings as JSON")
    ap.add_argument("--write-doc", action="store_true",
                    help="rewrite the generated block of docs/architecture.md instead of checking it")
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

    root = src.parent
    www_cycles = www_import_cycles(root / "www")
    bad_citations = citation_problems(root, [src, root / "www"])
    doc_problems = check_doc(root / "docs" / "architecture.md", layer_block(edges), sorted(RANK), a.write_doc)

    if a.json:
        print(json.dumps({
            "edges": {m: {t: sorted(w) for t, w in ts.items()} for m, ts in sorted(edges.items())},
            "back_edges": [{"from": m, "to": t, "files": w} for m, t, w in back],
            "module_cycles": module_cycles,
            "file_cycles": inner_cycles,
            "unknown_modules": sorted(unknown),
            "www_cycles": www_cycles,
            "citations": bad_citations,
            "architecture_doc": doc_problems,
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
        for c in www_cycles:
            print("www cycle: " + " <-> ".join(c))
        for c in bad_citations:
            print(f"citation: {c}")
        for d in doc_problems:
            print(f"docs/architecture.md: {d}")
        if not (back or module_cycles or inner_cycles or unknown):
            print(f"layers ok: {sum(len(t) for t in edges.values())} module edges, all downward, no cycle")
        if not www_cycles:
            print(f"www ok: {www_edge_count(root / 'www')} import edges between the page's files, no cycle")
        if not bad_citations:
            print("citations ok: every design file src/ and www/ cite is in the repository")
        if not doc_problems:
            print("docs/architecture.md ok: its layer table and module graph are this script's")
    failed = back or module_cycles or inner_cycles or unknown or www_cycles or bad_citations or doc_problems
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
