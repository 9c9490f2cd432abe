"""Google Chat: the notifier against a fake of a space's webhook, and through the config.

``serve`` delivers to it in test_chat_serve. The channel's spec lives in its notify module: these
tests reach it through the registry and the config, as users do.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import CHANNELS, build_notifier
from inferwatch.alerting.notify.fakes import FakeGoogleChat, LoopbackServer
from inferwatch.config import parse_config
from inferwatch.model import Labels, SimulatedClock

SPACE, KEY, SECRET = "AAAAbcdEfgh", "AIzaSy-google-chat-key-for-tests", "google-chat-token-for-tests"
Spec = CHANNELS["google_chat"].spec


def note(*alerts_: typing.Any, now: float = 10.0) -> Notification:
    g = AlertGroup('{}:{alertname="HighLatency"}', Labels({"alertname": "HighLatency"}), tuple(alerts_), now)
    return Notification("gc", (g,))


@pytest.fixture
def space() -> typing.Iterator[tuple[FakeGoogleChat, LoopbackServer]]:
    clock = SimulatedClock(0.0)
    fake = FakeGoogleChat(SPACE, KEY, SECRET, clock.now)
    server = LoopbackServer(fake).start()
    yield fake, server
    server.stop()


def _notifier(server: LoopbackServer) -> typing.Any:
    return build_notifier(Spec(name="gc", webhook_url=_url(server)), HttpClient(), "http://dash", None)


def _url(server: LoopbackServer, key: str = KEY, token: str = SECRET, space: str = SPACE) -> str:
    return f"{server.url}/v1/spaces/{space}/messages?key={key}&token={token}"


def test_a_message_is_the_documented_webhook_message(space: tuple[FakeGoogleChat, LoopbackServer]) -> None:
    fake, server = space
    pinged = alert(service="<users/all> <http://evil|click>")
    _notifier(server).notify(note(pinged))
    (body,) = fake.sent
    assert set(body) == {"text"} and "HighLatency" in body["text"] and "http://dash" in body["text"]
    assert "<users/all>" not in body["text"] and "<\u200busers/all>" in body["text"]  # shown, pings no one


def test_a_long_message_keeps_whole_alerts_under_the_limit(
        space: tuple[FakeGoogleChat, LoopbackServer]) -> None:
    fake, server = space
    many = [alert(instance=f"node-{i:04d}") for i in range(300)]
    _notifier(server).notify(note(*many))
    (body,) = fake.sent
    assert len(body["text"].encode()) <= 4096 and "more" in body["text"] and "http://dash" in body["text"]


def test_failures_say_whether_to_retry_without_the_key_or_token(
        space: tuple[FakeGoogleChat, LoopbackServer]) -> None:
    fake, server = space
    for url in (_url(server, key="AIza-wrong-key-xyz"), _url(server, token="wrong-token-xyz"),
                _url(server, space="nosuchspace")):  # 400, 401, 404: not worth retrying
        with pytest.raises(NotifyError) as wrong:
            build_notifier(Spec(name="gc", webhook_url=url), HttpClient(), "", None).notify(note(alert()))
        assert not wrong.value.retryable and "wrong-key-xyz" not in str(wrong.value)
        assert "wrong-token-xyz" not in str(wrong.value)
    n = build_notifier(Spec(name="gc", webhook_url=_url(server)), HttpClient(), "", None)
    n.notify(note(alert()))
    with pytest.raises(NotifyError) as busy:  # 429 RESOURCE_EXHAUSTED within the same second: retried
        n.notify(note(alert()))
    assert busy.value.retryable and SECRET not in str(busy.value) and KEY not in str(busy.value)
    assert len(fake.sent) == 1


def test_the_config_takes_it_and_refuses_a_url_without_key_and_token() -> None:
    cfg = parse_config("""
alerting:
  route: {receiver: gc}
  receivers: [{name: gc, type: google_chat}]
""")
    (gc,) = cfg.alerting.receivers
    assert gc.type == "google_chat" and isinstance(gc, Spec)
    warned: list[str] = []
    build_notifier(gc, HttpClient(), "", None, warned.append).notify(note(alert()))
    assert warned and "webhook_url" in warned[0]  # no URL: the terminal, said once
    with pytest.raises(ConfigError, match=r"full webhook URL, such as https://chat\.googleapis\.com") as bad:
        parse_config("alerting: {receivers: [{name: gc, type: google_chat, "
                     "webhook_url: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k-secret-xyz'}]}")
    assert "k-secret-xyz" not in str(bad.value)


def test_the_config_names_no_receiver_type() -> None:
    # rule: a channel is its module, its fake and its registry line; the config's union comes from the
    # registry, so no module of the config (nor of its sections) names the new type
    src = Path(__file__).resolve().parents[2] / "src" / "inferwatch"
    named = [p for d in ("config", "settings") for p in (src / d).rglob("*.py")
             if "google_chat" in p.read_text("utf-8")]
    assert named == []
    assert CHANNELS["google_chat"].spec.__module__ == "inferwatch.alerting.notify._google_chat"
