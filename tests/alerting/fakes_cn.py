"""The platform fakes of the China channels: shipped in ``inferwatch.alerting.fakes``."""

from inferwatch.alerting.fakes import FakeAliyun, FakeDingTalk, FakeFeishu, FakeTencent, FakeWeComApp

__all__ = ["FakeAliyun", "FakeDingTalk", "FakeFeishu", "FakeTencent", "FakeWeComApp"]
