"""The chat channels through ``serve``: one P0 reaches Discord's, Telegram's and Google Chat's fakes.

One serve for the three (routes with ``continue``), each fake checking its request as documented;
the notifiers' own cases are in each channel's test module.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.server._webhook import serve_p0

from alerting.test_serve_delivery import TOKEN
from inferwatch.alerting.notify.fakes import FakeDiscord, FakeGoogleChat, FakeTelegram, LoopbackServer

HOOK, DISCORD = "1122334455", "discord-webhook-token-for-tests"
BOT, CHAT = "123456:AAH-telegram-bot-token-for-tests", "-1001234567890"
SPACE, KEY, GCHAT = "AAAAbcdEfgh", "AIzaSy-google-chat-key-for-tests", "google-chat-token-for-tests"


@pytest.mark.slow
def test_serve_delivers_one_p0_to_each_chat_webhook(tmp_path: Path) -> None:
    discord, telegram = FakeDiscord(HOOK, DISCORD, time.time), FakeTelegram(BOT, (CHAT,), time.time)
    chat = FakeGoogleChat(SPACE, KEY, GCHAT, time.time)
    servers = [LoopbackServer(f).start() for f in (discord, telegram, chat)]
    d, t, g = (s.url for s in servers)
    receivers = [f"{{name: r0, type: discord, webhook_url: '{d}/api/webhooks/{HOOK}/{DISCORD}'}}",
                 f"{{name: r1, type: telegram, bot_token: '{BOT}', chat_id: '{CHAT}', url: '{t}'}}",
                 f"{{name: r2, type: google_chat, webhook_url: '{g}/v1/spaces/{SPACE}/messages"
                 f"?key={KEY}&token={GCHAT}'}}"]
    try:
        err = serve_p0(tmp_path, receivers, [s.got for s in servers], TOKEN)
    finally:
        for s in servers:
            s.stop()
    assert "Traceback" not in err and not any(x in err for x in (DISCORD, BOT, KEY, GCHAT)), err
    (body,) = discord.sent
    assert "ServiceUnavailable" in body["content"] and body["allowed_mentions"] == {"parse": []}
    (body,) = telegram.sent
    assert body["chat_id"] == CHAT and "ServiceUnavailable" in body["text"]
    (body,) = chat.sent
    assert set(body) == {"text"} and "ServiceUnavailable" in body["text"]
