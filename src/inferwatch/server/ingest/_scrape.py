"""The scrape loop: fetch each target on its interval, parse, append, mark staleness.

Prometheus's semantics: samples are stamped with the scrape's start time
(unless the exposition gives one and ``honor_timestamps`` holds); every
scrape adds ``up``, ``scrape_duration_seconds``, ``scrape_samples_scraped``,
``scrape_samples_post_metric_relabeling`` and ``scrape_series_added``; a
series present in the previous scrape and absent now gets a staleness marker
at the scrape time, and a failed scrape (HTTP error, timeout, parse error)
marks every series of the target stale. Series with explicit timestamps are
exempt from staleness, as in Prometheus.

Tests drive it with :meth:`ScrapeLoop.tick` / :meth:`ScrapeLoop.scrape_once`
on a simulated clock; :meth:`ScrapeLoop.start` runs one thread per target.
"""

from __future__ import annotations

import logging
import re
import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from inferwatch._exceptions import InferwatchError
from inferwatch.config import REDACTED, ScrapeTarget, install_log_redaction, redact_url
from inferwatch.formats import ExpositionParser, ParsedScrape
from inferwatch.model import STALE_NAN, Clock, Labels
from inferwatch.server.ingest._scrape_limits import (
    MAX_AHEAD_S,
    ScrapeFailed,
    check_limits,
    drop_future,
    duplicate_error,
    fetch,
)
from inferwatch.server.ingest._target_labels import TargetLabels, relabel_scrape, target_labels
from inferwatch.store import (
    ExemplarStore,
    LimitExceeded,
    Store,
    append_columns,
    count_discarded,
    hold_samples,
)

__all__ = ["REPORT_METRICS", "ScrapeLoop", "TargetHealth"]

log = logging.getLogger(__name__)

ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
"""Prometheus 2.42's scrape Accept header: OpenMetrics first, so targets serve their exemplars."""
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


def _shown_url(url: str) -> str:
    """``url`` as the targets API shows it: no ``user:pass@``, secret-looking query values masked.

    Other query parameters stay (Prometheus shows a target's ``params``, such as
    a blackbox exporter's ``module``).

    >>> _shown_url("http://u:p@h:1/m?module=x&access_token=abc")
    'http://h:1/m?module=x&access_token=%3Csecret%3E'
    """
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.urlencode([(k, REDACTED if _SECRET_PARAM.search(k) else v)
                                    for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)])
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query=query))


class _Target:
    """One target's state between scrapes: parser cache, tracked series, schedule."""

    def __init__(self, cfg: ScrapeTarget, found: TargetLabels) -> None:
        assert found.labels is not None
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
            cfg.job, self.labels.get("instance", cfg.instance), _shown_url(self.cfg.url),
            dict(sorted(self.labels.items())), cfg.effective_interval, cfg.effective_timeout,
            discovered=dict(sorted(found.discovered.items())),
        )


class ScrapeLoop:
    """Scrapes targets into a store on the injected clock."""

    def __init__(
        self, targets: Sequence[ScrapeTarget], store: Store, *, clock: Clock,
        transport: httpx.BaseTransport | None = None, exemplars: ExemplarStore | None = None,
        sample_limit: int = 0,
    ) -> None:
        self.store = store
        self.sample_limit = sample_limit
        """``server.limits.sample_limit``: a target's own ``sample_limit`` when it sets none."""
        self.exemplars = exemplars if exemplars is not None else ExemplarStore()
        """The exemplars scraped from OpenMetrics targets (kept across reloads by ``adopt``)."""
        self.clock = clock
        found = [(t, target_labels(t, t.relabel_rules())) for t in targets]
        self._targets = [_Target(t, f) for t, f in found if f.labels is not None]
        self._dropped = [dict(sorted(f.discovered.items())) for _, f in found if f.labels is None]
        install_log_redaction()  # httpx logs each request's URL whole (user:pass@, ?token=)
        opts: dict[str, Any] = {"transport": transport, "follow_redirects": True,
                                "headers": {"Accept": ACCEPT}}
        self._client = httpx.Client(**opts)
        self._tls: dict[int, httpx.Client | str] = {}  # a client per tls_config, or why it has none
        for t in self._targets:
            if t.cfg.tls_config is not None:
                try:
                    self._tls[id(t)] = httpx.Client(**opts, verify=t.cfg.tls_config.context())
                except OSError as exc:
                    self._tls[id(t)] = str(exc)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._store_failing = False

    def targets(self) -> list[TargetHealth]:
        """Health of every target, in config order."""
        return [t.health for t in self._targets]

    def dropped(self) -> list[dict[str, str]]:
        """The discovered labels of the targets ``relabel_configs`` dropped (not scraped)."""
        return list(self._dropped)

    def scrape_once(self, now: float | None = None) -> None:
        """Scrape every target now (sequentially)."""
        for t in self._targets:
            self._scrape(t, self.clock.now() if now is None else now)

    def tick(self, now: float) -> int:
        """Scrape the targets due at ``now``; return how many were scraped."""
        done = 0
        for t in self._targets:
            if t.next_due is None or now >= t.next_due:
                self._scrape(t, now)
                done += 1
        return done

    def _scrape(self, target: _Target, now: float) -> None:
        """One scrape of one target; never raises (a background loop calls it)."""
        try:
            self._scrape_unsafe(target, now)
        except Exception:  # a background loop logs and goes on
            log.exception("scrape of %s failed unexpectedly", redact_url(target.cfg.url))
        interval = target.cfg.effective_interval
        due = (target.next_due if target.next_due is not None else now) + interval
        target.next_due = due if due > now else now + interval

    def _scrape_unsafe(self, target: _Target, now: float) -> None:
        start = self.clock.monotonic()
        parsed, error, note, scraped = ParsedScrape(), "", "", 0
        try:
            client = self._tls.get(id(target), self._client)
            if isinstance(client, str):
                raise ScrapeFailed(client)
            body = fetch(client, target.cfg)  # network time is real time, as httpx's timeout
            parsed = target.parser.parse(body.text, now, body.content_type)
            scraped = len(parsed)
            if len(target.relabelled) > 1_000_000:  # series churn: start the cache afresh
                target.relabelled.clear()
            relabel_scrape(parsed, target.metric_rules, target.relabelled)
            try:
                check_limits(target.cfg, parsed.labels, self.sample_limit)
            except ScrapeFailed as exc:  # counted as the store counts its own refusals
                count_discarded(self.store, str(exc).split(" exceeded")[0].replace(" ", "_"), len(parsed))
                raise
            error = duplicate_error(body.text, parsed.labels)
            dropped = drop_future(parsed.labels, parsed.t, parsed.v, now)
            if dropped:
                note = (f"{dropped} samples out of bounds (stamped more than {MAX_AHEAD_S:g}s "
                        "in the future), dropped")
        except ScrapeFailed as exc:
            error = str(exc)
        except InferwatchError as exc:
            error = str(exc) or type(exc).__name__
        if error:
            parsed = ParsedScrape()
        duration = self.clock.monotonic() - start
        labels, t, v = parsed.labels, parsed.t, parsed.v
        stale = self._stale(target.tracked, parsed)
        labels = [*labels, *stale, *target.report]
        t = [*t, *([now] * len(stale)), *([now] * len(target.report))]
        n = float(len(parsed))
        pre = float(0 if error else scraped)  # scrape_samples_scraped counts before metric_relabel_configs
        report = [0.0 if error else 1.0, duration, pre, n, float(parsed.series_added)]
        v = [*v, *([STALE_NAN] * len(stale)), *report]
        try:
            try:
                append_columns(self.store, labels, t, v)
            except LimitExceeded as exc:  # the scrape fails as Prometheus's does: up 0, nothing else kept
                error, parsed = str(exc), ParsedScrape()
                stale = list(target.tracked.values())  # a failed scrape: everything it had goes stale
                labels = [*stale, *target.report]
                t = [*([now] * len(stale)), *([now] * len(target.report))]
                v = [*([STALE_NAN] * len(stale)), 0.0, duration, 0.0, 0.0, 0.0]
                append_columns(self.store, labels, t, v)
        except InferwatchError as exc:
            error = f"store refused the scrape: {exc}"
            # up 0 in memory (never written): a target that cannot be stored is down, TargetDown can fire
            held = [0.0, duration, 0.0, 0.0, 0.0]
            hold_samples(self.store, target.report, [now] * len(target.report), held)
            if not self._store_failing:  # once per episode: a full disk refuses every scrape
                log.error("target %s: %s (said once until the store accepts samples again)",
                          redact_url(target.cfg.url), error)
            self._store_failing = True
        else:
            if self._store_failing:
                log.warning("the store accepts scraped samples again")
            self._store_failing = False
            target.tracked = parsed.tracked  # only what was stored can go stale later
            if parsed.exemplars:  # Prometheus: an exemplar without a time gets the scrape's
                self.exemplars.add_many((ls, ex, v, now if t is None else t)
                                        for ls, ex, v, t in parsed.exemplars)
        h = target.health
        if error:  # httpx's messages quote the URL, which may carry user:pass@ or a ?token=
            error = error.replace(target.cfg.url, redact_url(target.cfg.url))
        h.health, h.last_error = ("down", error) if error else ("up", note)
        h.last_scrape, h.last_duration, h.samples = now, duration, len(parsed)

    @staticmethod
    def _stale(prev: dict[str, Labels], parsed: ParsedScrape) -> list[Labels]:
        """Series tracked in the previous scrape and absent from this one."""
        gone = prev.keys() - parsed.tracked.keys()
        if not gone:
            return []
        present = set(parsed.labels)
        return [prev[k] for k in gone if prev[k] not in present]

    def adopt(self, old: ScrapeLoop, now: float) -> int:
        """Take over ``old``'s state for targets whose config is unchanged (a reload).

        Their parser cache, tracked series and schedule carry on, so a reload
        neither marks their series stale nor costs a cold first scrape. The
        series of targets that are gone are marked stale. ``old`` must be
        stopped. Returns how many targets were kept. The exemplars carry on.
        """
        self.exemplars = old.exemplars
        previous = {t.cfg.model_dump_json(): t for t in old._targets}
        kept = 0
        for i, t in enumerate(self._targets):
            prev = previous.pop(t.cfg.model_dump_json(), None)
            if prev is not None:
                self._targets[i] = prev
                kept += 1
        old._targets = list(previous.values())
        old.mark_all_stale(now)
        return kept

    def mark_all_stale(self, now: float) -> None:
        """End-of-run staleness: every tracked series and the report series go stale (target removed)."""
        for target in self._targets:
            labels = [*target.tracked.values(), *target.report]
            try:
                append_columns(self.store, labels, [now] * len(labels), [STALE_NAN] * len(labels))
            except InferwatchError:
                log.exception("cannot mark the series of %s stale", redact_url(target.cfg.url))
            target.tracked = {}

    # -- threads ----------------------------------------------------------------
    def start(self) -> None:
        """Run one thread per target until :meth:`stop`."""
        for target in self._targets:
            name = f"scrape-{target.cfg.job}"
            th = threading.Thread(target=self._run, args=(target,), name=name, daemon=True)
            th.start()
            self._threads.append(th)

    def _run(self, target: _Target) -> None:
        while not self._stop.is_set():
            self.clock.wait(self._stop, self._run_once(target))

    def _run_once(self, target: _Target) -> float:
        """Scrape ``target`` if due on the monotonic clock; return the seconds until it is due again.

        Scheduling is monotonic and samples are stamped with the wall clock, so
        a step of the wall clock (either way) neither stops nor rushes scraping.
        """
        mono = self.clock.monotonic()
        if target.next_mono is None or mono >= target.next_mono:
            self._scrape(target, self.clock.now())
            interval = target.cfg.effective_interval
            due = (target.next_mono if target.next_mono is not None else mono) + interval
            target.next_mono = due if due > mono else mono + interval
        return max(target.next_mono - self.clock.monotonic(), 0.0)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the threads (joined with ``timeout``) and close the HTTP client."""
        self._stop.set()
        for th in self._threads:
            th.join(timeout)
        self._threads.clear()
        self._client.close()
        for client in self._tls.values():
            if not isinstance(client, str):
                client.close()
