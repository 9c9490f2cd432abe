// Drift: per model and feature PSI (from PromQL) with the verdict; KS, JS and the reference vs current
// histogram where the server has the last window's report; the history of PSI.

import { get, instant, rangeOf, RANGES, rateWindow, serverNow } from "./api.js";
import { panel } from "./chart.js";
import { fmtTime, h, hashParams, fill } from "./dom.js";

// DESIGN.md: PSI > 0.1 warns (P2 digest), > 0.25 asks for review, > 0.5 recommends rollback.
export function verdict(psi) {
  if (psi > 0.5) return ["rollback", "recommend rollback"];
  if (psi > 0.25) return ["review", "human review"];
  if (psi > 0.1) return ["warn", "drift (P2)"];
  return ["stable", "stable"];
}

const num = (v, d = 3) => (v === null || v === undefined ? "-" : Number(v).toFixed(d));

// A numeric bin's label is "< a", "a – b" or "≥ b": under the bar its lower edge only (the bins touch),
// the whole range in its title; a category's name as it is.
export function edge(label) {
  const m = /^(.+?) – .+$/.exec(label);
  return m ? m[1] : label;
}

function histogram(f) {
  const { labels, reference, current } = f.bins;
  const max = Math.max(...reference, ...current, 1e-9);
  return h("div", { class: "hist", title: "reference (grey) vs current (blue) proportion per bin" },
    labels.map((l, i) => h("div", { class: "bin", title: l },
      h("div", { class: "bars" }, h("span", { class: "ref", style: `height:${(100 * reference[i]) / max}%` }),
        h("span", { class: "cur", style: `height:${(100 * current[i]) / max}%` })),
      h("small", {}, edge(l)))));
}

export async function render(main) {
  const params = hashParams();
  const rangeName = params.get("range") || "1h";
  const now = await serverNow();
  // The table shows the latest PSI within the chart's range (not only at this instant), so it never
  // says "no PSI" above a chart with data; the window sizes say why a window has no verdict.
  const span = RANGES[rangeName] || 3600;
  const [psi, sizes, reports] = await Promise.all([
    instant(`last_over_time(inferwatch_feature_psi[${span}s])`, now),
    instant("inferwatch_drift_window_samples", now), get("api/v1/dashboard/drift")]);
  const detail = new Map();
  for (const r of reports) for (const f of r.features) detail.set(`${r.service}/${r.model}/${f.name}`, { ...f, window: r });
  const rows = psi.result.map((s) => ({ m: s.metric, psi: Number(s.value[1]) }))
    .sort((a, b) => b.psi - a.psi);
  const rangeSel = h("select", { id: "drift-range", "aria-label": "range",
    onchange: (e) => { location.hash = `#/drift?range=${e.target.value}`; } },
  Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === rangeName }, r)));
  // KS and JS need the window's report (and KS the raw values, which a streaming window does not keep):
  // a column shows only where some feature has its statistic
  const has = (k) => [...detail.values()].some((d) => d[k] !== null && d[k] !== undefined);
  const stats = ["ks", "js"].filter(has);
  const table = rows.length ? h("table", { class: "table", id: "drift-table" },
    h("thead", {}, h("tr", {}, ["service", "model", "feature", "PSI", ...stats.map((k) => k.toUpperCase()), "verdict", "reference vs current"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map(({ m, psi: v }) => {
      const d = detail.get(`${m.service}/${m.model}/${m.feature}`);
      const [cls, text] = verdict(v);
      return h("tr", { "data-feature": m.feature },
        h("td", {}, m.service || "-"), h("td", {}, m.model || "-"), h("td", {}, m.feature),
        h("td", { "data-label": "PSI" }, num(v)), ...stats.map((k) => h("td", { "data-label": k.toUpperCase() }, num(d && d[k]))),
        h("td", {}, h("span", { class: `badge v-${cls}` }, text)),
        h("td", {}, d ? histogram(d) : h("span", { class: "muted small" }, "histogram: in-process drift only")));
    }))) : h("p", { class: "muted", id: "drift-empty" }, `no PSI in the last ${rangeName} `
      + "(inferwatch_feature_psi appears when a drift window with enough rows closes)");
  const small = sizes.result.map((s) => `${s.metric.service || "-"}/${s.metric.model || "-"}: last window ${Number(s.value[1])} rows`);
  const hist = panel({ title: "PSI history", unit: "",
    thresholds: [{ value: 0.1, label: "P2 drift", color: "#c9a400" }, { value: 0.25, label: "review", color: "#f08c00" },
      { value: 0.5, label: "rollback", color: "#c92a2a" }],
    queries: [{ expr: "inferwatch_feature_psi", legend: "{{model}} {{feature}}" }] });
  const windows = reports.map((r) => `${r.service}/${r.model}: window from ${fmtTime(r.start)}, ${r.rows} rows`);
  fill(main, h("h2", {}, "Drift"), h("div", { class: "toolbar" }, h("label", {}, "range ", rangeSel)),
    windows.length ? h("p", { class: "muted small" }, windows.join("; ")) : null,
    small.length ? h("p", { class: "muted small", id: "drift-sizes" }, small.join("; ")) : null, table, hist.el);
  const r = rangeOf(rangeName, now);
  await hist.load(r, { w: rateWindow(r) });
}
