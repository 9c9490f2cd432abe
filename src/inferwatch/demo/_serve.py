"""Serve an ASGI app with uvicorn on a background thread, on a socket bound up front.

Binding (and listening) before the thread starts means the port is known and
connections queue in the kernel's backlog at once: no waiting for start-up.
Companion apps (the demo's feature store) are served on ports of their own by
the same thread's event loop, so a call from the app to a companion is a real
HTTP request on loopback without a hand-over between threads (each of those
waits for the GIL, which on a busy host adds tens of milliseconds).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Sequence
from typing import Any

import uvicorn

__all__ = ["ServerThread"]


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it the body that uvicorn writes after the headers
    # waits for the client's delayed ACK, 40 ms per response (uvicorn's own sockets set it).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(1024)
    return sock


class ServerThread:
    """One uvicorn server for ``app`` on ``host:port`` (0 picks a free port), plus ``companions``."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, *,
                 companions: Sequence[Any] = ()) -> None:
        self._socks: list[socket.socket] = []
        try:
            for p in (port, *(0 for _ in companions)):
                self._socks.append(_listen(host, p))
        except OSError:
            for sock in self._socks:
                sock.close()
            raise
        self.host, self.port = host, int(self._socks[0].getsockname()[1])
        self._servers = [
            uvicorn.Server(uvicorn.Config(a, log_level="warning", access_log=False, lifespan="off"))
            for a in (app, *companions)]
        self._thread = threading.Thread(target=self._run, name=f"inferwatch-http-{self.port}", daemon=True)

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    @property
    def companion_urls(self) -> list[str]:
        """The companions' ``http://host:port``, in order."""
        return [f"http://{self.host}:{s.getsockname()[1]}" for s in self._socks[1:]]

    def _run(self) -> None:
        asyncio.run(self._serve_all())

    async def _serve_all(self) -> None:
        await asyncio.gather(*(server.serve(sockets=[sock])
                               for server, sock in zip(self._servers, self._socks, strict=True)))

    def start(self) -> ServerThread:
        """Start serving."""
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit, wait for it, release the sockets (idempotent)."""
        for server in self._servers:
            server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        for sock in self._socks:
            sock.close()
