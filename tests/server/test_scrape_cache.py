"""Issue 56 row 2: a warm scrape hashes no label set, and still finds every repeated series."""

from __future__ import annotations

import pytest

from inferwatch._exceptions import InputError
from inferwatch.formats import ExpositionParser
from inferwatch.server.ingest._scrape_limits import duplicate_error

PLAIN = '# TYPE a_total counter\na_total{x="1"} 1\na_total{x="2"} 2\nb 3\n'
SAME_TEXT_TWICE = 'a_total{x="1"} 1\na_total{x="1"} 2\n'
SAME_SERIES_TWO_TEXTS = 'a{x="1",y="2"} 1\na{y="2",x="1"} 2\n'


def test_a_warm_scrape_knows_its_series_are_distinct_without_hashing() -> None:
    p = ExpositionParser({"job": "j", "instance": "i"})
    first = p.parse(PLAIN, 1.0)
    assert first.distinct is True and first.series_added == 3
    warm = p.parse(PLAIN.replace(" 1\n", " 5\n"), 2.0)
    assert warm.distinct is True and warm.series_added == 0 and warm.v == [5.0, 2.0, 3.0]
    assert duplicate_error(PLAIN, warm.labels, distinct=warm.distinct) == ""


def test_a_series_twice_is_found_on_every_scrape_cold_or_warm() -> None:
    for body in (SAME_TEXT_TWICE, SAME_SERIES_TWO_TEXTS):
        p = ExpositionParser({"job": "j"})
        for now in (1.0, 2.0, 3.0):  # the second and third scrapes add no series: the cache must not vouch
            parsed = p.parse(body, now)
            assert parsed.distinct is False, (body, now)
            assert "exposed more than once" in duplicate_error(body, parsed.labels, distinct=parsed.distinct)


def test_a_new_series_equal_to_a_cached_one_is_a_duplicate() -> None:
    p = ExpositionParser({"job": "j"})
    assert p.parse('a{x="1",y="2"} 1\n', 1.0).distinct is True
    parsed = p.parse('a{x="1",y="2"} 1\na{y="2",x="1"} 2\n', 2.0)
    assert parsed.distinct is False and parsed.series_added == 1


def test_the_type_line_check_still_runs_when_the_series_are_distinct() -> None:
    body = "# TYPE a gauge\na 1\n# TYPE a gauge\n"
    parsed = ExpositionParser({}).parse(body, 1.0)
    why = duplicate_error(body, parsed.labels, distinct=parsed.distinct)
    assert why == "second TYPE line for metric name 'a'"


def test_type_lines_are_found_at_the_start_in_the_middle_and_after_crlf() -> None:
    for body in ("# TYPE a gauge\na 1\n# TYPE a gauge\n", "b 1\r\n# TYPE a gauge\r\na 1\r\n# TYPE a gauge"):
        assert duplicate_error(body, [], distinct=True) == "second TYPE line for metric name 'a'", body
    assert duplicate_error("a 1\n#  TYPE a gauge\n# TYPE a gauge\n", [], distinct=True) == ""


def test_new_series_labels_read_in_one_scan_equal_the_label_by_label_reading() -> None:
    p = ExpositionParser({"job": "j", "instance": "i"})
    body = ('m{a="1", b = "x\\"y\\\\z\\nw" ,job="mine",e=""} 1\n'  # escapes, spaces, a conflict, empty
            'n{a="1" ,  } 2\n'  # trailing comma then spaces: the label-by-label path takes it
            'o 3\n')
    got = [dict(ls.items()) for ls in p.parse(body, 1.0).labels]
    assert got == [
        {"__name__": "m", "a": "1", "b": 'x"y\\z\nw', "exported_job": "mine", "job": "j", "instance": "i"},
        {"__name__": "n", "a": "1", "job": "j", "instance": "i"},
        {"__name__": "o", "job": "j", "instance": "i"},
    ]
    for bad in ('m{a="1" b="2"} 1\n', 'm{a="1",,} 1\n', 'm{a="1",a="2"} 1\n', 'm{ } 1\n'):
        with pytest.raises(InputError, match="line 1"):
            ExpositionParser({}).parse(bad, 1.0)
