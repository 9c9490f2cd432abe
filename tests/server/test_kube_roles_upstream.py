"""The ``endpoints``, ``endpointslice`` and ``ingress`` roles give the target groups Prometheus 2.42 expects.

Debian's Prometheus 2.42 has no Kubernetes discovery, so there is no live
differential. Instead each case below feeds the objects of one of Prometheus
v2.42.0's own tests (``discovery/kubernetes/{endpoints,endpointslice,ingress}_test.go``,
named in each case's comment) to the local fake API as JSON, lists them with
``KubernetesSource`` (objects "before run"), applies the test's change ("after
start") and lists again, and wants the groups that test wants. A deleted or
emptied object is a group without targets in Prometheus; here it is no group.

Three upstream endpointslice cases (Delete, Update, EmptyEndpoints) write their
change through the ``v1beta1`` client to a fake that serves ``v1``, so the
informer never sees it and upstream wants the group unchanged; here the change
is made in ``v1`` (the only version inferwatch reads) and the wanted group is
the one the endpoints role's matching case wants.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from inferwatch.config import KubernetesSDConfig
from inferwatch.model import SystemClock
from inferwatch.server.ingest.discovery import KubernetesSource

from ._kube_fake import FakeKube, fake_kube

K = "__meta_kubernetes_"
Obj = dict[str, Any]
Change = tuple[str, str, Obj]  # ("put" | "delete", resource, object)


@pytest.fixture(scope="module")
def kube_server() -> Iterator[FakeKube]:
    with fake_kube() as k:
        yield k


@pytest.fixture
def kube(kube_server: FakeKube) -> FakeKube:
    for resource, by_key in kube_server.objects.items():
        for ns, name in list(by_key):
            kube_server.delete(resource, ns, name)
    return kube_server  # each case starts from an empty cluster


def _groups(source: KubernetesSource) -> dict[str, Obj]:
    source._threads.clear()  # poll lists every path now
    source.poll(0.0)
    assert source.error == ""
    out = {}
    for g in source._groups():
        if g.targets or g.labels:
            out[g.source] = {
                "labels": g.labels,
                "targets": [
                    {**(g.meta[i] if g.meta else {}), "__address__": t} for i, t in enumerate(g.targets)
                ],
            }
    return out


def run(
    kube: FakeKube,
    role: str,
    before: list[tuple[str, Obj]],
    after: tuple[Change, ...] | list[Change] = (),
    **cfg: Any,
) -> dict[str, Obj]:
    """Put ``before``, list; apply ``after``, list again: the groups at the end."""
    for resource, obj in before:
        kube.put(resource, obj)
    source = KubernetesSource(KubernetesSDConfig(role=role, api_server=kube.url, **cfg), clock=SystemClock())
    try:
        _groups(source)
        for op, resource, obj in after:
            if op == "put":
                kube.put(resource, obj)
            else:
                kube.delete(resource, obj["metadata"]["namespace"], obj["metadata"]["name"])
        return _groups(source)
    finally:
        source.stop()


# --- the objects of the upstream tests, as the API serves them in JSON ---


def endpoints(ns: str = "default") -> Obj:
    """``makeEndpoints()``: a ready address on node foobar at 9000, one both ready and not at 9001."""
    return {
        "metadata": {"name": "testendpoints", "namespace": ns},
        "subsets": [
            {
                "addresses": [{"ip": "1.2.3.4", "hostname": "testendpoint1", "nodeName": "foobar"}],
                "ports": [{"name": "testport", "port": 9000, "protocol": "TCP"}],
            },
            {
                "addresses": [{"ip": "2.3.4.5"}],
                "notReadyAddresses": [{"ip": "2.3.4.5"}],
                "ports": [{"name": "testport", "port": 9001, "protocol": "TCP"}],
            },
        ],
    }


def a_pod(ns: str = "default", ip: str = "1.2.3.4", *, sidecar: bool = True, c1: str = "c1") -> Obj:
    containers = [
        {
            "name": c1,
            "image": f"{c1}:latest",
            "ports": [{"name": "mainport", "containerPort": 9000, "protocol": "TCP"}],
        }
    ]
    if sidecar:
        containers.append(
            {
                "name": "c2",
                "image": "c2:latest",
                "ports": [{"name": "sideport", "containerPort": 9001, "protocol": "TCP"}],
            }
        )
    return {
        "metadata": {"name": "testpod", "namespace": ns, "uid": "deadbeef"},
        "spec": {"nodeName": "testnode", "containers": containers},
        "status": {"hostIP": "2.3.4.5", "podIP": ip},
    }


def service(ns: str = "default", labels: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"name": "testendpoints", "namespace": ns, "labels": labels or {"app/name": "test"}}}


def node(az: str) -> Obj:
    """``makeNode("foobar", "", "", {"az": ...}, nil)``."""
    return {"metadata": {"name": "foobar", "labels": {"az": az}}, "spec": {}, "status": {}}


def pod_meta(ip: str) -> dict[str, str]:
    return {
        f"{K}pod_name": "testpod",
        f"{K}pod_ip": ip,
        f"{K}pod_ready": "unknown",
        f"{K}pod_phase": "",
        f"{K}pod_node_name": "testnode",
        f"{K}pod_host_ip": "2.3.4.5",
        f"{K}pod_uid": "deadbeef",
    }


def container(name: str, port_name: str, port: int) -> dict[str, str]:
    return {
        f"{K}pod_container_name": name,
        f"{K}pod_container_image": f"{name}:latest",
        f"{K}pod_container_port_name": port_name,
        f"{K}pod_container_port_number": str(port),
        f"{K}pod_container_port_protocol": "TCP",
    }


def ep_target(address: str, ready: str, **extra: str) -> dict[str, str]:
    return {
        "__address__": address,
        f"{K}endpoint_port_name": "testport",
        f"{K}endpoint_port_protocol": "TCP",
        f"{K}endpoint_ready": ready,
        **{f"{K}{k}": v for k, v in extra.items()},
    }


def endpoints_targets(**first: str) -> list[dict[str, str]]:
    """The three targets of ``makeEndpoints()``; ``first`` adds labels to the first."""
    return [
        ep_target(
            "1.2.3.4:9000", "true", endpoint_hostname="testendpoint1", endpoint_node_name="foobar", **first
        ),
        ep_target("2.3.4.5:9001", "true"),
        ep_target("2.3.4.5:9001", "false"),
    ]


def ep_group(ns: str, targets: list[dict[str, str]], **labels: str) -> dict[str, Obj]:
    return {
        f"endpoints/{ns}/testendpoints": {
            "labels": {
                f"{K}namespace": ns,
                f"{K}endpoints_name": "testendpoints",
                **{f"{K}{k}": v for k, v in labels.items()},
            },
            "targets": targets,
        }
    }


SVC_TEST = {
    "service_name": "testendpoints",
    "service_label_app_name": "test",
    "service_labelpresent_app_name": "true",
}
NODE = {"node_name": "foobar", "node_labelpresent_az": "true"}


def pod_endpoints(ns: str, ip: str) -> Obj:
    """The endpoints of the Add and Namespaces cases: one address pointing at testpod, port 9000."""
    return {
        "metadata": {"name": "testendpoints", "namespace": ns},
        "subsets": [
            {
                "addresses": [{"ip": ip, "targetRef": {"kind": "Pod", "name": "testpod", "namespace": ns}}],
                "ports": [{"name": "testport", "port": 9000, "protocol": "TCP"}],
            }
        ],
    }


def pod_ep_target(ip: str, pod_ip: str) -> dict[str, str]:
    return {
        **ep_target(
            f"{ip}:9000", "true", endpoint_address_target_kind="Pod", endpoint_address_target_name="testpod"
        ),
        **pod_meta(pod_ip),
        **container("c1", "mainport", 9000),
    }


# --- endpoints_test.go ---


def test_endpoints_before_run(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryBeforeRun
    assert run(kube, "endpoints", [("endpoints", endpoints())]) == ep_group("default", endpoints_targets())


def test_endpoints_add_with_a_pod(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryAdd: the pod's other container port becomes a target of its own
    got = run(
        kube, "endpoints", [("pods", a_pod())], [("put", "endpoints", pod_endpoints("default", "4.3.2.1"))]
    )
    side = {"__address__": "1.2.3.4:9001", **pod_meta("1.2.3.4"), **container("c2", "sideport", 9001)}
    assert got == ep_group("default", [pod_ep_target("4.3.2.1", "1.2.3.4"), side])


def test_endpoints_delete(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryDelete: the group goes empty
    assert run(kube, "endpoints", [("endpoints", endpoints())], [("delete", "endpoints", endpoints())]) == {}


def test_endpoints_update(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryUpdate
    changed = {
        "metadata": {"name": "testendpoints", "namespace": "default"},
        "subsets": [
            {
                "addresses": [{"ip": "1.2.3.4"}],
                "ports": [{"name": "testport", "port": 9000, "protocol": "TCP"}],
            },
            {
                "addresses": [{"ip": "2.3.4.5"}],
                "ports": [{"name": "testport", "port": 9001, "protocol": "TCP"}],
            },
        ],
    }
    got = run(kube, "endpoints", [("endpoints", endpoints())], [("put", "endpoints", changed)])
    assert got == ep_group("default", [ep_target("1.2.3.4:9000", "true"), ep_target("2.3.4.5:9001", "true")])


def test_endpoints_empty_subsets(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryEmptySubsets: the group keeps its labels, no targets
    empty = {"metadata": {"name": "testendpoints", "namespace": "default"}, "subsets": []}
    got = run(kube, "endpoints", [("endpoints", endpoints())], [("put", "endpoints", empty)])
    assert got == ep_group("default", [])


def test_endpoints_with_service_and_its_update(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryWithService, then TestEndpointsDiscoveryWithServiceUpdate
    got = run(kube, "endpoints", [("endpoints", endpoints()), ("services", service())])
    assert got == ep_group("default", endpoints_targets(), **SVC_TEST)
    updated = service(labels={"app/name": "svc", "component": "testing"})
    got = run(kube, "endpoints", [], [("put", "services", updated)])
    assert got == ep_group(
        "default",
        endpoints_targets(),
        service_name="testendpoints",
        service_label_app_name="svc",
        service_labelpresent_app_name="true",
        service_label_component="testing",
        service_labelpresent_component="true",
    )


def test_endpoints_with_node_metadata_and_its_update(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryWithNodeMetadata, then ...WithUpdatedNodeMetadata
    before = [("endpoints", endpoints()), ("services", service()), ("nodes", node("us-east1"))]
    got = run(kube, "endpoints", before, attach_metadata={"node": True})
    assert got == ep_group("default", endpoints_targets(**NODE, node_label_az="us-east1"), **SVC_TEST)
    got = run(kube, "endpoints", [], [("put", "nodes", node("eu-central1"))], attach_metadata={"node": True})
    assert got == ep_group("default", endpoints_targets(**NODE, node_label_az="eu-central1"), **SVC_TEST)


def test_endpoints_namespaces(kube: FakeKube) -> None:
    # TestEndpointsDiscoveryNamespaces
    before = [
        ("endpoints", endpoints("ns1")),
        ("endpoints", pod_endpoints("ns2", "4.3.2.1")),
        ("services", service("ns1", {"app": "app1"})),
        ("pods", a_pod("ns2", "4.3.2.1", sidecar=False)),
    ]
    got = run(kube, "endpoints", before, namespaces={"names": ["ns1", "ns2"]})
    assert got == {
        **ep_group(
            "ns1",
            endpoints_targets(),
            service_name="testendpoints",
            service_label_app="app1",
            service_labelpresent_app="true",
        ),
        **ep_group("ns2", [pod_ep_target("4.3.2.1", "4.3.2.1")]),
    }


# --- endpointslice_test.go ---


def endpointslice(ns: str = "default") -> Obj:
    """``makeEndpointSliceV1()``."""
    return {
        "metadata": {
            "name": "testendpoints",
            "namespace": ns,
            "labels": {"kubernetes.io/service-name": "testendpoints"},
        },
        "addressType": "IPv4",
        "ports": [{"name": "testport", "port": 9000, "protocol": "TCP", "appProtocol": "http"}],
        "endpoints": [
            {
                "addresses": ["1.2.3.4"],
                "conditions": {"ready": True, "serving": True, "terminating": False},
                "hostname": "testendpoint1",
                "targetRef": {},
                "nodeName": "foobar",
                "deprecatedTopology": {"topology": "value"},
            },
            {"addresses": ["2.3.4.5"], "conditions": {"ready": True, "serving": True, "terminating": False}},
            {"addresses": ["3.4.5.6"], "conditions": {"ready": False, "serving": True, "terminating": True}},
        ],
    }


def es_target(address: str, ready: bool, serving: bool, terminating: bool, **extra: str) -> dict[str, str]:
    def b(v: bool) -> str:
        return "true" if v else "false"

    return {
        "__address__": address,
        f"{K}endpointslice_port": "9000",
        f"{K}endpointslice_port_name": "testport",
        f"{K}endpointslice_port_protocol": "TCP",
        f"{K}endpointslice_port_app_protocol": "http",
        f"{K}endpointslice_endpoint_conditions_ready": b(ready),
        f"{K}endpointslice_endpoint_conditions_serving": b(serving),
        f"{K}endpointslice_endpoint_conditions_terminating": b(terminating),
        **{f"{K}{k}": v for k, v in extra.items()},
    }


def slice_targets(**first: str) -> list[dict[str, str]]:
    return [
        es_target(
            "1.2.3.4:9000",
            True,
            True,
            False,
            endpointslice_address_target_kind="",
            endpointslice_address_target_name="",
            endpointslice_endpoint_hostname="testendpoint1",
            endpointslice_endpoint_topology_topology="value",
            endpointslice_endpoint_topology_present_topology="true",
            **first,
        ),
        es_target("2.3.4.5:9000", True, True, False),
        es_target("3.4.5.6:9000", False, True, True),
    ]


def es_group(ns: str, targets: list[dict[str, str]], **labels: str) -> dict[str, Obj]:
    return {
        f"endpointslice/{ns}/testendpoints": {
            "labels": {
                f"{K}namespace": ns,
                f"{K}endpointslice_name": "testendpoints",
                f"{K}endpointslice_address_type": "IPv4",
                **{f"{K}{k}": v for k, v in labels.items()},
            },
            "targets": targets,
        }
    }


def pod_slice(ns: str, *, ready: bool | None) -> Obj:
    ep: Obj = {"addresses": ["4.3.2.1"], "targetRef": {"kind": "Pod", "name": "testpod", "namespace": ns}}
    if ready is not None:
        ep["conditions"] = {"ready": ready}
    return {
        "metadata": {"name": "testendpoints", "namespace": ns},
        "addressType": "IPv4",
        "ports": [{"name": "testport", "port": 9000, "protocol": "TCP"}],
        "endpoints": [ep],
    }


def pod_slice_target(pod_ip: str, **extra: str) -> dict[str, str]:
    return {
        "__address__": "4.3.2.1:9000",
        f"{K}endpointslice_address_target_kind": "Pod",
        f"{K}endpointslice_address_target_name": "testpod",
        f"{K}endpointslice_port": "9000",
        f"{K}endpointslice_port_name": "testport",
        f"{K}endpointslice_port_protocol": "TCP",
        **{f"{K}{k}": v for k, v in extra.items()},
        **pod_meta(pod_ip),
        **container("c1", "mainport", 9000),
    }


NS_DEFAULT: dict[str, Any] = {"namespaces": {"names": ["default"]}}


def test_endpointslice_before_run(kube: FakeKube) -> None:
    # TestEndpointSliceDiscoveryBeforeRun (v1)
    assert run(kube, "endpointslice", [("endpointslices", endpointslice())], **NS_DEFAULT) == es_group(
        "default", slice_targets()
    )


def test_endpointslice_add_with_a_pod(kube: FakeKube) -> None:
    # TestEndpointSliceDiscoveryAdd (its slice made in v1 here)
    got = run(
        kube,
        "endpointslice",
        [("pods", a_pod())],
        [("put", "endpointslices", pod_slice("default", ready=False))],
        **NS_DEFAULT,
    )
    side = {"__address__": "1.2.3.4:9001", **pod_meta("1.2.3.4"), **container("c2", "sideport", 9001)}
    assert got == es_group(
        "default", [pod_slice_target("1.2.3.4", endpointslice_endpoint_conditions_ready="false"), side]
    )


def test_endpointslice_delete_update_and_empty(kube: FakeKube) -> None:
    # TestEndpointSliceDiscoveryDelete / Update / EmptyEndpoints, changed in v1 (see the module's note)
    changed = copy.deepcopy(endpointslice())
    changed["endpoints"] = [
        {"addresses": ["1.2.3.4"], "hostname": "testendpoint1"},
        {"addresses": ["2.3.4.5"], "conditions": {"ready": True}},
    ]
    got = run(
        kube,
        "endpointslice",
        [("endpointslices", endpointslice())],
        [("put", "endpointslices", changed)],
        **NS_DEFAULT,
    )
    ports = {
        f"{K}endpointslice_port": "9000",
        f"{K}endpointslice_port_name": "testport",
        f"{K}endpointslice_port_protocol": "TCP",
        f"{K}endpointslice_port_app_protocol": "http",
    }
    assert got == es_group(
        "default",
        [
            {"__address__": "1.2.3.4:9000", **ports, f"{K}endpointslice_endpoint_hostname": "testendpoint1"},
            {"__address__": "2.3.4.5:9000", **ports, f"{K}endpointslice_endpoint_conditions_ready": "true"},
        ],
    )
    changed["endpoints"] = []
    got = run(kube, "endpointslice", [], [("put", "endpointslices", changed)], **NS_DEFAULT)
    assert got == es_group("default", [])
    got = run(kube, "endpointslice", [], [("delete", "endpointslices", changed)], **NS_DEFAULT)
    assert got == {}


def test_endpointslice_with_service_and_its_update(kube: FakeKube) -> None:
    # TestEndpointSliceDiscoveryWithService, then ...WithServiceUpdate
    got = run(
        kube, "endpointslice", [("endpointslices", endpointslice()), ("services", service())], **NS_DEFAULT
    )
    assert got == es_group("default", slice_targets(), **SVC_TEST)
    updated = service(labels={"app/name": "svc", "component": "testing"})
    got = run(kube, "endpointslice", [], [("put", "services", updated)], **NS_DEFAULT)
    assert got == es_group(
        "default",
        slice_targets(),
        service_name="testendpoints",
        service_label_app_name="svc",
        service_labelpresent_app_name="true",
        service_label_component="testing",
        service_labelpresent_component="true",
    )


def test_endpointslice_with_node_metadata_and_its_update(kube: FakeKube) -> None:
    # TestEndpointsSlicesDiscoveryWithNodeMetadata, then ...WithUpdatedNodeMetadata
    before = [("endpointslices", endpointslice()), ("nodes", node("us-east1")), ("services", service())]
    got = run(kube, "endpointslice", before, attach_metadata={"node": True})
    assert got == es_group("default", slice_targets(**NODE, node_label_az="us-east1"), **SVC_TEST)
    got = run(
        kube, "endpointslice", [], [("put", "nodes", node("us-central1"))], attach_metadata={"node": True}
    )
    assert got == es_group("default", slice_targets(**NODE, node_label_az="us-central1"), **SVC_TEST)


def test_endpointslice_namespaces(kube: FakeKube) -> None:
    # TestEndpointSliceDiscoveryNamespaces
    before = [
        ("endpointslices", endpointslice("ns1")),
        ("endpointslices", pod_slice("ns2", ready=None)),
        ("services", service("ns1", {"app": "app1"})),
        ("pods", a_pod("ns2", "4.3.2.1", sidecar=False)),
    ]
    got = run(kube, "endpointslice", before, namespaces={"names": ["ns1", "ns2"]})
    assert got == {
        **es_group(
            "ns1",
            slice_targets(),
            service_name="testendpoints",
            service_label_app="app1",
            service_labelpresent_app="true",
        ),
        **es_group("ns2", [pod_slice_target("4.3.2.1")]),
    }


# --- ingress_test.go ---


def ingress(tls: list[str] | None, ns: str = "default") -> Obj:
    """``makeIngress(tls)``: example.com with / and /foo, a rule without paths, test.example.com with ''."""
    spec: Obj = {
        "ingressClassName": "testclass",
        "rules": [
            {"host": "example.com", "http": {"paths": [{"path": "/"}, {"path": "/foo"}]}},
            {"host": "nobackend.example.com", "http": {}},
            {"host": "test.example.com", "http": {"paths": [{}]}},
        ],
    }
    if tls is not None:
        spec["tls"] = [{"hosts": tls}]
    return {
        "metadata": {
            "name": "testingress",
            "namespace": ns,
            "labels": {"test/label": "testvalue"},
            "annotations": {"test/annotation": "testannotationvalue"},
        },
        "spec": spec,
    }


def ingress_groups(ns: str, scheme1: str, scheme2: str) -> dict[str, Obj]:
    def t(host: str, path: str, scheme: str) -> dict[str, str]:
        return {
            "__address__": host,
            f"{K}ingress_scheme": scheme,
            f"{K}ingress_host": host,
            f"{K}ingress_path": path,
        }

    return {
        f"ingress/{ns}/testingress": {
            "labels": {
                f"{K}ingress_name": "testingress",
                f"{K}namespace": ns,
                f"{K}ingress_label_test_label": "testvalue",
                f"{K}ingress_labelpresent_test_label": "true",
                f"{K}ingress_annotation_test_annotation": "testannotationvalue",
                f"{K}ingress_annotationpresent_test_annotation": "true",
                f"{K}ingress_class_name": "testclass",
            },
            "targets": [
                t("example.com", "/", scheme1),
                t("example.com", "/foo", scheme1),
                t("test.example.com", "/", scheme2),
            ],
        }
    }


@pytest.mark.parametrize(
    ("tls", "schemes"),
    [
        (None, ("http", "http")),  # TestIngressDiscoveryAdd (TLSNo)
        (["example.com", "test.example.com"], ("https", "https")),  # TestIngressDiscoveryAddTLS
        (["example.com"], ("https", "http")),  # TestIngressDiscoveryAddMixed
        (["*.example.com"], ("http", "https")),  # TLSWildcard: one level only
    ],
)
def test_ingress_add(kube: FakeKube, tls: list[str] | None, schemes: tuple[str, str]) -> None:
    got = run(kube, "ingress", [], [("put", "ingresses", ingress(tls))])
    assert got == ingress_groups("default", *schemes)


def test_ingress_namespaces(kube: FakeKube) -> None:
    # TestIngressDiscoveryNamespaces (and a third namespace not asked for)
    got = run(
        kube,
        "ingress",
        [],
        [("put", "ingresses", ingress(None, ns)) for ns in ("ns1", "ns2", "ns3")],
        namespaces={"names": ["ns1", "ns2"]},
    )
    assert got == {**ingress_groups("ns1", "http", "http"), **ingress_groups("ns2", "http", "http")}
