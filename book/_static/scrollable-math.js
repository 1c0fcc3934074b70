/* A display formula wider than its column scrolls inside its own box (book.css);
   such a box (KaTeX's .katex-display) joins the Tab order so that a keyboard can scroll it, as the
   theme does for wide code blocks. Loaded on the pages with display math
   (book/_ext/katex_math.py). */
(function () {
  "use strict";
  function update() {
    document.querySelectorAll(".bd-article div.math > .katex-display").forEach(function (box) {
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide) {
        box.tabIndex = 0;
      } else {
        box.removeAttribute("tabindex");
      }
    });
  }
  var pending = null;
  function later() {
    clearTimeout(pending);
    pending = setTimeout(update, 200);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", update);
  } else {
    update();
  }
  window.addEventListener("resize", later);
  if (document.fonts) {
    document.fonts.ready.then(update);
  }
})();
