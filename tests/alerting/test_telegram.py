"""Telegram: the notifier against a fake of the Bot API's ``sendMessage`` (``serve``: test_chat_serve)."""

from __future__ import annotations

import typing

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import CHANNELS, build_notifier
from inferwatch.alerting.notify.fakes import FakeTelegram, LoopbackServer
from inferwatch.config import AlertingConfig, ReceiverSpec, TelegramReceiverSpec
from inferwatch.model import Labels, SimulatedClock

BOT = "123456:AAH-telegram-bot-token-for-tests"
CHAT = "-1001234567890"


def note(*alerts_, now: float = 10.0) -> Notification:  # type: ignore[no-untyped-def]
    g = AlertGroup('{}:{alertname="HighLatency"}', Labels({"alertname": "HighLatency"}), tuple(alerts_), now)
    return Notification("tg", (g,))


@pytest.fixture
def bot() -> typing.Iterator[tuple[FakeTelegram, LoopbackServer]]:
    fake = FakeTelegram(BOT, (CHAT, "@oncall_room"), SimulatedClock(0.0).now)
    server = LoopbackServer(fake).start()
    yield fake, server
    server.stop()


def _spec(server: LoopbackServer, **kw: typing.Any) -> TelegramReceiverSpec:
    token, chat = kw.pop("bot_token", BOT), kw.pop("chat_id", CHAT)
    return TelegramReceiverSpec(name="tg", bot_token=token, chat_id=chat, url=server.url, **kw)


def test_a_message_is_the_documented_send_message(bot: tuple[FakeTelegram, LoopbackServer]) -> None:
    fake, server = bot
    build_notifier(_spec(server, message_thread_id=7, disable_notification=True), HttpClient(), "http://dash",
                   None).notify(note(alert()))
    (body,) = fake.sent
    assert body["chat_id"] == CHAT and body["message_thread_id"] == 7 and body["disable_notification"] is True
    assert "HighLatency" in body["text"] and "http://dash" in body["text"] and "parse_mode" not in body


def test_an_alertmanager_message_template_is_sent_instead(bot: tuple[FakeTelegram, LoopbackServer]) -> None:
    # rule: telegram_configs.message from an alertmanager.yml, rendered on Alertmanager's data
    fake, server = bot
    lib = ('{{ define "t.line" }}{{ .Labels.instance }}={{ .Annotations.summary }}{{ end }}',)
    msg = ('{{ .Status | toUpper }} {{ .CommonLabels.alertname }}:'
           '{{ range .Alerts }} {{ template "t.line" . }}{{ end }}')
    build_notifier(_spec(server, message=msg, go_templates=lib), HttpClient(), "http://dash", None).notify(
        note(alert(instance="a"), alert(instance="b")))
    (body,) = fake.sent
    assert body["text"] == "FIRING HighLatency: a=HighLatency on ranker b=HighLatency on ranker"


def test_a_long_message_keeps_whole_alerts_under_the_limit(bot: tuple[FakeTelegram, LoopbackServer]) -> None:
    fake, server = bot
    many = [alert(instance=f"node-{i:04d}") for i in range(400)]
    build_notifier(_spec(server), HttpClient(), "http://dash", None).notify(note(*many))
    (body,) = fake.sent
    assert len(body["text"]) <= 4096 and "more" in body["text"] and "http://dash" in body["text"]


def test_failures_say_whether_to_retry_without_the_token(bot: tuple[FakeTelegram, LoopbackServer]) -> None:
    fake, server = bot
    with pytest.raises(NotifyError) as wrong:  # 401: a wrong token is not worth retrying
        wrong_token = _spec(server, bot_token="999:wrong-token-xyz")
        build_notifier(wrong_token, HttpClient(), "", None).notify(note(alert()))
    assert not wrong.value.retryable and "wrong-token-xyz" not in str(wrong.value)
    with pytest.raises(NotifyError) as lost:  # 400 chat not found
        build_notifier(_spec(server, chat_id="@nobody_here"), HttpClient(), "", None).notify(note(alert()))
    assert not lost.value.retryable and "chat not found" in str(lost.value)
    n = build_notifier(_spec(server), HttpClient(), "", None)
    for _ in range(20):
        n.notify(note(alert()))
    with pytest.raises(NotifyError) as busy:  # 429 with parameters.retry_after: retried
        n.notify(note(alert()))
    assert busy.value.retryable and BOT not in str(busy.value)
    assert len(fake.sent) == 20


def test_without_a_token_it_falls_back_to_the_terminal() -> None:
    warned: list[str] = []
    n = build_notifier(TelegramReceiverSpec(name="tg", chat_id=CHAT), HttpClient(), "", None, warned.append)
    n.notify(note(alert()))
    assert warned and "bot_token" in warned[0]


def test_a_chat_id_is_a_number_or_a_channel_name() -> None:
    with pytest.raises(ValueError, match="chat_id"):
        TelegramReceiverSpec(name="tg", chat_id="not a chat")


def test_every_receiver_type_of_the_config_is_built_by_the_registry() -> None:
    # rule: one table keyed by type; the config's receivers are typed by the union the registry makes,
    # in the registry's order (errors and the reference list the types so)
    field = AlertingConfig.model_fields["receivers"].annotation
    union = typing.get_args(typing.get_args(typing.get_args(field)[0])[0])
    assert [cls.model_fields["type"].default for cls in union] == list(CHANNELS)
    assert typing.get_args(field)[0] is ReceiverSpec
