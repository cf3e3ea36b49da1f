// charts.js: the trade-off chart (resolved rate against cost, or against completion tokens when no
// model costs anything) with its Pareto frontier, and one small bar chart per axis.

const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
// a chart as wide as the page allows, up to `most` (drawn once, at the width the page opened with)
const chartWidth = (most) => Math.max(280, Math.min(most, document.getElementById("app").clientWidth - 40));

function tradeoffChart(suite) {
  const byTokens = suite.chart_x === "tokens";
  const xOf = (r) => (allErrors(r) ? null : byTokens ? r.median_completion_tokens : r.cost_per_attempt);
  const rated = suite.models.filter((r) => isNum(r.resolved_rate.mean) && !allErrors(r));
  const known = rated.filter((r) => isNum(xOf(r)));
  const unknown = rated.filter((r) => !isNum(xOf(r)));
  const errored = suite.models.filter(allErrors);
  const STRIP = 56, W = chartWidth(560), H = 360, R = 26, T = 16, B = 44;
  const L = 20 + (unknown.length ? STRIP + 8 : 0) + 44;
  const maxX = Math.max(0, ...known.map(xOf));
  const step = maxX > 0 ? niceStep(maxX, W < 420 ? 3 : 5) : byTokens ? 100 : 0.01;
  const top = maxX > 0 ? Math.ceil((maxX * 1.05) / step) * step : 5 * step;
  const x = (c) => L + (c / top) * (W - L - R);
  const y = (v) => T + (1 - v) * (H - T - B);
  const xName = byTokens ? "median completion tokens per attempt" : "mean cost per attempt (USD)";
  const svg = s("svg", { class: "cost-chart" + (byTokens ? " by-tokens" : ""), width: W, height: H,
    viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "resolved rate against " + xName + ", Pareto frontier marked" });
  for (let v = 0; v <= 1.0001; v += 0.25) {
    put(svg, s("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    put(svg, s("text", { class: "tick", x: L - 6, y: y(v) + 4, "text-anchor": "end", text: Math.round(v * 100) + " %" }));
  }
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  for (let i = 0; i * step <= top + step / 2; i += 1) {
    const c = i * step;
    put(svg, s("line", { class: "grid", x1: x(c), x2: x(c), y1: T, y2: H - B }));
    put(svg, s("text", { class: "tick", x: x(c), y: H - B + 14, "text-anchor": "middle",
      text: byTokens ? compact.format(c) : "$" + c.toFixed(digits) }));
  }
  put(svg, s("g", { class: "axis" },
    s("line", { x1: L, x2: W - R, y1: H - B, y2: H - B }), s("line", { x1: L, x2: L, y1: T, y2: H - B })));
  put(svg, s("text", { class: "axis-title", x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", text: xName }));
  put(svg, s("text", { class: "axis-title", x: 12, y: (T + H - B) / 2, "text-anchor": "middle",
    transform: "rotate(-90 12 " + (T + H - B) / 2 + ")", text: "resolved" }));
  if (unknown.length) {  // x unknown: its own strip left of the axis, at the model's resolved rate
    const x0 = 20;
    put(svg, s("rect", { class: "unknown-band", x: x0, y: T, width: STRIP, height: H - T - B }));
    put(svg, s("text", { class: "tick", x: x0 + STRIP / 2, y: H - B + 14, "text-anchor": "middle",
      text: byTokens ? "tokens unknown" : "cost unknown" }));
    unknown.forEach((r, i) => {
      put(svg, s("circle", { class: "point unknown", cx: x0 + 10 + (i % 4) * 12, cy: y(r.resolved_rate.mean), r: 5 },
        s("title", { text: r.label + ": " + pct(r.resolved_rate.mean) + ", " + (byTokens ? "tokens" : "cost") + " unknown" })));
    });
  }
  const frontier = suite.frontier.map((label) => known.find((r) => r.label === label)).filter(Boolean)
    .map((r) => [x(xOf(r)), y(r.resolved_rate.mean)]);
  if (frontier.length) put(svg, s("polyline", { class: "frontier", points: frontier.map((p) => p.join(",")).join(" ") }));
  const leaders = s("g", { class: "leaders" });
  put(svg, leaders);
  const items = known.map((r) => {
    const cx = x(xOf(r)), cy = y(r.resolved_rate.mean);
    const where = byTokens ? int(xOf(r)) + " completion tokens (median)" : usd(xOf(r)) + " per attempt";
    put(svg, s("circle", { class: "point" + (r.pareto ? " on" : ""), cx, cy, r: 5 },
      s("title", { text: r.label + ": " + pct(r.resolved_rate.mean) + " resolved, " + where + (r.pareto ? " (Pareto frontier)" : "") })));
    return { row: r, x: cx, y: cy, r: 5, node: s("text", { class: "label", text: short(r.label, W < 420 ? 20 : 30) }, s("title", { text: r.label })) };
  });
  items.sort((a, b) => b.row.pareto - a.row.pareto);  // the frontier's labels first; otherwise in rank order
  items.forEach((item) => put(svg, item.node));
  const caption = h("figcaption", { class: "note" },
    "Each model at its resolved rate and " + (byTokens
      ? "median completion tokens per attempt (no model has a cost: local or built-in models; attempts that ended in an error left out). "
      : "mean cost per attempt. ") +
    "The line joins the Pareto frontier: models no other model beats on both (at most the " + (byTokens ? "tokens" : "cost") +
    " and at least the resolved rate). ");
  if (unknown.length) put(caption, (byTokens ? "Tokens" : "Cost") + " unknown: " + unknown.map((r) => r.label).join(", ") + ". ");
  if (errored.length) put(caption, "Left out, every attempt ended in an endpoint or harness error: " + errored.map((r) => r.label).join(", ") + ". ");
  afterLayout.push(() => {
    const dropped = placeLabels(items, { x: L + 1, y: 0, w: W - L - 1, h: H - B - 1 }, leaders, [frontier]);
    if (dropped.length) put(caption, "Not labelled for lack of room (hover the points): " + dropped.map((d) => d.row.label).join(", ") + ".");
  });
  return h("figure", { class: "chart" }, svg, caption);
}

// -- one small chart per axis: a bar per model with its value, on a 0–1 scale ----------------------
function axisMultiples(suite) {
  const axes = [["resolved", (r) => r.resolved_rate]];
  for (const name of [...DATA.axes, "reviewer"]) {
    if (suite.models.some((r) => r.axes[name] && isNum(r.axes[name].mean))) axes.push([name, (r) => r.axes[name]]);
  }
  const rowH = 18, L = 124, V = 40, W = 290, T = 22;
  const box = h("div", { class: "multiples", "aria-label": "each axis per model" });
  for (const [name, get] of axes) {
    const asPct = name === "resolved";
    const bottom = T + suite.models.length * rowH;
    const H = bottom + 18;
    const x = (v) => L + v * (W - L - V);
    const svg = s("svg", { class: "axis-chart", width: W, height: H, viewBox: "0 0 " + W + " " + H });
    put(svg, s("text", { x: 0, y: 13, "font-weight": "600", text: AXIS_LABELS[name] || name }));
    for (const v of [0, 0.5, 1]) {  // the scale: grid lines through the rows, ticks under them
      put(svg, s("line", { class: "grid", x1: x(v), x2: x(v), y1: T, y2: bottom }));
      put(svg, s("text", { class: "tick", x: x(v), y: bottom + 13, "text-anchor": v === 0 ? "start" : v === 1 ? "end" : "middle",
        text: asPct ? v * 100 + " %" : String(v) }));
    }
    suite.models.forEach((r, i) => {
      const cy = T + i * rowH;
      const value = get(r);
      put(svg, s("text", { x: L - 6, y: cy + 12, "text-anchor": "end", text: short(r.label, 17) }, s("title", { text: r.label })));
      if (allErrors(r)) {
        put(svg, s("text", { class: "value error", x: L + 4, y: cy + 12, text: "all attempts errors" }));
        return;
      }
      if (!value || !isNum(value.mean)) {
        put(svg, s("text", { class: "value", x: W - 2, y: cy + 12, "text-anchor": "end", text: value && value.not_applicable ? "n/a" : "—" }));
        return;
      }
      const title = r.label + " " + name + ": " + (asPct ? pct(value.mean) : dec(value.mean)) + ci(value, asPct);
      put(svg, s("rect", { class: "bar", x: L, y: cy + 3, width: Math.max(0, x(value.mean) - L), height: rowH - 6 }, s("title", { text: title })));
      if (Array.isArray(value.ci95)) {
        put(svg, s("line", { class: "whisker", x1: x(value.ci95[0]), x2: x(value.ci95[1]), y1: cy + rowH / 2, y2: cy + rowH / 2 }));
      }
      put(svg, s("text", { class: "value", x: W - 2, y: cy + 12, "text-anchor": "end",
        text: asPct ? Math.round(value.mean * 100) + " %" : value.mean.toFixed(2) }, s("title", { text: title })));
    });
    put(box, svg);
  }
  return h("figure", { class: "chart" }, box,
    h("figcaption", { class: "note", text: "Mean per model, the figure at the right of each bar; resolved in %, the other axes " +
      "on a 0–1 scale. The thin line is the 95 % interval." }));
}
