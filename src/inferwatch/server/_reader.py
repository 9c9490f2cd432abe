"""Who is reading: whether a request carries the server's token (reads open to anyone show less)."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from inferwatch.config import Secret

__all__ = ["bearer_ok"]


def bearer_ok(request: Request, token: Secret | None) -> bool:
    """Whether ``request`` has ``Authorization: Bearer <token>`` (compared in constant time)."""
    if token is None:
        return False
    got = request.headers.get("authorization", "")
    return hmac.compare_digest(got.encode(), f"Bearer {token.reveal()}".encode())
