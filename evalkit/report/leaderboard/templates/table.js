// table.js: the leaderboard table (sorted best first on a click, reversed on the next), its cells and notes.

// -- leaderboard table ---------------------------------------------------------------------------
// Each column knows which end is better (`best`: "high" or "low"); the first click on a column sorts
// it best first, the next reverses it. Unknown values (and a row whose every attempt ended in an
// error, on resolved) stay last either way.
function leaderboardTable(suite) {
  const rows = suite.models;
  const maxSamples = Math.max(1, ...rows.map((r) => r.samples));
  const ks = new Set(rows.map((r) => r.samples));
  const kLabel = ks.size === 1 ? String(maxSamples) : "k";
  const axis = (name) => (r) => (r.axes[name] ? r.axes[name].mean : null);
  const columns = [
    { label: "model", text: true, best: "low", value: (r) => r.label, cell: (r) => modelCell(r) },
    { label: "agent", text: true, best: "low", value: (r) => r.agent, cell: agentCell },
    { label: "resolved % [95% CI]", best: "high", value: (r) => (allErrors(r) ? null : r.resolved_rate.mean), cell: resolvedCell },
  ];
  // contamination control: resolved on the tasks committed after the model's knowledge cutoff
  if (rows.some((r) => r.after_cutoff)) {
    columns.push({ label: "after cutoff", best: "high", value: (r) => (r.after_cutoff ? r.after_cutoff.after_rate : null), cell: afterCutoffCell });
  }
  // the simulated user (evalkit run --user simulated): both conditions side by side when two runs pair
  if (rows.some((r) => r.user_pair)) {
    columns.push(
      { label: "resolved with user", best: "high", value: (r) => (r.user_pair ? r.user_pair.with_user : null), cell: (r) => userPairCell(r, "with_user") },
      { label: "resolved without user", best: "high", value: (r) => (r.user_pair ? r.user_pair.without_user : null), cell: (r) => userPairCell(r, "without_user") },
    );
  }
  if (rows.some((r) => r.user_figures)) {
    const fig = (name) => (r) => (r.user_figures ? r.user_figures[name] : null);
    columns.push(
      { label: "ask rate", best: "high", value: fig("ask_rate"), cell: askCell },
      { label: "informative share", best: "high", value: fig("informative_share"), cell: (r) => pct(fig("informative_share")(r)) },
    );
  }
  if (maxSamples > 1) {
    const at = (r, table) => table[String(r.samples)];
    columns.push(
      { label: "pass@" + kLabel, best: "high", value: (r) => (r.samples > 1 ? at(r, r.pass_at_k) : null),
        cell: (r) => (r.samples > 1 ? dec(at(r, r.pass_at_k)) + (ks.size > 1 ? " (k=" + r.samples + ")" : "") : "—") },
      { label: "best-of-" + kLabel, best: "high", value: (r) => (r.samples > 1 ? at(r, r.best_of_k) : null),
        cell: (r) => (r.samples > 1 ? dec(at(r, r.best_of_k)) : "—") },
    );
  }
  for (const name of DATA.axes) {
    columns.push({ label: words(AXIS_LABELS, name), best: "high", value: axis(name), cell: (r) => axisCell(r.axes[name]) });
  }
  if (rows.some((r) => r.axes.reviewer && isNum(r.axes.reviewer.mean))) {
    columns.push({ label: "reviewer", best: "high", value: axis("reviewer"), cell: (r) => dec(axis("reviewer")(r)) });
  }
  columns.push(
    { label: "median tokens", best: "low", value: (r) => r.median_tokens, cell: (r) => int(r.median_tokens) },
    { label: "cost / task", best: "low", value: (r) => r.cost_per_task, cell: (r) => usd(r.cost_per_task) },
    { label: "cost / resolved", best: "low", value: (r) => r.cost_per_resolved, cell: (r) => usd(r.cost_per_resolved) },
    { label: "attempts", best: "high", value: (r) => r.attempts, cell: (r) => int(r.attempts) },
    { label: "integrity", best: "low", value: (r) => r.integrity.fail * 1e6 + r.integrity.warn, cell: (r) => integrityCell(r.integrity) },
  );
  for (const [key, label] of Object.entries(DATA.benchmarks)) {
    columns.push({ label: label + " (published)", best: "high", value: (r) => r.published[key] ?? null,
      cell: (r) => pct(r.published[key] ?? null) });
  }

  const tbody = h("tbody");
  let groupBy = DATA.group_by || "none";
  const trs = rows.map((r) => {
    const tr = h("tr", { class: [r.pareto ? "frontier" : "", errorCount(r) ? "has-errors" : "", allErrors(r) ? "all-errors" : ""]
      .filter(Boolean).join(" ") || null });
    columns.forEach((c) => put(tr, h("td", { class: c.text ? "text" : null }, c.cell(r))));
    return { row: r, tr };
  });
  // the rows in their sorted order; grouped, each group (in the order of its best-placed row) under
  // a header row naming its agent or model
  function arrange() {
    tbody.textContent = "";
    if (groupBy === "none") return trs.forEach((t) => tbody.appendChild(t.tr));
    const groups = new Map();
    for (const t of trs) {
      const key = groupBy === "agent" ? t.row.agent : t.row.model;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(t);
    }
    for (const [key, members] of groups) {
      put(tbody, h("tr", { class: "group" }, h("th", { colspan: columns.length, scope: "rowgroup", title: key,
        text: groupBy + ": " + short(key, 80) + " (" + members.length + (members.length === 1 ? " row)" : " rows)") })));
      members.forEach((t) => tbody.appendChild(t.tr));
    }
  }
  const grouping = h("select", { "aria-label": "group the rows", onchange: (e) => { groupBy = e.target.value; arrange(); } },
    ["none", "agent", "model"].map((v) => h("option", { value: v, selected: v === groupBy ? "" : null,
      text: v === "none" ? "one ranking" : "by " + v })));
  const state = h("p", { class: "sort-state note", "aria-live": "polite" });
  const headRow = h("tr");
  const first = (column) => (column.best === "high" ? "descending" : "ascending");
  const ths = columns.map((column, i) => {
    const th = h("th", { scope: "col", class: column.text ? "text" : null },
      h("button", { type: "button", text: column.label, onclick: () => sortBy(i) }));
    put(headRow, th);
    return th;
  });
  function show(i, dir) {
    ths.forEach((th, j) => {
      const column = columns[j];
      if (j === i) th.setAttribute("aria-sort", dir);
      else th.removeAttribute("aria-sort");
      const next = j === i ? (dir === "ascending" ? "descending" : "ascending") : first(column);
      th.firstChild.title = "sort by " + column.label + ", " + order(column, next);
    });
    state.textContent = "Sorted by " + columns[i].label + ", " + order(columns[i], dir) +
      ". Click a column to sort by it, best first; click again to reverse.";
  }
  function order(column, dir) {
    if (column.text) return dir === "ascending" ? "A to Z" : "Z to A";
    return (dir === "descending") === (column.best === "high") ? "best first" : "worst first";
  }
  function sortBy(i) {
    const column = columns[i];
    const now = ths[i].getAttribute("aria-sort");
    const dir = now ? (now === "ascending" ? "descending" : "ascending") : first(column);
    const sign = dir === "ascending" ? 1 : -1;
    trs.sort((a, b) => {
      const x = column.value(a.row), y = column.value(b.row);
      const xMissing = x === null || x === undefined, yMissing = y === null || y === undefined;
      if (xMissing || yMissing) return xMissing === yMissing ? 0 : xMissing ? 1 : -1; // unknown last
      if (column.text) return sign * String(x).localeCompare(String(y));
      return sign * (x - y);
    });
    show(i, dir);
    arrange();
  }
  show(2, "descending");  // the rows come ranked by resolved rate, best first
  arrange();
  return h("div", null, h("p", { class: "group-by note" }, h("label", null, "Rows: ", grouping)), state, h("div", { class: "scroll" }, h("table", { class: "board" }, h("thead", null, headRow), tbody)));
}

// what worked on the tasks: the tool loop, or `command:` and a command, shortened in the middle (all of it on hover)
function agentCell(row) {
  return h("span", { class: "mono agent", title: row.agent, text: short(row.agent || "tool-loop", 40) });
}

function modelCell(row) {
  const parts = [h("span", { class: "mono", text: row.label })];
  if (row.api_model) parts.push(h("span", { class: "ci", text: " " + row.api_model }));
  const errors = errorCount(row);
  if (errors) {
    const kinds = Object.entries(row.error_kinds).map(([k, n]) => words(STOP_LABELS, k) + " × " + n).join(", ");
    parts.push(" ", h("span", { class: "badge e error-count", title: errors + " of " + row.attempts + " attempts ended in an " +
      "error that is the endpoint's or the harness's, not the model's (" + kinds + "); the purple cells of the matrix",
      text: errors + (errors === 1 ? " error" : " errors") }));
  }
  const crashed = (row.stop_reasons || {}).agent_error || 0;
  if (crashed) {
    parts.push(" ", h("span", { class: "badge agent-crash", title: crashed + " of " + row.attempts + " attempts ended with " +
      "the agent's command exiting with an error (agent_error): it crashed rather than finished; scored like any other",
      text: crashed + (crashed === 1 ? " agent crash" : " agent crashes") }));
  }
  const approximate = Object.entries(row.approximate_env || {});
  if (approximate.length) {
    parts.push(" ", h("span", { class: "badge approx-env", title: "ran on an environment that is not the one SWE-bench " +
      "specifies: " + approximate.map(([task, note]) => task + " (" + note + ")").join("; "),
      text: approximate.length + (approximate.length === 1 ? " task" : " tasks") + " on an approximate environment" }));
  }
  return parts;
}

// one condition's resolved rate over the tasks both runs scored; the pairing in the tooltip
function userPairCell(row, side) {
  const pair = row.user_pair;
  if (!pair) return "—";
  return h("span", { class: side === (row.user ? "with_user" : "without_user") ? null : "ci",
    title: "over the " + pair.tasks + " tasks both runs scored; paired with run " + pair.other_run +
      (row.user ? " (without a user)" : " (with a simulated user)"), text: pct(pair[side]) });
}

// share of attempts with at least one question, and questions per attempt
function askCell(row) {
  const f = row.user_figures;
  if (!f) return "—";
  return h("span", { title: f.questions + " questions over " + f.attempts + " attempts, answered by " + (f.user_model || "?") +
    "; the simulator's cost, apart from the agent's: " + usd(f.cost_usd) },
    pct(f.ask_rate), h("span", { class: "ci", text: " " + dec(f.questions_per_attempt, 2) + " q/attempt" }));
}

// the rate and its interval; no rate at all when every attempt ended in an error
function resolvedCell(row) {
  if (allErrors(row)) return h("span", { class: "no-result", title: "every attempt ended in an endpoint or harness error", text: "no result" });
  return [pct(row.resolved_rate.mean), h("span", { class: "ci", text: ci(row.resolved_rate, true) })];
}

// "after cutoff: 40.0 % (2 tasks)"; the cutoff and the tasks left out of the split in the tooltip
function afterCutoffCell(row) {
  const split = row.after_cutoff;
  if (!split) return "—";
  const tasks = (n) => n + (n === 1 ? " task" : " tasks");
  const undated = split.undated_tasks ? "; " + tasks(split.undated_tasks) + " without a commit date left out" : "";
  return h("span", { title: "resolved over the tasks committed after the knowledge cutoff " + split.cutoff +
    " (" + tasks(split.tasks) + " in all" + undated + ")" },
    "after cutoff: " + pct(split.after_rate), h("span", { class: "ci", text: " (" + tasks(split.after_tasks) + ")" }));
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
      "; a reviewer model's score, when there is one, is kept apart unless the weights give it a share.",
    "median tokens: median total tokens per attempt. cost / task: total cost over the number of tasks (all samples of " +
      "a task together); cost / resolved: total cost over resolved attempts; unknown when a model has no price.",
    "integrity: attempts whose integrity scan failed them (test or harness tampering: unresolved, composite 0) " +
      "and those only flagged as a warning (git history, network, hidden-test probes, writes outside the " +
      "workspace); hover for the kinds. An attempt that changed nothing scores 0 on every axis.",
    "errors: attempts that ended in an endpoint, harness or environment error (endpoint_error, sandbox_error, " +
      "environment_error) are not the " +
      "model's failures; a row with any is marked with their count, and one with nothing else shows no result.",
    "agent: what worked on the tasks (`evalkit run --agent`): evalkit's own tool loop, or an agent run in the " +
      "sandbox that reached its model only through evalkit's recording proxy (`command:` and its command, shortened; " +
      "hover for all of it). The same model under two agents has a row each; group the rows by agent or by model " +
      "above the table (`evalkit report --group-by` sets the first grouping). A row whose agent crashed (its command " +
      "exited with an error: agent_error) says how often; unlike endpoint and harness errors, those attempts are scored.",
    "simulated user (shown when a run had one, `evalkit run --user simulated`): resolved with and without a user " +
      "over the tasks two runs of this suite both scored, when they differ only by the user (same model, agent, " +
      "limits and samples); ask rate: share of attempts with at least one question (the tool loop's `ask_user`, or " +
      "`ask-user` run by an agent in the sandbox), and questions per " +
      "attempt; informative share: answers that added intent the prompt lacked, over the questions asked. The " +
      "simulator's tokens are priced apart (hover the ask rate) and never in the agent's cost.",
    "◆ marks the Pareto frontier of the chart below. A model tried in several runs of this suite (a baseline " +
      "and a new run) has a row per run, labelled with the run id.",
  ];
  if (Object.keys(DATA.benchmarks).length) {
    notes.push("published: scores the model's makers or leaderboards published, as given to `evalkit report " +
      "--published` or [published] in evalkit.toml, matched by model name or API model id; not computed by " +
      "evalkit and on another task set.");
  }
  // open on a wide screen; on a phone the table comes first and the notes one tap away
  return h("details", { class: "note table-notes", open: window.innerWidth >= 700 ? "" : null },
    h("summary", { text: "How each column is computed" }), notes.map((n) => h("p", { text: n })));
}


// -- reviewers -----------------------------------------------------------------------------------
// the reviewers whose verdicts the suite's runs hold: how many, how many failed, what they cost,
// and how far to trust each: its calibration on the suite beside the quality axis's, or how to make one
function reviewersView(suite) {
  const reviewers = suite.reviewers || [];
  if (!reviewers.length) return null;
  const caught = reviewers.map((r) => r.caught_gap)[0];
  const note = h("p", { class: "note", text: "Calibration, per sloppy kind (the reference change made worse one way), over the tasks where both " +
    "were reviewed: lower, the share where the variant scored below the reference; caught, at least " + caught +
    " below; mean gap, reference minus variant; AUC, the chance a reference outscores a variant (0.5: chance). The " +
    "quality axis's figures are on the same pairs; agreement, how often reviewer and axis agree that a variant is " +
    "worse; Spearman's ρ, how alike they rank every change. Made by `evalkit reviewer calibrate`." });
  return h("div", { class: "reviewers" }, h("h3", { text: "Reviewers" }), reviewers.map(reviewerView), note);
}
function reviewerView(r) {
  const box = h("div", { class: "reviewer" });
  put(box, h("p", null, h("strong", { class: "mono", text: r.reviewer }), " · " + r.mode + " · run " + r.run_id + " · " +
    int(r.reviews) + " reviews, " + int(r.failed) + " failed" + (r.failed ? " (recorded with their errors, not fatal)" : "") +
    " · cost " + usd(r.cost_usd)));
  const c = r.calibration;
  if (!c) {
    put(box, h("p", { class: "note" }, "not calibrated" + (r.calibration_error
      ? " (the calibration in summary.json could not be read: " + r.calibration_error + ")" : "") + ": run ",
    h("code", { text: r.calibrate })));
    return box;
  }
  put(box, h("p", { class: "meta" }, "calibrated on suite " + c.suite + ": " + int(c.tasks) + " tasks, " + int(c.changes) +
    " changes reviewed, " + int(c.failed) + " failed" + (c.failed ? " (" + Object.entries(c.errors || {}).map(([k, n]) => k + " × " + n).join(", ") + ")" : "") +
    " · made ", when(c.made_at), " · cost " + usd(c.cost_usd)));
  const axis = new Map((c.axis_kinds || []).map((k) => [k.kind, k]));
  const head = h("tr", null, ["sloppy kind", "pairs", "lower", "caught", "mean gap", "AUC", "quality axis: caught", "quality axis: AUC"]
    .map((t, i) => h("th", { class: i ? null : "text", text: t })));
  const tbody = h("tbody");
  for (const k of c.kinds || []) {
    const a = axis.get(k.kind) || {};
    put(tbody, h("tr", null, h("td", { class: "mono", text: k.kind }), h("td", { text: int(k.pairs) }), h("td", { text: pct(k.lower) }),
      h("td", { text: pct(k.caught) }), h("td", { text: dec(k.mean_gap) }), h("td", { text: dec(k.auc, 2) }),
      h("td", { text: pct(a.caught) }), h("td", { text: dec(a.auc, 2) })));
  }
  put(box, h("div", { class: "scroll" }, h("table", { class: "calibration" }, h("thead", null, head), tbody)));
  put(box, h("p", null, "references' median score: " + dec(c.reference_median, 2) + " (the quality axis's " +
    dec(c.axis_reference_median, 2) + ") · agreement with the quality axis on whether a variant is worse: " +
    pct(c.agreement) + " of " + int(c.agreement_pairs) + " pairs · Spearman's ρ over every change: " + dec(c.spearman, 2)));
  return box;
}
