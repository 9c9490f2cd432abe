"""Issue 56 row 2, warm: a body with the last scrape's series in the same order is read as two columns
(``formats._warm``), and every scrape reads exactly as the line parser reads it."""

from __future__ import annotations

import random

import httpx
import pytest

from inferwatch._exceptions import InputError
from inferwatch.config import ScrapeTarget
from inferwatch.formats import ExpositionParser, ParsedScrape
from inferwatch.model import SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import MemoryStore, parse_selector, stale_mask

TEXT = "text/plain; version=0.0.4"
OM = "application/openmetrics-text; version=1.0.0"
BASE = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 1\na_total{x="2"} 2\nb 3\n'


def _seen(p: ParsedScrape) -> tuple[object, ...]:
    return ([str(ls) for ls in p.labels], p.t, [repr(v) for v in p.v], list(p.tracked), p.series_added,
            p.distinct, p.exemplars)


def _both(bodies: list[tuple[str, str]]) -> list[bool]:
    """Feed ``bodies`` to a warm parser (bytes) and a plain one (text); assert they agree on each;
    return which went the warm way (a warm read hands back the last scrape's ``tracked`` itself)."""
    target = {"job": "j", "instance": "i"}
    warm, plain = ExpositionParser(target), ExpositionParser(target)
    went, last = [], None
    for now, (body, ctype) in enumerate(bodies, 1):
        try:
            want: object = _seen(plain.parse(body, float(now), ctype))
        except InputError as exc:
            want = str(exc)
        try:
            out = warm.parse_bytes(body.encode(), float(now), ctype)
        except InputError as exc:
            got: object = str(exc)
            went.append(False)
            last = None
        else:
            got = _seen(out)
            went.append(last is not None and out.tracked is last and out.comments is not None)
            last = out.tracked
        assert got == want, (now, body)
    return went


# each case: a body after BASE, and whether it may go the warm way
CASES = [
    (BASE.replace(" 1\n", " 7\n"), True),  # new values
    (BASE.replace(" 3\n", " NaN\n").replace(" 2\n", " +Inf\n"), True),
    (BASE.replace("b 3\n", ""), False),  # a series gone
    (BASE + "c 4\n", False),  # a series more
    (BASE.replace('a_total{x="1"} 1\na_total{x="2"} 2\n', 'a_total{x="2"} 2\na_total{x="1"} 1\n'), False),
    (BASE.replace("b 3\n", "b 3 1500\n"), False),  # a timestamp
    (BASE.replace("b 3\n", "b 3\n\n"), False),  # a blank line
    (BASE.replace("b 3\n", "b\n"), False),  # no value: an error, named
    (BASE.replace("b 3\n", "b 3 4\n"), False),
    (BASE.replace('a_total{x="2"} 2\nb 3\n', 'a_total{x="2"}\n5 b 3\n'), False),  # two bad lines that pair up
    (BASE.replace("b 3", "b x"), False),  # a bad value
    (BASE.replace("counter", "gauge"), False),  # a comment changed
    (BASE + "# TYPE a_total counter\n", False),
    (BASE.replace("\n", "\r\n"), False),
    (BASE.replace("b 3", "b\t3"), False),
    (BASE.replace("b 3", "b  3"), False),
    (BASE.rstrip("\n"), True),  # no newline at the end
]


@pytest.mark.parametrize(("body", "warm"), CASES)
def test_a_scrape_after_a_warm_one_reads_as_the_line_parser_reads_it(body: str, warm: bool) -> None:
    went = _both([(BASE, TEXT), (BASE.replace(" 2\n", " 9\n"), TEXT), (body, TEXT), (BASE, TEXT)])
    assert went[1] is True  # the same series with new values: columns
    assert went[2] is warm


VALUES = ["-0", "0", "01", "1.", ".5", "-1.5e-3", "+Inf", "-Inf", "Inf", "NaN", "nan", "Infinity", "1e999",
          "9" * 400, "1_0", "true", "null", '"1"', "[1]", "1,2", "0x10", "{}", "1]", "-"]


@pytest.mark.parametrize("value", VALUES)
def test_every_kind_of_value_reads_as_float_reads_it(value: str) -> None:
    # the json scanner reads plain numbers in C; what it reads differently (-0, huge ints) or not at all
    # must come out as float() reads it, or fail the same way
    body = BASE.replace("b 3", f"b {value}")
    went = _both([(BASE, TEXT), (BASE, TEXT), (body, TEXT), (body.replace(" 2\n", " 5\n"), TEXT)])
    assert went[1] is True


def test_series_with_spaces_or_float_names_go_line_by_line_and_agree() -> None:
    for body in ('a{x="b c"} 1\n', "NaN 1\nInf 2\n", 'x{a="1"} 1\nnan 2\n'):
        assert _both([(body, TEXT), (body.replace(" 1\n", " 5\n"), TEXT)]) == [False, False]


def test_openmetrics_bodies_go_the_warm_way_only_when_they_end_with_eof() -> None:
    om = BASE + "# EOF\n"
    went = _both([(om, OM), (om.replace(" 3\n", " 4\n"), OM), (BASE.replace(" 3\n", " 4\n"), OM),
                  (om, OM), (om.replace("b 3\n", 'b 3 # {t="1"} 1\n'), OM), (om, OM), (om, TEXT)])
    assert went == [False, True, False, False, False, False, False]


def test_random_edits_of_a_warm_body_read_as_the_line_parser_reads_them() -> None:
    rng = random.Random(56)
    lines = [f'm{{k="{i}"}} {i}' for i in range(40)] + ["# TYPE m gauge", "n 1"]
    for _ in range(150):
        body = "\n".join(lines) + "\n"
        edit = list(body)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(edit))
            op = rng.random()
            if op < 0.4:
                edit[at] = rng.choice(' \n0x#"{}.-e')
            elif op < 0.7:
                del edit[at]
            else:
                edit.insert(at, rng.choice(' \n19#'))
        _both([(body, TEXT), (body, TEXT), ("".join(edit), TEXT), (body, TEXT)])


def _loop(bodies: list[str]) -> tuple[ScrapeLoop, MemoryStore, SimulatedClock]:
    served = iter(bodies)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=next(served), headers={"Content-Type": TEXT})

    clock = SimulatedClock(1000.0)
    store = MemoryStore()
    target = ScrapeTarget(job="j", url="http://t:1/metrics", interval=15.0)
    return ScrapeLoop([target], store, clock=clock, transport=httpx.MockTransport(handler)), store, clock


def test_warm_scrapes_keep_staleness_and_the_type_check() -> None:
    twice = BASE + "# TYPE a_total counter\n"
    loop, store, clock = _loop([BASE, BASE, BASE.replace("b 3\n", ""), twice, twice, BASE, BASE])
    health = []
    for _ in range(7):
        loop.scrape_once(clock.now())
        health.append(loop.targets()[0].health)
        clock.advance(15.0)
    # the repeated TYPE line fails its scrape when it comes and again when the same body comes warm
    assert health == ["up", "up", "up", "down", "down", "up", "up"]
    (b,) = store.select(parse_selector("b"), 0, 1e12)
    marks = stale_mask(b.v).tolist()
    assert [t for t, m in zip(b.t.tolist(), marks, strict=True) if m] == [1030.0]  # gone in the third
    assert [v for v, m in zip(b.v.tolist(), marks, strict=True) if not m] == [3.0, 3.0, 3.0, 3.0]
    (a,) = store.select(parse_selector('a_total{x="1"}'), 0, 1e12)
    assert stale_mask(a.v).tolist() == [False, False, False, True, False, False]  # stale when down, once
