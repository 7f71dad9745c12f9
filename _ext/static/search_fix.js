/* Search summaries a reader can read: Sphinx builds each snippet from the page's text, where
   formulas are still raw TeX ("\(\mu^\ast\)") and the text of adjacent paragraphs runs
   together ("discountThe"). Before Sphinx reads a page for its snippet, formulas, code and
   equation numbers are dropped and every block ends with a space. Loaded with "defer", so it
   runs after searchtools.js has defined Search and before the search starts. */
(() => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".math, .eqno, .cell_input, .highlight, mjx-container, .headerlink")
      .forEach((element) => element.remove());
    page.querySelectorAll("p, li, dt, dd, h1, h2, h3, h4, h5, td, th, figcaption, caption, div")
      .forEach((element) => element.append(" "));
    return original(page.documentElement.outerHTML, anchor).replace(/\s+/g, " ");
  };
})();
