// Page keys (st.button shortcuts) act only while no field has the focus: Streamlit ignores keys
// typed into an INPUT, TEXTAREA or SELECT, radio buttons included. So after Enter in a one-line
// field, Escape in any field, a radio/checkbox/toggle choice or a pick from a select list, the
// focus goes back to the page, and while the cursor is in a field a banner says the keys wait.
(() => {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const win = doc.defaultView || window;
  if (win.__lsqaKeys) return;
  win.__lsqaKeys = true;
  const CHOICE_TYPES = ["radio", "checkbox", "range"];
  const isChoice = (el) => el && el.tagName === "INPUT" && CHOICE_TYPES.includes(el.type);
  const isField = (el) => el && !isChoice(el) && (el.tagName === "INPUT" || el.tagName === "TEXTAREA"
    || el.tagName === "SELECT" || el.isContentEditable);

  const leave = (el, ms) => setTimeout(() => { if (doc.activeElement === el) el.blur(); banner(); }, ms);

  doc.addEventListener("keydown", (e) => {
    const el = e.target;
    if (e.key === "Escape" && (isField(el) || isChoice(el))) leave(el, 0);
    // Enter: Streamlit reads it first (it saves the text, or picks the highlighted option).
    else if (e.key === "Enter" && el.tagName === "INPUT") leave(el, 60);
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
  }, true);

  // "Keys wait" banner: only on pages that have keys (a button with a shortcut hint).
  const note = doc.createElement("div");
  note.id = "lsqa-keys-paused";
  note.setAttribute("role", "status");
  note.textContent = "Keys are paused while the cursor is in a field: press Enter or Esc to use them.";
  note.style.cssText = "position:fixed;left:50%;bottom:12px;transform:translateX(-50%);z-index:100000;"
    + "background:#fff3bf;color:#5c4400;border:1px solid #e0b400;border-radius:6px;padding:6px 12px;"
    + "font:14px sans-serif;display:none;box-shadow:0 2px 6px rgba(0,0,0,.2)";
  doc.body.appendChild(note);
  const pageHasKeys = () => !!doc.querySelector(".st-key-lsqa_keys");
  function banner() {
    const el = doc.activeElement;
    note.style.display = pageHasKeys() && (isField(el) || isChoice(el)) ? "block" : "none";
  }
  doc.addEventListener("focusin", banner, true);
  doc.addEventListener("focusout", () => setTimeout(banner, 0), true);
})();
