// Fleet: one row per edge device (/api/v1/edge/fleet), sorted, filtered and paged by the server, so a
// page of a 5,000-device fleet is 50 rows: last seen, the backlog behind its last batch, what its agent
// reports (version, labels such as site, the applied configuration's hash, upload errors), clock offset.

import { get } from "./api.js";
import { h, fill } from "./dom.js";

const COLUMNS = [  // [title, sort key]
  ["device", "device"], ["site", "labels.site"], ["last seen", "silence_s"], ["backlog", "backlog"],
  ["dropped", "dropped"], ["version", "version"], ["config", "config_hash"], ["clock offset", "clock_offset_s"],
  ["errors", "errors"], ["labels", null],
];
const ago = (s) => (s < 120 ? `${s.toFixed(0)} s` : s < 7200 ? `${(s / 60).toFixed(0)} min` : `${(s / 3600).toFixed(1)} h`);

function params() {
  const q = new URLSearchParams(location.hash.split("?")[1] || "");
  return { sort: q.get("sort") || "device", order: q.get("order") || "asc", filter: q.get("filter") || "",
    page: Number(q.get("page") || 1), per_page: Number(q.get("per_page") || 50) };
}

function go(p) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (v !== "" && v !== null) q.set(k, String(v));
  location.hash = `#/fleet?${q}`;
}

function row(d) {
  const labels = Object.entries(d.labels || {}).filter(([k]) => k !== "site").map(([k, v]) => `${k}=${v}`);
  return h("tr", { "data-device": d.device, class: d.heard ? "" : "muted" },
    h("td", {}, d.device), h("td", {}, (d.labels || {}).site || "-"),
    h("td", { class: d.silence_s > 900 ? "bad" : "" }, d.last_contact ? `${ago(d.silence_s)} ago` : "never"),
    h("td", {}, String(d.backlog)), h("td", { class: d.dropped ? "bad" : "" }, String(d.dropped)),
    h("td", {}, d.version || "-"),
    h("td", { class: d.config_error ? "bad" : "", title: d.config_error ? `refused: ${d.config_error}` : d.config_hash },
      `${d.config_hash ? d.config_hash.slice(0, 12) : "-"}${d.config_error ? " (refused a newer one)" : ""}`),
    h("td", {}, `${d.clock_offset_s.toFixed(1)} s`),
    h("td", { class: d.errors ? "bad" : "", title: d.last_error }, String(d.errors)),
    h("td", { class: "small" }, labels.join(" ")));
}

export async function render(main, ctx) {
  const p = params();
  const data = await get("api/v1/edge/fleet", p);
  const filter = h("input", { type: "search", id: "fleet-filter", value: p.filter, size: 40,
    placeholder: "site=berlin  version!=0.1.0  cam-1" });
  filter.addEventListener("change", () => go({ ...p, filter: filter.value, page: 1 }));
  const head = COLUMNS.map(([title, key]) => {
    if (!key) return h("th", {}, title);
    const on = p.sort === key;
    const th = h("th", { class: "sortable", "data-sort": key, "aria-sort": on ? `${p.order}ending` : "none" },
      `${title}${on ? (p.order === "asc" ? " ▲" : " ▼") : ""}`);
    th.addEventListener("click", () => go({ ...p, sort: key, order: on && p.order === "asc" ? "desc" : "asc", page: 1 }));
    return th;
  });
  const pager = (label, page, off) => {
    const b = h("button", { type: "button", "data-page": String(page) }, label);
    b.disabled = off;
    b.addEventListener("click", () => go({ ...p, page }));
    return b;
  };
  fill(main, h("section", { class: "panel" },
    h("header", { class: "row" }, h("h2", {}, "Fleet"), filter,
      h("span", { class: "muted small", id: "fleet-count" },
        `${data.total} of ${data.devices} devices · page ${data.page} of ${data.pages}`),
      h("span", { class: "grow" }),
      pager("‹ previous", data.page - 1, data.page <= 1), pager("next ›", data.page + 1, data.page >= data.pages)),
    data.rows.length
      ? h("table", { class: "table", id: "fleet" }, h("thead", {}, h("tr", {}, head)), h("tbody", {}, data.rows.map(row)))
      : h("p", { class: "muted" }, data.devices ? "no device matches the filter" : "no edge devices (edge.devices in the config)")));
  document.body.dataset.rendered = "fleet";
  ctx.every(15000, async () => {
    const next = await get("api/v1/edge/fleet", p);
    const body = main.querySelector("#fleet tbody");
    if (body) fill(body, ...next.rows.map(row));
  });
}
