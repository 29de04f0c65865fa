"use strict";
(function () {
  var PALETTE = {h0: "#1a7f37", h1: "#4cae4f", h2: "#9ccc65", h3: "#d4e157", h5: "#ffb74d", h7: "#e53935", hx: "#6f2da8"};
  function $(sel, root) { return (root || document).querySelector(sel); }
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function data(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  // Sortable tables: a button in each header cell; numbers sort by data-v.
  $all("table.sortable").forEach(function (table) {
    var heads = $all("thead th", table);
    heads.forEach(function (th, col) {
      var b = th.querySelector("button");
      if (!b) { return; }
      b.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (x, y) {
          var a = x.cells[col], c = y.cells[col];
          if (!a || !c) { return 0; }
          var av = a.getAttribute("data-v"), cv = c.getAttribute("data-v");
          var r;
          if (av !== null && cv !== null) {
            var an = parseFloat(av), cn = parseFloat(cv);
            an = isNaN(an) ? -Infinity : an;
            cn = isNaN(cn) ? -Infinity : cn;
            r = an === cn ? 0 : (an < cn ? -1 : 1);
          }
          else { r = a.textContent.localeCompare(c.textContent, undefined, {numeric: true}); }
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // The results table's filters.
  var form = $("#filters");
  var results = $("#results-table");
  function applyFilters() {
    if (!form || !results) { return; }
    var v = form.elements.verdict.value, t = form.elements.test.value, r = form.elements.rail.value;
    var words = form.elements.node.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0, total = 0;
    Array.prototype.forEach.call(results.tBodies[0].rows, function (row) {
      total++;
      var nodes = (row.getAttribute("data-nodes") || "").toLowerCase();
      var comp = row.cells[2] ? row.cells[2].textContent.toLowerCase() : "";
      var ok = (!v || (v === "nonpass" ? row.getAttribute("data-verdict") !== "pass" : row.getAttribute("data-verdict") === v)) &&
        (!t || row.getAttribute("data-test") === t) &&
        (!r || (" " + (row.getAttribute("data-rails") || "") + " ").indexOf(" " + r + " ") >= 0) &&
        words.every(function (w) { return nodes.indexOf(w) >= 0 || comp.indexOf(w) >= 0; });
      row.hidden = !ok;
      if (ok) { shown++; }
    });
    var out = $("#shown");
    if (out) { out.textContent = shown + " of " + total + " rows shown"; }
  }
  if (form) {
    form.addEventListener("input", applyFilters);
    form.addEventListener("change", applyFilters);
    form.addEventListener("submit", function (e) { e.preventDefault(); applyFilters(); });
    form.addEventListener("reset", function () { setTimeout(applyFilters, 0); });
    applyFilters();
  }
  function showNodes(text) {
    if (!form) { return; }
    form.reset();
    form.elements.node.value = text;
    applyFilters();
    var sec = $("#results");
    if (sec) { sec.scrollIntoView(); }
  }

  // A link to a row shows it even where a filter hid it.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) { return; }
    var el = document.getElementById(id);
    if (!el) { return; }
    if (el.tagName === "TR" && el.hidden && form) { form.reset(); applyFilters(); }
    $all("tr.hit").forEach(function (r) { r.classList.remove("hit"); });
    if (el.tagName === "TR") { el.classList.add("hit"); }
    var d = el.closest("details");
    while (d) { d.open = true; d = d.parentElement ? d.parentElement.closest("details") : null; }
    $all("details", el).forEach(function (x) { x.open = true; });
    el.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  reveal();

  // Large pair heatmaps: drawn on a canvas from their JSON, leaf pairs drill down.
  $all("canvas.heat").forEach(function (canvas) {
    var d = data(canvas.getAttribute("data-src"));
    if (!d) { return; }
    var info = document.getElementById(canvas.getAttribute("data-info"));
    var n = d.nodes.length;
    var grid = {};
    d.cells.forEach(function (c) { grid[c[0] + "," + c[1]] = c; grid[c[1] + "," + c[0]] = c; });
    var view = {rows: null, cols: null};
    var cursor = [0, 0];
    function indices(leaf) {
      var out = [];
      for (var i = 0; i < n; i++) { if (leaf === null || d.leaf[i] === leaf) { out.push(i); } }
      return out;
    }
    function draw() {
      var rows = indices(view.rows), cols = indices(view.cols);
      var px = Math.max(1, Math.min(12, Math.floor(1024 / Math.max(rows.length, cols.length))));
      canvas.width = cols.length * px;
      canvas.height = rows.length * px;
      var g = canvas.getContext("2d");
      g.fillStyle = "#eeeeee";
      g.fillRect(0, 0, canvas.width, canvas.height);
      rows.forEach(function (i, y) {
        cols.forEach(function (j, x) {
          var c = grid[i + "," + j];
          if (c) { g.fillStyle = PALETTE[c[2]] || "#999"; g.fillRect(x * px, y * px, px, px); }
        });
      });
      canvas.setAttribute("data-drawn", String(rows.length * cols.length));
      view.px = px; view.r = rows; view.c = cols;
    }
    function describe(y, x) {
      var i = view.r[y], j = view.c[x];
      if (i === undefined || j === undefined) { return; }
      var c = grid[i + "," + j];
      var text = d.nodes[i] + " \u00d7 " + d.nodes[j] + ": " + (c ? c[3] : "not tested");
      if (info) { info.textContent = text; }
      return c ? [d.nodes[i], d.nodes[j]] : null;
    }
    function at(e) {
      var r = canvas.getBoundingClientRect();
      var sx = canvas.width / r.width, sy = canvas.height / r.height;
      return [Math.floor((e.clientY - r.top) * sy / view.px), Math.floor((e.clientX - r.left) * sx / view.px)];
    }
    canvas.addEventListener("mousemove", function (e) { var p = at(e); describe(p[0], p[1]); });
    canvas.addEventListener("click", function (e) {
      var p = at(e); cursor = p;
      var pair = describe(p[0], p[1]);
      if (pair) { showNodes(pair.join(" ")); }
    });
    canvas.addEventListener("keydown", function (e) {
      var moves = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
      if (moves[e.key]) {
        e.preventDefault();
        cursor[0] = Math.max(0, Math.min(view.r.length - 1, cursor[0] + moves[e.key][0]));
        cursor[1] = Math.max(0, Math.min(view.c.length - 1, cursor[1] + moves[e.key][1]));
        describe(cursor[0], cursor[1]);
      } else if (e.key === "Enter") {
        var pair = describe(cursor[0], cursor[1]);
        if (pair) { showNodes(pair.join(" ")); }
      }
    });
    $all("[data-drill='" + canvas.id + "']").forEach(function (b) {
      b.addEventListener("click", function (e) {
        e.preventDefault();
        var a = b.getAttribute("data-a"), c = b.getAttribute("data-b");
        view.rows = a === null ? null : parseInt(a, 10);
        view.cols = c === null ? null : parseInt(c, 10);
        cursor = [0, 0];
        draw();
        var title = document.getElementById(canvas.id + "-view");
        if (title) { title.textContent = b.getAttribute("data-label"); }
        canvas.scrollIntoView();
      });
    });
    draw();
  });

  // Printed, every collapsed section shows.
  var closed = [];
  window.addEventListener("beforeprint", function () {
    closed = $all("details:not([open])");
    closed.forEach(function (x) { x.open = true; });
  });
  window.addEventListener("afterprint", function () { closed.forEach(function (x) { x.open = false; }); });
  document.documentElement.setAttribute("data-ready", "1");
})();
