"""Kubernetes resources: ``inferwatch serve`` as a Deployment, and prometheus-operator resources.

``inferwatch.yaml``: Namespace, ConfigMap (the effective config, listening on
all interfaces of the pod), Deployment (non-root, read-only root file system,
probes on ``/-/ready`` and ``/-/healthy``) and Service.
``prometheus-operator.yaml``: a ``PrometheusRule`` with the same rule groups
as the Prometheus export, a ``ServiceMonitor`` for the inferwatch server and
a ``PodMonitor`` for model servers instrumented with the SDK (pods labelled
``inferwatch.io/monitored: "true"`` with a container port named ``metrics``).
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config
from inferwatch.export._configdoc import config_document
from inferwatch.export._files import ExportedFile, dump_yaml
from inferwatch.export._options import ExportOptions
from inferwatch.export._prometheus import RuleFiles
from inferwatch.model import DEFAULT_INTERVAL_S, Dimension, format_duration

__all__ = ["MONITORED_LABEL", "PORT", "export_kubernetes"]

NAME = "inferwatch"
PORT = 9464
CONFIG_PATH = "/etc/inferwatch/inferwatch.yaml"
DATA_DIR = "/var/lib/inferwatch"
MONITORED_LABEL = "inferwatch.io/monitored"
_LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "server"}


def _meta(name: str, opts: ExportOptions, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": opts.namespace, "labels": dict(_LABELS), **extra}


def _configmap(config: Config, opts: ExportOptions) -> dict[str, Any]:
    doc = config_document(config)
    # off loopback reads need credentials by default: the ServiceMonitor's scrape of /metrics stays open
    auth = {"anonymous_metrics": True, **doc["server"].get("auth", {})}
    doc["server"] = {**doc["server"], "listen": f"0.0.0.0:{PORT}", "data_dir": DATA_DIR, "auth": auth}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(NAME, opts),
            "data": {"inferwatch.yaml": dump_yaml(doc)}}


def _probe(path: str, period: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "timeoutSeconds": 5,
            "failureThreshold": 3}


def _deployment(opts: ExportOptions) -> dict[str, Any]:
    container = {
        "name": NAME, "image": opts.image, "imagePullPolicy": "IfNotPresent",
        "args": ["serve", "--config", CONFIG_PATH],
        "ports": [{"name": "http", "containerPort": PORT, "protocol": "TCP"}],
        "readinessProbe": _probe("/-/ready", 10), "livenessProbe": _probe("/-/healthy", 30),
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/inferwatch", "readOnly": True},
                         {"name": "data", "mountPath": DATA_DIR}],
    }
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME, opts),
        "spec": {
            # One replica: the SQLite store and alert state are local to the pod.
            "replicas": 1, "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(_LABELS)},
            "template": {
                "metadata": {"labels": dict(_LABELS)},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001,
                                        "fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [{"name": "config", "configMap": {"name": NAME}},
                                {"name": "data", "emptyDir": {}}],
                },
            },
        },
    }


def _service(opts: ExportOptions) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(NAME, opts),
            "spec": {"selector": dict(_LABELS), "type": "ClusterIP",
                     "ports": [{"name": "http", "port": PORT, "targetPort": "http", "protocol": "TCP"}]}}


def _operator(opts: ExportOptions, rule_files: RuleFiles) -> list[dict[str, Any]]:
    groups = [g for doc in rule_files.values() for g in doc["groups"]]
    service_interval = format_duration(DEFAULT_INTERVAL_S[Dimension.SERVICE])
    infra_interval = format_duration(DEFAULT_INTERVAL_S[Dimension.INFRASTRUCTURE])
    return [
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
         "metadata": _meta(f"{NAME}-rules", opts), "spec": {"groups": groups}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": _meta(NAME, opts),
         "spec": {"selector": {"matchLabels": dict(_LABELS)},
                  "endpoints": [{"port": "http", "path": "/metrics",
                                 "interval": infra_interval}]}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
         "metadata": _meta(f"{NAME}-model-servers", opts),
         "spec": {"selector": {"matchLabels": {MONITORED_LABEL: "true"}},
                  "namespaceSelector": {"any": True},
                  "podMetricsEndpoints": [
                      {"port": "metrics", "path": "/metrics", "interval": service_interval}]}},
    ]


def _stream(docs: list[dict[str, Any]]) -> str:
    return "---\n".join(dump_yaml(d) for d in docs)


def export_kubernetes(config: Config, opts: ExportOptions, rule_files: RuleFiles) -> list[ExportedFile]:
    """``inferwatch.yaml`` (the server) and ``prometheus-operator.yaml`` (rules, monitors)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": opts.namespace}}
    server = [namespace, _configmap(config, opts), _deployment(opts), _service(opts)]
    return [
        ExportedFile("inferwatch.yaml", _stream(server),
                     "Namespace, ConfigMap (the config), Deployment and Service of inferwatch serve",
                     secret=True),
        ExportedFile("prometheus-operator.yaml", _stream(_operator(opts, rule_files)),
                     "PrometheusRule (every rule), ServiceMonitor (inferwatch), PodMonitor (model servers)"),
    ]
