"""The asynchronous judge: a sampled share of generations scored by an OpenAI-compatible model, off
the request path.

``Monitor.judge(prompt, answer, generation_id=...)`` draws the sample and puts the
generation on a bounded queue (full: dropped and counted); one background thread
takes them in order, waits for the rate limit, skips them once the day's token budget
is spent, and sends each as a chat completion (``POST {base_url}/chat/completions``,
``Authorization: Bearer`` from the config or the environment) with timeouts and
retries with backoff. The first number of the answer becomes
``record_score(config.name, value, generation_id=...)``; every outcome is a self-metric
(``inferwatch_judge_requests_total{outcome}``), never an error of the service, and the
key is never logged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import queue
import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from inferwatch.model import Clock
from inferwatch.sdk._judge_config import JudgeConfig

if TYPE_CHECKING:
    import http.client

__all__ = ["OUTCOMES", "Judge", "JudgeItem", "parse_score"]

log = logging.getLogger("inferwatch.sdk.judge")

OUTCOMES = ("ok", "error", "timeout", "invalid", "dropped", "budget")
"""``inferwatch_judge_requests_total``'s outcomes: one per generation handed to the judge."""

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One generation to judge: its text, its id and the labels its score carries."""

    prompt: str
    answer: str
    generation_id: str
    labels: Mapping[str, Any]


class _Failed(Exception):
    """A call that failed: ``outcome`` counts it; ``retry``: worth another attempt (timeout, 429, 5xx)."""

    def __init__(self, outcome: str, why: str, *, retry: bool = True) -> None:
        super().__init__(why)
        self.outcome, self.retry = outcome, retry


def parse_score(content: Any) -> float | None:
    """The score in a judge's answer: ``{"score": x}``, or its first number; None when there is none.

    >>> parse_score("0.8"), parse_score('{"score": 0.35, "why": "vague"}'), parse_score("Score: 7/10")
    (0.8, 0.35, 7.0)
    >>> parse_score("no idea") is None
    True
    """
    if not isinstance(content, str):
        return None
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("score"), int | float) and not isinstance(
            data["score"], bool):
        value = float(data["score"])
    else:
        found = _NUMBER.search(content)
        if found is None:
            return None
        value = float(found.group())
    return value if math.isfinite(value) else None


class Judge:
    """The queue, its worker thread and the judge's self-metrics (``collect`` is an aggregator's)."""

    kinds: tuple[str, ...] = ()  # an Aggregator with no observations: its metrics only

    def __init__(self, config: JudgeConfig, service: str, score: Callable[[JudgeItem, float], None],
                 clock: Clock, *, rng: random.Random | None = None) -> None:
        self.config, self.service, self._score, self._clock = config, service, score, clock
        self._rng = rng if rng is not None else random.Random()
        self._queue: queue.Queue[JudgeItem | None] = queue.Queue(config.queue_size)
        self._lock = threading.Lock()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        """Generations handed to the judge so far, by outcome."""
        self.tokens = {"prompt": 0, "completion": 0}
        self._day, self._spent, self._next_at = -1, 0, 0.0
        self._conn: http.client.HTTPConnection | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"inferwatch-judge-{service}", daemon=True)
        self._thread.start()

    # --- the request thread -----------------------------------------------------------------
    def sampled(self) -> bool:
        """Whether the sample draws the next generation (False once closed)."""
        return not self._stop.is_set() and self._rng.random() < self.config.sample

    def submit(self, item: JudgeItem) -> bool:
        """Queue ``item`` (True; ``sampled`` draws first); full: dropped and counted. Never blocks/raises."""
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._count("dropped")
            return False
        return True

    # --- the judge's thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._stop.is_set():
                return
            try:
                self._count(self._judge(item))
            except Exception:  # a bug here costs this generation's score, never the thread
                log.exception("inferwatch judge: could not judge generation %s", item.generation_id)
                self._count("error")

    def _judge(self, item: JudgeItem) -> str:
        if self._over_budget():
            return "budget"
        for attempt in range(self.config.retries + 1):
            self._pace()
            if self._stop.is_set():
                return "dropped"
            try:
                value = self._ask(item)
            except _Failed as exc:
                if not exc.retry or attempt == self.config.retries or self._clock.wait(
                        self._stop, self.config.backoff_s * 2 ** attempt):
                    log.warning("inferwatch judge: %s after %d attempts: %s", self.config.base_url,
                                attempt + 1, exc)
                    return exc.outcome
                continue
            if value is None:
                return "invalid"
            self._score(item, value)
            return "ok"
        return "error"  # not reached: the loop returns

    def _pace(self) -> None:
        """Wait until the rate limit lets the next request go."""
        now = self._clock.monotonic()
        start = max(now, self._next_at)
        self._next_at = start + 1.0 / self.config.rate_per_s
        if start > now:
            self._clock.wait(self._stop, start - now)

    def _over_budget(self) -> bool:
        day = int(self._clock.now() // 86400)
        if day != self._day:
            self._day, self._spent = day, 0
        return self._spent >= self.config.daily_tokens

    def _ask(self, item: JudgeItem) -> float | None:
        """One chat completion: the score in its answer (None: none); ``_Failed`` when it failed."""
        status, body = self._post(self._request(item))
        if not 200 <= status < 300:  # a 4xx other than 429: the request itself is wrong, not retried
            raise _Failed("error", f"HTTP {status}", retry=status in _RETRY_STATUS)
        try:
            data = json.loads(body)
            usage = data.get("usage") or {}
            self._use(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                      int(usage.get("total_tokens") or 0))
            return parse_score(data["choices"][0]["message"]["content"])
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None

    def _request(self, item: JudgeItem) -> bytes:
        cut = self.config.max_chars
        user = f"Question:\n{item.prompt[:cut]}\n\nAnswer:\n{item.answer[:cut]}"
        return json.dumps({
            "model": self.config.model,
            "messages": [{"role": "system", "content": self.config.rubric},
                         {"role": "user", "content": user}],
            "temperature": 0, "max_tokens": self.config.max_tokens,
        }).encode()

    def _post(self, body: bytes) -> tuple[int, bytes]:
        """POST to ``{base_url}/chat/completions`` on a kept-alive connection; ``_Failed`` when it fails."""
        import http.client  # loaded by the first call, not by ``import inferwatch.sdk``

        url = urlsplit(self.config.base_url.rstrip("/") + "/chat/completions")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self.config.key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            conn = self._connection(url.scheme, url.netloc)
            conn.request("POST", url.path + (f"?{url.query}" if url.query else ""), body, headers)
            response = conn.getresponse()
            return response.status, response.read()
        except TimeoutError as exc:
            self._drop_connection()
            raise _Failed("timeout", f"no answer within {self.config.timeout_s:g} s") from exc
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection()
            raise _Failed("error", type(exc).__name__) from exc

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        if self._conn is None:
            import http.client

            kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            self._conn = kind(netloc, timeout=self.config.timeout_s)
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _use(self, prompt: int, completion: int, total: int) -> None:
        with self._lock:
            self.tokens["prompt"] += max(prompt, 0)
            self.tokens["completion"] += max(completion, 0)
        self._spent += max(total, prompt + completion, 0)

    def _count(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    # --- exposition and lifecycle -----------------------------------------------------------
    def consume(self, kind: str, payloads: Any, now: float) -> None:
        """Nothing to consume (no kinds): the judge is attached for its metrics only."""

    def collect(self, now: float) -> Iterable[Any]:
        """``inferwatch_judge_requests_total{outcome}``, ``_queue_depth`` and ``_tokens_total{type}``."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from inferwatch.model import metrics as c

        with self._lock:
            outcomes, tokens = dict(self.outcomes), dict(self.tokens)
        requests = CounterMetricFamily(c.JUDGE_REQUESTS_TOTAL.family, c.JUDGE_REQUESTS_TOTAL.help,
                                       labels=c.JUDGE_REQUESTS_TOTAL.labels)
        for outcome, n in outcomes.items():
            requests.add_metric([self.service, outcome], n)
        depth = GaugeMetricFamily(c.JUDGE_QUEUE_DEPTH.name, c.JUDGE_QUEUE_DEPTH.help,
                                  labels=c.JUDGE_QUEUE_DEPTH.labels)
        depth.add_metric([self.service], self._queue.qsize())
        spent = CounterMetricFamily(c.JUDGE_TOKENS_TOTAL.family, c.JUDGE_TOKENS_TOTAL.help,
                                    labels=c.JUDGE_TOKENS_TOTAL.labels)
        for kind, n in tokens.items():
            spent.add_metric([self.service, kind], n)
        return [requests, depth, spent]

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (what is still queued is not judged); idempotent."""
        self._stop.set()
        with contextlib.suppress(queue.Full):  # full: the thread sees the stop flag at its next item
            self._queue.put_nowait(None)
        self._thread.join(timeout)
        self._drop_connection()
