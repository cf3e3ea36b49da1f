// core.js: what every part of the page uses: the data, DOM builders, and number formats. Every
// string that came from a run (model names, task ids, prompts, diffs, tool output) goes in through
// textContent / createTextNode only, never as markup; attribute values are set one by one and never
// include a URL built from data.
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
