"""Common subexpressions of a set of expressions, evaluated once per round and shared.

A rule round evaluates many expressions at one time, and they repeat each other:
the default pack computes ``rate(inferwatch_requests_total[5m])`` in three rules
and the whole latency signal ``histogram_quantile(0.99, sum by (service, le) (…))``
in two. :func:`plan_shared` finds, once (when the rules are built), every
subexpression that occurs more than once over the set; a :class:`SharedResults`
made from the plan for one round keeps each such subexpression's value per
evaluation time, so the second rule reads the first one's result.

Two occurrences are one subexpression when they print the same and compare equal
as trees (``-0`` and ``0`` print apart; ``@`` times print to the millisecond).
A value is exactly what evaluating again would give within the round: the key is
(subexpression, step, the query's start and end for ``@ start()``/``end()``), and
a round's loads are shared already (one load cache per round). Vectors are stored
and handed out as copies, so no consumer can change what another reads. The store
is bounded (``limit`` vector elements: past it, values are no longer kept) and goes
with the round.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from inferwatch.model import Matcher
from inferwatch.promql._ast import Aggregate, Binary, Call, Expr, Paren, Subquery, Unary
from inferwatch.promql._data import Span, needed_spans
from inferwatch.promql._values import Matrix, Value

__all__ = ["SharedPlan", "SharedResults", "plan_shared"]

DEFAULT_LIMIT = 5_000_000  # vector elements kept in one round (~40 MB of list slots at most)
_KEPT = (Call, Aggregate, Binary)  # nodes worth keeping: what they compute is more than a look-up


class SharedPlan:
    """Which nodes of a set of expressions are one shared subexpression: ``id(node)`` → its class."""

    def __init__(self, nodes: dict[int, tuple[Expr, int]],
                 spans: dict[tuple[Matcher, ...], Span] | None = None) -> None:
        self._nodes = nodes  # holds the nodes too, so their ids stay theirs
        self._spans = spans or {}  # matchers -> the round's reads as one span, relative to its time

    def span(self, matchers: tuple[Matcher, ...], needed: Span, t: int) -> Span:
        """The span to read ``matchers`` over for an instant query at ``t`` that needs ``needed``: every
        rule's reads of them as one, so the round reads them once (what a window picks is the same)."""
        rel = self._spans.get(matchers)
        if rel is None:
            return needed
        return min(needed[0], t + rel[0]), max(needed[1], t + rel[1])

    def __len__(self) -> int:
        return len({c for _, c in self._nodes.values()})

    def results(self, limit: int = DEFAULT_LIMIT) -> SharedResults:
        """An empty store of values for one round."""
        return SharedResults(self, limit)

    def klass(self, e: Expr) -> int | None:
        """The shared subexpression ``e`` is an occurrence of (``None``: it occurs once)."""
        hit = self._nodes.get(id(e))
        return hit[1] if hit is not None and hit[0] is e else None


def _walk(e: Expr) -> Iterator[Expr]:
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Aggregate):
            stack.append(node.expr)
            if node.param is not None:
                stack.append(node.param)
        elif isinstance(node, Binary):
            stack += (node.lhs, node.rhs)
        elif isinstance(node, Paren | Unary | Subquery):
            stack.append(node.expr)


def _round_spans(exprs: list[Expr], lookback: int) -> dict[tuple[Matcher, ...], Span]:
    # Each selector's reads relative to the round's time, joined where they overlap or touch (a read
    # `[5m] offset 1w` beside `[5m]` stays two reads); reads pinned by `@` are left as they are.
    far = 10**12
    spans: dict[tuple[Matcher, ...], list[Span]] = {}
    pinned: set[tuple[Matcher, ...]] = set()
    for root in exprs:
        at0, at_far = needed_spans(root, 0, 0, lookback), needed_spans(root, far, far, lookback)
        for m, (lo, hi) in at0.items():
            if at_far.get(m) != (lo + far, hi + far):
                pinned.add(m)
            spans.setdefault(m, []).append((lo, hi))
    out: dict[tuple[Matcher, ...], Span] = {}
    for m, parts in spans.items():
        lo, hi = min(p[0] for p in parts), max(p[1] for p in parts)
        if m not in pinned and len(set(parts)) > 1 and hi - lo <= sum(b - a for a, b in set(parts)):
            out[m] = (lo, hi)
    return out


def plan_shared(exprs: Iterable[Expr], lookback: int = 300_000) -> SharedPlan:
    """The subexpressions that occur more than once over ``exprs`` (the nodes must outlive the plan's
    use: they are the rules' own trees), and the selectors' reads joined (``lookback`` in ms)."""
    exprs = list(exprs)
    seen: dict[tuple[str, Expr], list[Expr]] = {}
    for root in exprs:
        for node in _walk(root):
            if isinstance(node, _KEPT):
                seen.setdefault((str(node), node), []).append(node)
    nodes: dict[int, tuple[Expr, int]] = {}
    for klass, occurrences in enumerate(o for o in seen.values() if len(o) > 1):
        for node in occurrences:
            nodes[id(node)] = (node, klass)
    return SharedPlan(nodes, _round_spans(exprs, lookback))


class SharedResults:
    """One round's values of a plan's shared subexpressions, by (class, step, query start, end)."""

    def __init__(self, plan: SharedPlan, limit: int = DEFAULT_LIMIT) -> None:
        self.plan = plan
        self.limit = limit
        self.kept = 0  # vector elements held
        self.hits = 0
        self._values: dict[tuple[int, int, int, int], Value] = {}

    def key(self, e: Expr, ts: int, start: int, end: int) -> tuple[int, int, int, int] | None:
        """Where ``e``'s value at ``ts`` is kept, or ``None`` when ``e`` is not shared."""
        klass = self.plan.klass(e)
        return None if klass is None else (klass, ts, start, end)

    def get(self, key: tuple[int, int, int, int]) -> Value | None:
        """The kept value (a copy of a vector), or ``None``."""
        hit = self._values.get(key)
        if hit is None:
            return None
        self.hits += 1
        return list(hit) if isinstance(hit, list) else hit

    def put(self, key: tuple[int, int, int, int], value: Value) -> None:
        """Keep a copy of ``value`` (nothing past the limit; range values are not kept)."""
        if isinstance(value, Matrix):
            return
        size = len(value) if isinstance(value, list) else 1
        if self.kept + size > self.limit:
            return
        self.kept += size
        self._values[key] = list(value) if isinstance(value, list) else value
