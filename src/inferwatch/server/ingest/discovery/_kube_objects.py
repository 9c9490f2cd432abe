"""Kubernetes objects as target groups, with the ``__meta_kubernetes_*`` labels of Prometheus 2.42.

Pure functions of one object (a decoded JSON dict): ``pod`` (one target per
container port, or per container without ports; none until the pod has an IP),
``service`` (one per service port, at ``name.namespace.svc:port``) and ``node``
(the kubelet's port on the first of InternalIP, InternalDNS, ExternalIP,
ExternalDNS, LegacyHostIP, Hostname; ``instance`` is the node's name).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from inferwatch.server.ingest.discovery._groups import TargetGroup

__all__ = ["BUILDERS", "node_group", "pod_group", "service_group"]

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


def pod_group(pod: dict[str, Any]) -> TargetGroup:
    """The group of one pod (source ``pod/<namespace>/<name>``)."""
    meta, spec, status = pod.get("metadata", {}), pod.get("spec", {}), pod.get("status", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    ip = status.get("podIP") or ""
    if not ip:
        return TargetGroup(f"pod/{ns}/{name}", ())
    labels = {f"{_M}pod_name": name, f"{_M}pod_ip": ip, f"{_M}pod_ready": _ready(pod),
              f"{_M}pod_phase": status.get("phase", ""), f"{_M}pod_node_name": spec.get("nodeName", ""),
              f"{_M}pod_host_ip": status.get("hostIP", ""), f"{_M}pod_uid": meta.get("uid", ""),
              **_labelled(meta, "pod"), f"{_M}namespace": ns}
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    if owner is not None:
        if owner.get("kind"):
            labels[f"{_M}pod_controller_kind"] = owner["kind"]
        if owner.get("name"):
            labels[f"{_M}pod_controller_name"] = owner["name"]
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


def service_group(svc: dict[str, Any]) -> TargetGroup:
    """The group of one service (source ``svc/<namespace>/<name>``)."""
    meta, spec = svc.get("metadata", {}), svc.get("spec", {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    labels = {f"{_M}service_name": name, f"{_M}namespace": ns, **_labelled(meta, "service")}
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


def node_group(node: dict[str, Any]) -> TargetGroup:
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


BUILDERS: dict[str, tuple[str, Callable[[dict[str, Any]], TargetGroup]]] = {
    "pod": ("pods", pod_group), "service": ("services", service_group), "node": ("nodes", node_group),
}
"""Each role's API resource and group builder."""
