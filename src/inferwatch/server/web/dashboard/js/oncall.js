// On call: who holds each schedule layer now and next, the alert groups with their acknowledgement and
// escalation (an Acknowledge button each), and a group's timeline from the alert history.

import { get, getToken, signedIn, write } from "./api.js";
import { fmtTime, h, labelText, message, fill } from "./dom.js";
import { tokenBox } from "./silences.js";

const fmtDur = (s) => (s === null || s === undefined ? "-" : s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

function shifts(data) {
  if (!data.shifts.length) return h("p", { class: "muted", id: "no-schedules" }, "no schedules (alerting.oncall.schedules)");
  const contacts = (s) => Object.entries(s.contacts).map(([k, v]) => `${k}: ${v}`).join(", ");
  return h("table", { class: "table", id: "shifts" },
    h("thead", {}, h("tr", {}, ["schedule / layer", "now", "until", "contacts", "next"].map((c) => h("th", {}, c)))),
    h("tbody", {}, data.shifts.map((r) => h("tr", { "data-layer": `${r.schedule}/${r.layer}` },
      h("td", {}, `${r.schedule} / ${r.layer}`), h("td", {}, h("strong", {}, r.now.member), r.now.override ? " (override)" : ""),
      h("td", {}, fmtTime(r.now.end)), h("td", {}, contacts(r.now)), h("td", {}, r.next.member)))));
}

// The group's story from the history: who was told when, who acknowledged, time to acknowledge and resolve.
function timeline(events) {
  const first = events.find((e) => e.kind === "firing" || e.kind === "notified");
  const ack = events.find((e) => e.kind === "acknowledged");
  const resolved = events.find((e) => e.kind === "resolved");
  const t0 = first ? first.t : null;
  // each event's words apart from its data (names, labels, errors: marked data-raw), so the language's
  // watcher translates the words and leaves the data
  const raw = (text) => h("span", { "data-raw": "" }, text);
  const what = (e) => {
    const d = e.detail || {};
    switch (e.kind) {
      case "notified": return [raw(d.receiver), ": ", h("span", {}, d.outcome), d.step ? h("span", {}, ` (step ${d.step})`) : "",
        d.error ? [" ", raw(d.error)] : ""];
      case "escalated": return [raw(d.escalation), h("span", {}, ` step ${d.step} to `), raw((d.receivers || []).join(", "))];
      case "acknowledged": return [h("span", {}, "by"), " ", raw(d.by), d.comment ? [": ", raw(d.comment)] : ""];
      case "unacknowledged": return [h("span", {}, "by"), " ", raw(d.by)];
      case "action": return [raw(d.action), h("span", {}, ` (${d.phase}):`), " ", raw(d.outcome)];
      default: return raw(labelText(e.labels, ["tier", "severity", "dimension"]));
    }
  };
  return h("div", { class: "group-timeline" },
    h("p", { class: "small" }, `time to acknowledge: ${ack && t0 !== null ? fmtDur(ack.t - t0) : "-"}, `,
      `time to resolve: ${resolved && t0 !== null ? fmtDur(resolved.t - t0) : "-"}`),
    h("ol", { class: "records" }, events.map((e) => h("li", { "data-kind": e.kind }, `${fmtTime(e.t)} `, h("b", {}, e.kind), " ", what(e)))));
}

function groupCard(g, out, reload) {
  const box = h("div", {});
  async function act(path, verb) {
    if (!getToken() && !signedIn()) { message(out, "enter the API token or sign in first (above)"); return; }
    try {
      await write("POST", path, { group_id: g.group_id, by: localStorage.getItem("inferwatch.author") || "dashboard", comment: "from the dashboard" });
      message(out, `${verb} group ${g.group_id}`, "ok");
      await reload();
    } catch (err) {
      message(out, err.status === 401 ? `refused: wrong or missing token (${err.message})` : err.message);
    }
  }
  async function show() {
    const events = await get("api/v1/alerts/history", { group: g.group_id });
    fill(box, timeline(events));
  }
  const esc = g.escalation;
  return h("article", { class: `alert oncall-group state-${g.status}`, "data-group": g.group_id, "data-acked": g.ack ? "true" : "false",
    "data-alertname": g.labels.alertname || "" },
  h("header", {}, h("strong", {}, labelText(g.labels) || "(all)"), h("span", { class: `state ${g.status}` }, g.status),
    h("span", { class: "muted" }, `${g.firing} firing of ${g.alerts}, to ${g.receiver}`),
    g.ack ? h("span", { class: "badge ack" }, "acknowledged by ", h("span", { "data-raw": "" }, g.ack.by), ` ${fmtTime(g.ack.at)}`)
      : null,
    esc ? h("span", { class: "badge" }, `${esc.policy}: step ${esc.step}`) : null,
    g.status === "firing" && !g.ack ? h("button", { type: "button", class: "ack", onclick: () => act("api/v1/alerts/ack", "acknowledged") }, "Acknowledge") : null,
    g.ack ? h("button", { type: "button", class: "unack", onclick: () => act("api/v1/alerts/unack", "unacknowledged") }, "Unacknowledge") : null,
    h("button", { type: "button", class: "show-timeline", onclick: show }, "Timeline")),
  g.ack && g.ack.comment ? h("p", { class: "muted", "data-raw": "" }, g.ack.comment) : null, box);
}

export async function render(main, ctx) {
  const body = h("div", {});
  const out = h("div", { id: "oncall-message", "aria-live": "polite" });
  fill(main, h("h2", {}, "On call"), tokenBox(() => {}), out, body);
  async function load() {
    const [now, groups] = await Promise.all([get("api/v1/oncall"), get("api/v1/alerts/oncall-groups")]);
    fill(body, h("h3", {}, "Now and next"), shifts(now),
      h("h3", {}, `Alert groups (${groups.filter((g) => g.status === "firing").length} firing, ${groups.filter((g) => g.ack).length} acknowledged)`),
      groups.length ? groups.map((g) => groupCard(g, out, load)) : h("p", { class: "muted" }, "no alert groups"));
  }
  await load();
  ctx.every(15000, load);
}
