"""Issue 56 row 3: a scrape's new series parsed as one batch read the same label sets as the line parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch._exceptions import InputError
from inferwatch.formats import ExpositionParser
from inferwatch.formats._series_batch import plain_series

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
