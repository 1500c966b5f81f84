// hookinbox console: small enhancements. Every page reads without them.
(function () {
  "use strict";
  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button.copy");
    if (!btn) return;
    var src = document.getElementById(btn.dataset.copy);
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.textContent).then(function () {
      btn.textContent = "Copied";
    });
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button.copy").forEach(function (b) { b.hidden = false; });
  });
})();

// Overview charts: per source, requests per minute stacked by outcome.
// uPlot has no stacking of its own: each series is drawn as the running
// sum up to it, the tallest first, and the legend shows each own count.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("chart-data");
    if (!el || typeof uPlot === "undefined") return;
    var d = JSON.parse(el.textContent);
    document.querySelectorAll(".chart[data-source]").forEach(function (box) {
      var raw = d.series[box.dataset.source];
      if (!raw) {
        box.textContent = "No requests in the last 24 hours.";
        box.className += " hint";
        return;
      }
      var n = raw[0].length, xs = new Array(n);
      for (var i = 0; i < n; i++) xs[i] = d.start + 60 * i;
      var sums = [], run = new Array(n).fill(0);
      raw.forEach(function (s) {
        run = run.map(function (v, i) { return v + s[i]; });
        sums.push(run);
      });
      var data = [xs], series = [{}];
      for (var g = raw.length - 1; g >= 0; g--) {
        data.push(sums[g]);
        series.push({
          label: d.groups[g], stroke: d.colors[g], fill: d.colors[g] + "cc", width: 1, points: { show: false },
          value: (function (own) { return function (u, v, si, idx) { return idx == null ? "—" : own[idx]; }; })(raw[g]),
        });
      }
      new uPlot({ width: Math.max(box.clientWidth, 320), height: 200, series: series,
        scales: { x: { time: true } }, axes: [{}, { label: "per minute", size: 60 }] }, data, box);
    });
  });
})();
