"""The head's closed chunks: a series' samples, a fixed number at a time, encoded compactly.

One chunk is one ``bytes``: a 29-byte header, then byte planes. Times become integers (whole
milliseconds when every time in the chunk is one exactly, else their float64 bit patterns),
stored as the first, the first step and the steps' changes (delta of delta, zig-zag): a constant
step stores no plane at all, a jitter of a few milliseconds one byte a sample. Values are
their float64 bit patterns XOR the previous one's (as Prometheus's chunks do): a value that
repeats stores nothing, a counter's integers a few bytes. Of each stream's 8 byte planes only
those not all zero are kept (a mask in the header); a stream that would keep 7 or 8 (random
full-precision values) is stored raw instead, so its decoding is a copy. Everything is integer
arithmetic on bit patterns, so every value comes back bit for bit (staleness markers are one
NaN payload).

Chunks of the same shape (sample count, time mode, plane masks) are encoded and decoded many at
a time, as numpy arrays: no Python loop over samples or planes.

>>> import numpy as np
>>> t = np.array([[10.0, 15.0, 20.0, 25.001]]); v = np.array([[1.0, 1.0, float("nan"), -0.5]])
>>> [c] = encode(t, v)
>>> got_t, got_v = decode([c])
>>> bool((got_t == t).all()), got_v.view(np.int64).tolist() == v.view(np.int64).tolist()
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["HEADER", "RAW", "decode", "decode_rows", "decode_times", "decode_values", "encode", "samples_in",
           "size", "split", "time_bytes"]

_HEAD = np.dtype([("n", "<u2"), ("ms", "u1"), ("tmask", "u1"), ("vmask", "u1"),
                  ("t0", "<i8"), ("d0", "<i8"), ("v0", "<i8")])
HEADER = _HEAD.itemsize  # 29 bytes
"""Bytes before a chunk's planes; its first 5 (count, time mode, masks) say how to decode it."""
_MS_LIMIT = 2.0 ** 53 / 1000  # beyond it milliseconds are not exact integers
_BIT = np.arange(8, dtype=np.uint8)
RAW = 0xFF
"""A plane mask meaning "stored raw": the stream's 8-byte integers as they are."""
_POP = np.array([bin(m).count("1") for m in range(256)], dtype=np.int64)


def samples_in(chunk: bytes | bytearray | memoryview) -> int:
    """How many samples ``chunk`` holds."""
    return chunk[0] | chunk[1] << 8


def size(chunk: bytes | bytearray | memoryview) -> int:
    """The length in bytes of the chunk that starts ``chunk`` (its header says)."""
    n, tmask, vmask = chunk[0] | chunk[1] << 8, chunk[3], chunk[4]
    t = 8 * n if tmask == RAW else max(n - 2, 0) * int(_POP[tmask])
    return HEADER + t + (8 * n if vmask == RAW else (n - 1) * int(_POP[vmask]))


def split(blob: bytes | bytearray) -> list[bytes]:
    """Chunks written end to end, apart again."""
    out, at = [], 0
    while at < len(blob):
        end = at + size(blob[at:at + HEADER])
        out.append(bytes(blob[at:end]))
        at = end
    return out


def _as_ints(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Times as integers per chunk (row): whole milliseconds where exact for the whole row, else bits."""
    bits = t.view(np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        ms = np.rint(t * 1000.0)
        exact = (np.abs(t) < _MS_LIMIT).all(axis=1)  # -0.0 fails below: its integer is 0, read back as 0.0
        back = np.where(exact[:, None], ms, 0.0).astype(np.int64) / 1000.0
        exact &= (back.view(np.int64) == bits).all(axis=1)
    if not exact.any():
        return bits, exact
    return np.where(exact[:, None], ms.astype(np.int64) if exact.all() else
                    np.where(exact[:, None], ms, 0.0).astype(np.int64), bits), exact


def _masks(stream: np.ndarray) -> np.ndarray:
    """Each row's non-zero byte planes as a bit mask (bit j: byte j of some element is not 0)."""
    k = stream.shape[0]
    if stream.shape[1] == 0:
        return np.zeros(k, dtype=np.uint8)
    planes = stream.view(np.uint8).reshape(k, -1, 8).any(axis=1)
    mask = np.packbits(planes, axis=1, bitorder="little")[:, 0]
    mask[_POP[mask] >= 7] = RAW  # a plane saved is not worth the decoding: kept raw
    return mask


def _planes(stream: np.ndarray, mask: int) -> np.ndarray:
    """The kept planes of ``stream`` (rows of int64), plane by plane, as bytes per row."""
    k = stream.shape[0]
    keep = np.flatnonzero((mask >> _BIT) & 1)
    return stream.view(np.uint8).reshape(k, -1, 8)[:, :, keep].transpose(0, 2, 1).reshape(k, -1)


def encode(t: np.ndarray, v: np.ndarray) -> list[bytes]:
    """One chunk per row of ``t`` and ``v`` (2-D float64, each row ascending in time)."""
    k, n = t.shape
    if k == 0:
        return []
    ints, ms = _as_ints(np.ascontiguousarray(t, dtype=np.float64))
    d = np.diff(ints, axis=1)  # int64 arithmetic wraps: exact whatever the bits
    dod = np.diff(d, axis=1)
    zz = (dod << 1) ^ (dod >> 63)
    vb = np.ascontiguousarray(v, dtype=np.float64).view(np.int64)
    x = vb[:, 1:] ^ vb[:, :-1]
    head = np.zeros(k, dtype=_HEAD)
    head["n"], head["tmask"], head["vmask"] = n, _masks(zz), _masks(x)
    head["ms"] = ms & (head["tmask"] != RAW)
    head["t0"], head["v0"] = np.where(head["ms"], ints[:, 0], t[:, 0].view(np.int64)), vb[:, 0]
    if n > 1:
        head["d0"] = d[:, 0]
    out: list[bytes] = [b""] * k
    shapes = head["tmask"].astype(np.int64) << 8 | head["vmask"]
    for shape in np.unique(shapes).tolist():
        rows = np.flatnonzero(shapes == shape)
        tmask, vmask = shape >> 8, shape & 255
        tp = t[rows].view(np.uint8) if tmask == RAW else _planes(zz[rows], tmask)
        vp = vb[rows].view(np.uint8) if vmask == RAW else _planes(x[rows], vmask)
        body = np.concatenate([head[rows].view(np.uint8).reshape(len(rows), HEADER), tp, vp], axis=1)
        size = body.shape[1]
        flat = body.tobytes()
        for i, r in enumerate(rows.tolist()):
            out[r] = flat[i * size:(i + 1) * size]
    return out


def _unplane(body: np.ndarray, mask: int, length: int) -> np.ndarray:
    """The int64 stream of ``length`` per row back from its kept planes (``body``: rows of bytes)."""
    k = body.shape[0]
    keep = np.flatnonzero((mask >> _BIT) & 1)
    out = np.zeros((k, length, 8), dtype=np.uint8)
    if len(keep) and length:
        out[:, :, keep] = body.reshape(k, len(keep), length).transpose(0, 2, 1)
    return out.view(np.int64).reshape(k, length)


def _times(raw: np.ndarray, head: np.ndarray, n: int, tmask: int) -> np.ndarray:
    """The chunks' times as integers (milliseconds or bits, as the header says)."""
    k = raw.shape[0]
    if tmask == RAW:
        return raw[:, HEADER:HEADER + 8 * n].copy().view(np.int64)
    t0, d0 = head["t0"][:, None], head["d0"][:, None]
    with np.errstate(over="ignore"):
        if tmask == 0:  # a constant step: no planes at all
            return t0 + d0 * np.arange(n, dtype=np.int64)
        zz = _unplane(raw[:, HEADER:HEADER + max(n - 2, 0) * int(_POP[tmask])], tmask, max(n - 2, 0))
        dod = (zz.view(np.uint64) >> np.uint64(1)).view(np.int64) ^ -(zz & 1)
        d = np.cumsum(np.concatenate([d0, dod], axis=1), axis=1)
        return np.concatenate([t0, t0 + np.cumsum(d, axis=1)], axis=1).reshape(k, n)


def decode(chunks: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Times and values, one row per chunk, of chunks that share their first 5 header bytes."""
    return decode_rows(np.frombuffer(b"".join(chunks), dtype=np.uint8).reshape(len(chunks), -1))


def decode_rows(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decode` of chunks given as the rows of a 2-D ``uint8`` array."""
    return decode_times(raw), decode_values(raw)


def time_bytes(raw: np.ndarray) -> int:
    """Where the values' part starts in chunks shaped as ``raw``'s first row (a 2-D ``uint8`` array):
    bytes ``5:HEADER - 8`` and ``HEADER:time_bytes(raw)`` are all that the times decode from."""
    n, tmask = int(raw[0, 0]) | int(raw[0, 1]) << 8, int(raw[0, 3])
    return HEADER + (8 * n if tmask == RAW else max(n - 2, 0) * int(_POP[tmask]))


def decode_times(raw: np.ndarray) -> np.ndarray:
    """The times of chunks of one shape given as the rows of a 2-D ``uint8`` array, a row each."""
    head = raw[:, :HEADER].copy().view(_HEAD)[:, 0]
    n, ms, tmask = int(head["n"][0]), int(head["ms"][0]), int(head["tmask"][0])
    ints = _times(raw, head, n, tmask)
    return ints / 1000.0 if ms else ints.view(np.float64)


def decode_values(raw: np.ndarray) -> np.ndarray:
    """The values of chunks of one shape given as the rows of a 2-D ``uint8`` array, a row each."""
    n, vmask = int(raw[0, 0]) | int(raw[0, 1]) << 8, int(raw[0, 4])
    at = time_bytes(raw)
    if vmask == RAW:
        return raw[:, at:].copy().view(np.float64)
    v0 = raw[:, HEADER - 8:HEADER].copy().view(np.int64)
    x = _unplane(raw[:, at:], vmask, n - 1)
    vb = np.bitwise_xor.accumulate(np.concatenate([v0, x], axis=1), axis=1)
    return vb.view(np.float64)
