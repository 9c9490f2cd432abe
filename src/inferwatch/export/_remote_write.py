"""``remote_write`` of ``prometheus.yml``: the server's ``server.remote_write``, as Prometheus writes it.

Each receiver keeps its URL, name, timeout (``remote_timeout``), bearer token
(``authorization.credentials``), extra headers (``headers``) and the queue
settings that Prometheus 2.42's ``queue_config`` has under the same meaning:
``max_samples_per_send``, ``batch_send_deadline``, ``min_backoff``,
``max_backoff``, ``retry_on_http_429``. Not mapped: ``max_pending_samples``
and ``max_pending_age`` (Prometheus bounds its backlog by its own WAL, and
its ``capacity`` is a per-shard buffer, not a backlog). URLs given with
``--remote-write`` follow, unless the config already lists them.

Tokens and header values are written in clear: a ``prometheus.yml`` with a
receiver that has them is created with mode 0600.
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config, RemoteWriteSpec
from inferwatch.export._options import ExportOptions
from inferwatch.model import format_duration

__all__ = ["has_secrets", "remote_write_configs"]


def _queue_config(spec: RemoteWriteSpec) -> dict[str, Any]:
    q = spec.queue
    return {
        "max_samples_per_send": q.max_samples_per_send,
        "batch_send_deadline": format_duration(q.batch_send_deadline),
        "min_backoff": format_duration(q.min_backoff),
        "max_backoff": format_duration(q.max_backoff),
        "retry_on_http_429": q.retry_on_http_429,
    }


def _remote(spec: RemoteWriteSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"url": spec.url}
    if spec.name:
        out["name"] = spec.name
    out["remote_timeout"] = format_duration(spec.timeout)
    if spec.bearer_token is not None:
        out["authorization"] = {"credentials": spec.bearer_token.reveal()}
    if spec.headers:
        out["headers"] = {name: value.reveal() for name, value in spec.headers.items()}
    out["queue_config"] = _queue_config(spec)
    return out


def remote_write_configs(config: Config, opts: ExportOptions) -> list[dict[str, Any]]:
    """The ``remote_write`` list: ``server.remote_write``, then the other ``opts.remote_write`` URLs."""
    out = [_remote(spec) for spec in config.server.remote_write]
    listed = {spec.url for spec in config.server.remote_write}
    out += [{"url": url} for url in dict.fromkeys(opts.remote_write) if url not in listed]
    return out


def has_secrets(config: Config) -> bool:
    """Whether the exported ``remote_write`` holds a token or a header value."""
    return any(spec.bearer_token is not None or spec.headers for spec in config.server.remote_write)
