"""Issue 21 #5 and #6: slow clients, huge bodies, deep nesting and crashes cannot take the server down."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import Server, build_components, create_app
from inferwatch.server._guard import json_depth
from inferwatch.server._log_limit import RepeatFilter

from ._proc import serve


def _nested(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


@pytest.mark.parametrize(("body", "depth"), [
    (b"{}", 1), (b'{"a": "[[[[", "b": [1, [2]]}', 3), (b'"just a string"', 0), (_nested(5000), 5000),
])
def test_json_depth(body: bytes, depth: int) -> None:
    # rule: strings do not count, and the scan is iterative (no recursion at any depth)
    assert json_depth(body) == depth


def _crashing_app() -> tuple[Server, TestClient]:
    async def boom(_: Request) -> Response:
        raise RuntimeError("a bug in a handler")

    clock = SimulatedClock(1000.0)
    cfg = parse_config("storage: {type: memory}\nserver: {http: {max_body_bytes: 1000, max_json_depth: 8}}")
    server = Server(build_components(cfg, clock=clock), clock=clock)
    app = create_app(server, extra_routes=[Route("/boom", boom, methods=["GET", "POST"])])
    return server, TestClient(app, raise_server_exceptions=True)


def test_an_unexpected_error_is_a_clean_500_and_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    server, client = _crashing_app()
    with client as c, caplog.at_level(logging.ERROR):
        r = c.get("/boom")
    server.stop()
    assert r.status_code == 500 and r.json()["errorType"] == "internal"
    assert "Traceback" not in r.text and "a bug in a handler" not in r.text
    (line,) = [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert line.exc_info is None and "RuntimeError: a bug in a handler" in line.getMessage()


@pytest.mark.parametrize(("body", "status", "reason"), [
    (b"x" * 1001, 413, "request body larger than 1000 bytes"),
    (_nested(9), 400, "nested deeper than 8 levels"),
])
def test_big_or_deep_bodies_are_refused_before_the_handler(body: bytes, status: int, reason: str) -> None:
    server, client = _crashing_app()
    with client as c:
        r = c.post("/boom", content=body, headers={"content-type": "application/json"})
    server.stop()
    assert r.status_code == status and reason in r.json()["error"]  # the handler (a crash) never ran


def test_repeated_log_lines_are_counted_not_written() -> None:
    now = [0.0]
    f = RepeatFilter(window=10.0, monotonic=lambda: now[0])
    rec = logging.LogRecord("asyncio", logging.ERROR, "", 0, "socket.accept() out of system resource",
                            (), None)
    passed = [f.filter(rec) for _ in range(1000)]
    assert passed.count(True) == 1
    now[0] = 11.0
    assert f.filter(rec) and "999 similar lines suppressed" in rec.getMessage()


def _recv_all(sock: socket.socket) -> bytes:
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


@pytest.mark.slow
def test_a_real_server_against_idle_slow_and_hostile_clients(tmp_path: Path) -> None:
    cfg = (f"server: {{data_dir: '{tmp_path}/data', api_token: t0k3n-for-tests,\n"
           "  http: {max_connections: 20, header_timeout: 1s}}\n")
    with serve(cfg, tmp_path) as s:
        host, port = s.url.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port)), timeout=20) for _ in range(30)]
        try:
            # beyond max_connections a connection is answered 503 and closed at once
            refused = [sock for sock in idle[20:] if _recv_all(sock).startswith(b"HTTP/1.1 503")]
            assert len(refused) == 10
            # a client that dribbles its request head, and idle ones, are closed after header_timeout
            idle[0].sendall(b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n")
            assert all(_recv_all(sock) == b"" for sock in idle[:20])
        finally:
            for sock in idle:
                sock.close()
        with httpx.Client(base_url=s.url, timeout=10) as c:
            assert c.get("/-/healthy").status_code == 200
            r = c.post("/api/v1/alertmanager", content=b"{" + b" " * (9 << 20) + b"}",
                       headers={"Authorization": "Bearer t0k3n-for-tests"})
            assert r.status_code == 413, r.text
            deep = json.dumps({"matchers": []})[:-1] + ', "x": ' + "[" * 600 + "]" * 600 + "}"
            r = c.post("/api/v2/silences", content=deep, headers={"Authorization": "Bearer t0k3n-for-tests"})
            assert r.status_code == 400 and "nested deeper" in r.json()["error"], r.text
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
