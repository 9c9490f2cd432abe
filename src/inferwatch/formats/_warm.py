"""The warm scrape: a body whose series are the last scrape's, line for line, read as two columns.

Prometheus's scrape cache maps a line's series text to its series; most scrapes
of a target repeat the previous one's series in the same order with new values.
:class:`WarmLayout` keeps the last accepted scrape's series texts as one bytes
object (no object a series) with its label sets, and takes a new body in pieces
of whole lines: one ``split`` a piece gives the series texts and the values
side by side; the texts are compared with the remembered ones in one ``==``;
the values become floats in one ``map``. No per-line Python frame, no decoding
of the body, no dictionary look-up.

Anything else — a new, missing or moved series, a timestamp, a space inside a
label value, a blank line, ``\\r``, a changed comment line, an exemplar —
answers ``None``, and the line parser reads the body as before (and names the
bad line if there is one). So every scrape that goes this way gives exactly what
the line parser gives for it.

>>> from inferwatch.model import Labels
>>> a, b = Labels({"__name__": "a"}), Labels({"__name__": "b", "x": "1"})
>>> w = WarmLayout(["a", 'b{x="1"}'], [a, b], {"a": a, 'b{x="1"}': b}, [])
>>> got = w.read(b'a 1\\nb{x="1"} 2.5\\n')
>>> got is not None and got.values == [1.0, 2.5] and got.labels == [a, b]
True
>>> w.read(b'a 1\\nc 2\\n') is None
True
"""

from __future__ import annotations

import json
import operator
import re
from dataclasses import dataclass
from itertools import repeat

from inferwatch.model import Labels, check_deadline

__all__ = ["WarmLayout", "WarmRead", "comment_lines"]

_PIECE = 1 << 19
"""Bytes of the body taken per C-level call: a few milliseconds holding the interpreter lock each."""
_COMMENT_RE = re.compile(rb"^#[^\n]*\n?", re.M)
_FLOAT_NAME = re.compile(rb"(?:^|\n)(?i:nan|inf|infinity)(?:\n|$)")
"""A metric name that ``float`` would read as a value: a target exposing one goes line by line."""
_JSON_NUMBERS = frozenset({int, float})


def comment_lines(body: bytes) -> list[bytes]:
    """The lines of ``body`` that start with ``#``, each with its newline."""
    return _COMMENT_RE.findall(body) if b"#" in body else []  # one byte: a memchr, not a search


@dataclass(frozen=True)
class WarmRead:
    """A warm body as columns: the remembered label sets (a new list) and this scrape's values."""

    labels: list[Labels]
    values: list[float]
    tracked: dict[str, Labels]
    """The remembered ``tracked`` mapping itself (the same object: the scrape loop's staleness check
    then knows that nothing went missing without comparing 100,000 keys)."""
    comments: str
    """The body's comment lines (``# HELP``, ``# TYPE``), for the duplicate ``TYPE`` check."""


def _numbers(tokens: list[bytes]) -> list[float] | None:
    """``tokens`` as ``float`` reads them, or ``None`` where one is not a number.

    Most values are plain decimals: the ``json`` scanner reads a list of them in C, integers without a
    call each (with their conversion, half of ``map(float)``'s time; it reads a decimal with ``float``
    itself). What it reads otherwise, or not at all, goes to ``float``: ``-0`` (an int there, -0.0
    here), ``+Inf``, ``1.``, ``01``, huge integers, a quote, a bracket, ``true``.
    """
    joined = b",".join(tokens)
    if b"-0" not in joined and b'"' not in joined:
        try:
            got = json.loads(b"[" + joined + b"]")
        except (ValueError, RecursionError):
            got = None
        if got is not None and len(got) == len(tokens) and set(map(type, got)) <= _JSON_NUMBERS:
            try:
                return list(map(float, got))  # an int to a float: no parsing, a tenth of the time
            except OverflowError:  # an integer past float64's range, which float() reads as inf
                pass
    try:
        return list(map(float, tokens))
    except ValueError:
        return None


class WarmLayout:
    """The series texts of one target's last accepted scrape, in order, and what they parsed into.

    The texts are joined into one bytes object at the first :meth:`read`, not when remembered: a
    target whose series change at every scrape never pays for it (nor does a first scrape).
    """

    def __init__(self, keys: list[str], labels: list[Labels], tracked: dict[str, Labels],
                 comments: list[bytes]) -> None:
        self._keys: list[str] | None = keys
        self._labels = labels
        self._tracked = tracked
        self._comments = comments
        self._skeleton = b""
        self._widths: list[int] = []  # each series text and its space, in bytes

    @classmethod
    def remember(cls, keys: list[str], labels: list[Labels], tracked: dict[str, Labels],
                 comments: list[bytes]) -> WarmLayout | None:
        """The layout of a scrape whose series texts are ``keys`` (all different, no timestamps)."""
        return cls(keys, labels, tracked, comments) if keys else None

    def _usable(self) -> bool:
        """Join the texts (once); false where they cannot be read back in two columns (a space inside
        one, or a name that ``float`` reads)."""
        if self._keys is not None:
            skeleton, self._keys = "\n".join(self._keys).encode(), None
            odd = b" " in skeleton or b"\t" in skeleton or b"\r" in skeleton or _FLOAT_NAME.search(skeleton)
            if not odd:
                self._skeleton = skeleton
                self._widths = list(map(int.__add__, map(len, skeleton.split(b"\n")), repeat(1)))
        return bool(self._skeleton)

    def read(self, body: bytes) -> WarmRead | None:
        """``body``'s values if its series are the remembered ones in the same order, else ``None``."""
        if not self._usable():
            return None
        if b"\r" in body or b"\t" in body:
            return None
        comments = comment_lines(body)
        if comments != self._comments:
            return None
        if comments:
            body = _COMMENT_RE.sub(b"", body)
        values: list[float] = []
        pos, at, size, skeleton = 0, 0, len(body), self._skeleton
        while pos < size:
            end = body.find(b"\n", pos + _PIECE)
            end = size if end < 0 else end + 1
            lines = body[pos:end].split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            tokens = b" ".join(lines).split(b" ")
            if len(tokens) != 2 * len(lines):
                return None  # a timestamp, or a space inside a label value
            texts, numbers = tokens[0::2], tokens[1::2]
            # each line is exactly its text, a space and its value: the first line that is not (no
            # value, or a space more) would be longer or shorter than the text and value paired with it
            widths = self._widths[len(values):len(values) + len(lines)]
            if list(map(operator.sub, map(len, lines), map(len, numbers))) != widths:
                return None
            keys = b"\n".join(texts)
            stop = at + len(keys)
            if skeleton[at:stop] != keys or (stop < len(skeleton) and skeleton[stop] != 10):
                return None
            at = stop + 1
            got = _numbers(numbers)
            if got is None:
                return None
            values += got
            pos = end
            check_deadline()  # a scrape steps aside here while a rule round runs
        if len(values) != len(self._widths):
            return None
        return WarmRead(list(self._labels), values, self._tracked,
                        b"".join(comments).decode("utf-8", errors="replace"))
