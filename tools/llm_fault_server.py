#!/usr/bin/env python3
"""A loopback fault server for Cairn's LLM client tests (Python standard library only).

Speaks just enough of the OpenAI chat-completions API to fail in every way a real endpoint can.
The route picks the behaviour (POST {base}/v1/chat/completions, base = http://127.0.0.1:PORT/ROUTE):

  /ok          a well-formed answer; its content echoes the last user message's first line
  /tiers       a well-formed answer rating every edge id of the prompt (e1, e2, ...) "high"
  /noformat    HTTP 400 when the request carries a response_format (a server that refuses the field),
               else as /tiers
  /format      a well-formed answer whose content is the request's response_format as JSON (null
               when it has none)
  /thinktiers  as /tiers after a reasoning block (<think>...</think>) that rates them all "irrelevant"
               and says "Answer: WRONG" (a reasoning model served by llama.cpp, Ollama or vLLM)
  /timeout     sleeps 30 s before answering (the client's timeout must fire)
  /500         HTTP 500 every time
  /400         HTTP 400 every time (a refusal: must not be retried)
  /429         HTTP 429 with Retry-After: 1, every time
  /flaky429    HTTP 429 with Retry-After: 1 on the 1st call of each key, then /ok
  /flaky500    HTTP 503 on the 1st call of each key, then /ok
  /slowbody    headers at once, then the body one byte every 0.5 s (30 s in all)
  /garbage     HTTP 200 with a body that is not JSON
  /empty       HTTP 200, a well-formed completion whose content is ""
  /nochoices   HTTP 200, {"choices": []}
  /auth        a well-formed answer whose content is the request's Authorization header
  /nocors      a well-formed answer without any CORS header (a browser must refuse it)
  /openie      OpenIE in a code fence: {"triples": [[TITLE, "is known for", "Cairn Fault Fact"]]}, TITLE
               read from the prompt's "Title: ..." line
  /openiearr   the same triple as a bare array of arrays (no object), in prose
  /openieam    as /openie when TITLE's first character is a letter A to M (any case); else a
               well-formed answer with no triple ("No facts."): the passage falls back to rule OpenIE
  /ner         {"named_entities": ["Cairn Fault Entity"]} whatever the question
  /say/TEXT    a well-formed answer whose content is TEXT, percent-decoded (any answer a model may give)

Every response but /nocors's carries Access-Control-Allow-Origin: * (and preflight OPTIONS answers 204), so
browser tests can call it. GET /calls returns per-route call counts as JSON; GET /reset clears
them. Prints "ready http://127.0.0.1:PORT" when listening.

    python3 tools/llm_fault_server.py --port 8092
"""
import argparse
import json
import os
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALLS = {}
LOCK = threading.Lock()


def completion(content):
    return json.dumps({
        "id": "fault-1", "object": "chat.completion", "model": "fault",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def cors(self):
        if self.path.startswith("/nocors"):
            return
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "authorization, content-type")
        self.send_header("Access-Control-Allow-Methods", "POST, GET, OPTIONS")
        # Without this a page cannot read Retry-After (not a CORS-safelisted response header).
        self.send_header("Access-Control-Expose-Headers", "Retry-After")

    def reply(self, status, body, ctype="application/json", extra=()):
        self.send_response(status)
        self.cors()
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        if self.path.startswith("/calls"):
            with LOCK:
                self.reply(200, json.dumps(CALLS).encode())
        elif self.path.startswith("/reset"):
            with LOCK:
                CALLS.clear()
            self.reply(200, b"{}")
        else:
            self.reply(404, b"{}")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        route = self.path.split("/")[1] if self.path.count("/") >= 1 else ""
        try:
            req = json.loads(raw)
            last = [m for m in req.get("messages", []) if m.get("role") == "user"][-1]["content"]
        except Exception:
            req, last = {}, ""
        key = route + "|" + last
        with LOCK:
            CALLS[route] = CALLS.get(route, 0) + 1
            nth = CALLS.get(key, 0) + 1
            CALLS[key] = nth
        if route in ("ok", "nocors"):
            self.reply(200, completion(last.splitlines()[0] if last else ""))
        elif route == "tiers":
            ids = sorted(set(re.findall(r"\b(e\d+)\b", last)), key=lambda s: int(s[1:]))
            self.reply(200, completion(json.dumps({i: "high" for i in ids})))
        elif route == "noformat" and "response_format" in req:
            self.reply(400, b'{"error": "response_format is not supported"}')
        elif route == "noformat":
            ids = sorted(set(re.findall(r"\b(e\d+)\b", last)), key=lambda s: int(s[1:]))
            self.reply(200, completion(json.dumps({i: "high" for i in ids})))
        elif route == "format":
            self.reply(200, completion(json.dumps(req.get("response_format"))))
        elif route == "thinktiers":
            ids = sorted(set(re.findall(r"\b(e\d+)\b", last)), key=lambda s: int(s[1:]))
            draft = json.dumps({i: "irrelevant" for i in ids})
            text = "<think>\nFirst draft: " + draft + "\nAnswer: WRONG\n</think>\n\n" + json.dumps({i: "high" for i in ids})
            self.reply(200, completion(text))
        elif route == "400":
            self.reply(400, b'{"error": "bad request"}')
        elif route == "timeout":
            time.sleep(30)
            self.reply(200, completion("too late"))
        elif route == "500":
            self.reply(500, b'{"error": "boom"}')
        elif route == "429":
            self.reply(429, b'{"error": "slow down"}', extra=[("Retry-After", "1")])
        elif route == "flaky429":
            if nth == 1:
                self.reply(429, b'{"error": "slow down"}', extra=[("Retry-After", "1")])
            else:
                self.reply(200, completion(last.splitlines()[0] if last else ""))
        elif route == "flaky500":
            if nth == 1:
                self.reply(503, b'{"error": "busy"}')
            else:
                self.reply(200, completion(last.splitlines()[0] if last else ""))
        elif route == "slowbody":
            body = completion("slow")
            self.send_response(200)
            self.cors()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for b in body[:60]:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(0.5)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif route == "garbage":
            self.reply(200, b"<html>this is not JSON", ctype="text/html")
        elif route == "empty":
            self.reply(200, completion(""))
        elif route == "auth":
            self.reply(200, completion(self.headers.get("Authorization") or ""))
        elif route in ("openie", "openiearr", "openieam"):
            m = re.search(r"^Title: (.*)$", last, re.M)
            triple = [m.group(1) if m else "?", "is known for", "Cairn Fault Fact"]
            first = triple[0][:1].upper()
            if route == "openieam" and not ("A" <= first <= "M"):
                text = "No facts."
            elif route in ("openie", "openieam"):
                text = "```json\n" + json.dumps({"triples": [triple]}) + "\n```"
            else:
                text = "Here are the triples: " + json.dumps([triple])
            self.reply(200, completion(text))
        elif route == "ner":
            self.reply(200, completion(json.dumps({"named_entities": ["Cairn Fault Entity"]})))
        elif route == "say":
            parts = self.path.split("/")
            self.reply(200, completion(urllib.parse.unquote(parts[2]) if len(parts) > 2 else ""))
        elif route == "nochoices":
            self.reply(200, b'{"choices": []}')
        else:
            self.reply(404, b'{"error": "unknown route"}')


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
    ap = argparse.ArgumentParser(description="Cairn's loopback LLM fault server")
    ap.add_argument("--port", type=int, default=8092)
    ap.add_argument("--exit-with-parent", action="store_true", help="stop when the parent process ends")
    a = ap.parse_args()
    if a.exit_with_parent:
        exit_with_parent()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    print(f"ready http://127.0.0.1:{a.port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
