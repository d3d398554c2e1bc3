// The panel: one live view from /api/events (the whole view on every (re)connect, then
// each event), drawn on every change; controls go to /api/command with the token.

import { drawBoard, fmtLead } from "./board.js";
import { drawGraph } from "./graph.js";

const $ = (id) => document.getElementById(id);
const view = { state: null, analysis: null, alert: null, camera: null, graph: [] };
const ui = { ownership: false, pv: null };

const kiosk = new URLSearchParams(location.search).get("kiosk") === "1";
if (kiosk) {
  document.body.classList.add("kiosk");
  document.documentElement.requestFullscreen?.().catch(() => {});
}

function countStones(rows, c) {
  return rows.reduce((n, r) => n + [...r].filter((x) => x === c).length, 0);
}

/** Stones each side has taken: what it lost is what it played less what stands. */
function captures(s) {
  const played = (color) => s.moves.filter((m) => m.startsWith(color + " ") && !/pass$/i.test(m)).length
    + s.setup.filter((m) => m.startsWith(color + " ")).length;
  return {
    B: played("W") - countStones(s.rows, "O"),
    W: played("B") - countStones(s.rows, "X"),
  };
}

/** Shows candidate `c`'s variation (null: none) without rebuilding the list under the
 * pointer, which would fire its hover again. */
function showPv(c) {
  ui.pv = c;
  drawBoard($("board"), view, { ownership: ui.ownership, pv: ui.pv, onHover: showPv });
  for (const tr of $("top").querySelectorAll("tbody tr")) {
    tr.classList.toggle("active", !!c && tr.dataset.vertex === c.vertex);
  }
}

function render() {
  const s = view.state;
  drawGraph($("graph"), view.graph, s ? s.moves.length : 0);
  if (!s) return showPv(ui.pv);
  const name = { B: "Black", W: "White" };
  $("turn").textContent = s.result ? `Game over: ${s.result}` : `Move ${s.moves.length + 1}: ${name[s.to_move]} to play${s.thinking ? " (thinking…)" : ""}`;
  $("turn").dataset.moves = String(s.moves.length);
  const rules = typeof s.rules === "object" ? (s.rules.scoring || "").toLowerCase() + " scoring" : String(s.rules);
  const handicap = s.setup.length ? `, handicap ${s.setup.length}` : "";
  const engine = s.engine === "none" ? "engine analyses only" : `engine plays ${s.engine} at level ${s.level}`;
  $("game-info").textContent = `${s.size[0]}×${s.size[1]}, komi ${s.komi}, ${rules}${handicap}; ${engine}`;
  // The new-game form offers the level in force; left empty, it stays.
  $("new-game").elements.level.placeholder = s.level;
  const c = captures(s);
  $("captures").textContent = `Captures: Black ${c.B}, White ${c.W}`;
  $("result").textContent = s.result ? `Result ${s.result}` : "";
  const a = view.analysis && view.analysis.number === s.moves.length ? view.analysis : null;
  const body = $("top").querySelector("tbody");
  body.replaceChildren();
  // A shown variation follows its move into the new analysis, so a row rebuilt under a
  // still pointer keeps showing it, with fresh figures.
  if (ui.pv) ui.pv = (a && a.moves.find((m) => m.vertex === ui.pv.vertex)) || null;
  if (a) {
    const black = a.to_move === "B" ? a.winrate : 1 - a.winrate;
    const lead = a.to_move === "B" ? a.scoreLead : -a.scoreLead;
    $("bar-black").style.width = `${(100 * black).toFixed(1)}%`;
    $("eval-text").textContent = `${name[a.to_move]} to move: win ${(100 * a.winrate).toFixed(1)}%, lead ${fmtLead(a.scoreLead)} (Black ${(100 * black).toFixed(0)}%, ${fmtLead(lead)}; ${a.visits} visits)`;
    for (const m of a.moves) {
      const tr = document.createElement("tr");
      tr.dataset.vertex = m.vertex;
      for (const t of [m.vertex, m.visits, `${(100 * m.winrate).toFixed(1)}%`, fmtLead(m.scoreLead)]) {
        const td = document.createElement("td");
        td.textContent = t;
        tr.appendChild(td);
      }
      tr.addEventListener("mouseenter", () => showPv(m));
      tr.addEventListener("mouseleave", () => showPv(null));
      tr.addEventListener("click", () => showPv(ui.pv && ui.pv.vertex === m.vertex ? null : m));
      body.appendChild(tr);
    }
  } else {
    $("eval-text").textContent = s.result ? "" : "No analysis yet";
  }
  const al = $("alert");
  if (view.alert && view.alert.kind === "fix") {
    al.hidden = false;
    al.textContent = "Fix the board: " + view.alert.fixes.map((f) => `${f.point} should be ${f.want === "empty" ? "empty" : name[f.want]} (seen ${f.seen})`).join("; ");
  } else if (view.alert && view.alert.kind === "ambiguous") {
    al.hidden = false;
    al.textContent = "Ambiguous: " + view.alert.options.map((o) => o.join(", ")).join(" or ");
  } else {
    al.hidden = true;
  }
  showPv(ui.pv);
}

/** Applies one live event to the view, as the server's hub does. */
function apply(kind, data) {
  if (kind === "state") {
    const old = view.state;
    const same = old && old.size.join() === data.size.join() && old.setup.join() === data.setup.join()
      && old.komi === data.komi && JSON.stringify(old.rules) === JSON.stringify(data.rules);
    let kept = 0;
    if (same) while (kept < old.moves.length && kept < data.moves.length && old.moves[kept] === data.moves[kept]) kept++;
    view.graph = same ? view.graph.filter((p) => p.number <= kept) : [];
    if (view.analysis && view.analysis.number !== data.moves.length) view.analysis = null;
    if (!view.state || view.state.moves.length !== data.moves.length) ui.pv = null;
    view.state = data;
  } else if (kind === "analysis") {
    view.analysis = data;
    const black = data.to_move === "B";
    const p = { number: data.number, winrate: black ? data.winrate : 1 - data.winrate, lead: black ? data.scoreLead : -data.scoreLead, visits: data.visits };
    view.graph = view.graph.filter((q) => q.number !== p.number);
    view.graph.push(p);
    view.graph.sort((x, y) => x.number - y.number);
  } else if (kind === "alert") {
    if (data.kind === "fix" || data.kind === "ambiguous") view.alert = data;
    else if (data.kind === "resolved") view.alert = null;
    else if (data.kind === "error") notice(`${data.source}: ${data.message}`);
  } else if (kind === "camera") {
    view.camera = data;
  }
}

let noticeTimer = 0;
function notice(text) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { n.hidden = true; }, 6000);
}

// The connection: EventSource retries by itself on a dropped stream, but not after an
// HTTP error, so every failure closes it and a fresh one is opened with a backoff.
let source = null;
let backoff = 500;
function connect() {
  source = new EventSource("/api/events");
  source.addEventListener("view", (e) => {
    Object.assign(view, JSON.parse(e.data));
    $("offline").hidden = true;
    document.body.dataset.online = "1";
    backoff = 500;
    render();
    loadGames();
  });
  for (const kind of ["state", "analysis", "alert", "move", "camera"]) {
    source.addEventListener(kind, (e) => {
      apply(kind, JSON.parse(e.data));
      render();
      if (kind === "state" && view.state && view.state.moves.length === 0) loadGames();
    });
  }
  source.onerror = () => {
    source.close();
    $("offline").hidden = false;
    document.body.dataset.online = "0";
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 5000);
  };
}

async function loadGames() {
  try {
    const r = await fetch("/api/games");
    if (!r.ok) return;
    const list = $("game-list");
    list.replaceChildren();
    for (const g of await r.json()) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = `/api/games/${encodeURIComponent(g.name)}`;
      a.download = g.name;
      const when = g.archived ? new Date(g.archived * 1000).toLocaleString() : g.name;
      a.textContent = g.moves !== null ? `${when}, ${g.moves} moves` : when;
      li.appendChild(a);
      list.appendChild(li);
    }
  } catch (_) { /* offline: the banner says so */ }
}

async function send(cmd) {
  const token = $("token").value;
  localStorage.setItem("tengen-token", token);
  const r = await fetch("/api/command", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify(cmd),
  }).catch(() => null);
  const msg = $("control-msg");
  if (!r) { msg.textContent = "offline"; return false; }
  const body = await r.json().catch(() => ({}));
  msg.textContent = r.ok ? "done" : `${r.status}: ${body.error || r.statusText}`;
  return r.ok;
}

$("token").value = localStorage.getItem("tengen-token") || "";
for (const b of document.querySelectorAll("button[data-cmd]")) {
  b.addEventListener("click", () => send({ cmd: b.dataset.cmd }));
}
$("analysis-on").addEventListener("click", () => send({ cmd: "analysis", on: true, ownership: true }));
$("analysis-off").addEventListener("click", () => send({ cmd: "analysis", on: false }));
$("new-game").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const ok = await send({
    cmd: "new_game", size: Number(f.get("size")), komi: Number(f.get("komi")), rules: f.get("rules"),
    handicap: Number(f.get("handicap")), engine: f.get("engine"),
  });
  const level = f.get("level");
  // A number is a classical level, anything else a rank ("12k", "max"): the daemon checks it.
  const text = String(level || "").trim();
  if (ok && text) await send({ cmd: "level", level: /^\d+$/.test(text) ? Number(text) : text });
});
$("pair").addEventListener("click", async () => {
  const r = await fetch("/api/pair", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ pin: $("pair-pin").value.trim() }),
  }).catch(() => null);
  const msg = $("control-msg");
  if (!r) { msg.textContent = "offline"; return; }
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { msg.textContent = `${r.status}: ${body.error || r.statusText}`; return; }
  $("token").value = body.token;
  localStorage.setItem("tengen-token", body.token);
  msg.textContent = "paired";
});

/** The kiosk shows the pairing PIN (served to the device's own screen only); it changes
 * once used, so it is read again every few seconds. */
async function showPin() {
  const r = await fetch("/api/pin").catch(() => null);
  const el = $("pin");
  // Pairing off, or not the device's own screen: no PIN to show, now or later.
  if (r && (r.status === 404 || r.status === 403)) { el.hidden = true; return; }
  if (r && r.ok) {
    el.textContent = `Pair with PIN ${(await r.json()).pin}`;
    el.hidden = false;
  }
  setTimeout(showPin, 3000);
}
if (kiosk) showPin();

$("ownership").addEventListener("change", (e) => { ui.ownership = e.target.checked; render(); });

connect();
