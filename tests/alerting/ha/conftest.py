"""One PostgreSQL cluster for every HA test of the session."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

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
