// Mercury's only script: modals, auto-advance through Round 1, focus and scrolling after swaps. No build step.
(function () {
  "use strict";
  const AUTO_KEY = "mercury-auto-advance";
  let lastAction = null;

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  function scrollTranscript() {
    const pane = document.querySelector(".transcript-pane");
    if (pane) pane.scrollTop = pane.scrollHeight;
  }

  function settle() {
    const panels = document.getElementById("panels");
    if (!panels) return;
    const action = panels.dataset.action + ":" + panels.dataset.status;
    const changed = action !== lastAction;
    lastAction = action;
    const auto = document.getElementById("auto-advance");
    if (auto) {
      auto.checked = localStorage.getItem(AUTO_KEY) === "1";
      auto.onchange = () => { localStorage.setItem(AUTO_KEY, auto.checked ? "1" : "0"); settle(); };
      const next = panels.querySelector("[data-auto-advance]");
      if (auto.checked && next) setTimeout(() => { if (document.contains(next) && !next.disabled) next.click(); }, 1500);
    }
    if (changed) {
      panels.querySelectorAll("dialog[data-autoshow]").forEach((d) => { if (!d.open) d.showModal(); });
      const field = panels.querySelector("#actions textarea, #actions button.primary");
      if (field && !document.querySelector("dialog[open]")) field.focus({ preventScroll: true });
    }
  }

  document.addEventListener("click", (event) => {
    const opener = event.target.closest("[data-open]");
    if (opener) openDialog(opener.dataset.open);
  });
  // A render pushed over the websocket never replaces a newer (or the same) version of the panels: the page may
  // already hold it from its own post's response.
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "panels") return;
    const incoming = event.detail.fragment.querySelector("#panels") || event.detail.fragment.firstElementChild;
    if (incoming && Number(incoming.dataset.version) <= Number(target.dataset.version)) event.detail.shouldSwap = false;
  });
  document.addEventListener("htmx:afterSettle", () => { settle(); scrollTranscript(); });
  document.addEventListener("htmx:oobAfterSwap", () => { settle(); scrollTranscript(); });
  // A share link carries its code after '#' (never sent to the server, so never in its logs): post it once.
  function openSharedGame() {
    const form = document.querySelector("form[data-share-link]");
    const code = decodeURIComponent(window.location.hash.slice(1));
    if (!form || !code) return;
    history.replaceState(null, "", window.location.pathname);
    form.querySelector("input[name=token]").value = code;
    form.submit();
  }
  document.addEventListener("DOMContentLoaded", () => { settle(); scrollTranscript(); openSharedGame(); });
})();
