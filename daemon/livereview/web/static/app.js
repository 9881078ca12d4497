// livereview web: the review page's behaviour, plain JavaScript, no dependency (DESIGN §11).
// Everything it inserts comes from this server, already escaped; text it writes itself goes
// through textContent. The CSP forbids inline script, so this file is the only code.
"use strict";

(function () {
  const review = document.getElementById("review");

  function csrf() {
    const meta = document.querySelector('meta[name="csrf"]');
    return meta ? meta.content : "";
  }

  function parse(html) {
    // DOMParser runs no script and loads nothing: the nodes are adopted afterwards.
    return new DOMParser().parseFromString(html, "text/html");
  }

  async function post(form, submitter) {
    const error = form.querySelector(".form-error");
    if (error) error.textContent = "";
    const data = new FormData(form, submitter || undefined);
    data.set("csrf", csrf());
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const response = await fetch(form.action, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      let answer = {};
      try { answer = await response.json(); } catch (_) { answer = {}; }
      if (!response.ok) {
        if (error) error.textContent = answer.error || ("failed: HTTP " + response.status);
        return false;
      }
      form.querySelectorAll("textarea").forEach((t) => { t.value = ""; });
      return true;
    } catch (exc) {
      if (error) error.textContent = "failed: " + exc;
      return false;
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  // --- files: diffs load when opened -------------------------------------------------
  function fileOf(element) { return element.closest("li.file"); }

  async function loadFile(file) {
    const diff = file.querySelector(".diff");
    if (diff.dataset.loaded) return diff;
    const url = review.dataset.base + "/file?path=" + encodeURIComponent(file.dataset.path);
    const response = await fetch(url, { credentials: "same-origin" });
    const doc = parse(await response.text());
    if (!response.ok) { // a diff too large, a file gone: the error page says which
      const note = document.createElement("p");
      note.className = "note";
      const why = doc.querySelector(".error-text");
      note.textContent = why ? why.textContent : "failed: HTTP " + response.status;
      diff.replaceChildren(note);
      return diff;
    }
    diff.replaceChildren(...Array.from(doc.body.childNodes).map((n) => document.adoptNode(n)));
    diff.dataset.loaded = "1";
    file.classList.add("loaded");
    return diff;
  }

  async function toggle(button) {
    const file = fileOf(button);
    const diff = file.querySelector(".diff");
    const open = button.getAttribute("aria-expanded") === "true";
    if (!open) await loadFile(file);
    button.setAttribute("aria-expanded", open ? "false" : "true");
    diff.hidden = open;
  }

  function newThreadForm(button) {
    const row = button.closest("tr");
    const next = row.nextElementSibling;
    if (next && next.classList.contains("new-thread-row")) {
      next.querySelector("textarea").focus();
      return;
    }
    const template = document.getElementById("new-thread");
    const made = template.content.firstElementChild.cloneNode(true);
    made.querySelector('input[name="path"]').value = fileOf(button).dataset.path;
    made.querySelector('input[name="line"]').value = button.dataset.line;
    made.querySelector(".new-thread-label").textContent = "New thread on line " + button.dataset.line;
    row.after(made);
    made.querySelector("textarea").focus();
  }

  // --- live updates: the server says when the review changed -------------------------
  function threadRowFor(table, anchorRow, key) {
    let next = anchorRow.nextElementSibling;
    while (next && next.classList.contains("new-thread-row")) next = next.nextElementSibling;
    if (next && next.classList.contains("thread-row") && next.dataset.for === key) {
      return next.firstElementChild;
    }
    const row = document.createElement("tr");
    row.className = "thread-row";
    row.dataset.for = key;
    const cell = document.createElement("td");
    cell.colSpan = 3;
    row.append(cell);
    anchorRow.after(row);
    return cell;
  }

  function place(thread) {
    if (!thread.dataset.path) {
      document.getElementById("general-threads").append(thread);
      return;
    }
    const file = Array.from(document.querySelectorAll("li.file"))
      .find((f) => f.dataset.path === thread.dataset.path);
    if (!file || !file.querySelector(".diff").dataset.loaded) return; // shown when opened
    const table = file.querySelector("table.code");
    const line = thread.dataset.line;
    const old = thread.dataset.oldLine;
    let anchor = null;
    let key = "";
    if (table && line) { anchor = table.querySelector('tr[data-new="' + Number(line) + '"]'); key = "new-" + Number(line); }
    else if (table && old) { anchor = table.querySelector('tr.del[data-old="' + Number(old) + '"]'); key = "old-" + Number(old); }
    if (anchor) threadRowFor(table, anchor, key).append(thread);
    else file.querySelector(".elsewhere").append(thread);
  }

  let refreshing = null;
  let again = false;

  async function refresh() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        const response = await fetch(review.dataset.base + "/live", { credentials: "same-origin" });
        if (!response.ok) return;
        const live = parse(await response.text()).getElementById("live");
        review.dataset.mark = live.dataset.mark;
        const status = live.querySelector("#review-status");
        const shown = document.getElementById("review-status");
        shown.className = status.className;
        shown.textContent = status.textContent;
        live.querySelectorAll(".open-counts li").forEach((li) => {
          const file = document.getElementById("file-" + li.dataset.file);
          if (file) file.querySelector(".open-threads").textContent = li.textContent;
        });
        live.querySelectorAll("section.thread").forEach((fresh) => {
          const existing = document.getElementById(fresh.id);
          if (!existing) { place(document.adoptNode(fresh)); return; }
          if (existing.dataset.sig === fresh.dataset.sig) return;
          existing.dataset.sig = fresh.dataset.sig;
          existing.className = fresh.className;
          existing.querySelector(".thread-body").replaceWith(document.adoptNode(fresh.querySelector(".thread-body")));
        });
        document.body.dataset.mark = review.dataset.mark; // tests wait on it
      } while (again);
    })();
    try { await refreshing; } finally { refreshing = null; }
  }

  function watch() {
    const url = review.dataset.base + "/events?since=" + encodeURIComponent(review.dataset.mark);
    const source = new EventSource(url);
    source.addEventListener("change", () => { refresh(); });
    source.addEventListener("open", () => { document.body.dataset.live = "1"; });
  }

  // --- keyboard: j/k between files, Enter opens (a button) ----------------------------
  function typing(target) {
    return target.closest("textarea, input, select, [contenteditable]");
  }

  function move(step) {
    const toggles = Array.from(document.querySelectorAll(".file-toggle"));
    if (!toggles.length) return;
    const at = toggles.indexOf(document.activeElement);
    const next = toggles[Math.max(0, Math.min(toggles.length - 1, at + step))];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }

  if (review) {
    document.addEventListener("click", (event) => {
      const toggleButton = event.target.closest(".file-toggle");
      if (toggleButton) { toggle(toggleButton); return; }
      const add = event.target.closest(".add-comment");
      if (add) { newThreadForm(add); return; }
      const cancel = event.target.closest(".cancel");
      if (cancel) { cancel.closest("tr").remove(); }
    });
    document.addEventListener("submit", async (event) => {
      const form = event.target.closest("form.js-post");
      if (!form) return;
      event.preventDefault();
      const ok = await post(form, event.submitter);
      if (!ok) return;
      if (form.classList.contains("new-thread-form")) form.closest("tr").remove();
      await refresh();
    });
    document.addEventListener("keydown", (event) => {
      // Not in the verdict's box: which verdict is a choice of button, never a shortcut.
      const box = event.target.closest("form.js-post:not(.verdict-form) textarea");
      if (box && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault(); // Ctrl+Enter sends, as on the hosts' pages
        const form = box.closest("form");
        form.requestSubmit(form.querySelector('button[type="submit"]'));
        return;
      }
      if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
      if (event.key === "j") { move(1); event.preventDefault(); }
      if (event.key === "k") { move(-1); event.preventDefault(); }
    });
    watch();
  }
  document.body.dataset.ready = "1";
})();
