// The report's behaviour: open a cell (copy its transcript out of its template element), follow
// #cell-... links, and filter cells and matrices. Text is never parsed as HTML here: the
// transcripts were escaped when the file was written and are cloned as nodes.
(function () {
  "use strict";
  const cells = Array.from(document.querySelectorAll("details.cell"));

  function materialise(cell) {
    const body = cell.querySelector(":scope > .body");
    const tpl = cell.querySelector(":scope > template");
    if (body && tpl && !body.hasChildNodes()) body.appendChild(tpl.content.cloneNode(true));
  }

  cells.forEach(function (cell) {
    cell.addEventListener("toggle", function () { if (cell.open) materialise(cell); });
  });

  // The characters the report shows as escapes (harness/report/controls.py): parsing a body
  // turns its `\u202e` back into the character, so indenting it escapes them again. (Lone
  // surrogates and C0 controls JSON.stringify escapes itself.)
  const UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff]/g;
  function visible(text) {
    return text.replace(UNSAFE, function (c) {
      return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
    });
  }

  // A fragment as text: `%E0%A4%A` (a truncated or hand-edited link) is not valid
  // percent-encoding and `decodeURIComponent` throws URIError; it is then taken as written.
  function fragment() {
    const raw = location.hash.slice(1);
    try { return decodeURIComponent(raw); } catch (e) { return raw; }
  }

  // Raw bodies are written compact; indent them when their <details> is first opened.
  document.addEventListener("toggle", function (event) {
    const raw = event.target;
    if (!raw.classList || !raw.classList.contains("raw") || !raw.open) return;
    raw.querySelectorAll("pre.json:not(.indented)").forEach(function (pre) {
      pre.classList.add("indented");
      try { pre.textContent = visible(JSON.stringify(JSON.parse(pre.textContent), null, 2)); }
      catch (e) { /* not JSON: shown as it came */ }
    });
  }, true);

  function cellFor(id) {
    // `cell-x--provider-call-3` and `cell-x--provider-q1` live inside `cell-x--provider`.
    const match = id.match(/^(.*?)(-call-\d+|-q\d+)?$/);
    return cells.find(function (c) { return c.id === match[1]; });
  }

  // `#cell-…` opens that cell and scrolls to it; `#focus=cell-…` shows that cell alone
  // (a link to one transcript, and a page that needs no scrolling); `#q=words` filters.
  function follow() {
    const hash = fragment();
    if (hash.startsWith("q=")) {
      textInput.value = hash.slice(2);
      document.body.classList.remove("focus");
      apply();
      return;
    }
    const focus = hash.startsWith("focus=");
    const id = focus ? hash.slice(6) : hash;
    document.body.classList.toggle("focus", focus);
    if (!focus) apply();
    if (!id.startsWith("cell-")) return;
    const cell = cellFor(id);
    if (!cell) return;
    if (focus) cells.forEach(function (c) { c.hidden = c !== cell; });
    cell.hidden = false;
    materialise(cell);
    cell.open = true;
    if (focus) return;
    const target = document.getElementById(id) || cell;
    target.scrollIntoView({block: "start"});
    cell.classList.add("flash");
    setTimeout(function () { cell.classList.remove("flash"); }, 1200);
  }
  window.addEventListener("hashchange", follow);

  // ---- filters --------------------------------------------------------------------------
  const providerBoxes = Array.from(document.querySelectorAll(".f-provider"));
  const verdictSelect = document.getElementById("f-verdict");
  const textInput = document.getElementById("f-text");
  const count = document.getElementById("f-count");

  // `fail:l12`, `provider:openai`, `verdict:fail` match whole tokens; other words anywhere.
  function matches(search, term) {
    if (term.indexOf(":") === -1) return search.indexOf(term) !== -1;
    return (" " + search + " ").indexOf(" " + term + " ") !== -1;
  }

  function apply() {
    const providers = new Set(providerBoxes.filter(function (b) { return b.checked; })
      .map(function (b) { return b.value; }));
    const verdict = verdictSelect.value;
    const terms = textInput.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    const visible = new Set();
    cells.forEach(function (cell) {
      const d = cell.dataset;
      const ok = providers.has(d.provider)
        && (!verdict || (verdict === "drift" ? d.drift === "yes" : d.verdict === verdict))
        && terms.every(function (t) { return matches(d.search, t); });
      cell.hidden = !ok;
      if (ok) { shown += 1; visible.add(cell.id); }
    });
    count.textContent = shown + " of " + cells.length + " cells";
    document.querySelectorAll("[data-col]").forEach(function (el) {
      el.hidden = !providers.has(el.dataset.col);
    });
    document.querySelectorAll("#matrix tbody tr").forEach(function (row) {
      const chips = Array.from(row.querySelectorAll(".chip"));
      chips.forEach(function (chip) { chip.hidden = !visible.has(chip.dataset.target); });
      row.hidden = !chips.some(function (chip) { return !chip.hidden; });
    });
  }

  providerBoxes.forEach(function (b) { b.addEventListener("change", apply); });
  verdictSelect.addEventListener("change", apply);
  let pending = null;
  textInput.addEventListener("input", function () {
    clearTimeout(pending);
    pending = setTimeout(apply, 120);
  });
  document.querySelectorAll("a[data-filter]").forEach(function (link) {
    link.addEventListener("click", function () {
      textInput.value = link.dataset.filter;
      verdictSelect.value = "";
      apply();
    });
  });

  follow();
  // When the page was ready, in ms since navigation: the browser test and the benchmark read it.
  document.body.dataset.readyMs = String(Math.round(performance.now()));
})();
