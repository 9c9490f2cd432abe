"""The scale path: the one inferwatch config as Prometheus, Alertmanager, Grafana,
OpenTelemetry Collector and Kubernetes files.

>>> from inferwatch.config import Config
>>> [f.path for f in export("prometheus", Config())][:2]
['prometheus.yml', 'rules/inferwatch.rules.yml']
"""

from inferwatch.export._files import ExportedFile, write_files
from inferwatch.export._options import ExportOptions
from inferwatch.export._targets import TARGETS, export

__all__ = ["TARGETS", "ExportOptions", "ExportedFile", "export", "write_files"]
