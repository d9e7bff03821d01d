// lookahead's grid view: polls the broker's read-only /api/ and draws
// tables and a plain-SVG Gantt. No library, no inline script (CSP).
"use strict";

const POLL_MS = 2000, AUDIT_MS = 10000, ROW_MIN = 14, ROW_MAX = 28, LABEL_PX = 190, AXIS_PX = 22;
const SVGNS = "http://www.w3.org/2000/svg";
const TABS = ["sites", "gantt", "queue", "audit"];
const view = {
  tab: "sites", site: "", offset: -900, job: "", jobUpdated: -1, now: 0, names: [], zoom: null, geom: null, drag: null,
  sort: "name", siteState: "", siteMatch: "", jobState: "", jobMatch: "",
};

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function td(text, cls) { return el("td", cls ? { class: cls } : {}, text === undefined ? "" : String(text)); }

// dur writes s seconds as internal/durfmt.Seconds does, the one format of
// every lookahead binary: 45s, 1m30s, 2h05m07s, 100h (TestPageDurations).
function dur(s) {
  if (s < 0) return "-" + dur(-s);
  const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60, two = n => String(n).padStart(2, "0");
  if (h > 0) return h + "h" + (m || sec ? two(m) + "m" : "") + (sec ? two(sec) + "s" : "");
  if (m > 0) return m + "m" + (sec ? two(sec) + "s" : "");
  return sec + "s";
}

// micros says how long a cycle took: never "0 µs".
function micros(us) {
  if (us < 1) return "under 1 µs";
  if (us < 1000) return us + " µs";
  if (us < 1e6) return (us / 1000).toFixed(1) + " ms";
  return (us / 1e6).toFixed(2) + " s";
}

function when(t) { return t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 16) + "Z" : ""; }

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

async function get(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" });
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()).trim());
  return r.json();
}

function showError(e) {
  const box = $("error");
  box.hidden = !e;
  box.textContent = e ? String(e.message || e) : "";
}

// ---- header ----

// drawBroker names the broker that answers and its role; a broker that is
// not active (a standby) says so above the tabs, and which one is.
function drawBroker(b) {
  const l = b.leader;
  let role = b.role;
  if (b.active && l) role += " (epoch " + l.epoch + ", since " + when(l.since) + ")";
  if (!b.active) role += l ? ": broker “" + l.broker + "” is active" : ": no broker is active";
  $("broker").textContent = "broker “" + b.name + "”: " + role + (b.version ? " — " + b.version : "");
  Object.assign($("broker").dataset, { active: String(b.active), role: b.role, leader: l ? l.broker : "" });
  const box = $("standby");
  box.hidden = b.active;
  if (!b.active) {
    box.textContent = "This broker is not the active one (" + (b.why || b.role) + "). It holds no queue and plans nothing, so the tabs below stay empty: " +
      (l ? "open the web view of broker “" + l.broker + "”." : "no broker holds the leadership lease yet.");
  }
}

function drawCycle(c) {
  $("cycle").textContent = c.cycle ? "cycle " + c.cycle + " at " + when(c.time) + ": " + plural(c.jobs, "job") + " planned in " + micros(c.micros) : "no planning cycle yet";
}

// ---- Sites ----

function siteQuery() {
  const q = new URLSearchParams({ sort: view.sort });
  if (view.siteState) q.set("state", view.siteState);
  if (view.siteMatch) q.set("match", view.siteMatch);
  return q.toString();
}

function drawOverview(o) {
  view.now = o.now;
  view.names = o.names;
  drawBroker(o.broker);
  drawCycle(o.cycle);
  $("updated").textContent = "broker time " + when(o.now) + ", site TTL " + dur(o.ttl);
  const counts = ["fresh", "stale", "offline", "excluded", "silent"].filter(s => o.counts[s]).map(s => o.counts[s] + " " + s);
  $("site-counts").textContent = "showing " + o.sites.length + " of " + plural(o.total, "site") + (counts.length ? " (" + counts.join(", ") + ")" : "");
  const body = $("sites").tBodies[0];
  body.replaceChildren(...o.sites.map(s => {
    const tr = el("tr", { "data-site": s.site, "data-state": s.state, class: "state-" + s.state });
    const name = el("td");
    name.append(el("a", { href: "#gantt/" + encodeURIComponent(s.site), title: "the forecast Gantt of " + s.site }, s.site));
    tr.append(name, td(s.state, "state"), td(s.reason || ""), td(s.seq, "num"), td(s.nodes, "num"), td(s.procs, "num"),
      td(s.free_proc_hours.toFixed(1), "num"), td(dur(s.forecast_age), "num"), td(dur(s.heartbeat_age), "num"),
      td(dur(s.clock_offset), "num"), td(s.parts, "parts"), td(when(s.horizon), "when"), td(s.unmodelled.join("; ") || "none"));
    return tr;
  }));
  for (const th of $("sites").tHead.rows[0].cells) th.classList.toggle("sorted", th.dataset.sort === view.sort);
  const sel = $("gantt-site");
  if ([...sel.options].map(o => o.value).join() !== view.names.join()) {
    sel.replaceChildren(...view.names.map(n => el("option", { value: n }, n)));
  }
  if (!view.names.includes(view.site)) view.site = view.names[0] || view.site;
  sel.value = view.site;
}

// ---- Gantt ----

// plotHeight is the room below the Gantt's top down to the window's foot.
function plotHeight() { return Math.max(240, window.innerHeight - $("gantt-box").getBoundingClientRect().top - 24); }

function maxRows() { return Math.max(10, Math.floor(plotHeight() / ROW_MIN)); }

// windowRange is the window asked of the broker: a zoom, a length from
// now, or nothing (the broker picks where the grid's work on the site sits).
function windowRange() {
  if (view.zoom) return view.zoom;
  const w = $("gantt-window").value;
  if (w === "auto") return {};
  const from = view.now + view.offset;
  return Number(w) ? { from: from, to: from + Number(w) } : { from: from };
}

async function loadGantt() {
  if (!view.site) return;
  const r = windowRange();
  const q = new URLSearchParams({ site: view.site, rows: maxRows() });
  if (r.from !== undefined) q.set("from", r.from);
  if (r.to !== undefined) q.set("to", r.to);
  const t0 = performance.now();
  const g = await get("/api/gantt?" + q);
  drawGantt(g);
  $("gantt").dataset.renderMs = (performance.now() - t0).toFixed(1);
}

function priceColour(p, lo, hi) {
  const x = hi > lo ? (p - lo) / (hi - lo) : 0;
  return "hsl(" + Math.round(130 - 100 * x) + ", " + Math.round(55 + 20 * x) + "%, 55%)";
}

function drawGantt(g) {
  const svg = $("gantt");
  const width = Math.max(600, $("gantt-box").clientWidth - 4), plot = width - LABEL_PX;
  const rowPx = Math.max(ROW_MIN, Math.min(ROW_MAX, Math.floor(plotHeight() / Math.max(1, g.rows.length))));
  const height = AXIS_PX + g.rows.length * rowPx + 4;
  const span = g.to - g.from, x = t => LABEL_PX + Math.max(0, Math.min(plot, (t - g.from) / span * plot));
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  Object.assign(svg.dataset, { site: g.site, nodes: g.nodes, rows: g.rows.length, maxRows: g.max_rows, perRow: g.per_row, from: g.from, to: g.to, rowPx: rowPx });
  view.geom = { from: g.from, span: span, plot: plot };
  const parts = [axis(g, x, height)];
  g.rows.forEach((row, i) => parts.push(drawRow(g, row, AXIS_PX + i * rowPx, rowPx, x)));
  if (g.now >= g.from && g.now <= g.to) {
    parts.push(el("svg:line", { class: "now", x1: x(g.now), x2: x(g.now), y1: AXIS_PX - 4, y2: height }));
  }
  svg.replaceChildren(...parts);
  $("gantt-info").textContent = g.nodes + " nodes in " + g.rows.length + " rows" + (g.per_row > 1 ? " of up to " + g.per_row + " nodes" : "") +
    ", " + when(g.from) + " → " + when(g.to) + ", price " + g.price_min + "–" + g.price_max + " credits/CPU-h";
}

function axis(g, x, height) {
  const a = el("svg:g", { class: "axis" });
  const span = g.to - g.from;
  const step = [900, 1800, 3600, 7200, 21600, 43200, 86400].find(s => span / s <= 12) || 172800;
  for (let t = Math.ceil(g.from / step) * step; t <= g.to; t += step) {
    a.append(el("svg:line", { x1: x(t), x2: x(t), y1: AXIS_PX - 6, y2: height }));
    if (x(t) + 72 <= x(g.to)) a.append(el("svg:text", { x: x(t) + 2, y: AXIS_PX - 8 }, when(t).slice(5, 16)));
  }
  return a;
}

function drawRow(g, row, y, h, x) {
  const r = el("svg:g", { class: "row", "data-nodes": row.nodes, "data-label": row.label });
  r.append(el("svg:text", { x: 2, y: y + h / 2 + 4 }, row.label));
  r.append(el("svg:rect", { class: "rowbg", x: LABEL_PX, y: y, width: x(g.to) - LABEL_PX, height: h }));
  for (const f of row.free) {
    const rect = el("svg:rect", { class: "free", x: x(f.start), y: y + 1, width: Math.max(0.5, x(f.end) - x(f.start)), height: h - 2,
      fill: priceColour(f.price, g.price_min, g.price_max), "fill-opacity": (0.2 + 0.8 * f.frac).toFixed(2) });
    rect.append(el("svg:title", {}, row.label + ": " + Math.round(f.frac * 100) + "% of " + row.procs + " procs free at " + f.price.toFixed(2) + " credits/CPU-h, " + when(f.start) + " → " + when(f.end)));
    r.append(rect);
  }
  for (const b of row.bars) r.append(...drawBar(b, g.jobs[b.job], row, y, h, x));
  return r;
}

// drawBar is a job's bar on a row, labelled with the job's id where it
// fits, with a tooltip: who, how big, at what price, its state and span.
function drawBar(b, j, row, y, h, x) {
  const known = ["planned", "committing", "reserved", "running", "dispatched"].includes(b.state);
  const x0 = x(b.start), w = Math.max(1, x(b.end) - x0);
  const rect = el("svg:rect", { class: "bar " + (known ? b.state : "other"), "data-job": b.job, "data-state": b.state,
    x: x0, y: y + 2, width: w, height: h - 4 });
  const lines = [b.job + " — " + b.state];
  if (j) {
    lines.push(j.user + (j.account ? " (" + j.account + ")" : "") + ", " + j.procs + " procs (" + b.procs + " on " + row.label + ")");
    lines.push("max price " + j.max_price.toFixed(2) + " credits/CPU-h" + (j.cost ? ", charge " + j.cost.toFixed(2) + " credits" : ""));
  } else {
    lines.push(b.procs + " procs on " + row.label);
  }
  lines.push(when(b.start) + " → " + when(b.end));
  rect.append(el("svg:title", {}, lines.join("\n")));
  const chars = Math.floor((w - 8) / 7);
  if (chars < 2) return [rect];
  const label = b.job.length <= chars ? b.job : b.job.slice(0, chars - 1) + "…";
  return [rect, el("svg:text", { class: "barlabel " + (known ? b.state : "other"), x: x0 + 4, y: y + h / 2 + 4 }, label)];
}

// Drag across the plot to zoom to that time window; "now" or another
// window length zooms out again.
function plotTime(ev) {
  const g = view.geom, x = ev.clientX - $("gantt").getBoundingClientRect().left - LABEL_PX;
  return g ? Math.round(g.from + Math.max(0, Math.min(g.plot, x)) / g.plot * g.span) : 0;
}

function dragStart(ev) {
  if (!view.geom || ev.button !== 0) return;
  view.drag = plotTime(ev);
}

function dragEnd(ev) {
  if (view.drag === null) return;
  const a = view.drag, b = plotTime(ev);
  view.drag = null;
  if (Math.abs(b - a) < 60) return;
  view.zoom = { from: Math.min(a, b), to: Math.max(a, b) };
  loadGantt().catch(showError);
}

// shift steps the window shown by its own length.
function shift(sign) {
  const g = view.geom;
  if (!g) return;
  view.zoom = { from: g.from + sign * g.span, to: g.from + (1 + sign) * g.span };
  loadGantt().catch(showError);
}

// loadLocal shows the site's local queue as its agent reports it: each
// job waiting in the site's scheduler with the start its last forecast
// predicts (asked of the agent, not carried in forecasts).
async function loadLocal() {
  if (!view.site) return;
  const site = view.site, d = await get("/api/sites/" + encodeURIComponent(site) + "/queue");
  if (site !== view.site) return;
  $("local-site").textContent = site;
  $("local").dataset.site = site;
  let info = d.error || (!d.known ? "its agent does not report its queue (an older agent)" :
    plural(d.total, "job") + " waiting, as the forecast of " + when(d.generated) + " (revision " + d.revision + ") predicts them" +
    (d.jobs.length < d.total ? "; the first " + d.jobs.length + " shown" : ""));
  $("local-info").textContent = "— " + info;
  $("local-jobs").hidden = d.jobs.length === 0;
  $("local-jobs").tBodies[0].replaceChildren(...d.jobs.slice(0, 200).map(j => {
    const tr = el("tr", { "data-job": j.job });
    tr.append(td(j.job), td(j.user || ""), td(j.queue || ""), td(j.procs, "num"), td(dur(j.walltime), "num"), td(when(j.submitted), "when"),
      td(j.predicted_start ? when(j.predicted_start) : "beyond the horizon", "when start"),
      td(j.first_predicted_start ? when(j.first_predicted_start) : "", "when"));
    return tr;
  }));
}

// ---- Queue ----

async function loadJobs() {
  const q = new URLSearchParams();
  if (view.jobState) q.set("state", view.jobState);
  if (view.jobMatch) q.set("match", view.jobMatch);
  const d = await get("/api/jobs?" + q);
  drawJobs(d);
  const sel = d.jobs.find(j => j.id === view.job);
  if (sel && sel.updated !== view.jobUpdated) {
    view.jobUpdated = sel.updated;
    await loadEvents();
  }
}

const START_KIND = { planned: " (planned)", reserved: " (reserved)", started: " (started)" };

function drawJobs(d) {
  let count = d.found === d.total ? plural(d.total, "job") : d.found + " of " + plural(d.total, "job") + " match";
  if (d.jobs.length < d.found) count += ", the first " + d.jobs.length + " shown: narrow the list with the filters";
  $("job-count").textContent = count;
  drawOrder(d);
  const body = $("jobs").tBodies[0];
  body.replaceChildren(...d.jobs.map(j => {
    const tr = el("tr", { "data-job": j.id, "data-state": j.state });
    if (j.id === view.job) tr.classList.add("selected");
    const start = j.start ? when(j.start) + (START_KIND[j.start_kind] || "") : "";
    const queue = j.queue ? j.queue.position + " of " + j.queue.of : "";
    tr.append(td(j.id), td(j.state), td(queue, "queue num"), td(j.user + " / " + j.account), td(j.procs, "num"), td(dur(j.walltime), "num"),
      td(j.sites.join(", "), "sites"), td(start, "start"), td(j.cost.toFixed(2) + " / " + j.worst_cost.toFixed(2), "num"), td(j.attempts, "num"),
      td(j.why || j.message || "", "why"));
    tr.addEventListener("click", () => { view.job = j.id; view.jobUpdated = j.updated; loadEvents().catch(showError); drawSelected(); });
    return tr;
  }));
}

// drawOrder says which queue order the broker plans waiting jobs in and
// what that order plans first (the queue column's places are in it).
function drawOrder(d) {
  const p = $("job-order");
  p.hidden = !d.order;
  p.dataset.order = d.order || "";
  p.textContent = d.order ? "Waiting jobs are planned in " + d.order + " order: " + d.order_meaning +
    ". The queue column is each waiting job's place in that order at the last planning cycle (1 is planned first)." : "";
}

function drawSelected() {
  for (const tr of $("jobs").tBodies[0].rows) tr.classList.toggle("selected", tr.dataset.job === view.job);
}

async function loadEvents() {
  if (!view.job) return;
  const d = await get("/api/jobs/" + encodeURIComponent(view.job) + "/events");
  $("job-detail").hidden = false;
  $("job-detail-id").textContent = d.job;
  $("job-events").replaceChildren(...d.events.map(e => {
    const bits = [when(e.time), e.kind];
    if (e.site) bits.push("site " + e.site);
    if (e.state) bits.push(e.state);
    if (e.alloc && e.alloc.parts) bits.push("on " + [...new Set(e.alloc.parts.map(p => p.site))].join(", ") + " from " + when(e.alloc.start));
    if (e.kind === "outcome") bits.push(e.ok ? "reserved" : "failed");
    if (e.cost) bits.push("cost " + e.cost.toFixed(2));
    if (e.message) bits.push(e.message);
    return el("li", { "data-kind": e.kind }, bits.join(" — "));
  }));
  if (d.error) showError(d.error);
}

// ---- Audit ----

function auditLine(r) {
  const li = el("li", { "data-action": r.action, "data-tone": r.tone });
  li.append(el("span", { class: "code tone-" + r.tone }, r.code));
  li.append(document.createTextNode(" " + when(r.time) + " " + r.action + (r.job ? " " + r.job : "") + (r.site ? " @" + r.site : "") +
    (r.actor ? " by " + r.actor : "") + (r.message ? ": " + r.message : "") + (r.mismatch ? " [" + r.mismatch + "]" : "")));
  return li;
}

async function loadAudit() {
  const d = await get("/api/audit");
  $("repairs").replaceChildren(...(d.repairs.length ? d.repairs.map(auditLine) : [el("li", {}, "no repairs among the latest " + d.read + " records")]));
  $("audit").replaceChildren(...Object.keys(d.origins).sort().flatMap(o => [
    el("h3", { "data-origin": o }, o),
    el("ol", {}, undefined),
  ]));
  for (const h of $("audit").querySelectorAll("h3")) h.nextElementSibling.replaceChildren(...d.origins[h.dataset.origin].map(auditLine));
  if (d.error) showError(d.error);
}

// ---- loop ----

async function tick() {
  try {
    drawOverview(await get("/api/overview?" + siteQuery()));
    if (view.tab === "queue") await loadJobs();
    if (view.tab === "gantt") {
      await loadGantt();
      if ($("local").dataset.site !== view.site) loadLocal().catch(showError);
    }
    showError(null);
  } catch (e) {
    showError(e);
  }
  document.body.dataset.ticks = String(Number(document.body.dataset.ticks || 0) + 1);
}

// route reads the address's fragment: a tab, or #gantt/<site>.
function route() {
  const [tab, site] = location.hash.slice(1).split("/");
  if (site) {
    view.site = decodeURIComponent(site);
    view.zoom = null;
    $("gantt-window").value = "auto";
  }
  selectTab(TABS.includes(tab) ? tab : "sites");
}

function selectTab(name) {
  view.tab = name;
  const hash = name === "gantt" && view.site ? "#gantt/" + encodeURIComponent(view.site) : "#" + name;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== "tab-" + name;
  tick();
  if (name === "audit") loadAudit().catch(showError);
}

// later runs f once typing has paused.
function later(f) {
  let t = 0;
  return () => { clearTimeout(t); t = setTimeout(f, 250); };
}

function init() {
  for (const b of $("tabs").querySelectorAll("button")) b.addEventListener("click", () => selectTab(b.dataset.tab));
  for (const th of $("sites").tHead.rows[0].cells) {
    if (th.dataset.sort) th.addEventListener("click", () => { view.sort = th.dataset.sort; tick(); });
  }
  $("site-state").addEventListener("change", e => { view.siteState = e.target.value; tick(); });
  $("site-match").addEventListener("input", later(() => { view.siteMatch = $("site-match").value.trim(); tick(); }));
  $("job-state").addEventListener("change", e => { view.jobState = e.target.value; tick(); });
  $("job-match").addEventListener("input", later(() => { view.jobMatch = $("job-match").value.trim(); tick(); }));
  $("gantt-site").addEventListener("change", e => {
    view.site = e.target.value;
    view.zoom = null;
    history.replaceState(null, "", "#gantt/" + encodeURIComponent(view.site));
    loadGantt().catch(showError);
  });
  $("gantt-window").addEventListener("change", () => { view.zoom = null; view.offset = -900; loadGantt().catch(showError); });
  $("gantt-prev").addEventListener("click", () => shift(-1));
  $("gantt-next").addEventListener("click", () => shift(1));
  $("gantt-now").addEventListener("click", () => { view.zoom = null; view.offset = -900; $("gantt-window").value = "auto"; loadGantt().catch(showError); });
  $("gantt").addEventListener("mousedown", dragStart);
  window.addEventListener("mouseup", dragEnd);
  window.addEventListener("hashchange", route);
  route();
  setInterval(tick, POLL_MS);
  setInterval(() => {
    if (view.tab === "audit") loadAudit().catch(showError);
    if (view.tab === "gantt") loadLocal().catch(showError);
  }, AUDIT_MS);
}

document.addEventListener("DOMContentLoaded", init);
