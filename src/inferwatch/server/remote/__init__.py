"""What the server sends out: remote-write to other stores, alerts to existing Alertmanagers."""

from inferwatch.server.remote._alertmanager_push import AlertmanagerPush, FanoutSink, alert_sink
from inferwatch.server.remote._remote_write_out import RemoteWrite

__all__ = ["AlertmanagerPush", "FanoutSink", "RemoteWrite", "alert_sink"]
