"""Local targets for the probe tests: a real threading HTTP server on loopback (and a TLS one).

Paths: ``/ok`` (JSON ``{"label": "cat"}``), ``/500``, ``/slow`` (answers after 0.3 s),
``/redirect`` (302 to /ok), ``/text``, ``/big`` (2 MiB), ``/hang`` (answers after 30 s),
``POST /predict`` (a classifier: ``{"label": ...}`` from the body's ``x``; ``wrong`` cases
answered wrong while ``Targets.broken`` holds them), ``POST /v1/chat/completions``
(OpenAI-compatible, streamed or not).
"""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LABELS = ["cat", "dog", "bird", "fish", "frog", "horse", "mouse", "owl", "bee", "ant"]


@dataclass
class Targets:
    """The server's address and the switches tests turn."""

    url: str = ""
    broken: set[int] = field(default_factory=set)
    """``x`` values the classifier answers wrong (a model swap)."""
    hits: int = 0


def _handler(state: Targets) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json",
                  extra: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            state.hits += 1
            path = self.path.split("?")[0]
            if path == "/ok":
                self._send(200, b'{"label": "cat"}')
            elif path == "/500":
                self._send(500, b'{"error": "boom"}')
            elif path == "/slow":
                time.sleep(0.3)
                self._send(200, b'{"label": "cat"}')
            elif path == "/redirect":
                self._send(302, b"", extra={"Location": "/ok"})
            elif path == "/text":
                self._send(200, b"hello world", "text/plain")
            elif path == "/big":
                self._send(200, b"x" * (2 << 20), "text/plain")
            elif path == "/hang":
                time.sleep(30)
                self._send(200, b"late")
            else:
                self._send(404, b"not found", "text/plain")

        do_HEAD = do_GET

        def do_POST(self) -> None:
            state.hits += 1
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                doc = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, b'{"error": "not json"}')
                return
            if self.path == "/predict":
                x = int(doc.get("x", 0))
                label = LABELS[(x + 1) % len(LABELS)] if x in state.broken else LABELS[x % len(LABELS)]
                self._send(200, json.dumps({"label": label, "score": 0.9}).encode())
            elif self.path.endswith("/chat/completions"):
                self._chat(doc)
            else:
                self._send(404, b"not found", "text/plain")

        def _chat(self, doc: dict[str, object]) -> None:
            words = ["O", "K", "!"]
            if not doc.get("stream"):
                body = {"choices": [{"message": {"role": "assistant", "content": "".join(words)}}],
                        "usage": {"completion_tokens": len(words)}}
                self._send(200, json.dumps(body).encode())
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for w in words:
                time.sleep(0.02)
                event = {"choices": [{"delta": {"content": w}}]}
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            usage = {"choices": [], "usage": {"completion_tokens": len(words)}}
            self.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
            self.close_connection = True

    return Handler


@contextmanager
def targets(tls_dir: Path | None = None, port: int = 0) -> Iterator[Targets]:
    """Serve the targets on loopback (TLS with a fresh self-signed certificate when ``tls_dir``)."""
    state = Targets()
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(state))
    server.daemon_threads = True
    scheme = "http"
    if tls_dir is not None:
        cert, key = self_signed(tls_dir)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def self_signed(where: Path, days: int = 30) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (openssl), valid ``days`` days: (cert, key)."""
    cert, key = where / "cert.pem", where / "key.pem"
    if not cert.exists():
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                        "-out", str(cert), "-days", str(days), "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key
