// Overview: the four dimensions of one service, every panel a PromQL range query.

import { get, instant, rangeOf, rateWindow, RANGES, readBoot, serverNow } from "./api.js";
import { panel } from "./chart.js";
import { fmtValue, h, hashParams, fill } from "./dom.js";
import { tenantSpend, worstGenerations } from "./genquality.js";

const TIER_COLOURS = { P0: "#d6336c", P1: "#f08c00", P2: "#c9a400", review: "#f08c00", rollback: "#c92a2a" };

// The panels are data (overview.json, which the server puts in the page as #overview-spec, so that
// early.js can send their queries before this module has loaded).
async function spec() {
  const el = document.getElementById("overview-spec");
  if (el) return JSON.parse(el.textContent);
  const res = await fetch(new URL("../overview.json", import.meta.url), { credentials: "omit" });
  return res.json();
}

// A threshold line: from the loaded rule of that name (its comparison's number, its tier), falling
// back to the default rule pack's value; or a fixed line.
function th(rules, t) {
  if (!t.rule) return { value: t.value, label: t.label, color: TIER_COLOURS[t.tier] || "#888" };
  const rule = rules.find((r) => r.name === t.rule);
  const m = rule && /([<>]=?|==)\s*([0-9.eE+-]+)\s*$/.exec(rule.query);
  const tier = (rule && rule.labels.tier) || t.tier;
  return { value: m ? Number(m[2]) : t.value, label: `${tier} ${t.rule}`, color: TIER_COLOURS[tier] || "#888" };
}

// An engine's section ("pack" in overview.json) is shown when the config selects that engine pack
// (rules.packs, in the page's #boot, which stays in the page for every later visit).
function selected(sectionSpecs) {
  const packs = (readBoot() || {}).packs || [];
  return sectionSpecs.filter((s) => !s.pack || packs.includes(s.pack));
}

function sections(sectionSpecs, rules) {
  return selected(sectionSpecs).map(({ section, panels, generative, extras }) => [section,
    panels.map((p) => ({ ...p, thresholds: (p.thresholds || []).map((t) => th(rules, t)) })), generative,
    extras || []]);
}

// A section's tables beside its charts (overview.json's "extras"): a title and what fills it.
const EXTRAS = {
  spend: ["Tenant spend against daily budget", tenantSpend],
  worst: ["Worst-scored generations", worstGenerations],
};

// The LLM section is for services that record generations: shown when the service has a generation
// series in the range, whatever its panels show (a classifier has none: no section of empty panels).
async function hasGenerations(service, r) {
  const match = `{__name__=~"inferwatch_generation_.+",service="${service.replace(/["\\]/g, "\\$&")}"}`;
  const found = await get("api/v1/series", { "match[]": match, start: r.start, end: r.end });
  return found.length > 0;
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

// Edge devices (serve's edge ingest): shown when any device has uploaded or is configured.
async function devices(el) {
  const rows = await get("api/v1/dashboard/devices");
  el.hidden = !rows.length;
  if (!rows.length) return;
  const drops = (d) => Object.values(d.dropped || {}).reduce((a, b) => a + b, 0);
  const ago = (s) => (s < 120 ? `${s.toFixed(0)} s` : s < 7200 ? `${(s / 60).toFixed(0)} min` : `${(s / 3600).toFixed(1)} h`);
  fill(el.lastChild, h("table", { class: "table", id: "devices" },
    h("thead", {}, h("tr", {}, ["device", "last seen", "samples", "batches", "buffer (backlog)", "dropped", "heartbeat"]
      .map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((d) => h("tr", { "data-device": d.device },
      h("td", {}, d.device), h("td", {}, d.last_contact ? `${ago(d.silence_s)} ago` : "never"),
      h("td", {}, String(d.samples)), h("td", {}, String(d.batches)), h("td", {}, String(d.backlog)),
      h("td", { class: drops(d) ? "bad" : "" }, String(drops(d))),
      h("td", {}, d.heartbeat_s ? `${d.heartbeat_s} s` : "-"))))));
}

export async function render(main, ctx) {
  const params = hashParams();
  // The first overview of a page load has its services, rules and time from the page (no round trip).
  const boot = ctx.boot;
  const [specs, [services, rules, firstNow]] = await Promise.all([spec(), boot
    ? [boot.services, boot.rules, boot.now]
    : Promise.all([get("api/v1/label/service/values"),
      get("api/v1/rules").then((d) => d.groups.flatMap((g) => g.rules)), serverNow()])]);
  const service = params.get("service") || services[0] || "";
  const rangeName = params.get("range") || "1h";
  const panels = [];
  const optional = [];
  const body = h("div", {});
  const tables = [];
  for (const [name, panelSpecs, generative, extras] of sections(specs, rules)) {
    const made = panelSpecs.map(panel);
    panels.push(...made);
    const extra = extras.filter((x) => EXTRAS[x]).map((x) => {
      const inner = h("div", {});
      tables.push([EXTRAS[x][1], inner, generative]);
      return h("section", { class: "panel", "data-table": x }, h("h3", {}, EXTRAS[x][0]), inner);
    });
    const els = [h("h2", { "data-section": name }, name), h("div", { class: "grid" }, made.map((p) => p.el), extra)];
    if (generative) {
      for (const el of els) el.hidden = true;  // until the service shows generation series
      optional.push({ panels: made, els });
    }
    body.append(...els);
  }
  const ab = h("div", { id: "abtests" });
  body.lastChild.append(h("section", { class: "panel" }, h("h3", {}, "A/B tests"), ab));
  const edge = h("section", { class: "panel", id: "edge-devices", hidden: true }, h("h3", {}, "Edge devices"), h("div", {}));
  body.append(edge);

  let now = firstNow;
  async function load() {
    const t0 = performance.now();
    const r = rangeOf(rangeName, now ?? await serverNow());
    now = null;
    const vars = { service, w: rateWindow(r) };
    // every query leaves now, all at once; each panel draws when its own answers are in
    // a generative section's tables are asked only of a service that records generations
    const generations = hasGenerations(service, r).catch(() => false);
    const tablesDrawn = generations.then((llm) => Promise.all(tables.filter(([, , gen]) => llm || !gen)
      .map(([fn, el]) => fn(el, service, rangeName).catch((err) => fill(el, h("p", { class: "msg error small" },
        `query failed: ${err.message}`))))));
    const [llm] = await Promise.all([generations, ...panels.map((p) => p.load(r, vars)), tablesDrawn,
      abTests(ab).catch(() => {}), devices(edge).catch(() => {})]);
    for (const group of optional) for (const el of group.els) el.hidden = !llm;
    document.body.dataset.generative = String(llm);
    document.body.dataset.renderedAt = String(performance.now());  // since navigation start
    document.body.dataset.rendered = String(performance.now() - t0);
  }
  const first = load();  // the queries are on their way before the page is built

  const picker = h("select", { id: "service", "aria-label": "service" },
    (services.length ? services : [""]).map((s) => h("option", { value: s, selected: s === service }, s || "(none)")));
  const ranges = h("select", { id: "range", "aria-label": "time range" },
    Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === rangeName }, r)));
  const refresh = h("select", { id: "refresh", "aria-label": "auto-refresh" },
    [["0", "refresh off"], ["10", "every 10 s"], ["30", "every 30 s"], ["60", "every 1 min"]].map(([v, t]) =>
      h("option", { value: v, selected: v === (params.get("refresh") || "30") }, t)));
  const go = () => { location.hash = `#/overview?service=${encodeURIComponent(picker.value)}&range=${ranges.value}&refresh=${refresh.value}`; };
  for (const s of [picker, ranges, refresh]) s.addEventListener("change", go);
  fill(main, h("div", { class: "toolbar" }, h("label", {}, "service ", picker), h("label", {}, "range ", ranges),
    refresh), body);
  ctx.onLeave(() => panels.forEach((p) => p.destroy()));
  await first;
  const every = Number(refresh.value);
  if (every > 0) ctx.every(every * 1000, load);
}
