"""Snappy's block format in pure Python: what Prometheus remote-write 1.0 compresses with.

Format (github.com/google/snappy, ``format_description.txt``): the
uncompressed length as a varint, then elements. An element's tag byte has
its type in the low two bits: ``00`` a literal (length - 1 in the upper six
bits, or 60..63 meaning 1..4 little-endian length bytes follow), ``01`` a
copy of 4..11 bytes with an 11-bit offset, ``10`` a copy of 1..64 bytes with
a 2-byte offset, ``11`` the same with a 4-byte offset.

The encoder is a greedy matcher over 4-byte hashes (a smaller ratio than the
C library's, still valid for every decoder); the decoder accepts every valid
stream and refuses a corrupt one with ``ValueError``.

>>> decompress(compress(b"abcabcabcabcabcabc" * 10)) == b"abcabcabcabcabcabc" * 10
True
"""

from __future__ import annotations

from inferwatch.formats._varint import varint

__all__ = ["compress", "decompress", "uncompressed_length"]

_MAX_OFFSET = 65535
_MIN_MATCH = 4


def _literal(out: bytearray, data: bytes, start: int, end: int) -> None:
    n = end - start - 1
    if n < 60:
        out.append(n << 2)
    else:
        width = (n.bit_length() + 7) // 8
        out.append((59 + width) << 2)
        out += n.to_bytes(width, "little")
    out += data[start:end]


def _copy(out: bytearray, offset: int, length: int) -> None:
    while length > 0:
        n = min(length, 64)
        if length - n and length - n < 4:  # never leave a copy shorter than 4... split earlier
            n = length - 4
        out.append(((n - 1) << 2) | 0b10)
        out += offset.to_bytes(2, "little")
        length -= n


def compress(data: bytes) -> bytes:
    """Snappy-compress ``data`` (block format, no framing)."""
    out = bytearray(varint(len(data)))
    table: dict[bytes, int] = {}
    i = lit = 0
    end = len(data) - _MIN_MATCH
    while i <= end:
        key = data[i:i + _MIN_MATCH]
        cand = table.get(key)
        table[key] = i
        if cand is None or i - cand > _MAX_OFFSET:
            i += 1
            continue
        length = _MIN_MATCH
        while i + length < len(data) and data[cand + length] == data[i + length]:
            length += 1
        if lit < i:
            _literal(out, data, lit, i)
        _copy(out, i - cand, length)
        i += length
        lit = i
    if lit < len(data):
        _literal(out, data, lit, len(data))
    return bytes(out)


def uncompressed_length(data: bytes) -> int:
    """The length the stream says it expands to (check it against a limit before decompressing)."""
    return _read_varint(data)[0]


def _read_varint(data: bytes) -> tuple[int, int]:
    n = shift = 0
    for i, b in enumerate(data[:5]):
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, i + 1
        shift += 7
    raise ValueError("snappy: bad length preamble")


def decompress(data: bytes) -> bytes:
    """Expand a snappy block; ``ValueError`` when the stream is corrupt."""
    want, pos = _read_varint(data)
    out = bytearray()
    while pos < len(data):
        tag = data[pos]
        kind = tag & 3
        pos += 1
        if kind == 0:
            n = tag >> 2
            if n >= 60:
                width = n - 59
                n = int.from_bytes(data[pos:pos + width], "little")
                pos += width
            n += 1
            if pos + n > len(data):
                raise ValueError("snappy: literal runs past the end")
            out += data[pos:pos + n]
            pos += n
            continue
        if kind == 1:
            length, offset = 4 + ((tag >> 2) & 7), ((tag >> 5) << 8) | data[pos]
            pos += 1
        else:
            width = 2 if kind == 2 else 4
            length, offset = (tag >> 2) + 1, int.from_bytes(data[pos:pos + width], "little")
            pos += width
        if offset == 0 or offset > len(out) or pos > len(data):
            raise ValueError("snappy: copy offset out of range")
        start = len(out) - offset
        if offset >= length:
            out += out[start:start + length]
        else:  # an overlapping copy repeats the last ``offset`` bytes
            for k in range(length):
                out.append(out[start + k])
        if len(out) > want:
            raise ValueError("snappy: output longer than announced")
    if len(out) != want:
        raise ValueError(f"snappy: expanded to {len(out)} bytes, announced {want}")
    return bytes(out)
