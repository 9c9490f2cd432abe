"""A throwaway PostgreSQL cluster for the HA tests: ``initdb`` and ``pg_ctl`` (the Debian
``postgresql`` package) in a temporary directory, on loopback, on a free port.

``initdb`` refuses to run as root (CI runs as root): there it runs as ``nobody``
through ``runuser``, with the directory handed over to that user.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
from pathlib import Path

from tests._require import require_tool

__all__ = ["PostgresCluster", "pg_bin"]


def pg_bin() -> Path:
    """The directory of ``initdb`` and ``pg_ctl`` (the newest installed; a failure under CI when none)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    return Path(require_tool("initdb")).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresCluster:
    """One cluster: ``start()``, ``stop()`` (again and again: the outage test), ``new_database()``."""

    def __init__(self, root: Path) -> None:
        self.bin = pg_bin()
        self.root, self.data, self.port = root, root / "data", _free_port()
        self._prefix: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse root
            shutil.chown(root, "nobody")
            os.chmod(root, 0o755)
            self._prefix = [shutil.which("runuser") or "runuser", "-u", "nobody", "--"]
        self._names = itertools.count(1)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8")

    def _run(self, *cmd: str) -> None:
        out = subprocess.run([*self._prefix, *cmd], capture_output=True, text=True, timeout=120,
                             cwd=self.root)
        assert out.returncode == 0, f"{cmd[0]}: {out.stdout}{out.stderr}"

    def start(self) -> None:
        """Start it (loopback only, the socket in the cluster's directory, no fsync)."""
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w",
                  "-t", "60", "-o", opts, "start")

    def running(self) -> bool:
        """Whether the server runs (``pg_ctl status``)."""
        out = subprocess.run([*self._prefix, str(self.bin / "pg_ctl"), "-D", str(self.data), "status"],
                             capture_output=True, text=True, timeout=60, cwd=self.root)
        return out.returncode == 0

    def stop(self) -> None:
        """Stop it at once (``-m immediate``: the database just goes away)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        """A URL of ``database`` on the cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database (one per test): its URL."""
        import psycopg

        name = f"t{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)
