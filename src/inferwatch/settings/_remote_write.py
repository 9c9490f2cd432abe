"""``server.remote_write``: every stored sample shipped to Prometheus-compatible receivers.

    server:
      remote_write:
        - url: http://prometheus:9090/api/v1/write
        - url: https://mimir.example.org/api/v1/push
          name: mimir
          bearer_token: "..."
          headers: {X-Scope-OrgID: team-a}
          queue: {max_samples_per_send: 2000, batch_send_deadline: 5s}

Prometheus remote-write 1.0 (protobuf + snappy) from a queue kept in the data
directory, so a restart resumes where the receiver's last answer left off.
"""

from __future__ import annotations

import hashlib

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret, http_url

__all__ = ["RemoteWriteQueue", "RemoteWriteSpec"]

# Headers the sender sets itself (Prometheus refuses them in `headers` too).
RESERVED_HEADERS = frozenset({
    "authorization", "content-encoding", "content-type", "content-length", "host", "user-agent",
    "x-prometheus-remote-write-version",
})


class RemoteWriteQueue(FrozenModel):
    """How one remote's queue batches, retries and bounds its backlog (Prometheus's ``queue_config``)."""

    max_samples_per_send: int = Field(2000, ge=1, le=100_000, description="samples per request")
    batch_send_deadline: Duration = Field(
        5.0, gt=0, description="longest a sample waits for its batch to fill before it is sent")
    min_backoff: Duration = Field(0.03, gt=0, description="first retry delay (doubles per retry)")
    max_backoff: Duration = Field(5.0, gt=0, description="longest retry delay")
    retry_on_http_429: bool = Field(True, description="retry 429 Too Many Requests (else drop the batch)")
    max_pending_samples: int = Field(
        10_000_000, ge=1, description="backlog bound: beyond it the oldest samples are dropped")
    max_pending_age: Duration = Field(
        2 * 3600.0, gt=0, description="backlog bound: samples older than this are dropped unsent")

    @model_validator(mode="after")
    def _backoff_order(self) -> RemoteWriteQueue:
        if self.min_backoff > self.max_backoff:
            raise ValueError(
                f"min_backoff ({self.min_backoff:g}s) is above max_backoff ({self.max_backoff:g}s)")
        return self


class RemoteWriteSpec(FrozenModel):
    """One remote-write receiver (Prometheus, VictoriaMetrics, Mimir, Thanos receive)."""

    url: str = Field(description="the receiver's write endpoint, e.g. http://127.0.0.1:9090/api/v1/write")
    name: str = Field("", pattern=r"^[A-Za-z0-9_.-]{0,64}$",
                      description="names its queue and metrics; default: a hash of the URL")
    timeout: Duration = Field(30.0, gt=0, description="per request (Prometheus's remote_timeout)")
    bearer_token: Secret | None = None
    headers: dict[str, Secret] = Field(default_factory=dict, description="extra HTTP headers (values secret)")
    queue: RemoteWriteQueue = Field(default_factory=RemoteWriteQueue)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url, "http://127.0.0.1:9090/api/v1/write")

    @field_validator("headers")
    @classmethod
    def _own_headers(cls, headers: dict[str, Secret]) -> dict[str, Secret]:
        for name in headers:
            if name.lower() in RESERVED_HEADERS:
                raise ValueError(f"header {name!r} is set by inferwatch itself"
                                 + (" (use bearer_token)" if name.lower() == "authorization" else ""))
        return headers

    @property
    def queue_name(self) -> str:
        """``name``, else the first 6 hex digits of the URL's SHA-256 (as Prometheus names a remote)."""
        return self.name or hashlib.sha256(self.url.encode()).hexdigest()[:6]
