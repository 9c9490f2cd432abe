"""``kubernetes_sd_configs`` against a small fake of the Kubernetes API (list, then watch)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests._require import require_tool

from inferwatch._exceptions import ConfigError
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
    # rule: Prometheus 2.42's SDConfig checks, with its messages
    ({"role": "pod", "api_server": "http://x", "kubeconfig_file": "k.yml"},
     "cannot use 'kubeconfig_file' and 'api_server' simultaneously"),
    ({"role": "pod", "kubeconfig_file": "k.yml", "authorization": {"credentials": "t"}},
     "custom HTTP client configuration together with 'kubeconfig_file'"),
    ({"role": "pod", "authorization": {"credentials": "t"}},
     "please provide the 'api_server' URL explicitly"),
    ({"role": "pod", "api_server": "http://x", "namespaces": {"own_namespace": True}},
     "cannot use 'api_server' and 'namespaces.own_namespace' simultaneously"),
    ({"role": "pod", "api_server": "http://x", "selectors": [{"role": "node", "label": "a=b"}]},
     "pod role supports only pod selectors"),
    ({"role": "endpoints", "api_server": "http://x", "selectors": [{"role": "ingress"}]},
     "endpoints role supports only pod, service, endpoints selectors"),
    ({"role": "endpointslice", "api_server": "http://x", "selectors": [{"role": "pod"}, {"role": "pod"}]},
     "duplicated selector role: pod"),
    ({"role": "endpoint", "api_server": "http://x"}, "role"),
])
def test_what_prometheus_refuses_is_refused_at_load(cfg: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        KubernetesSDConfig.model_validate(cfg)


def test_the_endpoints_role_watches_endpoints_services_and_pods(kube: FakeKube) -> None:
    svc = {"metadata": {"name": "ranker", "namespace": "ml", "labels": {"tier": "gpu"}}, "spec": {}}
    eps: dict[str, Any] = {"metadata": {"name": "ranker", "namespace": "ml"},
           "subsets": [{"addresses": [{"ip": "10.1.0.5", "targetRef": {"kind": "Pod", "name": "ranker-1",
                                                                        "namespace": "ml"}}],
                        "ports": [{"name": "metrics", "port": 8000, "protocol": "TCP"}]}]}
    kube.put("services", svc)
    kube.put("pods", pod("ranker-1", "10.1.0.5", namespace="ml", labels={"app": "ranker"}))
    kube.put("endpoints", eps)
    cfg = KubernetesSDConfig(role="endpoints", api_server=kube.url, namespaces={"names": ["ml"]},
                             selectors=[{"role": "pod", "label": "app=ranker"},
                                        {"role": "endpoints", "field": "metadata.name=ranker"}])
    source = KubernetesSource(cfg, clock=SystemClock())
    source.start()
    try:
        def targets() -> dict[str, dict[str, str]]:
            source._changed = True
            groups = source.poll(0.0) or []
            return {t: {**g.labels, **g.meta[i]} for g in groups for i, t in enumerate(g.targets)}

        _until(lambda: targets().get("10.1.0.5:8000", {}).get(f"{M}pod_name") == "ranker-1", "listed")
        got = targets()["10.1.0.5:8000"]
        assert got[f"{M}service_label_tier"] == "gpu" and got[f"{M}pod_container_port_name"] == "metrics"
        assert got[f"{M}endpoint_address_target_name"] == "ranker-1"
        _until(lambda: len(kube.watches()) >= 3, "watching the three kinds")
        # a scale-out: a new address, then the service relabelled, both seen through the watches
        eps["subsets"][0]["addresses"].append({"ip": "10.1.0.6"})
        kube.put("endpoints", eps)
        _until(lambda: "10.1.0.6:8000" in targets(), "the added address")
        kube.put("services", {**svc, "metadata": {**svc["metadata"], "labels": {"tier": "cpu"}}})
        _until(lambda: targets()["10.1.0.6:8000"].get(f"{M}service_label_tier") == "cpu",
               "the service's change")
        kube.delete("endpoints", "ml", "ranker")
        _until(lambda: targets() == {}, "the deleted endpoints gone")
    finally:
        source.stop()
    lists: dict[str, dict[str, str]] = {path: q for path, q in kube.requests if "watch" not in q}
    assert lists == {"/api/v1/namespaces/ml/endpoints": {"fieldSelector": "metadata.name=ranker"},
                     "/api/v1/namespaces/ml/services": {},
                     "/api/v1/namespaces/ml/pods": {"labelSelector": "app=ranker"}}
    assert all(q["allowWatchBookmarks"] == "true" and q["resourceVersion"] for q in kube.watches())


def test_endpointslice_and_ingress_are_read_from_their_api_groups(kube: FakeKube) -> None:
    for role in ("endpointslice", "ingress"):
        source = KubernetesSource(KubernetesSDConfig(role=role, api_server=kube.url), clock=SystemClock())
        assert source.poll(0.0) is not None and source.error == ""
    assert [p for p, _ in kube.requests] == ["/apis/discovery.k8s.io/v1/endpointslices", "/api/v1/services",
                                             "/api/v1/pods", "/apis/networking.k8s.io/v1/ingresses"]


def test_kubeconfig_file_gives_the_server_and_the_token(kube: FakeKube, tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret\n")
    kubeconfig = tmp_path / "kube" / "config"
    kubeconfig.parent.mkdir()
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
current-context: lab
contexts:
- {{name: lab, context: {{cluster: c1, user: sa, namespace: ignored}}}}
- {{name: other, context: {{cluster: c2, user: sa}}}}
clusters:
- {{name: c1, cluster: {{server: "{kube.url}"}}}}
- {{name: c2, cluster: {{server: "http://127.0.0.1:9"}}}}
users:
- {{name: sa, user: {{tokenFile: ../token}}}}
""")
    kube.put("pods", pod("a", "10.1.0.5"))
    cfg = KubernetesSDConfig(role="pod", kubeconfig_file=str(kubeconfig))
    groups = KubernetesSource(cfg, clock=SystemClock()).poll(0.0)
    assert [t for g in groups or [] for t in g.targets] == ["10.1.0.5:8000"]
    assert kube.authorizations == ["Bearer s3cret"]


@pytest.mark.parametrize(("text", "why"), [
    ("current-context: ''\n", "no current-context"),
    ("current-context: x\ncontexts: []\n", "no context named 'x'"),
    ("current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
     "clusters: [{name: c, cluster: {server: 'https://k'}}]\n"
     "users: [{name: u, user: {exec: {command: aws}}}]\n", "exec credential plugins are not supported"),
    ("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, cluster: {}}]\n",
     "has no http\\(s\\) server URL"),
])
def test_a_kubeconfig_it_cannot_use_is_refused_clearly(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(ConfigError, match=why):
        KubernetesSource(KubernetesSDConfig(role="pod", kubeconfig_file=str(path)), clock=SystemClock())


def test_in_cluster_own_namespace(kube: FakeKube, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the service account's token, CA and namespace; own_namespace adds it to the names given
    openssl = require_tool("openssl")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=k",
                    "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "ca.crt")],
                   check=True, capture_output=True, timeout=60)
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "namespace").write_text("own-ns")
    host, port = kube.url.removeprefix("http://").split(":")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    kube.put("pods", pod("mine", "10.1.0.5", namespace="own-ns"))
    kube.put("pods", pod("theirs", "10.1.0.6", namespace="non-own-ns"))
    cfg = KubernetesSDConfig(role="pod", namespaces={"own_namespace": True})
    source = KubernetesSource(cfg, clock=SystemClock(), transport=_PlainHTTP(), service_account_dir=tmp_path)
    groups = source.poll(0.0)
    assert [g.source for g in groups or []] == ["pod/own-ns/mine"]
    assert kube.requests[0][0] == "/api/v1/namespaces/own-ns/pods"
    assert kube.authorizations == ["Bearer sa-token"]


class _PlainHTTP(httpx.BaseTransport):
    """The in-cluster URL is https; the fake speaks http: the request goes out as http (tests only)."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(scheme="http")
        return self._inner.handle_request(request)
