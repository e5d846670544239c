// Page keys (st.button shortcuts) and the widgets around them (nothing typed into a widget
// writes, and no key writes on an item that is not on screen).
//
// 1. Keys pause while any widget has the focus. Streamlit's shortcuts (hotkeys-js, listening on the
//    document) skip only an INPUT, TEXTAREA or SELECT target: a multiselect's chip, a slider's thumb
//    or a radio took letters as shortcuts (typing a judge name after clicking a chip wrote a "wrong"
//    flag). A listener on the body element (below the document, above React's root, so the widget's own keys
//    still work) stops every key whose target or focus is inside a widget from reaching them. A
//    banner says the keys wait; Enter in a one-line field, Escape in any widget, a radio, checkbox or
//    toggle choice and a pick from a list give the focus back to the page.
// 2. A key held down acts once (key repeat is dropped).
// 3. A key that writes acts only on the item on screen when it was pressed. Its button's key ends
//    with "__writes", the same on every item (a key naming the item made every J draw the buttons anew);
//    the bar's "Item i of N" is stamped with the item its buttons write on. While the page is busy
//    (a key or click just sent, or a run going on: the screen may be about to change), such a key is
//    held, bound to the item on screen when it was pressed (a key pressed after the next item is on
//    screen is that item's, even while the run that drew it goes on); once the page is idle it is
//    pressed if that item is still on screen and its button is on, else nothing is written and the
//    note says why. The first key after Enter in a field (the
//    name) is held the same way instead of being lost on a button still off. The page checks again
//    on its side (pages/audit.py): a click sent from a screen whose item is no longer shown, or that
//    had not drawn the item yet, writes nothing.
// 4. "?" shows the keys of the page (the shortcut buttons' own labels); "?" or Esc closes it.
// 5. "E" puts the focus in the note field (the Audit page's), to write a note from the keyboard;
//    Enter or Esc gives the keys back.
// 6. window.__lsqaKeysReady() says whether a key pressed now acts at once: no key held, the page not
//    busy, and the item on screen long enough (SETTLE_MS). The browser tests wait for it instead of a
//    fixed time.
// 7. The Audit page's desk (lsqa.dashboard.audit_desk: its bar and item, one block) is pressed through
//    the dashboard's HTTP door, not a Streamlit run: a click or key on one of its buttons posts the
//    button's key, the item whose cards are on screen and the note typed; the answer is the desk drawn
//    again, put in place of the old one. While a press is out the page is busy (a key is held, as
//    during a run). When the queue ends, or a panel that follows the item is open, the desk's hidden
//    sync button runs the page's fragment, which draws what the desk's answer cannot (the next
//    queues, the panels).
// (No text here may look like an HTML tag, even in a comment: st.html's sanitizer drops the script.)
(() => {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const win = doc.defaultView || window;
  if (win.__lsqaKeys) return;
  win.__lsqaKeys = true;
  const CHOICE_TYPES = ["radio", "checkbox", "range"];
  const isChoice = (el) => el && el.tagName === "INPUT" && CHOICE_TYPES.includes(el.type);
  const isField = (el) => el && !isChoice(el) && (el.tagName === "INPUT" || el.tagName === "TEXTAREA"
    || el.tagName === "SELECT" || el.isContentEditable);
  // Every part of a widget that can hold the focus: its input, a multiselect's chips and their "x",
  // a select's list (drawn in a popover outside the widget), a slider's thumb.
  const WIDGETS = ['[data-testid="stMultiSelect"]', '[data-testid="stSelectbox"]', '[data-testid="stTextInput"]',
    '[data-testid="stTextArea"]', '[data-testid="stNumberInput"]', '[data-testid="stSlider"]',
    '[data-testid="stSelectSlider"]', '[data-testid="stDateInput"]', '[data-testid="stTimeInput"]',
    '[data-testid="stChatInput"]', '[data-testid="stRadio"]', '[data-testid="stCheckbox"]',
    '[data-baseweb="popover"]', '[data-baseweb="tag"]', '[data-tag]', '[role="listbox"]', '[role="option"]', '[role="slider"]',
    '[role="combobox"]', '[role="radiogroup"]'].join(",");
  const inWidget = (el) => !!el && el.nodeType === 1 && el !== doc.body && el !== doc.documentElement
    && (isField(el) || isChoice(el) || !!(el.closest && el.closest(WIDGETS)));

  const leave = (el, ms) => setTimeout(() => { if (doc.activeElement === el) el.blur(); banner(); }, ms);

  doc.addEventListener("keydown", (e) => {
    const el = e.target;
    if (e.key === "Escape" && inWidget(el)) leave(el, 0);
    // Enter: Streamlit reads it first (it saves the text, or picks the highlighted option).
    // A one-line text field gives the focus back at once (a key pressed next acts, or is held while
    // the page takes the text in); a list keeps it 60 ms, for its pick.
    else if (e.key === "Enter" && el.tagName === "INPUT" && el.closest(".lsqa-desk")) leave(el, 0); // kept in the page
    else if (e.key === "Enter" && el.tagName === "INPUT") {
      sent(); // Enter starts a run (the text is taken in): until it is over, a write key is held
      leave(el, el.closest('[data-testid="stTextInput"]') ? 0 : 60);
    }
  }, true);
  // A choice made with the mouse (radio, checkbox, toggle, slider): the control keeps no focus.
  let pointerAt = 0;
  doc.addEventListener("pointerdown", () => { pointerAt = Date.now(); }, true);
  const dropChoiceFocus = () => { const a = doc.activeElement; if (isChoice(a)) a.blur(); banner(); };
  doc.addEventListener("focusin", (e) => {
    if (isChoice(e.target) && Date.now() - pointerAt < 1000) [0, 120, 400].forEach((ms) => setTimeout(dropChoiceFocus, ms));
  }, true);
  doc.addEventListener("change", (e) => { if (isChoice(e.target)) [0, 120, 400].forEach((ms) => setTimeout(dropChoiceFocus, ms)); }, true);
  doc.addEventListener("click", (e) => {
    const el = e.target;
    if (el.closest && el.closest('[role="option"]')) {
      const field = doc.activeElement;
      if (field) leave(field, 60);
    } else if (isChoice(el) || (el.closest && el.closest('[data-baseweb="radio"], [data-baseweb="checkbox"]'))) {
      setTimeout(() => { const a = doc.activeElement; if (isChoice(a)) a.blur(); }, 0);
    }
    const deskButton = el.closest && el.closest(".lsqa-desk button[data-lsqa-key]");
    if (deskButton) { e.preventDefault(); e.stopPropagation(); if (!deskButton.disabled) pressDesk(deskButton); }
    else if (el.closest && el.closest(".st-key-lsqa_keys button")) sent();
  }, true);

  // ------------------------------------------------------------------ notes at the foot of the page
  const box = (id, role, css) => {
    const d = doc.createElement("div");
    d.id = id;
    d.setAttribute("role", role);
    d.style.cssText = "position:fixed;left:50%;transform:translateX(-50%);z-index:100000;border-radius:6px;"
      + "padding:6px 12px;font:14px sans-serif;display:none;box-shadow:0 2px 6px rgba(0,0,0,.2);" + css;
    doc.body.appendChild(d);
    return d;
  };
  const paused = box("lsqa-keys-paused", "status", "bottom:12px;background:#fff3bf;color:#5c4400;border:1px solid #e0b400");
  paused.textContent = "Keys are paused while a field or list has the focus: press Enter or Esc to use them.";
  const note = box("lsqa-keys-note", "alert", "bottom:52px;background:#ffe3e3;color:#7a1010;border:1px solid #e03131");
  let noteTimer = 0;
  const say = (text, ms = 6000) => {
    note.textContent = text;
    note.style.display = text ? "block" : "none";
    clearTimeout(noteTimer);
    if (text) noteTimer = setTimeout(() => { note.style.display = "none"; }, ms);
  };
  const keysHere = doc.getElementsByClassName("st-key-lsqa_keys"); // live: cheap to ask every few ms
  const pageHasKeys = () => keysHere.length > 0;
  function banner() {
    paused.style.display = pageHasKeys() && inWidget(doc.activeElement) ? "block" : "none";
  }
  doc.addEventListener("focusin", banner, true);
  doc.addEventListener("focusout", () => setTimeout(banner, 0), true);

  // ------------------------------------------------------------ which item a key writes on
  const keyButton = (key) => {
    const want = ("shortcut " + key).toLowerCase();
    const kbd = Array.from(doc.querySelectorAll(".st-key-lsqa_keys kbd[aria-label]"))
      .find((k) => k.getAttribute("aria-label").toLowerCase() === want);
    return kbd ? kbd.closest("button") : null;
  };
  // The item a decision button writes on: the bar's stamp, for a button whose key ends with "__writes"
  // (none: the button writes nothing).
  const itemOf = (button) => {
    const holder = button && button.closest('[class*="st-key-"]');
    const writes = button && button.hasAttribute("data-lsqa-writes");
    if (!writes && (!holder || !/(?:^|\s)st-key-\S*__writes(?:\s|$)/.test(holder.className))) return null;
    const bar = doc.querySelector(".st-key-lsqa_keys [data-lsqa-item]");
    return bar ? bar.getAttribute("data-lsqa-item") : null;
  };
  // The item whose question and answers are on screen: every card stamped with an item (data-lsqa-item),
  // and the bar, name the same one. None while they disagree: between two items the decision bar of the
  // next one is drawn before its question and answers.
  const cardsItem = () => {
    const ids = new Set(Array.from(doc.querySelectorAll("[data-lsqa-item]")).map((e) => e.getAttribute("data-lsqa-item")));
    return ids.size === 1 ? Array.from(ids)[0] : null;
  };
  // Since when that item is on screen: nobody reads an item in less than SETTLE_MS, so a key pressed
  // sooner was meant for the item before it (a second key 50 ms after a decision). The item changes
  // only in a run: it is looked at as the run draws (the stamped elements added, below), when a run
  // ends and when a key comes (no polling). The run goes on after the item is drawn (the panels
  // below it, the next item read ahead: longer on a busy server), so its end is not when the item
  // came. A change first seen when a key comes happened after the last key or click sent and the
  // last run's end, whichever is later (the page's first item: long before).
  const SETTLE_MS = 150;
  let seenItem = null, seenBefore = null, seenSince = 0, lastSent = 0, lastRunEnd = 0;
  const look = (atKey) => {
    const now = pageHasKeys() ? cardsItem() : null;
    if (now !== seenItem) {
      if (seenItem) seenBefore = seenItem;
      seenItem = now;
      seenSince = atKey ? Math.max(lastSent, lastRunEnd) : Date.now();
    }
    return now;
  };
  // The item a key pressed now is meant for: the one on screen, once it has been there SETTLE_MS; the
  // one before it if it came sooner; while the screen is between two items, the one on screen when the
  // last key was sent (the screen is leaving it: such a key writes nothing, unless it stays).
  const meantFor = (seen) => (!seen ? itemAtSend : (Date.now() - seenSince < SETTLE_MS ? seenBefore : seen));
  const scriptState = () => {
    const app = doc.querySelector("[data-test-script-state]");
    return app ? app.getAttribute("data-test-script-state") : "";
  };
  // Busy: a run is going on, or a key or click was just sent and its run has not started yet.
  // Busy also for SETTLE_MS after the run: the next item may be drawn, but nobody has read it yet. A
  // key held while busy after a key or Enter is for the item on screen when that was sent.
  let sentAt = 0, runSeen = false, quietUntil = 0, itemAtSend = null;
  function sent() { sentAt = lastSent = Date.now(); runSeen = false; itemAtSend = cardsItem(); }
  const busy = () => deskOut || scriptState() === "running" || (sentAt && !runSeen && Date.now() - sentAt < 1500)
    || Date.now() < quietUntil;
  let held = null; // {key, item, at}

  // ------------------------------------------------------------------ the Audit desk's presses (7.)
  let deskOut = false;
  const syncPage = () => { const b = doc.querySelector(".st-key-audit_sync button"); if (b) b.click(); };
  async function pressDesk(button) {
    const desk = button.closest(".lsqa-desk");
    if (!desk || deskOut) return;
    const field = desk.querySelector(".lsqa-note-field");
    const note = field ? field.value : "";
    deskOut = true;
    let answer = null;
    try {
      const r = await fetch(desk.getAttribute("data-lsqa-door"), {method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({desk: desk.getAttribute("data-lsqa-desk"), button: button.getAttribute("data-lsqa-key"),
          on_screen: cardsItem(), note})});
      answer = await r.json().catch(() => ({error: "the dashboard answered " + r.status}));
      if (!r.ok) { say("Not saved: " + (answer.error || r.status) + "; nothing was written."); answer = null; }
    } catch (err) {
      say("Not saved: the dashboard did not answer (" + err + "). Nothing was written; press it again.");
    } finally {
      deskOut = false;
    }
    if (answer) {
      const now = doc.querySelector(".lsqa-desk");
      const holder = doc.createElement("div");
      holder.innerHTML = answer.html;
      const fresh = holder.firstElementChild;
      const newer = !now || Number(fresh.getAttribute("data-lsqa-drawn")) > Number(now.getAttribute("data-lsqa-drawn"));
      if (now && newer) {
        const open = new Set(Array.from(now.querySelectorAll("details[data-lsqa-keep][open]"))
          .map((d) => d.getAttribute("data-lsqa-keep")));
        fresh.querySelectorAll("details[data-lsqa-keep]").forEach((d) => { if (open.has(d.getAttribute("data-lsqa-keep"))) d.open = true; });
        now.replaceWith(fresh);
        const kept = fresh.querySelector(".lsqa-note-field");
        if (answer.note === "keep" && kept) kept.value = note;
        if (answer.ended || fresh.getAttribute("data-lsqa-follow") === "1") syncPage();
      }
    }
    quietUntil = Date.now() + SETTLE_MS;
    setTimeout(release, SETTLE_MS);
  }

  function release() {
    if (!held || busy()) return;
    const h = held;
    held = null;
    const button = keyButton(h.key);
    const now = itemOf(button);
    if (!button || !h.item || now !== h.item || look(false) !== h.item) {
      say(`Not saved: the item changed under your key (${h.key.toUpperCase()} was pressed on the item before). `
        + "Nothing was written; press it again for this item.");
    } else if (button.disabled) {
      say(`${h.key.toUpperCase()} is off for this item: nothing was written.`);
    } else {
      say("");
      if (!button.hasAttribute("data-lsqa-key")) sent(); // the desk's press marks itself busy
      button.click();
    }
  }
  // The item's stamped elements (decision bar, cards) come and go with the item: look when one does.
  const stamped = (nodes) => Array.prototype.some.call(nodes, (n) => n.nodeType === 1
    && (n.hasAttribute("data-lsqa-item") || !!n.querySelector("[data-lsqa-item]")));
  new MutationObserver((records) => {
    if (pageHasKeys() && records.some((r) => stamped(r.addedNodes) || stamped(r.removedNodes)
      || (r.type === "attributes" && r.attributeName === "data-lsqa-item"))) look(false);
  }).observe(doc.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-lsqa-item"] });
  const watch = () => {
    const app = doc.querySelector("[data-test-script-state]");
    if (!app) return setTimeout(watch, 200);
    new MutationObserver(() => {
      if (scriptState() === "running") runSeen = true;
      else {
        lastRunEnd = Date.now();
        look(false);
        if (runSeen) { sentAt = 0; runSeen = false; quietUntil = Date.now() + SETTLE_MS; }
      }
      setTimeout(release, 0);
    }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  };
  watch();
  setInterval(release, 250); // a key sent that started no run (a button already off) frees the page after 1.5 s
  win.__lsqaKeysReady = () => !held && !busy() && !(look(false) && Date.now() - seenSince < SETTLE_MS);

  // ------------------------------------------------------------------------------- the note's key
  const NOTE_KEY = "e";
  const noteField = () => doc.querySelector(".lsqa-desk .lsqa-note-field");

  // ---------------------------------------------------------------------------- the keys' overlay
  const help = box("lsqa-keys-help", "dialog", "top:80px;bottom:auto;background:#fff;color:#222;border:1px solid #999;"
    + "padding:14px 20px;max-height:70vh;overflow:auto;min-width:22rem");
  help.setAttribute("aria-label", "Keys of this page");
  function toggleHelp(open) {
    if (!open) { help.style.display = "none"; return; }
    const rows = Array.from(doc.querySelectorAll(".st-key-lsqa_keys button")).map((b) => {
      const k = b.querySelector("kbd");
      const text = b.querySelector('[data-testid="stMarkdownContainer"], .lsqa-label');
      const label = (text ? text.innerText : b.innerText || "").trim();
      return k ? [k.innerText.trim(), label + (b.disabled ? " (off now)" : "")] : null;
    }).filter(Boolean);
    if (noteField()) rows.push([NOTE_KEY.toUpperCase(), "write a note: the note field takes the focus"]);
    rows.push(["Enter / Esc", "leave a field: the keys act again"], ["?", "show or hide this list (Esc hides it)"]);
    help.replaceChildren();
    const h = doc.createElement("p");
    const title = doc.createElement("b");
    title.textContent = "Keys of this page";
    h.append(title, " — a key acts on the item on screen when you press it");
    const table = doc.createElement("table");
    for (const [k, label] of rows) {
      const tr = table.insertRow();
      const a = tr.insertCell(); const kb = doc.createElement("kbd"); kb.textContent = k; a.appendChild(kb);
      a.style.paddingRight = "1rem";
      tr.insertCell().textContent = label;
    }
    help.append(h, table);
    help.style.display = "block";
  }

  // ----------------------------------------------------- the keys, before Streamlit's shortcuts see them
  doc.body.addEventListener("keydown", (e) => {
    if (!pageHasKeys()) return;
    if (inWidget(e.target) || inWidget(doc.activeElement)) { e.stopPropagation(); return; }
    if (e.key === "?" || (e.key === "Escape" && help.style.display === "block")) {
      e.stopPropagation(); e.preventDefault();
      if (!e.repeat) toggleHelp(e.key === "?" && help.style.display !== "block");
      return;
    }
    if (e.repeat) { e.stopPropagation(); e.preventDefault(); return; } // a key held down acts once
    if (e.ctrlKey || e.metaKey || e.altKey || typeof e.key !== "string" || e.key.length !== 1) return;
    if (e.key.toLowerCase() === NOTE_KEY && noteField()) { // the note field takes the focus; nothing is typed
      e.stopPropagation(); e.preventDefault();
      noteField().focus();
      banner();
      return;
    }
    const button = keyButton(e.key);
    if (!button) return;
    const item = itemOf(button);
    const seen = look(true);
    // The screen may be about to change, is changing or has just changed: hold the key, for the item
    // on screen when the last key (or Enter) was sent, until the page is ready and quiet.
    if (item && busy()) {
      e.stopPropagation(); e.preventDefault();
      if (held) say("Not saved: one key at a time while the page updates. Nothing was written by " + e.key.toUpperCase() + ".");
      else held = { key: e.key, item: meantFor(seen), at: Date.now() };
      return;
    }
    // The item on screen (cards or bar) changed less than SETTLE_MS ago: the key was meant for the one before.
    if (item && Date.now() - seenSince < SETTLE_MS && !held) {
      e.stopPropagation(); e.preventDefault();
      say(`Not saved: the item had just changed when ${e.key.toUpperCase()} was pressed (it was meant for the `
        + "item before). Nothing was written; press it again for this item.");
      return;
    }
    if (item && seen !== item) { // the bar and the cards name different items: a redraw under way
      e.stopPropagation(); e.preventDefault();
      say(`Not saved: the item was changing when ${e.key.toUpperCase()} was pressed. Nothing was written; press it again.`);
      return;
    }
    if (button.disabled) {
      if (item) say(`${e.key.toUpperCase()} is off for this item: nothing was written.`);
    } else if (button.hasAttribute("data-lsqa-key")) { // the desk's: pressed here, not by Streamlit's shortcuts
      e.stopPropagation(); e.preventDefault();
      say("");
      pressDesk(button);
    } else sent();
  }, false);
})();
