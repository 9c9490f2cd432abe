"""The exporter's own text writer and HTTP server against prometheus-client's bytes."""

from __future__ import annotations

import socket

from prometheus_client import CollectorRegistry, generate_latest

from inferwatch.collect import SampleCollector, sample
from inferwatch.collect._http import MetricsServer
from inferwatch.collect._text import CONTENT_TYPE, render
from inferwatch.model import Labels, Sample
from inferwatch.model import metrics as m


def _samples() -> list[Sample]:
    return [
        sample(m.NODE_LOAD1, 0.0, 0.5),
        sample(m.NODE_CPU_SECONDS_TOTAL, 0.0, 12345678.25, {"cpu": "0", "mode": "idle"}),
        sample(m.NODE_CPU_SECONDS_TOTAL, 0.0, 1e-7, {"cpu": "1", "mode": "user"}),
        sample(m.NODE_LOAD5, 0.0, float("inf")),
        sample(m.NODE_LOAD15, 0.0, float("nan")),
        sample(m.NODE_MEMORY_MEMTOTAL, 0.0, 2.0**40),
        Sample(Labels({"__name__": "not_in_catalog", "b": 'q"uo\\te\nx', "a": "1"}), 0.0, -3.0),
    ]


def test_render_writes_prometheus_clients_bytes() -> None:
    reg = CollectorRegistry()
    samples = _samples()
    reg.register(SampleCollector(lambda: samples))
    assert render(samples) == generate_latest(reg)


def test_the_server_answers_get_head_and_refuses_the_rest() -> None:
    srv = MetricsServer(("127.0.0.1", 0), lambda: b"up 1\n")
    import threading

    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        def ask(request: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", srv.server_port), timeout=60) as s:
                s.sendall(request)
                chunks = []
                while chunk := s.recv(65536):
                    chunks.append(chunk)
            return b"".join(chunks)

        got = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
        assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.endswith(b"\r\n\r\nup 1\n")
        assert f"Content-Type: {CONTENT_TYPE}".encode() in got and b"Content-Length: 5\r\n" in got
        head = ask(b"HEAD /metrics HTTP/1.1\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"\r\n\r\n")
        assert ask(b"POST /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405 ")
        assert ask(b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    finally:
        srv.shutdown()
        srv.server_close()
