// page.js: the page itself, drawn from the parts above; runs last, once every part is defined.

// tasks of the suite that did not load (run.json's skipped_tasks): "7 of 8 tasks loaded", and why
function skippedTasks(suite) {
  const groups = suite.loading.filter((g) => g.skipped.length);
  if (!groups.length) return null;
  return h("div", { class: "skipped-tasks" }, groups.map((g) => [
    h("p", { text: g.loaded + " of " + g.total + " tasks loaded" +
      (suite.loading.length > 1 ? " in run " + g.runs.join(", ") : "") + "; not run:" }),
    h("ul", null, g.skipped.map((t) => h("li", null, h("span", { class: "mono", text: t.file }), ": " + t.reason))),
  ]));
}

function renderSuite(suite, index) {
  const section = h("section", { id: "suite-" + index, class: "suite" });
  put(section, h("h2", null, "Suite ", h("span", { class: "mono", text: suite.name })));
  put(section, h("p", { class: "meta" },
    suite.tasks.length + " tasks · " + suite.models.length + " models · " + suite.attempts.length + " attempts · runs: ",
    suite.runs.join(", "), " · suite path: ", suite.path));
  put(section, skippedTasks(suite));
  put(section, h("h3", { text: "Leaderboard" }));
  put(section, leaderboardTable(suite));
  put(section, tableNotes(suite));
  put(section, reviewersView(suite));
  put(section, h("h3", { text: suite.chart_x === "tokens"
    ? "Completion tokens against resolved rate, and each axis" : "Cost against resolved rate, and each axis" }));
  put(section, h("div", { class: "charts" }, tradeoffChart(suite), axisMultiples(suite)));
  put(section, h("h3", { text: "Tasks × models" }));
  put(section, matrix(suite));
  put(section, h("h3", { text: "The suite beside SWE-bench" }));
  put(section, statsView(suite));
  return section;
}

const app = document.getElementById("app");
const nav = document.getElementById("nav");
DATA.suites.forEach((suite, i) => put(nav, h("a", { href: "#suite-" + i, text: suite.name })));
put(nav, h("a", { href: "#runs", text: "runs" }));
const generated = document.getElementById("generated");
generated.replaceChildren(when(generated.dataset.iso));
DATA.suites.forEach((suite, i) => put(app, renderSuite(suite, i)));
put(app, renderRuns());
afterLayout.forEach((work) => work());
fromHash();
document.body.dataset.ready = "1";
performance.mark("evalkit-drawn");
