// Small DOM helpers: elements, toasts, bottom sheets.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;   // CSSOM: allowed under the page's style-src 'self'
    else if (k === "checked" || k === "selected" || k === "disabled") el[k] = !!v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function toast(text, { action, onAction, ms = 5000 } = {}) {
  const box = h("div", { class: "toast" }, h("span", {}, text));
  if (action) box.append(h("button", { class: "btn", onclick: () => { onAction?.(); box.remove(); } }, action));
  document.getElementById("toasts").append(box);
  setTimeout(() => box.remove(), ms);
  return box;
}

const focusable = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

const traps = [];

/**
 * Keeps Tab and Shift+Tab inside `box` (a modal dialog) and gives focus back to what held it
 * before when the returned function is called. Traps stack: only the newest one still on the
 * page acts (a firing screen over a sheet), and one whose box left the page is dropped.
 */
export function trapFocus(box) {
  const before = document.activeElement;
  const trap = { box, before };
  traps.push(trap);
  return () => {
    const i = traps.indexOf(trap);
    if (i < 0) return;
    traps.splice(i, 1);
    if (before && before.isConnected && typeof before.focus === "function") before.focus();
  };
}

document.addEventListener("keydown", (e) => {
  if (e.key !== "Tab") return;
  while (traps.length && !traps[traps.length - 1].box.isConnected) traps.pop();
  const top = traps[traps.length - 1];
  if (!top) return;
  const items = [...top.box.querySelectorAll(focusable)].filter((el) => el.offsetParent !== null || el === document.activeElement);
  if (!items.length) { e.preventDefault(); return; }
  const first = items[0], last = items[items.length - 1];
  if (!top.box.contains(document.activeElement)) { e.preventDefault(); first.focus(); }
  else if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus(); }
  else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus(); }
}, true);

export function sheet(title, content) {
  let release = () => {};
  const close = () => { back.remove(); release(); };
  const panel = h("div", { class: "sheet", role: "dialog", "aria-modal": "true", "aria-label": title },
    h("div", { class: "row" }, h("h2", { style: "margin:0;flex:1" }, title), h("button", { class: "btn", onclick: close, "aria-label": "Close" }, "✕")),
    content);
  const back = h("div", { class: "sheet-back", onclick: (e) => { if (e.target === back) close(); } }, panel);
  back.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
  document.getElementById("overlay").append(back);
  release = trapFocus(panel);
  (panel.querySelector("button.preset") || panel.querySelector("input, select, textarea") || panel).focus();
  return close;
}

export function field(label, input) { return h("label", {}, label, input); }

export function errorText(e) { return e?.code ? `${e.message} (${e.code})` : String(e?.message || e); }
