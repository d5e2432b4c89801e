// memory-tool ui: the page's only script (served from the package; the CSP allows no other).
// It adds comfort, never function: every form works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // A project picker shows its project as soon as one is chosen.
  for (const select of document.querySelectorAll("select.autosubmit")) {
    select.addEventListener("change", () => select.form.submit());
  }
  // Archiving asks first.
  for (const form of document.querySelectorAll("form.confirm")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm || "Sure?")) event.preventDefault();
    });
  }
});
