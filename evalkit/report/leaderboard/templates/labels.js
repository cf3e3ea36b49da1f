// labels.js: point labels that never overlap. Each label (most important first) tries spots around
// its point, nearest first: right, left, above, below, then the corners; a label that fits nowhere
// near goes farther out with a leader line back to its point; one that fits nowhere at all is
// removed, and its point keeps the name in its tooltip. A spot fits when it stays inside the plot
// and covers no point and no label already placed; spots that also keep clear of the chart's lines
// are preferred. Needs the chart in the document (getBBox).

const RINGS = [8, 18, 30, 44, 60];  // distances from the point's centre tried, in SVG units
// (dx, dy): where the label's box sits relative to the point, as a share of its width and height
const SPOTS = [[0, -0.5], [-1, -0.5], [-0.5, -1], [-0.5, 0], [0, -1], [-1, -1], [0, 0], [-1, 0]];
const DIRS = [[1, 0], [-1, 0], [0, -1], [0, 1], [0.7, -0.7], [-0.7, -0.7], [0.7, 0.7], [-0.7, 0.7]];

const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const inside = (a, area) => a.x >= area.x && a.y >= area.y && a.x + a.w <= area.x + area.w && a.y + a.h <= area.y + area.h;

// items: [{ x, y, r, node }] with node an SVG <text> already in the document; area: {x, y, w, h} the
// labels must stay in; leader lines go into the group `leaders`; lines: [[x, y], ...] polylines best
// left uncovered. Returns the items left unlabelled.
function placeLabels(items, area, leaders, lines = []) {
  const taken = items.map((p) => ({ x: p.x - p.r - 1, y: p.y - p.r - 1, w: 2 * p.r + 2, h: 2 * p.r + 2 }));
  const strokes = lines.flatMap(sampleLine);
  const dropped = [];
  for (const item of items) {
    item.node.setAttribute("x", 0);
    item.node.setAttribute("y", 0);
    item.node.setAttribute("text-anchor", "start");
    const box = item.node.getBBox();  // at (0, 0): the baseline offset is -box.y
    const w = box.width + 2, hgt = box.height;
    const find = (avoid, rings) => {
      for (const ring of rings) {
        for (let i = 0; i < DIRS.length; i += 1) {
          const [dx, dy] = DIRS[i], [sx, sy] = SPOTS[i];
          const cand = { x: item.x + dx * ring + sx * w, y: item.y + dy * ring + sy * hgt, w, h: hgt };
          if (inside(cand, area) && !avoid.some((t) => overlaps(cand, t))) return { ...cand, ring };
        }
      }
      return null;
    };
    // clear of the lines if that is near enough (no farther than a short leader), else across them
    const spot = find(taken.concat(strokes), RINGS.slice(0, 2)) || find(taken, RINGS);
    if (!spot) {
      item.node.remove();
      dropped.push(item);
      continue;
    }
    taken.push(spot);
    item.node.setAttribute("x", spot.x + 1);
    item.node.setAttribute("y", spot.y - box.y);
    if (spot.ring > RINGS[0]) {  // far from its point: a line from the point's edge to the label's nearest edge
      const tx = Math.min(Math.max(item.x, spot.x), spot.x + spot.w);
      const ty = Math.min(Math.max(item.y, spot.y), spot.y + spot.h);
      const len = Math.hypot(tx - item.x, ty - item.y) || 1;
      put(leaders, s("line", { class: "leader", x1: item.x + ((tx - item.x) / len) * item.r,
        y1: item.y + ((ty - item.y) / len) * item.r, x2: tx, y2: ty }));
    }
  }
  return dropped;
}

// a polyline as small boxes every few units along it, for the overlap test
function sampleLine(points) {
  const out = [];
  for (let i = 1; i < points.length; i += 1) {
    const [x0, y0] = points[i - 1], [x1, y1] = points[i];
    const steps = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 4));
    for (let k = 0; k <= steps; k += 1) {
      out.push({ x: x0 + ((x1 - x0) * k) / steps - 1, y: y0 + ((y1 - y0) * k) / steps - 1, w: 2, h: 2 });
    }
  }
  return out;
}
