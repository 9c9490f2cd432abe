// Explore: a PromQL box with a graph and a table view; errors shown with their position in the query.

import { instant, rangeOf, RANGES, serverNow } from "./api.js";
import { panel } from "./chart.js";
import { fmtTime, h, hashParams, labelText, fill } from "./dom.js";

// The column an error message points at, if it names one ("1:14: parse error", "position 13", "column 14").
export function errorColumn(msg) {
  let m = /(?:^|\s|')(\d+):(\d+):/.exec(msg);
  if (m) return Number(m[2]) - 1;
  m = /(?:position|offset|pos|char(?:acter)?)\s+(\d+)/i.exec(msg);
  if (m) return Number(m[1]);
  m = /col(?:umn)?\s+(\d+)/i.exec(msg);
  return m ? Number(m[1]) - 1 : null;
}

function errorView(query, msg) {
  const col = errorColumn(msg);
  const out = h("div", { class: "msg error", role: "alert", id: "explore-error" }, h("p", {}, msg));
  if (col !== null && col >= 0 && col <= query.length) {
    out.append(h("pre", { class: "caret" }, `${query}\n${" ".repeat(col)}^ here (column ${col + 1})`));
  }
  return out;
}

function tableView(data) {
  if (data.resultType === "scalar" || data.resultType === "string") {
    return h("table", { class: "table" }, h("tbody", {}, h("tr", {}, h("td", {}, "scalar"), h("td", {}, data.result[1]))));
  }
  if (!data.result.length) return h("p", { class: "muted" }, "empty result");
  return h("table", { class: "table", id: "explore-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "series"), h("th", {}, "value"), h("th", {}, "at"))),
    h("tbody", {}, data.result.slice(0, 500).map((s) => h("tr", {},
      h("td", {}, h("code", {}, `${s.metric.__name__ || ""}{${labelText(s.metric)}}`)),
      h("td", {}, s.value[1]), h("td", {}, fmtTime(s.value[0]))))));
}

export async function render(main) {
  const params = hashParams();
  const box = h("textarea", { id: "query", rows: 3, spellcheck: "false", "aria-label": "PromQL query",
    placeholder: 'sum by (code) (rate(inferwatch_requests_total[5m]))' }, params.get("q") || "");
  const rangeSel = h("select", { id: "explore-range", "aria-label": "range" },
    Object.keys(RANGES).map((r) => h("option", { value: r, selected: r === (params.get("range") || "1h") }, r)));
  const view = h("select", { id: "view", "aria-label": "view" },
    ["graph", "table"].map((v) => h("option", { value: v, selected: v === (params.get("view") || "graph") }, v)));
  const out = h("div", { id: "explore-out" });
  async function run(ev) {
    if (ev) ev.preventDefault();
    const q = box.value.trim();
    if (!q) { fill(out, h("p", { class: "muted" }, "type a PromQL expression")); return; }
    history.replaceState(null, "", `#/explore?q=${encodeURIComponent(q)}&range=${rangeSel.value}&view=${view.value}`);
    const now = await serverNow();
    try {
      if (view.value === "table") {
        fill(out, tableView(await instant(q, now)));
      } else {
        await instant(q, now);  // a bad query fails here with the parser's message
        const p = panel({ title: q, queries: [{ expr: q }], unit: "" });
        fill(out, p.el);
        await p.load(rangeOf(rangeSel.value, now), {});
      }
    } catch (err) {
      fill(out, errorView(q, err.message));
    }
  }
  box.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey || !e.shiftKey)) run(e); });
  fill(main, h("h2", {}, "Explore"),
    h("form", { class: "panel", onsubmit: run }, box, h("div", { class: "row" }, h("label", {}, "range ", rangeSel),
      h("label", {}, "view ", view), h("button", { type: "submit", id: "run" }, "Run"),
      h("span", { class: "muted small" }, "Enter runs, Shift+Enter adds a line"))), out);
  if (box.value) await run();
}
