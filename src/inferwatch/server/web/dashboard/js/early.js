// The overview's queries, sent while the page is still loading: the server inlines this script in
// the page (its hash is in the content security policy) after #boot (its time, the services) and
// #overview-spec (overview.json). When the page opens on the overview, every panel's range query
// leaves now, not once the modules and uPlot have loaded; api.js's get() takes each answer (once)
// instead of asking again. The range and the URL are api.js's rangeOf(), rateWindow() and range():
// keep them in step (a browser test checks that no query is sent twice).
// It also notes when uPlot (loading async, its tag just above) has loaded or failed: nothing to miss.
(() => {
  const early = new Map();
  window.inferwatchEarly = early;
  const lib = document.getElementById("uplot");
  if (lib) {
    window.inferwatchUPlot = new Promise((resolve, reject) => {
      lib.addEventListener("load", () => resolve(window.uPlot));
      lib.addEventListener("error", () => reject(new Error("the chart library did not load")));
    });
    window.inferwatchUPlot.catch(() => {});  // a chart that waits for it reports it
  }
  try {
    const [page, query] = location.hash.replace(/^#\/?/, "").split("?");
    if ((page || "overview") !== "overview") return;
    const boot = JSON.parse(document.getElementById("boot").textContent);
    const sections = JSON.parse(document.getElementById("overview-spec").textContent);
    const params = new URLSearchParams(query || "");
    const span = { "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400, "7d": 604800 }[params.get("range") || "1h"]
      || 3600;
    const scrape = Math.max(1, Math.ceil(Number(boot.scrape_interval) || 15));
    const step = scrape * Math.ceil(span / (160 * scrape));
    const end = Math.floor(boot.now / step) * step;
    const w = `${Math.max(4 * scrape, step + scrape)}s`;
    const vars = { service: params.get("service") || boot.services[0] || "", w };
    const packs = boot.packs || [];
    for (const { panels, pack } of sections) {
      if (pack && !packs.includes(pack)) continue;  // overview.js draws only the selected engine packs
      for (const { queries } of panels) {
        for (const q of queries) {
          const u = new URL("api/v1/query_range", document.baseURI);
          const expr = q.expr.replace(/\$(\w+)/g, (m, k) => (k in vars ? vars[k] : m));
          for (const [k, v] of Object.entries({ query: expr, start: end - span, end, step })) u.searchParams.set(k, v);
          const answer = fetch(u, { headers: { Accept: "application/json" }, credentials: "same-origin" });
          answer.catch(() => {});  // a failure is the taker's to report
          early.set(u.href, answer);
        }
      }
    }
  } catch (err) {  // no boot data: the overview asks for itself
    early.clear();
  }
})();
