"""The loopback push endpoint and the text parser the agent's sources use."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from inferwatch import InputError
from inferwatch.edge import PushSource, parse_text
from inferwatch.model import MetricKind


@pytest.fixture
def push() -> Iterator[PushSource]:
    src = PushSource("127.0.0.1:0", 15.0, max_pending=3)
    yield src
    src.close()


def test_push_keeps_the_latest_value_of_a_round_and_stamps_it(push: PushSource) -> None:
    url = f"http://127.0.0.1:{push.port}/push"
    body = '# TYPE frames_total counter\nframes_total 10\nfps{cam="a"} 29.5\n'
    assert httpx.post(url, content=body, timeout=5).status_code == 204
    assert httpx.post(url, content="frames_total 12\n", timeout=5).status_code == 204
    got = sorted((str(s.labels), s.t, s.v) for s in push.read(100.0))
    assert got == [("fps{cam=\"a\"}", 100.0, 29.5), ("frames_total", 100.0, 12.0)]
    assert push.kinds == {"frames_total": MetricKind.COUNTER}
    assert push.read(115.0) == []


def test_push_refuses_bad_bodies_naming_the_line_and_bounds_what_waits(push: PushSource) -> None:
    url = f"http://127.0.0.1:{push.port}/push"
    r = httpx.post(url, content="ok 1\nbad{ 2\n", timeout=5)
    assert (r.status_code, r.text) == (400, "push: line 2: expected {labels} after 'bad', got '{'")
    assert httpx.post(url.replace("/push", "/x"), content="a 1", timeout=5).status_code == 404
    assert httpx.post(url, content="a 1\nb 2\nc 3\nd 4\n", timeout=5).status_code == 204
    assert (len(push.read(1.0)), push.dropped) == (3, 1)  # max_pending 3: the fourth is dropped, counted


@pytest.mark.parametrize(("text", "error"), [
    ("x 1 2 3", "line 1: expected 'series value \\[timestamp_ms\\]', got 'x 1 2 3'"),
    ("x abc", "line 1: expected 'series value \\[timestamp_ms\\]', got 'x abc'"),
    ("1x 1", "line 1: invalid metric name in '1x'"),
])
def test_parse_errors_name_the_line(text: str, error: str) -> None:
    with pytest.raises(InputError, match=error):
        parse_text(text, now=0.0)
