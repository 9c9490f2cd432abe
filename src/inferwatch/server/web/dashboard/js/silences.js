// Silences: the token (kept for this browser session), the list with expire, and the create form.

import { get, getToken, serverNow, setToken, signedIn, signIn, signOut, write } from "./api.js";
import { fmtTime, h, hashParams, message, fill } from "./dom.js";

const SKIP = ["severity", "dimension"];  // labels that a silence usually should not pin
const DURATIONS = { "30m": 1800, "1h": 3600, "2h": 7200, "4h": 14400, "12h": 43200, "1d": 86400, "7d": 604800 };

function matcherText(m) {
  const op = m.isRegex ? (m.isEqual ? "=~" : "!~") : (m.isEqual ? "=" : "!=");
  return `${m.name}${op}${JSON.stringify(m.value)}`;
}

// name=value, name!="v", name=~"re", name!~"re": one per line. What does not parse is sent as it is
// (a name with no value), so the server's own message says what is wrong with it.
export function parseMatchers(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean).map((line) => {
    const m = /^([^=!~\s]+)\s*(=~|!~|!=|=)\s*(.*)$/.exec(line);
    if (!m) return { name: line, value: "", isRegex: false, isEqual: true };
    let value = m[3].trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      try { value = JSON.parse(value); } catch { value = value.slice(1, -1); }
    }
    return { name: m[1], value, isRegex: m[2].includes("~"), isEqual: !m[2].startsWith("!") };
  });
}

export function tokenBox(onChange) {
  const input = h("input", { id: "token", type: "password", autocomplete: "off", placeholder: "API token", "aria-label": "API token" });
  const box = h("div", { class: "token" });
  function draw() {
    if (!getToken() && signedIn()) {
      fill(box, h("span", { class: "ok" }, "signed in "),
        h("button", { type: "button", id: "sign-out", onclick: signOut }, "sign out"));
    } else if (getToken()) {
      fill(box, h("span", { class: "ok" }, "token set for this browser session "),
        h("button", { type: "button", id: "forget-token", onclick: () => { setToken(""); draw(); onChange(); } }, "forget"));
    } else {
      input.value = "";
      fill(box, h("label", {}, "writes need the server's API token ", input),
        h("button", { type: "button", id: "save-token", onclick: () => { setToken(input.value.trim()); draw(); onChange(); } }, "use"),
        h("span", { class: "muted small" }, " (printed at the server's first start; kept only in this tab) or "),
        h("button", { type: "button", id: "sign-in", onclick: signIn }, "sign in"));
    }
  }
  draw();
  return box;
}

function form(prefill, reload) {
  const matchers = h("textarea", { id: "matchers", rows: 4, spellcheck: "false", "aria-label": "matchers" },
    Object.entries(prefill).filter(([k]) => !SKIP.includes(k)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join("\n"));
  const duration = h("select", { id: "duration", "aria-label": "duration" },
    Object.keys(DURATIONS).map((d) => h("option", { value: d, selected: d === "2h" }, d)));
  const author = h("input", { id: "author", value: localStorage.getItem("inferwatch.author") || "", placeholder: "you@example.com" });
  const comment = h("input", { id: "comment", placeholder: "why (e.g. ticket)" });
  const out = h("div", { id: "form-message", "aria-live": "polite" });
  async function submit(ev) {
    ev.preventDefault();
    fill(out);
    if (!getToken() && !signedIn()) { message(out, "enter the API token or sign in first (above)"); return; }
    localStorage.setItem("inferwatch.author", author.value);
    const now = await serverNow();
    const body = { matchers: parseMatchers(matchers.value), startsAt: new Date(now * 1000).toISOString(),
      endsAt: new Date((now + DURATIONS[duration.value]) * 1000).toISOString(), createdBy: author.value, comment: comment.value };
    try {
      const res = await write("POST", "api/v2/silences", body);
      message(out, `created silence ${res.silenceID}`, "ok");
      await reload();
    } catch (err) {
      message(out, err.status === 401 ? `refused: wrong or missing token (${err.message})` : err.message);
    }
  }
  return h("form", { id: "silence-form", class: "panel", onsubmit: submit },
    h("h3", {}, "New silence"),
    h("label", {}, "matchers (one per line: name=\"value\", name=~\"regex\", name!=\"value\")", matchers),
    h("div", { class: "row" }, h("label", {}, "for ", duration), h("label", {}, "author ", author), h("label", { class: "grow" }, "comment ", comment)),
    h("button", { type: "submit", id: "create" }, "Create silence"), out);
}

function table(list, now, reload, out) {
  async function expire(id) {
    try {
      await write("DELETE", `api/v2/silence/${encodeURIComponent(id)}`);
      message(out, `expired silence ${id}`, "ok");
      await reload();
    } catch (err) {
      message(out, err.status === 401 ? `refused: wrong or missing token (${err.message})` : err.message);
    }
  }
  if (!list.length) return h("p", { class: "muted" }, "no silences");
  const order = { active: 0, pending: 1, expired: 2 };
  list.sort((a, b) => order[a.status.state] - order[b.status.state] || b.updatedAt.localeCompare(a.updatedAt));
  return h("table", { class: "table", id: "silences" },
    h("thead", {}, h("tr", {}, ["state", "matchers", "starts", "ends", "by", "comment", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, list.map((s) => h("tr", { "data-id": s.id, "data-state": s.status.state },
      h("td", {}, h("span", { class: `badge st-${s.status.state}` }, s.status.state)),
      h("td", {}, h("code", {}, s.matchers.map(matcherText).join(", "))),
      h("td", {}, fmtTime(Date.parse(s.startsAt) / 1000)), h("td", {}, fmtTime(Date.parse(s.endsAt) / 1000)),
      h("td", { "data-raw": "" }, s.createdBy), h("td", { "data-raw": "" }, s.comment),
      h("td", {}, s.status.state === "expired" ? "" : h("button", { type: "button", class: "expire", onclick: () => expire(s.id) }, "Expire"))))));
}

export async function render(main, ctx) {
  const params = hashParams();
  let prefill = {};
  try { prefill = JSON.parse(params.get("new") || "{}"); } catch { prefill = {}; }
  const listEl = h("div", {});
  const out = h("div", { id: "list-message", "aria-live": "polite" });
  async function reload() {
    const [list, now] = await Promise.all([get("api/v2/silences"), serverNow()]);
    fill(listEl, table(list, now, reload, out));
  }
  fill(main, h("h2", {}, "Silences"), tokenBox(() => {}), form(prefill, reload), h("h3", {}, "All silences"), out, listEl);
  await reload();
  ctx.every(15000, reload);
}
