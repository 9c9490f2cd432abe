"""Where samples come from: scrape targets and jobs (with their auth), probes, prometheus.yml as it is."""

from inferwatch.settings.scrape._probes import (
    GenerativeSpec,
    GoldenSpec,
    ProbeExpect,
    ProbeSpec,
    ProbeTls,
    check_json_path,
    check_probes,
)
from inferwatch.settings.scrape._prometheus_yml import (
    prometheus_config_notes,
    read_prometheus_jobs,
    read_prometheus_rule_files,
)
from inferwatch.settings.scrape._scrape import ScrapeTarget
from inferwatch.settings.scrape._scrape_auth import Authorization, BasicAuth, TLSConfig
from inferwatch.settings.scrape._scrape_config import ScrapeConfig
from inferwatch.settings.scrape._scrape_job import (
    DnsSDConfig,
    FileSDConfig,
    HttpSDConfig,
    KubernetesSDConfig,
    ScrapeJob,
    StaticGroup,
)

__all__ = [
    "Authorization",
    "BasicAuth",
    "DnsSDConfig",
    "FileSDConfig",
    "GenerativeSpec",
    "GoldenSpec",
    "HttpSDConfig",
    "KubernetesSDConfig",
    "ProbeExpect",
    "ProbeSpec",
    "ProbeTls",
    "ScrapeConfig",
    "ScrapeJob",
    "ScrapeTarget",
    "StaticGroup",
    "TLSConfig",
    "check_json_path",
    "check_probes",
    "prometheus_config_notes",
    "read_prometheus_jobs",
    "read_prometheus_rule_files",
]
