"""Series selectors as PromQL writes them: ``up``, ``up{job="api"}``, ``{__name__=~"x.*"}``."""

from __future__ import annotations

import re

from inferwatch._exceptions import InputError
from inferwatch.model import METRIC_NAME_LABEL, Matcher, MatchOp, parse_matchers

__all__ = ["parse_selector"]

_NAME_RE = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*")


def parse_selector(text: str) -> tuple[Matcher, ...]:
    """Parse a PromQL instant-vector selector into matchers (the name as ``__name__``).

    As in PromQL, a selector must have a metric name or a matcher that does
    not match the empty string.

    >>> [str(m) for m in parse_selector('up{job="api", code=~"5.."}')]
    ['__name__="up"', 'job="api"', 'code=~"5.."']
    """
    body = text.strip()
    matchers: list[Matcher] = []
    m = _NAME_RE.match(body)
    if m and (m.end() == len(body) or body[m.end()] == "{"):
        matchers.append(Matcher(METRIC_NAME_LABEL, MatchOp.EQ, m.group(1)))
        body = body[m.end():]
    if body:
        if not (body.startswith("{") and body.endswith("}")):
            raise InputError(f"not a series selector: {text!r} (expected e.g. up{{job=\"api\"}})")
        try:
            matchers.extend(parse_matchers(body))
        except ValueError as exc:
            raise InputError(f"bad selector {text!r}: {exc}") from None
    if not any(not mm.matches("") for mm in matchers):
        raise InputError(
            f"selector {text!r} must contain a metric name or a matcher that does not match the empty string"
        )
    return tuple(matchers)
