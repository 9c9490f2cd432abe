"""Label matchers (``=``, ``!=``, ``=~``, ``!~``) as Prometheus and Alertmanager define them.

Regular expressions are fully anchored (``=~"5.."`` matches ``503``, not
``1503``), and a missing label matches as the empty string, so
``{team=""}`` selects series without a ``team`` label.

Regular expressions use RE2's syntax and engine (google-re2), as Prometheus
uses Go's: matching is linear in the length of the value, so no expression a
client sends can backtrack for minutes, and what RE2 cannot do in linear time
(look-around, back-references) is refused, as Prometheus refuses it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MatchOp", "Matcher", "matches_all", "parse_matcher", "parse_matchers"]


class MatchOp(enum.StrEnum):
    """The four matcher operators."""

    EQ = "="
    NE = "!="
    RE = "=~"
    NRE = "!~"


@dataclass(frozen=True, slots=True)
class Matcher:
    """One label matcher.

    >>> m = Matcher("code", MatchOp.RE, "5..")
    >>> m.matches("503"), m.matches("1503")
    (True, False)
    """

    name: str
    op: MatchOp
    value: str
    _regex: Any = field(default=None, compare=False, repr=False)  # a compiled re2 pattern

    def __post_init__(self) -> None:
        if self.op in (MatchOp.RE, MatchOp.NRE):
            object.__setattr__(self, "_regex", compile_anchored(self.value, f"{self.name}{self.op}"))

    def matches(self, value: str) -> bool:
        """Whether a label value (``""`` when absent) satisfies the matcher."""
        if self.op is MatchOp.EQ:
            return value == self.value
        if self.op is MatchOp.NE:
            return value != self.value
        assert self._regex is not None
        hit = self._regex.match(value) is not None
        return hit if self.op is MatchOp.RE else not hit

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """Apply to a label set (a missing label is the empty string)."""
        return self.matches(labels.get(self.name, ""))

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
        return f'{self.name}{self.op.value}"{escaped}"'


def compile_anchored(pattern: str, where: str = "") -> Any:
    """``pattern`` compiled with RE2, fully anchored, ``.`` matching newlines; ``ValueError`` if invalid.

    >>> compile_anchored("5..").match("503") is not None
    True
    >>> compile_anchored("5..").match("1503") is None
    True
    """
    import re2  # with the first regex matcher: ``import inferwatch.sdk`` (via model) needs no RE2

    opts = re2.Options()
    opts.log_errors = False  # RE2 prints refused patterns on stderr otherwise
    opts.dot_nl = True
    try:
        return re2.compile(f"^(?:{pattern})$", opts)
    except re2.error as exc:
        raise ValueError(f"invalid regex in matcher {where}{pattern!r}: {_re2_reason(exc)}") from None


def _re2_reason(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else ""
    text = (arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg)) or type(exc).__name__
    if "(?!" in text or "(?=" in text or "(?<" in text or "invalid perl operator" in text:
        return f"{text} (RE2 syntax, as in Prometheus: no look-around or back-references)"
    return text


def matches_all(matchers: Iterable[Matcher], labels: Mapping[str, str]) -> bool:
    """Whether every matcher holds for ``labels``."""
    return all(m.matches_labels(labels) for m in matchers)


_MATCHER_RE = re.compile(
    r"""\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,}\s"']*)\s*"""
)


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        body = raw[1:-1]
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)
    return raw


def parse_matcher(text: str) -> Matcher:
    """Parse ``name="value"``, ``name=~"re"``, ``name!=value`` (Alertmanager allows unquoted).

    >>> str(parse_matcher('severity =~ "critical|major"'))
    'severity=~"critical|major"'
    """
    m = _MATCHER_RE.fullmatch(text)
    if not m:
        raise ValueError(f"not a matcher: {text!r} (expected e.g. severity=\"critical\")")
    return Matcher(m.group(1), MatchOp(m.group(2)), _unquote(m.group(3)))


def parse_matchers(text: str | Sequence[str]) -> tuple[Matcher, ...]:
    """Parse ``{a="1", b=~"x.*"}``, ``a="1",b="2"`` or a list of single matchers."""
    if not isinstance(text, str):
        return tuple(parse_matcher(t) for t in text)
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    out: list[Matcher] = []
    pos = 0
    while pos < len(body):
        m = _MATCHER_RE.match(body, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a list of matchers: {text!r} (at offset {pos})")
        out.append(Matcher(m.group(1), MatchOp(m.group(2)), _unquote(m.group(3))))
        pos = m.end()
        if pos < len(body):
            if body[pos] != ",":
                raise ValueError(f"not a list of matchers: {text!r} (expected ',' at offset {pos})")
            pos += 1
    return tuple(out)
