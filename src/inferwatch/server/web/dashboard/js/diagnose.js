// Diagnose: run the GPU playbook on the stored series and show the ranked causes.

import { get } from "./api.js";
import { h, fill } from "./dom.js";

function cause(f, i) {
  return h("li", { class: "cause", "data-cause": f.cause },
    h("div", { class: "row" }, h("strong", {}, `${i + 1}. ${f.title}`),
      h("meter", { min: 0, max: 1, value: f.confidence, title: `confidence ${f.confidence.toFixed(2)}` }),
      h("span", { class: "muted" }, `confidence ${(100 * f.confidence).toFixed(0)} %`)),
    f.evidence.length ? h("ul", { class: "small" }, f.evidence.map((e) => h("li", {}, e))) : null,
    f.next_steps.length ? h("div", {}, h("b", {}, "next: "), f.next_steps.map((s) => h("pre", { class: "cmd" }, s))) : null);
}

export async function render(main) {
  const services = await get("api/v1/label/service/values");
  const service = h("select", { id: "diag-service", "aria-label": "service" },
    [h("option", { value: "" }, "(all services)"), ...services.map((s) => h("option", { value: s }, s))]);
  const since = h("select", { id: "diag-since", "aria-label": "window" },
    ["15m", "30m", "1h", "6h", "24h"].map((s) => h("option", { value: s, selected: s === "30m" }, s)));
  const out = h("div", { id: "diagnosis" });
  async function run(ev) {
    ev.preventDefault();
    fill(out, h("p", { class: "muted" }, "running…"));
    try {
      const d = await get("api/v1/dashboard/diagnose/gpu", { service: service.value, since: since.value });
      fill(out, 
        h("p", { class: `verdict st-${d.status}`, id: "diag-summary", "data-status": d.status }, d.summary),
        d.causes.length ? h("ol", { class: "causes" }, d.causes.map(cause)) : null,
        d.missing.length ? h("div", {}, h("h3", {}, "missing evidence"), h("ul", {}, d.missing.map((m) => h("li", {}, m)))) : null);
    } catch (err) {
      fill(out, h("p", { class: "msg error" }, err.message));
    }
  }
  fill(main, h("h2", {}, "Diagnose: GPU utilisation fell while QPS is unchanged"),
    h("p", { class: "muted" }, "Compares the first and last third of the window: GPU utilisation against QPS, server CPU, " +
      "PCIe throughput and link, GPU memory and GC, throttle reasons; ranks the causes (what `inferwatch diagnose gpu` does, on this server's store)."),
    h("form", { class: "row panel", onsubmit: run }, h("label", {}, "service ", service), h("label", {}, "window ", since),
      h("button", { type: "submit", id: "run-diagnose" }, "Run playbook")), out);
}
