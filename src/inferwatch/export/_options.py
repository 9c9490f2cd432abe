"""Where the exported engines find each other: the one set of addresses an export needs."""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.config import Config

__all__ = ["ExportOptions"]


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """Addresses written into the exported files; the defaults suit one host or one pod.

    ``inferwatch_url`` is the embedded server that receives Alertmanager's
    webhook (and is scraped for its own metrics); empty: ``server.external_url``,
    else ``http://`` + ``server.listen``.
    """

    inferwatch_url: str = ""
    alertmanager: str = "127.0.0.1:9093"
    prometheus_url: str = "http://127.0.0.1:9090"
    jaeger_otlp: str = "127.0.0.1:4317"
    namespace: str = "monitoring"
    image: str = "inferwatch:0.1.0"
    remote_write: tuple[str, ...] = ()
    blackbox: str = "127.0.0.1:9115"
    """The blackbox_exporter that Prometheus asks to run the config's probes (``blackbox.yml``)."""

    def server_url(self, config: Config) -> str:
        """The inferwatch server's base URL, without a trailing slash."""
        url = self.inferwatch_url or config.server.external_url or f"http://{config.server.listen}"
        return url.rstrip("/")
