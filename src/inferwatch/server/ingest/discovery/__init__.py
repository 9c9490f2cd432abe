"""Service discovery: where a job's targets come from (static, file, HTTP, DNS, Kubernetes)."""

from inferwatch.server.ingest.discovery._dns import DnsSource
from inferwatch.server.ingest.discovery._file import WATCH_S, FileSource
from inferwatch.server.ingest.discovery._groups import DiscoveryError, TargetGroup, flatten, parse_groups
from inferwatch.server.ingest.discovery._http import HttpSource
from inferwatch.server.ingest.discovery._kube import KubernetesSource
from inferwatch.server.ingest.discovery._kube_endpoints import endpoints_group, endpointslice_group
from inferwatch.server.ingest.discovery._kube_objects import (
    KubeIndex,
    ingress_group,
    node_group,
    pod_group,
    service_group,
)
from inferwatch.server.ingest.discovery._manager import Discovery, OnUpdate, SourceStatus

__all__ = [
    "WATCH_S",
    "Discovery",
    "DiscoveryError",
    "DnsSource",
    "FileSource",
    "HttpSource",
    "KubeIndex",
    "KubernetesSource",
    "OnUpdate",
    "SourceStatus",
    "TargetGroup",
    "endpoints_group",
    "endpointslice_group",
    "flatten",
    "ingress_group",
    "node_group",
    "parse_groups",
    "pod_group",
    "service_group",
]
