// Message Lab's set-up: the quality-gate boxes follow the rounds chosen. A gate after a round the run will not reach
// is disabled (so not sent) and hidden; raising the rounds again brings it back as it was ticked. The server leaves
// such gates out as well, so the form works the same without this script. No inline script: the CSP forbids it.
(function () {
  "use strict";
  function follow(group) {
    const rounds = Number.parseInt(group.querySelector("input[name=rounds]").value, 10);
    group.querySelectorAll("input[name=gates]").forEach((box) => {
      const beyond = Number.isInteger(rounds) && rounds > 0 && Number(box.value) > rounds;
      box.disabled = beyond;
      const label = box.closest("label");
      if (label) label.hidden = beyond;
    });
  }
  document.addEventListener("input", (event) => {
    const group = event.target.matches("input[name=rounds]") && event.target.closest("[data-gates-follow-rounds]");
    if (group) follow(group);
  });
  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-gates-follow-rounds]").forEach(follow);
  });
})();
