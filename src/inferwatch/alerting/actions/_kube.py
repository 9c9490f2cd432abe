"""Scale out a Kubernetes Deployment via its ``scale`` subresource (apps/v1).

Credentials, in order: the action's ``api_server``/``token``, a kubeconfig
(``kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``), the in-cluster service
account. Without any, the action records what it would have done.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from inferwatch._exceptions import ActionError, NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting.actions._actions import fill_placeholders
from inferwatch.model import parse_matchers
from inferwatch.rules import Alert
from inferwatch.settings import KubernetesScaleSpec

__all__ = ["KubeCredentials", "KubernetesScaleAction", "find_credentials"]

# Standard Kubernetes variables (not inferwatch's own).
KUBECONFIG_ENV = "KUBECONFIG"
SERVICE_HOST_ENV, SERVICE_PORT_ENV = "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"
SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True, slots=True)
class KubeCredentials:
    """Where the API server is and how to authenticate."""

    server: str
    token: str = ""
    ca_file: str = ""
    client_cert: tuple[str, str] | None = None
    source: str = ""


def _write_temp(data_b64: str, suffix: str) -> str:
    fd, path = tempfile.mkstemp(prefix="inferwatch-kube-", suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data_b64))
    return path


def _from_kubeconfig(path: Path) -> KubeCredentials:
    try:
        doc = yaml.safe_load(path.read_text())
        ctx_name = doc["current-context"]
        ctx = next(c["context"] for c in doc["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == ctx["cluster"])
        users = doc.get("users", [])
        user: dict[str, str] = next((u["user"] for u in users if u["name"] == ctx.get("user")), {})
    except (OSError, yaml.YAMLError, KeyError, StopIteration, TypeError) as exc:
        raise ActionError(f"kubeconfig {path}: cannot read the current context ({exc!r})") from None
    ca = cluster.get("certificate-authority", "")
    if cluster.get("certificate-authority-data"):
        ca = _write_temp(cluster["certificate-authority-data"], ".crt")
    cert = None
    if user.get("client-certificate-data") and user.get("client-key-data"):
        cert = (_write_temp(user["client-certificate-data"], ".crt"),
                _write_temp(user["client-key-data"], ".key"))
    elif user.get("client-certificate") and user.get("client-key"):
        cert = (user["client-certificate"], user["client-key"])
    return KubeCredentials(cluster["server"], str(user.get("token", "")), ca, cert, f"kubeconfig {path}")


def find_credentials(spec: KubernetesScaleSpec, env: dict[str, str] | None = None) -> KubeCredentials | None:
    """The first credentials found, or ``None``."""
    env = dict(os.environ) if env is None else env
    if spec.api_server:
        token = spec.token.reveal() if spec.token else ""
        return KubeCredentials(spec.api_server, token, source="config")
    paths = [spec.kubeconfig] if spec.kubeconfig else [*env.get(KUBECONFIG_ENV, "").split(os.pathsep)]
    if not spec.kubeconfig:
        paths.append(str(Path.home() / ".kube" / "config"))
    for p in paths:
        if p and Path(p).is_file():
            return _from_kubeconfig(Path(p))
    if spec.kubeconfig:
        raise ActionError(f"kubeconfig {spec.kubeconfig} not found")
    if env.get(SERVICE_HOST_ENV) and (SA_DIR / "token").is_file():
        host, port = env[SERVICE_HOST_ENV], env.get(SERVICE_PORT_ENV, "443")
        return KubeCredentials(f"https://{host}:{port}", (SA_DIR / "token").read_text().strip(),
                               str(SA_DIR / "ca.crt"), source="in-cluster")
    return None


class KubernetesScaleAction:
    """Adds ``step`` replicas per firing episode, never beyond ``max_replicas``."""

    def __init__(self, spec: KubernetesScaleSpec) -> None:
        self.name = spec.name
        self.matchers = tuple(m for t in spec.matchers for m in parse_matchers(t))
        self._spec = spec
        self._creds: KubeCredentials | None = None
        self._looked = False

    def _client(self) -> tuple[HttpClient, KubeCredentials] | None:
        if not self._looked:
            self._creds, self._looked = find_credentials(self._spec), True
        if self._creds is None:
            return None
        c = self._creds
        verify: bool | ssl.SSLContext = False
        if self._spec.verify_tls and c.server.startswith("https"):
            verify = ssl.create_default_context(cafile=c.ca_file or None)
            if c.client_cert:
                verify.load_cert_chain(*c.client_cert)
        return HttpClient(timeout=self._spec.timeout, verify=verify), c

    def fire(self, alert: Alert) -> str:
        """Read the scale, patch ``spec.replicas`` up to the maximum."""
        s = self._spec
        name = fill_placeholders(s.deployment, alert.labels)
        found = self._client()
        if found is None:
            return (f"skipped: no Kubernetes credentials (would scale deployment {s.namespace}/{name} "
                    f"by {s.step}, max {s.max_replicas})")
        http, creds = found
        url = f"{creds.server.rstrip('/')}/apis/apps/v1/namespaces/{s.namespace}/deployments/{name}/scale"
        headers = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
        try:
            current = int(http.request("GET", url, headers=headers).json()["spec"].get("replicas", 0))
            if current >= s.max_replicas:
                return f"deployment {s.namespace}/{name} already at {current} replicas (max {s.max_replicas})"
            want = min(current + s.step, s.max_replicas)
            http.request("PATCH", url, json={"spec": {"replicas": want}},
                         headers={**headers, "Content-Type": "application/merge-patch+json"})
        except NotifyError as exc:
            raise ActionError(f"scale {s.namespace}/{name}: {exc}") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ActionError(f"scale {s.namespace}/{name}: unexpected answer ({exc!r})") from None
        finally:
            http.close()
        return f"scaled deployment {s.namespace}/{name} from {current} to {want} replicas"

    def resolve(self, alert: Alert) -> str | None:
        """Scaling back in is left to the autoscaler or the operator."""
        return None
