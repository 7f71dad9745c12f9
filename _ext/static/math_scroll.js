/* Display formulas wider than their box scroll sideways (replicaplan.css); a clipped formula
   looks complete, so each one that overflows gets the class "scrolls" (a fading right edge,
   removed once scrolled to its end) and a tab stop with a label, so a keyboard can reach and
   scroll it. Run once MathJax has typeset the page, and again when the window is resized. */
(() => {
  const atEnd = (box) => box.classList.toggle(
    "at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
  const mark = () => {
    for (const box of document.querySelectorAll('mjx-container[display="true"]')) {
      const overflows = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("scrolls", overflows);
      if (overflows) {
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", "formula, scrolls sideways");
        if (!box.dataset.scrollWatched) {  // one listener per formula, however many resizes
          box.dataset.scrollWatched = "1";
          box.addEventListener("scroll", () => atEnd(box), { passive: true });
        }
        atEnd(box);
      } else if (box.getAttribute("role") === "region") {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
  };
  const start = () => {
    const ready = window.MathJax && MathJax.startup && MathJax.startup.promise;
    (ready || Promise.resolve()).then(mark);
    let timer;
    window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 150); });
  };
  if (document.readyState === "complete") start(); else window.addEventListener("load", start);
})();
