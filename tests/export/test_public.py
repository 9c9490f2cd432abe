"""The export package's public names, pinned."""

from __future__ import annotations

import inferwatch.export


def test_public_names() -> None:
    assert set(inferwatch.export.__all__) == {
        "TARGETS", "ExportOptions", "ExportedFile", "RuleFiles", "export", "write_files"}
    assert set(inferwatch.export.TARGETS) == {"prometheus", "alertmanager", "grafana", "otel-collector",
                                              "kubernetes"}
