"""``server.query`` and ``server.http``: the bounds that keep one client from freezing the server."""

from __future__ import annotations

from pydantic import Field

from inferwatch.config._types import Duration, FrozenModel

__all__ = ["HttpLimits", "QueryLimits"]


class QueryLimits(FrozenModel):
    """Bounds on API queries, as Prometheus's ``--query.*`` flags (same defaults)."""

    timeout: Duration = Field(120.0, gt=0, description="a query running longer is cancelled (503 timeout)")
    max_samples: int = Field(
        50_000_000, gt=0,
        description="most samples one query may hold in memory at once (422 execution error beyond)")
    max_concurrency: int = Field(4, gt=0, le=256, description="queries run at once; more wait their turn")


class HttpLimits(FrozenModel):
    """Bounds on HTTP clients: connections, idle and header time, request bodies and nesting."""

    max_connections: int = Field(
        512, gt=0, description="open connections at once; beyond it new ones are answered 503 and closed")
    keep_alive_timeout: Duration = Field(
        5.0, gt=0, description="an idle keep-alive connection is closed after")
    header_timeout: Duration = Field(
        10.0, gt=0, description="a connection that has not sent a whole request within this is closed")
    max_body_bytes: int = Field(
        1 << 20, gt=0, description="largest request body (413 beyond); /api/v1/alertmanager and ingest too")
    max_json_depth: int = Field(32, gt=0, le=512, description="deepest JSON nesting in a request body (400)")
