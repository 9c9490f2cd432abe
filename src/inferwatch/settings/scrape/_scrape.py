"""``scrape``: the Prometheus-text targets the embedded server scrapes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator

from inferwatch.model import (
    DEFAULT_INTERVAL_S,
    Dimension,
    RelabelConfigError,
    RelabelRule,
    is_valid_label_name,
    parse_relabel_configs,
)
from inferwatch.settings._types import ByteSize, Duration, FrozenModel, http_url
from inferwatch.settings.scrape._scrape_auth import Authorization, BasicAuth, TLSConfig

__all__ = ["ScrapeTarget"]

_RESERVED = ("job", "instance")


class ScrapeTarget(FrozenModel):
    """One scrape target; ``interval`` by dimension (15 s infra, 1 m service, 1 h quality, 1 d business).

    The timeout is at most the interval.

    As in Prometheus, the target adds ``job`` and ``instance`` (host:port of
    the URL unless given in ``labels``) to every series it exposes; a label the
    target already exposes with the same name is kept as ``exported_<name>``
    unless ``honor_labels`` is set; timestamps in the exposition are used
    unless ``honor_timestamps`` is false.
    """

    job: str = Field(min_length=1)
    url: str
    dimension: Dimension = Dimension.SERVICE
    interval: Duration | None = None
    timeout: Duration = 10.0
    labels: dict[str, str] = Field(default_factory=dict)
    honor_labels: bool = False
    honor_timestamps: bool = True
    # Prometheus's per-target limits; a scrape past one fails (up = 0, the reason in /api/v1/targets).
    body_size_limit: ByteSize = Field(32 << 20, description="largest uncompressed body (0 = no limit)")
    sample_limit: int = Field(0, ge=0, description="most samples per scrape (0 = no limit)")
    label_limit: int = Field(0, ge=0, description="most labels per series (0 = no limit)")
    label_name_length_limit: int = Field(0, ge=0, description="longest label name (0 = no limit)")
    label_value_length_limit: int = Field(0, ge=0, description="longest label value (0 = no limit)")
    # how the target is reached, as Prometheus has it (credentials never in the URL)
    basic_auth: BasicAuth | None = None
    authorization: Authorization | None = None
    tls_config: TLSConfig | None = None
    # Prometheus's relabelling, its rules as written (checked at load as Prometheus 2.42 checks them)
    relabel_configs: tuple[dict[str, Any], ...] = Field(
        (), description="rules on the target's labels before scraping (may drop the target)")
    metric_relabel_configs: tuple[dict[str, Any], ...] = Field(
        (), description="rules on each scraped series before storage (may drop it)")

    @field_validator("relabel_configs", "metric_relabel_configs")
    @classmethod
    def _relabel_rules(
        cls, rules: tuple[dict[str, Any], ...], info: ValidationInfo
    ) -> tuple[dict[str, Any], ...]:
        try:
            parse_relabel_configs(list(rules), where=str(info.field_name))
        except RelabelConfigError as exc:
            raise ValueError(str(exc)) from None
        return rules

    def relabel_rules(self) -> tuple[RelabelRule, ...]:
        """``relabel_configs`` compiled."""
        return parse_relabel_configs(list(self.relabel_configs), where="relabel_configs")

    def metric_relabel_rules(self) -> tuple[RelabelRule, ...]:
        """``metric_relabel_configs`` compiled."""
        return parse_relabel_configs(list(self.metric_relabel_configs), where="metric_relabel_configs")

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        http_url(url, "http://127.0.0.1:8000/metrics")
        if "@" in urlsplit(url).netloc:  # it would be the instance label of every series, shown everywhere
            raise ValueError("credentials in the URL (user:password@) would be shown in every series' "
                             "instance label; give them as basic_auth: {username, password} instead")
        return url

    @field_validator("labels")
    @classmethod
    def _label_names(cls, labels: dict[str, str]) -> dict[str, str]:
        for name in labels:
            if not is_valid_label_name(name) or name.startswith("__"):
                raise ValueError(f"invalid label name {name!r}")
            if name == "job":
                raise ValueError("set the job with the 'job' field, not in labels")
        return labels

    @model_validator(mode="after")
    def _one_auth(self) -> ScrapeTarget:
        if self.basic_auth is not None and self.authorization is not None:
            raise ValueError("give basic_auth or authorization, not both")
        return self

    def auth_header(self) -> str | None:
        """The ``Authorization`` header to send (``None``: none)."""
        auth = self.basic_auth or self.authorization
        return auth.header() if auth is not None else None

    @model_validator(mode="after")
    def _timeout_within_interval(self) -> ScrapeTarget:
        if self.interval is not None and self.interval <= 0:
            raise ValueError("interval must be positive")
        if "timeout" in self.model_fields_set and self.timeout > self.effective_interval:
            raise ValueError(
                f"timeout {self.timeout}s is longer than the scrape interval {self.effective_interval}s"
            )
        return self

    @property
    def effective_interval(self) -> float:
        """``interval``, or the dimension's default (15 s infrastructure, 1 min service, ...)."""
        return self.interval if self.interval is not None else DEFAULT_INTERVAL_S[self.dimension]

    @property
    def effective_timeout(self) -> float:
        """``timeout`` (10 s by default), never longer than the interval."""
        return min(self.timeout, self.effective_interval)

    @property
    def instance(self) -> str:
        """The ``instance`` label: ``labels.instance`` or the URL's host:port."""
        return self.labels.get("instance") or urlsplit(self.url).netloc.rpartition("@")[2]
