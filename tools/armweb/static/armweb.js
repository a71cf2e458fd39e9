// armweb.js — the page: reads armweb's event stream (/events) and draws the last 10 s of every
// joint (desired vs measured position, tracking error) and of the tool's opening (an arm with a
// [tool] section), the torques, state, faults, the last events, loop timing and gains, with
// Chart.js (Debian's libjs-chart.js, served by armweb as /js/chart.js).
//
// Telemetry comes in batches about 10 times a second; the charts are redrawn at most that often
// (on a timer, only when new data arrived). The time axes are seconds before the newest sample
// (-10 s ... 0 s); the samples keep armd's clock, the ticks are placed and named relative to it.
// Units as armd's socket gives them: rad, N m (m, N on prismatic joints); the tracking error is
// shown in mrad (mm). The joint cards fill a grid of info.columns columns (armweb's rule,
// webview/layout.py: no lone card in the last row; the tool's card counts). Hooks for tests:
// every joint card has data-joint and data-points (samples in its position plot), the tool's
// card data-tool and data-points; #state has data-state; every entry of the event log
// (#events, newest first) has data-method; the control panel's Open and Close are #tool-open
// and #tool-close, the last tool command's answer #tool-outcome.
"use strict";

const WINDOW_S = 10;           // seconds of history in every plot
const TICK_S = 2;              // a time-axis tick every 2 s: -10 s, -8 s, ... 0 s
const REDRAW_MS = 100;         // at most 10 redraws per second
const EVENT_LOG = 20;          // entries in the event log
const MINUS = "\u2212";        // the minus sign of the time axis labels
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
  "#e377c2"];

const page = {
  control: false,
  info: null,
  joints: [],        // per joint: {card, pos, err, readout}
  tool: null,        // the tool's card: {card, chart, readout}, null without a tool
  toolStatus: null,  // status's tool (stroke, command, grasped), null without a tool
  torque: null,      // the torque chart
  lastTime: null,    // armd time of the newest sample [s]
  dirty: false,
  gains: null,
  state: "",         // armd's state as last shown ("" = not known)
  connected: null,   // armweb's link to armd, as last shown
};

const $ = (id) => document.getElementById(id);

// An element with attributes and children (strings become text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function fmt(x, digits) {
  return typeof x === "number" && isFinite(x) ? x.toFixed(digits) : "-";
}

// A time-axis label: seconds relative to the newest sample, "−10 s" ... "0 s".
function relativeLabel(s) {
  const r = Math.round(s);
  return (r < 0 ? MINUS + String(-r) : "0") + " s";
}

// The x axis's ticks: every TICK_S seconds back from the newest sample (armd's time), so that
// the labels are whole seconds ago whatever armd's clock reads.
function relativeTicks(axis) {
  if (page.lastTime === null) return;
  axis.ticks = [];
  for (let s = -WINDOW_S; s <= 0; s += TICK_S) axis.ticks.push({ value: page.lastTime + s });
}

// A scrolling line chart: x is armd's time [s], the last WINDOW_S seconds, labelled in seconds
// before the newest sample.
function lineChart(canvas, datasets, yTitle, legend) {
  return new Chart(canvas, {
    type: "line",
    data: {
      datasets: datasets.map((d) => ({
        label: d.label, data: [], borderColor: d.colour, borderDash: d.dash || [],
        borderWidth: 1.5, pointRadius: 0, tension: 0, fill: false,
      })),
    },
    options: {
      animation: false, parsing: false, normalized: true, responsive: true,
      maintainAspectRatio: false, events: [],
      plugins: { legend: { display: legend, labels: { boxWidth: 12, font: { size: 10 } } },
        tooltip: { enabled: false } },
      scales: {
        x: { type: "linear", afterBuildTicks: relativeTicks,
          ticks: { autoSkip: false, maxRotation: 0, font: { size: 10 },
            callback: (v) => (page.lastTime === null ? "" : relativeLabel(v - page.lastTime)) } },
        y: { title: { display: !!yTitle, text: yTitle, font: { size: 10 } },
          ticks: { maxTicksLimit: 5, font: { size: 10 } } },
      },
    },
  });
}

// ------------------------------------------------------------------------------ building
function buildJoints(info) {
  const same = page.info && JSON.stringify(page.info.joints) === JSON.stringify(info.joints) &&
    JSON.stringify(page.info.tool) === JSON.stringify(info.tool);
  page.info = info;
  $("arm").textContent = info.arm;
  document.title = "armweb: " + info.arm;
  $("about").textContent = `armd ${info.version || ""}, ${info.joints.length} joints, ` +
    `${fmt(info.rate_hz, 0)} Hz`;
  if (same) return;
  for (const j of page.joints) { j.pos.destroy(); j.err.destroy(); }
  if (page.tool) page.tool.chart.destroy();
  if (page.torque) page.torque.destroy();
  const box = $("joints");
  box.replaceChildren();
  box.style.setProperty("--columns", String(info.columns || 1));
  page.joints = info.joints.map((name, i) => {
    const prismatic = info.types && info.types[i] === "prismatic";
    const readout = el("div", { class: "readout" });
    const posCanvas = el("canvas", {}), errCanvas = el("canvas", {});
    const card = el("section", { class: "joint panel", "data-joint": name, "data-points": "0" },
      el("h2", {}, name, el("small", {}, prismatic ? " prismatic, m" : " revolute, rad")),
      readout,
      el("div", { class: "chartbox" }, posCanvas),
      el("div", { class: "chartbox short" }, errCanvas));
    box.append(card);
    return {
      name, card, readout,
      scale: 1000, errUnit: prismatic ? "mm" : "mrad",
      pos: lineChart(posCanvas, [{ label: "desired", colour: "#888", dash: [5, 3] },
        { label: "measured", colour: COLOURS[0] }], prismatic ? "m" : "rad", true),
      err: lineChart(errCanvas, [{ label: "error", colour: COLOURS[1] }],
        "error " + (prismatic ? "mm" : "mrad"), false),
    };
  });
  page.tool = info.tool ? buildTool(info.tool, box) : null;
  page.torque = lineChart($("torque-chart"),
    info.joints.map((name, i) => ({ label: name, colour: COLOURS[i % COLOURS.length] })),
    "", true);
  page.lastTime = null;
  buildGains();
}

// The tool's card after the joints': its opening [mm] over the window, the readout.
function buildTool(tool, box) {
  const readout = el("div", { class: "readout" });
  const canvas = el("canvas", {});
  const stroke = `${fmt(1000 * tool.lower, 0)} ... ${fmt(1000 * tool.upper, 0)}`;
  const card = el("section", { class: "tool panel", "data-tool": tool.name, "data-points": "0" },
    el("h2", {}, tool.name, el("small", {}, ` gripper, mm (stroke ${stroke})`)),
    readout,
    el("div", { class: "chartbox" }, canvas));
  box.append(card);
  return { card, readout,
    chart: lineChart(canvas, [{ label: "opening", colour: COLOURS[2] }], "mm", false) };
}

// The tool's readout: opening [mm] and force [N] from telemetry, the command running and
// whether it holds what it grasped from status.
function setToolReadout(opening, force) {
  const s = page.toolStatus || {};
  page.tool.readout.replaceChildren(
    el("span", {}, "opening ", el("b", { class: "tool-opening", "data-value": String(opening) },
      fmt(1000 * opening, 1)), " mm"),
    el("span", {}, "force ", el("b", { class: "tool-force" }, fmt(force, 1)), " N"),
    el("span", {}, "command ", el("b", { class: "tool-command" }, s.command || "-")),
    el("span", {}, el("b", { class: "tool-grasped" }, s.grasped ? "grasped" : "")));
}

function setReadout(j, q, qDes, tau) {
  j.readout.replaceChildren(
    el("span", {}, "q ", el("b", { class: "q", "data-value": String(q) }, fmt(q, 4))),
    el("span", {}, "desired ", el("b", { class: "q-des" }, fmt(qDes, 4))),
    el("span", {}, "error ", el("b", { class: "error" }, fmt((qDes - q) * j.scale, 2)),
      " " + j.errUnit),
    el("span", {}, "torque ", el("b", { class: "tau" }, fmt(tau, 2))));
}

// ----------------------------------------------------------------------------- telemetry
function clearPlots() {
  for (const j of page.joints) {
    for (const d of j.pos.data.datasets) d.data.length = 0;
    j.err.data.datasets[0].data.length = 0;
  }
  if (page.tool) page.tool.chart.data.datasets[0].data.length = 0;
  if (page.torque) for (const d of page.torque.data.datasets) d.data.length = 0;
}

function push(data, x, y) {
  if (typeof y === "number") data.push({ x, y });
}

function trim(data, from) {
  let k = 0;
  while (k < data.length && data[k].x < from) k++;
  if (k) data.splice(0, k);
}

// One batch: time[k], q[k][n], q_des[k][n], tau[k][n], pose (the last sample's tool frame), and
// with a tool tool_opening[k] [m], tool_force[k] [N].
function onTelemetry(b) {
  if (!page.info) return;
  for (let k = 0; k < b.time.length; k++) {
    const t = b.time[k];
    if (page.lastTime !== null && t < page.lastTime) clearPlots();  // armd restarted
    page.lastTime = t;
    page.joints.forEach((j, i) => {
      const q = b.q[k] && b.q[k][i], qd = b.q_des[k] && b.q_des[k][i];
      push(j.pos.data.datasets[0].data, t, qd);
      push(j.pos.data.datasets[1].data, t, q);
      if (typeof q === "number" && typeof qd === "number")
        push(j.err.data.datasets[0].data, t, (qd - q) * j.scale);
      push(page.torque.data.datasets[i].data, t, b.tau[k] && b.tau[k][i]);
    });
    if (page.tool && b.tool_opening && typeof b.tool_opening[k] === "number")
      push(page.tool.chart.data.datasets[0].data, t, 1000 * b.tool_opening[k]);
  }
  const last = b.time.length - 1;
  if (last >= 0) {
    page.joints.forEach((j, i) => setReadout(j, b.q[last][i], b.q_des[last][i], b.tau[last][i]));
    if (page.tool && b.tool_opening) setToolReadout(b.tool_opening[last], b.tool_force[last]);
    if (b.pose) setPose(b.pose);
    if (b.wrench) setWrench(b.wrench);
    setState(b.state);
    page.dirty = true;
  }
}

function redraw() {
  if (!page.dirty || page.lastTime === null) return;
  page.dirty = false;
  const from = page.lastTime - WINDOW_S;
  const charts = page.joints.flatMap((j) => [j.pos, j.err]).concat([page.torque])
    .concat(page.tool ? [page.tool.chart] : []);
  for (const c of charts) {
    for (const d of c.data.datasets) trim(d.data, from);
    c.options.scales.x.min = from;
    c.options.scales.x.max = page.lastTime;
    c.update("none");
  }
  for (const j of page.joints)
    j.card.dataset.points = String(j.pos.data.datasets[1].data.length);
  if (page.tool)
    page.tool.card.dataset.points = String(page.tool.chart.data.datasets[0].data.length);
}

// The tool frame's position in the header, in mm (x y z in the base frame); its numbers [m] in
// data-position, the quaternion (w x y z) in data-orientation.
function setPose(pose) {
  const e = $("pose"), p = pose.position || [];
  const ok = p.length === 3 && p.every((v) => typeof v === "number");
  e.textContent = ok ? `x ${fmt(1000 * p[0], 1)}  y ${fmt(1000 * p[1], 1)}  z ${fmt(1000 * p[2], 1)} mm`
    : "-";
  e.dataset.position = JSON.stringify(p);
  e.dataset.orientation = JSON.stringify(pose.orientation || []);
}

// The force at the tool in the header, in N (x y z in the base frame; "-" while armd's collision
// observer is off and the numbers are null); force and torque [N, N m] in data-force and
// data-torque.
function setWrench(w) {
  const e = $("wrench"), f = w.force || [];
  const ok = f.length === 3 && f.every((v) => typeof v === "number");
  e.textContent = ok ? `x ${fmt(f[0], 1)}  y ${fmt(f[1], 1)}  z ${fmt(f[2], 1)} N` : "-";
  e.dataset.force = JSON.stringify(f);
  e.dataset.torque = JSON.stringify(w.torque || []);
}

// ------------------------------------------------------------------------ state and status
function setState(s) {
  const e = $("state");
  e.textContent = s || "unknown";
  e.dataset.state = s || "";
  page.state = s || "";
  updateControls();
}

function onStatus(s) {
  page.toolStatus = s.tool && typeof s.tool === "object" ? s.tool : null;
  if (page.tool && page.toolStatus)
    setToolReadout(page.toolStatus.opening, page.toolStatus.force);
  setState(s.state);
  $("fault").textContent = s.fault || "none";
  $("controller").textContent = s.controller;
  $("trajectory").textContent = s.trajectory
    ? `#${s.trajectory.id} ${fmt(100 * s.trajectory.progress, 0)} %, ` +
      `${fmt(s.trajectory.remaining, 1)} s left`
    : "none";
  const L = s.loop || {};
  $("rate").textContent = `${fmt(L.rate_hz, 0)} Hz`;
  $("timing").tBodies[0].replaceChildren(...[["lateness", L.lateness_us], ["read", L.read_us],
    ["compute", L.compute_us], ["write", L.write_us]].map(([name, t]) =>
    el("tr", { "data-timing": name }, el("th", {}, name),
      ...["p50", "p99", "max"].map((k) => el("td", {}, fmt(t && t[k], 1))))));
  const c = [["ticks", L.ticks], ["overruns", L.overruns], ["late ticks", L.late_ticks],
    ["failed reads", L.failed_reads], ["failed writes", L.failed_writes],
    ["read gaps", L.read_gaps], ["saturations", L.saturations],
    ["collisions", s.collision && s.collision.detected], ["clients", s.clients]];
  $("counters").tBodies[0].replaceChildren(...c.map(([k, v]) =>
    el("tr", {}, el("th", {}, k), el("td", {}, v === undefined ? "-" : String(v)))));
}

function onLink(l) {
  const e = $("link");
  e.textContent = l.connected ? `armd connected, ${fmt(l.telemetry_hz, 1)} Hz`
    : `armd unreachable: ${l.message}`;
  e.className = "link " + (l.connected ? "up" : "down");
  if (!l.connected) setState("");
  if (page.connected !== null && page.connected !== !!l.connected)
    logEvent("link", l.connected ? "armweb connected to armd" : `armd lost: ${l.message}`,
      Date.now() / 1000);
  page.connected = !!l.connected;
}

// ------------------------------------------------------------------------------ events
// The local clock time of a Unix time [s] (when armweb saw the event).
function clock(unix) {
  return typeof unix === "number" ? new Date(unix * 1000).toLocaleTimeString() : "";
}

// What one armd event says, in a line.
function describe(m) {
  const p = m.params || {};
  switch (m.method) {
    case "state": return p.state;
    case "fault": return p.reason;
    case "trajectory_done": return `#${p.id} ${p.result}`;
    case "collision": return `${p.joint} ${fmt(p.external_torque && Math.max(
      ...p.external_torque.map(Math.abs)), 1)} N m, ${p.reaction}`;
    default: return JSON.stringify(p);
  }
}

// A new entry at the top of the event log (the oldest beyond EVENT_LOG go).
function logEvent(method, text, seen, armdTime) {
  const list = $("events");
  const title = typeof armdTime === "number" ? `armd time ${fmt(armdTime, 3)} s` : "";
  list.prepend(el("li", { "data-method": method, title },
    el("time", {}, clock(seen)), el("b", {}, method), " ", text));
  while (list.children.length > EVENT_LOG) list.lastElementChild.remove();
}

function showFault(p) {
  const t = typeof p.time === "number" ? ` at t = ${fmt(p.time, 3)} s` : "";
  const seen = p.seen ? ` (${clock(p.seen)})` : "";
  $("last-fault").textContent = `${p.reason}${t}${seen}`;
}

function onArmdEvent(m) {
  const p = m.params || {};
  if (m.method === "fault") showFault(p);
  if (m.method === "state") setState(p.state);
  logEvent(m.method, describe(m), p.seen, p.time);
}

// What a browser that opens the page finds: armd's last events (oldest first) and last fault.
function onHistory(h) {
  $("events").replaceChildren();
  for (const m of h.events || []) logEvent(m.method, describe(m), m.params.seen, m.params.time);
  if (h.last_fault) showFault(h.last_fault);
}

// ----------------------------------------------------------------------------- gains
function buildGains() {
  const body = $("gains").tBodies[0];
  body.replaceChildren(...page.info.joints.map((name, i) => el("tr", { "data-joint": name },
    el("th", {}, name), ...["kp", "kd", "ki"].map((k) => el("td", {}, page.control
      ? el("input", { name: `${k}${i}`, type: "text", inputmode: "decimal", size: "7" })
      : el("span", { class: k }, "-"))))));
  if (page.control && !$("gains-apply")) {
    $("gains-form").append(el("button", { id: "gains-apply", type: "submit" }, "Apply gains"));
    updateControls();
  }
  if (page.gains) onGains(page.gains);
}

function onGains(g) {
  page.gains = g;
  if (!page.info) return;
  page.info.joints.forEach((_, i) => {
    for (const k of ["kp", "kd", "ki"]) {
      const v = g[k] && g[k][i];
      if (page.control) {
        const input = $("gains-form").elements[`${k}${i}`];
        if (input && document.activeElement !== input) input.value = String(v);
      } else {
        const cell = $("gains").tBodies[0].rows[i].querySelector("." + k);
        if (cell) cell.textContent = String(v);
      }
    }
  });
}

// ----------------------------------------------------------------------------- control
// Every command carries armweb's token (Authorization: Bearer), which the user types into the
// control panel; it is kept in this tab's sessionStorage only, never in the URL. The buttons
// and the gains form stay disabled without a token; armweb's 401 drops a stored token.
const TOKEN_KEY = "armweb.token";

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

// Every control is usable with a token; Reset only when armd is in fault or estop (when the
// state is not known, for example armd is unreachable, it stays usable: armd answers). Open and
// Close are there only while status has a tool.
function updateControls() {
  const on = !!token();
  for (const id of ["enable", "disable", "estop", "reset", "gains-apply", "tool-open",
    "tool-close"]) {
    const b = $(id);
    if (b) b.disabled = !on;
  }
  for (const id of ["tool-open", "tool-close", "tool-outcome"]) {
    const e = $(id);
    if (e) e.hidden = !page.toolStatus;
  }
  const reset = $("reset");
  if (reset && page.state && page.state !== "fault" && page.state !== "estop") {
    reset.disabled = true;
    reset.title = `nothing to reset: armd is ${page.state}`;
  } else if (reset) {
    reset.title = "clear the fault or estop (armd's reset); then Enable";
  }
}

function forgetToken(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  updateControls();
  $("token-status").textContent = why;
}

// POSTs to armweb, which forwards to armd; shows armd's {"error": {code, message}} when refused.
async function post(path, body, errorBox) {
  errorBox.textContent = "";
  try {
    const headers = { "X-Armweb": "1", "Content-Type": "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const r = await fetch(path, {
      method: "POST", cache: "no-store", headers,
      body: body === undefined ? "{}" : JSON.stringify(body),
    });
    const reply = await r.json();
    if (reply.error) errorBox.textContent = `${reply.error.code}: ${reply.error.message}`;
    if (r.status === 401) forgetToken("token refused: enter the current one");
    return reply;
  } catch (e) {
    errorBox.textContent = "armweb unreachable: " + e;
    return null;
  }
}

// The token typed into the field: kept, then checked with armweb (POST /api/token).
async function takeToken(ev) {
  const t = ev.target.value.trim();
  ev.target.value = "";
  if (!t) return;
  sessionStorage.setItem(TOKEN_KEY, t);
  const reply = await post("/api/token", undefined, $("command-error"));
  if (reply && reply.result) {
    $("token-status").textContent = "token accepted";
    updateControls();
  }
}

// What the tool command answered, beside Open and Close: "Close: grasped, 20.0 mm, 9.8 N".
async function toolCommand(label, path, body, err) {
  const out = $("tool-outcome");
  out.textContent = `${label}: ...`;
  const reply = await post(path, body, err);
  const r = reply && reply.result;
  out.textContent = r ? `${label}: ${r.outcome}, ${fmt(1000 * r.opening, 1)} mm, ` +
    `${fmt(r.force, 1)} N` : "";
}

// Close grasps with epsilons that span the stroke above where empty fingers stop (its lower
// end + tolerance): whatever the fingers close on counts as grasped, nothing is no_object.
// Open releases (to the stroke's upper end).
function closeTool(err) {
  const s = page.toolStatus;
  if (!s) return;
  const width = (s.lower + s.upper) / 2;
  toolCommand("Close", "/api/tool.grasp", { width: width,
    epsilon_inner: width - s.lower - 2 * s.tolerance, epsilon_outer: s.upper - width }, err);
}

function buildControl(c) {
  const box = $("control");
  const err = el("div", { id: "command-error", class: "error" });
  const field = el("input", { id: "token", type: "password", autocomplete: "off",
    placeholder: "armweb token", size: "24", onchange: takeToken });
  box.replaceChildren(el("h2", {}, "Control"),
    el("button", { id: "enable", onclick: () => post("/api/enable", undefined, err) }, "Enable"),
    el("button", { id: "disable", onclick: () => post("/api/disable", undefined, err) },
      "Disable"),
    el("button", { id: "estop", class: "estop", onclick: () => post("/api/estop", undefined,
      err) }, "E-STOP"),
    el("button", { id: "reset", onclick: () => post("/api/reset", undefined, err) }, "Reset"),
    el("button", { id: "tool-open", title: "open the gripper (armd's tool.release)",
      onclick: () => toolCommand("Open", "/api/tool.release", undefined, err) }, "Open"),
    el("button", { id: "tool-close", title: "close the gripper on whatever is between its " +
      "fingers (armd's tool.grasp)", onclick: () => closeTool(err) }, "Close"),
    el("span", { id: "tool-outcome", class: "token-status" }, ""),
    el("label", { class: "token", title: `the token is in ${c.token_file}, readable by ` +
      "root and group armd" }, "token ", field),
    el("span", { id: "token-status", class: "token-status" }, ""),
    err);
  box.hidden = false;
  updateControls();
  $("token-status").textContent = token() ? "token kept for this tab"
    : `enter the token from ${c.token_file}`;
}

function numberOrText(s) {
  const t = s.trim();
  return t !== "" && isFinite(Number(t)) ? Number(t) : t;
}

function submitGains(ev) {
  ev.preventDefault();
  const f = $("gains-form").elements, n = page.info.joints.length, body = {};
  for (const k of ["kp", "kd", "ki"])
    body[k] = Array.from({ length: n }, (_, i) => numberOrText(f[`${k}${i}`].value));
  post("/api/gains", body, $("gains-error"));
}

function onConfig(c) {
  page.control = !!c.control;
  if (page.control && !$("estop")) buildControl(c);
}

// ----------------------------------------------------------------------------- start
function start() {
  $("gains-form").addEventListener("submit", submitGains);
  const es = new EventSource("/events");
  const on = (name, fn) => es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  on("config", onConfig);
  on("link", onLink);
  on("info", buildJoints);
  on("status", onStatus);
  on("gains", onGains);
  on("telemetry", onTelemetry);
  on("history", onHistory);
  on("armd", onArmdEvent);
  es.addEventListener("open", () => { $("link").textContent = "armweb connected"; });
  es.addEventListener("error", () => {
    $("link").textContent = "armweb unreachable, retrying";
    $("link").className = "link down";
  });
  setInterval(redraw, REDRAW_MS);
}

if (typeof Chart === "undefined") {
  document.body.prepend(el("p", { class: "error" },
    "Chart.js did not load: install the Debian package libjs-chart.js on armweb's machine."));
} else {
  start();
}
