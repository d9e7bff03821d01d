// lookahead's grid view: polls the broker's read-only /api/ and draws
// tables and a plain-SVG Gantt. No library, no inline script (CSP).
"use strict";

const POLL_MS = 2000, AUDIT_MS = 10000, ROW_PX = 12, LABEL_PX = 190, AXIS_PX = 22;
const SVGNS = "http://www.w3.org/2000/svg";
const view = { tab: "sites", site: "", offset: -900, job: "", now: 0, sites: [], zoom: null, geom: null, drag: null };

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function td(text, cls) { return el("td", cls ? { class: cls } : {}, text === undefined ? "" : String(text)); }

function dur(s) {
  const a = Math.abs(s), sign = s < 0 ? "-" : "";
  if (a < 120) return sign + a + "s";
  if (a < 7200) return sign + Math.round(a / 60) + "m";
  if (a < 172800) return sign + (a / 3600).toFixed(1) + "h";
  return sign + (a / 86400).toFixed(1) + "d";
}

function when(t) { return t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 16) + "Z" : ""; }

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

// ---- Sites ----

function drawOverview(o) {
  view.now = o.now;
  view.sites = o.sites.map(s => s.site);
  $("broker").textContent = "broker “" + o.broker.name + "”: " + o.broker.role + (o.broker.version ? " — " + o.broker.version : "");
  $("broker").dataset.active = String(o.broker.active);
  $("cycle").textContent = o.cycle.cycle ? "cycle " + o.cycle.cycle + " at " + when(o.cycle.time) + " (" + o.cycle.micros + " µs)" : "no planning cycle yet";
  $("updated").textContent = "broker time " + when(o.now) + ", site TTL " + dur(o.ttl);
  const body = $("sites").tBodies[0];
  body.replaceChildren(...o.sites.map(s => {
    const tr = el("tr", { "data-site": s.site, "data-state": s.state, class: "state-" + s.state });
    tr.append(td(s.site), td(s.state, "state"), td(s.reason || ""), td(s.seq, "num"), td(s.nodes, "num"), td(s.procs, "num"),
      td(s.free_proc_hours.toFixed(1), "num"), td(dur(s.forecast_age), "num"), td(dur(s.heartbeat_age), "num"),
      td(dur(s.clock_offset), "num"), td(when(s.horizon)), td(s.unmodelled.join("; ") || "none"));
    return tr;
  }));
  const sel = $("gantt-site");
  if ([...sel.options].map(o => o.value).join() !== view.sites.join()) {
    sel.replaceChildren(...view.sites.map(n => el("option", { value: n }, n)));
    if (!view.sites.includes(view.site)) view.site = view.sites[0] || "";
    sel.value = view.site;
  }
}

// ---- Gantt ----

function maxRows() { return Math.max(20, Math.floor(window.innerHeight * 0.7 / ROW_PX)); }

function windowRange() {
  if (view.zoom) return view.zoom;
  const w = Number($("gantt-window").value);
  const from = view.now + view.offset;
  return w ? { from: from, to: from + w } : { from: from, to: 0 };
}

async function loadGantt() {
  if (!view.site) return;
  const r = windowRange(), rows = maxRows();
  let q = "/api/gantt?site=" + encodeURIComponent(view.site) + "&rows=" + rows + "&from=" + r.from;
  if (r.to) q += "&to=" + r.to;
  const t0 = performance.now();
  const g = await get(q);
  drawGantt(g);
  const svg = $("gantt");
  svg.dataset.renderMs = (performance.now() - t0).toFixed(1);
}

function priceColour(p, lo, hi) {
  const x = hi > lo ? (p - lo) / (hi - lo) : 0;
  return "hsl(" + Math.round(130 - 100 * x) + ", " + Math.round(55 + 20 * x) + "%, 55%)";
}

function drawGantt(g) {
  const svg = $("gantt");
  const width = Math.max(600, $("gantt-box").clientWidth - 4), plot = width - LABEL_PX;
  const height = AXIS_PX + g.rows.length * ROW_PX + 4;
  const span = g.to - g.from, x = t => LABEL_PX + Math.max(0, Math.min(plot, (t - g.from) / span * plot));
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  Object.assign(svg.dataset, { site: g.site, nodes: g.nodes, rows: g.rows.length, maxRows: g.max_rows, perRow: g.per_row, from: g.from, to: g.to });
  view.geom = { from: g.from, span: span, plot: plot };
  const parts = [axis(g, x, height)];
  g.rows.forEach((row, i) => parts.push(drawRow(g, row, i, x)));
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
    a.append(el("svg:text", { x: x(t) + 2, y: AXIS_PX - 8 }, when(t).slice(5, 16)));
  }
  return a;
}

function drawRow(g, row, i, x) {
  const y = AXIS_PX + i * ROW_PX;
  const r = el("svg:g", { class: "row", "data-nodes": row.nodes, "data-label": row.label });
  r.append(el("svg:text", { x: 2, y: y + ROW_PX - 2 }, row.label));
  r.append(el("svg:rect", { class: "rowbg", x: LABEL_PX, y: y, width: x(g.to) - LABEL_PX, height: ROW_PX }));
  for (const f of row.free) {
    const rect = el("svg:rect", { class: "free", x: x(f.start), y: y + 1, width: Math.max(0.5, x(f.end) - x(f.start)), height: ROW_PX - 2,
      fill: priceColour(f.price, g.price_min, g.price_max), "fill-opacity": (0.2 + 0.8 * f.frac).toFixed(2) });
    rect.append(el("svg:title", {}, row.label + ": " + Math.round(f.frac * 100) + "% of " + row.procs + " procs free at " + f.price.toFixed(2) + " credits/CPU-h, " + when(f.start) + " → " + when(f.end)));
    r.append(rect);
  }
  for (const b of row.bars) {
    const known = ["planned", "committing", "reserved", "running", "dispatched"].includes(b.state);
    const rect = el("svg:rect", { class: "bar " + (known ? b.state : "other"), "data-job": b.job, "data-state": b.state,
      x: x(b.start), y: y + 2, width: Math.max(1, x(b.end) - x(b.start)), height: ROW_PX - 4 });
    rect.append(el("svg:title", {}, b.job + " (" + b.state + "): " + b.procs + " procs, " + when(b.start) + " → " + when(b.end)));
    r.append(rect);
  }
  return r;
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

function shift(sign) {
  const r = windowRange(), w = r.to ? r.to - r.from : 21600;
  if (view.zoom) view.zoom = { from: view.zoom.from + sign * w, to: view.zoom.to + sign * w };
  else view.offset += sign * (Number($("gantt-window").value) || 21600);
  loadGantt().catch(showError);
}

// ---- Queue ----

function drawJobs(d) {
  const body = $("jobs").tBodies[0];
  body.replaceChildren(...d.jobs.map(j => {
    const tr = el("tr", { "data-job": j.id, "data-state": j.state });
    if (j.id === view.job) tr.classList.add("selected");
    const start = j.start ? when(j.start) + (j.reserved ? "" : " (planned)") : "";
    tr.append(td(j.id), td(j.state), td(j.user + " / " + j.account), td(j.procs, "num"), td(dur(j.walltime), "num"),
      td(j.sites.join(", ")), td(start), td(j.cost.toFixed(2) + " / " + j.worst_cost.toFixed(2), "num"), td(j.attempts, "num"),
      td(j.why || j.message || "", "why"));
    tr.addEventListener("click", () => { view.job = j.id; loadEvents().catch(showError); drawSelected(); });
    return tr;
  }));
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
  const li = el("li", { "data-action": r.action });
  li.append(el("span", { class: r.code === "ok" ? "code-ok" : "code-bad" }, r.code));
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
    const o = await get("/api/overview");
    drawOverview(o);
    if (view.tab === "queue") { drawJobs(await get("/api/jobs")); await loadEvents(); }
    if (view.tab === "gantt") await loadGantt();
    showError(null);
  } catch (e) {
    showError(e);
  }
  document.body.dataset.ticks = String(Number(document.body.dataset.ticks || 0) + 1);
}

function selectTab(name) {
  view.tab = name;
  if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== "tab-" + name;
  tick();
  if (name === "audit") loadAudit().catch(showError);
}

function init() {
  for (const b of $("tabs").querySelectorAll("button")) b.addEventListener("click", () => selectTab(b.dataset.tab));
  $("gantt-site").addEventListener("change", e => { view.site = e.target.value; loadGantt().catch(showError); });
  $("gantt-window").addEventListener("change", () => { view.zoom = null; loadGantt().catch(showError); });
  $("gantt-prev").addEventListener("click", () => shift(-1));
  $("gantt-next").addEventListener("click", () => shift(1));
  $("gantt-now").addEventListener("click", () => { view.zoom = null; view.offset = -900; loadGantt().catch(showError); });
  $("gantt").addEventListener("mousedown", dragStart);
  window.addEventListener("mouseup", dragEnd);
  const fromHash = () => {
    const hash = location.hash.slice(1);
    return ["sites", "gantt", "queue", "audit"].includes(hash) ? hash : "sites";
  };
  window.addEventListener("hashchange", () => selectTab(fromHash()));
  selectTab(fromHash());
  setInterval(tick, POLL_MS);
  setInterval(() => { if (view.tab === "audit") loadAudit().catch(showError); }, AUDIT_MS);
}

document.addEventListener("DOMContentLoaded", init);
