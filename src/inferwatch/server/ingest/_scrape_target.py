"""One scrape target's state between scrapes, and what the targets API shows about it."""

from __future__ import annotations

import re
import threading
import urllib.parse
from dataclasses import dataclass, field

from inferwatch.config import REDACTED, ScrapeTarget
from inferwatch.formats import ExpositionParser
from inferwatch.model import Labels
from inferwatch.server.ingest._target_labels import TargetLabels

__all__ = ["REPORT_METRICS", "TargetHealth", "TargetState", "shown_url"]

REPORT_METRICS = (
    "up", "scrape_duration_seconds", "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling", "scrape_series_added",
)


@dataclass
class TargetHealth:
    """What the API shows about a target (Prometheus's ``/api/v1/targets`` fields)."""

    job: str
    instance: str
    url: str
    labels: dict[str, str]
    interval: float
    timeout: float
    health: str = "unknown"
    last_scrape: float | None = None
    last_duration: float = 0.0
    last_error: str = ""
    samples: int = 0
    discovered: dict[str, str] = field(default_factory=dict)
    """The labels before ``relabel_configs`` (Prometheus's ``discoveredLabels``)."""


_SECRET_PARAM = re.compile(r"token|key|secret|pass|auth|sig|credential", re.I)


def shown_url(url: str) -> str:
    """``url`` as the targets API shows it: no ``user:pass@``, secret-looking query values masked.

    Other query parameters stay (Prometheus shows a target's ``params``, such as
    a blackbox exporter's ``module``).

    >>> shown_url("http://u:p@h:1/m?module=x&access_token=abc")
    'http://h:1/m?module=x&access_token=%3Csecret%3E'
    """
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.urlencode([(k, REDACTED if _SECRET_PARAM.search(k) else v)
                                    for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)])
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query=query))


class TargetState:
    """One target's state between scrapes: parser cache, tracked series, schedule."""

    def __init__(self, cfg: ScrapeTarget, found: TargetLabels, pool: str = "") -> None:
        assert found.labels is not None
        self.pool = pool
        """The job whose discovery found it ("" for a target under ``scrape.targets``)."""
        self.lock = threading.Lock()  # held by a scrape; a removal waits for it, then marks the series stale
        self.gone = False
        self.stop = threading.Event()  # set to end this target's thread (fresh at each start)
        self.cfg = cfg if found.url == cfg.url else cfg.model_copy(update={"url": found.url})
        self.labels = found.labels
        self.metric_rules = cfg.metric_relabel_rules()
        self.relabelled: dict[Labels, Labels | None] = {}  # metric_relabel_configs' results, by series
        self.parser = ExpositionParser(
            self.labels, honor_labels=cfg.honor_labels, honor_timestamps=cfg.honor_timestamps
        )
        self.report = [Labels({**self.labels, "__name__": name}) for name in REPORT_METRICS]
        self.tracked: dict[str, Labels] = {}
        self.next_due: float | None = None  # wall time, for tick()
        self.next_mono: float | None = None  # monotonic time, for the scrape thread
        self.health = TargetHealth(
            cfg.job, self.labels.get("instance", cfg.instance), shown_url(self.cfg.url),
            dict(sorted(self.labels.items())), cfg.effective_interval, cfg.effective_timeout,
            discovered=dict(sorted(found.discovered.items())),
        )

    @property
    def key(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """Identity across discovery updates (as Prometheus's: the labels and the scrape URL)."""
        return (self.pool, self.cfg.url, tuple(sorted(self.labels.items())))
