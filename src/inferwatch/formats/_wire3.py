"""Upload format 3: one batch as gzip'ed binary columns (what the agent sends to ``serve``).

After gzip the body is ``b"IWE\\x03"``, a varint length and a JSON header, then
the columns::

    header: {"b": "<spool id>:<first>-<last>", "hb": 300, "hm": 300, "st": 15, "t0": <ms>, "tu": <ms>,
             "a": {...agent stats...}, "defs": {"7": {"l": {"__name__": ...}, "k": "c"}}}
    instants: the batch's distinct times, (t - t0) / tu, as zigzag varints: the first, the
              first step, then each step minus the one before (a steady 15 s step: zeros)
    varint  number of series
    per series, by id: zigzag id minus the one before, varint points   (all series first,)
    per series: times  -- indexes into the instants, written the same way (a series read
                          every round: 0, 1, 0, 0, ...; one point in the batch: one byte)
    or, with "ly": 1 in the header (the encoder's choice whenever each series' times ascend in
    the batch: a sparse batch's series ids, counts and times cost a fifth less after gzip):
    per instant: varint number of series read then, each id minus the one before (ascending)
    per series, by id: values
    per series: values -- a mode byte, then
                          0..6  decimals: every value is an integer after * 10**mode:
                                the first as a zigzag varint, then differences (counters: small)
                          17..31 integers, all multiples of 10**(mode - 16): the same, divided by it
                                (a gauge rounded within the band: 12300000 goes as 123)
                          255   floats: the first as 8 bytes, then each XOR the one before:
                                a byte (leading zero bytes * 16 + length), the middle bytes

As in version 2 a series is named by its spool id and ``defs`` carries the
labels the receiver may not have yet, now with the kind (``"k": "c"`` a
counter); ``st`` is the device's collection step and ``hm`` the longest
heartbeat (back-off): the server fills in the points between two sent ones at
``st`` (a gauge's last value holds, a counter's line), never across a gap over
``hm`` plus two steps. Every value round-trips bit for bit (NaN, the staleness
marker and infinities take the float mode).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.model import Labels, Sample, is_valid_label_name, is_valid_metric_name, loads_json

__all__ = ["MAGIC", "WIRE_VERSION_COLUMNS", "Reader", "decode_columns", "dod", "encode_columns", "read_dod",
           "varint", "wire_labels", "zigzags"]

WIRE_VERSION_COLUMNS = 3
MAGIC = b"IWE\x03"
_FLOATS = 255
_TENS = 16  # 16 + j: integers, every one a multiple of 10**j (j = 1..15), sent divided by it
_MAX_DECIMALS = 6
_D = struct.Struct(">d")
_Q = struct.Struct(">Q")


def varint(out: bytearray, n: int) -> None:
    """Append ``n`` (>= 0) as a base-128 varint."""
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int) -> None:
    varint(out, (n << 1) if n >= 0 else ((-n) << 1) - 1)


def zigzags(out: bytearray, ns: Sequence[int]) -> None:
    """Many zigzag varints (one call per column: the agent's CPU per sample)."""
    append = out.append
    for n in ns:
        n = (n << 1) if n >= 0 else ((-n) << 1) - 1
        while n > 0x7F:
            append((n & 0x7F) | 0x80)
            n >>= 7
        append(n)


def _decimals(values: Sequence[float]) -> int | None:
    if all(v.is_integer() and abs(v) < 2**52 for v in values if v == v):  # the common case, at once
        return 0 if all(v == v for v in values) else None
    for k in range(1, _MAX_DECIMALS + 1):
        scale = 10.0**k
        try:
            if all(abs(v) < 2**52 / scale and round(v * scale) / scale == v for v in values):
                return k
        except (OverflowError, ValueError):  # inf / NaN: floats
            return None
    return None


def _tens(values: Sequence[float]) -> int:
    """How many trailing zeros every (integral) value has: 12300000 and 4500000 -> 5."""
    j = 15
    for v in values:
        n = int(v)
        while j and n % 10**j:
            j -= 1
        if not j:
            return 0
    return j


def _values(out: bytearray, values: Sequence[float]) -> None:
    k = _decimals(values)
    if k is not None and not any(v == 0 and math.copysign(1, v) < 0 for v in values):
        j = _tens(values) if k == 0 else 0
        out.append(_TENS + j if j else k)
        ns = [int(v) // 10**j for v in values] if j else [round(v * 10.0**k) for v in values]
        zigzags(out, [ns[0], *(b - a for a, b in itertools.pairwise(ns))])
        return
    out.append(_FLOATS)
    prev_bits = _Q.unpack(_D.pack(values[0]))[0]
    out += _Q.pack(prev_bits)
    for v in values[1:]:
        bits = _Q.unpack(_D.pack(v))[0]
        x, prev_bits = bits ^ prev_bits, bits
        if x == 0:
            out.append(0)
            continue
        lead = (64 - x.bit_length()) // 8
        trail = ((x & -x).bit_length() - 1) // 8
        n = 8 - lead - trail
        out.append(lead * 16 + n)
        out += (x >> (8 * trail)).to_bytes(n, "big")


def encode_columns(header: Mapping[str, Any], ids: Sequence[int], samples: Sequence[Sample], *,
                   level: int = 6, by_instant: bool = True) -> bytes:
    """The gzip'ed body of one batch in format 3 (``header`` without ``t0``/``tu``: computed here)."""
    if len(ids) != len(samples):
        raise ValueError(f"{len(ids)} series ids for {len(samples)} samples")
    times = [round(s.t * 1000) for s in samples]
    t0 = min(times, default=0)
    unit = 0
    for t in times:
        unit = math.gcd(unit, t - t0)
    unit = unit or 1
    instants = sorted(set(times))
    index = {t: i for i, t in enumerate(instants)}
    cols: dict[int, tuple[list[int], list[float]]] = {}
    for sid, ms, s in zip(ids, times, samples, strict=True):
        ts, vs = cols.setdefault(sid, ([], []))
        ts.append(index[ms])
        vs.append(s.v)
    order = sorted(cols)
    # by instant only when no series' times go back (a stepped clock): the decoder returns each
    # series in time order, which must be the order it was read in
    layout = {"ly": 1} if by_instant and all(_ascending(cols[sid][0]) for sid in order) else {}
    head = json.dumps({**header, "v": WIRE_VERSION_COLUMNS, "t0": t0, "tu": unit, **layout},
                      separators=(",", ":"), allow_nan=False).encode()
    out = bytearray(MAGIC)
    varint(out, len(head))
    out += head
    varint(out, len(instants))
    dod(out, [(t - t0) // unit for t in instants])
    if layout:
        _by_instant(out, len(instants), order, cols)
        for sid in order:
            _values(out, cols[sid][1])
        return gzip.compress(bytes(out), compresslevel=level, mtime=0)
    varint(out, len(order))
    prev = 0
    for sid in order:
        _zigzag(out, sid - prev)
        varint(out, len(cols[sid][0]))
        prev = sid
    for sid in order:
        dod(out, cols[sid][0])
    for sid in order:
        _values(out, cols[sid][1])
    return gzip.compress(bytes(out), compresslevel=level, mtime=0)


def _ascending(ts: Sequence[int]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(ts))


def _by_instant(out: bytearray, n: int, order: Sequence[int],
                cols: Mapping[int, tuple[list[int], list[float]]]) -> None:
    """Per instant, the ids of the series read then (ascending: each minus the one before)."""
    at: list[list[int]] = [[] for _ in range(n)]
    for sid in order:
        for k in cols[sid][0]:
            at[k].append(sid)
    for sids in at:
        varint(out, len(sids))
        prev = 0
        for sid in sids:
            varint(out, sid - prev)
            prev = sid


def _read_by_instant(r: Reader, n_instants: int, max_samples: int) -> list[tuple[int, list[int]]]:
    """(id, instant indexes) per series, by id, from the per-instant lists of ids."""
    times: dict[int, list[int]] = {}
    total = 0
    for k in range(n_instants):
        count = r.varint(f"body.instants[{k}]")
        total += count
        if total > max_samples:
            raise InputError(f"body: more than {max_samples} samples in one batch")
        sid = 0
        for _ in range(count):
            sid += r.varint(f"body.instants[{k}]")
            times.setdefault(sid, []).append(k)
    return sorted(times.items())


def dod(out: bytearray, ts: Sequence[int]) -> None:
    """The first, the first step, then each step minus the one before (a steady step: zeros)."""
    if ts:
        steps = [b - a for a, b in itertools.pairwise(ts)]
        zigzags(out, [ts[0], *steps[:1], *(b - a for a, b in itertools.pairwise(steps))])


def read_dod(r: Reader, n: int, where: str) -> list[int]:
    """``n`` integers written by :func:`dod`."""
    ts: list[int] = []
    prev = step = 0
    for k in range(n):
        d = r.zigzag(where)
        t = d if k == 0 else prev + (d if k == 1 else step + d)
        step, prev = (t - prev if k else 0), t
        ts.append(t)
    return ts


class Reader:
    """Reads varints and bytes from ``data`` at ``pos``; :class:`InputError` naming ``where`` when short."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos

    def varint(self, where: str) -> int:
        n = shift = 0
        data = self.data
        while True:
            if self.pos >= len(data) or shift > 70:
                raise InputError(f"{where}: truncated or overlong varint at byte {self.pos}")
            b = data[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def zigzag(self, where: str) -> int:
        n = self.varint(where)
        return (n >> 1) if not n & 1 else -((n + 1) >> 1)

    def take(self, n: int, where: str) -> bytes:
        if self.pos + n > len(self.data):
            raise InputError(f"{where}: truncated at byte {self.pos}")
        got = self.data[self.pos:self.pos + n]
        self.pos += n
        return got


def _read_values(r: Reader, n: int, where: str) -> list[float]:
    mode = r.take(1, where)[0]
    if mode <= _MAX_DECIMALS or _TENS < mode <= _TENS + 15:
        acc, out = 0, []
        for _ in range(n):
            acc += r.zigzag(where)
            if abs(acc) > 2**63:
                raise InputError(f"{where}: value out of range")
            out.append(acc / 10.0**mode if mode <= _MAX_DECIMALS else float(acc * 10 ** (mode - _TENS)))
        return out
    if mode != _FLOATS:
        raise InputError(f"{where}: unknown value mode {mode}")
    bits = _Q.unpack(r.take(8, where))[0]
    out = [_D.unpack(_Q.pack(bits))[0]]
    for _ in range(n - 1):
        ctl = r.take(1, where)[0]
        if ctl:
            lead, size = ctl >> 4, ctl & 0x0F
            if size == 0 or lead + size > 8:
                raise InputError(f"{where}: bad XOR control byte {ctl}")
            x = int.from_bytes(r.take(size, where), "big") << (8 * (8 - lead - size))
            bits ^= x
        out.append(_D.unpack(_Q.pack(bits))[0])
    return out


def wire_labels(raw: Any, where: str) -> Labels:
    """A label set of an upload body (every format), its names checked."""
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise InputError(f"{where}: expected an object of string label values")
    if not is_valid_metric_name(raw.get("__name__", "")):
        raise InputError(f"{where}.__name__: {raw.get('__name__')!r:.80} is not a valid metric name")
    for name in raw:
        if not is_valid_label_name(name) and name != "__name__":
            raise InputError(f"{where}: {name!r:.80} is not a valid label name")
    return Labels(raw)


def _columns_by_instant(r: Reader, instants: Sequence[int], max_samples: int
                        ) -> tuple[list[tuple[int, int]], list[list[int]]]:
    got = _read_by_instant(r, len(instants), max_samples)
    return [(sid, len(ks)) for sid, ks in got], [[instants[k] for k in ks] for _, ks in got]


def _columns_by_series(r: Reader, instants: Sequence[int], max_samples: int
                       ) -> tuple[list[tuple[int, int]], list[list[int]]]:
    count = r.varint("body.series")
    heads: list[tuple[int, int]] = []
    sid = 0
    for _ in range(min(count, max_samples + 1)):
        sid += r.zigzag("body.series")
        if sid < 0:
            raise InputError("body.series: a negative series id")
        heads.append((sid, r.varint("body.series")))
    if sum(n for _, n in heads) > max_samples or count > max_samples:
        raise InputError(f"body: more than {max_samples} samples in one batch")
    times: list[list[int]] = []
    for i, (_, n) in enumerate(heads):
        idx = read_dod(r, n, f"body.s[{i}].t")
        if any(not 0 <= k < len(instants) for k in idx):
            raise InputError(f"body.s[{i}].t: an instant out of the batch's {len(instants)}")
        times.append([instants[k] for k in idx])
    return heads, times


def decode_columns(raw: bytes, max_samples: int, known: Callable[[str, int], Labels | None]
                   ) -> tuple[dict[str, Any], dict[int, tuple[Labels, str]], list[tuple[int, Sample]],
                              set[int]]:
    """(header, defs as id -> (labels, kind), (id, sample) pairs, unknown ids) of a decompressed body."""
    r = Reader(raw, len(MAGIC))
    size = r.varint("body.header")
    header = loads_json(r.take(size, "body.header"), "body.header")
    if not isinstance(header, dict):
        raise InputError("body.header: expected a JSON object")
    raw_defs = header.get("defs") or {}
    if not isinstance(raw_defs, dict):
        raise InputError("body.header.defs: expected an object of series id -> definition")
    defs: dict[int, tuple[Labels, str]] = {}
    for key, d in raw_defs.items():
        if not key.isdigit() or not isinstance(d, dict):
            raise InputError(f"body.header.defs: {key!r:.40} is not a series id with a definition")
        kind = d.get("k", "g")
        if kind not in ("g", "c"):
            raise InputError(f"body.header.defs.{key}.k: expected \"g\" or \"c\", got {kind!r:.20}")
        defs[int(key)] = (wire_labels(d.get("l"), f"body.header.defs.{key}.l"), kind)
    t0, unit = header.get("t0"), header.get("tu")
    if not isinstance(t0, int) or not isinstance(unit, int) or unit < 1 or abs(t0) > 2**53:
        raise InputError("body.header: t0 and tu must be integers of milliseconds (tu >= 1)")
    spool = str(header.get("b", "")).partition(":")[0]
    n_instants = r.varint("body.instants")
    if n_instants > max_samples:
        raise InputError(f"body: more than {max_samples} samples in one batch")
    instants = read_dod(r, n_instants, "body.instants")
    if any(abs(t) * unit > 2**53 for t in instants):
        raise InputError("body.instants: no time")
    layout = header.get("ly", 0)
    if type(layout) is not int or layout not in (0, 1):
        raise InputError(f"body.header.ly: expected 0 or 1 (the layout), got {layout!r:.20}")
    heads, times = (_columns_by_instant(r, instants, max_samples) if layout
                    else _columns_by_series(r, instants, max_samples))
    out: list[tuple[int, Sample]] = []
    missing: set[int] = set()
    for i, ((sid, n), ts) in enumerate(zip(heads, times, strict=True)):
        vs = _read_values(r, n, f"body.s[{i}].v") if n else []
        labels = defs[sid][0] if sid in defs else known(spool, sid)
        if labels is None:
            missing.add(sid)
            continue
        out += [(sid, Sample(labels, (t0 + t * unit) / 1000.0, v)) for t, v in zip(ts, vs, strict=True)]
    if r.pos != len(raw):
        raise InputError(f"body: {len(raw) - r.pos} bytes after the last column")
    return header, defs, out, missing
