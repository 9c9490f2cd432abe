"""Which card carried each group's page, so an acknowledgement or a resolution edits it in place.

Chat apps (Feishu's IM API, DingTalk's robot interactive cards) can change a card
they sent; a group robot's webhook cannot. ``CardEdits`` remembers the card of each
firing group's last page (in this process, the oldest forgotten past ``KEEP_CARDS``):
a notification of kind ``acknowledged``, or one whose groups all resolved, edits
those cards (a resolved group's card is then forgotten) instead of sending a new
one. A group with no card here (a restart, the HA peer sent the page) or whose
card can no longer be edited (a final error) gets a new card.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._notification import Notification

__all__ = ["KEEP_CARDS", "CardEdits"]

KEEP_CARDS = 10_000


class CardEdits:
    """``notify(n, send, edit)``: ``send(n)`` posts a card and returns its id; ``edit(id, n)`` replaces it."""

    def __init__(self) -> None:
        self._cards: OrderedDict[str, str] = OrderedDict()  # group key -> id of its last page's card
        self._lock = threading.Lock()  # attempts of several groups run at once

    def notify(self, n: Notification, send: Callable[[Notification], str],
               edit: Callable[[str, Notification], None]) -> None:
        """Edit the groups' cards when ``n`` says they were acknowledged or resolved, else send one."""
        with self._lock:
            ids = [self._cards.get(g.key) for g in n.groups]
        news = n.kind == "acknowledged" or not any(g.firing() for g in n.groups)
        if news and n.groups and all(ids) and self._edit(n, [str(i) for i in ids], edit):
            return
        card = send(n)
        with self._lock:
            for g in n.groups if n.kind == "alerts" else ():
                if g.firing():
                    self._cards[g.key] = card
                    self._cards.move_to_end(g.key)
            while len(self._cards) > KEEP_CARDS:
                self._cards.popitem(last=False)

    def _edit(self, n: Notification, ids: list[str], edit: Callable[[str, Notification], None]) -> bool:
        for g, card in zip(n.groups, ids, strict=True):
            try:
                edit(card, replace(n, groups=(g,)))
            except NotifyError as exc:
                if exc.retryable:
                    raise
                return False  # gone, too old, not editable: a new card says it
            if not g.firing():
                with self._lock:
                    self._cards.pop(g.key, None)
        return True
