/* The result page's live what-if: each change of a control prices that design or load on the
   server (POST /s/<id>/whatif, the API's body and error shape) and shows its figures beside the
   recommendation's, without a page load. The figures of nothing changed come from the same
   endpoint once: the answer's own figures (advisor.engine.tools.whatif), so both columns agree
   with the answer above. */
(function () {
  "use strict";

  var DEBOUNCE_MS = 80;

  function usd(v) {
    if (v === null || v === undefined) { return "–"; }
    var a = Math.abs(v);
    if (a >= 1e9) { return "$" + (v / 1e9).toFixed(2) + "B"; }
    if (a >= 1e6) { return "$" + (v / 1e6).toFixed(2) + "M"; }
    if (a >= 1e3) { return "$" + (v / 1e3).toFixed(0) + "k"; }
    return "$" + v.toFixed(0);
  }

  function sig(v, digits) {
    return Number(v.toPrecision(digits)).toLocaleString("en-US");
  }

  var FORMAT = {
    fabric_label: function (v) { return String(v); },
    deployment_label: function (v) { return String(v); },
    step_time_s: function (v) { return sig(v, 4) + " s"; },
    ms_per_token: function (v) { return sig(v, 3) + " ms"; },
    // the server's words for it (formatting.first_token: "48.5 s", over capacity in words)
    ttft_label: function (v) { return String(v); },
    tokens_per_s_per_server: function (v) { return sig(v, 3); },
    gpu_idle_fraction: function (v) { return (100 * v).toFixed(1) + " %"; },
    network_capex_usd: usd,
    decision_cost_usd: usd
  };

  function show(card, attr, point) {
    card.querySelectorAll("[" + attr + "]").forEach(function (cell) {
      var key = cell.getAttribute(attr);
      var v = point ? point[key] : null;
      cell.textContent = (v === null || v === undefined) ? "–" : FORMAT[key](v);
    });
  }

  function body(form) {
    var out = {};
    ["servers", "precision", "fabric", "nic_gbps", "nics_per_node", "oversubscription",
     "global_batch_sequences", "requests_per_s", "concurrent_requests", "deployment"
    ].forEach(function (name) {
      var el = form.elements[name];
      if (!el) { return; }
      var raw = el.value.trim();
      if (name === "fabric" || name === "precision" || name === "deployment") {
        out[name] = raw;
        return;
      }
      if (raw === "") {
        if (name === "requests_per_s") { out[name] = null; }
        return;
      }
      var n = Number(raw);
      out[name] = isNaN(n) ? raw : n;
    });
    return out;
  }

  function showErrors(form, fields) {
    form.querySelectorAll("[data-error-for]").forEach(function (span) {
      var msgs = fields[span.getAttribute("data-error-for")];
      span.textContent = msgs ? msgs.join(" ") : "";
      var input = form.elements[span.getAttribute("data-error-for")];
      if (input) { input.setAttribute("aria-invalid", msgs ? "true" : "false"); }
    });
  }

  function init(card) {
    var form = card.querySelector("#whatif-form");
    var status = card.querySelector("#whatif-status");
    var reason = card.querySelector("#whatif-reason");
    var save = card.querySelector("#whatif-save");
    var basis = card.querySelector("#whatif-basis");
    var csrf = form.elements.csrfmiddlewaretoken.value;
    var url = card.getAttribute("data-url");
    var sequence = 0;
    var timer = null;

    function price(payload, done) {
      var mine = ++sequence;
      var started = performance.now();
      status.textContent = "Pricing…";
      fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify(payload)
      }).then(function (response) {
        return response.json().then(function (data) { return { ok: response.ok, data: data }; });
      }).then(function (answer) {
        if (mine !== sequence) { return; }  // a later change is on its way
        var elapsed = performance.now() - started;
        card.setAttribute("data-elapsed-ms", elapsed.toFixed(0));
        card.setAttribute("data-priced", String(mine));
        done(answer, elapsed);
      }).catch(function () {
        if (mine !== sequence) { return; }
        status.textContent = "Could not reach the server; try again.";
      });
    }

    function update(answer, elapsed) {
      if (!answer.ok) {
        var err = answer.data.error || {};
        showErrors(form, err.fields || {});
        status.textContent = err.message || "The what-if could not be priced.";
        save.disabled = true;
        return;
      }
      showErrors(form, {});
      var point = answer.data.point;
      show(card, "data-whatif", point.feasible ? point : null);
      reason.hidden = point.feasible;
      reason.textContent = point.feasible ? "" : "Cannot be built: " + point.reason;
      save.disabled = !point.feasible;
      basis.textContent = answer.data.priced_as === "fixed"
        ? "What if: your design, priced as given (the engine would choose its own)."
        : "What if: the engine's own answer for these servers and load.";
      status.textContent = "Priced in " + elapsed.toFixed(0) + " ms (" + answer.data.engine_ms + " ms in the engine).";
    }

    // the recommendation's own figures, priced by the same model
    price({}, function (answer, elapsed) {
      if (answer.ok) { show(card, "data-base", answer.data.point); }
      update(answer, elapsed);
    });

    // A choice from a list is one deliberate change: priced at once. Typing in a number
    // fires an event per key: priced once it pauses for DEBOUNCE_MS.
    function changed(event) {
      var picked = event.target && event.target.tagName === "SELECT";
      if (picked && event.type === "input") { return; }  // its "change" follows at once
      if (timer !== null) { clearTimeout(timer); timer = null; }
      if (picked) { price(body(form), update); return; }
      timer = setTimeout(function () {
        timer = null;
        price(body(form), update);
      }, DEBOUNCE_MS);
    }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var card = document.getElementById("whatif");
    if (card) { init(card); }
  });
})();
