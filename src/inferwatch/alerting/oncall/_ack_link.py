"""One-click acknowledgement links: ``/ack?group=ID&sig=HMAC`` under the server's external URL.

The signature is an HMAC of the group's id with a key only the server holds
(``data_dir/ack_key``), so a link acknowledges that one group and nothing
else, and carries no API token. A link stays valid while its group exists;
acknowledging a group that already resolved answers that it resolved.
"""

from __future__ import annotations

import hmac
from dataclasses import replace
from urllib.parse import urlencode

from inferwatch.alerting._notification import Notification
from inferwatch.alerting.oncall._acks import group_id, link_signature

__all__ = ["ACK_LINK_PATH", "AckLinks"]

ACK_LINK_PATH = "/api/v1/alerts/ack/link"


class AckLinks:
    """Signs and checks links; adds an "Acknowledge:" line to notifications of firing groups."""

    def __init__(self, external_url: str, key: bytes | None) -> None:
        self._base = external_url.rstrip("/")
        self._key = key

    @property
    def enabled(self) -> bool:
        """Links need both a key and a URL the receiver can open."""
        return bool(self._key and self._base)

    def url(self, group_key: str) -> str:
        """The link for a group (``""`` when links are off)."""
        if not self.enabled or self._key is None:
            return ""
        gid = group_id(group_key)
        query = urlencode({"group": gid, "sig": link_signature(self._key, gid)})
        return f"{self._base}{ACK_LINK_PATH}?{query}"

    def verify(self, gid: str, sig: str) -> bool:
        """Whether ``sig`` is this server's signature of group ``gid``."""
        if self._key is None:
            return False
        return hmac.compare_digest(link_signature(self._key, gid).encode(), sig.encode())

    def add(self, n: Notification) -> Notification:
        """``n`` with an acknowledgement line per firing group (unchanged when links are off)."""
        if not self.enabled or n.kind != "alerts":
            return n
        lines = tuple(f"Acknowledge: {self.url(g.key)}" for g in n.groups if g.firing())
        return replace(n, notes=n.notes + tuple(x for x in lines if x not in n.notes))
