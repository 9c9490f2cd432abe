"""`inferwatch serve`: a body over its endpoint's limit is answered 413 and the client reads it. The body is
drained first: answering with it unread made the kernel reset the connection, and the client's send
failed (broken pipe, connection reset) before it could read the 413. httpx retries the read after a
failed send, so the test speaks HTTP over a plain socket, as curl and most clients do."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from server._proc import serve

pytestmark = pytest.mark.slow


def _post(url: str, size: int) -> bytes:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as s:
        head = (b"POST /api/v1/outcomes HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer t0ken\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n")
        s.sendall(head % (parts.netloc.encode(), size))
        s.sendall(b" " * size)  # before: BrokenPipeError or ConnectionResetError here
        return s.recv(200)


def test_an_oversized_body_gets_a_readable_413(tmp_path: Path) -> None:
    cfg = f"server: {{data_dir: '{tmp_path / 'data'}', api_token: t0ken}}\nrules: {{default_pack: false}}\n"
    with serve(cfg, tmp_path) as s:
        for size in (2 << 20, 8 << 20, 32 << 20):  # for a 1 MiB endpoint
            assert _post(s.url, size).startswith(b"HTTP/1.1 413 ")
