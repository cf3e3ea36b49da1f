// charts.js: the cost chart with its Pareto frontier, and one small bar chart per axis.

// -- cost against resolved -----------------------------------------------------------------------
function costChart(suite) {
  const W = 560, H = 360, L = 130, R = 20, T = 16, B = 44, STRIP = 60;
  const known = suite.models.filter((r) => isNum(r.cost_per_attempt) && isNum(r.resolved_rate.mean));
  const unknown = suite.models.filter((r) => !isNum(r.cost_per_attempt) && isNum(r.resolved_rate.mean));
  const maxCost = Math.max(0, ...known.map((r) => r.cost_per_attempt));
  const step = maxCost > 0 ? niceStep(maxCost, 5) : 0.01;
  const top = maxCost > 0 ? Math.ceil((maxCost * 1.05) / step) * step : 0.05;
  const x = (c) => L + (c / top) * (W - L - R);
  const y = (v) => T + (1 - v) * (H - T - B);
  const svg = s("svg", { class: "cost-chart", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
    "aria-label": "cost per attempt against resolved rate, Pareto frontier marked" });
  for (let v = 0; v <= 1.0001; v += 0.25) {
    put(svg, s("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    put(svg, s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", text: Math.round(v * 100) + " %" }));
  }
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  for (let i = 0; i * step <= top + step / 2; i += 1) {
    const c = i * step;
    put(svg, s("line", { class: "grid", x1: x(c), x2: x(c), y1: T, y2: H - B }));
    put(svg, s("text", { x: x(c), y: H - B + 14, "text-anchor": "middle", text: "$" + c.toFixed(digits) }));
  }
  put(svg, s("g", { class: "axis" },
    s("line", { x1: L, x2: W - R, y1: H - B, y2: H - B }), s("line", { x1: L, x2: L, y1: T, y2: H - B })));
  put(svg, s("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", text: "mean cost per attempt (USD)" }));
  put(svg, s("text", { x: 12, y: (T + H - B) / 2, "text-anchor": "middle",
    transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", text: "resolved" }));
  // cost unknown: its own strip left of the axis, at the model's resolved rate
  if (unknown.length) {
    const x0 = L - STRIP - 40;
    put(svg, s("rect", { class: "unknown-band", x: x0, y: T, width: STRIP, height: H - T - B }));
    put(svg, s("text", { x: x0 + STRIP / 2, y: H - B + 14, "text-anchor": "middle", text: "cost unknown" }));
    unknown.forEach((r, i) => {
      const cx = x0 + 12 + (i % 4) * 12;
      put(svg, s("circle", { class: "point unknown", cx, cy: y(r.resolved_rate.mean), r: 5 },
        s("title", { text: r.label + ": " + pct(r.resolved_rate.mean) + ", cost unknown" })));
    });
  }
  const frontier = suite.frontier.map((label) => known.find((r) => r.label === label)).filter(Boolean);
  if (frontier.length) {
    put(svg, s("polyline", { class: "frontier",
      points: frontier.map((r) => x(r.cost_per_attempt) + "," + y(r.resolved_rate.mean)).join(" ") }));
  }
  known.forEach((r) => {
    const cx = x(r.cost_per_attempt), cy = y(r.resolved_rate.mean);
    put(svg, s("circle", { class: "point" + (r.pareto ? " on" : ""), cx, cy, r: 5 },
      s("title", { text: r.label + ": " + pct(r.resolved_rate.mean) + " resolved, " + usd(r.cost_per_attempt) +
        " per attempt" + (r.pareto ? " (Pareto frontier)" : "") })));
    const right = cx > (L + W) / 2;  // labels of points on the right side grow leftwards, inside the chart
    put(svg, s("text", { class: "label", x: right ? cx - 7 : cx + 7, y: cy - 6, "text-anchor": right ? "end" : "start",
      text: short(r.label, 28) }, s("title", { text: r.label })));
  });
  const caption = [
    "Each model at its resolved rate and mean cost per attempt. The line joins the Pareto frontier: models no other " +
      "model beats on both (at most the cost and at least the resolved rate). ",
  ];
  if (unknown.length) caption.push("Cost unknown (no price): " + unknown.map((r) => r.label).join(", ") + ".");
  return h("figure", { class: "chart" }, svg, h("figcaption", { class: "note", text: caption.join("") }));
}

// -- one small chart per axis --------------------------------------------------------------------
function axisMultiples(suite) {
  const axes = [["resolved", (r) => r.resolved_rate]];
  for (const name of ["quality", "efficiency", "interaction", "composite", "judge"]) {
    if (suite.models.some((r) => r.axes[name] && isNum(r.axes[name].mean))) axes.push([name, (r) => r.axes[name]]);
  }
  const rowH = 18, L = 110, W = 250;
  const box = h("div", { class: "multiples", "aria-label": "each axis per model" });
  for (const [name, get] of axes) {
    const H = 22 + suite.models.length * rowH;
    const x = (v) => L + v * (W - L - 10);
    const svg = s("svg", { class: "axis-chart", width: W, height: H, viewBox: "0 0 " + W + " " + H });
    put(svg, s("text", { x: 0, y: 13, "font-weight": "600", text: AXIS_LABELS[name] || name }));
    suite.models.forEach((r, i) => {
      const cy = 22 + i * rowH;
      const value = get(r);
      put(svg, s("text", { x: L - 6, y: cy + 12, "text-anchor": "end", text: short(r.label, 16) }, s("title", { text: r.label })));
      put(svg, s("rect", { class: "grid-bar", x: L, y: cy + 3, width: W - L - 10, height: rowH - 6, fill: "#f1f3f5" }));
      if (value && isNum(value.mean)) {
        put(svg, s("rect", { class: "bar", x: L, y: cy + 3, width: Math.max(0, x(value.mean) - L), height: rowH - 6 },
          s("title", { text: r.label + " " + name + ": " + dec(value.mean) + ci(value, false) })));
        if (Array.isArray(value.ci95)) {
          put(svg, s("line", { class: "whisker", x1: x(value.ci95[0]), x2: x(value.ci95[1]), y1: cy + rowH / 2, y2: cy + rowH / 2 }));
        }
      }
    });
    put(box, svg);
  }
  return h("figure", { class: "chart" }, box,
    h("figcaption", { class: "note", text: "Mean per model on a 0–1 scale (resolved as a rate); the line is the 95 % interval." }));
}
