// Black's win rate (0..1) and lead (scaled to the largest seen) over the game.

const NS = "http://www.w3.org/2000/svg";

/** Draws `points` ([{number, winrate, lead}]) into `svg` (viewBox 0 0 300 120). */
export function drawGraph(svg, points, moves) {
  svg.replaceChildren();
  const W = 300, H = 120;
  const mid = document.createElementNS(NS, "line");
  Object.entries({ x1: 0, y1: H / 2, x2: W, y2: H / 2, stroke: "#555", "stroke-width": 1 }).forEach(([k, v]) => mid.setAttribute(k, v));
  svg.appendChild(mid);
  if (!points.length) return;
  const last = Math.max(moves, points[points.length - 1].number, 1);
  const x = (n) => (n / last) * W;
  const maxLead = Math.max(5, ...points.map((p) => Math.abs(p.lead)));
  const line = (f, color, cls) => {
    const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.number).toFixed(1)},${f(p).toFixed(1)}`).join(" ");
    const path = document.createElementNS(NS, "path");
    Object.entries({ d, fill: "none", stroke: color, "stroke-width": 2, class: cls, "vector-effect": "non-scaling-stroke" }).forEach(([k, v]) => path.setAttribute(k, v));
    svg.appendChild(path);
  };
  line((p) => H - p.winrate * H, "#4fa3ff", "winrate-line");
  // A dot per point, so a game's first point shows before there is a line.
  for (const p of points) {
    const dot = document.createElementNS(NS, "circle");
    Object.entries({ cx: x(p.number).toFixed(1), cy: (H - p.winrate * H).toFixed(1), r: 2, fill: "#4fa3ff" }).forEach(([k, v]) => dot.setAttribute(k, v));
    svg.appendChild(dot);
  }
  line((p) => H / 2 - (p.lead / maxLead) * (H / 2), "#e8b04a", "lead-line");
  svg.setAttribute("data-points", String(points.length));
}
