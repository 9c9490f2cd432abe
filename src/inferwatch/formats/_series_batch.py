"""New series of a scrape, parsed as one batch: the series texts of the lines the cache does not know
(a target's first scrape: every line) turned into label sets with C-level passes over all of them.

Each text is split at its quotes. In the plain form — no whitespace outside values, no escape, no
empty value, no ``__`` label, no label given twice, none the target sets — the even pieces are the
metric name and the label names with their punctuation (``m{a=``, ``,b=``, ``}``): the text's *shape*,
shared by every series of a family, and the odd pieces are the values. Each shape is checked and
sorted once (where each label, the metric name and the target's pairs go in the sorted label set); its
series then take their values column by column, and ``zip`` lays each set out already sorted. A pair
seen twice (``job``, a route, a model) is kept once and shared by every label set that holds it. A
text not in the plain form is left to the line parser, which names a bad line.

>>> sets = plain_series(['up{a="1",z="2"}', 'up{a="1"} 7', 'x'], (("job", "j"),))
>>> [None if ls is None else str(ls) for ls in sets]
['up{a="1",job="j",z="2"}', None, 'x{job="j"}']
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from itertools import chain, compress, repeat
from operator import itemgetter

from inferwatch.model import METRIC_NAME_LABEL, Labels, check_deadline

__all__ = ["Numbered", "numbered_series", "plain_series"]

_BLOCK = 8192
"""Texts per C-level pass: one pass over 200,000 texts would hold the interpreter lock for 0.1 s."""
_METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_OPEN = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([a-zA-Z_][a-zA-Z0-9_]*)=")
_NEXT = re.compile(r",([a-zA-Z_][a-zA-Z0-9_]*)=")
_CLOSE = ("}", ",}")
_EVEN = itemgetter(slice(0, None, 2))

_Pair = tuple[str, str]
_Layout = tuple[int, tuple["int | _Pair", ...], tuple["_Pairs", ...], tuple[int, ...]]
"""A shape's label count; in sorted order, each slot's label (its place in the text) or constant pair;
each label's pairs, in the text's order; and each slot's constant pair's number (-1 for a label)."""
Numbered = tuple[list[_Pair], "array[int]", "array[int]"]
"""A batch's distinct pairs, each set's pairs in turn as places in them (``i``), each set's pair count
(``q``): what a store creating the sets as new series would otherwise work out again."""


class _Numbering:
    """The pairs of a batch numbered as they are made, and the sets' numbers text by text."""

    __slots__ = ("codes", "consts", "pairs", "sizes", "whole")

    def __init__(self, target: tuple[_Pair, ...]) -> None:
        self.pairs: list[_Pair] = list(target)
        self.consts = {p: k for k, p in enumerate(target)}  # the target's and the metric names' pairs
        self.codes = array("i")
        self.sizes = array("q")
        self.whole = True  # false once a text was left to the line parser: no numbering then

    def add(self, pair: _Pair) -> int:
        self.pairs.append(pair)
        return len(self.pairs) - 1


class _Pairs(dict[str, _Pair]):
    """One label's pairs by value, each made once (``__missing__``: the first time a value is seen)."""

    __slots__ = ("bad", "codes", "name", "numbering")

    def __init__(self, name: str, numbering: _Numbering) -> None:
        super().__init__()
        self.name = name
        self.bad = False
        """Whether an empty value or an escape was seen: the texts holding one go line by line."""
        self.numbering = numbering
        self.codes: dict[str, int] = {}
        """Each value's pair's number in the batch."""

    def __missing__(self, value: str) -> _Pair:
        if not value or "\\" in value:
            self.bad = True
        pair = self[value] = (self.name, value)
        self.codes[value] = self.numbering.add(pair)
        return pair


def _names(shape: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """The metric name and the label names of a shape (its even pieces), ``None`` unless plain."""
    if len(shape) == 1:
        text = shape[0]
        text = text[:-2] if text.endswith("{}") else text
        return (text, []) if _METRIC.fullmatch(text) else None
    first = _OPEN.fullmatch(shape[0])
    if first is None or shape[-1] not in _CLOSE:
        return None
    names = [first.group(2)]
    for piece in shape[1:-1]:
        m = _NEXT.fullmatch(piece)
        if m is None:
            return None
        names.append(m.group(1))
    return first.group(1), names


def _layout(shape: tuple[str, ...], target: tuple[_Pair, ...], shared: dict[str, _Pairs],
            metrics: dict[str, _Pair], numbering: _Numbering) -> _Layout | None:
    """Where a shape's labels, its metric name and the target's pairs go in the sorted label set."""
    found = _names(shape)
    if found is None:
        return None
    metric, names = found
    if (len(set(names)) < len(names) or {k for k, _ in target}.intersection(names)
            or any(n.startswith("__") for n in names)):
        return None  # a name twice, a target's label (exported_) or a reserved one: the line parser's
    pair = metrics.get(metric)
    if pair is None:
        pair = metrics[metric] = (METRIC_NAME_LABEL, metric)
        numbering.consts[pair] = numbering.add(pair)
    slots: list[tuple[str, int | _Pair]] = [(METRIC_NAME_LABEL, pair), *((p[0], p) for p in target)]
    slots += ((name, j) for j, name in enumerate(names))
    slots.sort(key=itemgetter(0))
    by_place = tuple(shared.get(n) or shared.setdefault(n, _Pairs(n, numbering)) for n in names)
    numbers = tuple(-1 if isinstance(s, int) else numbering.consts[s] for _, s in slots)
    return len(names), tuple(s for _, s in slots), by_place, numbers


def plain_series(keys: list[str], target: tuple[_Pair, ...]) -> list[Labels | None]:
    """The label set of each series text in ``keys`` with the ``target`` pairs added (``None``: a text
    not in the plain form, or one that names a label twice or a label of ``target``).

    ``target`` must be sorted pairs with non-empty values and no ``__name__``.
    """
    return numbered_series(keys, target)[0]


def numbered_series(keys: list[str], target: tuple[_Pair, ...],
                    ) -> tuple[list[Labels | None], Numbered | None]:
    """:func:`plain_series`, and where every text was made, their pairs numbered (:data:`Numbered`).

    >>> sets, (pairs, codes, sizes) = numbered_series(['up{a="1"}', 'up{a="2"}'], (("job", "j"),))
    >>> [tuple(pairs[c] for c in codes[0:3])] == [sets[0].items_tuple], list(sizes)
    (True, [3, 3])
    """
    out: list[Labels | None] = []
    shared: dict[str, _Pairs] = {}
    numbering = _Numbering(target)
    metrics: dict[str, _Pair] = {}
    layouts: dict[tuple[str, ...], _Layout | None] = {}
    for a in range(0, len(keys), _BLOCK):
        check_deadline()  # a scrape steps aside between blocks while a rule round runs
        out += _block(keys[a:a + _BLOCK], target, shared, metrics, layouts, numbering)
    whole = numbering.whole and len(numbering.sizes) == len(out)
    return out, (numbering.pairs, numbering.codes, numbering.sizes) if whole else None


def _block(texts: list[str], target: tuple[_Pair, ...], shared: dict[str, _Pairs],
           metrics: dict[str, _Pair], layouts: dict[tuple[str, ...], _Layout | None],
           numbering: _Numbering) -> list[Labels | None]:
    """``plain_series`` of one block of texts: grouped by shape, each group made column by column."""
    parts = list(map(str.split, texts, repeat('"')))
    shapes = list(map(tuple, map(_EVEN, parts)))
    groups: dict[tuple[str, ...], list[int]] = {}
    if shapes.count(shapes[0]) == len(shapes):  # one family of one layout: nothing to group
        groups[shapes[0]] = list(range(len(shapes)))
    else:
        for k, shape in enumerate(shapes):
            ks = groups.get(shape)
            if ks is None:
                groups[shape] = [k]
            else:
                ks.append(k)
    out: list[Labels | None] = [None] * len(texts)
    rows: list[tuple[int, ...] | None] = [None] * len(texts) if len(groups) > 1 else []
    for shape, ks in groups.items():
        if shape in layouts:
            layout = layouts[shape]
        else:
            layout = layouts[shape] = _layout(shape, target, shared, metrics, numbering)
        if layout is None:
            numbering.whole = False
            continue
        whole = len(ks) == len(texts)
        made, codes = _made(parts if whole else [parts[k] for k in ks], layout, numbering.whole)
        if whole:
            out = made
        else:
            deque(map(out.__setitem__, ks, made), maxlen=0)
        if codes is None:
            numbering.whole = False
        elif whole:
            numbering.codes += codes
            numbering.sizes.extend(repeat(len(layout[1]), len(ks)))
        else:  # several shapes in the block: each text's numbers in the text's place
            m = len(layout[1])
            deque(map(rows.__setitem__, ks, zip(*(codes[j::m] for j in range(m)), strict=True)), maxlen=0)
    if rows and numbering.whole:
        numbering.codes.extend(chain.from_iterable(rows))  # type: ignore[arg-type]  # no None: whole
        numbering.sizes.extend(map(len, rows))  # type: ignore[arg-type]
    return out


def _made(rows: list[list[str]], layout: _Layout, number: bool,
          ) -> tuple[list[Labels | None], array[int] | None]:
    """The label sets of the texts ``rows`` (each split at its quotes), all of one shape, and (when
    ``number`` and every one was made) their pairs' numbers, set after set."""
    count, slots, by_place, numbers = layout
    if not all(map(int.__eq__, map(len, rows), repeat(2 * count + 1))):
        return [None] * len(rows), None  # a quote more than the shape shows: not what it seems
    codes = array("i", numbers) * len(rows) if number else None
    if not count:  # no label: every text of the shape is the same text
        items = tuple(s for s in slots if not isinstance(s, int))
        return list(map(Labels.from_sorted, repeat(items, len(rows)))), codes
    values = [list(map(itemgetter(2 * j + 1), rows)) for j in range(count)]
    columns = [list(map(p.__getitem__, v)) for p, v in zip(by_place, values, strict=True)]
    made: list[Labels | None] = list(map(Labels.from_sorted, zip(
        *(columns[s] if isinstance(s, int) else repeat(s) for s in slots), strict=False)))
    bad = [v for p, v in zip(by_place, values, strict=True) if p.bad]
    if bad:  # an empty value or an escape somewhere in the batch: the texts holding one go line by line
        for k in compress(range(len(rows)), map(_any_bad, zip(*bad, strict=True))):
            made[k] = None
        return made, None
    if codes is not None:  # each label's numbers into its slot, every len(slots)-th place
        m = len(slots)
        for at, s in enumerate(slots):
            if isinstance(s, int):
                codes[at::m] = array("i", map(by_place[s].codes.__getitem__, values[s]))
    return made, codes


def _any_bad(values: tuple[str, ...]) -> bool:
    return any(not v or "\\" in v for v in values)
