"""``endpoints`` and ``endpointslice`` objects as target groups, as Prometheus 2.42 builds them.

One target per address and port (an ``Endpoints`` subset's ready addresses,
then its not-ready ones; an ``EndpointSlice``'s endpoints times its ports).
An address whose ``targetRef`` is a known pod gets the pod's labels and, for
the container port it hits, the container's; every other container port of
such a pod becomes a target of its own. The group carries the service's
labels (the service of the same name, or the slice's
``kubernetes.io/service-name``). With ``attach_metadata: {node: true}`` an
address on a known node gets the node's labels.
"""

from __future__ import annotations

from typing import Any

from inferwatch.server.ingest.discovery._groups import TargetGroup
from inferwatch.server.ingest.discovery._kube_objects import KubeIndex, pod_labels, service_labels

__all__ = ["endpoints_group", "endpointslice_group"]

_M = "__meta_kubernetes_"
_SERVICE_NAME_LABEL = "kubernetes.io/service-name"


def _host_port(host: str, port: Any) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _sanitized(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)


class _Pods:
    """The pods the addresses point at, and which of their ports the addresses covered."""

    def __init__(self, index: KubeIndex) -> None:
        self.index = index
        self.seen: dict[tuple[str, str], tuple[dict[str, Any], list[Any]]] = {}

    def resolve(self, ref: dict[str, Any] | None) -> dict[str, Any] | None:
        if not ref or ref.get("kind") != "Pod":
            return None
        key = (ref.get("namespace", ""), ref.get("name", ""))
        pod = self.index.pods.get(key)
        if pod is not None:
            self.seen.setdefault(key, (pod, []))
        return pod

    def covered(self, pod: dict[str, Any], port: Any) -> None:
        meta = pod.get("metadata") or {}
        self.seen[(meta.get("namespace", ""), meta.get("name", ""))][1].append(port)

    def uncovered(self) -> list[tuple[str, dict[str, str]]]:
        """A target for each container port of a seen pod that no address covered."""
        out = []
        for pod, ports in self.seen.values():
            ip = (pod.get("status") or {}).get("podIP") or ""
            for c in (pod.get("spec") or {}).get("containers") or []:
                for cport in c.get("ports") or []:
                    number = cport.get("containerPort", 0)
                    if number in ports:
                        continue
                    out.append(
                        (
                            _host_port(ip, number),
                            {
                                f"{_M}pod_container_name": c.get("name", ""),
                                f"{_M}pod_container_image": c.get("image", ""),
                                f"{_M}pod_container_port_name": cport.get("name", ""),
                                f"{_M}pod_container_port_number": str(number),
                                f"{_M}pod_container_port_protocol": cport.get("protocol", ""),
                                **pod_labels(pod),
                            },
                        )
                    )
        return out


def _container(pod: dict[str, Any], port: Any, protocol: str | None) -> dict[str, str]:
    """The labels of the container port ``port`` hits (the last container that has it, as Prometheus)."""
    out: dict[str, str] = {}
    for c in (pod.get("spec") or {}).get("containers") or []:
        for cport in c.get("ports") or []:
            if port is not None and cport.get("containerPort") == port:
                out = {
                    f"{_M}pod_container_name": c.get("name", ""),
                    f"{_M}pod_container_image": c.get("image", ""),
                    f"{_M}pod_container_port_name": cport.get("name", ""),
                    f"{_M}pod_container_port_number": str(port),
                    f"{_M}pod_container_port_protocol": cport.get("protocol", "")
                    if protocol is None
                    else protocol,
                }
                break
    return out


def endpoints_group(eps: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one ``v1`` Endpoints object (source ``endpoints/<namespace>/<name>``)."""
    index = index or KubeIndex()
    meta = eps.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    labels = {f"{_M}namespace": ns, f"{_M}endpoints_name": name}
    if (ns, name) in index.services:
        labels.update(service_labels(index.services[(ns, name)]))
    for key, value in (meta.get("labels") or {}).items():
        labels[f"{_M}endpoints_label_{_sanitized(key)}"] = str(value)
        labels[f"{_M}endpoints_labelpresent_{_sanitized(key)}"] = "true"
    pods = _Pods(index)
    targets: list[str] = []
    per: list[dict[str, str]] = []

    def add(addr: dict[str, Any], port: dict[str, Any], ready: str) -> None:
        number = port.get("port", 0)
        target = {
            f"{_M}endpoint_port_name": port.get("name", ""),
            f"{_M}endpoint_port_protocol": port.get("protocol", ""),
            f"{_M}endpoint_ready": ready,
        }
        ref = addr.get("targetRef")
        if ref is not None:
            target[f"{_M}endpoint_address_target_kind"] = ref.get("kind", "")
            target[f"{_M}endpoint_address_target_name"] = ref.get("name", "")
        if addr.get("nodeName") is not None:
            target[f"{_M}endpoint_node_name"] = addr["nodeName"]
        if addr.get("hostname"):
            target[f"{_M}endpoint_hostname"] = addr["hostname"]
        target.update(index.node_labels(addr.get("nodeName")))
        pod = pods.resolve(ref)
        if pod is not None:
            target.update(pod_labels(pod))
            target.update(_container(pod, number, port.get("protocol", "")))
            pods.covered(pod, number)
        targets.append(_host_port(addr.get("ip", ""), number))
        per.append(target)

    for subset in eps.get("subsets") or []:
        for port in subset.get("ports") or []:
            for addr in subset.get("addresses") or []:
                add(addr, port, "true")
            for addr in subset.get("notReadyAddresses") or []:
                add(addr, port, "false")
    for address, target in pods.uncovered():
        targets.append(address)
        per.append(target)
    return TargetGroup(f"endpoints/{ns}/{name}", tuple(targets), labels, tuple(per))


def _slice_target(ep: dict[str, Any], port: dict[str, Any], index: KubeIndex) -> dict[str, str]:
    target: dict[str, str] = {}
    for field, label in (
        ("name", "port_name"),
        ("protocol", "port_protocol"),
        ("port", "port"),
        ("appProtocol", "port_app_protocol"),
    ):
        if port.get(field) is not None:
            target[f"{_M}endpointslice_{label}"] = str(port[field])
    conditions = ep.get("conditions") or {}
    for cond in ("ready", "serving", "terminating"):
        if conditions.get(cond) is not None:
            target[f"{_M}endpointslice_endpoint_conditions_{cond}"] = _bool(conditions[cond])
    if ep.get("hostname") is not None:
        target[f"{_M}endpointslice_endpoint_hostname"] = ep["hostname"]
    ref = ep.get("targetRef")
    if ref is not None:
        target[f"{_M}endpointslice_address_target_kind"] = ref.get("kind", "")
        target[f"{_M}endpointslice_address_target_name"] = ref.get("name", "")
    for key, value in (ep.get("deprecatedTopology") or {}).items():
        target[f"{_M}endpointslice_endpoint_topology_{_sanitized(key)}"] = str(value)
        target[f"{_M}endpointslice_endpoint_topology_present_{_sanitized(key)}"] = "true"
    target.update(index.node_labels(ep.get("nodeName")))
    return target


def endpointslice_group(eps: dict[str, Any], index: KubeIndex | None = None) -> TargetGroup:
    """The group of one ``discovery.k8s.io/v1`` EndpointSlice (source ``endpointslice/<ns>/<name>``)."""
    index = index or KubeIndex()
    meta = eps.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    labels = {
        f"{_M}namespace": ns,
        f"{_M}endpointslice_name": name,
        f"{_M}endpointslice_address_type": eps.get("addressType", ""),
    }
    service = (meta.get("labels") or {}).get(_SERVICE_NAME_LABEL)
    if service is not None and (ns, service) in index.services:
        labels.update(service_labels(index.services[(ns, service)]))
    pods = _Pods(index)
    targets: list[str] = []
    per: list[dict[str, str]] = []
    for ep in eps.get("endpoints") or []:
        for port in eps.get("ports") or []:
            number = port.get("port")
            for addr in ep.get("addresses") or []:
                target = _slice_target(ep, port, index)
                pod = pods.resolve(ep.get("targetRef"))
                if pod is not None:
                    target.update(pod_labels(pod))
                    target.update(_container(pod, number, None))
                    pods.covered(pod, number)
                targets.append(addr if number is None else _host_port(addr, number))
                per.append(target)
    for address, target in pods.uncovered():
        targets.append(address)
        per.append(target)
    return TargetGroup(f"endpointslice/{ns}/{name}", tuple(targets), labels, tuple(per))
