// recallbench view: sorting, filtering, run tabs and anchors. No network, no libraries.
(function () {
  "use strict";
  function cellValue(row, i) {
    var cell = row.children[i];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortTable(th) {
    var table = th.closest("table"), body = table.tBodies[0];
    var i = Array.prototype.indexOf.call(th.parentNode.children, th);
    var desc = !th.classList.contains("desc");
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(desc ? "desc" : "asc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, i), y = cellValue(b, i), nx = parseFloat(x), ny = parseFloat(y);
      var bothNum = !isNaN(nx) && !isNaN(ny) && isFinite(x) && isFinite(y);
      if (x === "" && y !== "") return 1;
      if (y === "" && x !== "") return -1;
      var c = bothNum ? nx - ny : x.localeCompare(y);
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function applyFilter(box) {
    var scope = document.getElementById(box.getAttribute("data-target"));
    if (!scope) return;
    var text = (box.querySelector("input[type=search]") || {}).value || "";
    text = text.toLowerCase();
    var flagged = box.querySelector("input[type=checkbox]");
    var only = flagged && flagged.checked;
    var shown = 0, items = scope.querySelectorAll("[data-item]");
    items.forEach(function (el) {
      var ok = (!text || el.textContent.toLowerCase().indexOf(text) >= 0) &&
        (!only || el.getAttribute("data-flag") === "1");
      el.classList.toggle("hidden", !ok);
      shown += ok ? 1 : 0;
    });
    var count = box.querySelector(".count");
    if (count) count.textContent = shown + " of " + items.length + " shown";
  }
  function showRun(id) {
    var sections = document.querySelectorAll("section.run");
    if (sections.length < 2) return;
    sections.forEach(function (s) { s.classList.toggle("hidden", id !== "all" && s.id !== id); });
    document.querySelectorAll("nav.runs button").forEach(function (b) {
      b.classList.toggle("on", b.getAttribute("data-run") === id);
    });
  }
  function reveal(hash) {
    if (!hash || hash.length < 2) return;
    var el = document.getElementById(decodeURIComponent(hash.slice(1)));
    if (!el) return;
    var run = el.closest("section.run");
    if (run && run.classList.contains("hidden")) showRun(run.id);
    for (var p = el; p; p = p.parentElement) { if (p.tagName === "DETAILS") p.open = true; }
    el.scrollIntoView({ block: "center" });
    el.classList.add("flash");
    setTimeout(function () { el.classList.remove("flash"); }, 1600);
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t.matches("th.sort")) { sortTable(t); return; }
    if (t.matches("nav.runs button")) { showRun(t.getAttribute("data-run")); return; }
    if (t.matches("button[data-open]")) {
      var scope = document.getElementById(t.getAttribute("data-scope"));
      var open = t.getAttribute("data-open") === "1";
      (scope || document).querySelectorAll("details").forEach(function (d) { d.open = open; });
      return;
    }
    var a = t.closest("a[href^='#']");
    if (a) { ev.preventDefault(); history.replaceState(null, "", a.getAttribute("href")); reveal(a.getAttribute("href")); }
  });
  document.addEventListener("input", function (ev) {
    var box = ev.target.closest(".toolbar[data-target]");
    if (box) applyFilter(box);
  });
  document.querySelectorAll(".toolbar[data-target]").forEach(applyFilter);
  var first = document.querySelector("nav.runs button[data-run]");
  if (first) showRun(first.getAttribute("data-run"));
  reveal(location.hash);
  document.documentElement.setAttribute("data-ready", "1");
})();
