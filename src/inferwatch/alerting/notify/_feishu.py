"""Feishu / Lark (飞书) group robot: interactive cards, signed when the robot has a secret.

Signing: ``timestamp`` in seconds and ``sign`` = base64 of HMAC-SHA256 keyed by
``timestamp + "\\n" + secret`` over an empty message, both in the JSON body.
The card's header is coloured by tier (P0 red, P1 orange, P2 yellow, resolved
green); the dimension, tier and service are fields; buttons open the dashboard
and, when the notification carries one, the acknowledgement link. The request
body is at most 20 KB. Failures come as ``code``: 11232 (or a "frequency
limited" message: over 100 a minute or 5 a second) is retried later; 19021
(signature or timestamp), 19022 (IP), 19024 (keyword), 9499 (bad request) and
the rest are final.

With an app (``app_id``, ``app_secret``, ``chat_id``) instead of a robot, cards go
through the app's bot (``_feishu_app``) as shared cards, edited in place
(``_card_edits``): an acknowledgement shows who has it (no Acknowledge button,
header blue-grey), a resolution turns the card green, without a new message.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import replace
from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import service_error
from inferwatch.alerting._http import HttpClient, request_secrets
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._card_edits import CardEdits
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.alerting.notify._feishu_app import FEISHU_APP_MAX_BYTES, FeishuApp
from inferwatch.alerting.notify._message import Message, json_cost
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import FeishuReceiverSpec

__all__ = ["FEISHU_MAX_BYTES", "FEISHU_RETRYABLE", "FeishuNotifier", "feishu_sign"]

FEISHU_MAX_BYTES = 20 * 1024
"""The custom robot's request body limit ("请求体大小不能超过 20 KB")."""
FEISHU_RETRYABLE = frozenset({11232})
RATE_RETRY_S = 60.0
COLOURS = {"P0": "red", "P1": "orange", "P2": "yellow"}
_ACK = {"en": "Acknowledge", "zh-CN": "认领告警"}
ACK_NOTE = "Acknowledge: "  # the line the on-call work adds per firing group
ACKED_COLOUR = "wathet"


def feishu_sign(timestamp_s: int, secret: str) -> str:
    """The ``sign`` for ``timestamp_s`` (the robot's documented algorithm)."""
    key = f"{timestamp_s}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def _button(text: str, url: str, kind: str) -> dict[str, Any]:
    return {"tag": "button", "text": {"tag": "plain_text", "content": text}, "type": kind, "url": url}


class FeishuNotifier(ChatNotifier[FeishuReceiverSpec]):
    """Sends each notification as one interactive card."""

    kind = "feishu"

    def __init__(self, spec: FeishuReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC", clock: Clock | None = None) -> None:
        super().__init__(spec, http, external_url, language=spec.language or language, timezone=timezone)
        if not spec.app_id:
            self._needs(spec.url, "url")
        self._clock = clock or SystemClock()  # the signature needs the wall clock, not simulated time
        self.app = FeishuApp(spec, http, self._clock) if spec.app_id else None
        self._edits = CardEdits()  # an app's cards: edited when acknowledged or resolved

    def _card(self, msg: Message, content: str, ack_url: str, acked: bool = False) -> dict[str, Any]:
        s = self._spec
        title = msg.title
        if s.keywords and not any(k in title for k in s.keywords):
            title = f"{s.keywords[0]} {title}"
        colour = ("green" if msg.status == "resolved" else ACKED_COLOUR if acked
                  else COLOURS.get(msg.tier, "blue"))
        elements: list[dict[str, Any]] = []
        if msg.fields:
            elements.append({"tag": "div", "fields": [
                {"is_short": True, "text": {"tag": "lark_md", "content": f"**{k}**\n{v}"}}
                for k, v in msg.fields]})
        elements.append({"tag": "div", "text": {"tag": "lark_md", "content": content}})
        buttons = [_button(msg.words.dashboard, self._external_url, "primary")] if self._external_url else []
        if ack_url:
            buttons.append(_button(_ACK.get(self._language, _ACK["en"]), ack_url, "danger"))
        if buttons:
            elements.append({"tag": "action", "actions": buttons})
        config = {"wide_screen_mode": True, **({"update_multi": True} if self.app else {})}  # a shared card
        return {"config": config,
                "header": {"title": {"tag": "plain_text", "content": title}, "template": colour},
                "elements": elements}

    def _message(self, n: Notification) -> tuple[Message, str]:
        # the on-call acknowledgement link ("Acknowledge: URL" notes) becomes the card's button
        acks = [x for x in n.notes if x.startswith(ACK_NOTE)]
        ack_url = acks[0].removeprefix(ACK_NOTE).strip() if acks else ""
        n = replace(n, notes=tuple(x for x in n.notes if x not in acks)) if acks else n
        return self._render(n, markdown=True, header=False, link=False), ack_url

    def card(self, n: Notification) -> dict[str, Any]:
        """The card an app sends or edits for ``n`` (its body, with the card as a JSON string, fits)."""
        msg, ack_url = self._message(n)
        acked = n.kind == "acknowledged"
        shell = {"receive_id": self._spec.chat_id, "msg_type": "interactive",
                 "content": json.dumps(self._card(msg, "", ack_url, acked), ensure_ascii=False)}
        room = FEISHU_APP_MAX_BYTES - len(json.dumps(shell, ensure_ascii=False).encode())
        twice = lambda text: json_cost(json.dumps(text, ensure_ascii=False)[1:-1])  # noqa: E731
        return self._card(msg, msg.fit(room, cost=twice), ack_url, acked)

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body the robot is sent (signed when the robot has a secret)."""
        msg, ack_url = self._message(n)
        body: dict[str, Any] = {"msg_type": "interactive", "card": self._card(msg, "", ack_url)}
        if self._spec.secret is not None:
            ts = int(self._clock.now())
            body = {"timestamp": str(ts), "sign": feishu_sign(ts, self._spec.secret.reveal()), **body}
        room = FEISHU_MAX_BYTES - len(json.dumps(body, ensure_ascii=False).encode())
        keep = [k for k in self._spec.keywords[:1] if not any(x in msg.title for x in self._spec.keywords)]
        content = msg.fit(room, cost=json_cost, keep=keep)
        body["card"] = self._card(msg, content, ack_url)
        return body

    def notify(self, n: Notification) -> None:
        """POST the card (an app: or edit the group's card); a non-zero ``code`` raises ``NotifyError``."""
        if self.app is not None:
            app = self.app
            self._edits.notify(n, lambda m: app.send(self.card(m)),
                               lambda mid, m: app.edit(mid, self.card(m)))
            return
        assert self._spec.url is not None
        extra = [x for x in (self._spec.secret,) if x is not None]
        secrets = request_secrets(self._spec.url, {}, extra)
        body = json.dumps(self.body(n), ensure_ascii=False).encode()
        resp = self._http.request("POST", self._spec.url, secrets=extra, content=body,
                                  headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            answer = resp.json()
            code = int(answer.get("code", answer.get("StatusCode", -1)))
            text = str(answer.get("msg", answer.get("StatusMessage", "")))[:200]
        except (ValueError, AttributeError, TypeError):
            raise NotifyError("unreadable answer (not Feishu's JSON)", retryable=True) from None
        if code == 0:
            return
        limited = code in FEISHU_RETRYABLE or "frequency limited" in text
        err = service_error(code, text, FEISHU_RETRYABLE | ({code} if limited else set()), secrets)
        if limited:
            err.retry_after = RATE_RETRY_S
        raise err
