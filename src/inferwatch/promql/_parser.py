"""The PromQL 2.42 parser: precedence climbing over the tokens, types checked as nodes are built.

Left-associative chains (``a + b + c + …``) are parsed in a loop, so 5,000
terms need no deep recursion; genuinely nested expressions (parentheses,
calls, ``^`` chains) are limited to :data:`MAX_DEPTH` levels and refused
beyond with a parse error rather than a ``RecursionError``.
"""

from __future__ import annotations

import math

from inferwatch.model import is_valid_label_name, parse_duration
from inferwatch.promql._ast import (
    COMPARISONS,
    PRECEDENCE,
    SET_OPS,
    Aggregate,
    AtMod,
    Binary,
    Call,
    Expr,
    Matching,
    Number,
    Paren,
    Selector,
    String,
    Subquery,
    Unary,
    ValueType,
)
from inferwatch.promql._lexer import Token
from inferwatch.promql._selector_parse import SelectorParsing
from inferwatch.promql._signatures import AGGREGATIONS, DOCUMENTED, FUNCTIONS

__all__ = ["MAX_DEPTH", "parse_promql"]

MAX_DEPTH = 120
S, V, M, STR = ValueType.SCALAR, ValueType.VECTOR, ValueType.MATRIX, ValueType.STRING
_WORD_OPS = frozenset({"and", "or", "unless", "atan2"})
Typed = tuple[Expr, ValueType]


class _Parser(SelectorParsing):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.arg_toks: list[Token] = []

    # -- expressions -------------------------------------------------------------------
    def expr(self, min_prec: int = 1) -> Typed:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nested more than {MAX_DEPTH} levels deep")
        start = self.peek()
        lhs = self.unary()
        while True:
            tok = self.peek()
            op = tok.text.lower() if tok.kind == "ident" else tok.text
            if tok.kind not in ("op", "ident") or op not in PRECEDENCE or PRECEDENCE[op] < min_prec:
                break
            if tok.kind == "ident" and op not in _WORD_OPS:
                break
            self.next()
            bool_, matching = self.modifiers(op, tok)
            prec = PRECEDENCE[op]
            rhs = self.expr(prec if op == "^" else prec + 1)
            lhs = self.binary(op, lhs, rhs, bool_, matching, tok, start)
        self.depth -= 1
        return lhs

    def modifiers(self, op: str, tok: Token) -> tuple[bool, Matching | None]:
        bool_ = False
        if self.is_word("bool"):
            if op not in COMPARISONS:
                raise self.error("bool modifier can only be used on comparison operators")
            self.next()
            bool_ = True
        if not self.is_word("on", "ignoring", "group_left", "group_right"):
            return bool_, Matching(card="many-to-many") if op in SET_OPS else None
        on, labels = False, tuple[str, ...]()
        if self.is_word("on", "ignoring"):
            on = self.next().text.lower() == "on"
            labels = self.label_list("grouping")
        card = "many-to-many" if op in SET_OPS else "one-to-one"
        include: tuple[str, ...] = ()
        if self.is_word("group_left", "group_right"):
            g = self.next()
            if op in SET_OPS:
                raise self.error(f'no grouping allowed for "{op}" operation', g)
            card = "many-to-one" if g.text.lower() == "group_left" else "one-to-many"
            if self.is_op("("):
                include = self.label_list("grouping")
            for name in include:
                if on and name in labels:
                    raise self.error(f'label "{name}" must not occur in ON and GROUP clause at once', tok)
        return bool_, Matching(tuple(labels), on, card, tuple(include))

    def binary(self, op: str, lhs: Typed, rhs: Typed, bool_: bool, matching: Matching | None,
               tok: Token, start: Token) -> Typed:
        """Build ``lhs op rhs``; type errors point at the expression's start, operator errors at ``op``."""
        (le, lt), (re_, rt) = lhs, rhs
        for t in (lt, rt):
            if t not in (S, V):
                raise self.error("binary expression must contain only scalar and instant vector types", start)
        if op in SET_OPS and (lt is S or rt is S):
            raise self.error(f'set operator "{op}" not allowed in binary scalar expression', start)
        if op in COMPARISONS and not bool_ and lt is S and rt is S:
            raise self.error("comparisons between scalars must use BOOL modifier", tok)
        if (lt is S or rt is S) and matching is not None and (
                matching.labels or matching.on or matching.card in ("many-to-one", "one-to-many")):
            raise self.error("vector matching only allowed between instant vectors", start)
        real = (matching or Matching()) if lt is V and rt is V else None
        out = S if lt is S and rt is S else V
        return Binary(op, le, re_, bool_, real), out

    def unary(self) -> Typed:
        tok = self.peek()
        if tok.kind == "op" and tok.text in "+-" and tok.text:
            self.next()
            inner, t = self.expr(PRECEDENCE["^"])
            if t not in (S, V):
                raise self.error("unary expression only allowed on expressions of type scalar or "
                                 "instant vector", tok)
            if tok.text == "+":
                return inner, t
            if isinstance(inner, Number):
                return Number(-inner.value), t
            return Unary("-", inner), t
        return self.postfix()

    def postfix(self) -> Typed:
        e, t = self.primary()
        while True:
            if self.is_op("["):
                e, t = self.bracket(e, t)
            elif self.is_word("offset"):
                e = self.offset(e)
            elif self.is_op("@"):
                e = self.at(e)
            else:
                return e, t

    def bracket(self, e: Expr, t: ValueType) -> Typed:
        open_tok = self.next()
        rng = self.duration("range")
        if self.is_op(":"):
            self.next()
            step = 0.0
            if not self.is_op("]"):
                step = self.duration("subquery")
            self.expect("]", "subquery selector")
            if t is not V:
                raise self.error(f"subquery is only allowed on instant vector, got {_doc(t)} instead",
                                 open_tok)
            return Subquery(e, rng, step), M
        self.expect("]", "matrix selector")
        if not isinstance(e, Selector) or e.range is not None:
            raise self.error("ranges only allowed for vector selectors", open_tok)
        if e.offset or e.at is not None:
            raise self.error("no offset or @ modifiers allowed before range", open_tok)
        if rng == 0:
            raise self.error("range must be positive", open_tok)
        return Selector(e.matchers, rng, e.offset, e.at), M

    def duration(self, context: str) -> float:
        tok = self.peek()
        if tok.kind != "dur":
            raise self.unexpected(context, "duration")
        self.next()
        return parse_duration(tok.text)

    def offset(self, e: Expr) -> Expr:
        tok = self.next()
        sign = 1.0
        if self.is_op("-") or self.is_op("+"):
            sign = -1.0 if self.next().text == "-" else 1.0
        d = sign * self.duration("offset")
        if not isinstance(e, Selector | Subquery):
            raise self.error("offset modifier must be preceded by an instant vector selector or range vector "
                             "selector or a subquery", tok)
        if e.offset:
            raise self.error("offset may not be set multiple times", tok)
        if isinstance(e, Selector):
            return Selector(e.matchers, e.range, d, e.at)
        return Subquery(e.expr, e.range, e.step, d, e.at)

    def at(self, e: Expr) -> Expr:
        tok = self.next()
        if self.is_word("start", "end") and self.peek(1).text == "(":
            name = self.next().text.lower()
            self.expect("(", "@ modifier")
            self.expect(")", "@ modifier")
            mod = AtMod(None, name)
        else:
            sign = 1.0
            if self.is_op("-") or self.is_op("+"):
                sign = -1.0 if self.next().text == "-" else 1.0
            num = self.peek()
            if num.kind != "num" and not (num.kind == "ident" and num.text.lower() in ("inf", "nan")):
                raise self.unexpected("@", "number or start() or end()")
            self.next()
            v = sign * _number(num.text)
            if not math.isfinite(v) or abs(v) > 9.2e15:
                raise self.error("timestamp out of bounds for @ modifier", tok)
            mod = AtMod(round(v * 1000) / 1000)
        if not isinstance(e, Selector | Subquery):
            raise self.error("@ modifier must be preceded by an instant vector selector or range vector "
                             "selector or a subquery", tok)
        if e.at is not None:
            raise self.error("@ <timestamp> may not be set multiple times", tok)
        if isinstance(e, Selector):
            return Selector(e.matchers, e.range, e.offset, mod)
        return Subquery(e.expr, e.range, e.step, e.offset, mod)

    def primary(self) -> Typed:
        tok = self.peek()
        if tok.kind == "num":
            self.next()
            return Number(_number(tok.text)), S
        if tok.kind == "str":
            self.next()
            return String(self.string(tok)), STR
        if tok.kind == "op" and tok.text == "(":
            self.next()
            inner, t = self.expr()
            self.expect(")", "paren expression")
            return Paren(inner), t
        if tok.kind == "op" and tok.text == "{":
            return self.selector("", tok), V
        if tok.kind != "ident":
            raise self.unexpected()
        low = tok.text.lower()
        if low in ("inf", "nan"):
            self.next()
            return Number(math.inf if low == "inf" else math.nan), S
        after = self.peek(1).text.lower()
        if low in AGGREGATIONS and after in ("(", "by", "without"):
            self.next()
            return self.aggregate(low), V
        if self.peek(1).kind == "op" and self.peek(1).text == "(":
            return self.call(tok)
        self.next()
        return self.selector(tok.text, tok), V

    def aggregate(self, op: str) -> Expr:
        grouping: tuple[str, ...] = ()
        without = False
        if self.is_word("by", "without"):
            without = self.next().text.lower() == "without"
            grouping = self.label_list("grouping")
        open_tok = self.expect("(", "aggregation")
        args = self.args("aggregation")
        toks = self.arg_toks
        if self.is_word("by", "without"):
            without = self.next().text.lower() == "without"
            grouping = self.label_list("grouping")
        want = 2 if AGGREGATIONS[op] is not None else 1
        if len(args) != want:
            raise self.error(f"wrong number of arguments for aggregate expression provided, expected "
                             f"{want}, got {len(args)}", open_tok)
        param = None
        if want == 2:
            param, pt = args[0]
            if pt is not AGGREGATIONS[op]:
                raise self.error(f"expected type {_doc(AGGREGATIONS[op])} in aggregation parameter, got "
                                 f"{_doc(pt)}", toks[0])
        inner, it = args[-1]
        if it is not V:
            raise self.error(f"expected type instant vector in aggregation expression, got {_doc(it)}",
                             toks[-1])
        if op == "count_values" and isinstance(param, String):
            _check_label_name(self, param.value, open_tok)
        return Aggregate(op, inner, grouping, without, param)

    def args(self, context: str) -> list[Typed]:
        out: list[Typed] = []
        toks: list[Token] = []
        while not self.is_op(")"):
            toks.append(self.peek())
            out.append(self.expr())
            if not self.is_op(")"):
                self.expect(",", context)
        self.next()
        self.arg_toks = toks  # where each argument starts: type errors point there
        return out

    def call(self, tok: Token) -> Typed:
        sig = FUNCTIONS.get(tok.text)
        if sig is None:
            raise self.error(f'unknown function with name "{tok.text}"', tok)
        self.next()
        self.next()
        args = self.args("function call")
        n, got = len(sig.args), len(args)
        if sig.variadic == 0 and n != got:
            raise self.error(f'expected {n} argument(s) in call to "{tok.text}", got {got}', tok)
        if sig.variadic != 0 and got < n - 1:
            raise self.error(f'expected at least {n - 1} argument(s) in call to "{tok.text}", got {got}', tok)
        if sig.variadic > 0 and got > n - 1 + sig.variadic:
            raise self.error(f'expected at most {n - 1 + sig.variadic} argument(s) in call to "{tok.text}", '
                             f"got {got}", tok)
        for i, (_, t) in enumerate(args):
            want = sig.args[min(i, n - 1)]
            if t is not want:
                raise self.error(f'expected type {_doc(want)} in call to function "{tok.text}", '
                                 f"got {_doc(t)}", self.arg_toks[i])
        return Call(tok.text, tuple(a for a, _ in args)), sig.returns


def _check_label_name(p: SelectorParsing, name: str, tok: Token) -> None:
    if not is_valid_label_name(name):
        raise p.error(f'invalid label name "{name}"', tok)


def _doc(t: ValueType | None) -> str:
    return DOCUMENTED[t] if t is not None else "none"


def _number(text: str) -> float:
    low = text.lower()
    if low == "inf":
        return math.inf
    if low == "nan":
        return math.nan
    if low.startswith("0x"):
        return float(int(low, 16))
    return float(text)


def parse_promql(text: str) -> Expr:
    """Parse a PromQL expression; raise :class:`PromQLError` with Prometheus's message and position.

    >>> str(parse_promql('sum by (job) (rate(http_requests_total{code=~"5.."}[5m]))'))
    'sum by (job) (rate(http_requests_total{code=~"5.."}[5m]))'
    """
    p = _Parser(text)
    if p.peek().kind == "eof":
        raise p.error("no expression found in input")
    e, _ = p.expr()
    if p.peek().kind != "eof":
        raise p.unexpected()
    return e


def parse_typed(text: str) -> Typed:
    """Parse, returning the expression and its type."""
    p = _Parser(text)
    if p.peek().kind == "eof":
        raise p.error("no expression found in input")
    out = p.expr()
    if p.peek().kind != "eof":
        raise p.unexpected()
    return out
