"""The drift report as one self-contained HTML page: a summary table and inline SVG plots.

No script, font or stylesheet is fetched: the page opens offline. Features are
sorted most drifted first; each gets a bar chart of the reference against the
current fraction per PSI bin (numeric: bins at reference quantiles, so the
reference bars are level and any tilt is drift; categorical: per category).
"""

from __future__ import annotations

from html import escape

from inferwatch.quality.drift._report import DriftReport, FeatureDrift

__all__ = ["render_html"]

_COLOURS = {"stable": "#2e7d32", "warning": "#f9a825", "review": "#ef6c00", "rollback": "#c62828"}
_REF, _CUR = "#90a4ae", "#1e88e5"

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px} .meta{color:#666;margin-bottom:16px}
table{border-collapse:collapse;width:100%;margin-bottom:24px}
th,td{padding:4px 8px;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child{text-align:left} th{background:#f5f5f5}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px}
section{border:1px solid #e0e0e0;border-radius:6px;padding:8px 12px;margin-bottom:14px}
section h2{font-size:16px;margin:4px 0} .legend span{margin-right:14px}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
"""


def _f(v: float | None, digits: int = 4) -> str:
    return "–" if v is None else f"{v:.{digits}g}"


def _badge(verdict: str) -> str:
    return f'<span class="badge" style="background:{_COLOURS[verdict]}">{verdict}</span>'


def _row(f: FeatureDrift) -> str:
    cells = [_f(f.psi), _f(f.psi_critical), _f(f.ks), _f(f.ks_p_value, 3), _f(f.js), _f(f.wasserstein),
             _f(f.chi2_p_value, 3)]
    tds = "".join(f"<td>{c}</td>" for c in cells)
    name = escape(f.name)
    return (f'<tr class="feature" data-feature="{name}" data-verdict="{f.verdict.value}">'
            f'<td><a href="#f-{name}">{name}</a> <small>{f.type}</small></td>{tds}'
            f"<td>{_badge(f.verdict.value)}</td></tr>")


def _svg(f: FeatureDrift, width: int = 980, height: int = 250) -> str:
    n = len(f.buckets)
    top = max(max(f.reference_proportions), max(f.current_proportions), 1e-9)
    left, bottom, plot_h = 50, 90, height - 110
    slot = (width - left - 10) / n
    bar = max(slot * 0.38, 1.0)
    parts = [f'<svg class="plot" data-feature="{escape(f.name)}" xmlns="http://www.w3.org/2000/svg" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">']
    parts.append(f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" '
                 'stroke="#999"/>')
    for tick in (0.0, 0.5, 1.0):
        y = height - bottom - tick * plot_h
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
                     f"{tick * top:.2f}</text>")
    for i, (label, r, c) in enumerate(zip(f.buckets, f.reference_proportions, f.current_proportions,
                                          strict=True)):
        x = left + i * slot + slot * 0.1
        for dx, v, colour, who in ((0.0, r, _REF, "reference"), (bar, c, _CUR, "current")):
            h = v / top * plot_h
            parts.append(f'<rect x="{x + dx:.1f}" y="{height - bottom - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="{colour}">'
                         f"<title>{escape(label)} {who}: {v:.4f}</title></rect>")
        if n <= 30:
            tx, ty = x + bar, height - bottom + 12
            parts.append(f'<text x="{tx:.1f}" y="{ty}" font-size="9" text-anchor="end" '
                         f'transform="rotate(-35 {tx:.1f} {ty})">{escape(label[:24])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _section(f: FeatureDrift) -> str:
    name = escape(f.name)
    facts = (f"PSI {_f(f.psi)} (no-drift critical value {_f(f.psi_critical)}, "
             f"{'significant' if f.significant else 'not significant'}) · "
             f"{f.n_reference} reference, {f.n_current} current values"
             + (f", {f.missing_current} missing" if f.missing_current else ""))
    return (f'<section id="f-{name}" class="feature" data-feature="{name}"><h2>{name} '
            f"{_badge(f.verdict.value)}</h2><div>{facts}</div>{_svg(f)}</section>")


def render_html(report: DriftReport, *, reference: str = "reference", current: str = "current") -> str:
    """The whole page as a string (features most drifted first)."""
    feats = report.by_drift()
    counts = ", ".join(f"{sum(f.verdict.value == v for f in feats)} {v}" for v in _COLOURS)
    head = ("<tr><th>feature</th><th>PSI</th><th>PSI critical</th><th>KS</th><th>KS p</th>"
            "<th>JS</th><th>Wasserstein</th><th>χ² p</th><th>verdict</th></tr>")
    legend = (f'<div class="legend"><span><i class="sw" style="background:{_REF}"></i>reference</span>'
              f'<span><i class="sw" style="background:{_CUR}"></i>current</span></div>')
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>inferwatch drift report</title><style>{_CSS}</style></head><body>"
        f"<h1>Drift report {_badge(report.verdict.value)}</h1>"
        f'<div class="meta">{escape(reference)} ({report.rows_reference} rows) against '
        f"{escape(current)} ({report.rows_current} rows) · {len(feats)} features: {counts}</div>"
        f'<table id="summary">{head}{"".join(_row(f) for f in feats)}</table>{legend}'
        f'{"".join(_section(f) for f in feats)}</body></html>\n'
    )
