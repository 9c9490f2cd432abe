"""``ha``: two ``serve`` with the same config share their alerting state in PostgreSQL.

The database URL is a secret: give it as ``database`` (a ``postgresql://`` URL),
``database_file`` (a file holding it, read at start), or ``$INFERWATCH_HA_DATABASE``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from inferwatch._env import ENV_HA_DATABASE
from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = ["HAConfig"]


class HAConfig(FrozenModel):
    """An HA pair: the shared state's database, this replica's name, the sender's lease."""

    database: Secret | None = Field(None, description="postgresql:// URL of the shared state (a secret)")
    database_file: str | None = Field(None, description="a file holding the URL (read at start)")
    replica: str = Field("", description="this replica's name (empty: the host name)")
    lease: Duration = Field(15.0, description="how long the sender's lease holds without renewal")
    address: str = Field("", description="host:port peers reach it at (server.listen)")

    @field_validator("lease")
    @classmethod
    def _lease(cls, v: float) -> float:
        if not v >= 1.0:
            raise ValueError("a lease of at least 1s")
        return v

    def replica_name(self) -> str:
        """``replica``, or the host name when it is empty."""
        return self.replica.strip() or socket.gethostname()

    @model_validator(mode="after")
    def _one_source(self) -> HAConfig:
        if self.database is not None and self.database_file is not None:
            raise ValueError("give database or database_file, not both")
        return self

    def url(self) -> Secret:
        """The URL from ``database``, ``database_file`` or the environment (``ValueError`` if none)."""
        if self.database is not None:
            text = self.database.reveal()
        elif self.database_file is not None:
            try:
                text = Path(self.database_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ValueError(f"ha.database_file {self.database_file}: {exc.strerror or exc}") from None
        else:
            text = os.environ.get(ENV_HA_DATABASE, "").strip()
            if not text:
                raise ValueError(f"ha: give database, database_file or ${ENV_HA_DATABASE}")
        if urlsplit(text).scheme not in ("postgresql", "postgres"):
            raise ValueError(f"ha: the database is a postgresql:// URL, not {text.split(':')[0]!r}://…")
        return Secret(text)
