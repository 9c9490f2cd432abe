"""New series of a scrape, parsed as one batch: the series texts of the lines the cache does not know
(a target's first scrape: every line) turned into label sets with C-level passes over all of them.

The plain form — no whitespace, no escape, no empty value, no ``__`` label, no label given twice, none
the target sets — is split at its quotes in one ``str.split`` over all the texts joined (a value holds no
quote there, so each even piece is a label name between ``{``/``,`` and ``=``, each odd one its value).
Pairs repeated across series (``job``, a route, a model) are kept once and shared by every label set
that holds them. A text not in the plain form is left to the line parser, which names a bad line.

>>> sets = plain_series(['up{a="1",z="2"}', 'up{a="1"} 7', 'x'], (("job", "j"),))
>>> [None if ls is None else str(ls) for ls in sets]
['up{a="1",job="j",z="2"}', None, 'x{job="j"}']
"""

from __future__ import annotations

import re
from itertools import compress, islice, repeat, tee
from operator import eq, floordiv, itemgetter

from inferwatch.model import METRIC_NAME_LABEL, Labels

__all__ = ["plain_series"]

_PAIR = r'(?!__)[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]+"'
_PLAIN = re.compile(rf'[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{{(?:{_PAIR},)*(?:{_PAIR})?\}})?')
"""A whole series text in the plain form (``fullmatch``)."""
_HEAD, _BODY = itemgetter(0), itemgetter(2)


def plain_series(keys: list[str], target: tuple[tuple[str, str], ...]) -> list[Labels | None]:
    """The label set of each series text in ``keys`` with the ``target`` pairs added (``None``: a text
    not in the plain form, or one that names a label twice or a label of ``target``).

    ``target`` must be sorted pairs with non-empty values and no ``__name__``.
    """
    plain = list(map(bool, map(_PLAIN.fullmatch, keys)))
    texts = keys if all(plain) else list(compress(keys, plain))
    # Only what the label sets keep outlives its line here (each tuple, list or dict made for one
    # series dies at once): 100,000 series' worth of them alive together cost more in garbage
    # collection than their parsing.
    metrics = list(map(_HEAD, map(str.partition, texts, repeat("{"))))
    pieces = ",".join(map(_BODY, map(str.partition, texts, repeat("{")))).split('"')  # name=, value, ...
    names = map(str.strip, pieces[0::2], repeat(",=}"))
    shared: dict[tuple[str, str], tuple[str, str]] = {}
    # the names have the piece after the last quote too; each pair kept once, the batch's copies die
    flat = iter(list(map(shared.setdefault, *tee(zip(names, pieces[1::2], strict=False)))))
    del pieces
    sizes = map(floordiv, map(str.count, texts, repeat('"')), repeat(2))  # two quotes a pair
    per_text = map(list, map(islice, repeat(flat), sizes))  # each text's pairs, in turn from one iterator
    metric = map(shared.setdefault, *tee(zip(repeat(METRIC_NAME_LABEL), metrics)))
    merged = map(list.__iadd__, per_text, zip(metric, *map(repeat, target), strict=False))
    items = list(map(tuple, map(sorted, merged)))
    once = list(map(eq, map(len, items), map(len, map(dict, items))))  # no label name twice
    made: list[Labels | None] = list(map(Labels.from_sorted, items))
    if not all(once):
        made = [ls if ok else None for ls, ok in zip(made, once, strict=True)]
    if len(made) == len(keys):
        return made
    out: list[Labels | None] = [None] * len(keys)
    at = iter(made)
    for k in compress(range(len(keys)), plain):
        out[k] = next(at)
    return out
