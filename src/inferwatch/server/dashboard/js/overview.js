// Overview: the four dimensions of one service, every panel a PromQL range query.

import { get, instant, rangeOf, rateWindow, RANGES, serverNow } from "./api.js";
import { panel } from "./chart.js";
import { fmtValue, h, hashParams, fill } from "./dom.js";

const TIER_COLOURS = { P0: "#d6336c", P1: "#f08c00", P2: "#c9a400", review: "#f08c00", rollback: "#c92a2a" };
const SVC = 'service="$service"';

// Threshold lines from the loaded rules (by name), falling back to the default rule pack's values.
function th(rules, name, fallback, label) {
  const rule = rules.find((r) => r.name === name);
  const m = rule && /([<>]=?|==)\s*([0-9.eE+-]+)\s*$/.exec(rule.query);
  const tier = (rule && rule.labels.tier) || label;
  return { value: m ? Number(m[2]) : fallback, label: `${tier} ${name}`, color: TIER_COLOURS[tier] || "#888" };
}

function sections(rules) {
  const lat = (q) => `histogram_quantile(${q}, sum by (le) (rate(inferwatch_request_duration_seconds_bucket{${SVC}}[$w])))`;
  const reqs = (m) => `sum(rate(inferwatch_requests_total{${SVC}${m}}[$w]))`;
  const conf = (q) => `histogram_quantile(${q}, sum by (le) (rate(inferwatch_prediction_confidence_bucket{${SVC}}[$w])))`;
  return [
    ["Service", [
      { title: "QPS by status code", unit: "reqps",
        queries: [{ expr: `sum by (code) (rate(inferwatch_requests_total{${SVC}}[$w]))`, legend: "{{code}}" }] },
      { title: "Latency P50 / P99", unit: "s",
        thresholds: [th(rules, "HighP99Latency", 0.5, "P2"), th(rules, "SevereLatency", 1, "P1")],
        queries: [{ expr: lat(0.5), legend: "P50" }, { expr: lat(0.99), legend: "P99" }] },
      { title: "Error and 503 ratios", unit: "ratio",
        thresholds: [th(rules, "HighErrorRate", 0.01, "P2"), th(rules, "ServiceUnavailable", 0.5, "P0")],
        queries: [{ expr: `${reqs(',code=~"5.."')} / ${reqs("")}`, legend: "5xx" },
          { expr: `${reqs(',code="503"')} / ${reqs("")}`, legend: "503" }] },
      { title: "In-flight requests", unit: "",
        queries: [{ expr: `sum(inferwatch_inflight_requests{${SVC}})`, legend: "in flight" }] },
    ]],
    ["Infrastructure", [
      { title: "GPU utilisation", unit: "percent", note: "no GPU metrics: scrape `inferwatch exporter` or dcgm-exporter",
        queries: [{ expr: "DCGM_FI_DEV_GPU_UTIL", legend: "GPU {{gpu}} {{Hostname}}" }] },
      { title: "GPU frame-buffer used", unit: "ratio", thresholds: [th(rules, "GPUMemoryHigh", 0.8, "P2")],
        note: "no GPU metrics: scrape `inferwatch exporter` or dcgm-exporter",
        queries: [{ expr: "DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)", legend: "GPU {{gpu}} {{Hostname}}" }] },
      { title: "PCIe throughput", unit: "Bps", note: "no GPU metrics: scrape `inferwatch exporter` or dcgm-exporter",
        queries: [{ expr: "DCGM_FI_PROF_PCIE_RX_BYTES", legend: "rx GPU {{gpu}}" },
          { expr: "DCGM_FI_PROF_PCIE_TX_BYTES", legend: "tx GPU {{gpu}}" }] },
      { title: "Host CPU", unit: "ratio", thresholds: [th(rules, "CPUUtilizationHigh", 0.8, "P2")],
        note: "no host metrics: scrape `inferwatch exporter` or node_exporter",
        queries: [{ expr: '1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[$w]))', legend: "{{instance}}" }] },
      { title: "Host memory used", unit: "ratio", note: "no host metrics: scrape `inferwatch exporter` or node_exporter",
        queries: [{ expr: "1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes", legend: "{{instance}}" }] },
    ]],
    ["Model quality", [
      { title: "Feature drift (PSI)", unit: "",
        thresholds: [{ value: 0.1, label: "P2 drift", color: TIER_COLOURS.P2 },
          { value: 0.25, label: "review", color: TIER_COLOURS.review },
          { value: 0.5, label: "rollback", color: TIER_COLOURS.rollback }],
        queries: [{ expr: `inferwatch_feature_psi{${SVC}}`, legend: "{{feature}}" }] },
      { title: "Prediction confidence (P10 / P50 / P90, mean)", unit: "",
        queries: [{ expr: conf(0.1), legend: "P10" }, { expr: conf(0.5), legend: "P50" }, { expr: conf(0.9), legend: "P90" },
          { expr: `inferwatch_prediction_confidence_mean{${SVC}}`, legend: "mean {{model}}" }] },
      { title: "Anomalous samples and low confidence", unit: "ratio",
        thresholds: [th(rules, "AnomalousSamplesHigh", 0.05, "P1")],
        queries: [{ expr: `inferwatch_anomalous_samples_ratio{${SVC}}`, legend: "anomalous {{model}}" },
          { expr: `inferwatch_low_confidence_ratio{${SVC}}`, legend: "low confidence {{model}}" }] },
    ]],
    ["Business", [
      { title: "Conversion rate", unit: "ratio", note: "no experiments recorded (inferwatch.business)",
        queries: [{ expr: "inferwatch_conversion_rate", legend: "{{experiment}} {{variant}}" }] },
    ]],
  ];
}

async function abTests(el) {
  const [p, diff] = await Promise.all([instant("inferwatch_abtest_p_value"), instant("inferwatch_abtest_difference")]);
  const d = new Map(diff.result.map((s) => [s.metric.experiment, Number(s.value[1])]));
  if (!p.result.length) {
    fill(el, h("p", { class: "muted small" }, "no running A/B tests"));
    return;
  }
  fill(el, h("table", { class: "table" },
    h("thead", {}, h("tr", {}, ["experiment", "difference", "p-value", "verdict"].map((c) => h("th", {}, c)))),
    h("tbody", {}, p.result.map((s) => {
      const pv = Number(s.value[1]);
      const sig = pv < 0.05;
      return h("tr", {}, h("td", {}, s.metric.experiment || "-"), h("td", {}, fmtValue(d.get(s.metric.experiment), "ratio")),
        h("td", {}, pv.toPrecision(3)),
        h("td", {}, h("span", { class: sig ? "badge sig" : "badge" }, sig ? "significant (p < 0.05)" : "not significant")));
    }))));
}

export async function render(main, ctx) {
  const params = hashParams();
  const [services, rules, firstNow] = await Promise.all([get("api/v1/label/service/values"),
    get("api/v1/rules").then((d) => d.groups.flatMap((g) => g.rules)), serverNow()]);
  const service = params.get("service") || services[0] || "";
  const rangeName = params.get("range") || "1h";
  const picker = h("select", { id: "service", "aria-label": "service" },
    (services.length ? services : [""]).map((s) => h("option", { value: s, selected: s === service }, s || "(none)")));
  const ranges = h("select", { id: "range", "aria-label": "time range" },
    Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === rangeName }, r)));
  const refresh = h("select", { id: "refresh", "aria-label": "auto-refresh" },
    [["0", "refresh off"], ["10", "every 10 s"], ["30", "every 30 s"], ["60", "every 1 min"]].map(([v, t]) =>
      h("option", { value: v, selected: v === (params.get("refresh") || "30") }, t)));
  const go = () => { location.hash = `#/overview?service=${encodeURIComponent(picker.value)}&range=${ranges.value}&refresh=${refresh.value}`; };
  for (const s of [picker, ranges, refresh]) s.addEventListener("change", go);
  const panels = [];
  const body = h("div", {});
  for (const [name, specs] of sections(rules)) {
    const made = specs.map(panel);
    panels.push(...made);
    body.append(h("h2", {}, name), h("div", { class: "grid" }, made.map((p) => p.el)));
  }
  const ab = h("div", { id: "abtests" });
  body.lastChild.append(h("section", { class: "panel" }, h("h3", {}, "A/B tests"), ab));
  fill(main, h("div", { class: "toolbar" }, h("label", {}, "service ", picker), h("label", {}, "range ", ranges),
    refresh), body);

  let now = firstNow;
  async function load() {
    const t0 = performance.now();
    const r = rangeOf(rangeName, now ?? await serverNow());
    now = null;
    const vars = { service, w: rateWindow(r) };
    await Promise.all([...panels.map((p) => p.load(r, vars)), abTests(ab).catch(() => {})]);
    document.body.dataset.renderedAt = String(performance.now());  // since navigation start
    document.body.dataset.rendered = String(performance.now() - t0);
  }
  await load();
  const every = Number(refresh.value);
  if (every > 0) ctx.every(every * 1000, load);
  ctx.onLeave(() => panels.forEach((p) => p.destroy()));
}
