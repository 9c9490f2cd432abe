"""One scrape target's state between scrapes, and what the targets API shows about it."""

from __future__ import annotations

import re
import threading
import urllib.parse
from dataclasses import dataclass, field

import numpy as np

from inferwatch.config import REDACTED, ScrapeTarget
from inferwatch.formats import ExpositionParser, ParsedScrape
from inferwatch.model import METRIC_NAME_LABEL, FreshLabels, Labels
from inferwatch.server.ingest._target_labels import TargetLabels

__all__ = ["REPORT_METRICS", "TargetHealth", "TargetState", "fresh_batch", "shown_url"]

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


def fresh_batch(parsed: ParsedScrape, report: list[Labels]) -> list[Labels]:
    """A first scrape's label sets then ``report``'s as :class:`~inferwatch.model.FreshLabels`, with the
    parser's numbering of their pairs (the store then numbers none of a first scrape's ~800,000 pairs
    again); a plain list where the parser gave none, or where the target exposes a report series'
    name itself (two equal sets could then be in the batch).

    >>> from inferwatch.formats import ExpositionParser
    >>> parsed = ExpositionParser({"job": "j"}).parse('m{a="1"} 1\\n', 0.0)
    >>> batch = fresh_batch(parsed, [Labels.of("up", job="j")])
    >>> [tuple(batch.pairs[c] for c in batch.codes[:3]), batch.pairs[batch.codes[3]]], batch.sizes.tolist()
    ([(('__name__', 'm'), ('a', '1'), ('job', 'j')), ('__name__', 'up')], [3, 2])
    """
    labels = [*parsed.labels, *report]
    if parsed.numbered is None or len(parsed.numbered[2]) != len(parsed.labels):
        return labels
    pairs, codes, sizes = parsed.numbered
    number = dict(zip(pairs, range(len(pairs)), strict=True))
    if any((METRIC_NAME_LABEL, ls.name) in number for ls in report):
        return labels
    pairs = list(pairs)
    more: list[int] = []
    for pair in (p for ls in report for p in ls.items_tuple):
        if pair not in number:
            number[pair] = len(pairs)
            pairs.append(pair)
        more.append(number[pair])
    all_codes = np.concatenate([np.frombuffer(codes, np.intc), np.array(more, np.intc)])
    all_sizes = np.concatenate([np.frombuffer(sizes, np.int64), np.array(list(map(len, report)), np.int64)])
    return FreshLabels(labels, pairs, all_codes, all_sizes)
