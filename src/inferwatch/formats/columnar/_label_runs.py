"""Label runs read as a batch: their bytes as keys, and the label sets of the new ones.

A ``TimeSeries`` starts with its labels: a run of ``Label`` fields, which a
sender encodes the usual way (``0A L 0A n <name> 12 m <value>``, lengths
under 128, names strictly ascending, no empty name or value). :func:`row_bytes`
cuts many byte ranges of a buffer into ``bytes`` in a few numpy passes (a
label run's bytes are the key of its label set in the reader's cache).
:func:`decode_runs` splits the runs of all the series a request brings for
the first time into fields with numpy, the k-th field of every run at once;
a field is compared with the same label of the run before, and only the
ones that differ are cut into ``bytes`` and looked up in the pair cache
(names repeat on every series, many values too); the few pairs not seen
before are decoded, the order is checked across the batch, and every run's
pairs become its :class:`Labels`. A run in any other shape is named for the
general reader (the caller's), which sorts it, or refuses a repeated name.

>>> raw = b"\\x0a\\x0b\\x0a\\x03job\\x12\\x04node" + b"\\x0a\\x0c\\x0a\\x08__name__\\x12\\x00"
>>> buf = padded(raw)
>>> row_bytes(raw, buf, np.array([0, 13]), np.array([13, 27]))
[b'\\n\\x0b\\n\\x03job\\x12\\x04node', b'\\n\\x0c\\n\\x08__name__\\x12\\x00']
>>> decoded, other, _ = decode_runs(raw, buf, np.array([0, 13]), np.array([13, 27]), {})
>>> str(decoded[0]), other
('{job="node"}', [1])
"""

from __future__ import annotations

from itertools import count, repeat
from operator import is_, itemgetter
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from inferwatch.model import Labels

__all__ = ["BLOCK", "PAD", "Numbered", "decode_runs", "padded", "row_bytes"]

_LEN1 = 0x0A  # field 1, length-delimited: a Label in a TimeSeries, its name in a Label
_LEN2 = 0x12  # field 2, length-delimited: a Label's value
_MAX_FIELDS = 64  # a run with more labels is left to the general reader (the split is one numpy pass a field)
BLOCK = 4096  # runs or ranges read at once: rows of at most 1 MiB for keys, 17 MiB for 30 labels each
_WIDEST = 256  # byte ranges up to this long are cut by numpy, longer ones one by one
PAD = _WIDEST + 16  # zero bytes after a buffer, so that a row of _WIDEST bytes never reads past its end
_KEEP = np.where(np.arange(_WIDEST)[None, :] < np.arange(_WIDEST + 1)[:, None], 0xFF, 0).astype(np.uint8)
_name = itemgetter(0)


def padded(raw: bytes) -> np.ndarray:
    """``raw`` as bytes for numpy, ``PAD`` zero bytes added (what this module's functions read)."""
    return np.frombuffer(raw + bytes(PAD), dtype=np.uint8)


def row_bytes(raw: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[bytes]:
    """``raw[a:b]`` for each ``a, b`` of ``starts, ends`` (``buf``: ``raw`` padded): the ranges copied as
    fixed-width rows, :data:`BLOCK` at a time, the bytes past each end cleared, each row one ``bytes``
    object (numpy's fixed strings drop trailing NUL bytes, so a range ending in one is cut from ``raw``
    instead)."""
    out: list[bytes] = []
    for a in range(0, starts.shape[0], BLOCK):
        out += _row_block(raw, buf, starts[a:a + BLOCK], ends[a:a + BLOCK])
    return out


def _row_block(raw: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[bytes]:
    width = ends - starts
    words = (int(width.max()) + 7) // 8
    if words * 8 > _WIDEST:
        return list(map(raw.__getitem__, map(slice, starts.tolist(), ends.tolist())))
    rows = sliding_window_view(buf, 8 * words)[starts]
    rows &= _KEEP[width, :8 * words]
    out: list[bytes] = rows.view(f"S{8 * words}").ravel().tolist()
    nul = np.flatnonzero((buf[np.maximum(ends - 1, 0)] == 0) & (width > 0))
    for k, a, b in zip(nul.tolist(), starts[nul].tolist(), ends[nul].tolist(), strict=True):
        out[k] = raw[a:b]
    return out


def decode_runs(raw: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                pairs: dict[bytes, tuple[str, str]]) -> tuple[list[Labels], list[int], Numbered]:
    """The label set of each run ``raw[a:b]`` (``buf``: ``raw`` padded) in the usual encoding, and the
    runs in another (their places hold an empty label set); ``pairs`` (one ``Label`` field's bytes ->
    its pair) is read, and filled with the pairs decoded here. :data:`BLOCK` runs at a time (a request
    of a million new series is not copied into rows at once). Third: the distinct pairs of the label
    sets, numbered (:class:`Numbered`; meaningless where a run is in another encoding).

    ``UnicodeDecodeError`` (a ``ValueError``) when a name or value is not UTF-8.
    """
    out: list[Labels] = []
    other: list[int] = []
    numbers = _Numbers()
    for a in range(0, starts.shape[0], BLOCK):
        labels, unusual = _decode_block(raw, buf, starts[a:a + BLOCK], ends[a:a + BLOCK], pairs, numbers)
        out += labels
        other += [a + k for k in unusual]
    return out, other, numbers.numbered()


class Numbered(NamedTuple):
    """The distinct pairs of a batch of label sets, each set's pairs as places in them, its pair count."""

    pairs: list[tuple[str, str]]
    codes: np.ndarray
    sizes: np.ndarray


class _Numbers:
    """Pairs numbered in order of first sight, block after block: only the fields that differ from the
    same label of the run before are looked at (a few per run), not every pair of every run."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], int] = {}  # pair -> the count at its first sight
        self.seen = count()
        self.codes: list[np.ndarray] = []
        self.sizes: list[np.ndarray] = []

    def add(self, distinct: list[tuple[str, str]], ids: np.ndarray, sizes: np.ndarray) -> None:
        """A block: its distinct fields' pairs, each field's place in them (run by run), the runs' sizes."""
        at = np.fromiter(map(self.first.setdefault, distinct, self.seen), np.int64, len(distinct))
        self.codes.append(at[ids])
        self.sizes.append(sizes)

    def numbered(self) -> Numbered:
        firsts = np.fromiter(self.first.values(), dtype=np.int64, count=len(self.first))
        rank = np.zeros(next(self.seen), dtype=np.int32)  # the counts at first sight, ranked: the numbers
        rank[firsts] = np.arange(firsts.shape[0], dtype=np.int32)
        codes = np.concatenate([np.empty(0, dtype=np.int64), *self.codes])
        sizes = np.concatenate([np.empty(0, dtype=np.int64), *self.sizes])
        return Numbered(list(self.first), rank[codes], sizes)


def _decode_block(raw: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  pairs: dict[bytes, tuple[str, str]], numbers: _Numbers) -> tuple[list[Labels], list[int]]:
    at, owner, column, good = _split(buf, starts, ends)
    keep = good[owner]
    at, owner, column = at[keep], owner[keep], column[keep]
    ids, first = _same_as_above(buf, at, column)
    distinct = row_bytes(raw, buf, at[first], at[first] + 2 + buf[at[first] + 1])
    known = list(map(pairs.get, distinct))
    if None in known:
        _decode_new(distinct, known, pairs)
    by_run = _run_order(owner, column, starts.shape[0])
    ids, owner = ids[by_run], owner[by_run]
    _check_order(known, ids, owner, good)
    every = np.fromiter(known, dtype=object, count=len(known))[ids].tolist()  # each field's pair, in C
    counts = np.bincount(owner, minlength=starts.shape[0])
    numbers.add(known, ids, counts)  # type: ignore[arg-type]  # every pair decoded by now
    if counts.min() == counts.max():  # as many labels in every run, as a sender's series mostly have
        width = int(counts[0])
        items = list(zip(*[iter(every)] * width, strict=True)) if width else [()] * starts.shape[0]
    else:
        last = np.cumsum(counts)
        items = list(map(tuple, map(every.__getitem__, map(slice, (last - counts).tolist(), last.tolist()))))
    return list(map(Labels.from_sorted, items)), np.flatnonzero(~good).tolist()


def _same_as_above(buf: np.ndarray, at: np.ndarray, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fields (label after label, run after run) compared, as rows of bytes, with the same label of the
    run before: which field each one repeats (an index into the second array, where each of those
    lies). A sender's series differ from the one before in a label or two: only those are cut into
    ``bytes`` and looked up."""
    if not at.shape[0]:
        return at, at
    width = 2 + buf[at + 1].astype(np.int64)
    wide = 8 * ((int(width.max()) + 7) // 8)
    rows = sliding_window_view(buf, wide)[at]
    rows &= _KEEP[width, :wide]
    words = rows.view(np.uint64)
    new = np.ones(at.shape[0], dtype=bool)
    new[1:] = (words[1:] != words[:-1]).any(axis=1) | (column[1:] != column[:-1])
    return np.cumsum(new) - 1, np.flatnonzero(new)


def _run_order(owner: np.ndarray, column: np.ndarray, runs: int) -> np.ndarray:
    """The fields' order run after run, label after label (they come label after label)."""
    table = np.full((runs, int(column.max()) + 1 if column.shape[0] else 0), -1, dtype=np.int64)
    table[owner, column] = np.arange(owner.shape[0])
    flat = table.ravel()
    return flat[flat >= 0]


def _split(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where each field starts, whose run it is and which of its labels, label after label (the first
    of every run, then the second...); which runs are whole fields in the usual encoding (``good``)."""
    good = np.ones(starts.shape[0], dtype=bool)
    pos = starts.copy()
    live = np.flatnonzero(pos < ends)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    while live.shape[0] and len(found) < _MAX_FIELDS:
        p = pos[live]
        found.append((live, p))
        size = buf[p + 1].astype(np.int64)
        name = buf[p + 3].astype(np.int64)
        end = ends[live]
        # the usual field: its tag, a one-byte length, name first (0A n), its value (12 m) right after
        ok = (buf[p] == _LEN1) & (size < 0x80) & (buf[p + 2] == _LEN1) & (name > 0) & (p + 5 + name < end)
        value_at = np.where(ok, p + 4 + name, p)
        ok &= (buf[value_at] == _LEN2) & (buf[value_at + 1] > 0) & (size == 4 + name + buf[value_at + 1])
        good[live[~ok]] = False
        pos[live] = p + 2 + size
        live = live[pos[live] < end]
    good[live] = False  # more than _MAX_FIELDS labels
    good &= pos == ends  # the last field runs past its run
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, good
    return (np.concatenate([at for _, at in found]), np.concatenate([runs for runs, _ in found]),
            np.repeat(np.arange(len(found)), [runs.shape[0] for runs, _ in found]), good)


def _decode_new(fields: list[bytes], got: list[tuple[str, str] | None],
                pairs: dict[bytes, tuple[str, str]]) -> None:
    """Decode the fields (checked usual) the pair cache does not hold, into ``got`` and the cache."""
    for k in np.flatnonzero(np.fromiter(map(is_, got, repeat(None)), dtype=bool, count=len(got))).tolist():
        field = fields[k]
        pair = pairs.get(field)  # a new pair twice in the batch is decoded once
        if pair is None:
            name_end = 4 + field[3]
            pair = pairs[field] = (field[4:name_end].decode(), field[name_end + 2:].decode())
        got[k] = pair


def _check_order(known: list[tuple[str, str] | None], ids: np.ndarray, owner: np.ndarray,
                 good: np.ndarray) -> None:
    """Mark the runs whose names do not strictly ascend (out of order, or one repeated) not ``good``:
    each distinct name ranked once, the ranks compared along the runs by numpy."""
    if ids.shape[0] < 2:
        return
    names = list(map(_name, known))  # type: ignore[arg-type]  # every pair decoded by now
    rank_of = {name: k for k, name in enumerate(sorted(set(names)))}
    rank = np.fromiter(map(rank_of.__getitem__, names), dtype=np.int64, count=len(names))[ids]
    wrong = (owner[1:] == owner[:-1]) & (rank[1:] <= rank[:-1])
    if wrong.any():
        good[owner[1:][wrong]] = False
