"""Issue 56: the parser's sample lines, filtered a kind at a time in C, are what a line-by-line
filter keeps (no empty, blank or ``#`` line; everything else in order)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.formats._lines import sample_lines


def _line_by_line(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and line[0] != "#" and not line.isspace()]


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from('ab #{}"=1 \t\n\r\x0b\x0c\x85\u2028'), max_size=80))
def test_sample_lines_keep_what_a_line_by_line_filter_keeps(text: str) -> None:
    assert sample_lines(text) == _line_by_line(text)


def test_a_body_past_one_piece_is_read_whole() -> None:
    body = "".join(f'm{{i="{i}"}} {i}\n' + ("# HELP m x\n\n" if i % 1000 == 0 else "") for i in range(60_000))
    assert sample_lines(body) == _line_by_line(body) and len(sample_lines(body)) == 60_000
