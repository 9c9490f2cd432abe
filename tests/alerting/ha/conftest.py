"""One PostgreSQL cluster for every HA test of the session."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._postgres import PostgresCluster
from tests._require import require_module


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """A running cluster (stopped and removed at the end of the session).

    In /tmp itself, not pytest's 0700 temporary root: as root the cluster runs as ``nobody``.
    """
    require_module("psycopg")
    root = Path(tempfile.mkdtemp(prefix="inferwatch-pg-"))
    try:
        cluster = PostgresCluster(root)
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(postgres: PostgresCluster) -> str:
    """A fresh database for one test."""
    return postgres.new_database()


def poll(fn: Callable[[], Any], bound_s: float = 60.0) -> Any:
    """``fn()`` until it returns something truthy (at most ``bound_s``); its last answer otherwise."""
    end = time.monotonic() + bound_s
    while time.monotonic() < end:
        got = fn()
        if got:
            return got
        time.sleep(0.2)  # a bounded poll of the server's own answer, not a synchronisation sleep
    return fn()
