// The router: one page at a time under #/<page>?params, a timer per page, theme, the alert count.

import { get, readBoot, serverNow } from "./api.js";
import { fmtTime, h, message, fill, timeZone } from "./dom.js";
import { setup as language } from "./i18n.js";

const PAGES = {
  overview: () => import("./overview.js"),
  alerts: () => import("./alerts.js"),
  silences: () => import("./silences.js"),
  oncall: () => import("./oncall.js"),
  explore: () => import("./explore.js"),
  drift: () => import("./drift.js"),
  slos: () => import("./slo.js"),
  probes: () => import("./probes.js"),
  peers: () => import("./peers.js"),
  fleet: () => import("./fleet.js"),
  replicas: () => import("./replicas.js"),
  diagnose: () => import("./diagnose.js"),
};
let current = null;
// The server's answers in the page are for the first page drawn only (and the header's first time):
// what comes later asks again.
let boot = readBoot();

function newContext() {
  const timers = [];
  const leave = [];
  const first = boot;
  boot = null;
  return {
    boot: first,
    every(ms, fn) { timers.push(setInterval(() => fn().catch((e) => console.warn(e)), ms)); },
    onLeave(fn) { leave.push(fn); },
    close() { timers.forEach(clearInterval); leave.forEach((f) => f()); },
  };
}

async function route() {
  const name = (location.hash.replace(/^#\/?/, "").split("?")[0]) || "overview";
  const load = PAGES[name];
  const main = document.getElementById("main");
  if (current) current.close();
  current = newContext();
  const ctx = current;
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.page === name);
  document.body.dataset.page = name;
  delete document.body.dataset.rendered;
  delete document.body.dataset.ready;
  if (!load) { message(main, `no such page: ${name}`); return; }
  fill(main, h("p", { class: "muted" }, "Loading…"));
  try {
    const mod = await load();
    if (ctx !== current) return;
    await mod.render(main, ctx);
  } catch (err) {
    if (ctx === current) message(main, `${name}: ${err.message}`);
  }
  document.body.dataset.ready = name;
}

async function header(now0) {
  try {
    const [now, alerts] = await Promise.all([now0 ?? serverNow(), get("api/v1/alerts")]);
    // the zone's name is data (an IANA name), the words around it the page's
    fill(document.getElementById("server-time"), `server time ${fmtTime(now)} `,
      h("span", { "data-raw": "", class: "zone" }, timeZone()));
    const firing = alerts.alerts.filter((a) => a.state === "firing").length;
    const count = document.getElementById("alert-count");
    count.textContent = firing ? String(firing) : "";
    count.title = `${firing} firing`;
  } catch (err) {
    document.getElementById("server-time").textContent = `server unreachable: ${err.message}`;
  }
}

function theme() {
  const btn = document.getElementById("theme");
  const apply = (t) => {
    document.documentElement.dataset.theme = t;
    btn.textContent = t === "dark" ? "Light" : "Dark";
    localStorage.setItem("inferwatch.theme", t);
  };
  const saved = localStorage.getItem("inferwatch.theme");
  apply(saved || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  btn.addEventListener("click", () => {
    apply(document.documentElement.dataset.theme === "dark" ? "light" : "dark");
    route();  // charts read their colours when drawn
  });
}

// On a phone the pages hide behind one button (the stylesheet shows it below 760 px); a page opened closes it.
function menu() {
  const btn = document.getElementById("menu");
  const set = (open) => { btn.closest("header").classList.toggle("open", open); btn.setAttribute("aria-expanded", String(open)); };
  btn.addEventListener("click", () => set(btn.getAttribute("aria-expanded") !== "true"));
  window.addEventListener("hashchange", () => set(false));
}

language();
theme();
menu();
window.addEventListener("hashchange", route);
const bootNow = boot && boot.now;
route();
header(bootNow);
setInterval(header, 15000);
