// Mercury's only script: modals, auto-advance through Round 1, focus, the transcript's scrolling, drafts kept in
// the browser, keyboard shortcuts. No build step. Every page works without it (plain posts), only less smoothly.
(function () {
  "use strict";
  const AUTO_KEY = "mercury-auto-advance";
  const WIDE = window.matchMedia("(min-width: 52rem)");
  let lastAction = null;
  let following = true; // the reader is at the end of the transcript: new entries scroll into view

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  // --- the transcript: follow new entries unless the reader has scrolled up (then offer a pill) ----------------
  function pane() { return document.querySelector(".transcript-pane"); }
  function atEnd(p) { return p.scrollHeight - p.scrollTop - p.clientHeight < 48; }
  function toEnd() {
    const p = pane();
    if (!p) return;
    p.scrollTop = p.scrollHeight;
    following = true;
    const pill = document.getElementById("new-messages");
    if (pill) pill.hidden = true;
  }
  function afterNewContent() {
    const p = pane();
    if (!p) return;
    if (following) toEnd();
    else if (p.scrollHeight > p.clientHeight) {
      const pill = document.getElementById("new-messages");
      if (pill) pill.hidden = false;
    }
  }
  document.addEventListener("scroll", (event) => {
    const p = pane();
    if (p && event.target === p) {
      following = atEnd(p);
      if (following) { const pill = document.getElementById("new-messages"); if (pill) pill.hidden = true; }
    }
  }, true);

  // --- drafts: what the student types is kept per game and step, across reloads and other tabs' moves ---------
  // Per tab (sessionStorage): a reload keeps the tab's draft, and another tab's move (or its own draft of the same
  // message) never overwrites it. The box is re-filled whenever the page loads or the panels are re-drawn at that
  // step; any page's box with a data-draft key takes part (a practice conversation's chat has no panels).
  function draftKey(box) { return "mercury-draft:" + box.dataset.draft; }
  function restoreDrafts() {
    document.querySelectorAll("textarea[data-draft]").forEach((box) => {
      const kept = sessionStorage.getItem(draftKey(box));
      if (kept && !box.value) box.value = kept;
    });
  }
  document.addEventListener("input", (event) => {
    const box = event.target.closest && event.target.closest("textarea[data-draft]");
    if (!box) return;
    if (box.value) sessionStorage.setItem(draftKey(box), box.value);
    else sessionStorage.removeItem(draftKey(box));
  });
  // A move the server took (200) ends its drafts (a form may have several boxes); a refused one (409, 429, 400)
  // keeps them for another try.
  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form");
    if (!form || !event.detail.xhr || event.detail.xhr.status !== 200) return;
    form.querySelectorAll("textarea[data-draft]").forEach((box) => {
      sessionStorage.removeItem(draftKey(box));
      if (form.hasAttribute("data-clear-on-send")) box.value = "";  // a chat's box stays on the page: empty it
    });
  });

  // --- moves over the game's websocket while it is open: no request of their own, and the answer (the notice,
  // then the game's render) comes on the socket. A post otherwise (opening, reconnecting, a proxy without
  // websockets). Buttons stay disabled until the notice answers this very move (its form's key).
  let gameSocket = null;
  let pendingMove = null;
  document.addEventListener("htmx:wsOpen", (event) => { gameSocket = event.detail.socketWrapper; });
  document.addEventListener("htmx:wsClose", () => {
    gameSocket = null;
    if (pendingMove) { releaseMove(pendingMove); pendingMove = null; }  // the reconnect's render shows the game
  });
  function releaseMove(move) {
    move.form.removeAttribute("aria-busy");
    move.form.querySelectorAll("button").forEach((button) => { button.disabled = false; });
  }
  document.addEventListener("htmx:configRequest", (event) => {
    const form = event.detail.elt;
    if (!gameSocket || !(form instanceof HTMLFormElement) || !form.hasAttribute("data-socket-move")) return;
    // A chosen file cannot travel in a text frame: that move is posted.
    if ([...form.querySelectorAll("input[type=file]")].some((input) => input.files && input.files.length)) return;
    event.preventDefault();  // no post: the socket carries the same fields
    const fields = {};
    event.detail.formData.forEach((value, name) => {  // a field the form holds several times (ticked boxes): a list
      if (typeof value !== "string") return;
      fields[name] = name in fields ? [].concat(fields[name], value) : value;
    });
    const box = form.querySelector("textarea[data-draft]");
    pendingMove = { form, idem: fields.idem || "", box, clear: form.hasAttribute("data-clear-on-send") };
    form.setAttribute("aria-busy", "true");
    form.querySelectorAll("button").forEach((button) => { button.disabled = true; });
    gameSocket.send(JSON.stringify({ move: fields }));
  });
  document.addEventListener("htmx:wsAfterMessage", () => {
    const notice = document.getElementById("notice");
    if (!pendingMove || !notice || notice.dataset.answers !== pendingMove.idem) return;
    const move = pendingMove;
    pendingMove = null;
    if (notice.dataset.taken !== "1") {
      releaseMove(move);  // refused: the student's text is still in the box, ready for another try
      return;
    }
    // Taken: its draft is done with, as after a post's 200. The form stays disabled: the game's render, next on
    // the socket, replaces it.
    if (move.box) {
      sessionStorage.removeItem(draftKey(move.box));
      if (move.clear) { move.box.value = ""; releaseMove(move); }  // a chat's box stays on the page
    }
  });

  // --- focus: after each step, on the new thing to do, unless the reader is elsewhere on purpose -------------
  function primary(panels) {
    return panels.querySelector("#actions textarea, #actions input[type=radio]:checked, #actions button.primary, #actions a.primary")
      || document.getElementById("actions");
  }
  function focusLost() {
    const active = document.activeElement;
    return !active || active === document.body || !document.contains(active) || active.closest("#panels");
  }

  function settle() {
    restoreDrafts();
    const panels = document.getElementById("panels");
    if (!panels) return;
    const action = panels.dataset.action + ":" + panels.dataset.status + ":" + panels.dataset.version;
    const changed = action !== lastAction;
    lastAction = action;
    panels.querySelectorAll("details[data-wide-open]").forEach((d) => {
      const remembered = sessionStorage.getItem("mercury-open:" + d.id);
      d.open = remembered === null ? WIDE.matches : remembered === "1";
      d.ontoggle = () => sessionStorage.setItem("mercury-open:" + d.id, d.open ? "1" : "0");
    });
    const auto = document.getElementById("auto-advance");
    if (auto) {
      auto.checked = localStorage.getItem(AUTO_KEY) === "1";
      auto.onchange = () => { localStorage.setItem(AUTO_KEY, auto.checked ? "1" : "0"); settle(); };
      const next = panels.querySelector("[data-auto-advance]");
      if (auto.checked && next) setTimeout(() => { if (document.contains(next) && !next.disabled) next.click(); }, 1500);
    }
    if (changed) {
      const modal = panels.querySelector("dialog[data-autoshow]:not([open])");
      if (modal && !document.querySelector("dialog[open]")) modal.showModal();
      else if (!document.querySelector("dialog[open]") && focusLost()) {
        const target = primary(panels);
        if (target) target.focus();
      }
    }
  }

  // A review prints whole: every folded round and issue opens for the printout.
  window.addEventListener("beforeprint", () => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-print]")) window.print();
    const opener = event.target.closest("[data-open]");
    if (opener) openDialog(opener.dataset.open);
    if (event.target.closest("#new-messages")) toEnd();
  });
  // Closing a dialog hands focus to the move itself, not back to the top of the page.
  document.addEventListener("close", (event) => {
    if (event.target.tagName !== "DIALOG") return;
    setTimeout(() => {
      if (!focusLost()) return;
      const panels = document.getElementById("panels");
      const target = panels && primary(panels);
      if (target) target.focus();
    }, 0);
  }, true);
  // The vote's confirm button says what it will cast.
  document.addEventListener("change", (event) => {
    if (!event.target.matches("#vote-modal input[name=ballot]")) return;
    const confirm = document.querySelector("#vote-modal [data-confirm-vote]");
    if (confirm) confirm.textContent = "Confirm my vote: " + event.target.value.toUpperCase();
  });
  // Ctrl+Enter (or Cmd+Enter) sends the box's form.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    const box = event.target.closest && event.target.closest("textarea");
    if (box && box.form) { event.preventDefault(); box.form.requestSubmit(); }
  });
  // A render pushed over the websocket never replaces a newer (or the same) version of the panels: the page may
  // already hold it from its own post's response. An update may also send only the panels' regions that changed
  // (each carrying its version; the move's section last): they are held to the same rule, and the panels take
  // their state (action, status, version) from the move's section once it is in.
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const target = event.detail.target;
    const panels = document.getElementById("panels");
    if (!target || !panels || !(target === panels || panels.contains(target))) return;
    const incoming = event.detail.fragment.querySelector("#" + target.id) || event.detail.fragment.firstElementChild;
    if (incoming && incoming.dataset.version !== undefined
        && Number(incoming.dataset.version) <= Number(panels.dataset.version)) event.detail.shouldSwap = false;
  });
  function panelsFromMove() {
    const panels = document.getElementById("panels");
    const move = document.getElementById("actions");
    if (!panels || !move || move.dataset.version === undefined || !panels.contains(move)) return;
    for (const key of ["action", "status", "version"]) panels.dataset[key] = move.dataset[key];
  }
  document.addEventListener("htmx:afterSettle", () => { settle(); afterNewContent(); });
  document.addEventListener("htmx:oobAfterSwap", () => { panelsFromMove(); settle(); afterNewContent(); });
  // A share link carries its code after '#' (never sent to the server, so never in its logs): post it once.
  function openSharedGame() {
    const form = document.querySelector("form[data-share-link]");
    const code = decodeURIComponent(window.location.hash.slice(1));
    if (!form || !code) return;
    history.replaceState(null, "", window.location.pathname);
    form.querySelector("input[name=token]").value = code;
    form.submit();
  }
  document.addEventListener("DOMContentLoaded", () => { settle(); toEnd(); openSharedGame(); });
})();
