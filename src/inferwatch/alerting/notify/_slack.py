"""Slack incoming webhook: ``{"text": ...}``; Slack answers ``ok``. With ``title``/``text`` Go templates
(an alertmanager.yml's), one attachment per group, rendered as Alertmanager renders them.

Slack parses ``&``, ``<`` and ``>`` as control characters (``<!channel>``,
``<@U123>``, ``<url|text>``) and asks that text not meant for that be sent as
``&amp;``, ``&lt;`` and ``&gt;`` — only those three. So a label value can never
ping a channel or a user, nor disguise a link.
"""

from __future__ import annotations

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.alerting.notify._template import notification_text, truncate_utf8, webhook_payload
from inferwatch.settings import SlackReceiverSpec, template_data

__all__ = ["SlackNotifier", "slack_escape"]

# Slack truncates messages over 40,000 characters; stay well below.
_SLACK_MAX_BYTES = 39000


def slack_escape(text: str) -> str:
    """Escape Slack's three control characters.

    >>> slack_escape("a<!channel> & <@U1>")
    'a&lt;!channel&gt; &amp; &lt;@U1&gt;'
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SlackNotifier(ChatNotifier[SlackReceiverSpec]):
    """Posts each notification as one message."""

    kind = "slack"

    def __init__(self, spec: SlackReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        super().__init__(spec, http, external_url, language=language, timezone=timezone)
        self._url = self._needs(spec.webhook_url, "webhook_url")
        self._title, self._text = spec.go_template("title"), spec.go_template("text")

    def text(self, n: Notification) -> str:
        """The message text, escaped, then cut (never inside an entity)."""
        text = notification_text(n, markdown=False, external_url=self._external_url, language=self._language,
                                 timezone=self._timezone)
        room = _SLACK_MAX_BYTES
        while True:  # escaping makes the text longer: cut the raw text until the escaped one fits
            escaped = slack_escape(truncate_utf8(text, room, "…(truncated)"))
            excess = len(escaped.encode()) - _SLACK_MAX_BYTES
            if excess <= 0:
                return escaped
            room -= excess

    def notify(self, n: Notification) -> None:
        """POST the text (errors come as 4xx with a word such as ``invalid_payload``)."""
        if self._title is None and self._text is None:
            self._http.request("POST", self._url, json={"text": self.text(n)})
            return
        for g in n.groups:  # Alertmanager's templates: one attachment per group, rendered as it would
            data = template_data(webhook_payload(self._spec.name, g, self._external_url))
            attachment = {k: t.render(data) for k, t in (("title", self._title), ("text", self._text)) if t}
            self._http.request("POST", self._url, json={"attachments": [attachment]})
