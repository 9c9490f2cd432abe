"""The scale path: the one inferwatch config as Prometheus, Alertmanager, Grafana,
OpenTelemetry Collector and Kubernetes files.

>>> from inferwatch.config import Config
>>> files = export("prometheus", Config(), rule_files={"rules/x.rules.yml": {"groups": []}})
>>> [f.path for f in files]
['prometheus.yml', 'rules/x.rules.yml']
"""

from inferwatch.export._files import ExportedFile, write_files
from inferwatch.export._options import ExportOptions
from inferwatch.export._prometheus import RuleFiles
from inferwatch.export._targets import TARGETS, export

__all__ = ["TARGETS", "ExportOptions", "ExportedFile", "RuleFiles", "export", "write_files"]
