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
    // Each point is one minute's count: drawn as a step a minute wide (a
    // new install's first requests are a block, not a needle at the
    // edge), on an axis of whole numbers from 0 (never 0.5 requests).
    var steps = uPlot.paths.stepped({ align: 1 });
    var countIncrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000];
    var countRange = function (u, min, max) { return [0, Math.max(4, max)]; };
    document.querySelectorAll(".chart[data-source]").forEach(function (box) {
      var raw = d.series[box.dataset.source];
      if (!raw) {
        box.textContent = "No requests in the last 24 hours.";
        box.className += " hint";
        return;
      }
      // One x more than minutes: a step ends where the next minute
      // starts, so the current minute's needs an end of its own.
      var n = raw[0].length, xs = new Array(n + 1);
      for (var i = 0; i <= n; i++) xs[i] = d.start + 60 * i;
      var sums = [], run = new Array(n).fill(0);
      raw.forEach(function (s) {
        run = run.map(function (v, i) { return v + s[i]; });
        sums.push(run.concat([run[n - 1]]));
      });
      var data = [xs], series = [{}];
      for (var g = raw.length - 1; g >= 0; g--) {
        data.push(sums[g]);
        series.push({
          label: d.groups[g], stroke: d.colors[g], fill: d.colors[g] + "cc", width: 1, points: { show: false }, paths: steps,
          value: (function (own) { return function (u, v, si, idx) { return idx == null || idx >= own.length ? "—" : own[idx]; }; })(raw[g]),
        });
      }
      new uPlot({ width: Math.max(box.clientWidth, 320), height: 200, series: series,
        scales: { x: { time: true }, y: { range: countRange } },
        axes: [{}, { label: "per minute", size: 60, incrs: countIncrs }] }, data, box);
    });
  });
})();
