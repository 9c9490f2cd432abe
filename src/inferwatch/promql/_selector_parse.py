"""Parsing selectors: ``name{label="value", ...}``, their matchers, strings and label lists."""

from __future__ import annotations

from inferwatch.model import Matcher, MatchOp
from inferwatch.promql._ast import Expr, Selector
from inferwatch.promql._cursor import TokenCursor
from inferwatch.promql._lexer import Token, unquote

__all__ = ["SelectorParsing"]


class SelectorParsing(TokenCursor):
    """The parser's selector half (the expression half, ``_parser._Parser``, builds on it)."""

    def string(self, tok: Token) -> str:
        try:
            return unquote(tok.text)
        except ValueError as exc:
            raise self.error(str(exc), tok) from None

    def selector(self, name: str, start: Token) -> Expr:
        matchers: list[Matcher] = [Matcher("__name__", MatchOp.EQ, name)] if name else []
        if self.is_op("{"):
            self.next()
            while not self.is_op("}"):
                matchers.append(self.matcher())
                if not self.is_op("}"):
                    self.expect(",", "label matching")
            self.next()
        named = [m for m in matchers if m.name == "__name__"]
        if name and len(named) > 1:
            raise self.error(f'metric name must not be set twice: "{name}" or "{named[1].value}"', start)
        if not any(not m.matches("") for m in matchers):
            raise self.error("vector selector must contain at least one non-empty matcher", start)
        return Selector(tuple(matchers))

    def matcher(self) -> Matcher:
        label = self.peek()
        if label.kind != "ident":
            raise self.unexpected("label matching", 'identifier or "}"')
        self.next()
        op = self.peek()
        if op.kind != "op" or op.text not in ("=", "!=", "=~", "!~"):
            raise self.unexpected("label matching", "label matching operator")
        self.next()
        val = self.peek()
        if val.kind != "str":
            raise self.unexpected("label matching", "string")
        self.next()
        try:
            return Matcher(label.text, MatchOp(op.text), self.string(val))
        except ValueError as exc:
            raise self.error(str(exc), val) from None

    def label_list(self, context: str) -> tuple[str, ...]:
        self.expect("(", context)
        out: list[str] = []
        while not self.is_op(")"):
            tok = self.peek()
            if tok.kind != "ident":
                raise self.unexpected(context, '"," or ")"' if out else 'label or ")"')
            out.append(self.next().text)
            if not self.is_op(")"):
                self.expect(",", context)
        self.next()
        return tuple(out)
