"""DingTalk (钉钉) group robot: markdown to the webhook URL, signed when the robot has a secret.

Signing (the robot's "加签" security): ``timestamp`` is the current time in
milliseconds and ``sign`` the URL-encoded base64 HMAC-SHA256, keyed by the
secret, of ``timestamp + "\\n" + secret``; both go into the URL's query. The
robot answers HTTP 200 with an ``errcode``: 130101 / 410100 (over 20 messages
a minute, the robot is then throttled for 10 minutes) are retried later;
310000 (keyword, signature or IP check failed), 300001 (no such token),
460101 (over 20,000 bytes) and the rest are final.

In markdown a mention pings only when ``@mobile`` / ``@userid`` is in the text
as well as in ``at``: the mentions go in the last line, which is never cut.

With an app (``app_key``, ``app_secret``, ``robot_code``, ``open_conversation_id``)
instead of a robot, each page is an interactive card (``_dingtalk_app``) edited in
place (``_card_edits``): an acknowledgement puts who has it first and drops the
Acknowledge button, a resolution shows the recovery, without a new message.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from dataclasses import replace
from typing import Any

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._classify import service_error
from inferwatch.alerting._http import HttpClient, request_secrets
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._card_edits import CardEdits
from inferwatch.alerting.notify._chat import ChatNotifier
from inferwatch.alerting.notify._dingtalk_app import DingTalkApp
from inferwatch.alerting.notify._message import json_cost
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import DingTalkReceiverSpec, Secret

__all__ = ["DINGTALK_MAX_BYTES", "DINGTALK_RETRYABLE", "DingTalkNotifier", "dingtalk_sign"]

DINGTALK_MAX_BYTES = 20000
"""errcode 460101: "message too long, exceed 20000 bytes"."""
DINGTALK_RETRYABLE = frozenset({130101, 410100, -1})  # too fast (twice: old and new code), system busy
THROTTLE_S = 600.0  # "超过 20 条会限流 10 分钟": retrying sooner only meets the same answer
ACK_NOTE = "Acknowledge: "  # the line the on-call work adds per firing group: a card's button
_ACK = {"en": "Acknowledge", "zh-CN": "认领告警"}


def dingtalk_sign(timestamp_ms: int, secret: str) -> str:
    """The URL-encoded ``sign`` for ``timestamp_ms`` (the robot's documented algorithm)."""
    to_sign = f"{timestamp_ms}\n{secret}".encode()
    digest = hmac.new(secret.encode(), to_sign, hashlib.sha256).digest()
    return urllib.parse.quote_plus(base64.b64encode(digest))


class DingTalkNotifier(ChatNotifier[DingTalkReceiverSpec]):
    """Sends each notification as one markdown message."""

    kind = "dingtalk"

    def __init__(self, spec: DingTalkReceiverSpec, http: HttpClient, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC", clock: Clock | None = None) -> None:
        super().__init__(spec, http, external_url, language=spec.language or language, timezone=timezone)
        if not spec.app_key:
            self._needs(spec.url, "url")
        self._clock = clock or SystemClock()  # the signature needs the wall clock, not simulated time
        self.app = DingTalkApp(spec, http, self._clock) if spec.app_key else None
        self._edits = CardEdits()  # an app's cards: updated when acknowledged or resolved

    def _mentions(self) -> str:
        s = self._spec
        return " ".join([*(f"@{m}" for m in s.at_mobiles), *(f"@{u}" for u in s.at_user_ids)])

    def body(self, n: Notification) -> dict[str, Any]:
        """The JSON body the robot is sent."""
        s = self._spec
        msg = self._render(n, markdown=True)
        title = msg.title
        if s.keywords and not any(k in title for k in s.keywords):  # keyword security: one in every message
            title = f"{s.keywords[0]} {title}"
        keep = [x for x in (self._mentions(),) if x]
        body: dict[str, Any] = {"msgtype": "markdown", "markdown": {"title": title, "text": ""},
                                "at": {"atMobiles": list(s.at_mobiles), "atUserIds": list(s.at_user_ids),
                                       "isAtAll": s.at_all}}
        room = DINGTALK_MAX_BYTES - len(json.dumps(body, ensure_ascii=False).encode())
        # DingTalk's markdown needs a blank line to break a line; the limit counts the body's bytes
        text = msg.fit(room, sep="\n\n", cost=json_cost, keep=keep)
        if s.keywords and not any(k in text for k in s.keywords):
            text = msg.fit(room, sep="\n\n", cost=json_cost, keep=[s.keywords[0], *keep])
        body["markdown"]["text"] = text
        return body

    def signed_url(self) -> Secret:
        """The webhook URL, with ``timestamp`` and ``sign`` when the robot has a secret."""
        assert self._spec.url is not None
        url = self._spec.url.reveal()
        if self._spec.secret is None:
            return Secret(url)
        ts = int(self._clock.now() * 1000)
        sign = dingtalk_sign(ts, self._spec.secret.reveal())
        return Secret(f"{url}{'&' if '?' in url else '?'}timestamp={ts}&sign={sign}")

    def card(self, n: Notification) -> dict[str, Any]:
        """The ``StandardCard`` an app sends or updates for ``n`` (its ``cardData``)."""
        acks = [x for x in n.notes if x.startswith(ACK_NOTE)]
        n = replace(n, notes=tuple(x for x in n.notes if x not in acks)) if acks else n
        lines = [f"**{x}**" for x in n.notes] if n.kind == "acknowledged" else []  # who has it, first
        n = replace(n, notes=()) if lines else n
        msg = self._render(n, markdown=True, header=False, link=False)
        room = DINGTALK_MAX_BYTES - 1024 - sum(map(json_cost, lines))  # the frame's keys and buttons
        text = "\n\n".join([*lines, msg.fit(room, sep="\n\n", cost=json_cost)])
        buttons = [(msg.words.dashboard, self._external_url)] if self._external_url else []
        ack = _ACK.get(self._language, _ACK["en"])
        buttons += [(ack, a.removeprefix(ACK_NOTE).strip()) for a in acks[:1]]
        contents: list[dict[str, Any]] = [{"type": "markdown", "text": text, "id": "text"}]
        if buttons:
            contents.append({"type": "action", "id": "actions", "actions": [
                {"type": "button", "id": f"button_{i}", "label": {"type": "text", "text": label},
                 "actionType": "openLink", "url": {"all": url}, "status": "primary" if i == 0 else "normal"}
                for i, (label, url) in enumerate(buttons)]})
        return {"config": {"autoLayout": True, "enableForward": True},
                "header": {"title": {"type": "text", "text": msg.title}}, "contents": contents}

    def notify(self, n: Notification) -> None:
        """POST the message (an app: a card, or update the group's card); a non-zero ``errcode`` raises
        ``NotifyError``."""
        if self.app is not None:
            app = self.app
            self._edits.notify(n, lambda m: app.send(self.card(m)),
                               lambda biz, m: app.update(biz, self.card(m)))
            return
        url = self.signed_url()
        secrets = request_secrets(url, {}, [x for x in (self._spec.secret,) if x is not None])
        body = json.dumps(self.body(n), ensure_ascii=False).encode()
        resp = self._http.request("POST", url, content=body,
                                  headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            answer = resp.json()
            code = int(answer.get("errcode", -1))
        except (ValueError, AttributeError, TypeError):
            raise NotifyError("unreadable answer (not DingTalk's JSON)", retryable=True) from None
        if code != 0:
            err = service_error(code, str(answer.get("errmsg", ""))[:200], DINGTALK_RETRYABLE, secrets)
            if code in (130101, 410100):
                err.retry_after = THROTTLE_S
            raise err
