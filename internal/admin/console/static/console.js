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
