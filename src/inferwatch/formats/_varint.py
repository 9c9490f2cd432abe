"""The base-128 varint both protobuf and snappy write (lengths, tags, integers)."""

from __future__ import annotations

__all__ = ["varint"]


def varint(n: int) -> bytes:
    """``n`` as a varint; a negative ``n`` as protobuf writes an int64 (two's complement, ten bytes).

    >>> varint(300).hex(), len(varint(-1))
    ('ac02', 10)
    """
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
