"""One run of one probe: send, time, judge (HTTP, generative or a golden-set run); never raises."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from inferwatch.config import ProbeSpec
from inferwatch.server.ingest.probe._check import Verdict, check_answer, shown
from inferwatch.server.ingest.probe._generative import (
    Generation,
    StreamReader,
    generation_body,
    read_generation,
)
from inferwatch.server.ingest.probe._golden import GoldenCase, judge
from inferwatch.server.ingest.probe._http import Exchange, HttpRequest, exchange

__all__ = ["ProbeResult", "Rotation", "http_request", "run_probe"]


@dataclass
class ProbeResult:
    """What one run found: success, why not, the last exchange, and the generation or canary answers."""

    success: bool
    reason: str
    exchange: Exchange
    duration: float
    verdict: Verdict = field(default_factory=lambda: Verdict(True))
    generation: Generation | None = None
    answers: list[tuple[str, str]] = field(default_factory=list)
    """Golden runs: (case id, "" when right else why wrong), in the order sent."""
    answer: str = ""
    """The answer's start (shown by ``inferwatch probe``)."""


def http_request(spec: ProbeSpec, body: bytes | None = None) -> HttpRequest:
    """The request ``spec`` sends (``body`` replaces the configured one: a golden case, a generation)."""
    headers = {k: v.reveal() for k, v in spec.headers.items()}
    if body is None and spec.body is not None:
        body = spec.body.encode() if isinstance(spec.body, str) else json.dumps(spec.body).encode()
        if not isinstance(spec.body, str):
            headers.setdefault("Content-Type", "application/json")
    if spec.generative is not None and spec.generative.api_key is not None:
        headers["Authorization"] = f"Bearer {spec.generative.api_key.reveal()}"
    if body is not None and (spec.golden is not None or spec.generative is not None):
        headers.setdefault("Content-Type", "application/json")
    verify: bool | str = spec.tls.ca_file or not spec.tls.insecure_skip_verify
    body_probe = spec.golden is not None or spec.generative is not None
    method = "POST" if body_probe and "method" not in spec.model_fields_set else spec.method
    return HttpRequest(spec.url, method, headers, body, spec.follow_redirects, spec.max_redirects,
                       spec.max_body_bytes, verify)


class Rotation:
    """The golden cases in rotation: each run takes the next ``n`` (wrapping round)."""

    def __init__(self, cases: list[GoldenCase], n: int) -> None:
        self.cases, self.n, self.next = cases, min(n, len(cases)), 0

    def take(self) -> list[GoldenCase]:
        """The next run's cases."""
        out = [self.cases[(self.next + i) % len(self.cases)] for i in range(self.n)]
        self.next = (self.next + self.n) % len(self.cases)
        return out


def _http(spec: ProbeSpec, timeout: float) -> ProbeResult:
    ex = exchange(http_request(spec), timeout=timeout)
    verdict = check_answer(ex, spec.expect)
    return ProbeResult(verdict.ok, verdict.reason, ex, ex.duration, verdict,
                       answer=shown(ex.body.decode("utf-8", "replace"), 120))


def _generative(spec: ProbeSpec, timeout: float) -> ProbeResult:
    gen_spec = spec.generative
    assert gen_spec is not None
    reader = StreamReader(time.perf_counter()) if gen_spec.stream else None
    ex = exchange(http_request(spec, generation_body(gen_spec)), timeout=timeout, on_chunk=reader)
    verdict = check_answer(ex, spec.expect)
    if not verdict.ok:
        return ProbeResult(False, verdict.reason, ex, ex.duration, verdict)
    gen = read_generation(gen_spec, ex.body, reader, ex.duration)
    return ProbeResult(not gen.error, gen.error, ex, ex.duration, verdict, gen, answer=shown(gen.text, 120))


def _golden(spec: ProbeSpec, timeout: float, rotation: Rotation) -> ProbeResult:
    start = time.perf_counter()
    deadline = start + timeout
    answers: list[tuple[str, str]] = []
    ex, reason = Exchange(error="no case sent"), ""
    for case in rotation.take():
        left = deadline - time.perf_counter()
        if left <= 0:
            reason = reason or f"timed out after {timeout:g}s: {len(answers)} cases answered"
            break
        ex = exchange(http_request(spec, case.body), timeout=left)
        reached = not ex.error and 200 <= ex.status < 300
        if not reached:  # no answer is an outage, not a wrong answer: it counts in probe_success
            reason = reason or (ex.error or f"status {ex.status}")
            continue
        answers.append((case.id, judge(case, ex.status, ex.body, "")))
    wrong = sum(1 for _, why in answers if why)
    return ProbeResult(not reason, reason, ex, time.perf_counter() - start, answers=answers,
                       answer=f"{len(answers) - wrong} right, {wrong} wrong")


def run_probe(spec: ProbeSpec, rotation: Rotation | None = None, timeout: float | None = None) -> ProbeResult:
    """Run ``spec`` once within its timeout (``rotation``: a golden probe's cases)."""
    limit = spec.timeout if timeout is None else timeout
    if spec.golden is not None:
        assert rotation is not None, "a golden probe runs with its rotation"
        return _golden(spec, limit, rotation)
    if spec.generative is not None:
        return _generative(spec, limit)
    return _http(spec, limit)
