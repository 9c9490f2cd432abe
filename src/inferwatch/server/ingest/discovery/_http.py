"""``http_sd_configs``: target groups fetched from a URL every ``refresh_interval``.

Prometheus's HTTP SD: a GET with ``Accept: application/json`` and
``X-Prometheus-Refresh-Interval-Seconds``; the answer must be 200 with a JSON
content type and a list of target groups; each gets ``__meta_url``. A failed
fetch keeps the last good groups (and says why).
"""

from __future__ import annotations

import re

import httpx

from inferwatch.config import HttpSDConfig, redact_url
from inferwatch.server.ingest.discovery._groups import DiscoveryError, TargetGroup, parse_groups

__all__ = ["HttpSource"]

_JSON = re.compile(r'^application/json(;\s*charset=("utf-8"|utf-8))?$', re.I)
_TIMEOUT_S = 30.0


class HttpSource:
    """One ``http_sd_configs`` entry."""

    mechanism = "http"

    def __init__(self, cfg: HttpSDConfig, client: httpx.Client) -> None:
        self.cfg = cfg
        self._client = client
        self._groups: list[TargetGroup] = []
        self._next: float | None = None
        self.error = ""

    def poll(self, mono: float) -> list[TargetGroup] | None:
        """The groups when a fetch is due (the last good ones if it fails), else ``None``."""
        if self._next is not None and mono < self._next:
            return None
        self._next = mono + self.cfg.refresh_interval
        try:
            self._groups = self.fetch()
            self.error = ""
        except DiscoveryError as exc:
            self.error = str(exc)
        return list(self._groups)

    def fetch(self) -> list[TargetGroup]:
        """One request; raises ``DiscoveryError`` saying what was wrong."""
        shown = redact_url(self.cfg.url)
        headers = {"Accept": "application/json",
                   "X-Prometheus-Refresh-Interval-Seconds": f"{self.cfg.refresh_interval:g}"}
        try:
            resp = self._client.get(self.cfg.url, headers=headers, timeout=_TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise DiscoveryError(f"{shown}: {type(exc).__name__}: {exc}") from None
        if resp.status_code != 200:
            raise DiscoveryError(f"{shown}: server returned HTTP status {resp.status_code}")
        ctype = resp.headers.get("content-type", "").strip()
        if not _JSON.match(ctype):
            raise DiscoveryError(f"{shown}: unsupported content type {ctype!r}")
        return parse_groups(resp.text, yaml_format=False, where=shown, meta={"__meta_url": self.cfg.url})

    def wait_s(self, mono: float) -> float:
        """Seconds until the next fetch is due."""
        return 0.0 if self._next is None else max(self._next - mono, 0.0)
