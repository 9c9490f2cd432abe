"""Troubleshooting playbooks; first, "GPU utilisation fell while QPS is unchanged".

>>> from inferwatch.store import MemoryStore
>>> diagnose_gpu(MemoryStore(), now=1e9).status
'not_enough_data'
"""

from inferwatch.diagnose._causes import CAUSES, Finding
from inferwatch.diagnose._evidence import Change, Evidence, Link, SeriesSource, gather_evidence
from inferwatch.diagnose._nvidia_smi import PcieLink, parse_pcie_query, topology_crossings
from inferwatch.diagnose._playbook import GpuDiagnosis, diagnose_gpu
from inferwatch.diagnose._remote import QueryRangeSource
from inferwatch.diagnose._report import render_text
from inferwatch.diagnose._runner import CommandResult, CommandRunner, RecordedRunner, SubprocessRunner

__all__ = [
    "CAUSES",
    "Change",
    "CommandResult",
    "CommandRunner",
    "Evidence",
    "Finding",
    "GpuDiagnosis",
    "Link",
    "PcieLink",
    "QueryRangeSource",
    "RecordedRunner",
    "SeriesSource",
    "SubprocessRunner",
    "diagnose_gpu",
    "gather_evidence",
    "parse_pcie_query",
    "render_text",
    "topology_crossings",
]
