"""Kubernetes objects as target groups, with the ``__meta_kubernetes_*`` labels of Prometheus 2.42.

Pure functions of one object (a decoded JSON dict) and, where a role reads
other objects, a :class:`KubeIndex` of them: ``pod`` (one target per
container port, or per container without ports; none until the pod has an IP),
``service`` (one per service port, at ``name.namespace.svc:port``), ``node``
(the kubelet's port on the first of InternalIP, InternalDNS, ExternalIP,
ExternalDNS, LegacyHostIP, Hostname; ``instance`` is the node's name) and
``ingress`` (one per rule and path, at the rule's host; ``https`` where a TLS
host matches). ``endpoints`` and ``endpointslice`` are in ``_kube_endpoints``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from inferwatch.server.ingest.discovery._groups import TargetGroup

__all__ = ["KubeIndex", "ingress_group", "node_group", "node_labels", "pod_group", "pod_labels",
           "service_group", "service_labels"]

_M = "__meta_kubernetes_"
_INVALID = re.compile(r"[^a-zA-Z0-9_]")
_NODE_ADDRESS_ORDER = ("InternalIP", "InternalDNS", "ExternalIP", "ExternalDNS", "LegacyHostIP", "Hostname")


def _host_port(host: str, port: Any) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _labelled(meta: dict[str, Any], kind: str) -> dict[str, str]:
    """``<kind>_label_*``, ``<kind>_labelpresent_*`` and the same for annotations (names sanitized)."""
    out = {}
    for field, name in (("labels", "label"), ("annotations", "annotation")):
        for key, value in (meta.get(field) or {}).items():
            ln = _INVALID.sub("_", key)
            out[f"{_M}{kind}_{name}_{ln}"] = str(value)
            out[f"{_M}{kind}_{name}present_{ln}"] = "true"
    return out


def _ready(pod: dict[str, Any]) -> str:
    for cond in pod.get("status", {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return str(cond.get("status", "unknown")).lower()
    return "unknown"


def _container_id(statuses: list[dict[str, Any]], name: str) -> str:
    return next((str(s.get("containerID", "")) for s in statuses if s.get("name") == name), "")


@dataclass
class KubeIndex:
    """The other objects a role reads: pods and services by ``(namespace, name)``, nodes by name.

    ``nodes`` is None unless ``attach_metadata: {node: true}``.
    """

    pods: dict[tuple[str, str], dict[str, Any]] = dataclasses.field(default_factory=dict)
    services: dict[tuple[str, str], dict[str, Any]] = dataclasses.field(default_factory=dict)
    nodes: dict[str, dict[str, Any]] | None = None

    def node_labels(self, name: str | None) -> dict[str, str]:
        """The node's labels when metadata is attached and the node is known (else none)."""
        if self.nodes is None or name is None or name not in self.nodes:
            return {}
        return node_labels(self.nodes[name])


def node_labels(node: dict[str, Any]) -> dict[str, str]:
    """``node_name`` and ``node_label_*`` / ``node_labelpresent_*`` (what ``attach_metadata`` adds)."""
    meta = node.get("metadata") or {}
    out = {f"{_M}node_name": str(meta.get("name", ""))}
    for key, value in (meta.get("labels") or {}).items():
        ln = _INVALID.sub("_", key)
        out[f"{_M}node_label_{ln}"] = str(value)
        out[f"{_M}node_labelpresent_{ln}"] = "true"
    return out


def pod_labels(pod: dict[str, Any]) -> dict[str, str]:
    """A pod's own labels (Prometheus's ``podLabels``: without the namespace)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    labels = {f"{_M}pod_name": meta.get("name", ""), f"{_M}pod_ip": status.get("podIP") or "",
              f"{_M}pod_ready": _ready(pod), f"{_M}pod_phase": status.get("phase", ""),
              f"{_M}pod_node_name": spec.get("nodeName", ""), f"{_M}pod_host_ip": status.get("hostIP", ""),
              f"{_M}pod_uid": meta.get("uid", "")}
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    if owner is not None:
        if owner.get("kind"):
            labels[f"{_M}pod_controller_kind"] = owner["kind"]
        if owner.get("name"):
            labels[f"{_M}pod_controller_name"] = owner["name"]
    return {**labels, **_labelled(meta, "pod")}


def pod_group(pod: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one pod (source ``pod/<namespace>/<name>``)."""
    meta, spec, status = pod.get("metadata", {}), pod.get("spec", {}), pod.get("status", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    ip = status.get("podIP") or ""
    if not ip:
        return TargetGroup(f"pod/{ns}/{name}", ())
    labels = {**pod_labels(pod), f"{_M}namespace": ns}
    if index is not None:
        labels.update(index.node_labels(spec.get("nodeName", "")))
    targets, per = [], []
    containers = [(c, False) for c in spec.get("containers") or []]
    containers += [(c, True) for c in spec.get("initContainers") or []]
    for c, init in containers:
        statuses = status.get("initContainerStatuses" if init else "containerStatuses") or []
        base = {f"{_M}pod_container_name": c.get("name", ""),
                f"{_M}pod_container_id": _container_id(statuses, c.get("name", "")),
                f"{_M}pod_container_image": c.get("image", ""),
                f"{_M}pod_container_init": "true" if init else "false"}
        if not c.get("ports"):
            targets.append(ip)
            per.append(base)
            continue
        for port in c["ports"]:
            number = str(port.get("containerPort", 0))
            targets.append(_host_port(ip, number))
            per.append({**base, f"{_M}pod_container_port_number": number,
                        f"{_M}pod_container_port_name": port.get("name", ""),
                        f"{_M}pod_container_port_protocol": port.get("protocol", "TCP")})
    return TargetGroup(f"pod/{ns}/{name}", tuple(targets), labels, tuple(per))


def service_labels(svc: dict[str, Any]) -> dict[str, str]:
    """A service's name, namespace, labels and annotations (Prometheus's ``serviceLabels``)."""
    meta = svc.get("metadata") or {}
    return {f"{_M}service_name": meta.get("name", ""), f"{_M}namespace": meta.get("namespace", ""),
            **_labelled(meta, "service")}


def service_group(svc: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one service (source ``svc/<namespace>/<name>``)."""
    meta, spec = svc.get("metadata", {}), svc.get("spec", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    labels = service_labels(svc)
    kind = spec.get("type", "ClusterIP")
    targets, per = [], []
    for port in spec.get("ports") or []:
        number = str(port.get("port", 0))
        target = {f"{_M}service_port_name": port.get("name", ""), f"{_M}service_port_number": number,
                  f"{_M}service_port_protocol": port.get("protocol", "TCP"), f"{_M}service_type": kind}
        if kind == "ExternalName":
            target[f"{_M}service_external_name"] = spec.get("externalName", "")
        else:
            target[f"{_M}service_cluster_ip"] = spec.get("clusterIP", "")
        if kind == "LoadBalancer":
            target[f"{_M}service_loadbalancer_ip"] = spec.get("loadBalancerIP", "")
        targets.append(_host_port(f"{name}.{ns}.svc", number))
        per.append(target)
    return TargetGroup(f"svc/{ns}/{name}", tuple(targets), labels, tuple(per))


def node_group(node: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one node (source ``node/<name>``); no target when it has no address."""
    meta, spec, status = node.get("metadata", {}), node.get("spec", {}), node.get("status", {})
    name = meta.get("name", "")
    labels = {f"{_M}node_name": name, f"{_M}node_provider_id": spec.get("providerID", ""),
              **_labelled(meta, "node")}
    by_type: dict[str, list[str]] = {}
    for a in status.get("addresses") or []:
        by_type.setdefault(a.get("type", ""), []).append(a.get("address", ""))
    host = next((by_type[t][0] for t in _NODE_ADDRESS_ORDER if t in by_type), None)
    if host is None:
        return TargetGroup(f"node/{name}", (), labels)
    port = status.get("daemonEndpoints", {}).get("kubeletEndpoint", {}).get("Port", 0)
    addresses = {_INVALID.sub("_", f"{_M}node_address_{t}"): a[0] for t, a in by_type.items()}
    target = {"instance": name, **addresses}
    return TargetGroup(f"node/{name}", (_host_port(host, port),), labels, (target,))


def _host_matches(pattern: str, host: str) -> bool:
    """A TLS host pattern matches: equal, or ``*.rest`` against a host of as many parts with the same rest."""
    if pattern == host:
        return True
    pp, hp = pattern.split("."), host.split(".")
    return pp[0] == "*" and len(pp) == len(hp) and pp[1:] == hp[1:]


def _rule_paths(rule: dict[str, Any]) -> list[str]:
    http = rule.get("http")
    if http is None:  # no http section: the host's root, as Prometheus does
        return ["/"]
    return [p.get("path") or "/" for p in http.get("paths") or []]


def ingress_group(ingress: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one ``networking.k8s.io/v1`` ingress (source ``ingress/<namespace>/<name>``)."""
    meta, spec = ingress.get("metadata") or {}, ingress.get("spec") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    labels = {f"{_M}ingress_name": name, f"{_M}namespace": ns, **_labelled(meta, "ingress")}
    if spec.get("ingressClassName") is not None:
        labels[f"{_M}ingress_class_name"] = spec["ingressClassName"]
    tls_hosts = [h for tls in spec.get("tls") or [] for h in tls.get("hosts") or []]
    targets, per = [], []
    for rule in spec.get("rules") or []:
        host = rule.get("host", "")
        scheme = "https" if any(_host_matches(p, host) for p in tls_hosts) else "http"
        for path in _rule_paths(rule):
            targets.append(host)
            per.append({f"{_M}ingress_scheme": scheme, f"{_M}ingress_host": host, f"{_M}ingress_path": path})
    return TargetGroup(f"ingress/{ns}/{name}", tuple(targets), labels, tuple(per))
