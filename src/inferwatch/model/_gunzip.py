"""One bounded gunzip for every way in (edge ingest, OTLP metrics and traces): a zip bomb stops at the limit.

>>> import gzip
>>> gunzip_bounded(gzip.compress(b"abc"), 10)
b'abc'
>>> gunzip_bounded(gzip.compress(b"x" * 100), 10)
Traceback (most recent call last):
...
inferwatch.model._gunzip.GunzipError: body: more than 10 bytes once decompressed
"""

from __future__ import annotations

import zlib

from inferwatch._exceptions import InputError

__all__ = ["GunzipError", "gunzip_bounded"]


class GunzipError(InputError):
    """A gzip body that is damaged, truncated, or larger than allowed once decompressed."""

    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large
        """The body decompresses past the limit (HTTP 413, not 400)."""


def gunzip_bounded(body: bytes, limit: int) -> bytes:
    """``body`` decompressed, never more than ``limit`` bytes of it; ``GunzipError`` otherwise."""
    inflate = zlib.decompressobj(wbits=31)  # gzip framing only
    try:
        out = inflate.decompress(body, limit + 1)  # one byte past the limit tells "too large"
    except zlib.error as exc:
        raise GunzipError(f"invalid gzip body: not gzip data ({exc})") from None
    if len(out) > limit:
        raise GunzipError(f"body: more than {limit} bytes once decompressed", too_large=True)
    if not inflate.eof:
        raise GunzipError("invalid gzip body: truncated (the gzip stream does not end)")
    return out
