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

// A time in the browser's zone with its offset: "2026-12-07 14:03:09 +08:00".
export function fmtTime(t) {
  if (t === null || t === undefined) return "-";
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? "-" : "+"}${p(Math.floor(Math.abs(off) / 60))}:${p(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:`
    + `${p(d.getSeconds())} ${zone}`;
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
