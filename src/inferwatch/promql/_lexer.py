"""PromQL's tokens (Prometheus 2.42, promql/parser/lex.go): numbers, durations, strings, names, operators.

Errors are :class:`PromQLError` with Prometheus's ``line:col: parse error: …`` prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inferwatch._exceptions import InputError

__all__ = ["PromQLError", "Token", "tokenize", "unquote"]


class PromQLError(InputError, ValueError):
    """A malformed expression; the message carries Prometheus's position prefix."""

    def __init__(self, message: str, text: str = "", pos: int = 0) -> None:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{line}:{col}: parse error: {message}")
        self.message = message
        self.pos = pos


@dataclass(frozen=True, slots=True)
class Token:
    """A token: ``kind`` is num, dur, str, ident, op or eof; ``pos`` its byte offset."""

    kind: str
    text: str
    pos: int

    def describe(self) -> str:
        """How Prometheus names the token in an ``unexpected …`` message."""
        if self.kind == "eof":
            return "end of input"
        low = self.text.lower()
        if self.kind == "ident" and low in _KEYWORDS:
            return f"<{low}>"
        if self.kind == "ident" and low in _WORD_OPS:
            return f"<op:{low}>"
        names = {"num": "number", "dur": "duration", "str": "string", "ident": "identifier"}
        if self.kind in names:
            return f"{names[self.kind]} {self.text!r}".replace("'", '"')
        return f'"{self.text}"'


_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool"})
_WORD_OPS = frozenset({"and", "or", "unless", "atan2"})
_UNIT = r"(?:ms|[smhdwy])"
_TOKEN = re.compile(
    rf"""
    (?P<ws>[ \t\r\n]+|\#[^\n]*)
   |(?P<dur>\d+{_UNIT}(?:\d+{_UNIT})*(?![A-Za-z0-9_.]))
   |(?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
   |(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)
   |(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
   |(?P<op>=~|!~|==|!=|>=|<=|[-+*/%^(){{}}\[\],=<>:@])
    """,
    re.VERBOSE,
)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``eof`` token."""
    out: list[Token] = []
    pos = 0
    n = len(text)
    brackets = parens = 0
    while pos < n:
        if brackets and text[pos] == ":":  # inside [a:b] a colon separates, it starts no name
            out.append(Token("op", ":", pos))
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _bad_char(text, pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            if kind in ("num", "dur") and m.end() < n and (text[m.end()].isalnum() or text[m.end()] == "_"):
                raise PromQLError(f'bad number or duration syntax: "{text[pos:m.end() + 1]}"', text, pos)
            out.append(Token(kind, m.group(), pos))
            if kind == "op" and m.group() in "[]":
                brackets += 1 if m.group() == "[" else -1
            if kind == "op" and m.group() in "()":
                parens += 1 if m.group() == "(" else -1
                if parens < 0:
                    raise PromQLError("unexpected right parenthesis ')'", text, pos)
        pos = m.end()
    if parens > 0:
        raise PromQLError("unclosed left parenthesis", text, n)
    if brackets > 0:
        raise PromQLError("unclosed left bracket", text, n)
    out.append(Token("eof", "", n))
    return out


def _bad_char(text: str, pos: int) -> PromQLError:
    c = text[pos]
    if c in "\"'`":
        return PromQLError("unterminated quoted string", text, pos)
    if c == "!":
        return PromQLError(f'unexpected character after "!": {text[pos + 1:pos + 2]!r}'.replace("'", '"'),
                           text, pos)
    return PromQLError(f"unexpected character: {c!r}", text, pos)


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "'": "'", '"': '"'}
_ESC_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.DOTALL)


def unquote(raw: str) -> str:
    """The value of a quoted string token (Go's escapes; backticks are raw)."""
    if raw[0] == "`":
        return raw[1:-1]
    quote = raw[0]

    def sub(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "xuU":
            return chr(int(e[1:], 16))
        if e[0].isdigit():
            return chr(int(e, 8))
        if e in _ESCAPES and (e not in "'\"" or e == quote):
            return _ESCAPES[e]
        raise ValueError(f"unknown escape sequence \\{e}")

    return _ESC_RE.sub(sub, raw[1:-1])
