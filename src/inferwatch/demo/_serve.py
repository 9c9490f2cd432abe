"""Serve an ASGI app with uvicorn on a background thread, on a socket bound up front.

Binding (and listening) before the thread starts means the port is known and
connections queue in the kernel's backlog at once: no waiting for start-up.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import uvicorn

__all__ = ["ServerThread"]


class ServerThread:
    """One uvicorn server for ``app`` on ``host:port`` (0 picks a free port)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError:
            self._sock.close()
            raise
        self._sock.listen(1024)
        self.host, self.port = host, int(self._sock.getsockname()[1])
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name=f"inferwatch-http-{self.port}",
            daemon=True,
        )

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        """Start serving."""
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit, wait for it, release the socket (idempotent)."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._sock.close()
