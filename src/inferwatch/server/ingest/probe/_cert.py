"""A certificate's ``notAfter`` read from its DER bytes (the standard library gives no parsed
certificate when verification is off, and ``probe_ssl_earliest_cert_expiry`` is wanted then too)."""

from __future__ import annotations

import calendar

__all__ = ["cert_not_after"]


def _item(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER item at ``pos``."""
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[pos:pos + n], "big")
        pos += n
    return tag, pos, pos + length


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out = []
    while start < end:
        item = _item(data, start)
        out.append(item)
        start = item[2]
    return out


def _time(tag: int, text: str) -> float:
    if tag == 0x17:  # UTCTime: YYMMDDHHMMSSZ, years 50-99 are 19xx (RFC 5280)
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    y, mo, d, h, mi, s = (int(text[i:j]) for i, j in ((0, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 14)))
    return float(calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)))


def cert_not_after(der: bytes) -> float | None:
    """The certificate's expiry in Unix seconds, or None when ``der`` is not a readable X.509 certificate."""
    try:
        _, start, end = _item(der, 0)  # Certificate
        _, tstart, tend = _children(der, start, end)[0]  # TBSCertificate
        fields = _children(der, tstart, tend)
        if fields[0][0] == 0xA0:  # [0] version
            fields = fields[1:]
        _, vstart, vend = fields[3]  # serial, signature, issuer, validity
        tag, s, e = _children(der, vstart, vend)[1]
        return _time(tag, der[s:e].decode("ascii"))
    except (IndexError, ValueError, UnicodeDecodeError):
        return None
