"""A fake OpenAI-compatible judge: real HTTP on loopback, ``POST /v1/chat/completions`` checked for its shape.

It answers each chat completion with ``score(user_message)`` as the content and a usage
block, as OpenAI's API does; ``mode`` switches it to an outage: ``"500"`` (HTTP 500),
``"hang"`` (answers after ``hang_s``, past the client's timeout) or ``"garbage"`` (no
number in the answer). Every request's problems with the OpenAI request shape are
collected in ``bad``; a test asserts it stays empty.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeJudge:
    """The server's state: what it answers, what it was asked, what was wrong with the asks."""

    def __init__(self, score: Callable[[str], float], key: str | None = "sk-test") -> None:
        self.score, self.key = score, key
        self.mode = "ok"
        self.hang_s = 2.0
        self.asked: list[dict[str, Any]] = []
        self.answered = 0
        self.bad: list[str] = []
        self.lock = threading.Lock()
        self.url = ""

    def check(self, path: str, headers: Any, body: Any) -> None:
        """The request's shape as OpenAI's chat completions API takes it."""
        wrong = []
        if path != "/v1/chat/completions":
            wrong.append(f"path {path}")
        if self.key is not None and headers.get("Authorization") != f"Bearer {self.key}":
            wrong.append("Authorization")
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            wrong.append("model")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not (isinstance(messages, list) and messages and all(
                isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
                and isinstance(m.get("content"), str) for m in messages)):
            wrong.append("messages")
        if wrong:
            with self.lock:
                self.bad.append(", ".join(wrong))

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        content = "I cannot tell." if self.mode == "garbage" else f"{self.score(user):.3f}"
        prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1,
                          "total_tokens": prompt_tokens + 1}}


def _handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as OpenAI's API serves
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                body = None
            judge.check(self.path, self.headers, body)
            with judge.lock:
                judge.asked.append(body if isinstance(body, dict) else {})
            mode = judge.mode
            if mode == "hang":
                time.sleep(judge.hang_s)  # a judge that answers too late: the client's timeout fires first
            if mode == "500":
                self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            self._send(200, judge.answer(body))
            with judge.lock:
                judge.answered += 1

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (its timeout): nothing to answer
                pass

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_judge(score: Callable[[str], float], key: str | None = "sk-test") -> Iterator[FakeJudge]:
    """A running fake judge on a free loopback port; ``.url`` is its base URL (``.../v1``)."""
    judge = FakeJudge(score, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(judge))
    server.daemon_threads = True
    judge.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield judge
    finally:
        server.shutdown()
        server.server_close()
