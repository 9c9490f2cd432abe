"""A cursor over PromQL tokens: look ahead, consume, and errors at a token's position."""

from __future__ import annotations

from inferwatch.promql._lexer import PromQLError, Token, tokenize

__all__ = ["TokenCursor"]


class TokenCursor:
    """The tokens of ``text`` and a position in them (the parser's base)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> Token:
        """The token ``ahead`` places on (``eof`` past the end)."""
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def next(self) -> Token:
        """Consume and return the current token."""
        t = self.peek()
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def error(self, msg: str, tok: Token | None = None) -> PromQLError:
        """A parse error at ``tok`` (default: the current token)."""
        return PromQLError(msg, self.text, (tok or self.peek()).pos)

    def unexpected(self, context: str = "", expected: str = "") -> PromQLError:
        """Prometheus's ``unexpected <token> in <context>, expected <what>`` error."""
        tok = self.peek()
        msg = f"unexpected {tok.describe()}"
        if context:
            msg += f" in {context}"
        if expected:
            msg += f", expected {expected}"
        return self.error(msg, tok)

    def expect(self, text: str, context: str) -> Token:
        """Consume ``text`` or raise ``unexpected``."""
        if self.peek().text != text or self.peek().kind not in ("op", "ident"):
            raise self.unexpected(context, f'"{text}"')
        return self.next()

    def is_op(self, text: str) -> bool:
        """Whether the current token is the operator ``text``."""
        t = self.peek()
        return t.kind == "op" and t.text == text

    def is_word(self, *words: str) -> bool:
        """Whether the current token is one of the (case-insensitive) ``words``."""
        t = self.peek()
        return t.kind == "ident" and t.text.lower() in words
