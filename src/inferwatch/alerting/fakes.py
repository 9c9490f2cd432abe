"""The shipped fakes at their first public path; they live in :mod:`inferwatch.alerting.notify.fakes`."""

from inferwatch.alerting.notify.fakes import (
    FakeAliyun,
    FakeDingTalk,
    FakeFeishu,
    FakeRequest,
    FakeTencent,
    FakeWeComApp,
    LoopbackServer,
    Reply,
    Window,
)

__all__ = ["FakeAliyun", "FakeDingTalk", "FakeFeishu", "FakeRequest", "FakeTencent", "FakeWeComApp",
           "LoopbackServer", "Reply", "Window"]
