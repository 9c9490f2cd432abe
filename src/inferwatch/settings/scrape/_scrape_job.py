"""``scrape.jobs``: targets found by service discovery (Prometheus's ``scrape_configs``).

A job has Prometheus's target settings (``scheme``, ``metrics_path``,
``params``, interval, timeout, limits, auth, ``relabel_configs``, ...) and
where its targets come from: ``static_configs``, ``file_sd_configs`` (JSON or
YAML files, globs, re-read when they change and every ``refresh_interval``)
and ``http_sd_configs`` (Prometheus's HTTP SD format, fetched every
``refresh_interval``). Targets come and go while ``serve`` runs.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from inferwatch.model import is_valid_label_name
from inferwatch.settings._types import Duration, FrozenModel, http_url
from inferwatch.settings.scrape._scrape import ScrapeTarget
from inferwatch.settings.scrape._scrape_auth import Authorization, TLSConfig

__all__ = ["DnsSDConfig", "FileSDConfig", "HttpSDConfig", "KubernetesSDConfig", "ScrapeJob", "StaticGroup"]

# Prometheus's file_sd pattern check: a glob only in the last path element, a known extension
_FILE_SD_NAME = re.compile(r"^[^*]*(\*[^/]*)?\.(json|yml|yaml|JSON|YML|YAML)$")


def _group_labels(labels: dict[str, str]) -> dict[str, str]:
    for name in labels:
        if not is_valid_label_name(name):
            raise ValueError(f"invalid label name {name!r}")
    return labels


def _positive(seconds: float) -> float:
    if seconds <= 0:
        raise ValueError("refresh_interval must be positive")
    return seconds


class StaticGroup(FrozenModel):
    """One ``static_configs`` entry: ``host:port`` addresses and the labels they share."""

    targets: tuple[str, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)

    _labels = field_validator("labels")(_group_labels)


class FileSDConfig(FrozenModel):
    """``file_sd_configs``: target groups read from JSON or YAML files (the last element may be a glob)."""

    files: tuple[str, ...] = Field(min_length=1)
    refresh_interval: Duration = 300.0

    @field_validator("files")
    @classmethod
    def _patterns(cls, files: tuple[str, ...]) -> tuple[str, ...]:
        for f in files:
            if not _FILE_SD_NAME.match(f):
                raise ValueError(f"path {f!r} is not valid for file discovery (a .json, .yml or .yaml "
                                 "file; a '*' only in the last path element)")
        return files

    _refresh = field_validator("refresh_interval")(_positive)


class HttpSDConfig(FrozenModel):
    """``http_sd_configs``: target groups fetched from a URL (a JSON list, Prometheus's HTTP SD format)."""

    url: str
    refresh_interval: Duration = 60.0

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        http_url(url, "http://127.0.0.1:8000/targets")
        if "@" in urlsplit(url).netloc:  # it would be shown in every target's __meta_url
            raise ValueError("credentials in the URL (user:password@) would be shown in every target's "
                             "__meta_url label")
        return url

    _refresh = field_validator("refresh_interval")(_positive)


class DnsSDConfig(FrozenModel):
    """``dns_sd_configs``: targets from DNS records (SRV by default; A, AAAA and MX with ``port``).

    ``nameservers`` (``host:port``) is inferwatch's: without it the system's resolver is asked,
    as Prometheus does.
    """

    names: tuple[str, ...] = Field(min_length=1)
    type: Literal["SRV", "A", "AAAA", "MX"] = "SRV"
    port: int = Field(0, ge=0, le=65535)
    refresh_interval: Duration = 30.0
    nameservers: tuple[str, ...] = ()

    _refresh = field_validator("refresh_interval")(_positive)

    @model_validator(mode="after")
    def _port_unless_srv(self) -> DnsSDConfig:
        if self.type != "SRV" and self.port == 0:
            raise ValueError(f"a port is required for {self.type} records (only SRV records carry one)")
        for ns in self.nameservers:
            host, _, port = ns.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"nameserver {ns!r} is not host:port")
        return self


KubeRole = Literal["pod", "service", "endpoints", "endpointslice", "ingress", "node"]

# Prometheus 2.42's allowed selector roles per role (kubernetes.go)
_SELECTOR_ROLES: dict[str, tuple[str, ...]] = {
    "pod": ("pod",), "service": ("service",), "node": ("node",), "ingress": ("ingress",),
    "endpoints": ("pod", "service", "endpoints"), "endpointslice": ("pod", "service", "endpointslice"),
}


class KubeNamespaces(FrozenModel):
    """``namespaces``: the namespaces to watch (all when ``names`` is empty and not ``own_namespace``)."""

    names: tuple[str, ...] = ()
    own_namespace: bool = False


class KubeSelector(FrozenModel):
    """``selectors``: a label and field selector sent to the API for ``role``."""

    role: KubeRole
    label: str = ""
    field: str = ""


class KubeAttachMetadata(FrozenModel):
    """``attach_metadata``: ``node: true`` adds node labels to pod, endpoints and endpointslice targets."""

    node: bool = False


class KubernetesSDConfig(FrozenModel):
    """``kubernetes_sd_configs``: pods, services, endpoints, endpoint slices, ingresses or nodes, watched.

    ``api_server`` (with ``authorization`` and ``tls_config``), ``kubeconfig_file``,
    or in-cluster when both are unset: the service account's token and CA, and
    ``KUBERNETES_SERVICE_HOST`` / ``KUBERNETES_SERVICE_PORT``, as Prometheus does.
    """

    role: KubeRole
    api_server: str | None = None
    kubeconfig_file: str | None = None
    namespaces: KubeNamespaces = Field(default_factory=KubeNamespaces)
    selectors: tuple[KubeSelector, ...] = ()
    attach_metadata: KubeAttachMetadata = Field(default_factory=KubeAttachMetadata)
    authorization: Authorization | None = None
    tls_config: TLSConfig | None = None

    @field_validator("api_server")
    @classmethod
    def _api_url(cls, url: str | None) -> str | None:
        if url is not None:
            http_url(url, "https://kubernetes.default.svc")
        return url

    @model_validator(mode="after")
    def _as_prometheus_checks(self) -> KubernetesSDConfig:
        # the checks and messages of Prometheus 2.42's SDConfig.UnmarshalYAML
        custom_http = self.authorization is not None or self.tls_config is not None
        if self.api_server and self.kubeconfig_file:
            raise ValueError("cannot use 'kubeconfig_file' and 'api_server' simultaneously")
        if self.kubeconfig_file and custom_http:
            raise ValueError("cannot use a custom HTTP client configuration together with 'kubeconfig_file'")
        if not self.api_server and not self.kubeconfig_file and custom_http:
            raise ValueError("to use custom HTTP client configuration please provide the 'api_server' URL "
                             "explicitly")
        if self.namespaces.own_namespace and (self.api_server or self.kubeconfig_file):
            which = "api_server" if self.api_server else "kubeconfig_file"
            raise ValueError(f"cannot use '{which}' and 'namespaces.own_namespace' simultaneously")
        seen: set[str] = set()
        for sel in self.selectors:
            if sel.role in seen:
                raise ValueError(f"duplicated selector role: {sel.role}")
            seen.add(sel.role)
            allowed = _SELECTOR_ROLES[self.role]
            if sel.role not in allowed:
                raise ValueError(f"{self.role} role supports only {', '.join(allowed)} selectors")
        return self

    def selector(self, role: str) -> KubeSelector | None:
        """The selector given for objects of ``role`` (a role's own, or the pods and services it reads)."""
        return next((s for s in self.selectors if s.role == role), None)


class ScrapeJob(ScrapeTarget):
    """A job whose targets are discovered; its settings apply to each target it finds."""

    url: str = ""
    scheme: Literal["http", "https"] = "http"
    metrics_path: str = "/metrics"
    params: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    static_configs: tuple[StaticGroup, ...] = ()
    file_sd_configs: tuple[FileSDConfig, ...] = ()
    http_sd_configs: tuple[HttpSDConfig, ...] = ()
    dns_sd_configs: tuple[DnsSDConfig, ...] = ()
    kubernetes_sd_configs: tuple[KubernetesSDConfig, ...] = ()

    @model_validator(mode="after")
    def _discovered_not_url(self) -> ScrapeJob:
        if self.url:
            raise ValueError("a job under scrape.jobs finds its targets (static_configs, file_sd_configs, "
                             "http_sd_configs, dns_sd_configs, kubernetes_sd_configs); a single URL goes "
                             "under scrape.targets")
        if not self.metrics_path.startswith("/"):
            raise ValueError(f"metrics_path {self.metrics_path!r} must start with '/'")
        return self
