// The server's HTTP APIs, as the pages call them: PromQL (Prometheus shapes), alerting and dashboard views.

const TOKEN_KEY = "inferwatch.token";

export class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

function url(path, params = {}) {
  const u = new URL(path, document.baseURI);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.searchParams.set(k, v);
  return u;
}

async function parse(res, path) {
  if (res.status === 401 && !getToken()) signIn();  // reads need credentials here: to the sign-in page
  let body = null;
  try { body = await res.json(); } catch { /* not JSON: reported below */ }
  if (!res.ok || (body && body.status === "error")) {
    // Alertmanager's API v2 routes answer an error as a JSON string, the others as {error}
    const msg = typeof body === "string" ? body : body && body.error;
    throw new ApiError(msg || `${path}: HTTP ${res.status}`, res.status);
  }
  return body && body.status === "success" && "data" in body ? body.data : body;
}

export async function get(path, params) {
  const u = url(path, params);
  const early = takeEarly(u.href);
  const res = await (early || fetch(u, { headers: { Accept: "application/json" }, credentials: "same-origin" }));
  return parse(res, path);
}

// A request early.js sent for this URL while the page loaded, once (a later refresh asks again).
function takeEarly(href) {
  const early = window.inferwatchEarly;
  const answer = early && early.get(href);
  if (answer) early.delete(href);
  return answer;
}

// Writes carry the token in a header, or (signed in) the session cookie with the CSRF token in a
// header: a cross-site page can make the browser send the cookie but cannot read the CSRF cookie.
export async function write(method, path, body) {
  const headers = { Accept: "application/json" };
  if (getToken()) headers.Authorization = `Bearer ${getToken()}`;
  else headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(url(path), {
    method, headers, credentials: getToken() ? "omit" : "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return parse(res, path);
}

export function getToken() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

// The CSRF cookie of a sign-in at /login ("" when not signed in).
export function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)inferwatch_csrf=([^;]*)/);
  return m ? m[1] : "";
}
export function signedIn() { return csrfToken() !== ""; }
export function signIn() {
  const next = location.pathname + location.search + location.hash;
  location.assign(new URL(`login?next=${encodeURIComponent(next)}`, document.baseURI));
}
export async function signOut() {
  await fetch(url("logout"), { method: "POST", credentials: "same-origin" });
  location.reload();
}
export function setToken(t) { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); }

// PromQL ---------------------------------------------------------------------------

export function instant(query, time) { return get("api/v1/query", { query, time }); }

export function range(query, r) {
  return get("api/v1/query_range", { query, start: r.start, end: r.end, step: r.step });
}

// What the server put in the page (#boot: its time, the services, the rules), or null.
export function readBoot() {
  const el = document.getElementById("boot");
  try { return el ? JSON.parse(el.textContent) : null; } catch { return null; }
}

// The server's clock: the time of an instant query (the demo's clock is simulated).
export async function serverNow() {
  const data = await instant("1");
  return Number(data.result[0]);
}

export const RANGES = { "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400, "7d": 604800 };

// The interval the server scrapes at (#boot's scrape_interval: its targets' shortest; 15 s,
// Prometheus's default, when it has none), in whole seconds.
export function scrapeInterval() {
  const boot = readBoot();
  return Math.max(1, Math.ceil(Number(boot && boot.scrape_interval) || 15));
}

// At most 160 points per chart (enough for a panel's width), on a step that is a multiple of the
// scrape interval: fewer points to evaluate, send and draw, and none between two scrapes. early.js
// computes the overview's first range and rate window the same way: keep them in step.
export function rangeOf(name, end, scrape = scrapeInterval()) {
  const span = RANGES[name] || 3600;
  const step = scrape * Math.ceil(span / (160 * scrape));
  const e = Math.floor(end / step) * step;
  return { start: e - span, end: e, step, span, scrape };
}

// Grafana's $__rate_interval: at least four scrapes, and at least a step plus a scrape, so a rate
// or a quantile has two samples in every window from the second scrape on, at any range.
export function rateWindow(r) { return `${Math.max(4 * r.scrape, r.step + r.scrape)}s`; }
