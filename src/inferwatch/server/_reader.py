"""Who is reading or writing, as the routes ask it: the access gate's decision, or (an app built
without the gate: the routes alone, in tests) whether the request carries the server's token."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from inferwatch.config import Role, Secret
from inferwatch.server.access import GATED, PRINCIPAL, grants

__all__ = ["actor", "bearer_ok", "may", "write_allowed"]


def bearer_ok(request: Request, token: Secret | None) -> bool:
    """Whether ``request`` has ``Authorization: Bearer <token>`` (compared in constant time)."""
    if token is None:
        return False
    got = request.headers.get("authorization", "")
    return hmac.compare_digest(got.encode(), f"Bearer {token.reveal()}".encode())


def write_allowed(request: Request, token: Secret | None) -> bool:
    """Whether a write may go on: the gate let it through (it checked the role), else the token."""
    return bool(request.scope.get(GATED)) or bearer_ok(request, token)


def may(request: Request, role: Role, token: Secret | None) -> bool:
    """Whether the caller has ``role`` (behind the gate), else whether it carries the token."""
    if request.scope.get(GATED):
        principal = request.scope.get(PRINCIPAL)
        return principal is not None and grants(principal.role, role)
    return bearer_ok(request, token)


def actor(request: Request, claimed: str) -> str:
    """Who did a write, for the history: what the body claims, and the caller that sent it.

    ``"alice [token 'oncall-bot' (responder)]"``; the claim alone without a gate or caller.
    """
    principal = request.scope.get(PRINCIPAL)
    if principal is None:
        return claimed
    who = principal.describe()
    return f"{claimed} [{who}]" if claimed and claimed != principal.name else who
