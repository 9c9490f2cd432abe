"""Signed links: a URL that is its own credential for one purpose, one group, one episode, until it expires.

A link carries its claims in the query (``group``, ``episode``, ``expires``)
and an HMAC over them and its purpose (``sig``), with a key only the server
holds. So a link made for acknowledging is refused for anything else, a link
from an earlier episode of the same group is refused once the group resolved
and fired again, and every link stops working at its expiry.

>>> signer = LinkSigner(b"k" * 32)
>>> params = signer.sign(LinkClaims("ack", "a1b2", "e1", 100.0))
>>> signer.verify(params, "ack", now=50.0).episode
'e1'
>>> signer.verify(params, "page", now=50.0)
Traceback (most recent call last):
...
inferwatch.alerting.oncall._signed_link.LinkRefused: link: not valid (bad signature)
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Mapping
from dataclasses import dataclass

from inferwatch._exceptions import InputError

__all__ = ["LINK_TTL_S", "LinkClaims", "LinkRefused", "LinkSigner"]

LINK_TTL_S = 86400.0  # a link outlives no episode, and no link lives longer than a day


class LinkRefused(InputError):
    """A signed link that does not hold: bad signature, another purpose, expired, or its episode is over."""


@dataclass(frozen=True, slots=True)
class LinkClaims:
    """What a link grants: ``purpose`` on group ``group`` during episode ``episode``, until ``expires``."""

    purpose: str
    group: str
    episode: str
    expires: float

    def params(self) -> dict[str, str]:
        """The query parameters that carry the claims (the purpose is only signed, never sent)."""
        return {"group": self.group, "episode": self.episode, "expires": str(int(self.expires))}


class LinkSigner:
    """Signs claims into query parameters and checks them back."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _sig(self, c: LinkClaims) -> str:
        msg = "\n".join((c.purpose, c.group, c.episode, str(int(c.expires))))
        return hmac.new(self._key, msg.encode(), hashlib.sha256).hexdigest()[:32]

    def sign(self, claims: LinkClaims) -> dict[str, str]:
        """The query parameters of a link granting ``claims`` (``sig`` last)."""
        return {**claims.params(), "sig": self._sig(claims)}

    def verify(self, params: Mapping[str, str], purpose: str, now: float) -> LinkClaims:
        """The claims of a link valid for ``purpose`` at ``now`` (``LinkRefused`` saying why not)."""
        raw = params.get("expires", "")
        try:
            expires = float(int(raw)) if len(raw) <= 16 else math.nan
        except ValueError:
            raise LinkRefused("link: not valid (no expiry)") from None
        claims = LinkClaims(purpose, params.get("group", ""), params.get("episode", ""), expires)
        if not claims.group or not claims.episode or not math.isfinite(expires):
            raise LinkRefused("link: not valid (incomplete)")
        if not hmac.compare_digest(self._sig(claims).encode(), params.get("sig", "").encode()):
            raise LinkRefused("link: not valid (bad signature)")
        if now >= expires:
            raise LinkRefused("link: expired")
        return claims
