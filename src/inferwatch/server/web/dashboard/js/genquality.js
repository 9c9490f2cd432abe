// The overview's generation-quality tables: each tenant's spend against its daily budget, and the
// worst-scored recent generations linked to their traces. The charts of the section are overview.json's.

import { get, instant } from "./api.js";
import { fmtValue, h, fill } from "./dom.js";

const quote = (s) => s.replace(/["\\]/g, "\\$&");
const key = (m) => `${m.tenant || ""}\u0000${m.currency || ""}`;

function byTenant(result) {
  return new Map(result.map((s) => [key(s.metric), { metric: s.metric, value: Number(s.value[1]) }]));
}

// What the default rules would say of a tenant: TenantSpendOverBudget (P1) once the last 24 hours
// spent the budget; TenantSpendOverBudgetWarning (P2) while the last hour spends faster than it allows.
function verdict(spent, budget, pace) {
  if (!(budget > 0)) return ["no budget", ""];
  if (spent > budget) return ["over budget", "badge tier-P1"];
  if (pace > budget) return ["on course to overspend", "badge tier-P2"];
  return ["within budget", "badge ok"];
}

function money(v, currency) {
  return Number.isFinite(v) ? `${+v.toPrecision(4)} ${currency || ""}`.trim() : "-";
}

export async function tenantSpend(el, service) {
  const s = `service="${quote(service)}"`;
  const [spent, budget, pace] = await Promise.all([
    instant(`sum by (tenant, currency) (increase(inferwatch_generation_cost_total{${s}}[1d]))`),
    instant(`max by (tenant, currency) (inferwatch_generation_tenant_daily_budget{${s}})`),
    instant(`24 * sum by (tenant, currency) (increase(inferwatch_generation_cost_total{${s}}[1h]))`),
  ]);
  const spentOf = byTenant(spent.result), budgetOf = byTenant(budget.result), paceOf = byTenant(pace.result);
  const keys = [...new Set([...spentOf.keys(), ...budgetOf.keys()])].sort();
  if (!keys.length) {
    fill(el, h("p", { class: "muted small" },
      "no spend recorded: call `monitor.set_prices(...)` and pass `tenant=` to `track_generation`; budgets with `monitor.set_tenant_budgets(...)`"));
    return;
  }
  const cols = ["tenant", "spent (last 24 h)", "daily budget", "share of budget", "last hour × 24", "state"];
  fill(el, h("table", { class: "table", id: "tenant-spend" },
    h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
    h("tbody", {}, keys.map((k) => {
      const m = (spentOf.get(k) || budgetOf.get(k)).metric;
      const cur = m.currency || "";
      const sp = spentOf.has(k) ? spentOf.get(k).value : 0;
      const bu = budgetOf.has(k) ? budgetOf.get(k).value : NaN;
      const pa = paceOf.has(k) ? paceOf.get(k).value : 0;
      const [word, cls] = verdict(sp, bu, pa);
      return h("tr", { "data-tenant": m.tenant || "" },
        h("td", { "data-label": cols[0], "data-raw": "" }, m.tenant || "-"),
        h("td", { "data-label": cols[1], class: "num", "data-raw": "" }, money(sp, cur)),
        h("td", { "data-label": cols[2], class: "num", "data-raw": "" }, money(bu, cur)),
        h("td", { "data-label": cols[3], class: "num" }, bu > 0 ? fmtValue(sp / bu, "ratio") : "-"),
        h("td", { "data-label": cols[4], class: "num", "data-raw": "" }, money(pa, cur)),
        h("td", { "data-label": cols[5] }, cls ? h("span", { class: cls }, word) : word));
    }))));
}

// The worst-scored generations of the overview's range (GET /api/v1/generations/worst: the server keeps
// each generation whose id the score histogram carried as an exemplar), each linked to its trace.
export async function worstGenerations(el, service, range) {
  const data = await get("api/v1/generations/worst", { service, since: range || "1h", limit: 10 });
  const rows = (data && data.generations) || [];
  if (!rows.length) {
    fill(el, h("p", { class: "muted small", id: "worst-empty" },
      "no scored generations in this range: pass `generation_id=` to `track_generation` and `record_score`, and trace the app (`inferwatch.tracing`) to link each one to its trace"));
    return;
  }
  const cols = ["score", "evaluation", "model", "prompt version", "tenant", "generation", "trace"];
  fill(el, h("table", { class: "table", id: "worst-generations" },
    h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((g) => h("tr", { "data-generation": g.generation_id || "" },
      h("td", { "data-label": cols[0], class: "num" }, fmtValue(Number(g.score), "")),
      h("td", { "data-label": cols[1], "data-raw": "" }, g.name || "-"),
      h("td", { "data-label": cols[2], "data-raw": "" }, `${g.model || "-"} ${g.version || ""}`.trim()),
      h("td", { "data-label": cols[3], "data-raw": "" }, g.prompt_version || "-"),
      h("td", { "data-label": cols[4], "data-raw": "" }, g.tenant || "-"),
      h("td", { "data-label": cols[5], "data-raw": "" }, g.generation_id || "-"),
      h("td", { "data-label": cols[6] }, g.trace_id
        ? h("a", { class: "trace", href: `api/v1/traces/${encodeURIComponent(g.trace_id)}`, "data-raw": "" }, g.trace_id)
        : "-"))))));
}
