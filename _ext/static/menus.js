/* The phone's menu and contents panels (pydata-sphinx-theme's <dialog>s): a tap on a link to a
   section of this page closes the panel, so the reader sees the section; and a panel closed
   with Escape or a tap outside gives the keyboard's focus back to the button that opened it. */
(() => {
  let opener = null;
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest(".primary-toggle, .secondary-toggle");
    if (toggle) opener = toggle;
  }, true);
  const wire = () => {
    for (const id of ["pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"]) {
      const dialog = document.getElementById(id);
      if (!dialog) continue;
      dialog.addEventListener("click", (event) => {
        const link = event.target.closest("a[href]");
        if (link && link.hash && link.pathname === window.location.pathname) dialog.close();
      });
      dialog.addEventListener("close", () => {
        if (opener && opener.isConnected) opener.focus();
      });
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
