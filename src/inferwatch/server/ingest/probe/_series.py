"""A probe run's series: blackbox_exporter's names for what it also measures, ``inferwatch_probe_*``
for the rest, each with the probe's labels plus ``probe`` and ``instance``."""

from __future__ import annotations

from collections import Counter

from inferwatch.config import ProbeSpec
from inferwatch.model import STALE_NAN, Labels, metrics
from inferwatch.server.ingest.probe._golden import GoldenWindow
from inferwatch.server.ingest.probe._http import PHASES
from inferwatch.server.ingest.probe._run import ProbeResult

__all__ = ["ProbeSeries"]

Row = tuple[Labels, float]


class ProbeSeries:
    """One probe's series and the counters they carry between runs."""

    def __init__(self, spec: ProbeSpec) -> None:
        self.base = {**spec.labels, "probe": spec.name, "instance": spec.instance}
        self.counts: Counter[tuple[str, str]] = Counter()
        self.evidence = ""

    def _ls(self, name: str, **extra: str) -> Labels:
        return Labels({**self.base, **extra, "__name__": name})

    def skipped(self) -> list[Row]:
        """A run skipped because the last one was still going."""
        self.counts[(metrics.PROBE_RUNS_TOTAL.name, "skipped")] += 1
        return self._counters()

    def _counters(self) -> list[Row]:
        items = sorted(self.counts.items())
        return [(self._ls(name, result=result), float(n)) for (name, result), n in items]

    def rows(self, r: ProbeResult, window: GoldenWindow | None) -> list[Row]:
        """The run's rows (values); the caller stamps them with the run's start."""
        ex = r.exchange
        m = metrics
        rows: list[Row] = [
            (self._ls(m.PROBE_SUCCESS.name), float(r.success)),
            (self._ls(m.PROBE_DURATION.name), r.duration),
            *[(self._ls(m.PROBE_HTTP_DURATION.name, phase=p), ex.phases[p]) for p in PHASES],
            (self._ls(m.PROBE_HTTP_STATUS_CODE.name), float(ex.status)),
            (self._ls(m.PROBE_HTTP_CONTENT_LENGTH.name), float(ex.content_length)),
            (self._ls(m.PROBE_HTTP_UNCOMPRESSED_BODY_LENGTH.name), float(len(ex.body))),
            (self._ls(m.PROBE_HTTP_REDIRECTS.name), float(ex.redirects)),
            (self._ls(m.PROBE_HTTP_SSL.name), float(ex.ssl and not ex.error)),
            (self._ls(m.PROBE_FAILED_DUE_TO_REGEX.name), float(r.verdict.regex_failed)),
            (self._ls(m.PROBE_FAILED_DUE_TO_JSON.name), float(r.verdict.json_failed)),
        ]
        if ex.cert_expiry is not None:
            rows.append((self._ls(m.PROBE_SSL_EARLIEST_CERT_EXPIRY.name), ex.cert_expiry))
        self.counts[(m.PROBE_RUNS_TOTAL.name, "success" if r.success else "failure")] += 1
        gen = r.generation
        if gen is not None:
            rows.append((self._ls(m.PROBE_OUTPUT_TOKENS.name), float(gen.tokens)))
            if gen.ttft is not None:
                rows.append((self._ls(m.PROBE_TTFT.name), gen.ttft))
            if gen.tpot is not None:
                rows.append((self._ls(m.PROBE_TPOT.name), gen.tpot))
        if window is not None:
            rows += self._golden(r, window)
        return rows + self._counters()

    def _golden(self, r: ProbeResult, window: GoldenWindow) -> list[Row]:
        m = metrics
        for result in ("right", "wrong"):
            self.counts[(m.PROBE_CANARY_ANSWERS_TOTAL.name, result)] += 0
        rows: list[Row] = []
        for case, why in r.answers:
            self.counts[(m.PROBE_CANARY_ANSWERS_TOTAL.name, "wrong" if why else "right")] += 1
            rows.append((self._ls(m.PROBE_CANARY_CASE_RIGHT.name, case=case), 0.0 if why else 1.0))
        if r.answers:  # a run that reached nothing says nothing about the answers
            window.add(sum(1 for _, why in r.answers if not why), [a for a in r.answers if a[1]])
        ratio = window.ratio()
        rows.append((self._ls(m.PROBE_CANARY_WINDOW_ANSWERS.name), float(window.answers())))
        rows.append((self._ls(m.PROBE_CANARY_THRESHOLD.name), window.threshold))
        if ratio is not None:
            rows.append((self._ls(m.PROBE_CANARY_WRONG_RATIO.name), ratio))
        if window.evidence != self.evidence:  # the old evidence series ends where the new one starts
            if self.evidence:
                rows.append((self._ls(m.PROBE_CANARY_EVIDENCE.name, evidence=self.evidence), STALE_NAN))
            self.evidence = window.evidence
        if self.evidence:
            rows.append((self._ls(m.PROBE_CANARY_EVIDENCE.name, evidence=self.evidence), 1.0))
        return rows
