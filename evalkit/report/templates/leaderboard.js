// The leaderboard page: reads the JSON in #leaderboard-data and builds the page with DOM calls.
// Every string that came from a run (model names, task ids, prompts, diffs, tool output) goes in
// through textContent / createTextNode only, never as markup; attribute values are set one by
// one and never include a URL built from data.
(() => {
  "use strict";
  const DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const STATUS = { r: "resolved", x: "tests passed, integrity failed", f: "failed", e: "error" };
  const CELL_KIND = { r: "all", x: "voided", f: "none", e: "error" };  // a sample's cell colour
  const CELL_LABEL = { r: "resolved", x: "voided", f: "failed", e: "error" };
  const FLAG_MARK = "\u2691";  // an integrity flag on an attempt (class "flag fail" or "flag warn")
  const AXIS_LABELS = {
    quality: "quality", efficiency: "efficiency", interaction: "interaction", composite: "composite", judge: "judge",
  };

  // -- DOM helpers ---------------------------------------------------------------------------------
  function put(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach((c) => put(node, c));
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
  }
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    put(node, children);
    return node;
  }
  function s(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    put(node, children);
    return node;
  }

  // -- numbers -------------------------------------------------------------------------------------
  const isNum = (x) => typeof x === "number" && Number.isFinite(x);
  const pct = (x) => (isNum(x) ? (x * 100).toFixed(1) + " %" : "—");
  const dec = (x, d = 3) => (isNum(x) ? x.toFixed(d) : "—");
  const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const int = (x) => (isNum(x) ? grouped.format(x) : "—");
  function usd(x) {
    if (!isNum(x)) return "unknown";
    if (x === 0) return "$0";
    return "$" + (x < 0.01 ? x.toPrecision(2) : x < 100 ? x.toFixed(2) : grouped.format(x));
  }
  function ci(interval, asPct) {
    if (!interval || !Array.isArray(interval.ci95)) return "";
    const f = asPct ? (v) => (v * 100).toFixed(1) : (v) => v.toFixed(3);
    return " [" + f(interval.ci95[0]) + "–" + f(interval.ci95[1]) + "]";
  }
  // a long name shortened for a label; the whole name stays in the element's tooltip
  const short = (text, max) => (text.length > max ? text.slice(0, max - 1) + "…" : text);
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  }

  // -- page ----------------------------------------------------------------------------------------
  const app = document.getElementById("app");
  const nav = document.getElementById("nav");
  DATA.suites.forEach((suite, i) => put(nav, h("a", { href: "#suite-" + i, text: suite.name })));
  put(nav, h("a", { href: "#runs", text: "runs" }));
  DATA.suites.forEach((suite, i) => put(app, renderSuite(suite, i)));
  put(app, renderRuns());

  function renderSuite(suite, index) {
    const section = h("section", { id: "suite-" + index, class: "suite" });
    put(section, h("h2", null, "Suite ", h("span", { class: "mono", text: suite.name })));
    put(section, h("p", { class: "meta" },
      suite.tasks.length + " tasks · " + suite.models.length + " models · " + suite.attempts.length + " attempts · runs: ",
      suite.runs.join(", "), " · suite path: ", suite.path));
    put(section, h("h3", { text: "Leaderboard" }));
    put(section, leaderboardTable(suite));
    put(section, tableNotes(suite));
    put(section, h("h3", { text: "Cost against resolved rate, and each axis" }));
    put(section, h("div", { class: "charts" }, costChart(suite), axisMultiples(suite)));
    put(section, h("h3", { text: "Tasks × models" }));
    put(section, matrix(suite));
    put(section, h("h3", { text: "The suite beside SWE-bench" }));
    put(section, statsView(suite));
    return section;
  }

  // -- leaderboard table ---------------------------------------------------------------------------
  function leaderboardTable(suite) {
    const rows = suite.models;
    const maxSamples = Math.max(1, ...rows.map((r) => r.samples));
    const ks = new Set(rows.map((r) => r.samples));
    const kLabel = ks.size === 1 ? String(maxSamples) : "k";
    const axis = (name) => (r) => (r.axes[name] ? r.axes[name].mean : null);
    const columns = [
      { label: "model", text: true, value: (r) => r.label, cell: (r) => modelCell(r) },
      { label: "resolved % [95% CI]", value: (r) => r.resolved_rate.mean,
        cell: (r) => [pct(r.resolved_rate.mean), h("span", { class: "ci", text: ci(r.resolved_rate, true) })] },
    ];
    if (maxSamples > 1) {
      const at = (r, table) => table[String(r.samples)];
      columns.push(
        { label: "pass@" + kLabel, value: (r) => (r.samples > 1 ? at(r, r.pass_at_k) : null),
          cell: (r) => (r.samples > 1 ? dec(at(r, r.pass_at_k)) + (ks.size > 1 ? " (k=" + r.samples + ")" : "") : "—") },
        { label: "best-of-" + kLabel, value: (r) => (r.samples > 1 ? at(r, r.best_of_k) : null),
          cell: (r) => (r.samples > 1 ? dec(at(r, r.best_of_k)) : "—") },
      );
    }
    for (const name of ["quality", "efficiency", "interaction", "composite"]) {
      columns.push({ label: name, value: axis(name), cell: (r) => dec(axis(name)(r)) });
    }
    if (rows.some((r) => r.axes.judge && isNum(r.axes.judge.mean))) {
      columns.push({ label: "judge", value: axis("judge"), cell: (r) => dec(axis("judge")(r)) });
    }
    columns.push(
      { label: "median tokens", value: (r) => r.median_tokens, cell: (r) => int(r.median_tokens) },
      { label: "cost / task", value: (r) => r.cost_per_task, cell: (r) => usd(r.cost_per_task) },
      { label: "cost / resolved", value: (r) => r.cost_per_resolved, cell: (r) => usd(r.cost_per_resolved) },
      { label: "attempts", value: (r) => r.attempts, cell: (r) => int(r.attempts) },
      { label: "integrity", value: (r) => r.integrity.fail * 1e6 + r.integrity.warn, cell: (r) => integrityCell(r.integrity) },
    );
    for (const [key, label] of Object.entries(DATA.benchmarks)) {
      columns.push({ label: label + " (published)", value: (r) => r.published[key] ?? null,
        cell: (r) => pct(r.published[key] ?? null) });
    }

    const tbody = h("tbody");
    const trs = rows.map((r) => {
      const tr = h("tr", { class: r.pareto ? "frontier" : null });
      columns.forEach((c) => put(tr, h("td", { class: c.text ? "text" : null }, c.cell(r))));
      return { row: r, tr };
    });
    trs.forEach((t) => put(tbody, t.tr));
    const headRow = h("tr");
    const ths = columns.map((column, i) => {
      const th = h("th", { scope: "col", "aria-sort": i === 1 ? "descending" : null },
        h("button", { type: "button", text: column.label, title: "sort by " + column.label, onclick: () => sortBy(i) }));
      put(headRow, th);
      return th;
    });
    function sortBy(i) {
      const column = columns[i];
      const dir = ths[i].getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      const sign = dir === "ascending" ? 1 : -1;
      trs.sort((a, b) => {
        const x = column.value(a.row), y = column.value(b.row);
        const xMissing = x === null || x === undefined, yMissing = y === null || y === undefined;
        if (xMissing || yMissing) return xMissing === yMissing ? 0 : xMissing ? 1 : -1; // unknown last
        if (column.text) return sign * String(x).localeCompare(String(y));
        return sign * (x - y);
      });
      ths.forEach((th, j) => (j === i ? th.setAttribute("aria-sort", dir) : th.removeAttribute("aria-sort")));
      trs.forEach((t) => tbody.appendChild(t.tr));
    }
    return h("div", { class: "scroll" }, h("table", { class: "board" }, h("thead", null, headRow), tbody));
  }

  function modelCell(row) {
    const parts = [h("span", { class: "mono", text: row.label })];
    if (row.api_model) parts.push(h("span", { class: "ci", text: " " + row.api_model }));
    return parts;
  }

  // "3 fail · 1 warn" or "clean"; the kinds and their counts in the tooltip
  function integrityCell(counts) {
    const parts = [];
    if (counts.fail) parts.push(h("span", { class: "flag fail", text: counts.fail + " fail" }));
    if (counts.fail && counts.warn) parts.push(" · ");
    if (counts.warn) parts.push(h("span", { class: "flag warn", text: counts.warn + " warn" }));
    const kinds = Object.entries(counts.kinds || {}).map(([k, n]) => k + " × " + n).join(", ");
    const title = parts.length
      ? "attempts flagged: " + kinds + (counts.unresolved_by_integrity
        ? "; " + counts.unresolved_by_integrity + " passed the hidden tests and were failed by integrity" : "")
      : "no attempt flagged";
    return h("span", { title }, parts.length ? parts : "clean");
  }

  function tableNotes(suite) {
    const weights = suite.weights.map((w) => Object.entries(w).map(([k, v]) => k + " " + v.toFixed(2)).join(", "));
    const notes = [
      "resolved: share of attempts whose change passes every hidden FAIL_TO_PASS and PASS_TO_PASS test and whose " +
        "integrity verdict is not fail; " +
        "samples are averaged per task first, and the 95 % interval is a percentile bootstrap over tasks.",
      "pass@k: chance that at least one of k samples resolves the task (unbiased estimator, Chen et al. 2021); " +
        "best-of-k: expected best composite among k samples; both with k = the samples per task, shown when it is above 1.",
      "quality, efficiency, interaction: mean 0–1 axis scores (per task first): quality of the diff (lint, syntax, " +
        "hygiene, scope, size), 1 − the share of the token, turn and time budgets used, 1 − penalties for tool misuse.",
      "composite: weighted mean of correctness and the three axes, with weights " +
        (weights.length ? weights.join(" | ") : "as recorded") +
        (weights.length > 1 ? " (the runs disagree: composites are not comparable across them)" : "") +
        "; a judge model's score, when there is one, is kept apart.",
      "median tokens: median total tokens per attempt. cost / task: total cost over the number of tasks (all samples of " +
        "a task together); cost / resolved: total cost over resolved attempts; unknown when a model has no price.",
      "integrity: attempts whose integrity scan failed them (test or harness tampering: unresolved, composite 0) " +
        "and those only flagged as a warning (git history, network, hidden-test probes, writes outside the " +
        "workspace); hover for the kinds. An attempt that changed nothing scores 0 on every axis.",
      "◆ marks the Pareto frontier of the chart below. A model tried in several runs of this suite (a baseline " +
        "and a new run) has a row per run, labelled with the run id.",
    ];
    if (Object.keys(DATA.benchmarks).length) {
      notes.push("published: scores the model's makers or leaderboards published, as given to `evalkit report " +
        "--published` or [published] in evalkit.toml, matched by model name or API model id; not computed by " +
        "evalkit and on another task set.");
    }
    return h("div", { class: "note" }, notes.map((n) => h("p", { text: n })));
  }

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

  // -- tasks × models --------------------------------------------------------------------------
  // the worst integrity verdict among a cell's attempts (columns 6 and 7: verdict, kinds) as a marker,
  // titled with each verdict's attempts and kinds
  function integrityFlag(list) {
    const parts = ["fail", "warn"].map((verdict) => {
      const flagged = list.filter((a) => a[6] === verdict);
      const kinds = [...new Set(flagged.flatMap((a) => a[7] || []))].sort();
      return flagged.length ? flagged.length + " integrity " + verdict + " (" + kinds.join(", ") + ")" : null;
    }).filter(Boolean);
    if (!parts.length) return null;
    const verdict = list.some((a) => a[6] === "fail") ? "fail" : "warn";
    const title = parts.join(", ");
    return { title, node: h("span", { class: "flag " + verdict, title, text: " " + FLAG_MARK }) };
  }

  function matrix(suite) {
    const M = suite.models.length;
    const cells = new Map();
    for (const a of suite.attempts) {
      const key = a[1] * M + a[2];
      if (!cells.has(key)) cells.set(key, []);
      cells.get(key).push(a);
    }
    cells.forEach((list) => list.sort((p, q) => p[5] - q[5] || p[3] - q[3]));
    const head = h("tr", null, h("th", { class: "task", scope: "col", text: "task" }));
    suite.models.forEach((r) => put(head, h("th", { scope: "col", class: "mono", title: r.label, text: short(r.label, 24) })));
    put(head, h("th", { scope: "col", text: "resolved by" }));
    const tbody = h("tbody");
    const rows = suite.tasks.map((task, t) => {
      const tr = h("tr");
      put(tr, h("td", { class: "task mono", title: task, text: task }));
      let solvedBy = 0, tried = 0;
      suite.models.forEach((r, m) => {
        const list = cells.get(t * M + m);
        if (!list) { put(tr, h("td", { class: "empty", text: "·", title: "not tried" })); return; }
        tried += 1;
        const n = list.length;
        const k = list.filter((a) => a[4] === "r").length;
        const errors = list.filter((a) => a[4] === "e").length;
        const voided = list.filter((a) => a[4] === "x").length;
        if (k) solvedBy += 1;
        const kind = k === n ? "all" : k > 0 ? "some" : voided ? "voided" : errors ? "error" : "none";
        const label = n > 1 ? k + "/" + n : CELL_LABEL[list[0][4]];
        const flag = integrityFlag(list);
        const title = r.label + " on " + task + ": " + k + " of " + n + " resolved" + (errors ? ", " + errors + " error(s)" : "") +
          (voided ? ", " + voided + " passed the hidden tests but failed integrity" : "") + (flag ? "; " + flag.title : "");
        put(tr, h("td", null, h("button", { type: "button", class: "cell " + kind, title, "data-attempt": list[0][0] },
          label, flag ? flag.node : null)));
      });
      put(tr, h("td", { text: solvedBy + "/" + tried }));
      tbody.appendChild(tr);
      return { task, tr };
    });
    tbody.addEventListener("click", (event) => {  // one listener for every cell
      const cell = event.target.closest("button[data-attempt]");
      if (cell) openAttempt(cell.dataset.attempt);
    });
    const filter = h("input", { type: "search", placeholder: "filter tasks", "aria-label": "filter tasks" });
    filter.addEventListener("input", () => {
      const q = filter.value.toLowerCase();
      rows.forEach((r) => { r.tr.hidden = q !== "" && !r.task.toLowerCase().includes(q); });
    });
    const legend = h("p", { class: "legend note" },
      h("span", null, h("span", { class: "cell all", text: "resolved" })), h("span", null, h("span", { class: "cell some", text: "k/n" }),
        " some samples resolved"), h("span", null, h("span", { class: "cell none", text: "failed" })),
      h("span", null, h("span", { class: "cell error", text: "error" }), " endpoint or harness error, nothing resolved"),
      h("span", null, h("span", { class: "cell voided", text: CELL_LABEL.x }), " the hidden tests passed, the integrity scan failed it"),
      h("span", null, h("span", { class: "flag fail", text: FLAG_MARK }), " / ", h("span", { class: "flag warn", text: FLAG_MARK }),
        " an integrity flag that fails / only warns (hover for the kinds)"),
      h("span", { text: "Click a cell for the attempt: prompt, diff, scores, hidden tests, trajectory." }));
    return h("div", null, h("div", { class: "filter" }, filter), legend,
      h("div", { class: "matrix-wrap" }, h("table", { class: "matrix" }, h("thead", null, head), tbody)));
  }

  // -- suite statistics ----------------------------------------------------------------------------
  function describe(d) {
    if (!d || !d.n) return "—";
    const f = (v) => (isNum(v) ? (Number.isInteger(v) ? grouped.format(v) : v.toFixed(1)) : "—");
    return f(d.median) + " [" + f(d.q1) + "–" + f(d.q3) + "]";
  }
  function statsView(suite) {
    const ref = DATA.reference;
    const computed = Object.values(ref.computed || {});
    const published = ref.published || { figures: {} };
    const box = h("div", { class: "stats" });
    if (!suite.stats) {
      put(box, h("p", { class: "note", text: suite.stats_note || "no statistics" }));
    }
    const head = h("tr", null, h("th", { text: "median [q1–q3]" }));
    if (suite.stats) put(head, h("th", { text: suite.stats.name + " (" + suite.stats.tasks + " tasks)" }));
    computed.forEach((c) => put(head, h("th", { text: c.label + " (" + c.rows + " rows)" })));
    put(head, h("th", { class: "text", text: published.label || "published" }));
    const tbody = h("tbody");
    for (const [measure, title] of Object.entries(DATA.measures)) {
      const tr = h("tr", null, h("td", { text: title }));
      if (suite.stats) put(tr, h("td", { text: describe(suite.stats.figures[measure]) }));
      computed.forEach((c) => put(tr, h("td", { text: describe(c.figures[measure]) })));
      put(tr, h("td", { class: "text", text: (published.figures[measure] || {}).text || "" }));
      put(tbody, tr);
    }
    put(box, h("div", { class: "scroll" }, h("table", null, h("thead", null, head), tbody)));
    const notes = [
      "Computed by evalkit.stats as `evalkit stats` does; quartiles by linear interpolation.",
      ...computed.map((c) => c.label + ": " + c.file + " from " + c.source + ", " + c.rows + " rows, computed " +
        c.computed_at + "; " + c.caveat),
      (published.label || "published") + ": " + (published.source || "") + "; " + (published.note || ""),
    ];
    if (suite.stats && suite.stats.skipped.length) {
      notes.push(suite.stats.skipped.length + " task(s) not counted; first: " + suite.stats.skipped[0]);
    }
    put(box, h("div", { class: "note" }, notes.map((n) => h("p", { text: n }))));
    return box;
  }

  // -- runs ----------------------------------------------------------------------------------------
  function renderRuns() {
    const head = h("tr", null, ["run", "suite", "models", "samples", "attempts", "created", "scored", "folder"]
      .map((t) => h("th", { text: t })));
    const tbody = h("tbody");
    DATA.runs.forEach((r) => put(tbody, h("tr", null,
      h("td", { class: "mono", text: r.run_id }), h("td", { class: "text", text: r.suite }),
      h("td", { class: "text", text: r.models.join(", ") }), h("td", { text: r.samples }), h("td", { text: int(r.attempts) }),
      h("td", { text: r.created_at }), h("td", { text: r.scored_at || "—" }), h("td", { class: "text mono", text: r.path }))));
    return h("section", { id: "runs" }, h("h2", { text: "Runs" }),
      h("div", { class: "scroll" }, h("table", { class: "plain" }, h("thead", null, head), tbody)));
  }

  // -- one attempt, loaded on demand ---------------------------------------------------------------
  const dialog = document.getElementById("attempt");
  const body = document.getElementById("attempt-body");
  const titleNode = document.getElementById("attempt-title");
  const cache = new Map();
  let wanted = null;

  window.__evalkitAttempt = (n, detail) => {
    cache.set(n, detail);
    if (n === wanted) showAttempt(detail);
  };

  function openAttempt(n) {
    n = Number(n);
    if (!Number.isInteger(n) || n < 0) return;
    wanted = n;
    if (!dialog.open) dialog.showModal();
    if (location.hash !== "#attempt-" + n) history.replaceState(null, "", "#attempt-" + n);
    if (cache.has(n)) { showAttempt(cache.get(n)); return; }
    titleNode.textContent = "Attempt " + n;
    body.replaceChildren(h("p", { class: "note", text: "loading attempts/" + n + ".js …" }));
    const script = document.createElement("script");
    script.src = "attempts/" + n + ".js";
    script.onload = () => script.remove();
    script.onerror = () => {
      script.remove();
      if (wanted === n) body.replaceChildren(h("p", { class: "fault", text: "attempts/" + n + ".js could not be loaded: is the attempts folder beside this page?" }));
    };
    document.head.appendChild(script);
  }

  document.getElementById("attempt-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    wanted = null;
    if (location.hash.startsWith("#attempt-")) history.replaceState(null, "", location.pathname + location.search);
  });
  function fromHash() {
    const match = /^#attempt-(\d+)$/.exec(location.hash);
    if (match) openAttempt(Number(match[1]));
  }
  window.addEventListener("hashchange", fromHash);

  function showAttempt(d) {
    titleNode.textContent = d.task_id + " · " + d.model + " · sample " + d.sample;
    const parts = [];
    parts.push(h("p", null,
      h("span", { class: "badge " + d.status, text: STATUS[d.status] }),
      d.integrity.verdict !== "clean" ? h("span", { class: "badge " + d.integrity.verdict, text: "integrity: " + d.integrity.verdict }) : null,
      h("span", { class: "badge", text: "stop: " + d.stop_reason }),
      d.error ? h("span", { class: "badge e", text: "error: " + d.error }) : null,
      h("span", { class: "meta", text: "run " + d.run_id + " · suite " + d.suite + " · attempt " + d.n })));
    if (d.siblings.length > 1) {
      parts.push(h("p", { class: "samples" }, "Samples: ", d.siblings.map(([n, sample, status, run, verdict]) => {
        const flag = verdict === "fail" || verdict === "warn" ? verdict : null;
        return h("button", { type: "button", class: "cell " + CELL_KIND[status],
          "aria-current": n === d.n ? "true" : "false",
          title: "run " + run + ", sample " + sample + ": " + STATUS[status] + (flag ? ", integrity " + flag : ""),
          onclick: () => openAttempt(n) }, "#" + sample, flag ? h("span", { class: "flag " + flag, text: " " + FLAG_MARK }) : null);
      })));
    }
    parts.push(h("h3", { text: "Prompt" }), h("pre", { class: "prompt", text: d.prompt ?? "(not recorded)" }));
    parts.push(h("h3", { text: "Final message" }), h("pre", { class: "final", text: d.final_message ?? "(none)" }));
    parts.push(h("h3", { text: "Scores" }), scoresView(d));
    parts.push(h("h3", { text: "Integrity" }), integrityView(d.integrity));
    parts.push(h("h3", { text: "Hidden tests" }), testsView(d.tests, d.test_log));
    parts.push(h("h3", { text: "Final diff" + (d.patch_applied ? "" : " (did not apply)") }), diffView(d.patch));
    parts.push(h("h3", { text: "Trajectory" }), trajectoryView(d));
    body.replaceChildren(...parts);
    dialog.scrollTop = 0;
  }

  function keyValues(object) {
    const line = h("span", { class: "parts" });
    for (const [k, v] of Object.entries(object || {})) {
      if (v === null || v === undefined || (typeof v === "object" && !Object.keys(v).length)) continue;
      const text = typeof v === "object" ? JSON.stringify(v) : isNum(v) && !Number.isInteger(v) ? String(Number(v.toFixed(4))) : String(v);
      put(line, h("span", { class: "part" }, h("span", { class: "mono", text: k }), " " + text));
    }
    return line;
  }
  function scoresView(d) {
    if (!d.scores) return h("p", { class: "note", text: "not scored" });
    const sc = d.scores;
    const rows = [
      ["correctness", sc.correctness.score, { tests_resolved: sc.correctness.tests_resolved, f2p_passed: sc.correctness.fail_to_pass,
        p2p_passed: sc.correctness.pass_to_pass, patch_applied: sc.correctness.patch_applied }],
      ["quality", sc.quality.score, { ...sc.quality.parts, note: sc.quality.note, new_lint: sc.quality.new_lint,
        stray_files: sc.quality.stray_files, extra_files: sc.quality.extra_files, missed_files: sc.quality.missed_files,
        changed_lines: sc.quality.changed_lines, reference_lines: sc.quality.reference_lines }],
      ["efficiency", sc.efficiency.score, { ...Object.fromEntries(Object.entries(sc.efficiency.budget_used || {})
        .map(([k, v]) => ["budget_" + k, v])), total_tokens: sc.efficiency.total_tokens,
        cost_usd: sc.efficiency.cost_usd, turns: sc.efficiency.turns, tool_calls: sc.efficiency.tool_calls, wall_s: sc.efficiency.wall_s }],
      ["interaction", sc.interaction.score, Object.fromEntries(Object.entries(sc.interaction.counts).filter(([, v]) => v))],
      ["composite", sc.composite, sc.weights],
    ];
    if (sc.judge) rows.push(["judge", sc.judge.score, { judge: sc.judge.judge, summary: sc.judge.summary, issues: sc.judge.issues, error: sc.judge.error }]);
    const tbody = h("tbody");
    rows.forEach(([name, score, parts]) => put(tbody, h("tr", null, h("td", { text: name }), h("td", { text: dec(score) }),
      h("td", { class: "text" }, keyValues(parts)))));
    const table = h("table", { class: "scores" }, h("thead", null, h("tr", null, h("th", { text: "axis" }), h("th", { text: "score" }),
      h("th", { class: "text", text: "parts" }))), tbody);
    const notes = [];
    if (sc.did_work === false) notes.push("No work: the change was empty, did not apply, or was all put back or whitespace, so quality, efficiency, interaction and the composite are 0.");
    if (d.integrity.verdict === "fail" && sc.correctness.tests_resolved) notes.push("The hidden tests passed, but the integrity verdict is fail: unresolved, correctness and composite 0.");
    return h("div", null, table, notes.map((n) => h("p", { class: "note", text: n })));
  }
  // the verdict, every flag (kind, source, step, evidence as text) and the paths put back before the hidden tests
  function integrityView(report) {
    const box = h("div", { class: "integrity" });
    const flags = report.flags || [];
    put(box, h("p", null, h("span", { class: "badge " + report.verdict, text: report.verdict }),
      h("span", { class: "meta", text: flags.length + " flag(s), from " + report.from }),
      report.verdict === "fail" ? h("span", { class: "meta", text: " · a failing kind: unresolved whatever the tests said" }) : null));
    if (flags.length) {
      const tbody = h("tbody");
      flags.forEach((f) => put(tbody, h("tr", null,
        h("td", { class: "mono", text: f.kind }), h("td", { class: "text", text: f.source }),
        h("td", { text: f.step === null || f.step === undefined ? "—" : String(f.step) }),
        h("td", { class: "text" }, h("pre", { class: "evidence", text: f.evidence })))));
      put(box, h("table", { class: "flags" }, h("thead", null, h("tr", null, ["kind", "source", "step", "evidence"]
        .map((c) => h("th", { class: c === "step" ? null : "text", text: c })))), tbody));
    }
    const restored = report.restored || [];
    put(box, h("p", { class: "note", text: restored.length
      ? "Put back to the base before the hidden tests ran (" + restored.length + "):" : "Nothing put back before the hidden tests." }));
    if (restored.length) put(box, h("ul", { class: "tests mono" }, restored.map((path) => h("li", { text: path }))));
    return box;
  }
  function testsView(tests, log) {
    const box = h("div", { class: "tests" });
    for (const [group, label] of [["fail_to_pass", "FAIL_TO_PASS"], ["pass_to_pass", "PASS_TO_PASS"]]) {
      const result = tests[group] || { passed: [], failed: [] };
      for (const outcome of ["failed", "passed"]) {
        const list = result[outcome] || [];
        const details = h("details", { open: outcome === "failed" && list.length ? "" : null },
          h("summary", { text: label + " " + outcome + ": " + list.length }),
          h("ul", { class: "tests mono" }, list.map((t) => h("li", { text: t }))));
        put(box, details);
      }
    }
    if (log) put(box, h("details", null, h("summary", { text: "test log" }), h("pre", { text: log })));
    return box;
  }
  function diffView(patch) {
    if (!patch) return h("p", { class: "note", text: "empty diff" });
    const pre = h("pre", { class: "diff" });
    for (const line of patch.split("\n")) {
      let kind = "ctx";
      if (line.startsWith("diff --git") || line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("index ")) kind = "file";
      else if (line.startsWith("@@")) kind = "hunk";
      else if (line.startsWith("+")) kind = "add";
      else if (line.startsWith("-")) kind = "del";
      pre.appendChild(h("span", { class: kind, text: line + "\n" }));
    }
    return pre;
  }
  function trajectoryView(d) {
    const box = h("div", { class: "trajectory" });
    if (d.trajectory_note) put(box, h("p", { class: "note", text: d.trajectory_note }));
    for (const e of d.trajectory) {
      if (e.kind === "message") {
        const role = e.role || "?";
        const item = h("div", { class: "event " + role });
        let who = role;
        if (e.tool) {
          who = "tool output: " + (e.tool.name || "?") + (e.tool.exit_code !== null && e.tool.exit_code !== undefined ? " · exit " + e.tool.exit_code : "") +
            (e.tool.truncated ? " · truncated" : "");
        }
        put(item, h("div", { class: "who" }, who, e.tool && e.tool.fault ? h("span", { class: "fault", text: " fault: " + e.tool.fault }) : null));
        if (e.content !== null && e.content !== undefined && e.content !== "") put(item, h("pre", { text: e.content }));
        for (const call of e.tool_calls || []) {
          const args = call.args
            ? call.args.map(([name, value]) => [h("div", { class: "arg mono", text: name }), h("pre", { class: "args", text: value })])
            : [h("div", { class: "arg fault", text: "arguments as sent (not a JSON object)" }), h("pre", { class: "args", text: call.raw ?? "" })];
          put(item, h("div", { class: "call" }, h("div", { class: "who", text: "tool call: " + (call.name || "?") }), args));
        }
        put(box, item);
      } else if (e.kind === "model_call") {
        put(box, h("div", { class: "event meta", text: "model call, turn " + e.turn + ": " + dec(e.latency_s, 2) + " s, " +
          int(e.tokens) + " tokens, finish " + e.finish_reason + (e.retries ? ", " + e.retries + " retries" : "") }));
      } else if (e.kind === "stop") {
        put(box, h("div", { class: "event meta", text: "stop: " + e.stop_reason + (e.error ? " (" + e.error + ")" : "") }));
      } else if (e.kind === "start") {
        put(box, h("div", { class: "event meta", text: "start " + (e.started_at || "") + " · limits " + JSON.stringify(e.limits || {}) }));
      }
    }
    return box;
  }

  fromHash();
  document.body.dataset.ready = "1";
  performance.mark("evalkit-drawn");
})();
