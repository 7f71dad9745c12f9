/* Search summaries a reader can read: Sphinx builds each snippet from the page's text, where
   formulas are still raw TeX ("\(\mu^\ast\)"), the header's buttons and the page's contents
   come first, and the text of adjacent paragraphs runs together ("discountThe"). Before Sphinx
   reads a page for its snippet, the chrome, code and equation numbers are dropped, formulas are
   turned into their plain symbols (μ*, ρ̄, λ), and every block ends with a space. Loaded with
   "defer", so it runs after searchtools.js has defined Search and before the search starts. */
(() => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    // the page's chrome (header buttons, contents) is not its text
    page.querySelectorAll(".bd-header-article, .header-article, .bd-sidebar-secondary, "
      + "#pst-secondary-sidebar, nav, .toc, .eqno, .cell_input, .highlight, .headerlink")
      .forEach((element) => element.remove());
    // a formula leaves its plain symbols, not a hole in the sentence
    page.querySelectorAll(".math, mjx-container").forEach((element) => {
      const tex = element.textContent
        .replace(/\\text\{([^}]*)\}|\\mathrm\{([^}]*)\}/g, "$1$2")
        .replace(/\\bar\\rho/g, "ρ̄").replace(/\\ast/g, "*").replace(/\\mu/g, "μ")
        .replace(/\\lambda/g, "λ").replace(/\\rho/g, "ρ").replace(/\\tau/g, "τ")
        .replace(/\\nu/g, "ν").replace(/\\cdot/g, "·").replace(/\\[()\[\]]/g, "")
        .replace(/\\[a-zA-Z]+/g, " ").replace(/[{}^_$]/g, "");
      element.replaceWith(" " + tex.trim() + " ");
    });
    page.querySelectorAll("p, li, dt, dd, h1, h2, h3, h4, h5, td, th, figcaption, caption, div")
      .forEach((element) => element.append(" "));
    return original(page.documentElement.outerHTML, anchor).replace(/\s+/g, " ");
  };
})();
