"""``kubernetes_sd_configs`` against a small fake of the Kubernetes API (list, then watch)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from inferwatch.config import KubernetesSDConfig, ScrapeJob
from inferwatch.model import SimulatedClock, SystemClock
from inferwatch.server.ingest import Discovery
from inferwatch.server.ingest.discovery import KubernetesSource, node_group, pod_group, service_group

from ._kube_fake import FakeKube, fake_kube, pod

M = "__meta_kubernetes_"


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with fake_kube() as k:
        yield k


def _until(check: Callable[[], bool], what: str, within_s: float = 60.0) -> None:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"not {what} within {within_s:g} s")


def test_a_pod_gives_one_target_per_container_port_with_prometheus_labels() -> None:
    labels = {"app.kubernetes.io/name": "ranker"}
    g = pod_group(pod("ranker-1", "10.1.0.5", labels=labels, ports=(8000, 9000)))
    assert g.source == "pod/default/ranker-1" and g.targets == ("10.1.0.5:8000", "10.1.0.5:9000")
    assert g.labels == {
        f"{M}pod_name": "ranker-1", f"{M}pod_ip": "10.1.0.5", f"{M}pod_ready": "true",
        f"{M}pod_phase": "Running", f"{M}pod_node_name": "gpu-node-1", f"{M}pod_host_ip": "10.0.0.1",
        f"{M}pod_uid": "", f"{M}namespace": "default",
        f"{M}pod_label_app_kubernetes_io_name": "ranker",
        f"{M}pod_labelpresent_app_kubernetes_io_name": "true",
        f"{M}pod_annotation_prometheus_io_scrape": "true",
        f"{M}pod_annotationpresent_prometheus_io_scrape": "true",
        f"{M}pod_controller_kind": "ReplicaSet", f"{M}pod_controller_name": "ranker-7d9"}
    assert g.meta[1] == {f"{M}pod_container_name": "server", f"{M}pod_container_id": "containerd://ranker-1",
                         f"{M}pod_container_image": "ranker:1", f"{M}pod_container_init": "false",
                         f"{M}pod_container_port_number": "9000", f"{M}pod_container_port_name": "p1",
                         f"{M}pod_container_port_protocol": "TCP"}
    # a pod without an IP yet has no targets (Prometheus sends an empty group)
    pending = pod("ranker-2", "")
    assert pod_group(pending).targets == ()


def test_services_and_nodes() -> None:
    svc = service_group({"metadata": {"name": "ranker", "namespace": "ml", "labels": {"tier": "gpu"}},
                         "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.7",
                                  "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}})
    assert svc.targets == ("ranker.ml.svc:80",)
    assert svc.meta[0] == {f"{M}service_port_name": "http", f"{M}service_port_number": "80",
                           f"{M}service_port_protocol": "TCP", f"{M}service_type": "ClusterIP",
                           f"{M}service_cluster_ip": "10.96.0.7"}
    assert svc.labels[f"{M}service_label_tier"] == "gpu"
    node = node_group({"metadata": {"name": "gpu-node-1"}, "spec": {"providerID": "aws:///i-1"},
                       "status": {"addresses": [{"type": "Hostname", "address": "gpu-node-1"},
                                                {"type": "InternalIP", "address": "10.0.0.1"}],
                                  "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}})
    assert node.targets == ("10.0.0.1:10250",)
    assert node.meta[0] == {"instance": "gpu-node-1", f"{M}node_address_Hostname": "gpu-node-1",
                            f"{M}node_address_InternalIP": "10.0.0.1"}


def test_list_then_watch_follows_pods_added_and_removed(kube: FakeKube) -> None:
    kube.put("pods", pod("ranker-1", "10.1.0.5"))
    cfg = KubernetesSDConfig(role="pod", api_server=kube.url, namespaces={"names": ["default"]},
                             selectors=[{"role": "pod", "label": "app=ranker"}])
    kube.put("pods", pod("other", "10.1.0.9"))  # not selected
    kube.put("pods", pod("ranker-2", "10.1.0.6", labels={"app": "ranker"}))
    source = KubernetesSource(cfg, clock=SystemClock())
    source.start()
    try:
        def addresses() -> list[str]:
            source._changed = True  # read the current objects (poll returns them only when changed)
            return sorted(t for g in source.poll(0.0) or [] for t in g.targets)

        _until(lambda: addresses() == ["10.1.0.6:8000"], "listed")
        _until(lambda: bool(kube.watches()), "watching")
        kube.put("pods", pod("ranker-3", "10.1.0.7", labels={"app": "ranker"}))
        _until(lambda: addresses() == ["10.1.0.6:8000", "10.1.0.7:8000"], "the added pod seen")
        kube.delete("pods", "default", "ranker-2")
        _until(lambda: addresses() == ["10.1.0.7:8000"], "the deleted pod gone")
    finally:
        source.stop()
    (listed, list_query), *_ = kube.requests
    assert listed == "/api/v1/namespaces/default/pods" and list_query == {"labelSelector": "app=ranker"}
    first = kube.watches()[0]  # the watch starts where the list ended, as the API asks
    assert first["resourceVersion"] == "4" and first["labelSelector"] == "app=ranker"


def test_a_too_old_version_is_listed_again(kube: FakeKube) -> None:
    kube.put("pods", pod("a", "10.1.0.5"))
    source = KubernetesSource(KubernetesSDConfig(role="pod", api_server=kube.url), clock=SystemClock())
    version = source.relist("/api/v1/pods")
    kube.oldest = int(version) + 1
    with pytest.raises(Exception) as err:  # the private _Gone: list again
        source.watch("/api/v1/pods", version)
    assert type(err.value).__name__ == "_Gone"


def test_a_failing_api_keeps_the_last_targets_and_says_why(kube: FakeKube) -> None:
    kube.put("pods", pod("a", "10.1.0.5"))
    job = ScrapeJob(job="k", kubernetes_sd_configs=[{"role": "pod", "api_server": kube.url}])
    seen: dict[str, list[dict[str, str]]] = {}
    discovery = Discovery([job], clock=SimulatedClock(0))
    discovery.refresh(lambda name, found: seen.__setitem__(name, found))
    assert [t["__address__"] for t in seen["k"]] == ["10.1.0.5:8000"]
    kube.failing = True
    discovery.refresh(lambda name, found: seen.__setitem__(name, found))
    assert "HTTP 503" in discovery.status()[0].error
    assert [t["__address__"] for t in seen["k"]] == ["10.1.0.5:8000"]


@pytest.mark.parametrize(("cfg", "why"), [
    ({"role": "endpoints", "api_server": "http://x"}, "role 'endpoints' is not supported yet"),
    ({"role": "pod", "kubeconfig_file": "k.yml"}, "kubeconfig_file is not supported yet"),
    ({"role": "pod", "api_server": "http://x", "selectors": [{"role": "node", "label": "a=b"}]},
     "selects nothing"),
])
def test_what_is_not_built_is_refused_at_load(cfg: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        KubernetesSDConfig.model_validate(cfg)
