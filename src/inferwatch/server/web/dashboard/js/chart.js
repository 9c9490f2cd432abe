// A panel: title, one or more PromQL range queries drawn with uPlot, threshold lines, PromQL on demand.

import { range } from "./api.js";
import { fmtValue, h, labelText, fill, timeZone } from "./dom.js";

const PALETTE = ["#2f6fdf", "#e8590c", "#2b8a3e", "#ae3ec9", "#0c8599", "#c92a2a", "#5c940d", "#862e9c",
  "#d9480f", "#1864ab"];
export const MAX_SERIES = 50;

// uPlot loads beside the modules (async; early.js notes when it has loaded): a chart waits for it
// only when it has data to draw. A page without that tag loads it now.
let uPlotLoaded = null;
export function uPlotReady() {
  if (window.uPlot) return Promise.resolve(window.uPlot);
  if (!uPlotLoaded) {
    uPlotLoaded = window.inferwatchUPlot || new Promise((resolve, reject) => {
      const tag = document.createElement("script");
      tag.src = new URL("../vendor/uPlot.iife.min.js", import.meta.url).href;
      tag.addEventListener("load", () => resolve(window.uPlot));
      tag.addEventListener("error", () => reject(new Error("the chart library did not load")));
      document.head.append(tag);
    });
  }
  return uPlotLoaded;
}

function legendOf(metric, template) {
  if (template) return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k) => metric[k] ?? "");
  return labelText(metric) || "value";
}

// Align the series of several matrix results on the range's grid (null where a series has no point).
export function align(results, r) {
  const n = Math.floor((r.end - r.start) / r.step) + 1;
  const xs = Array.from({ length: n }, (_, i) => r.start + i * r.step);
  const series = [];
  for (const { result, legend, band } of results) {
    for (const s of result) {
      const ys = new Array(n).fill(null);
      for (const [t, v] of s.values) {
        const i = Math.round((t - r.start) / r.step);
        const y = Number(v);
        if (i >= 0 && i < n && Number.isFinite(y)) ys[i] = y;
      }
      series.push({ label: legendOf(s.metric, legend), ys, band });
    }
  }
  return { xs, series };
}

function thresholdPlugin(thresholds) {
  return {
    hooks: {
      draw: (u) => {
        const { ctx } = u;
        const { left, width, top, height } = u.bbox;
        for (const th of thresholds) {
          const y = u.valToPos(th.value, "y", true);
          if (y < top || y > top + height) continue;
          ctx.save();
          ctx.strokeStyle = th.color; ctx.fillStyle = th.color;
          ctx.setLineDash([6, 4]); ctx.lineWidth = 1.5 * devicePixelRatio;
          ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + width, y); ctx.stroke();
          ctx.font = `${11 * devicePixelRatio}px sans-serif`;
          ctx.textAlign = "right";
          ctx.fillText(th.label, left + width - 4 * devicePixelRatio, y - 3 * devicePixelRatio);
          ctx.restore();
        }
      },
    },
  };
}

// The y range: the data's, stretched to a threshold line that is near it (not to one far above).
function yRange(thresholds) {
  return (u, min, max) => {
    let hi = max ?? 1;
    let lo = Math.min(0, min ?? 0);
    for (const th of thresholds) if (th.value > hi && th.value <= 2.5 * hi) hi = th.value;
    if (hi <= lo) hi = lo + 1;
    return [lo, hi * 1.08];
  };
}

export function promqlDetails(queries) {
  return h("details", { class: "promql" }, h("summary", {}, "PromQL"),
    queries.map((q) => h("div", {},
      h("code", {}, q.expr), " ",
      h("a", { href: `#/explore?q=${encodeURIComponent(q.expr)}` }, "explore"))));
}

// A query with `band: "upper"` or `"lower"` draws a thin dashed edge; the k-th upper and the k-th
// lower series of a panel are filled between (an estimate's sampling band).
function bandsOf(shown) {
  const idx = (which) => shown.map((s, i) => (s.band === which ? i + 1 : 0)).filter(Boolean);
  const up = idx("upper"), lo = idx("lower");
  return up.slice(0, lo.length).map((u, k) => ({ series: [u, lo[k]], fill: `${PALETTE[(u - 1) % PALETTE.length]}22` }));
}

// Each series' last value in the range, as numbers under the chart (a panel with `last: true`): the
// numbers a reader compares (a judge's mean by prompt version) without hovering the chart.
function lastValues(shown, unit) {
  const rows = shown.map((s) => {
    const i = s.ys.findLastIndex((y) => y !== null);
    return i < 0 ? null : h("tr", {}, h("td", { "data-raw": "" }, s.label),
      h("td", { class: "num" }, fmtValue(s.ys[i], unit)));
  }).filter(Boolean);
  return rows.length ? h("table", { class: "last small" }, h("tbody", {}, rows)) : null;
}

// Build the panel element now; `load(r)` fills it and resolves with the number of points drawn.
export function panel({ title, queries, unit, thresholds = [], note, caption, last }) {
  const plotEl = h("div", { class: "plot" });
  const status = h("p", { class: "muted small" });
  const lastEl = h("div", { class: "last" });
  const el = h("section", { class: "panel", "data-title": title, "data-state": "loading" },
    h("h3", {}, title), plotEl, status, last ? lastEl : null,
    caption ? h("p", { class: "small muted caption" }, caption) : null,
    thresholds.length ? h("p", { class: "small muted" }, "lines: ",
      thresholds.map((t) => `${t.label} ${fmtValue(t.value, unit)}`).join(", ")) : null,
    promqlDetails(queries));
  let plot = null;

  async function load(r, vars) {
    const subst = (e) => e.replace(/\$(\w+)/g, (m, k) => (k in vars ? vars[k] : m));
    const exprs = queries.map((q) => ({ ...q, expr: subst(q.expr) }));
    const asked = Promise.all(exprs.map(async (q) => ({ result: (await range(q.expr, r)).result,
      legend: q.legend, band: q.band })));
    el.querySelector(".promql").replaceWith(promqlDetails(exprs));
    try {
      const results = await asked;
      const { xs, series } = align(results, r);
      const shown = series.slice(0, MAX_SERIES);
      const points = shown.reduce((n, s) => n + s.ys.filter((y) => y !== null).length, 0);
      el.dataset.points = String(points);
      el.dataset.series = String(shown.length);
      el.dataset.bands = String(bandsOf(shown).length);
      if (plot) { plot.destroy(); plot = null; }
      fill(plotEl);
      fill(lastEl, last ? lastValues(shown, unit) : null);
      if (!points) {
        el.dataset.state = "empty";
        status.textContent = note || "no data in this range";
        return 0;
      }
      status.textContent = series.length > MAX_SERIES ? `showing ${MAX_SERIES} of ${series.length} series` : "";
      const opts = {
        width: Math.max(280, plotEl.clientWidth || 420), height: 190,
        scales: { x: { time: true }, y: { range: yRange(thresholds) } },
        // the time axis in the configured zone, as every other time on the page
        tzDate: (ts) => UPlot.tzDate(new Date(ts * 1e3), timeZone()),
        axes: [{ stroke: fg(), grid: { stroke: grid() } }, { stroke: fg(), grid: { stroke: grid() }, size: 62, values: (u, vals) => vals.map((v) => fmtValue(v, unit)) }],
        series: [{}, ...shown.map((s, i) => ({
          label: s.label, stroke: PALETTE[i % PALETTE.length], width: s.band ? 0.75 : 1.5, spanGaps: false,
          dash: s.band ? [4, 3] : undefined, value: (u, v) => fmtValue(v, unit),
        }))],
        bands: bandsOf(shown),
        legend: { show: shown.length <= 12 },
        plugins: [thresholdPlugin(thresholds)],
      };
      const UPlot = await uPlotReady();
      if (plot) { plot.destroy(); plot = null; }  // a newer load drew while this one waited
      plot = new UPlot(opts, [xs, ...shown.map((s) => s.ys)], plotEl);
      el.dataset.state = "ok";
      return points;
    } catch (err) {
      el.dataset.state = "error";
      status.textContent = `query failed: ${err.message}`;
      status.className = "msg error small";
      return 0;
    }
  }

  function destroy() { if (plot) plot.destroy(); }
  return { el, load, destroy };
}

function fg() { return getComputedStyle(document.body).color; }
function grid() { return getComputedStyle(document.body).getPropertyValue("--grid").trim() || "#8884"; }
