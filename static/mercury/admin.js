// A draft's YAML editor (templates/admin/simulations/_draft_sections.html): a section opened from "Find in every
// section" shows the first match of the search in its text area, selected and scrolled to inside it, so the
// cursor and the browser's own find start there. The page itself stays where it is: the counts of matches in
// every section, above the editor, stay in sight.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const find = document.getElementById("draft-find");
  const area = document.getElementById("id_text");
  const term = find ? find.value.trim().toLowerCase() : "";
  if (!area || !term) {
    return;
  }
  const at = area.value.toLowerCase().indexOf(term);
  if (at < 0) {
    return;
  }
  // The height of the text before the match, as the text area wraps it: measured by showing only that text.
  const text = area.value;
  area.value = text.slice(0, at);
  const above = area.scrollHeight;
  area.value = text;
  area.scrollTop = Math.max(0, above - area.clientHeight / 2);
  area.setSelectionRange(at, at + term.length);
  area.focus({ preventScroll: true });
});
