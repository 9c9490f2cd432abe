"""What each ``kubernetes_sd_configs`` role lists and watches, and how its groups are built.

As Prometheus 2.42 sets up its informers (``discovery/kubernetes/kubernetes.go``):
``pod``, ``service``, ``ingress`` (``networking.k8s.io/v1``) watch their own
objects per namespace; ``node`` watches nodes; ``endpoints`` and
``endpointslice`` (``discovery.k8s.io/v1``) watch their objects, and the
services and pods in the same namespaces; ``attach_metadata: {node: true}``
adds the nodes for ``pod``, ``endpoints`` and ``endpointslice``. Each watch
sends the selector given for its own kind of object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inferwatch.config import KubernetesSDConfig
from inferwatch.server.ingest.discovery._groups import TargetGroup
from inferwatch.server.ingest.discovery._kube_endpoints import endpoints_group, endpointslice_group
from inferwatch.server.ingest.discovery._kube_objects import (
    KubeIndex,
    ingress_group,
    node_group,
    pod_group,
    service_group,
)

__all__ = ["ROLES", "Role", "Stream", "streams"]

Builder = Callable[[dict[str, Any], KubeIndex], TargetGroup]


@dataclass(frozen=True)
class Stream:
    """One list-and-watch: ``kind`` is ``main`` (the role's objects), ``pods``, ``services`` or ``nodes``."""

    kind: str
    resource: str
    path: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Role:
    """A role's resource (under ``prefix``), its builder and the other kinds it reads."""

    prefix: str
    resource: str
    build: Builder
    reads: tuple[str, ...] = ()
    namespaced: bool = True
    attaches_nodes: bool = False

    def index(self, by_kind: dict[str, list[dict[str, Any]]], *, attach_nodes: bool) -> KubeIndex:
        """The pods, services and (with ``attach_nodes``) nodes the builder may look up."""

        def key(o: dict[str, Any]) -> tuple[str, str]:
            meta = o.get("metadata") or {}
            return meta.get("namespace", ""), meta.get("name", "")

        nodes = None
        if attach_nodes and self.attaches_nodes:
            nodes = {key(o)[1]: o for o in by_kind.get("nodes", [])}
        return KubeIndex(
            pods={key(o): o for o in by_kind.get("pods", [])},
            services={key(o): o for o in by_kind.get("services", [])},
            nodes=nodes,
        )


ROLES: dict[str, Role] = {
    "pod": Role("/api/v1", "pods", pod_group, attaches_nodes=True),
    "service": Role("/api/v1", "services", service_group),
    "node": Role("/api/v1", "nodes", node_group, namespaced=False),
    "ingress": Role("/apis/networking.k8s.io/v1", "ingresses", ingress_group),
    "endpoints": Role("/api/v1", "endpoints", endpoints_group, ("services", "pods"), attaches_nodes=True),
    "endpointslice": Role(
        "/apis/discovery.k8s.io/v1",
        "endpointslices",
        endpointslice_group,
        ("services", "pods"),
        attaches_nodes=True,
    ),
}
"""Each role's resource, builder and what else it watches."""

_KIND_ROLE = {"pods": "pod", "services": "service", "nodes": "node"}


def _params(cfg: KubernetesSDConfig, role: str) -> dict[str, str]:
    sel = cfg.selector(role)
    out = {}
    if sel is not None and sel.label:
        out["labelSelector"] = sel.label
    if sel is not None and sel.field:
        out["fieldSelector"] = sel.field
    return out


def streams(cfg: KubernetesSDConfig, namespaces: tuple[str, ...]) -> list[Stream]:
    """The lists and watches of ``cfg`` over ``namespaces`` (``()``: the whole cluster)."""
    role = ROLES[cfg.role]
    if not role.namespaced:
        return [Stream("main", role.resource, f"{role.prefix}/{role.resource}", _params(cfg, cfg.role))]
    out = []
    kinds: list[tuple[str, str, str, str]] = [("main", role.prefix, role.resource, cfg.role)]
    kinds += [(k, "/api/v1", k, _KIND_ROLE[k]) for k in role.reads]
    for ns in namespaces or ("",):
        where = f"/namespaces/{ns}" if ns else ""
        out += [
            Stream(kind, resource, f"{prefix}{where}/{resource}", _params(cfg, sel_role))
            for kind, prefix, resource, sel_role in kinds
        ]
    if cfg.attach_metadata.node and role.attaches_nodes:  # nodes: no selector (only a node role may give one)
        out.append(Stream("nodes", "nodes", "/api/v1/nodes"))
    return out
