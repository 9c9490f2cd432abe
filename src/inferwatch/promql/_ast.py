"""PromQL's syntax tree (Prometheus 2.42, promql/parser/ast.go) and its printer.

``str(expr)`` prints PromQL that Prometheus parses to the same tree; nodes
are frozen dataclasses, so two parses of the same text compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.model import Matcher, MatchOp, format_duration
from inferwatch.promql._signatures import FUNCTIONS, ValueType

__all__ = [
    "Aggregate", "AtMod", "Binary", "Call", "Expr", "Matching", "Number", "Paren", "Selector",
    "String", "Subquery", "Unary", "ValueType", "format_number", "value_type",
]


def format_number(v: float) -> str:
    """A number literal as PromQL text (``NaN``, ``+Inf``, shortest digits)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)).removesuffix(".0") if float(v).is_integer() and abs(v) < 1e16 else repr(float(v))


@dataclass(frozen=True, slots=True)
class AtMod:
    """The ``@`` modifier: a Unix time in seconds, or ``start()``/``end()``."""

    time: float | None = None
    preprocessor: str = ""  # "start" | "end" | ""

    def __str__(self) -> str:
        if self.preprocessor:
            return f" @ {self.preprocessor}()"
        assert self.time is not None
        return f" @ {self.time:.3f}"


@dataclass(frozen=True, slots=True)
class Number:
    """A number literal (a scalar)."""

    value: float

    def __str__(self) -> str:
        return format_number(self.value)


@dataclass(frozen=True, slots=True)
class String:
    """A string literal."""

    value: str

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'


def _mods(offset: float, at: AtMod | None) -> str:
    out = ""
    if at is not None:
        out += str(at)
    if offset > 0:
        out += f" offset {format_duration(offset)}"
    elif offset < 0:
        out += f" offset -{format_duration(-offset)}"
    return out


@dataclass(frozen=True, slots=True)
class Selector:
    """``name{matchers}``, with ``range`` (seconds) a range selector ``name{…}[5m]``."""

    matchers: tuple[Matcher, ...]
    range: float | None = None
    offset: float = 0.0
    at: AtMod | None = None

    @property
    def name(self) -> str:
        """The metric name given by an ``=`` matcher on ``__name__`` (or ``""``)."""
        return next((m.value for m in self.matchers if m.name == "__name__" and m.op is MatchOp.EQ), "")

    def __str__(self) -> str:
        name = self.name
        rest = [str(m) for m in self.matchers if not (m.name == "__name__" and m.value == name
                                                       and m.op is MatchOp.EQ)]
        body = f"{name}{{{','.join(rest)}}}" if rest or not name else name
        if self.range is not None:
            body += f"[{format_duration(self.range)}]"
        return body + _mods(self.offset, self.at)


@dataclass(frozen=True, slots=True)
class Subquery:
    """``expr[range:step]`` (``step`` 0: the default evaluation interval)."""

    expr: Expr
    range: float
    step: float = 0.0
    offset: float = 0.0
    at: AtMod | None = None

    def __str__(self) -> str:
        step = format_duration(self.step) if self.step else ""
        return f"{_wrap_tight(self.expr)}[{format_duration(self.range)}:{step}]{_mods(self.offset, self.at)}"


@dataclass(frozen=True, slots=True)
class Call:
    """A function call."""

    func: str
    args: tuple[Expr, ...]

    def __str__(self) -> str:
        return f"{self.func}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``op by (labels) ([param,] expr)`` or ``op without (labels) (…)``."""

    op: str
    expr: Expr
    grouping: tuple[str, ...] = ()
    without: bool = False
    param: Expr | None = None

    def __str__(self) -> str:
        mod = f" {'without' if self.without else 'by'} ({', '.join(self.grouping)})"
        if not self.grouping and not self.without:
            mod = ""
        inner = f"{self.param}, {self.expr}" if self.param is not None else str(self.expr)
        return f"{self.op}{mod} ({inner})" if mod else f"{self.op}({inner})"


@dataclass(frozen=True, slots=True)
class Matching:
    """Vector matching of a binary operation: ``on``/``ignoring`` and ``group_left``/``group_right``."""

    labels: tuple[str, ...] = ()
    on: bool = False
    card: str = "one-to-one"  # one-to-one | many-to-one | one-to-many | many-to-many
    include: tuple[str, ...] = ()

    def __str__(self) -> str:
        out = ""
        if self.on or self.labels:
            out = f" {'on' if self.on else 'ignoring'} ({', '.join(self.labels)})"
        if self.card == "many-to-one":
            out += f" group_left ({', '.join(self.include)})"
        elif self.card == "one-to-many":
            out += f" group_right ({', '.join(self.include)})"
        return out


PRECEDENCE = {"or": 1, "and": 2, "unless": 2, "==": 3, "!=": 3, ">=": 3, "<=": 3, ">": 3, "<": 3,
              "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "atan2": 5, "^": 6}
COMPARISONS = frozenset({"==", "!=", ">=", "<=", ">", "<"})
SET_OPS = frozenset({"and", "or", "unless"})


@dataclass(frozen=True, slots=True)
class Binary:
    """``lhs op rhs``; ``bool_`` turns a comparison filter into 0/1."""

    op: str
    lhs: Expr
    rhs: Expr
    bool_: bool = False
    matching: Matching | None = None

    def __str__(self) -> str:
        prec = PRECEDENCE[self.op]
        right_assoc = self.op == "^"
        left = _wrap(self.lhs, prec, tie=right_assoc)
        right = _wrap(self.rhs, prec, tie=not right_assoc)
        mods = (" bool" if self.bool_ else "") + (str(self.matching) if self.matching else "")
        return f"{left} {self.op}{mods} {right}"


def _wrap(e: Expr, prec: int, *, tie: bool) -> str:
    if isinstance(e, Binary) and (PRECEDENCE[e.op] < prec or (tie and PRECEDENCE[e.op] == prec)):
        return f"({e})"
    if isinstance(e, Unary) and prec > PRECEDENCE["*"]:
        return f"({e})"
    return str(e)


def _wrap_tight(e: Expr) -> str:
    if isinstance(e, Binary | Unary):
        return f"({e})"
    return str(e)


@dataclass(frozen=True, slots=True)
class Unary:
    """``-expr`` (``+expr`` parses to ``expr``)."""

    op: str
    expr: Expr

    def __str__(self) -> str:
        inner = self.expr
        if isinstance(inner, Binary) and PRECEDENCE[inner.op] <= PRECEDENCE["*"]:
            return f"{self.op}({inner})"
        return f"{self.op}{inner}"


@dataclass(frozen=True, slots=True)
class Paren:
    """``(expr)`` as written (kept so ``format_query`` prints it back)."""

    expr: Expr

    def __str__(self) -> str:
        return f"({self.expr})"


Expr = Number | String | Selector | Subquery | Call | Aggregate | Binary | Unary | Paren


def value_type(e: Expr) -> ValueType:
    """The type an expression evaluates to (checked at parse time)."""
    if isinstance(e, Number):
        return ValueType.SCALAR
    if isinstance(e, String):
        return ValueType.STRING
    if isinstance(e, Selector):
        return ValueType.VECTOR if e.range is None else ValueType.MATRIX
    if isinstance(e, Subquery):
        return ValueType.MATRIX
    if isinstance(e, Call):
        return FUNCTIONS[e.func].returns
    if isinstance(e, Aggregate):
        return ValueType.VECTOR
    if isinstance(e, Paren | Unary):
        return value_type(e.expr)
    rights: list[Expr] = []
    node: Expr = e
    while isinstance(node, Binary):
        rights.append(node.rhs)
        node = node.lhs
    types = [value_type(node), *(value_type(r) for r in rights)]
    return ValueType.SCALAR if all(t is ValueType.SCALAR for t in types) else ValueType.VECTOR
