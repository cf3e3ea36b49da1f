// attempt.js: one attempt's view in the dialog, its detail loaded on demand from attempts/<n>.js.

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
    h("span", { class: "badge", title: "stop reason " + d.stop_reason, text: "stop: " + words(STOP_LABELS, d.stop_reason) }),
    d.error ? h("span", { class: "badge e", text: "error: " + d.error }) : null,
    h("span", { class: "meta", text: "run " + d.run_id + " · suite " + d.suite + " · attempt " + d.n })));
  parts.push(factsLine(d.facts));
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
  if (d.quality) parts.push(h("h3", { text: "Quality" }), qualityView(d.quality));
  if (d.review) parts.push(h("h3", { text: "Review" }), reviewView(d.review));
  parts.push(h("h3", { text: "Integrity" }), integrityView(d.integrity));
  parts.push(h("h3", { text: "Hidden tests" }), testsView(d.tests, d.test_log));
  parts.push(h("h3", { text: "Final diff" + (d.patch_applied ? "" : " (did not apply)") }), diffView(d.patch));
  parts.push(h("h3", { text: "Trajectory" }), trajectoryView(d.trajectory, d.trajectory_note));
  body.replaceChildren(...parts);
  dialog.scrollTop = 0;
}

// a value of the parts in words: yes/no, fractions of a budget in %, lists and counts joined
function partValue(key, v) {
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.join(", ");
  if (typeof v === "object") return Object.entries(v).map(([k, n]) => k + " × " + n).join(", ");
  if (isNum(v) && (key.startsWith("budget_") || key === "f2p_passed" || key === "p2p_passed")) return pct(v);
  if (isNum(v) && (key === "cost_usd" || key === "user_cost_usd")) return usd(v);
  if (isNum(v) && key === "wall_s") return duration(v);
  if (isNum(v) && !Number.isInteger(v)) return String(Number(v.toFixed(4)));
  if (isNum(v)) return int(v);
  return String(v);
}
function keyValues(object) {
  const line = h("span", { class: "parts" });
  for (const [k, v] of Object.entries(object || {})) {
    if (v === null || v === undefined || (typeof v === "object" && !Object.keys(v).length)) continue;
    const text = partValue(k, v);  // a short value never breaks from its key's line ("0.0 %")
    put(line, h("span", { class: "part", title: k }, h("span", { class: "key", text: words(PART_LABELS, k) }), " ",
      h("span", { class: text.length < 24 ? "value short" : "value", text })));
  }
  return line;
}
// turns, tool calls, tokens and times of the attempt, in words
function factsLine(facts) {
  const f = facts || {};
  const bits = [int(f.turns) + " turn" + (f.turns === 1 ? "" : "s"), int(f.tool_calls) + " tool call" + (f.tool_calls === 1 ? "" : "s"),
    int(f.tokens) + " tokens", duration(f.duration_s) + " in all"];
  if (isNum(f.agent_s)) bits.push(duration(f.agent_s) + " agent");
  if (isNum(f.model_time_s)) bits.push(duration(f.model_time_s) + " waiting for the model");
  const retries = Object.entries(f.retries || {}).filter(([, n]) => n);
  if (retries.length) bits.push("retries: " + retries.map(([k, n]) => k.replace(/_/g, " ") + " × " + n).join(", "));
  const faults = Object.entries(f.faults || {}).filter(([, n]) => n);
  if (faults.length) bits.push("faults: " + faults.map(([k, n]) => k.replace(/_/g, " ") + " × " + n).join(", "));
  return h("p", { class: "facts meta", text: bits.join(" · ") });
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
      cost_usd: sc.efficiency.cost_usd, turns: sc.efficiency.turns, tool_calls: sc.efficiency.tool_calls, wall_s: sc.efficiency.wall_s,
      user_tokens: sc.efficiency.user_tokens || null, user_cost_usd: sc.efficiency.user_cost_usd }],  // the simulated user's, apart
    ["interaction", sc.interaction.score, { ...Object.fromEntries(Object.entries(sc.interaction.counts).filter(([, v]) => v)),
      ...(sc.interaction.score === null ? {} : Object.fromEntries((sc.interaction.not_observed || []).map((k) => [k, "n/a"]))) }],
    ["composite", sc.composite, sc.weights],
  ];
  const rv = d.review;  // its answers, lines and transcript in the Review section
  if (rv) rows.push(["reviewer", rv.score, { reviewer: rv.reviewer, mode: rv.mode, error: rv.error ? "failed (see Review)" : null }]);
  const tbody = h("tbody");
  rows.forEach(([name, score, parts]) => put(tbody, h("tr", null, h("td", { text: words(AXIS_LABELS, name) }), h("td", { text: score !== null ? dec(score) : name === "reviewer" ? "none" : "n/a" }),
    h("td", { class: "text" }, keyValues(parts)))));
  const table = h("table", { class: "scores" }, h("thead", null, h("tr", null, h("th", { text: "axis" }), h("th", { text: "score" }),
    h("th", { class: "text", text: "parts" }))), tbody);
  const notes = [];
  if (sc.did_work === false) notes.push("No work: the change was empty, did not apply, or was all put back or whitespace, so quality, efficiency, interaction and the composite are 0.");
  const na = rows.filter(([name, score]) => score === null && name !== "reviewer").map(([name]) => name);  // a failed review: its own note
  if (na.length) notes.push("n/a: " + na.join(", ") + ": the agent does not produce the evidence these need (token usage, evalkit's tool calls and a final message, or its recorded model traffic); left out of the composite, whose weights are renormalised.");
  if (sc.interaction.score !== null && (sc.interaction.not_observed || []).length) notes.push("Interaction is scored from the agent's recorded model traffic: what its own tools did with each call (failed edits, tool errors, timeouts) is not observed (n/a), not counted.");
  if (d.integrity.verdict === "fail" && sc.correctness.tests_resolved) notes.push("The hidden tests passed, but the integrity verdict is fail: unresolved, correctness and composite 0.");
  return h("div", null, table, notes.map((n) => h("p", { class: "note", text: n })));
}
// a finding's or a blamed line's place: "path:line", the path alone for the whole file
const place = (path, line) => (isNum(line) && line > 0 ? path + ":" + line : path);
// a list cut to its first items by the report, with the count of the rest
function cappedList(items, more, item) {
  return [h("ul", { class: "tests" }, items.map(item)),
    more ? h("p", { class: "note", text: "… and " + int(more) + " more, not listed" }) : null];
}
// each part of the quality axis: its score and what it took off, then the lines it blames; the
// parts that charged nothing on one line
function qualityView(q) {
  const box = h("div", { class: "quality" });
  put(box, h("p", null, "quality ", h("strong", { text: dec(q.score) }),
    h("span", { class: "meta", text: (q.parts.length ? " = 1 − what the parts charged" : "") + (q.broken_pass_to_pass
      ? ", × the share of PASS_TO_PASS tests still passing (" + int(q.broken_pass_to_pass) + " broken)" : "") })));
  if (q.note) put(box, h("p", { class: "note", text: q.note }));
  const clean = q.parts.filter((p) => !p.charged && !p.findings.length);
  for (const p of q.parts.filter((part) => !clean.includes(part))) {
    const count = p.findings.length + p.more;
    const head = words(PART_LABELS, p.part) + " " + (p.score === null ? "—" : dec(p.score, 2)) +
      " · charged " + dec(p.charged, 2) + (count ? " · " + count + (count === 1 ? " finding" : " findings") : "") +
      (p.allowed ? " · " + p.allowed + " as in the reference, not charged" : "");
    const details = h("details", { class: "quality-part", open: p.charged ? "" : null },
      h("summary", { title: isNum(p.cost) ? p.cost + " a finding" : null, text: head }));
    if (p.facts) put(details, h("p", { class: "note", text: p.facts }));
    if (count) put(details, cappedList(p.findings, p.more, (f) => h("li", null, h("span", { class: "mono", text: place(f.path, f.line) }), ": " + f.what)));
    put(box, details);
  }
  if (clean.length) put(box, h("p", { class: "meta", text: "nothing charged: " + clean.map((p) => words(PART_LABELS, p.part)).join(", ") }));
  return box;
}
const MODE_LABELS = { agentic: "agentic (read the trees with tools)", "no-tools": "no tools (one request)" };
// the reviewer's verdict: the rubric's answers, leftovers, the lines it blames, its error (kept, not
// fatal), what it cost, and its transcript, read as the agent's trajectory is
function reviewView(r) {
  const box = h("div", { class: "review" });
  put(box, h("p", null, h("span", { class: "mono", text: r.reviewer }), " · " + words(MODE_LABELS, r.mode) + " · score ",
    h("strong", { text: r.score === null ? "none" : dec(r.score, 2) })));
  if (r.error) {
    put(box, h("p", null, h("span", { class: "fault", text: "the review failed: " }), r.error));
    put(box, h("p", { class: "note", text: "Recorded, not fatal: this attempt's other scores stand; the review has no score and counts as failed in the reviewer's figures." }));
  }
  const a = r.answers;
  if (a) {
    const grade = (v) => (isNum(v) ? v + "/10" : "—");
    const line = h("span", { class: "parts" });
    [["does what was asked", grade(a.does_what_asked)], ["in scope", grade(a.in_scope)], ["readable", grade(a.readable)],
      ["grade", grade(a.score)], ["would merge", a.would_merge ? "yes" : "no"]].forEach(([k, v]) =>
      put(line, h("span", { class: "part" }, h("span", { class: "key", text: k }), " ", h("span", { class: "value short", text: v }))));
    put(box, h("p", null, line));
    put(box, h("p", { class: "meta", text: a.leftovers.length ? "leftovers:" : "no leftovers named" }));
    if (a.leftovers.length) put(box, h("ul", { class: "tests" }, a.leftovers.map((t) => h("li", { text: t }))));
    const blamed = a.lines.length + (r.lines_more || 0);
    put(box, h("p", { class: "meta", text: blamed ? "lines blamed (" + blamed + "):" : "no line blamed" }));
    if (blamed) put(box, cappedList(a.lines, r.lines_more, (l) => h("li", null, h("span", { class: "mono", text: place(l.path, l.line) }), l.why ? ": " + l.why : "")));
  } else if (!r.error) {
    put(box, h("p", { class: "note", text: "no rubric answers recorded" }));
  }
  const summary = r.summary || (a && a.summary);
  if (summary) put(box, h("pre", { class: "final", text: summary }));
  if ((r.issues || []).length) put(box, h("ul", { class: "tests" }, r.issues.map((t) => h("li", { text: t }))));
  put(box, h("p", { class: "facts meta", text: [int(r.turns) + " turn" + (r.turns === 1 ? "" : "s"),
    int(r.tool_calls) + " tool call" + (r.tool_calls === 1 ? "" : "s"), int(r.prompt_tokens) + " prompt tokens",
    int(r.completion_tokens) + " completion tokens", "cost " + usd(r.cost_usd)].join(" · ") }));
  if (r.rubric) put(box, h("details", null, h("summary", { text: "rubric" }), h("pre", { text: r.rubric })));
  const events = r.transcript_view || [];
  if (r.transcript_note) put(box, h("p", { class: "note", text: "Transcript: " + r.transcript_note }));
  if (events.length) {
    put(box, h("details", { class: "review-transcript" }, h("summary", { text: "the reviewer's transcript (" + events.length + (events.length === 1 ? " event, " : " events, ") + r.transcript + ")" }),
      trajectoryView(events, null, "transcript")));
  }
  return box;
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
// an event's time since the attempt started ("at 1 min 5 s: ")
const sinceStart = (t) => (isNum(t) ? "at " + duration(t) + ": " : "");
// events as trajectory_view gives them: the agent's trajectory, or a reviewer's transcript (class
// "transcript", so that the attempt's own trajectory stays the one ".trajectory")
function trajectoryView(events, note, cls = "trajectory") {
  const box = h("div", { class: cls });
  if (note) put(box, h("p", { class: "note", text: note }));
  for (const e of events) {
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
    } else if (e.kind === "user") {
      const about = [words(QUESTION_LABELS, e.class), "asked with " + e.via];
      if (e.redacted) about.push(int(e.redacted) + " redacted");
      const item = h("div", { class: "event asked" });
      put(item, h("div", { class: "who", text: sinceStart(e.t) + "question to the simulated user · " + about.join(" · ") }));
      put(item, h("pre", { text: e.question ?? "" }));
      put(item, h("div", { class: "who", text: "answer" + (e.error ? " (" + e.error + ")" : "") }));
      put(item, h("pre", { text: e.answer ?? "" }));
      put(box, item);
    } else if (e.kind === "model_call") {
      put(box, h("div", { class: "event meta", text: sinceStart(e.t) + "model call, turn " + e.turn + ": " + duration(e.latency_s) + ", " +
        int(e.tokens) + " tokens, finish " + e.finish_reason + (e.retries ? ", " + e.retries + " retries" : "") }));
    } else if (e.kind === "stop") {
      put(box, h("div", { class: "event meta", text: sinceStart(e.t) + "stop: " + words(STOP_LABELS, e.stop_reason) + (e.error ? " (" + e.error + ")" : "") }));
    } else if (e.kind === "start") {
      const limits = Object.entries(e.limits || {}).map(([k, v]) => (LIMIT_LABELS[k] ? LIMIT_LABELS[k](v) : k + " " + v));
      put(box, h("div", { class: "event meta" }, "started ", e.started_at ? when(e.started_at) : "", limits.length ? " · limits: " + limits.join(", ") : ""));
    }
  }
  return box;
}
