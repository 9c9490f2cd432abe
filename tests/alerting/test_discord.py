"""Discord: the notifier against a fake of Execute Webhook; through ``serve`` in test_chat_serve."""

from __future__ import annotations

import typing

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import build_notifier
from inferwatch.alerting.notify.fakes import FakeDiscord, LoopbackServer
from inferwatch.config import DiscordReceiverSpec
from inferwatch.model import Labels, SimulatedClock

HOOK, SECRET = "1122334455", "discord-webhook-token-for-tests"


def note(*alerts_: typing.Any, now: float = 10.0) -> Notification:
    g = AlertGroup('{}:{alertname="HighLatency"}', Labels({"alertname": "HighLatency"}), tuple(alerts_), now)
    return Notification("dc", (g,))


@pytest.fixture
def hook() -> typing.Iterator[tuple[FakeDiscord, LoopbackServer]]:
    fake = FakeDiscord(HOOK, SECRET, SimulatedClock(0.0).now)
    server = LoopbackServer(fake).start()
    yield fake, server
    server.stop()


def _spec(server: LoopbackServer, token: str = SECRET, **kw: typing.Any) -> DiscordReceiverSpec:
    return DiscordReceiverSpec(name="dc", webhook_url=f"{server.url}/api/webhooks/{HOOK}/{token}", **kw)


def test_a_message_is_the_documented_execute_webhook(hook: tuple[FakeDiscord, LoopbackServer]) -> None:
    fake, server = hook
    pinged = alert(service="@everyone [click](http://evil)")
    n = build_notifier(_spec(server, username="inferwatch"), HttpClient(), "http://dash", None)
    n.notify(note(pinged))
    (body,) = fake.sent
    assert body["allowed_mentions"] == {"parse": []} and body["username"] == "inferwatch"
    assert "HighLatency" in body["content"] and "http://dash" in body["content"]
    assert r"\[click\]\(http://evil\)" in body["content"]  # shown as typed, not a link


def test_a_long_message_keeps_whole_alerts_under_the_limit(hook: tuple[FakeDiscord, LoopbackServer]) -> None:
    fake, server = hook
    many = [alert(instance=f"node_{i:04d}") for i in range(200)]
    build_notifier(_spec(server), HttpClient(), "http://dash", None).notify(note(*many))
    (body,) = fake.sent
    assert len(body["content"]) <= 2000 and "more" in body["content"] and "http://dash" in body["content"]


def test_failures_say_whether_to_retry_without_the_token(hook: tuple[FakeDiscord, LoopbackServer]) -> None:
    fake, server = hook
    with pytest.raises(NotifyError) as wrong:  # 404 Unknown Webhook: not worth retrying
        build_notifier(_spec(server, token="wrong-token-xyz"), HttpClient(), "", None).notify(note(alert()))
    assert not wrong.value.retryable and "wrong-token-xyz" not in str(wrong.value)
    n = build_notifier(_spec(server), HttpClient(), "", None)
    for _ in range(5):
        n.notify(note(alert()))
    with pytest.raises(NotifyError) as busy:  # 429 with retry_after: retried
        n.notify(note(alert()))
    assert busy.value.retryable and SECRET not in str(busy.value)
    assert len(fake.sent) == 5


def test_without_a_webhook_it_falls_back_to_the_terminal_and_a_bad_url_is_refused() -> None:
    warned: list[str] = []
    n = build_notifier(DiscordReceiverSpec(name="dc"), HttpClient(), "", None, warned.append)
    n.notify(note(alert()))
    assert warned and "webhook_url" in warned[0]
    with pytest.raises(ValueError, match="full webhook URL, such as https://discord"):
        DiscordReceiverSpec(name="dc", webhook_url="discord.com-secret-token")
