"""Loopback fakes of the platforms teams in China use, shipped for tests and demos.

Each checks requests as the platform documents them (signature, JSON shape, size,
rate) and answers with its error codes. For example::

    from inferwatch.alerting.notify.fakes import FakeDingTalk, LoopbackServer
    robot = FakeDingTalk("TOKEN", "SECsecret", time.time)
    server = LoopbackServer(robot).start()   # url: server.url + "/robot/send?access_token=TOKEN"
"""

from inferwatch.alerting.notify.fakes._base import FakeRequest, LoopbackServer, Reply, Window
from inferwatch.alerting.notify.fakes._cloud import FakeAliyun, FakeTencent
from inferwatch.alerting.notify.fakes._dingtalk_app import FakeDingTalkApp
from inferwatch.alerting.notify.fakes._discord import FakeDiscord
from inferwatch.alerting.notify.fakes._feishu_app import FakeFeishuApp
from inferwatch.alerting.notify.fakes._google_chat import FakeGoogleChat
from inferwatch.alerting.notify.fakes._robots import FakeDingTalk, FakeFeishu, FakeWeComApp
from inferwatch.alerting.notify.fakes._telegram import FakeTelegram

__all__ = ["FakeAliyun", "FakeDingTalk", "FakeDingTalkApp", "FakeDiscord", "FakeFeishu", "FakeFeishuApp",
           "FakeGoogleChat", "FakeRequest", "FakeTelegram", "FakeTencent", "FakeWeComApp", "LoopbackServer",
           "Reply", "Window"]
