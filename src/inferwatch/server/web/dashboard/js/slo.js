// SLOs: one row per objective (/api/v1/slos): the error budget left over the period, the SLI now, the
// burn rate per window as a chart with the Workbook's factors, and which alerts' windows are burning.

import { get, rangeOf, RANGES, serverNow } from "./api.js";
import { panel } from "./chart.js";
import { h, fill, hashParams } from "./dom.js";

// The SRE Workbook's factors for 30 days (docs/slo.md): fast page, slow page, ticket (2 pairs).
const FACTORS = [{ value: 14.4, label: "fast page 14.4x", color: "#c92a2a" },
  { value: 6, label: "slow page 6x", color: "#e8590c" }, { value: 3, label: "ticket 3x", color: "#c9a400" },
  { value: 1, label: "1x", color: "#868e96" }];
const KIND = { fast_page: "fast page", slow_page: "slow page", ticket: "ticket" };
const pct = (v, d = 3) => (v === null || v === undefined ? "-" : `${(100 * v).toFixed(d)} %`);
const hours = (sec) => (sec < 5400 ? `${Math.round(sec / 60)} min` : sec < 172800
  ? `${(sec / 3600).toFixed(1)} h` : `${(sec / 86400).toFixed(1)} days`);
const burn = (v) => (v === null || v === undefined ? "-" : `${Number(v).toFixed(2)}x`);

function budgetBar(left) {
  const shown = left === null || left === undefined ? 0 : Math.max(0, Math.min(1, left));
  const cls = left === null || left === undefined ? "" : left <= 0 ? "spent" : left < 0.25 ? "low" : "ok";
  return h("div", { class: `budget ${cls}`, title: "error budget left over the period" },
    h("span", { style: `width:${(100 * shown).toFixed(1)}%` }), h("b", {}, pct(left, 1)));
}

function row(s, r) {
  const firing = s.alerts.filter((a) => a.state === "firing").map((a) => a.alertname);
  const chart = panel({ title: `${s.id}: burn rate`, unit: "", thresholds: FACTORS,
    note: "no burn rate yet: the SLI's requests are not recorded in this range",
    queries: [{ expr: `{__name__=~"slo:sli_error:ratio_rate(5m|1h|6h|3d)",sloth_id="${s.id}"} / ${s.error_budget}`,
      legend: "{{sloth_window}}" }] });
  const windows = h("table", { class: "table small" }, h("tbody", {},
    s.windows.map((w) => h("tr", {}, h("td", {}, w.window), h("td", {}, burn(w.burn_rate))))));
  const el = h("section", { class: "panel slo", "data-slo": s.id, "data-burning": s.burning.join(" ") },
    h("header", { class: "row" }, h("h3", {}, s.id), h("span", { class: "muted small" },
      `objective ${s.objective} % over ${s.period}`, s.description ? ` — ${s.description}` : ""),
    h("span", { class: "grow" }),
    s.burning.map((k) => h("span", { class: `badge burning tier-${s.tiers[k]}` }, `${KIND[k]} windows burning`)),
    firing.map((n) => h("span", { class: "badge firing" }, `firing: ${n}`))),
    h("div", { class: "row" }, h("div", {}, h("div", { class: "muted small" }, "error budget left"),
      budgetBar(s.budget_remaining),
      h("div", { class: "muted small slo-coverage" }, s.data_coverage === null || s.data_coverage === undefined
        ? "under a minute of data yet" : `computed over the ${hours(s.observed_seconds)} observed: `
          + `${pct(s.data_coverage, 2)} of ${s.period}`)),
    h("div", {}, h("div", { class: "muted small" }, "SLI (5m)"), h("b", { class: "sli" }, pct(s.sli))),
    s.downtime ? h("div", { class: "slo-downtime" }, h("div", { class: "muted small" },
      `bad events: ${s.errors_from} + downtime from ${s.downtime.source}`),
    h("b", {}, `unreachable ${pct(s.downtime.unreachable_5m, 1)} of 5m, `,
      `${pct(s.downtime.unreachable_period, 2)} of ${s.period}`)) : null),
    h("div", { class: "slo-body" }, chart.el, windows));
  return { el, load: () => chart.load(r, {}) };
}

export async function render(main, ctx) {
  await draw(main);
  ctx.every(30000, () => draw(main));
}

async function draw(main) {
  const params = hashParams();
  const rangeName = params.get("range") || "6h";
  const [now, slos] = await Promise.all([serverNow(), get("api/v1/slos")]);
  const rangeSel = h("select", { id: "slo-range", "aria-label": "range",
    onchange: (e) => { location.hash = `#/slos?range=${e.target.value}`; } },
  Object.keys(RANGES).map((k) => h("option", { value: k, selected: k === rangeName }, k)));
  if (!slos.length) {
    fill(main, h("h2", {}, "SLOs"), h("p", { class: "muted", id: "slo-empty" },
      "no SLOs: declare slos: or slo_files: in the config (docs/slo.md)"));
    return;
  }
  // ends now, not on the step's grid: a burn that began seconds ago is on the chart
  const grid = rangeOf(rangeName, now);
  const r = { ...grid, end: now, start: now - grid.span };
  const rows = slos.map((s) => row(s, r));
  fill(main, h("h2", {}, "SLOs"), h("div", { class: "toolbar" }, h("label", {}, "range ", rangeSel)),
    h("div", { id: "slo-list" }, rows.map((x) => x.el)));
  await Promise.all(rows.map((x) => x.load()));
  document.body.dataset.rendered = "slos";
}
