// Peers: each outlier rule's groups at its last evaluation (/api/v1/rules, the rule's "outlier"), the
// members side by side as bars, the outlier marked, with the group's median and spread (docs/outliers.md).
// Notifications of an outlier rule link here (#/peers?rule=NAME).

import { get } from "./api.js";
import { h, hashParams, fill } from "./dom.js";

const num = (v) => (v === null || v === undefined ? "-" : Number(v).toPrecision(3));

function group(rule, g) {
  const values = g.members.map((m) => Number(m.value)).filter(Number.isFinite);
  const max = Math.max(...values, 1e-12);
  const title = Object.entries(g.labels).map(([k, v]) => `${k}="${v}"`).join(", ") || "(one group)";
  return h("section", { class: "panel peers", "data-group": title },
    h("header", { class: "row" }, h("h3", {}, title),
      h("span", { class: "muted small" }, `median ${num(g.median)} · spread ${num(g.spread)} · `,
        g.judged ? `${g.members.length} members` : `${g.members.length} members: under min_peers, not judged`)),
    h("table", { class: "table small" }, h("tbody", {}, g.members.map((m) => h("tr", {
      class: m.outlier ? "outlier" : "", "data-member": m.member, "data-outlier": String(m.outlier) },
    h("td", {}, m.member, m.outlier ? h("span", { class: "badge firing" }, "outlier") : ""),
    h("td", { class: "grow" }, h("div", { class: "peer-bar" },
      h("span", { style: `width:${(100 * Math.max(0, Number(m.value))) / max}%` }))),
    h("td", {}, num(m.value)))))));
}

export async function render(main, ctx) {
  await draw(main);
  ctx.every(15000, () => draw(main));
}

async function draw(main) {
  const wanted = hashParams().get("rule");
  const data = await get("api/v1/rules", { type: "alert" });
  const rules = data.groups.flatMap((g) => g.rules).filter((r) => r.outlier && (!wanted || r.name === wanted));
  if (!rules.length) {
    fill(main, h("h2", {}, "Peers"), h("p", { class: "muted", id: "peers-empty" },
      wanted ? `no outlier rule named ${wanted}` : "no outlier rules (docs/outliers.md)"));
    document.body.dataset.rendered = "peers";
    return;
  }
  fill(main, h("h2", {}, "Peers"), rules.map((r) => h("div", { class: "peer-rule", "data-rule": r.name },
    h("h3", {}, r.name, " ", h("span", { class: "muted small" },
      "members by ", h("span", { "data-raw": "" }, r.outlier.member), ", groups by ",
      h("span", { "data-raw": "" }, r.outlier.peersBy.join(", ")))),
    r.outlier.groups.length ? r.outlier.groups.map((g) => group(r, g))
      : h("p", { class: "muted" }, "no members yet"))));
  document.body.dataset.rendered = "peers";
}
