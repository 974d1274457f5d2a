// The alarm list (sorted by next fire, live countdowns, badges), creation in three taps from
// presets (or every schedule type in the detailed form), and an alarm's page: pause, edit,
// delete with undo, photo, sharing, history with its streak and CSV.
import { api } from "../api.js";
import { store } from "../store.js";
import { presets, fromForm, describe, formatDate, formatClock, shortDate, relative, zone, zones, isoDay } from "../schedule.js";
import { h, toast, sheet, field, errorText } from "../ui.js";

const tierOf = () => store.me?.tier || "free";
const paid = () => tierOf() !== "free";

/** "Snoozed until 09:10 (2/3)" while the pending occurrence is snoozed (US-1.4), else null. */
export function snoozedText(a, now = Date.now()) {
  if (!a.snoozedUntil || new Date(a.snoozedUntil).getTime() <= now) return null;
  const at = new Date(a.snoozedUntil);
  const sameDay = at.toDateString() === new Date(now).toDateString();
  const when = sameDay ? formatClock(a.snoozedUntil) : formatDate(a.snoozedUntil);
  return `Snoozed until ${when} (${a.snoozeCount}/${a.maxSnoozeCount ?? 3})`;
}

/** The sound catalogue for this user's tier (GET /v1/sounds), fetched once. */
let soundsOnce = null;
const sounds = () => (soundsOnce ??= api("GET", "/v1/sounds").then((r) => r.sounds).catch(() => { soundsOnce = null; return []; }));

/** A one-time alarm whose occurrence is behind it: done, nothing left to do. */
export const finished = (a) => !a.nextFireDate && !a.isActive;

/** The card's headline state: when it rings next, or why it does not. */
function nextLine(a) {
  if (finished(a)) return h("div", { class: "when" }, h("strong", { class: "next-date", "data-iso": "" }, "Done"), " ",
    h("span", { class: "muted" }, a.lastCompletedDate ? `completed ${formatDate(a.lastCompletedDate)}` : "no further occurrence"));
  if (a.isPaused) return h("div", { class: "when" }, h("strong", {}, "Paused"));
  if (!a.isActive) return h("div", { class: "when" }, h("strong", {}, "Off"), " ", h("span", { class: "muted next-date", "data-iso": a.nextFireDate || "" }, formatDate(a.nextFireDate)));
  return h("div", { class: "when" },
    h("strong", { class: "next-date", "data-iso": a.nextFireDate || "" }, ...((d) => [h("span", {}, d[0]), " · ", h("span", {}, d[1])])(shortDate(a.nextFireDate))), " ",
    h("span", { class: "relative", "data-next": a.nextFireDate || "" }, relative(a.nextFireDate)));
}

function badges(a) {
  const snoozed = snoozedText(a);
  return h("div", { class: "badges" },
    h("span", { class: `badge badge-${a.schedule.type}` }, a.schedule.type),
    snoozed ? h("span", { class: "badge badge-snoozed", "data-snoozed": a.snoozedUntil }, snoozed) : null,
    a.schedule.floating ? h("span", { class: "badge", title: "Follows your time zone" }, "Floating") : null,
    a.isPaused ? h("span", { class: "badge" }, "Paused") : null,
    a.isShared || a.sharedWith?.length ? h("span", { class: "badge" }, "Shared") : null,
    a.groupId ? h("span", { class: "badge" }, "Group") : null,
    a.ownerId !== store.me?.uid ? h("span", { class: "badge" }, "From a friend") : null);
}

export async function listView() {
  const list = h("ul", { class: "list", "aria-label": "Alarms, soonest first" });
  // The empty state is the example itself: one tap makes it (US design system, "empty state").
  const example = presets()[0];
  const empty = h("button", { class: "card stack empty", type: "button", "data-example": example.id, onclick: async () => {
    await create({ title: example.title, schedule: example.schedule }, () => {}, { set textContent(t) { if (t) toast(t); } });
  } }, h("strong", {}, "No alarms yet"), h("span", {}, `Tap to add “${example.title}” — ${describe(example.schedule)}`));
  const count = h("p", { class: "muted", "data-usage": "" });
  function paint() {
    const alarms = store.sorted();
    empty.hidden = alarms.length > 0;
    const { active, limit } = store.usage();
    count.textContent = limit ? `${active} of ${limit} active alarms on Free` : `${alarms.length} alarm${alarms.length === 1 ? "" : "s"}`;
    list.replaceChildren(...alarms.map((a) => {
      const mine = a.ownerId === store.me?.uid;
      // The enable switch (US-1.7): a tap turns the alarm off or on, without opening it.
      const toggle = mine && !finished(a) ? h("input", { type: "checkbox", role: "switch", class: "switch", checked: a.isActive && !a.isPaused,
        "aria-label": `${a.title} on`, onclick: (e) => e.stopPropagation(), onchange: async (e) => {
          e.target.disabled = true;
          try { await store.patch(a.id, a.isPaused ? { isPaused: false } : { isActive: e.target.checked }); }
          catch (x) { toast(errorText(x)); store.changed(); }
        } }) : null;
      return h("li", { class: "card-row" },
        h("a", { class: `card ${a.isPaused || !a.isActive ? "paused" : ""}`, href: `#/alarms/${encodeURIComponent(a.id)}`, "data-alarm": a.id },
          h("div", { class: "title" }, a.title),
          nextLine(a),
          h("div", { class: "muted" }, describe(a.schedule)),
          badges(a)),
        toggle);
    }));
  }
  const tick = setInterval(() => {
    for (const el of list.querySelectorAll("[data-next]")) if (el.dataset.next) el.textContent = relative(el.dataset.next);
  }, 30_000);
  // Changes made elsewhere (another device, a group member) arrive through the feed.
  const resync = setInterval(() => { if (document.visibilityState === "visible") store.sync().catch(() => {}); }, 10_000);
  store.listeners.add(paint);
  paint();
  store.sync().catch((e) => toast(errorText(e)));
  if (!store.me) store.loadMe().catch(() => {});
  const node = h("section", {},
    h("h1", {}, "Alarms"), count, empty, list,
    h("button", { class: "fab", "aria-label": "New alarm", onclick: openCreate }, "+"));
  if (sessionStorage.getItem("chronir.openCreate")) { sessionStorage.removeItem("chronir.openCreate"); setTimeout(openCreate, 0); }
  return { node, cleanup: () => { clearInterval(tick); clearInterval(resync); store.listeners.delete(paint); } };
}

async function create(body, close, err, button) {
  if (button) button.disabled = true;   // one tap, one alarm (and the id makes a retry idempotent)
  body.id ??= Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  try {
    const alarm = await api("POST", "/v1/alarms", body);
    store.put(alarm);
    close();
    toast(`“${alarm.title}” next rings ${formatDate(alarm.nextFireDate)}`);
    return alarm;
  } catch (e) {
    if (e.code === "CA001") {
      // The form stays as filled; the limit is said in words, with the way out.
      api("POST", "/v1/analytics/events", { events: [{ name: "upgrade_prompt_shown", properties: { trigger: "alarm_limit", tier: tierOf() } }] }).catch(() => {});
      err.replaceChildren?.("Free keeps 2 alarms on. Turn one off, or ", h("a", { href: "#/upgrade" }, "see Plus"), " — this form stays as you filled it.");
      if (!err.replaceChildren) err.textContent = "Free keeps 2 alarms on: turn one off, or upgrade to Plus.";
      if (button) button.disabled = false;
      return null;
    }
    err.textContent = errorText(e);
    if (button) button.disabled = false;
    return null;
  }
}

/** The creation sheet: tap a preset, tap Create (the "+" was the first tap). */
export function openCreate() {
  const err = h("p", { class: "error", role: "alert" });
  const title = h("input", { name: "title", required: true, maxlength: 100 });
  let chosen = null;
  const buttons = presets().map((p) => h("button", { type: "button", class: "preset", "aria-pressed": "false", "data-preset": p.id, onclick: (ev) => {
    chosen = p;
    for (const b of buttons) b.setAttribute("aria-pressed", String(b === ev.currentTarget));
    if (!title.dataset.edited) title.value = p.title;
    save.disabled = false;
  } }, h("strong", {}, p.label)));
  title.addEventListener("input", () => { title.dataset.edited = "1"; });
  const save = h("button", { class: "btn btn-primary", type: "submit", disabled: true }, "Create");
  const close = sheet("New alarm", h("form", { class: "stack", onsubmit: async (e) => {
    e.preventDefault();
    if (!chosen) return;
    await create({ title: title.value.trim() || chosen.title, schedule: chosen.schedule }, close, err, save);
  } },
    h("div", { class: "presets", role: "group", "aria-label": "Presets" }, buttons),
    field("Title", title), err,
    h("div", { class: "row" }, save, h("button", { type: "button", class: "btn", onclick: () => { close(); openDetailed(); } }, "More options…"))));
}

function scheduleFields(s = {}) {
  const v = (x, d) => (x ?? d);
  const floats = s.type ? s.floating === true : true;   // US-7.3: new alarms float
  const type = h("select", { name: "type" }, ...["weekly", "monthly", "annual", "custom", "once"].map((t) => h("option", { value: t, selected: s.type === t }, t)));
  const days = h("fieldset", { "data-for": "weekly" }, h("legend", {}, "Days"),
    ...["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((d, i) => h("label", { style: "display:inline-block;margin-right:8px" },
      h("input", { type: "checkbox", name: "days", value: String(i + 1), checked: (s.daysOfWeek || [1]).includes(i + 1), style: "display:inline;width:auto;min-height:auto" }), " ", d)));
  const monthly = h("select", { name: "monthly" }, h("option", { value: "fixed" }, "On day…"), h("option", { value: "relative", selected: s.monthlyType === "relative" }, "On the nth weekday"),
    h("option", { value: "last", selected: s.monthlyType === "fixed" && s.dayOfMonth === 0 }, "On the last day"));
  const wrap = (forType, ...kids) => h("div", { "data-for": forType, class: "stack" }, ...kids);
  const fields = h("div", { class: "stack" },
    field("Repeats", type),
    days,
    wrap("monthly", field("Monthly", monthly), field("Day of month", h("input", { type: "number", name: "dayOfMonth", min: 1, max: 31, value: v(s.dayOfMonth || null, 1) })),
      field("Week (5 = last)", h("input", { type: "number", name: "relativeWeek", min: 1, max: 5, value: v(s.relativeWeek, 1) })),
      field("Weekday (1 = Monday)", h("input", { type: "number", name: "relativeDay", min: 1, max: 7, value: v(s.relativeDayOfWeek, 1) }))),
    wrap("annual", field("Month", h("input", { type: "number", name: "month", min: 1, max: 12, value: v(s.month, new Date().getMonth() + 1) })),
      field("Day", h("input", { type: "number", name: "dayOfMonthAnnual", min: 1, max: 31, value: v(s.dayOfMonthAnnual, new Date().getDate()) }))),
    wrap("custom", field("Every how many days", h("input", { type: "number", name: "intervalDays", min: 1, value: v(s.intervalDays, 30) }))),
    wrap("weekly monthly annual", field("Every (1 = each time)", h("input", { type: "number", name: "interval", min: 1, max: 1000, value: v(s.interval, 1) }))),
    field("Time", h("input", { type: "time", name: "time", required: true, value: v(s.timeOfDay, "09:00") })),
    field("Starts (or the day, for once)", h("input", { type: "date", name: "startDate", value: isoDay(s.startDate ? new Date(s.startDate) : new Date()) })),
    field("Time zone", h("select", { name: "timezone" }, ...zones().map((z) => h("option", { value: z, selected: z === (s.timezone || zone()) }, z)))),
    field("When you travel", h("select", { name: "floating" },
      h("option", { value: "floating", selected: floats }, "Ring at this time wherever I am"),
      h("option", { value: "fixed", selected: !floats }, "Ring at this time in the zone above"))));
  const show = () => {
    for (const el of fields.querySelectorAll("[data-for]")) el.hidden = !el.dataset.for.split(" ").includes(type.value);
    if (type.value === "monthly") for (const n of ["relativeWeek", "relativeDay"]) fields.querySelector(`[name=${n}]`).closest("label").hidden = monthly.value !== "relative";
  };
  type.addEventListener("change", show); monthly.addEventListener("change", show); show();
  return fields;
}

/** The sound and snooze fields of a form, as the API takes them. */
function common(v) {
  const o = {};
  if (v.soundId) o.soundId = v.soundId;
  if (v.snoozeDurationMinutes) o.snoozeDurationMinutes = Number(v.snoozeDurationMinutes);
  if (v.maxSnoozeCount) o.maxSnoozeCount = Number(v.maxSnoozeCount);
  return o;
}

function formValues(form) {
  const data = new FormData(form);
  const o = Object.fromEntries(data.entries());
  o.days = data.getAll("days");
  o.offsets = data.getAll("offsets");
  return o;
}

/** The sound picker: every tone of the catalogue, those the tier lacks shown and locked. */
function soundField(current = "default") {
  const select = h("select", { name: "soundId" }, h("option", { value: current, selected: true }, current));
  sounds().then((list) => {
    if (!list.length) return;
    select.replaceChildren(...list.map((s) => h("option", { value: s.id, selected: s.id === current, disabled: !s.available && s.id !== current },
      s.available ? s.name : `${s.name} (${s.tier[0].toUpperCase()}${s.tier.slice(1)})`)));
  });
  return field("Sound", select);
}

/** Snoozes: the length a tap takes and how many an occurrence allows. */
function snoozeFields(a = {}) {
  const free = !paid();
  const lengths = free ? [10, 60] : [10, 60, 1440, 10080];
  const current = a.snoozeDurationMinutes ?? store.me?.settings?.defaultSnoozeMinutes ?? 60;
  const opts = [...new Set([...lengths, current])].sort((x, y) => x - y);
  const label = (m) => (m === 60 ? "1 hour" : m === 1440 ? "1 day" : m === 10080 ? "1 week" : m % 60 ? `${m} min` : `${m / 60} hours`);
  return h("div", { class: "row" },
    field(free ? "Snooze for (1 day, 1 week and custom with Plus)" : "Snooze for",
      h("select", { name: "snoozeDurationMinutes" }, ...opts.map((m) => h("option", { value: m, selected: m === current }, label(m))))),
    field("Snoozes per occurrence", h("input", { type: "number", name: "maxSnoozeCount", min: 1, max: 10, value: a.maxSnoozeCount ?? 3 })));
}

function extraFields(a = {}) {
  return h("div", { class: "stack" },
    soundField(a.soundId), snoozeFields(a),
    h("fieldset", {}, h("legend", {}, paid() ? "Warnings before it rings" : "Warnings before it rings (Plus)"),
      ...["7d", "3d", "1d", "1h"].map((o) => h("label", { style: "display:inline-block;margin-right:12px" },
        h("input", { type: "checkbox", name: "offsets", value: o, disabled: !paid(), checked: (a.preAlarmOffsets || []).includes(o), style: "display:inline;width:auto;min-height:auto" }), " ", o))),
    field(paid() ? "Note" : "Note (Plus)", h("textarea", { name: "note", maxlength: 500, disabled: !paid() }, a.note || "")));
}

export function openDetailed() {
  const err = h("p", { class: "error", role: "alert" });
  const form = h("form", { class: "stack", onsubmit: async (e) => {
    e.preventDefault();
    const v = formValues(form);
    const body = { title: v.title, schedule: fromForm(v), ...common(v) };
    if (paid()) { body.preAlarmOffsets = v.offsets; if (v.note) body.note = v.note; }
    await create(body, close, err, form.querySelector("button[type=submit]"));
  } }, field("Title", h("input", { name: "title", required: true, maxlength: 100 })), scheduleFields(), extraFields(), err,
    h("button", { class: "btn btn-primary", type: "submit" }, "Create"));
  const close = sheet("New alarm — every option", form);
}

async function photoOf(a) {
  if (!a.photoURL) return null;
  try {
    const r = await api("GET", `/v1/alarms/${a.id}/photo`, undefined, { raw: true });
    return h("img", { src: URL.createObjectURL(await r.blob()), alt: `Photo of ${a.title}`, style: "max-width:100%;border-radius:12px" });
  } catch { return null; }
}

export async function detailView(id) {
  let a = store.alarms.get(id);
  try { a = await api("GET", `/v1/alarms/${encodeURIComponent(id)}`); store.put(a); } catch (e) { if (!a) throw e; }
  const mine = a.ownerId === store.me?.uid;
  const err = h("p", { class: "error", role: "alert" });
  const history = h("div");
  const act = async (fn) => { err.textContent = ""; try { await fn(); } catch (e) { err.textContent = errorText(e); } };
  // The newest copy this page knows: the feed may have brought a later version (another
  // member's change, someone joining) while the page was open; writes are made against it.
  const fresh = () => { const s = store.alarms.get(a.id); return s && s.version > a.version ? (a = s) : a; };
  // A change changed elsewhere meanwhile (412) is not lost and not faked: pausing or resuming
  // is sent again on the current version; an edit asks first (repaint shows the current alarm).
  // The page is drawn again with the answer of an action; while a sheet opened meanwhile is up
  // (a delete's confirmation clicked before a mark's answer came), it waits for the sheet to
  // close instead of taking it away, and is left alone when the sheet moved to another page.
  const repaint = () => {
    const overlay = document.getElementById("overlay"), page = location.hash;
    const draw = () => { if (location.hash === page) window.dispatchEvent(new HashChangeEvent("hashchange")); };
    if (!overlay.hasChildNodes()) return draw();
    const watch = new MutationObserver(() => { if (!overlay.hasChildNodes()) { watch.disconnect(); draw(); } });
    watch.observe(overlay, { childList: true });
  };
  const patch = (body) => act(async () => { fresh(); a = await store.patch(a.id, body); repaint(); });

  const statusText = (c) => {
    const name = { completed: "Completed", skipped: "Skipped", missed: "Missed", snoozed_expired: "Missed after snoozing" }[c.status] || c.status;
    const snoozed = c.snoozeCount && c.status !== "snoozed_expired" ? `Snoozed ${c.snoozeCount}× then ${name.toLowerCase()}` : name;
    return snoozed + (c.status === "completed" && !c.onTime ? " (late)" : "") + (c.lateAt ? " · sent later" : "");
  };
  const when = (iso) => { const [day, clock] = shortDate(iso); return [h("span", {}, day), " ", h("span", { class: "nowrap" }, clock)]; };
  const mark = (c) => c.status === "completed" ? (c.onTime ? { key: "ok", text: "✓ On time" } : { key: "late", text: "✓ Late" })
    : c.status === "skipped" ? { key: "skip", text: "↷ Skipped" } : { key: "miss", text: "✕ Missed" };
  async function loadHistory() {
    const page = await api("GET", `/v1/alarms/${a.id}/completions?limit=100`);
    const queued = store.pendingMarks().filter((m) => m.alarmId === a.id);
    history.replaceChildren(...[
      h("p", {}, h("strong", {}, `Streak: ${page.streak}`), ` on-time completion${page.streak === 1 ? "" : "s"} in a row`),
      queued.length ? h("p", { class: "muted", "data-queued": queued.length }, `${queued.length} mark${queued.length === 1 ? "" : "s"} waiting for the network`) : null,
      page.historyLocked ? h("p", { class: "card", "data-locked": "history" },
        page.completions[0] ? `Last completed: ${formatDate(page.completions[0].completedAt)}. ` : "Not completed yet. ",
        page.hiddenCount ? `${page.hiddenCount} more kept — ` : "", h("a", { href: "#/upgrade" }, "see the full history with Plus")) : null,
      // One entry per occurrence, newest first: the occurrence's date as its headline with a
      // coloured mark, then what happened, who and when (a list: it reads on a phone).
      page.completions.length ? h("ol", { class: "history", role: "list", "aria-label": "Completion history" },
        ...page.completions.map((c) => h("li", { "data-status": c.status },
          h("span", { class: "occ" }, ...when(c.scheduledDate)),
          h("span", { class: "mark", "data-mark": mark(c).key }, mark(c).text),
          h("span", { class: "meta" }, [statusText(c), c.userDisplayName && `by ${c.userDisplayName}`,
            c.completedAt && `at ${formatDate(c.completedAt)}`].filter(Boolean).join(" · ")))))
        : h("p", { class: "muted" }, "Nothing yet."),
      h("button", { class: "btn", onclick: () => act(async () => {
        const r = await api("GET", `/v1/alarms/${a.id}/completions.csv`, undefined, { raw: true });
        const link = h("a", { href: URL.createObjectURL(await r.blob()), download: `${a.title}.csv` });
        link.click();
      }) }, "Export CSV")].filter(Boolean));
  }
  loadHistory().catch((e) => { history.textContent = errorText(e); });

  const photoBox = h("div", {}, await photoOf(a));
  const upload = h("input", { type: "file", accept: "image/jpeg,image/png,image/heic", "aria-label": "Choose a photo" });
  upload.addEventListener("change", () => act(async () => {
    const f = upload.files[0]; if (!f) return;
    await api("PUT", `/v1/alarms/${a.id}/photo`, f, { headers: { "Content-Type": f.type || "image/jpeg" } });
    a = await api("GET", `/v1/alarms/${a.id}`); store.put(a);
    photoBox.replaceChildren(await photoOf(a));
  }));

  function edit() {
    const e2 = h("p", { class: "error", role: "alert" });
    const form = h("form", { class: "stack", onsubmit: async (ev) => {
      ev.preventDefault();
      const v = formValues(form);
      const body = { title: v.title, schedule: fromForm(v), ...common(v) };
      if (paid()) { body.preAlarmOffsets = v.offsets; body.note = v.note || null; }
      try {
        fresh();
        a = await store.patch(a.id, body, { retry: (current) => confirm(`“${current.title}” was changed elsewhere while you edited it. Save your version over it?`) });
        close(); repaint();
      } catch (x) { if (x.stale) { close(); repaint(); toast(x.message); } else e2.textContent = errorText(x); }
    } }, field("Title", h("input", { name: "title", required: true, maxlength: 100, value: a.title })), scheduleFields(a.schedule), extraFields(a), e2,
      h("button", { class: "btn btn-primary", type: "submit" }, "Save"));
    const close = sheet("Edit alarm", form);
  }

  /** Delete asks first (US-1.6), then keeps an undo for 5 s. */
  function remove() {
    const close = sheet(`Delete “${a.title}”?`, h("div", { class: "stack" },
      h("p", {}, "It stops ringing on every device and leaves everyone it is shared with. You can undo for a few seconds."),
      h("div", { class: "row" },
        h("button", { class: "btn btn-danger", onclick: () => {
          close();
          store.deleteLater(fresh());
          location.hash = "#/alarms";
          toast(`Deleted “${a.title}”`, { action: "Undo", onAction: () => store.undoDelete(a) });
        } }, "Delete"),
        h("button", { class: "btn", onclick: () => close() }, "Keep it"))));
  }

  /** A member stops sharing the alarm (US-10.1): it leaves their list and devices. */
  async function leave() {
    await act(async () => {
      await api("DELETE", `/v1/alarms/${encodeURIComponent(a.id)}/members/me`);
      store.remove(a.id);
      location.hash = "#/alarms";
      toast(`You left “${a.title}”`);
    });
  }

  async function invite() {
    await act(async () => {
      const inv = await api("POST", "/v1/invitations", { type: "alarm", referenceId: a.id });
      const url = `${location.origin}/invite/${inv.id}`;
      sheet("Share by link", h("div", { class: "stack" }, h("p", {}, "Anyone with this link can join this alarm:"),
        h("input", { readonly: true, value: url, "aria-label": "Invitation link" }),
        h("button", { class: "btn", onclick: () => navigator.clipboard?.writeText(url) }, "Copy")));
    });
  }

  return h("section", { class: "stack" },
    h("p", {}, h("a", { href: "#/alarms" }, "← Alarms")),
    h("h1", {}, a.title), badges(a),
    h("p", {}, describe(a.schedule)),
    nextLine(a),
    snoozedText(a) ? h("p", { class: "snoozed", role: "status" }, snoozedText(a)) : null,
    a.note ? h("p", { class: "muted" }, a.note) : null,
    photoBox, err,
    h("div", { class: "row" },
      finished(a) ? null : h("button", { class: "btn btn-primary", onclick: (e) => act(async () => {
        e.target.disabled = true;
        const c = await store.mark(fresh());
        toast(c ? `Done — ${formatDate(c.completion?.scheduledDate)}` : "Marked done — it is sent when you are back online");
        repaint();   // the page shows the alarm as the answer left it (its next occurrence, its version)
      }) }, "Mark done"),
      mine && !finished(a) ? h("button", { class: "btn", onclick: () => patch({ isPaused: !a.isPaused }) }, a.isPaused ? "Resume" : "Pause") : null,
      mine ? h("button", { class: "btn", onclick: edit }, "Edit") : null,
      mine ? h("button", { class: "btn btn-danger", onclick: remove }, "Delete") : null,
      !mine && a.sharedWith?.includes(store.me?.uid) ? h("button", { class: "btn", onclick: leave }, "Leave") : null),
    mine ? h("div", { class: "row" },
      paid() ? h("label", {}, "Photo ", upload) : h("a", { href: "#/upgrade" }, "Add a photo with Plus"),
      h("button", { class: "btn", onclick: invite }, "Share by link")) : null,
    h("h2", {}, "History"), history);
}
