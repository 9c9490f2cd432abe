"""Text at the boundary: every string that comes in is UTF-8 text without lone surrogates or NULs.

JSON can carry a lone surrogate (``"\\ud800"``) that no UTF-8 encoder accepts,
so one stored would break every later read of it; a NUL cuts C strings short
in the tools that read what we store. ``loads_json`` parses a request body and
checks every key and value (``InputError`` naming where); ``readable`` mends
what an older version stored before this check existed, so reads never fail.

>>> loads_json(b'{"labels": {"a": "ok"}}')
{'labels': {'a': 'ok'}}
>>> loads_json(b'{"labels": {"a": "\\\\ud800"}}')
Traceback (most recent call last):
...
inferwatch._exceptions.InputError: body.labels.a: not valid text (a lone surrogate \\ud800 at character 0)
>>> readable(["\\ud800x"])
['\\ufffdx']
"""

from __future__ import annotations

import json
import re
from typing import Any

from inferwatch._exceptions import InputError

__all__ = ["check_text", "loads_json", "readable", "shown"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(value: str, where: str) -> str:
    """``value`` if it is UTF-8 text without a NUL (``InputError`` naming ``where`` otherwise)."""
    if value.isascii() and "\x00" not in value:
        return value
    for i, ch in enumerate(value):
        if ch == "\x00":
            raise InputError(f"{where}: not valid text (a NUL character at character {i})")
        if "\ud800" <= ch <= "\udfff":
            raise InputError(f"{where}: not valid text (a lone surrogate \\u{ord(ch):04x} at character {i})")
    return value


def _check(value: Any, where: str) -> None:
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, dict):
        for k, v in value.items():
            name = check_text(k, f"{where} (a key)")
            _check(v, f"{where}.{name}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check(v, f"{where}[{i}]")


def loads_json(raw: bytes | str, where: str = "body") -> Any:
    """The JSON document in ``raw``, every string in it checked (``InputError`` naming where)."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{where}: not JSON: {_short(exc)}") from None
    if not (isinstance(raw, bytes) and raw.isascii() and b"\\u" not in raw):
        _check(doc, where)  # ASCII JSON without escapes holds neither a NUL nor a surrogate: nothing to check
    return doc


def _short(exc: Exception) -> str:
    text = str(exc)
    if "integer string conversion" in text:  # Python's digit limit: no interpreter hint in our answers
        return "a number with more digits than any value it could be"
    return text[:200]


def shown(value: str, most: int = 40) -> str:
    """``value`` as an error message shows it: quoted, cut to ``most`` characters, saying how long it was.

    >>> shown("9" * 300)
    "'9999999999999999999999999999999999999999'… (300 characters)"
    """
    if len(value) <= most:
        return repr(value)
    return f"{value[:most]!r}… ({len(value)} characters)"


def readable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD (for data stored earlier)."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {readable(k): readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(readable(v) for v in value)
    return value
