// Probes: each synthetic probe's last run (/api/v1/probes): success, status, the phases as bars
// (blackbox_exporter's resolve, connect, tls, processing, transfer), the last failure and why, and a
// golden set's answers (right or wrong, by case) with its wrong share and evidence (docs/probes.md).

import { get } from "./api.js";
import { fmtTime, h, fill } from "./dom.js";

const PHASES = ["resolve", "connect", "tls", "processing", "transfer"];
const ms = (v) => (v === null || v === undefined ? "-" : `${(1000 * Number(v)).toFixed(1)} ms`);

function phases(p) {
  const total = Math.max(...PHASES.map((k) => Number((p.phases || {})[k] || 0)), 1e-9);
  return h("table", { class: "table small probe-phases" }, h("tbody", {}, PHASES.map((k) => {
    const v = Number((p.phases || {})[k] || 0);
    return h("tr", { "data-phase": k }, h("td", {}, k),
      h("td", { class: "grow" }, h("div", { class: "peer-bar" }, h("span", { style: `width:${(100 * v) / total}%` }))),
      h("td", {}, ms(v)));
  })));
}

function canary(p) {
  if (!p.canary_answers) return null;
  const ratio = p.canary_wrong_ratio === null ? "-" : `${(100 * p.canary_wrong_ratio).toFixed(0)} %`;
  return h("div", { class: "canary" },
    h("div", { class: "muted small" }, `golden set: wrong share over the window ${ratio}`),
    p.canary_evidence ? h("p", { class: "evidence" }, p.canary_evidence) : null,
    h("div", { class: "row wrap" }, p.canary_answers.map(([c, why]) => h("span", {
      class: `badge ${why ? "firing" : "ok"}`, "data-case": c, title: why || "right" }, `${c} ${why ? "✗" : "✓"}`))));
}

function card(p) {
  const state = p.success === null ? "unknown" : p.success ? "up" : "down";
  return h("section", { class: `panel probe ${state}`, "data-probe": p.name, "data-state": state },
    h("header", { class: "row" }, h("h3", {}, p.name),
      h("span", { class: `badge ${state === "down" ? "firing" : state === "up" ? "ok" : ""}` },
        state === "up" ? "success" : state === "down" ? "failing" : "not run yet"),
      h("span", { class: "muted small" }, `${p.kind} · ${p.url} · every ${p.interval}s, timeout ${p.timeout}s`),
      h("span", { class: "grow" }),
      h("span", { class: "muted small" }, p.last_run ? `last run ${fmtTime(p.last_run)}` : "")),
    h("div", { class: "row" },
      h("div", {}, h("div", { class: "muted small" }, "status"), h("b", { class: "status" }, String(p.status_code || "-"))),
      h("div", {}, h("div", { class: "muted small" }, "duration"), h("b", {}, ms(p.duration))),
      h("div", { class: "grow" }, h("div", { class: "muted small" }, "answer"), h("code", { class: "answer" }, p.answer || "-"))),
    phases(p),
    p.last_failure ? h("p", { class: "last-failure" }, h("span", { class: "muted small" },
      `last failure ${fmtTime(p.last_failure)}: `), p.last_failure_reason) : null,
    canary(p));
}

export async function render(main, ctx) {
  await draw(main);
  ctx.every(5000, () => draw(main));
}

async function draw(main) {
  const probes = await get("api/v1/probes");
  if (!probes.length) {
    fill(main, h("h2", {}, "Probes"), h("p", { class: "muted", id: "probes-empty" },
      "no probes: declare probes: in the config (docs/probes.md)"));
  } else {
    fill(main, h("h2", {}, "Probes"), h("div", { id: "probe-list" }, probes.map(card)));
  }
  document.body.dataset.rendered = "probes";
}
