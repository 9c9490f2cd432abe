"""``server`` and ``storage``: the embedded server's listen address and data."""

from __future__ import annotations

from pydantic import Field, field_validator

from inferwatch.settings._auth import AuthConfig
from inferwatch.settings._limits import HttpLimits, IngestLimits, QueryLimits
from inferwatch.settings._remote_write import RemoteWriteSpec
from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = ["OutcomesConfig", "ServerConfig", "StorageConfig"]


class OutcomesConfig(FrozenModel):
    """Bounds of ``POST /api/v1/outcomes``: delayed labels kept for the SDK's poller (``outcomes.sqlite``)."""

    retention: Duration = Field(7 * 86400.0, gt=0, description="outcomes received longer ago are deleted")
    max_rows: int = Field(1_000_000, gt=0, description="most outcomes kept; the oldest are deleted beyond")
    max_per_request: int = Field(
        10_000, gt=0, le=1_000_000, description="most outcomes one POST may carry, and one GET may return")
    max_string_length: int = Field(
        256, gt=0, le=65_536, description="longest request_id, model or string label, in characters")


class ServerConfig(FrozenModel):
    """Where the embedded server listens and keeps its state."""

    listen: str = Field("127.0.0.1:9464", description="host:port of the HTTP API and dashboard")
    data_dir: str = Field("./data", description="directory of the SQLite files")
    evaluation_interval: Duration = Field(
        15.0, ge=0.1, description="how often rules are evaluated (at least 100ms)")
    api_token: Secret | None = Field(None, description="the admin token (writes, reload); generated if unset")
    auth: AuthConfig = Field(default_factory=AuthConfig, description="web config file, named tokens, "
                             "roles, whether reads need credentials")
    external_url: str = Field("", description="URL of the dashboard, linked from notifications")
    query: QueryLimits = Field(default_factory=QueryLimits, description="bounds on API queries")
    http: HttpLimits = Field(default_factory=HttpLimits, description="bounds on HTTP clients")
    limits: IngestLimits = Field(
        default_factory=IngestLimits, description="bounds on what comes in: labels, samples, series")
    remote_write: list[RemoteWriteSpec] = Field(
        default_factory=list, description="receivers every stored sample is shipped to (remote-write 1.0)")
    outcomes: OutcomesConfig = Field(
        default_factory=OutcomesConfig, description="delayed labels POSTed to /api/v1/outcomes")
    shutdown_grace: Duration = Field(
        25.0, ge=1.0, le=3600.0, description="on SIGTERM or SIGINT, the most time the shutdown takes: "
        "sends in flight get until then to answer (under Kubernetes' 30s termination grace)")

    @field_validator("listen")
    @classmethod
    def _host_port(cls, listen: str) -> str:
        _, sep, port = listen.rpartition(":")
        if not sep or not port.isdigit() or int(port) > 65535:
            raise ValueError("expected host:port with a port 0..65535, such as 127.0.0.1:9464")
        return listen

    @field_validator("remote_write")
    @classmethod
    def _unique_queues(cls, remotes: list[RemoteWriteSpec]) -> list[RemoteWriteSpec]:
        seen: set[str] = set()
        for r in remotes:
            if r.queue_name in seen:
                raise ValueError(f"two remotes share the queue name {r.queue_name!r}: give each a distinct "
                                 "url or name")
            seen.add(r.queue_name)
        return remotes


class StorageConfig(FrozenModel):
    """The time-series store."""

    type: str = Field("sqlite", pattern="^(sqlite|memory)$")
    retention: Duration = Field(15 * 86400.0, description="samples older than this are deleted")
    head_window: Duration = Field(
        3600.0, ge=0, description="the most recent samples also kept in memory, like Prometheus's "
        "head block: queries over them skip the disk; memory grows with it (0 is off)")
