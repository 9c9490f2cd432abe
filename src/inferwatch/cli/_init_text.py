"""What ``inferwatch init`` says and writes, in each language it speaks (English, 简体中文)."""

from __future__ import annotations

__all__ = ["EXTERNAL_URL", "FIELD_HELP", "LANGUAGES", "P1_ROUTE", "QUESTIONS", "TEMPLATES"]

LANGUAGES = ("en", "zh-CN")

# question key -> its prompt; "{default}" is filled in where the question has one
QUESTIONS: dict[str, dict[str, str]] = {
    "en": {
        "language": "Language of messages and this file (en/zh-CN) [{default}]: ",
        "timezone": "Time zone of times in messages [{default}]: ",
        "url": "Your app's metrics URL [{default}]: ",
        "receiver": "Receiver for P0/P1 ({kinds}) [terminal]: ",
        "key": "{receiver} {field}: ",
        "secret": "{receiver} signing secret (empty: the robot does not sign): ",
        "at_mobiles": "Mobile numbers to @ on DingTalk, comma-separated (empty: none): ",
        "at_all": "@everyone in the group on DingTalk? (y/N): ",
        "external_url": "The dashboard's URL as people open it (acknowledgement links need it) [none]: ",
        "field": "{receiver} {field} ({help}): ",
    },
    "zh-CN": {
        "language": "消息和本文件的语言 (en/zh-CN) [{default}]: ",
        "timezone": "消息中时间的时区 [{default}]: ",
        "url": "应用的指标地址 (metrics URL) [{default}]: ",
        "receiver": "P0/P1 告警的接收方 ({kinds}) [terminal]: ",
        "key": "{receiver} 的 {field}: ",
        "secret": "{receiver} 机器人的加签密钥 (留空: 未开启加签): ",
        "at_mobiles": "钉钉消息要 @ 的手机号, 逗号分隔 (留空: 不 @): ",
        "at_all": "钉钉消息 @所有人? (y/N): ",
        "external_url": "控制台的访问地址 (确认链接需要它) [无]: ",
        "field": "{receiver} 的 {field} ({help}): ",
    },
}

_EN = """\
# inferwatch.yaml written by `inferwatch init`; check it with `inferwatch config check`.
# `inferwatch config show` prints every field with its default;
# `inferwatch serve` (no arguments) reads this file.
server:
  listen: {listen:<26}# the dashboard and the HTTP API: http://{listen_raw}/
  data_dir: ./data                  # SQLite store, alert state and the generated api_token
{external_url}
scrape:
  targets:
    # your model server's /metrics (instrumented with inferwatch.sdk: docs/sdk.md)
    - {{job: {job}, url: {url}}}

# rules: the default pack applies as is (`inferwatch rules list` shows it);
# tune it with rules.disable / rules.overrides (docs/rules.md).

alerting:
  language: {language:<24}# of the built-in messages
  timezone: {timezone:<24}# times in messages are shown in this zone
  route:                            # Alertmanager's route tree (docs/alerting.md)
    receiver: terminal              # anything not matched below is printed
    group_by: [alertname, service]
    routes:
      - {{matchers: ['tier="P0"'], receiver: oncall}}   # P0: service down, page now
      - {{matchers: ['tier="P1"'], receiver: {p1}
      - {{matchers: ['tier="P2"'], receiver: digest}}   # P2: trends, once a day
  # The default actions (scale_out on P0 through the Kubernetes API, degrade, rollback) stay off
  # until you have set them up: default_actions: true, and docs/alerting.md's actions.
  default_actions: false
  receivers:
    - {receiver}
    - {{name: digest, type: digest, at: "09:00", timezone: {timezone}, deliver_to: {digest_to}}}
"""

_ZH = """\
# 由 `inferwatch init` 生成的 inferwatch.yaml; 用 `inferwatch config check` 检查。
# `inferwatch config show` 列出每个字段及其默认值;
# `inferwatch serve` (不带参数) 读取本文件。
server:
  listen: {listen:<26}# 控制台和 HTTP API: http://{listen_raw}/
  data_dir: ./data                  # SQLite 存储、告警状态和自动生成的 api_token
{external_url}
scrape:
  targets:
    # 模型服务的 /metrics (用 inferwatch.sdk 埋点: docs/sdk.md)
    - {{job: {job}, url: {url}}}

# 规则: 默认规则包直接生效 (`inferwatch rules list` 查看);
# 用 rules.disable / rules.overrides 调整 (docs/rules.md)。

alerting:
  language: {language:<24}# 内置告警消息的语言
  timezone: {timezone:<24}# 消息中的时间按此时区显示
  route:                            # 与 Alertmanager 相同的路由树 (docs/alerting.md)
    receiver: terminal              # 未匹配下列路由的告警打印到终端
    group_by: [alertname, service]
    routes:
      - {{matchers: ['tier="P0"'], receiver: oncall}}   # P0: 服务不可用, 立即通知值班
      - {{matchers: ['tier="P1"'], receiver: {p1}
      - {{matchers: ['tier="P2"'], receiver: digest}}   # P2: 趋势类, 每天汇总一次
  # 默认动作 (P0 通过 Kubernetes API 扩容、降级、回滚) 在配置好之前保持关闭:
  # 配好后设 default_actions: true, 见 docs/alerting.md 的 actions 一节。
  default_actions: false
  receivers:
    - {receiver}
    - {{name: digest, type: digest, at: "09:00", timezone: {timezone}, deliver_to: {digest_to}}}
"""

# the line written for server.external_url, or the comment saying where it goes
EXTERNAL_URL = {
    "en": ("  external_url: {url}   # the dashboard's URL in notifications (acknowledgement links)\n",
           "  # external_url: https://inferwatch.example.com   # acknowledgement links need it\n"),
    "zh-CN": ("  external_url: {url}   # 通知中的控制台地址 (确认链接)\n",
              "  # external_url: https://inferwatch.example.com   # 消息中的确认链接需要它\n"),
}

TEMPLATES = {"en": _EN, "zh-CN": _ZH}

# the P1 route's end: (to a chat or paging receiver, to the terminal when the receiver is a voice call)
P1_ROUTE = {
    "en": ("oncall}   # P1: degraded, notify the team",
           "terminal} # P1: degraded; not phoned: put a chat receiver here"),
    "zh-CN": ("oncall}   # P1: 服务降级, 通知团队",
              "terminal} # P1: 服务降级; 不打电话: 在此换成群消息接收方"),
}

# what each field of a WeCom application or cloud voice/SMS receiver is, in the question asking for it
FIELD_HELP: dict[str, dict[str, str]] = {
    "en": {
        "corp_id": "the company's corp id, ww...", "agent_id": "the application's AgentId",
        "secret": "the application's Secret", "to_user": "user ids, comma-separated; @all: everyone",
        "access_key_id": "AccessKey ID", "access_key_secret": "AccessKey Secret",
        "tts_code": "the approved TTS template, TTS_...", "template_code": "the approved template, SMS_...",
        "sign_name": "the approved signature", "to": "mobile numbers, comma-separated",
        "secret_id": "SecretId", "secret_key": "SecretKey", "template_id": "the approved template's id",
        "voice_sdk_app_id": "the voice application's SdkAppId",
        "sms_sdk_app_id": "the SMS application's SdkAppId",
        "rounds": "calls per number while unanswered, 1-5; empty: one call, not confirmed",
    },
    "zh-CN": {
        "corp_id": "企业 ID, ww 开头", "agent_id": "应用的 AgentId", "secret": "应用的 Secret",
        "to_user": "成员账号, 逗号分隔; @all: 全部成员", "access_key_id": "AccessKey ID",
        "access_key_secret": "AccessKey Secret", "tts_code": "已审核的语音模板, TTS_ 开头",
        "template_code": "已审核的短信模板, SMS_ 开头", "sign_name": "已审核的短信签名",
        "to": "手机号, 逗号分隔", "secret_id": "SecretId", "secret_key": "SecretKey",
        "template_id": "已审核模板的 ID", "voice_sdk_app_id": "语音应用的 SdkAppId",
        "sms_sdk_app_id": "短信应用的 SdkAppId",
        "rounds": "未接听时每个号码最多呼叫几轮, 1-5; 留空: 只呼一次, 不确认接听",
    },
}
