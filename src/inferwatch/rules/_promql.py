"""The PromQL subset inferwatch evaluates natively: its syntax tree, parser and printer.

Supported: number literals, vector selectors with matchers, range selectors,
``rate``/``increase``/``*_over_time``, ``histogram_quantile``, the
aggregations ``sum avg min max count`` with ``by``/``without``, arithmetic
``+ - * /`` and the comparisons ``== != > < >= <=`` (as filters, or with
``bool``) between vectors (one-to-one on all labels but ``__name__``) and
scalars, and the set operator ``or`` between vectors (the left side, plus the
right side's series whose labels but ``__name__`` match none on the left).
Anything else is refused at load time with the offending text.
``str(expr)`` prints valid PromQL that Prometheus parses to the same tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inferwatch.model import Matcher, MatchOp, format_duration, parse_duration

__all__ = [
    "AGGREGATIONS",
    "RANGE_FUNCTIONS",
    "Aggregate",
    "Binary",
    "Call",
    "Expr",
    "Number",
    "PromQLError",
    "Selector",
    "parse_promql",
]

AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "count"})
RANGE_FUNCTIONS = frozenset({"rate", "increase", "avg_over_time", "min_over_time", "max_over_time"})
_MATCHING = ("on", "ignoring", "group_left", "group_right")
_COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")
# Prometheus's precedence: or < comparisons < additive < multiplicative.
_PRECEDENCE = {"or": 0, **dict.fromkeys(_COMPARISONS, 1), "+": 2, "-": 2, "*": 3, "/": 3}


class PromQLError(ValueError):
    """An expression outside the supported subset, or malformed."""


def _num(v: float) -> str:
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)).removesuffix(".0") if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True, slots=True)
class Number:
    """A number literal (a scalar)."""

    value: float

    def __str__(self) -> str:
        return _num(self.value)


@dataclass(frozen=True, slots=True)
class Selector:
    """``name{matchers}`` or, with ``range``, ``name{matchers}[range]`` (seconds)."""

    matchers: tuple[Matcher, ...]
    range: float | None = None

    def __str__(self) -> str:
        name = next((m.value for m in self.matchers if m.name == "__name__" and m.op is MatchOp.EQ), "")
        rest = [str(m) for m in self.matchers if not (m.name == "__name__" and m.value == name)]
        body = f"{name}{{{','.join(rest)}}}" if rest or not name else name
        return body + (f"[{format_duration(self.range)}]" if self.range is not None else "")


@dataclass(frozen=True, slots=True)
class Call:
    """A function call."""

    func: str
    args: tuple[Expr, ...]

    def __str__(self) -> str:
        return f"{self.func}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``op by (labels) (expr)`` or ``op without (labels) (expr)``."""

    op: str
    expr: Expr
    grouping: tuple[str, ...] = ()
    without: bool = False

    def __str__(self) -> str:
        mod = f" {'without' if self.without else 'by'} ({', '.join(self.grouping)})"
        if not self.grouping and not self.without:
            mod = ""
        return f"{self.op}{mod} ({self.expr})"


@dataclass(frozen=True, slots=True)
class Binary:
    """``lhs op rhs``; ``bool`` turns a comparison filter into 0/1."""

    op: str
    lhs: Expr
    rhs: Expr
    bool_: bool = False

    def __str__(self) -> str:
        prec = _PRECEDENCE[self.op]
        left = _wrap(self.lhs, prec, right=False)
        right = _wrap(self.rhs, prec, right=True)
        return f"{left} {self.op}{' bool' if self.bool_ else ''} {right}"


def _wrap(e: Expr, prec: int, *, right: bool) -> str:
    if isinstance(e, Binary) and (_PRECEDENCE[e.op] < prec or (right and _PRECEDENCE[e.op] == prec)):
        return f"({e})"
    return str(e)


Expr = Number | Selector | Call | Aggregate | Binary

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0x[0-9a-fA-F]+)
   |(?P<dur>\[[^\]]*\])
   |(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
   |(?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
   |(?P<op>=~|!~|==|!=|>=|<=|[-+*/(){},=<>^%])
    )""",
    re.VERBOSE,
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise self.error(f"unexpected character {text[pos]!r}", pos)
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def error(self, msg: str, pos: int | None = None) -> PromQLError:
        if pos is None:
            pos = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        return PromQLError(f"{msg} at offset {pos} in {self.text!r}")

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i][:2] if self.i < len(self.toks) else ("eof", "")

    def take(self, value: str | None = None, kind: str | None = None) -> str:
        k, v = self.peek()
        if (value is not None and v != value) or (kind is not None and k != kind) or k == "eof":
            want = repr(value) if value is not None else kind
            raise self.error(f"expected {want}, found {v or 'end of input'!r}")
        self.i += 1
        return v

    def expr(self, min_prec: int = 0) -> Expr:
        lhs = self.unary()
        while True:
            k, op = self.peek()
            if (k, op) == ("ident", "or"):
                k = "op"
            if k != "op" or op not in _PRECEDENCE or _PRECEDENCE[op] < min_prec:
                return lhs
            self.i += 1
            is_bool = False
            if self.peek() == ("ident", "bool"):
                if op not in _COMPARISONS:
                    raise self.error("bool modifier on a non-comparison")
                self.i += 1
                is_bool = True
            if self.peek()[0] == "ident" and self.peek()[1] in _MATCHING:
                raise self.error(f"vector matching modifier {self.peek()[1]!r} is not supported")
            rhs = self.expr(_PRECEDENCE[op] + 1)
            lhs = Binary(op, lhs, rhs, is_bool)

    def unary(self) -> Expr:
        if self.peek() in (("op", "-"), ("op", "+")):
            sign = self.take()
            inner = self.unary()
            if isinstance(inner, Number):
                return Number(-inner.value if sign == "-" else inner.value)
            return Binary("*", Number(-1.0 if sign == "-" else 1.0), inner) if sign == "-" else inner
        return self.primary()

    def primary(self) -> Expr:
        k, v = self.peek()
        if k == "num":
            self.i += 1
            return Number(float(int(v, 16)) if v.startswith("0x") else float(v))
        if (k, v) == ("op", "("):
            self.i += 1
            e = self.expr()
            self.take(")")
            return e
        if (k, v) == ("op", "{"):
            return self.selector("")
        if k != "ident":
            raise self.error(f"unexpected {v or 'end of input'!r}")
        self.i += 1
        if v.lower() in ("inf", "nan"):
            return Number(float(v))
        if v in AGGREGATIONS:
            return self.aggregate(v)
        if self.peek() == ("op", "("):
            return self.call(v)
        return self.selector(v)

    def selector(self, name: str) -> Expr:
        matchers: list[Matcher] = [Matcher("__name__", MatchOp.EQ, name)] if name else []
        if self.peek() == ("op", "{"):
            self.i += 1
            while self.peek() != ("op", "}"):
                label = self.take(kind="ident")
                op = self.take(kind="op")
                if op not in ("=", "!=", "=~", "!~"):
                    raise self.error(f"bad matcher operator {op!r}")
                raw = self.take(kind="str")
                value = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), raw[1:-1])
                try:
                    matchers.append(Matcher(label, MatchOp(op), value))
                except ValueError as exc:
                    raise self.error(str(exc)) from None
                if self.peek() == ("op", ","):
                    self.i += 1
            self.take("}")
        if not any(m.name == "__name__" for m in matchers):
            raise self.error("a selector needs a metric name")
        rng = None
        if self.peek()[0] == "dur":
            raw = self.take()[1:-1]
            try:
                rng = parse_duration(raw)
            except ValueError as exc:
                raise self.error(str(exc)) from None
            if rng <= 0:
                raise self.error("range must be positive")
        if self.peek()[0] == "ident" and self.peek()[1] == "offset":
            raise self.error("offset is not supported")
        return Selector(tuple(matchers), rng)

    def call(self, func: str) -> Expr:
        self.take("(")
        args: list[Expr] = []
        while self.peek() != ("op", ")"):
            args.append(self.expr())
            if self.peek() == ("op", ","):
                self.i += 1
        self.take(")")
        _check_call(self, func, args)
        return Call(func, tuple(args))

    def aggregate(self, op: str) -> Expr:
        grouping: tuple[str, ...] = ()
        without = False
        if self.peek()[1] in ("by", "without"):
            without = self.take() == "without"
            grouping = self.labels()
        self.take("(")
        inner = self.expr()
        self.take(")")
        if self.peek()[1] in ("by", "without"):
            without = self.take() == "without"
            grouping = self.labels()
        return Aggregate(op, inner, grouping, without)

    def labels(self) -> tuple[str, ...]:
        self.take("(")
        out: list[str] = []
        while self.peek() != ("op", ")"):
            out.append(self.take(kind="ident"))
            if self.peek() == ("op", ","):
                self.i += 1
        self.take(")")
        return tuple(out)


def _check_call(p: _Parser, func: str, args: list[Expr]) -> None:
    if func in RANGE_FUNCTIONS:
        if len(args) != 1 or not isinstance(args[0], Selector) or args[0].range is None:
            raise p.error(f"{func}() takes one range selector such as x[5m]")
    elif func == "histogram_quantile":
        if len(args) != 2 or not isinstance(args[0], Number):
            raise p.error("histogram_quantile() takes a number and an instant vector")
    else:
        raise p.error(f"function {func!r} is not supported")


def parse_promql(text: str) -> Expr:
    """Parse an expression of the supported subset; raise :class:`PromQLError` naming the spot."""
    p = _Parser(text)
    e = p.expr()
    if p.peek()[0] != "eof":
        raise p.error(f"unexpected {p.peek()[1]!r}")
    _check_types(p, e)
    return e


def _check_types(p: _Parser, e: Expr) -> None:
    if isinstance(e, Selector) and e.range is not None:
        raise p.error("a range selector needs a function such as rate()")
    if isinstance(e, Call):
        for a in e.args:
            if not (isinstance(a, Selector) and a.range is not None):
                _check_types(p, a)
    elif isinstance(e, Aggregate):
        _check_types(p, e.expr)
    elif isinstance(e, Binary):
        if e.op == "or" and (isinstance(e.lhs, Number) or isinstance(e.rhs, Number)):
            raise p.error("set operator 'or' is not allowed between a scalar and a vector")
        _check_types(p, e.lhs)
        _check_types(p, e.rhs)
