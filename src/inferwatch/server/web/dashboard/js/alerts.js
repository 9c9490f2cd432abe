// Alerts: pending and firing alerts by tier, what was done about them, a 24 h timeline, the next digest.

import { get, serverNow } from "./api.js";
import { promqlDetails } from "./chart.js";
import { fmtAgo, fmtTime, fmtValue, h, labelText, fill } from "./dom.js";
import { lang } from "./i18n.js";

export const TIERS = {
  P0: { name: "P0 critical", response: "scale-out action + phone escalation" },
  P1: { name: "P1 major", response: "degrade action + WeCom group message" },
  P2: { name: "P2 warning", response: "collected into the next-morning digest" },
};
const SKIP = ["alertname", "tier", "severity", "dimension"];

export function tierBadge(tier) {
  const t = TIERS[tier];
  return h("span", { class: `badge tier tier-${t ? tier : "other"}` }, t ? t.name : tier || "no tier");
}

function matches(alert, labels) {
  return Object.entries(labels || {}).every(([k, v]) => alert.labels[k] === v) || false;
}

function sameAlert(a, rec) {
  return rec.alertname === a.labels.alertname && Object.entries(a.labels).every(([k, v]) => !(k in rec.labels) || rec.labels[k] === v);
}

function notifiedAbout(a, rec) {
  return rec.groups.some((g) => g.alerts.some((x) => x.alertname === a.labels.alertname && matches({ labels: x.labels }, a.labels)));
}

function why(a) {
  const out = [];
  if (a.silencedBy.length) {
    out.push(h("span", { class: "mute" }, "silenced by ",
      a.silencedBy.map((id, i) => [i ? ", " : "", h("a", { href: `#/silences?id=${encodeURIComponent(id)}` }, id.slice(0, 8))])));
  }
  if (a.inhibited) out.push(h("span", { class: "mute" }, "inhibited: a higher-tier alert with the same labels fires"));
  if (a.acknowledgedBy && a.acknowledgedBy.length) {
    out.push(h("span", { class: "badge ack" }, `acknowledged by ${a.acknowledgedBy.join(", ")}`), " ");
  }
  if (a.held) out.push(h("span", { class: "mute" }, "held: this excursion repeats earlier ones (recurrence), it stays pending"));
  return out;
}

const fmtNumber = (v) => (Number.isFinite(Number(v)) ? String(+Number(v).toPrecision(4)) : v);
// In the unit the rule's own texts give its value (the server's "unit": ratio, s, bytes), else 4 digits
const shownValue = (a) => (a.unit && Number.isFinite(Number(a.value)) ? fmtValue(Number(a.value), a.unit) : fmtNumber(a.value));
const KEEP = 4;  // records shown per alert: the latest; the timeline below has them all

function latest(list) {
  const shown = list.slice(-KEEP);
  return list.length > KEEP ? [...shown, { more: list.length - KEEP }] : shown;
}

function recordList(list, line) {
  return list.length ? h("ul", { class: "records" }, latest(list).map((e) =>
    h("li", {}, e.more ? h("span", { class: "muted" }, `and ${e.more} earlier (see the timeline)`) : line(e)))) : null;
}

// "id (2.2s), id (1.9s)": the slowest traces of the alert's series (exemplars), each linked to the trace API
function exampleTraces(text) {
  const items = text.split(", ").map((item) => {
    const [id, ...rest] = item.split(" ");
    return [h("a", { class: "trace", href: `api/v1/traces/${encodeURIComponent(id)}` }, id), ` ${rest.join(" ")} `];
  });
  return h("p", { class: "traces" }, h("b", {}, "example slow traces: "), ...items.flat());
}

// Green only for what happened: a print without credentials and a skipped action are neither sent nor failed.
const statusClass = (status) => (status === "sent" ? "ok" : status.startsWith("printed") ? "warn" : "bad");
const actionClass = (e) => (e.outcome.startsWith("skipped") ? "warn" : e.ok ? "ok" : "bad");

function card(a, events, now) {
  // in Chinese the default pack's summary and description as the server translated them
  const ann = lang() === "zh-CN" ? { ...a.annotations, ...(a.annotations_zh || {}) } : a.annotations;
  const actions = events.filter((e) => e.kind === "action" && sameAlert(a, e));
  const notes = events.filter((e) => e.kind === "notification" && notifiedAbout(a, e));
  const next = ann.next_step || ann.runbook_url || a.response || (TIERS[a.labels.tier] || {}).response || "";
  const silence = `#/silences?new=${encodeURIComponent(JSON.stringify(a.labels))}`;
  return h("article", { class: `alert tier-${a.labels.tier || "other"}`, "data-alertname": a.labels.alertname,
    "data-state": a.state, "data-muted": a.silencedBy.length || a.inhibited ? "true" : "false" },
  h("header", {}, tierBadge(a.labels.tier), h("strong", {}, a.labels.alertname), h("span", { class: `state ${a.state}` }, a.state),
    h("span", { class: "muted", title: a.value }, `value ${shownValue(a)}`), h("span", { class: "muted", title: fmtTime(a.activeAt) }, `since ${fmtAgo(a.activeAt, now)}`),
    h("a", { class: "button small", href: silence }, "Silence…")),
  ann.summary ? h("p", {}, ann.summary) : null,
  next ? h("p", {}, h("b", {}, "next step: "), next) : null,
  h("details", { class: "labels-fold" }, h("summary", {}, "labels"), h("p", { class: "labels" }, labelText(a.labels, SKIP)),
    ann.description ? h("p", { class: "muted" }, ann.description) : null),
  ann.example_traces ? exampleTraces(ann.example_traces) : null,
  why(a),
  recordList(actions, (e) => [`${fmtTime(e.t)} action `, h("span", { "data-raw": "" }, e.action), ` (${e.phase}): `,
    h("span", { class: actionClass(e), "data-raw": "" }, e.outcome)]),
  recordList(notes, (e) => [`${fmtTime(e.t)} ${e.type} notification to ${e.receiver}: `,
    h("span", { class: statusClass(e.status) }, e.status), e.error ? [" (", h("span", { "data-raw": "" }, e.error), ")"] : ""]),
  a.query ? promqlDetails([{ expr: a.query }]) : null);
}

function timelineRow(e) {
  let what;
  // an action's outcome and a sender's error are the server's words (data), translated where known
  if (e.kind === "action") {
    what = [h("span", { "data-raw": "" }, e.action), ` (${e.phase}) for ${e.alertname}: `,
      h("span", { "data-raw": "" }, e.outcome)];
  }
  else if (e.kind === "notification") {
    const names = [...new Set(e.groups.flatMap((g) => g.alerts.map((a) => a.alertname)))].join(", ");
    what = [`${e.type} to ${e.receiver} ${e.status} (${names || e.notes.length + " lines"})`,
      e.error ? [": ", h("span", { "data-raw": "" }, e.error)] : ""];
  } else what = `${e.alertname} ${labelText(e.labels, SKIP)}`;
  return h("tr", { class: `ev-${e.kind}` }, h("td", {}, fmtTime(e.t)),
    h("td", {}, e.labels && e.labels.tier ? tierBadge(e.labels.tier) : ""), h("td", {}, e.kind), h("td", {}, what));
}

function digest(d) {
  return h("section", { class: "panel" }, h("h3", {}, `digest ${d.name}: due ${fmtTime(d.due)}, ${d.pending} alerts`),
    h("pre", { class: "digest" }, d.lines.join("\n")));
}

export async function render(main, ctx) {
  const body = h("div", {});
  fill(main, body);
  async function load() {
    const [alerts, events, digests, now] = await Promise.all([get("api/v1/dashboard/alerts"),
      get("api/v1/dashboard/timeline", { since: "24h" }), get("api/v1/dashboard/digests"), serverNow()]);
    const tiers = [...Object.keys(TIERS), ...new Set(alerts.map((a) => a.labels.tier).filter((t) => !(t in TIERS)))];
    // firing before pending within each tier, the oldest first: what woke you is on top
    const order = (x, y) => (x.state === "firing" ? 0 : 1) - (y.state === "firing" ? 0 : 1) || Number(x.activeAt) - Number(y.activeAt);
    const groups = tiers.map((t) => [t, alerts.filter((a) => (a.labels.tier || "") === t).sort(order)]);
    const other = alerts.filter((a) => !tiers.includes(a.labels.tier || ""));
    if (other.length) groups.push(["", other]);
    fill(body, 
      h("h2", {}, `Alerts (${alerts.filter((a) => a.state === "firing").length} firing, ${alerts.filter((a) => a.state === "pending").length} pending)`),
      groups.map(([t, list]) => h("section", { class: "tier-group", "data-tier": t },
        h("h3", {}, tierBadge(t), ` ${list.length}`),
        list.length ? list.map((a) => card(a, events, now)) : h("p", { class: "muted small" }, "none"))),
      h("h2", {}, "Last 24 hours"),
      events.length ? h("table", { class: "table timeline" }, h("thead", {}, h("tr", {}, ["time", "tier", "event", "what"].map((c) => h("th", {}, c)))),
        h("tbody", {}, events.slice().reverse().map(timelineRow))) : h("p", { class: "muted" }, "nothing happened"),
      h("h2", {}, "Next digest"),
      digests.length ? digests.map(digest) : h("p", { class: "muted" }, "no digest receiver configured"));
  }
  await load();
  ctx.every(10000, load);
}
