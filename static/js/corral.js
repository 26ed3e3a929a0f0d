/* Corral's page behaviour, kept out of the HTML so the Content Security Policy can refuse
   every inline script (fleet/settings_security.py). Loaded after htmx, deferred. */
(function () {
  "use strict";

  // Plotly charts: core/charts.py writes each figure as a JSON data block.
  function drawCharts(root) {
    if (typeof Plotly === "undefined") { return; }
    root.querySelectorAll("script[data-plotly-for]").forEach(function (block) {
      var box = document.getElementById(block.dataset.plotlyFor);
      if (!box || box.dataset.plotted) { return; }
      var spec = JSON.parse(block.textContent);
      box.dataset.plotted = "1";
      Plotly.newPlot(box, spec.figure.data, spec.figure.layout, spec.config).then(function () {
        if (box.dataset.plotlyClick !== "navigate") { return; }
        box.on("plotly_click", function (e) {
          var p = e.points && e.points[0];
          var u = p && p.customdata && p.customdata[0];
          if (typeof u === "string" && u.charAt(0) === "/") { window.location.href = u; }
        });
      });
    });
  }
  htmx.onLoad(drawCharts);

  // <select data-submit-on-change>: choosing an option submits its form.
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el.matches && el.matches("[data-submit-on-change]")) { el.form.submit(); }
    // <select data-show-when="value" data-show-target="#id">: that box (and its inputs)
    // only when the value is chosen.
    if (el.matches && el.matches("[data-show-target]")) {
      var on = el.value === el.dataset.showWhen;
      var box = document.querySelector(el.dataset.showTarget);
      box.hidden = !on;
      box.querySelectorAll("input").forEach(function (i) { i.disabled = !on; });
    }
  });

  // <button data-check-all="selector">: ticks every checkbox the selector finds.
  document.addEventListener("click", function (e) {
    var el = e.target.closest && e.target.closest("[data-check-all]");
    if (!el) { return; }
    document.querySelectorAll(el.dataset.checkAll).forEach(function (c) { c.checked = true; });
  });

  // An element polling (hx-trigger="every ...") with data-poll-unless-checked="selector"
  // skips a poll while such a checkbox is ticked; its children's requests are their own (a reload would drop the selection). htmx's own
  // [condition] filters need eval, which the policy refuses.
  document.addEventListener("htmx:confirm", function (e) {
    var sel = e.detail.elt.dataset && e.detail.elt.dataset.pollUnlessChecked;
    if (sel && document.querySelector(sel)) { e.preventDefault(); }
  });

  // The node list's bulk bar (inventory/bulk_bar.py): shown while nodes are ticked; each
  // button counts the ticked nodes whose state its action is legal in ("Deploy (3 of 5)").
  function updateBulkBar() {
    var bar = document.getElementById("bulk-form");
    if (!bar) { return; }
    var boxes = Array.prototype.slice.call(document.querySelectorAll(".bulk-pick"));
    var picked = boxes.filter(function (c) { return c.checked; });
    bar.hidden = picked.length === 0;
    document.getElementById("bulk-count").textContent = String(picked.length);
    bar.querySelectorAll("[data-bulk-states]").forEach(function (button) {
      var states = button.dataset.bulkStates.split(",");
      var n = picked.filter(function (c) { return states.indexOf(c.dataset.state) >= 0; }).length;
      button.querySelector(".bulk-applies").textContent = "(" + n + " of " + picked.length + ")";
      button.disabled = n === 0;
    });
    var all = document.getElementById("bulk-all");
    if (all) {
      all.checked = boxes.length > 0 && picked.length === boxes.length;
      all.indeterminate = picked.length > 0 && picked.length < boxes.length;
    }
  }
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el.id === "bulk-all") {
      document.querySelectorAll(".bulk-pick").forEach(function (c) { c.checked = el.checked; });
    }
    if (el.id === "bulk-all" || (el.classList && el.classList.contains("bulk-pick"))) {
      updateBulkBar();
    }
  });
  htmx.onLoad(function () { updateBulkBar(); });
})();
