// core.js: what every part of the page uses: the data, DOM builders, number and time formats, and
// the words shown for evalkit's keys. Every string that came from a run (model names, task ids,
// prompts, diffs, tool output) goes in through textContent / createTextNode only, never as markup;
// attribute values are set one by one and never include a URL built from data.
const DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
const SVG_NS = "http://www.w3.org/2000/svg";
const STATUS = { r: "resolved", x: "tests passed, integrity failed", f: "failed", e: "error" };
const CELL_KIND = { r: "all", x: "voided", f: "none", e: "error" };  // a sample's cell colour
const CELL_LABEL = { r: "resolved", x: "voided", f: "failed", e: "error" };
const FLAG_MARK = "\u2691";  // an integrity flag on an attempt (class "flag fail" or "flag warn")
// the axes and their labels come with the data (evalkit/axes.py): one list drives every view
const AXIS_LABELS = { resolved: "resolved", ...DATA.axis_labels };
const STOP_LABELS = {
  submitted: "submitted", no_tool_call: "answered without a tool call", max_turns: "turn budget used up",
  max_tokens: "token budget used up", wall_time: "time budget used up", context_overflow: "context window full",
  endpoint_error: "endpoint error", sandbox_error: "sandbox error", environment_error: "environment error",
  agent_error: "the agent crashed", verdict: "verdict given",  // verdict: a reviewer's transcript
};
// the parts of each axis in the attempt view, in words (an unknown key is shown as it is)
const PART_LABELS = {
  tests_resolved: "hidden tests passed", f2p_passed: "FAIL_TO_PASS passed", p2p_passed: "PASS_TO_PASS passed",
  patch_applied: "patch applied", lint: "lint", syntax: "syntax", hygiene: "hygiene", scope: "scope", size: "size",
  note: "note", new_lint: "new lint findings", stray_files: "stray files", extra_files: "files beyond the reference",
  missed_files: "reference files missed", changed_lines: "lines changed", reference_lines: "reference lines",
  budget_tokens: "token budget used", budget_turns: "turn budget used", budget_time: "time budget used",
  total_tokens: "tokens", cost_usd: "cost", turns: "turns", tool_calls: "tool calls", wall_s: "wall time",
  malformed_call: "malformed calls", unknown_tool: "unknown tools", failed_edit: "failed edits",
  tool_error: "tool errors", timeout: "command timeouts", repeated_call: "repeated calls",
  budget_overrun: "budget overrun", no_final_message: "no final message", unspecific_final: "unspecific final message",
  no_tool_call: "replies without a tool call", text_tool_call: "tool calls written as text", bash_write: "files written by bash",
  informative_question: "informative questions", redundant_question: "redundant questions",
  unanswered_question: "unanswered questions", over_budget_question: "questions over budget",
  user_tokens: "simulated user's tokens", user_cost_usd: "simulated user's cost",
  ...DATA.axis_labels, summary: "summary", issues: "issues", error: "error",
};
const LIMIT_LABELS = {
  max_turns: (v) => int(v) + " turns", max_tokens: (v) => int(v) + " tokens", wall_time_s: (v) => duration(v) + " wall time",
  command_timeout_s: (v) => duration(v) + " per command", network: (v) => (v ? "network on" : "no network"),
};
const QUESTION_LABELS = {
  informative: "informative", redundant: "redundant (the request already said)",
  unanswered: "unanswered", over_budget: "over the question budget (not asked)",
};
const words = (table, key) => table[key] ?? key;

// -- DOM builders --------------------------------------------------------------------------------
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
// work that needs the page laid out (measuring text): run once everything is in the document
const afterLayout = [];

// -- numbers and times ---------------------------------------------------------------------------
const isNum = (x) => typeof x === "number" && Number.isFinite(x);
const pct = (x) => (isNum(x) ? (x * 100).toFixed(1) + " %" : "—");
const dec = (x, d = 3) => (isNum(x) ? x.toFixed(d) : "—");
// an axis's mean; "n/a" when it applies to none of the attempts (their agent lacks its evidence)
const axisCell = (v) => (v && v.not_applicable ? "n/a" : dec(v ? v.mean : null));
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
// 0.4 s, 12 s, 3 min 5 s, 1 h 2 min
function duration(seconds) {
  if (!isNum(seconds)) return "—";
  if (seconds < 10) return (Math.round(seconds * 10) / 10) + " s";
  if (seconds < 60) return Math.round(seconds) + " s";
  const m = Math.floor(seconds / 60), rest = Math.round(seconds % 60);
  if (m < 60) return m + " min" + (rest ? " " + rest + " s" : "");
  return Math.floor(m / 60) + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
}
// an ISO timestamp in the reader's time zone ("12 Mar 2026, 14:05"); the ISO text stays in the tooltip
const localDate = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
function when(iso) {
  if (!iso) return h("span", { text: "—" });
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("span", { text: String(iso) });
  return h("time", { datetime: iso, title: iso, text: localDate.format(date) });
}
// a long name shortened in the middle for a label, so that names differing only at the end (a
// quantisation, a date) stay apart; the whole name stays in the element's tooltip
function short(text, max) {
  if (text.length <= max) return text;
  const tail = Math.floor((max - 1) / 2);
  return text.slice(0, max - 1 - tail) + "…" + text.slice(text.length - tail);
}
function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}
// attempts of a row that ended in an endpoint or harness error, and whether that is all of them
const errorCount = (row) => Object.values(row.error_kinds || {}).reduce((a, b) => a + b, 0);
const allErrors = (row) => row.attempts > 0 && errorCount(row) >= row.attempts;
