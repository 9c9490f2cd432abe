// Small DOM and formatting helpers shared by the pages (no framework: text is always set as text).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// What the server's config says of the reader's place (in the page's #boot, read once): ``timezone``
// (alerting.timezone) and ``language`` (alerting.language, when the config names one).
let placeCache = null;
export function place() {
  if (placeCache) return placeCache;
  let boot = {};
  try { boot = JSON.parse(document.getElementById("boot").textContent) || {}; } catch { /* no boot: the browser's */ }
  let zone = boot.timezone || null;
  try { if (zone) new Intl.DateTimeFormat("en-US", { timeZone: zone }); } catch { zone = null; }
  placeCache = { timezone: zone, language: boot.language || null };
  return placeCache;
}

// The zone times are shown in: the configured one, else the browser's (its IANA name).
export function timeZone() {
  return place().timezone || Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

const FORMATS = new Map();
function partsIn(zone, d) {
  let f = FORMATS.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "longOffset" });
    FORMATS.set(zone, f);
  }
  return Object.fromEntries(f.formatToParts(d).map((p) => [p.type, p.value]));
}

// A time in the configured zone (alerting.timezone; else the browser's) with its offset:
// "2026-12-07 14:03:09 +08:00".
export function fmtTime(t) {
  if (t === null || t === undefined) return "-";
  const p = partsIn(timeZone(), new Date(t * 1000));
  const zone = p.timeZoneName.replace(/^GMT/, "") || "+00:00";
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${zone}`;
}

export function fmtAgo(t, now) {
  const s = Math.max(0, now - t);
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h ago`;
  return `${(s / 86400).toFixed(1)} d ago`;
}

export function fmtValue(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return "-";
  const a = Math.abs(v);
  switch (unit) {
    case "s": return a >= 1 || a === 0 ? `${v.toFixed(2)} s` : `${(v * 1000).toFixed(a < 0.01 ? 2 : 0)} ms`;
    case "ratio": return `${(v * 100).toFixed(a < 0.01 ? 2 : 1)} %`;
    case "percent": return `${v.toFixed(0)} %`;
    case "Bps": return a >= 1e9 ? `${(v / 1e9).toFixed(1)} GB/s` : a >= 1e6 ? `${(v / 1e6).toFixed(1)} MB/s`
      : `${(v / 1e3).toFixed(1)} kB/s`;
    case "reqps": return `${v.toFixed(a < 10 ? 2 : 0)} /s`;
    case "bytes": {
      const i = a < 1 ? 0 : Math.min(Math.floor(Math.log2(a) / 10), 6);
      return `${+(v / 2 ** (10 * i)).toPrecision(3)} ${["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"][i]}`;
    }
    default: return a !== 0 && (a < 0.01 || a >= 1e5) ? v.toExponential(2) : String(+v.toFixed(3));
  }
}

export function labelText(labels, skip = ["__name__"]) {
  return Object.entries(labels || {}).filter(([k]) => !skip.includes(k)).map(([k, v]) => `${k}="${v}"`).join(", ");
}

// Route parameters after the "?" of the hash: #/silences?new=...
export function hashParams() {
  const q = location.hash.split("?")[1] || "";
  return new URLSearchParams(q);
}

export function message(el, text, kind = "error") {
  fill(el, h("p", { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status" }, text));
}

// replaceChildren that takes what h() takes: nested arrays, and null/false for "nothing".
export function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
  return el;
}
