// Replicas: an HA pair as this replica sees it (/api/v1/ha): both replicas, which one leads (holds the
// sender's lease), the lease's age, when each was last seen, the shared database's state and the local
// journal not yet written back (docs/ha.md). Without an ha: section the page says so.

import { get } from "./api.js";
import { fmtAgo, fmtTime, h, fill } from "./dom.js";

const ago = (s) => fmtAgo(0, Math.max(0, s));

function stat(name, label, value, attrs = {}) {
  return h("div", { class: "ha-stat", "data-stat": name }, h("div", { class: "muted small" }, label),
    h("b", attrs, value));
}

function summary(ha) {
  const lease = ha.lease;
  const db = ha.database;
  return h("section", { class: "panel ha-summary" },
    h("div", { class: "row" },
      stat("replica", "this replica", ha.replica),
      stat("role", "role", ha.delivering ? "leader" : "follower"),
      stat("database", "database", h("span", { class: `badge ${db.state === "up" ? "ok" : "firing"}` }, db.state),
        { "data-state": db.state }),
      stat("journal", "journal backlog", String(ha.journal.pending), { class: ha.journal.pending ? "bad" : "" }),
      stat("holder", "lease holder", lease ? lease.holder : "nobody"),
      stat("lease-age", "lease age", lease ? ago(lease.age_seconds) : "-"),
      h("span", { class: "grow" }),
      h("span", { class: "muted small" }, db.url)),
    db.state === "down" ? h("p", { class: "msg error", role: "alert" },
      h("span", {}, "database unreachable: writes wait in the local journal"), ` (${db.error})`) : null);
}

function row(r) {
  return h("tr", { "data-replica": r.name, "data-leader": String(r.leader), class: r.ready ? "" : "muted" },
    h("td", {}, h("b", {}, r.name), r.self ? h("span", { class: "muted small" }, " (this one)") : null),
    h("td", {}, r.address),
    h("td", {}, h("span", { class: `badge ${r.leader ? "ok" : ""}` }, r.leader ? "leader" : "follower")),
    h("td", { title: fmtTime(r.last_seen) }, ago(r.age_seconds)),
    h("td", { class: r.ready ? "" : "bad" }, r.ready ? "ready" : "missing"));
}

export async function render(main, ctx) {
  await draw(main);
  ctx.every(2000, () => draw(main));
}

async function draw(main) {
  const ha = await get("api/v1/ha");
  if (!ha.enabled) {
    fill(main, h("h2", {}, "Replicas"), h("p", { class: "muted", id: "replicas-empty" },
      "no HA pair: add an ha: section to the config (docs/ha.md)"));
  } else {
    const head = ["replica", "address", "role", "last seen", "state"].map((c) => h("th", {}, c));
    fill(main, h("h2", {}, "Replicas"), summary(ha),
      h("table", { class: "table replicas" }, h("thead", {}, h("tr", {}, head)),
        h("tbody", {}, ha.replicas.map(row))));
  }
  document.body.dataset.rendered = "replicas";
}
