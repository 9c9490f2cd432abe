"""One-click acknowledgement links under the server's external URL, bound to one firing episode.

A link is signed (``LinkSigner``, purpose ``ack``) for one group, the group's
current episode and an expiry (12 to 24 hours after it was sent), with a key
only the server holds (``data_dir/ack_key``). It carries no API token. It is
refused once its episode ended (the group resolved, even if it fired again),
after its expiry, and for any other purpose. Reads open to anyone show the
link hidden (``redact_ack_links``): only the receivers it was sent to, and
readers holding a token, see it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import urlencode

from inferwatch.alerting._notification import Notification
from inferwatch.alerting.oncall._acks import group_id
from inferwatch.alerting.oncall._episode_ids import EpisodeIds
from inferwatch.alerting.oncall._signed_link import LINK_TTL_S, LinkClaims, LinkRefused, LinkSigner

__all__ = ["ACK_LINK_PATH", "ACK_PURPOSE", "LINK_ACTIONS", "AckLinks", "redact_ack_links"]

ACK_LINK_PATH = "/api/v1/alerts/ack/link"
ACK_PURPOSE = "ack"
LINK_ACTIONS = (ACK_PURPOSE, "escalate", "silence")
"""What the incident page a link opens can do: each button posts claims signed for its own purpose."""
_LINK = re.compile(r"\S*" + re.escape(ACK_LINK_PATH) + r"\?\S*")
HIDDEN = "<acknowledgement link hidden: read with the API token to see it>"


def redact_ack_links(notes: list[str] | tuple[str, ...]) -> list[str]:
    """``notes`` with every acknowledgement link replaced by a placeholder (for unauthenticated reads)."""
    return [_LINK.sub(HIDDEN, n) for n in notes]


class AckLinks:
    """Signs and checks links; adds an "Acknowledge:" line to notifications of firing groups."""

    def __init__(self, external_url: str, key: bytes | None, episodes: EpisodeIds,
                 ttl: float = LINK_TTL_S) -> None:
        self._base = external_url.rstrip("/")
        self._signer = LinkSigner(key) if key else None
        self._episodes, self._ttl = episodes, ttl

    @property
    def enabled(self) -> bool:
        """Links need both a key and a URL the receiver can open."""
        return bool(self._signer and self._base)

    def url(self, group_key: str, now: float) -> str:
        """The link for the group's current episode, valid ``ttl/2`` to ``ttl`` from ``now`` (``""``: off)."""
        if not self.enabled or self._signer is None:
            return ""
        episode, began = self._episodes.begin(group_key, now)
        # The expiry steps by half the ttl from the episode's start, so a link sent at any time
        # has between ttl/2 and ttl left, and two flushes in one step carry the same link (the
        # outbox sees the same notification, keeps its id and sends no second copy).
        half = self._ttl / 2
        expires = began + half * (math.floor(max(now - began, 0.0) / half) + 2)
        claims = LinkClaims(ACK_PURPOSE, group_id(group_key), episode, expires)
        return f"{self._base}{ACK_LINK_PATH}?{urlencode(self._signer.sign(claims))}"

    def verify(self, params: Mapping[str, str], group_keys: Mapping[str, str], now: float,
               purpose: str = ACK_PURPOSE) -> str:
        """The group key a link for ``purpose`` holds for at ``now`` (``LinkRefused`` saying why not).

        ``group_keys`` maps the public ids of the live groups to their keys.
        """
        if self._signer is None:
            raise LinkRefused("link: not valid (links are off)")
        if purpose not in LINK_ACTIONS:
            raise LinkRefused(f"link: not valid (no such action {purpose[:32]!r})")
        claims = self._signer.verify(params, purpose, now)
        key = group_keys.get(claims.group)
        if key is None or self._episodes.current(key) != claims.episode:
            raise LinkRefused("link: its alert episode is over (the group resolved)")
        return key

    def for_purpose(self, params: Mapping[str, str], purpose: str, now: float,
                    source: str = ACK_PURPOSE) -> dict[str, str]:
        """The claims of a valid link for ``source`` signed again for ``purpose`` (both of
        ``LINK_ACTIONS``): same group, episode and expiry, so each button of the incident page
        does one thing, and all end with the link."""
        if self._signer is None or {purpose, source} - set(LINK_ACTIONS):
            raise LinkRefused("link: not valid (no such action)")
        c = self._signer.verify(params, source, now)
        return self._signer.sign(LinkClaims(purpose, c.group, c.episode, c.expires))

    def add(self, n: Notification, now: float) -> Notification:
        """``n`` with an acknowledgement line per firing group (unchanged when links are off)."""
        if not self.enabled or n.kind != "alerts":
            return n
        has = " ".join(n.notes)
        lines = tuple(f"Acknowledge: {self.url(g.key, now)}" for g in n.groups
                      if g.firing() and f"group={group_id(g.key)}&" not in has)
        return replace(n, notes=n.notes + lines)
