// tasks.js: the tasks × models matrix, the suite's statistics beside SWE-bench, and the runs.

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
  const vague = Object.entries((suite.stats && suite.stats.underspecified) || {});
  if (vague.length) {
    notes.push(vague.length + " of " + suite.stats.tasks + " task(s) underspecified (the tests need names the prompt " +
      "does not give): " + vague.slice(0, 5).map(([task, names]) => task + " needs " + names).join("; "));
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
    h("td", null, when(r.created_at)), h("td", null, when(r.scored_at)), h("td", { class: "text mono", text: r.path }))));
  return h("section", { id: "runs" }, h("h2", { text: "Runs" }),
    h("div", { class: "scroll" }, h("table", { class: "plain" }, h("thead", null, head), tbody)));
}

