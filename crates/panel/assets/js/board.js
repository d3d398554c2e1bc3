// The board as SVG: grid, coordinates, stones, last move, candidates with their
// principal variation, ownership, and the points an alert asks to fix.

const NS = "http://www.w3.org/2000/svg";
const LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

/** The column letters of GTP (no I), past Z as AA, AB, ... */
export function columnName(x) {
  return x < 25 ? LETTERS[x] : LETTERS[Math.floor(x / 25) - 1] + LETTERS[x % 25];
}

/** A GTP vertex ("D4") as {x, y} with y counted from the top row, or null (pass). */
export function parseVertex(v, height) {
  const m = /^([A-Z]+)(\d+)$/i.exec(v || "");
  if (!m) return null;
  const letters = m[1].toUpperCase();
  let x = 0;
  if (letters.length === 1) x = LETTERS.indexOf(letters);
  else x = (LETTERS.indexOf(letters[0]) + 1) * 25 + LETTERS.indexOf(letters[1]);
  const row = Number(m[2]);
  if (x < 0 || row < 1 || row > height) return null;
  return { x, y: height - row };
}

function el(name, attrs, parent, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function starPoints(w, h) {
  if (w !== h || w < 7) return [];
  const e = w >= 13 ? 3 : 2;
  const c = (w - 1) / 2;
  const pts = [[e, e], [w - 1 - e, e], [e, h - 1 - e], [w - 1 - e, h - 1 - e]];
  if (w % 2 === 1) pts.push([c, c]);
  if (w >= 19) pts.push([c, e], [c, h - 1 - e], [e, c], [w - 1 - e, c]);
  return pts;
}

/**
 * Draws `view` ({state, analysis, alert}) into `svg`. `opts.ownership` shows the
 * ownership map; `opts.pv` is the candidate whose variation to show; `opts.onHover`
 * is called with a candidate (or null) when one is hovered or tapped.
 */
export function drawBoard(svg, view, opts) {
  const s = view.state;
  svg.replaceChildren();
  if (!s) return;
  const [w, h] = s.size;
  svg.setAttribute("viewBox", `-1.1 -1.1 ${w + 1.2} ${h + 1.2}`);
  el("rect", { x: -1.1, y: -1.1, width: w + 1.2, height: h + 1.2, fill: "var(--wood)", rx: 0.2 }, svg);
  const grid = el("g", { class: "grid" }, svg);
  for (let x = 0; x < w; x++) el("line", { x1: x, y1: 0, x2: x, y2: h - 1 }, grid);
  for (let y = 0; y < h; y++) el("line", { x1: 0, y1: y, x2: w - 1, y2: y }, grid);
  for (const [x, y] of starPoints(w, h)) el("circle", { cx: x, cy: y, r: 0.1, fill: "var(--line)" }, svg);
  for (let x = 0; x < w; x++) {
    el("text", { class: "coord", x, y: -0.7 }, svg, columnName(x));
    el("text", { class: "coord", x, y: h - 0.3 }, svg, columnName(x));
  }
  for (let y = 0; y < h; y++) {
    el("text", { class: "coord", x: -0.7, y }, svg, String(h - y));
    el("text", { class: "coord", x: w - 0.3, y }, svg, String(h - y));
  }
  const a = view.analysis && view.analysis.number === s.moves.length && !s.result ? view.analysis : null;
  if (opts.ownership && a && a.ownership && a.ownership.length === w * h) {
    // +1 is the player to move's: shown as that colour's shade.
    const mover = a.to_move === "B" ? "#000" : "#fff";
    const other = a.to_move === "B" ? "#fff" : "#000";
    a.ownership.forEach((o, i) => {
      if (Math.abs(o) < 0.1) return;
      el("rect", {
        x: (i % w) - 0.5, y: Math.floor(i / w) - 0.5, width: 1, height: 1,
        fill: o > 0 ? mover : other, opacity: Math.min(Math.abs(o), 1) * 0.45,
        class: "own",
      }, svg);
    });
  }
  const stones = el("g", { id: "stones" }, svg);
  s.rows.forEach((row, y) => {
    [...row].forEach((c, x) => {
      if (c === "X" || c === "O") {
        el("circle", { cx: x, cy: y, r: 0.47, class: c === "X" ? "stone-B" : "stone-W", "data-point": columnName(x) + (h - y) }, stones);
      }
    });
  });
  const last = s.moves.length ? s.moves[s.moves.length - 1].split(" ") : null;
  const lp = last && parseVertex(last[1], h);
  if (lp) el("circle", { cx: lp.x, cy: lp.y, r: 0.25, class: "last", id: "last-move" }, svg);
  if (a && !opts.pv) {
    const best = a.moves.length ? a.moves[0].visits : 1;
    for (const c of a.moves) {
      const p = parseVertex(c.vertex, h);
      if (!p) continue;
      const g = el("g", { class: "candidate", "data-vertex": c.vertex }, svg);
      const hue = Math.round(120 * Math.max(0, Math.min(1, c.visits / best)));
      const circle = el("circle", { cx: p.x, cy: p.y, r: 0.45, class: "cand", fill: `hsl(${hue} 70% 55%)` }, g);
      el("text", { class: "cand-text", x: p.x, y: p.y - 0.12 }, g, (100 * c.winrate).toFixed(0));
      el("text", { class: "cand-text", x: p.x, y: p.y + 0.17 }, g, fmtLead(c.scoreLead));
      circle.addEventListener("mouseenter", () => opts.onHover(c));
      circle.addEventListener("click", () => opts.onHover(c));
    }
  }
  if (a && opts.pv) {
    const colors = a.to_move === "B" ? ["B", "W"] : ["W", "B"];
    const g = el("g", { id: "pv" }, svg);
    g.addEventListener("mouseleave", () => opts.onHover(null));
    opts.pv.pv.forEach((v, i) => {
      const p = parseVertex(v, h);
      if (!p) return;
      const color = colors[i % 2];
      const c = el("circle", { cx: p.x, cy: p.y, r: 0.47, class: `stone-${color} pv-stone`, opacity: 0.85 }, g);
      c.addEventListener("click", () => opts.onHover(null));
      el("text", { class: "pv-text", x: p.x, y: p.y, fill: color === "B" ? "#fff" : "#000" }, g, String(i + 1));
    });
  }
  if (view.alert && view.alert.kind === "fix") {
    const g = el("g", { id: "fixes" }, svg);
    for (const f of view.alert.fixes) {
      const p = parseVertex(f.point, h);
      if (!p) continue;
      if (f.want === "B" || f.want === "W") {
        el("circle", { cx: p.x, cy: p.y, r: 0.47, class: `fix-want stone-${f.want}` }, g);
      }
      el("rect", { x: p.x - 0.5, y: p.y - 0.5, width: 1, height: 1, class: "fix", "data-point": f.point }, g);
    }
  }
}

/** A lead in points, signed. */
export function fmtLead(v) {
  return (v >= 0 ? "+" : "") + v.toFixed(1);
}
