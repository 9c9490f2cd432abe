"""Issue 56 row 3: a scrape's new series parsed as one batch read the same label sets as the line parser,
and handed to the store with their pairs numbered, store what the store's own numbering stores."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch._exceptions import InputError
from inferwatch.config import ScrapeTarget
from inferwatch.formats import ExpositionParser, ParsedScrape
from inferwatch.formats._series_batch import plain_series
from inferwatch.model import FreshLabels, Labels, SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.server.ingest._scrape_target import fresh_batch
from inferwatch.store import SQLiteStore, parse_selector

TARGET = {"job": "j", "instance": "h:1"}


def _line_by_line(body: str, target: dict[str, str], honor: bool = False,
                  ) -> list[tuple[tuple[str, str], ...]]:
    """What the line parser alone reads (a body with one bad line makes the whole body go line by line)."""
    p = ExpositionParser(target, honor_labels=honor)
    return [ls.items_tuple for ls in p._parse_lines(body, 1.0).labels]


@pytest.mark.parametrize("text", [
    'm{a="1",b="2"}',  # plain
    'm{b="2",a="1",}',  # unsorted, a trailing comma
    'm{}', "m", "a:b_c{x=\"y\"}",  # no labels, a colon in the name
    'm{route="/a{b},c=d",z="}"}',  # braces, commas and equals signs inside values
    'm{a="x\\"y"}', 'm{a="x\\\\y"}', 'm{a="x\\ny"}',  # escapes: the line parser's
    'm{a=""}', 'm{a="1",e=""}',  # an empty value is no label
    'm{__meta="1",a="2"}',  # a reserved name is dropped
    'm{ a = "1" }', 'm{a="1" ,b="2"}',  # spaces
    'm{job="mine",a="1"}', 'm{instance="x"}',  # a target label: exported_ (or kept, honoring)
    'm{a="é 中"}',  # not ASCII
])
@pytest.mark.parametrize("honor", [False, True])
def test_a_batch_of_new_series_reads_what_the_line_parser_reads(text: str, honor: bool) -> None:
    body = f"{text} 1\nother 2\n"
    batch = ExpositionParser(TARGET, honor_labels=honor).parse(body, 1.0)
    assert [ls.items_tuple for ls in batch.labels] == _line_by_line(body, TARGET, honor)
    assert batch.series_added == 2


_NAME = st.sampled_from(["a", "b", "Z", "_x", "__m", "job", "instance", "le", "x1"])
_VALUE = st.text(st.sampled_from('ab1{},="\\ \n/é'), max_size=6)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(_NAME, _VALUE, max_size=4), min_size=1, max_size=6))
def test_any_body_reads_the_same_as_line_by_line(sets: list[dict[str, str]]) -> None:
    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    body = "".join("m{" + ",".join(f'{k}="{esc(v)}"' for k, v in s.items()) + f"}} {i}\n"
                   for i, s in enumerate(sets))
    got = ExpositionParser(TARGET).parse(body, 1.0)
    assert [ls.items_tuple for ls in got.labels] == _line_by_line(body, TARGET)


def test_a_text_twice_among_new_series_is_one_object_and_one_series_added() -> None:
    p = ExpositionParser(TARGET)
    parsed = p.parse('m{a="1"} 1\nm{a="1"} 2\nm{a="2"} 3\n', 1.0)
    assert parsed.labels[0] is parsed.labels[1] and parsed.series_added == 2 and parsed.distinct is False


def test_pairs_repeated_across_new_series_are_shared() -> None:
    a, b = plain_series(['m{model="x",k="1"}', 'm{model="x",k="2"}'], (("job", "j"),))
    assert a is not None and b is not None
    assert dict(a.items_tuple)["model"] == "x" and a.items_tuple[3] is b.items_tuple[3]  # ("model", "x")


def test_a_target_with_an_empty_value_or_a_name_sends_new_series_line_by_line() -> None:
    for target in ({"job": ""}, {"__name__": "x", "job": "j"}):
        body = 'm{a="1"} 1\n'
        got = ExpositionParser(target).parse(body, 1.0)
        assert [ls.items_tuple for ls in got.labels] == _line_by_line(body, target)



def _families(n: int) -> list[str]:
    """Several shapes interleaved: two label orders of one family, a family where some texts hold an
    empty value or an escape (those go line by line), one without labels (texts repeat)."""
    lines = []
    for i in range(n):
        k = i % 4
        if k == 0:
            lines.append(f'a_total{{code="{i % 7}",route="/r{i}"}} {i}')
        elif k == 1:
            lines.append(f'a_total{{route="/r{i}",code="{i % 7}"}} {i}')
        elif k == 2:
            value = "" if i % 3 == 0 else "x\\\\y" if i % 3 == 1 else f"v{i}"
            lines.append(f'b{{z="{value}",a="{i}"}} {i}')
        else:
            lines.append(f"c_{i % 11} {i}")
    return lines


def test_many_families_and_layouts_across_blocks_read_what_the_line_parser_reads() -> None:
    lines = _families(9_000)  # more than one block of 8192 texts
    body = "\n".join(lines) + "\n"
    got = ExpositionParser(TARGET).parse(body, 1.0)
    assert [ls.items_tuple for ls in got.labels] == _line_by_line(body, TARGET)
    repeated = sum(x.startswith("c_") for x in lines)  # c_0 ... c_10, each many times
    assert got.series_added == len(lines) - repeated + 11 and got.distinct is False


def test_a_label_twice_in_a_batch_of_new_series_is_refused_naming_its_line() -> None:
    lines = _families(100)
    lines.insert(57, 'd{q="1",q="1"} 1')
    with pytest.raises(InputError, match="line 58: label 'q' given twice"):
        ExpositionParser(TARGET).parse("\n".join(lines) + "\n", 1.0)


def _scraped_store(path: Path, body: bytes, *, numbered: bool) -> SQLiteStore:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": "text/plain; version=0.0.4"})

    clock = SimulatedClock(1_700_000_000.0)
    store = SQLiteStore(path, clock=clock)
    loop = ScrapeLoop([ScrapeTarget(job="j", url="http://t:1/metrics", interval=15.0)], store, clock=clock,
                      transport=httpx.MockTransport(handler))
    if not numbered:  # the same scrape with the parser's numbering dropped: the store numbers the pairs
        parser = loop._targets[0].parser
        parse = parser.parse_bytes

        def plain(raw: bytes, now: float, content_type: str = "", encoding: str = "utf-8") -> ParsedScrape:
            got = parse(raw, now, content_type, encoding)
            got.numbered = None
            return got
        parser.parse_bytes = plain  # type: ignore[method-assign]
    loop.scrape_once(clock.now())
    assert loop.targets()[0].health == "up", loop.targets()[0].last_error
    loop.stop()
    return store


def _contents(store: SQLiteStore) -> tuple[object, ...]:
    got = store.select(parse_selector('{__name__=~".+"}'), 0.0, 2e9)
    by_code = store.select(parse_selector('{code="201"}'), 0.0, 2e9)
    return ([(s.labels.items_tuple, s.v.tolist()) for s in got], [s.labels.items_tuple for s in by_code],
            sorted(store.label_values("code")))


@pytest.mark.parametrize("families", [1, 7])
def test_a_first_scrape_handed_numbered_stores_what_the_stores_numbering_does(tmp_path: Path,
                                                                           families: int) -> None:
    # 9,000 lines: two blocks of the batch parser; several families interleave shapes inside a block
    body = "".join(f'f{i % families}_total{{code="{200 + i % 3}",k="v{i % 500}",i="{i}"}} {i}\n'
                   for i in range(9_000)).encode()
    fed = _scraped_store(tmp_path / "a", body, numbered=True)
    plain = _scraped_store(tmp_path / "b", body, numbered=False)
    try:
        assert _contents(fed) == _contents(plain) and fed.stats.series_created == 9_005
    finally:
        fed.close()
        plain.close()
    again = [SQLiteStore(tmp_path / name) for name in ("a", "b")]  # the series log read back
    try:
        assert _contents(again[0]) == _contents(again[1])
    finally:
        for store in again:
            store.close()


def test_a_target_exposing_up_itself_is_not_handed_as_fresh() -> None:
    parsed = ExpositionParser(TARGET).parse("up 1\nm 2\n", 1.0)
    assert parsed.numbered is not None  # the parser numbered its two new series
    report = [Labels({"__name__": "up", **TARGET})]
    assert type(fresh_batch(parsed, report)) is list  # its up and the report's up are one set
    assert type(fresh_batch(ExpositionParser(TARGET).parse("m 2\n", 1.0), report)) is FreshLabels
    assert ExpositionParser(TARGET).parse("m 2\nm 3\n", 1.0).numbered is None  # a series twice
