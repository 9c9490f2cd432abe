"""Issue 36 #1: the SDK's label poller (``Monitor.poll_labels``) against a fake server."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from inferwatch._exceptions import ConfigError, InputError
from inferwatch.model import SimulatedClock
from inferwatch.quality import RealizedPerformance
from inferwatch.sdk import Monitor
from inferwatch.sdk._label_poller import MAX_BACKOFF_S, urllib_fetch

LABELS = {"service": "svc", "model": "m"}


class FakeOutcomes:
    """A fake of ``GET /api/v1/outcomes``: answers from a list, records each URL asked."""

    def __init__(self, outcomes: list[dict[str, Any]]) -> None:
        self.outcomes, self.asked = outcomes, []
        self.last: int | None = None  # a value here stands for a server whose sequence started again
        self.epoch = "e1"
        self.fail = False

    def __call__(self, url: str, headers: Mapping[str, str], timeout: float) -> bytes:
        self.asked.append((url, dict(headers)))
        if self.fail:
            raise OSError("connection refused")
        query = dict(p.split("=", 1) for p in url.split("?", 1)[1].split("&"))
        after, limit = int(query["after"]), int(query["limit"])
        page = [o for o in self.outcomes if o["seq"] > after][:limit]
        last = self.last if self.last is not None else max([o["seq"] for o in self.outcomes] + [0])
        nxt = page[-1]["seq"] if len(page) == limit else max(last, after)
        data = {"outcomes": page, "next": nxt, "last": last, "epoch": self.epoch}
        return json.dumps({"status": "success", "data": data}).encode()


def _outcomes(n: int, model: str = "m") -> list[dict[str, Any]]:
    return [{"seq": i + 1, "request_id": f"r{i}", "label": i % 2, "model": model} for i in range(n)]


def test_pages_are_read_with_a_cursor_and_joined_to_this_process_predictions() -> None:
    clock = SimulatedClock(0.0)
    agg = RealizedPerformance(service="svc", model="m", window=100)
    fake = FakeOutcomes([*_outcomes(6), {"seq": 7, "request_id": "r0", "label": 1, "model": "other"}])
    with Monitor("svc", "m", clock=clock, aggregators=[agg]) as mon:
        for i in range(4):  # this process made r0..r3; r4 and r5 were another replica's
            mon.observe_prediction({}, confidence=0.9 if i % 2 else 0.1, request_id=f"r{i}")
        poller = mon.poll_labels("http://srv:9464/", model="m", token="tok", batch=4, start=False, fetch=fake)
        assert poller.poll_once() == 4 and poller.cursor == 4
        assert poller.poll_once() == 3 and poller.cursor == 7
        assert poller.poll_once() == 0 and poller.cursor == 7  # caught up: asks again from the same place
        assert mon.flush(60.0)
        assert fake.asked[0] == ("http://srv:9464/api/v1/outcomes?after=0&limit=4&model=m",
                                 {"Accept": "application/json", "Authorization": "Bearer tok"})
        assert poller.counts == {"fed": 6, "other_model": 1, "failed_polls": 0, "resets": 0}
        assert mon.get_sample_value("inferwatch_model_labels_total", {**LABELS, "outcome": "joined"}) == 4
        assert mon.get_sample_value("inferwatch_model_labels_total", {**LABELS, "outcome": "unmatched"}) == 2
        assert mon.get_sample_value("inferwatch_model_realized", {**LABELS, "metric": "accuracy"}) == 1.0


def test_a_server_whose_sequence_started_again_resets_the_cursor() -> None:
    fake = FakeOutcomes(_outcomes(3))
    with Monitor("svc", "m") as mon:
        poller = mon.poll_labels("http://srv", start=False, fetch=fake)
        poller.poll_once()
        fake.last = 1  # a new data directory: numbers start from 1 again
        assert poller.poll_once() == 0 and poller.cursor == 0 and poller.counts["resets"] == 1


def test_a_new_epoch_resets_the_cursor_even_when_the_new_sequence_is_already_past_it() -> None:
    fake = FakeOutcomes(_outcomes(3))
    with Monitor("svc", "m", aggregators=[RealizedPerformance(service="svc", model="m")]) as mon:
        poller = mon.poll_labels("http://srv", start=False, fetch=fake)
        assert poller.poll_once() == 3 and (poller.cursor, poller.epoch) == (3, "e1")
        fake.outcomes, fake.epoch = _outcomes(5), "e2"  # restarted, and 5 new outcomes came before the poll
        assert poller.poll_once() == 0 and poller.cursor == 0 and poller.counts["resets"] == 1
        assert poller.poll_once() == 5 and poller.cursor == 5  # the new 1..3 are not skipped
        assert poller.counts == {"fed": 8, "other_model": 0, "failed_polls": 0, "resets": 1}


@pytest.mark.parametrize("answer", [
    b"<html>", b'{"status": "error"}', b'{"data": {"outcomes": [1], "next": 1, "last": 1}}',
    b'{"data": {"outcomes": [], "next": "x", "last": 0}}'])
def test_an_answer_that_is_not_a_page_raises_input_error_and_keeps_the_cursor(answer: bytes) -> None:
    with Monitor("svc", "m") as mon:
        poller = mon.poll_labels("http://srv", start=False, fetch=lambda url, headers, timeout: answer)
        with pytest.raises(InputError, match="label poller http://srv: not an outcomes page"):
            poller.poll_once()
        assert poller.cursor == 0


def test_bad_arguments_are_config_errors() -> None:
    with Monitor("svc", "m") as mon:
        with pytest.raises(ConfigError, match="url must start with http"):
            mon.poll_labels("srv:9464", start=False)
        with pytest.raises(ConfigError, match=r"batch 1\.\.10000"):
            mon.poll_labels("http://srv", batch=0, start=False)


def test_the_thread_polls_on_the_clock_counts_failures_and_stops_with_the_monitor() -> None:
    fake = FakeOutcomes(_outcomes(2))
    polled, failed = threading.Event(), threading.Event()

    def fetch(url: str, headers: Mapping[str, str], timeout: float) -> bytes:
        try:
            return fake(url, headers, timeout)
        except OSError:
            failed.set()
            raise
        finally:
            polled.set()

    mon = Monitor("svc", "m")  # the real clock: the thread waits its interval between polls
    poller = mon.poll_labels("http://srv", interval=0.01, fetch=fetch)
    assert poller.running and polled.wait(60)
    fake.fail = True
    assert failed.wait(60)
    mon.close()  # stops the poller's thread: the failed poll was counted before it ended
    assert not poller.running
    assert poller.counts["failed_polls"] >= 1 and poller.cursor == 2


def test_a_server_down_is_logged_once_per_outage_and_the_wait_backs_off(
        caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeOutcomes(_outcomes(2))
    fake.fail = True
    mon = Monitor("svc", "m", aggregators=[RealizedPerformance(service="svc", model="m")])
    with mon, caplog.at_level(logging.DEBUG, logger="inferwatch.sdk"):
        poller = mon.poll_labels("http://srv", token="s3cret-token", interval=10.0, start=False, fetch=fake)
        waits = [poller.poll_round() for _ in range(12)]
        assert waits[:4] == [20.0, 40.0, 80.0, 160.0] and waits[-1] == MAX_BACKOFF_S
        warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warned) == 1 and "connection refused" in warned[0].getMessage()
        assert poller.counts["failed_polls"] == 12
        fake.fail = False
        assert poller.poll_round() == 10.0 and poller.cursor == 2  # back: one line says so, normal interval
        assert "polls succeed again after 12 failed" in caplog.records[-1].getMessage()
        fake.fail = True
        poller.poll_round()
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 2  # a new outage
        assert "s3cret-token" not in caplog.text


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:
        _Handler.seen.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/bad"):
            body = json.dumps({"status": "error", "errorType": "bad_data",
                               "error": "invalid parameter 'limit': 1000 is outside 1..500"}).encode()
            self.send_response(400)
        else:  # a redirect (to anywhere: another host would get the token) is not followed
            body = b""
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/bad/elsewhere")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_urllib_fetch_names_the_server_error_and_follows_no_redirect() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        with pytest.raises(OSError, match=r"HTTP 400: invalid parameter 'limit': 1000 is outside 1\.\.500"):
            urllib_fetch(f"{base}/bad/api", {"Authorization": "Bearer tok"}, 60.0)
        with pytest.raises(OSError, match=r"HTTP 302: redirected to .*/bad/elsewhere', not followed"):
            urllib_fetch(f"{base}/moved", {"Authorization": "Bearer tok"}, 60.0)
        assert [path for path, _ in _Handler.seen] == ["/bad/api", "/moved"]  # the redirect was not followed
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(60)


def test_a_closed_monitor_starts_no_poller_and_one_without_a_label_aggregator_says_so(
        caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeOutcomes(_outcomes(2))
    mon = Monitor("svc", "m")
    mon.close()
    with pytest.raises(ConfigError, match="poll_labels: the monitor is closed"):
        mon.poll_labels("http://srv", interval=0.01, fetch=fake)  # its thread was never stopped
    assert fake.asked == []
    with Monitor("svc", "m") as bare, caplog.at_level(logging.WARNING, logger="inferwatch.sdk"):
        bare.poll_labels("http://srv", start=False, fetch=fake)  # every label it feeds would be dropped
    assert "no aggregator takes labels" in caplog.text
