"""The edge spool's segment: the samples of one append, compressed, as the agent keeps them on disk.

A segment keeps its samples in the order they were appended (the spool numbers them by position),
so it is not a batch format: series ids, times and values as columns, then zlib (its Adler-32
checksum is how a damaged segment is told apart from a sound one)::

    b"IWS\\x01" zlib(varint n | n ids as zigzag differences | time mode byte, the times | n values)

Times: mode 0 when every time is a whole number of milliseconds (zigzag varints of the first,
the first step, then each step minus the one before), mode 1 otherwise (the float's bits XOR the
previous time's). A XOR'd float is a control byte (leading zero bytes * 16 + length) and its
middle bytes; 0 for the same value. A value is a varint: even, a whole number (below 2**53,
not -0.0) as a zigzag difference from its series' previous whole value in the segment, times
two; odd, a float: the control byte times two plus one, then the middle bytes of its bits XOR
its series' previous value's. Every time and value round-trips bit for bit.

>>> blob = encode_segment([3, 4, 3], [10.0, 10.0, 25.0], [1.5, 7.0, 1.75])
>>> decode_segment(blob, 100)
([3, 4, 3], [10.0, 10.0, 25.0], [1.5, 7.0, 1.75])
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Sequence

from inferwatch._exceptions import InputError
from inferwatch.formats._wire3 import Reader, dod, read_dod, varint, zigzags

__all__ = ["SEGMENT_MAGIC", "decode_segment", "encode_segment"]

SEGMENT_MAGIC = b"IWS\x01"
_D = struct.Struct(">d")
_Q = struct.Struct(">Q")


def _bits(x: float) -> int:
    return int(_Q.unpack(_D.pack(x))[0])


def _xor(out: bytearray, prev: int, bits: int) -> None:
    x = prev ^ bits
    if x == 0:
        out.append(0)
        return
    lead = (64 - x.bit_length()) // 8
    trail = ((x & -x).bit_length() - 1) // 8
    n = 8 - lead - trail
    out.append(lead * 16 + n)
    out += (x >> (8 * trail)).to_bytes(n, "big")


def _read_xor(r: Reader, prev: int, where: str) -> int:
    return _xor_tail(r, prev, r.take(1, where)[0], where)


def _xor_tail(r: Reader, prev: int, ctl: int, where: str) -> int:
    if not ctl:
        return prev
    lead, size = ctl >> 4, ctl & 0x0F
    if size == 0 or lead + size > 8:
        raise InputError(f"{where}: bad XOR control byte {ctl}")
    return prev ^ (int.from_bytes(r.take(size, where), "big") << (8 * (8 - lead - size)))


def encode_segment(ids: Sequence[int], times: Sequence[float], values: Sequence[float], *,
                   level: int = 6) -> bytes:
    """One segment's bytes (``ids``, ``times`` and ``values`` of the same length, in append order)."""
    if not len(ids) == len(times) == len(values):
        raise ValueError(f"{len(ids)} ids, {len(times)} times and {len(values)} values")
    out = bytearray()
    varint(out, len(ids))
    zigzags(out, [ids[0], *(b - a for a, b in itertools.pairwise(ids))] if ids else [])
    ms = [round(t * 1000) for t in times]
    if all(abs(m) < 2**53 and m / 1000 == t for m, t in zip(ms, times, strict=True)):
        out.append(0)
        dod(out, ms)
    else:
        out.append(1)
        prev = 0
        for t in times:
            _xor(out, prev, bits := _bits(t))
            prev = bits
    last: dict[int, int] = {}
    whole: dict[int, int] = {}
    for sid, v in zip(ids, values, strict=True):
        bits = _bits(v)
        if v.is_integer() and abs(v) < 2**53 and not (v == 0 and bits):
            n = int(v) - whole.get(sid, 0)
            varint(out, ((n << 1) if n >= 0 else ((-n) << 1) - 1) << 1)
            whole[sid] = int(v)
        else:
            tail = bytearray()
            _xor(tail, last.get(sid, 0), bits)
            varint(out, tail[0] * 2 + 1)
            out += tail[1:]
        last[sid] = bits
    return SEGMENT_MAGIC + zlib.compress(bytes(out), level)


def decode_segment(blob: bytes, max_samples: int) -> tuple[list[int], list[float], list[float]]:
    """(ids, times, values) of a segment; :class:`InputError` for a damaged or foreign one."""
    if blob[:len(SEGMENT_MAGIC)] != SEGMENT_MAGIC:
        raise InputError("segment: not a spool segment (bad magic)")
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(blob[len(SEGMENT_MAGIC):], 64 * max_samples + 64)
    except zlib.error as exc:
        raise InputError(f"segment: damaged ({exc})") from None
    if not inflate.eof or inflate.unused_data:  # cut short (no checksum read), or bytes after it
        raise InputError("segment: damaged (truncated, or bytes after its end)")
    r = Reader(raw, 0)
    n = r.varint("segment.n")
    if n > max_samples:
        raise InputError(f"segment: {n} samples, more than {max_samples}")
    ids, sid = [], 0
    for _ in range(n):
        sid += r.zigzag("segment.ids")
        ids.append(sid)
    mode = r.take(1, "segment.times")[0]
    if mode == 0:
        times = [m / 1000 for m in read_dod(r, n, "segment.times")]
    elif mode == 1:
        times, prev = [], 0
        for _ in range(n):
            prev = _read_xor(r, prev, "segment.times")
            times.append(_D.unpack(_Q.pack(prev))[0])
    else:
        raise InputError(f"segment.times: unknown mode {mode}")
    last: dict[int, int] = {}
    whole: dict[int, int] = {}
    values = []
    for sid in ids:
        head = r.varint("segment.values")
        if head & 1:
            last[sid] = bits = _xor_tail(r, last.get(sid, 0), head >> 1, "segment.values")
            values.append(_D.unpack(_Q.pack(bits))[0])
            continue
        step = head >> 1  # zigzag: the whole number's change since this series' last one
        n = whole[sid] = whole.get(sid, 0) + ((step >> 1) if not step & 1 else -((step + 1) >> 1))
        if abs(n) >= 2**53:
            raise InputError("segment.values: a whole number out of range")
        values.append(float(n))
        last[sid] = _bits(float(n))
    if r.pos != len(raw):
        raise InputError(f"segment: {len(raw) - r.pos} bytes after the last value")
    return ids, times, values
