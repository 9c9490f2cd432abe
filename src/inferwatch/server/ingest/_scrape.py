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
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np

from inferwatch._exceptions import InferwatchError
from inferwatch.config import ScrapeJob, ScrapeTarget, install_log_redaction, redact_url
from inferwatch.formats import ParsedScrape
from inferwatch.model import STALE_NAN, Clock, Labels, watching_deadline
from inferwatch.server.ingest._new_series_gc import NewSeriesGc
from inferwatch.server.ingest._scrape_limits import (
    MAX_AHEAD_S,
    ScrapeFailed,
    check_limits,
    drop_future,
    duplicate_error,
    fetch,
)
from inferwatch.server.ingest._scrape_target import REPORT_METRICS, TargetHealth, TargetState, fresh_batch
from inferwatch.server.ingest._target_labels import job_target_labels, relabel_scrape, target_labels
from inferwatch.server.ingest.discovery import Discovery
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


BIG_APPEND = 8192
"""Samples from which a scrape's append waits for a running rule round before it takes the store."""


class ScrapeLoop:
    """Scrapes targets into a store on the injected clock."""

    def __init__(
        self, targets: Sequence[ScrapeTarget], store: Store, *, clock: Clock,
        transport: httpx.BaseTransport | None = None, exemplars: ExemplarStore | None = None,
        sample_limit: int = 0, jobs: Sequence[ScrapeJob] = (), discovery: Discovery | None = None,
        new_series_gc: NewSeriesGc | None = None,
    ) -> None:
        self.store = store
        self.sample_limit = sample_limit
        """``server.limits.sample_limit``: a target's own ``sample_limit`` when it sets none."""
        self.exemplars = exemplars if exemplars is not None else ExemplarStore()
        """The exemplars scraped from OpenMetrics targets (kept across reloads by ``adopt``)."""
        self.clock = clock
        self.jobs = {j.job: j for j in jobs}
        """``scrape.jobs``: the jobs whose targets ``discovery`` finds (see :meth:`set_discovered`)."""
        self.discovery = discovery
        self.new_series_gc = new_series_gc
        """``serve``'s: a target's first scrape runs with the collector paused, and the objects of its
        series are frozen unwalked (``NewSeriesGc.making``)."""
        self.yield_to: Callable[[], None] | None = None
        """Called between blocks of a big body's parse: ``serve`` sets its ``Priority.wait_turn``, so a
        200,000-series parse waits while a rule round runs rather than sharing the interpreter with it."""
        found = [(t, target_labels(t, t.relabel_rules())) for t in targets]
        self._targets = [TargetState(t, f) for t, f in found if f.labels is not None]
        self._dropped: dict[str, list[dict[str, str]]] = {
            "": [dict(sorted(f.discovered.items())) for _, f in found if f.labels is None]}
        self._lock = threading.Lock()  # the target list is replaced whole under it (readers take a copy)
        install_log_redaction()  # httpx logs each request's URL whole (user:pass@, ?token=)
        self._opts: dict[str, Any] = {"transport": transport, "follow_redirects": True,
                                      "headers": {"Accept": ACCEPT}}
        self._client = httpx.Client(**self._opts)
        self._tls: dict[int, httpx.Client | str] = {}  # a client per tls_config, or why it has none
        for t in self._targets:
            self._open_tls(t)
        self._stop = threading.Event()
        self._running = False
        self._threads: list[threading.Thread] = []
        self._store_failing = False

    def _open_tls(self, t: TargetState) -> None:
        if t.cfg.tls_config is not None:
            try:
                self._tls[id(t)] = httpx.Client(**self._opts, verify=t.cfg.tls_config.context())
            except OSError as exc:
                self._tls[id(t)] = str(exc)

    def _close_tls(self, t: TargetState) -> None:
        client = self._tls.pop(id(t), None)
        if isinstance(client, httpx.Client):
            client.close()

    def targets(self) -> list[TargetHealth]:
        """Health of every target: the fixed ones in config order, then the discovered ones."""
        return [t.health for t in self._targets]

    def dropped(self) -> list[dict[str, str]]:
        """The discovered labels of the targets ``relabel_configs`` dropped (not scraped)."""
        return [d for pool in list(self._dropped.values()) for d in pool]

    # -- targets that come and go -------------------------------------------------
    def set_discovered(self, job: str, found: Sequence[dict[str, str]]) -> None:
        """``job``'s targets are now those of ``found`` (label sets with ``__address__``, from discovery).

        New targets are scraped from now on (at once when the loop runs); targets
        that are gone stop after any scrape in flight, and their series, ``up``
        included, get a staleness marker at once (queries and alerts stop seeing
        them). Unchanged targets carry on untouched.
        """
        cfg = self.jobs[job]
        keep: dict[tuple[str, str, tuple[tuple[str, str], ...]], TargetState] = {}
        dropped = []
        for labels in found:
            tl = job_target_labels(cfg, labels)
            if tl.labels is None:
                dropped.append(dict(sorted(tl.discovered.items())))
                continue
            state = TargetState(cfg.model_copy(update={"url": tl.url}), tl, pool=job)
            keep.setdefault(state.key, state)  # as Prometheus: one target per label set and URL
        with self._lock:
            current = {t.key: t for t in self._targets if t.pool == job}
            added = [t for k, t in keep.items() if k not in current]
            removed = [t for k, t in current.items() if k not in keep]
            for k, t in current.items():  # the labels before relabelling may change under the same target
                if k in keep:
                    t.health.discovered = keep[k].health.discovered
            gone = {id(t) for t in removed}
            self._targets = [t for t in self._targets if id(t) not in gone] + added
            self._dropped[job] = dropped
            for t in added:
                self._open_tls(t)
                if self._running:
                    self._start_thread(t)
        if added or removed:
            log.info("job %s: %d targets (%d added, %d removed, %d dropped by relabel_configs)",
                     job, len(keep), len(added), len(removed), len(dropped))
        for t in removed:
            self._retire(t, self.clock.now())

    def _retire(self, target: TargetState, now: float) -> None:
        """Stop ``target`` (its scrape in flight finishes first) and mark its series stale."""
        target.stop.set()
        with target.lock:
            target.gone = True
            self._mark_stale(target, now)
        self._close_tls(target)

    def _mark_stale(self, target: TargetState, now: float) -> None:
        labels = [*target.tracked.values(), *(target.report if target.health.last_scrape is not None else ())]
        if labels:
            try:
                append_columns(self.store, labels, [now] * len(labels), [STALE_NAN] * len(labels))
            except InferwatchError:
                log.exception("cannot mark the series of %s stale", redact_url(target.cfg.url))
        target.tracked = {}

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

    def _scrape(self, target: TargetState, now: float) -> None:
        """One scrape of one target; never raises (a background loop calls it)."""
        with target.lock:
            if target.gone:  # removed by discovery while this scrape waited
                return
            try:
                if self.new_series_gc is not None and not target.parser.cached:  # its first scrape
                    with self.new_series_gc.making(lambda: len(target.tracked)):
                        self._scrape_unsafe(target, now)
                else:
                    self._scrape_unsafe(target, now)
            except Exception:  # a background loop logs and goes on
                log.exception("scrape of %s failed unexpectedly", redact_url(target.cfg.url))
        interval = target.cfg.effective_interval
        due = (target.next_due if target.next_due is not None else now) + interval
        target.next_due = due if due > now else now + interval

    def _scrape_unsafe(self, target: TargetState, now: float) -> None:
        start = self.clock.monotonic()
        parsed, error, note, scraped = ParsedScrape(), "", "", 0
        try:
            client = self._tls.get(id(target), self._client)
            if isinstance(client, str):
                raise ScrapeFailed(client)
            body = fetch(client, target.cfg)  # network time is real time, as httpx's timeout
            with watching_deadline(self.yield_to):  # a big body's parse steps aside for rule rounds
                parsed = target.parser.parse_bytes(body.raw, now, body.content_type, body.encoding)
            scraped = len(parsed)
            if len(target.relabelled) > 1_000_000:  # series churn: start the cache afresh
                target.relabelled.clear()
            relabel_scrape(parsed, target.metric_rules, target.relabelled)
            try:
                check_limits(target.cfg, parsed.labels, self.sample_limit)
            except ScrapeFailed as exc:  # counted as the store counts its own refusals
                count_discarded(self.store, str(exc).split(" exceeded")[0].replace(" ", "_"), len(parsed))
                raise
            # metric_relabel_configs may make two series one: then the label sets are compared
            error = duplicate_error(body.text if parsed.comments is None else parsed.comments, parsed.labels,
                                    distinct=parsed.distinct if not target.metric_rules else None)
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
        labels, v = parsed.labels, parsed.v
        stale = self._stale(target.tracked, parsed)
        # a first scrape's new series as one batch with their pairs numbered; else a plain list
        labels = (fresh_batch(parsed, target.report) if not stale and not target.metric_rules
                  else [*labels, *stale, *target.report])
        # every line tracked: none had a timestamp, so all are stamped now (no list of 100,000 to convert)
        t: list[float] | np.ndarray = (np.full(len(labels), now) if len(parsed.tracked) == len(parsed) else
                                      [*parsed.t, *([now] * len(stale)), *([now] * len(target.report))])
        n = float(len(parsed))
        pre = float(0 if error else scraped)  # scrape_samples_scraped counts before metric_relabel_configs
        report = [0.0 if error else 1.0, duration, pre, n, float(parsed.series_added)]
        v = [*v, *([STALE_NAN] * len(stale)), *report]
        if self.yield_to is not None and len(labels) >= BIG_APPEND:
            self.yield_to()  # the round's own small appends wait for the store's file behind a big one
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
        if parsed.tracked is prev:  # a warm scrape of the same series (formats._warm): none went missing
            return []
        gone = prev.keys() - parsed.tracked.keys()
        if not gone:
            return []
        present = set(parsed.labels)
        return [prev[k] for k in gone if prev[k] not in present]

    def adopt(self, old: ScrapeLoop, now: float) -> int:
        """Take over ``old``'s state for targets whose config is unchanged (a reload).

        Their parser cache, tracked series and schedule carry on, so a reload
        neither marks their series stale nor costs a cold first scrape; so do the
        discovered targets of a job whose config is unchanged (discovery then
        updates them). The series of targets that are gone are marked stale.
        ``old`` must be stopped. Returns how many targets were kept. The exemplars carry on.
        """
        self.exemplars = old.exemplars
        previous = {t.cfg.model_dump_json(): t for t in old._targets if not t.pool}
        kept = 0
        for i, t in enumerate(self._targets):
            prev = previous.pop(t.cfg.model_dump_json(), None)
            if prev is not None:
                self._targets[i] = prev
                kept += 1
        same = {name for name, job in self.jobs.items()
                if name in old.jobs and old.jobs[name].model_dump_json() == job.model_dump_json()}
        carried = [t for t in old._targets if t.pool in same]
        for t in carried:
            self._open_tls(t)
        self._targets = [*self._targets, *carried]
        self._dropped.update({name: old._dropped.get(name, []) for name in same})
        old._targets = [*previous.values(), *(t for t in old._targets if t.pool and t.pool not in same)]
        old.mark_all_stale(now)
        return kept + len(carried)

    def mark_all_stale(self, now: float) -> None:
        """End-of-run staleness: every tracked series and the report series go stale (target removed)."""
        for target in self._targets:
            with target.lock:
                labels = [*target.tracked.values(), *target.report]
                try:
                    append_columns(self.store, labels, [now] * len(labels), [STALE_NAN] * len(labels))
                except InferwatchError:
                    log.exception("cannot mark the series of %s stale", redact_url(target.cfg.url))
                target.tracked = {}

    # -- threads ----------------------------------------------------------------
    def start(self) -> None:
        """Run one thread per target, and discovery's threads, until :meth:`stop`."""
        with self._lock:
            self._running = True
            for target in self._targets:
                self._start_thread(target)
        if self.discovery is not None:
            self.discovery.start(self.set_discovered)

    def _start_thread(self, target: TargetState) -> None:
        target.stop = threading.Event()  # a fresh one: a target adopted from a stopped loop runs again
        name = f"scrape-{target.cfg.job}"
        th = threading.Thread(target=self._run, args=(target, target.stop), name=name, daemon=True)
        th.start()
        self._threads.append(th)

    def _run(self, target: TargetState, stop: threading.Event) -> None:
        while not stop.is_set() and not self._stop.is_set():
            self.clock.wait(stop, self._run_once(target))

    def _run_once(self, target: TargetState) -> float:
        """Scrape ``target`` if due on the monotonic clock; return the seconds until it is due again.

        Scheduling is monotonic and samples are stamped with the wall clock, so
        a step of the wall clock (either way) neither stops nor rushes scraping. The stamp is
        in whole milliseconds, as Prometheus's: the head stores a scrape's jitter in a byte a
        sample then, against three for microseconds (``store._chunk``).
        """
        mono = self.clock.monotonic()
        if target.next_mono is None or mono >= target.next_mono:
            self._scrape(target, math.floor(self.clock.now() * 1000.0) / 1000.0)
            interval = target.cfg.effective_interval
            due = (target.next_mono if target.next_mono is not None else mono) + interval
            target.next_mono = due if due > mono else mono + interval
        return max(target.next_mono - self.clock.monotonic(), 0.0)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop discovery and the scrape threads (joined with ``timeout``) and close the HTTP clients."""
        if self.discovery is not None:
            self.discovery.stop(timeout)
        self._stop.set()
        with self._lock:
            self._running = False
            for target in self._targets:
                target.stop.set()
        for th in self._threads:
            th.join(timeout)
        self._threads.clear()
        self._client.close()
        for t in self._targets:
            self._close_tls(t)
