"""What every chat channel's notifier shares: its name, spec, HTTP client, dashboard link, language and zone.

WeCom, the WeCom application, DingTalk, Feishu, Slack, Telegram and Discord each post one message a
notification; a channel's notifier says what credential it cannot work without (``_needs``: without
it the registry falls back to the terminal) and what its request looks like, and renders the
message through ``_render`` in the receiver's language, zone and template.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._message import Message, render
from inferwatch.settings.receivers import ReceiverBase

__all__ = ["ChatNotifier"]

S = TypeVar("S", bound=ReceiverBase)
V = TypeVar("V")


class ChatNotifier(Generic[S]):
    """The frame of a chat channel's notifier; ``kind`` names the channel in ``name`` (``slack[ops]``)."""

    kind: ClassVar[str]

    def __init__(self, spec: S, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        self.name = f"{self.kind}[{spec.name}]"
        self._spec, self._http, self._external_url = spec, http, external_url
        self._language, self._timezone = language, timezone

    def _needs(self, value: V | None, field: str) -> V:
        """``value``; when it is missing, an error naming ``field`` (the receiver then prints instead)."""
        if value is None:
            raise MissingCredentialError(self.name, field)
        return value

    def _render(self, n: Notification, *, markdown: bool, header: bool = True, link: bool = True) -> Message:
        """``n`` as this receiver shows it; ``link=False`` leaves the dashboard link to a button."""
        return render(n, language=self._language, timezone=self._timezone,
                      external_url=self._external_url if link else "", markdown=markdown, header=header,
                      template=self._spec.template)
