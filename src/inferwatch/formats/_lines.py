"""The sample lines of a text-format body: cut into pieces of whole lines, each filtered in C.

>>> sample_lines('# TYPE a gauge\\na 1\\n\\n  \\nb{x="#"} 2\\n')
['a 1', 'b{x="#"} 2']
"""

from __future__ import annotations

import operator
from itertools import filterfalse

__all__ = ["sample_lines"]

_PIECE = 1 << 19
"""Characters of a body split into lines at once (a whole 10 MB body took 0.1 s in one call)."""
_IS_COMMENT = operator.methodcaller("startswith", "#")


def sample_lines(text: str) -> list[str]:
    """The lines of ``text`` that are not empty, blank or comments (``#`` first), in order.

    Each kind is dropped by a C-level pass over a piece, and only where the piece holds one: a first
    scrape's 100,000 lines went through a Python comprehension a line before.
    """
    out: list[str] = []
    pos, n = 0, len(text)
    while pos < n:  # a piece of whole lines at a time: the interpreter lock is shared meanwhile
        end = text.find("\n", pos + _PIECE)
        end = n if end < 0 else end + 1
        piece = text[pos:end]
        lines = piece.splitlines()
        if "#" in piece:
            lines = list(filterfalse(_IS_COMMENT, lines))
        if "" in lines:
            lines = list(filter(None, lines))
        if any(map(str.isspace, lines)):
            lines = list(filterfalse(str.isspace, lines))
        out += lines
        pos = end
    return out
