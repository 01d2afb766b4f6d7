/* Fabric Advisor: the little client-side behaviour the pages need. */
(function () {
  "use strict";

  // Questions asked only for some answers: <div data-show-if="scale" data-show-values="many">
  function applyShowIf(root) {
    root.querySelectorAll("[data-show-if]").forEach(function (el) {
      var form = el.closest("form") || document;
      var name = el.getAttribute("data-show-if");
      var values = (el.getAttribute("data-show-values") || "").split(",");
      var current = "";
      var checked = form.querySelector('[name="' + name + '"]:checked');
      if (checked) { current = checked.value; }
      else {
        var field = form.querySelector('select[name="' + name + '"], input[type="hidden"][name="' + name + '"]');
        if (field) { current = field.value; }
      }
      el.classList.toggle("hidden", values.indexOf(current) < 0);
    });
  }

  // Charts: <div class="chart" data-figure="id-of-json-script">; the figure was built in Python.
  function drawCharts(root) {
    if (!window.Plotly) { return; }
    root.querySelectorAll(".chart[data-figure]").forEach(function (el) {
      if (el.getAttribute("data-drawn")) { return; }
      var source = document.getElementById(el.getAttribute("data-figure"));
      if (!source) { return; }
      var fig = JSON.parse(source.textContent);
      var config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
      window.Plotly.newPlot(el, fig.data || [], fig.layout || {}, config);
      el.setAttribute("data-drawn", "1");
    });
  }

  function copyButtons(root) {
    root.querySelectorAll("[data-copy]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var target = document.getElementById(btn.getAttribute("data-copy"));
        if (!target) { return; }
        target.select();
        if (navigator.clipboard) { navigator.clipboard.writeText(target.value); }
        btn.textContent = "Copied";
      });
    });
  }

  function compareLimit(root) {
    var boxes = root.querySelectorAll('input[name="s"][type="checkbox"]');
    if (!boxes.length) { return; }
    var button = document.getElementById("compare-button");
    function update() {
      var n = Array.prototype.filter.call(boxes, function (b) { return b.checked; }).length;
      if (button) {
        button.disabled = n < 2 || n > 4;
        button.textContent = n ? "Compare " + n + " selected" : "Compare selected";
      }
    }
    boxes.forEach(function (b) { b.addEventListener("change", update); });
    update();
  }

  function init(root) {
    applyShowIf(root);
    drawCharts(root);
    copyButtons(root);
    compareLimit(root);
  }

  document.addEventListener("change", function () { applyShowIf(document); });
  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (evt) { init(evt.target || document); });
  // Charts hidden in a closed <details> get their real width when it opens.
  document.addEventListener("toggle", function (evt) {
    if (window.Plotly && evt.target.open) {
      evt.target.querySelectorAll(".chart[data-drawn]").forEach(function (el) { window.Plotly.Plots.resize(el); });
    }
  }, true);
})();
