// The firing screen: the whole window, a repeating tone, slide to complete, or snooze for the
// durations the tier allows (a paid accountability snooze shows its price).
import { api } from "../api.js";
import { store } from "../store.js";
import { h, toast, errorText, trapFocus } from "../ui.js";
import { describe, formatClock } from "../schedule.js";
import { audible, ring as tone, unlock } from "../sound.js";

let current = null;

const queue = [];

/** Shows the firing screen; a fire arriving while another rings waits its turn. */
export function showFiring(alarm, notification) {
  if (current) {
    if (current.alarmId !== alarm.id && !queue.some((q) => q.alarm.id === alarm.id)) queue.push({ alarm, notification });
    return;
  }
  ring(alarm, notification);
}

function ring(alarm, notification) {
  const occurrenceAt = notification.data?.occurrenceAt;
  const firedAt = Date.now();
  const stop = tone();
  const err = h("p", { role: "alert" });
  const close = () => {
    stop(); release(); screen.remove(); current = null; document.title = "Chronir";
    const next = queue.shift();
    if (next) ring(next.alarm, next.notification);
  };
  const slider = h("input", { type: "range", min: 0, max: 100, value: 0, "aria-label": "Slide to complete", "aria-valuetext": "Slide right to complete" });
  const done = async () => {
    slider.disabled = true;
    try {
      // Offline, the mark waits with the time it was made (store.mark) and is sent later.
      const sent = await store.mark(alarm, { scheduledDate: occurrenceAt });
      if (sent) api("POST", "/v1/analytics/events", { events: [{ name: "alarm_dismissed", properties: {
        timeToDismissSeconds: Math.round((Date.now() - firedAt) / 1000), intervalType: alarm.schedule.type,
        snoozeCount: Number(notification.data?.snoozeCount || 0) } }] }).catch(() => {});
      close();
      toast(sent ? `✓ ${alarm.title} — done` : `✓ ${alarm.title} — done; sent when you are back online`);
      store.sync().catch(() => {});
      if (location.hash === `#/alarms/${alarm.id}`) location.reload();
    } catch (e) { err.textContent = errorText(e); slider.disabled = false; slider.value = 0; }
  };
  slider.addEventListener("input", () => { if (Number(slider.value) >= 95) done(); });
  slider.addEventListener("change", () => { if (Number(slider.value) < 95) slider.value = 0; });
  slider.addEventListener("keydown", (e) => { if (e.key === "Enter") done(); });

  const label = (m) => (m === 60 ? "1 hour" : m === 1440 ? "1 day" : m === 10080 ? "1 week" : m % 60 ? `${m} min` : `${m / 60} hours`);
  const price = (cents) => `$${(cents / 100).toFixed(2)}`;
  const snooze = async (m) => {
    try {
      const r = await api("POST", `/v1/alarms/${alarm.id}/snooze`, m ? { minutes: m } : {});
      if (r.alarm) store.put(r.alarm);
      close();
      toast(`Snoozed until ${formatClock(r.refireAt)} (${r.snoozeCount}/${r.alarm?.maxSnoozeCount ?? 3})`);
    } catch (e) {
      if (e.code === "CA029") err.textContent = `This snooze costs ${price(e.details?.costCents)} (${e.details?.productId}); buy it in the app to go on.`;
      else err.textContent = errorText(e);
    }
  };
  // The snooze buttons: the tier's lengths at once, then what the server says the next snooze
  // is (a paid one carries its price; none left disables them).
  // The tier's limits are on the buttons before a tap: Plus lengths show locked on Free.
  const snoozes = h("div", { class: "snoozes", role: "group", "aria-label": "Snooze" });
  const paintSnoozes = (o) => {
    const cost = o.available && o.costCents ? ` · ${price(o.costCents)}` : "";
    const locked = o.customAllowed ? [] : [1440, 10080].filter((m) => !o.minutes.includes(m));
    const lengths = [o.defaultMinutes, ...o.minutes.filter((m) => m !== o.defaultMinutes)];
    snoozes.replaceChildren(
      ...lengths.map((m, i) => h("button", { class: i === 0 ? "btn btn-primary" : "btn", disabled: !o.available, "data-minutes": m,
        onclick: () => snooze(i === 0 ? null : m) }, `Snooze ${label(m)}${cost}`)),
      ...locked.map((m) => h("button", { class: "btn", disabled: true, "data-locked": m, title: "Plus" }, `${label(m)} · Plus`)));
    if (o.customAllowed && o.available) {
      const minutes = h("input", { type: "number", min: 1, max: 10080, value: 30, "aria-label": "Custom snooze in minutes", style: "width:6em" });
      snoozes.append(h("form", { class: "row", onsubmit: (e) => { e.preventDefault(); snooze(Number(minutes.value)); } },
        minutes, h("button", { class: "btn", type: "submit" }, "min")));
    }
    if (o.snoozeCount) snoozes.append(h("p", { class: "muted", "data-snooze-count": o.snoozeCount }, `Snoozed ${o.snoozeCount}/${o.maxSnoozes} times`));
    if (!o.available) snoozes.append(h("p", { class: "muted" }, "No snoozes left for this one."));
    else if (o.costCents) snoozes.append(h("p", { class: "muted" }, `Snooze ${o.snoozeCount + 1} is paid: ${price(o.costCents)} (${o.productId}).`));
  };
  const plus = store.me?.tier && store.me.tier !== "free";
  const mine = alarm.snoozeDurationMinutes ?? 10;
  paintSnoozes({ minutes: plus ? [10, 60, 1440, 10080] : [10, 60], available: true, customAllowed: plus,
    defaultMinutes: plus || mine === 10 || mine === 60 ? mine : mine < 35 ? 10 : 60, snoozeCount: alarm.snoozeCount || 0, maxSnoozes: alarm.maxSnoozeCount ?? 3 });
  api("GET", `/v1/alarms/${alarm.id}/snooze`).then((o) => { if (current?.alarmId === alarm.id) paintSnoozes(o); }).catch(() => {});
  // Sound needs a touch of the page first; until then a button offers it.
  const soundButton = audible() ? null : h("button", { class: "btn", onclick: async () => { if (await unlock()) soundButton.remove(); } }, "🔔 Turn on sound");
  const now = new Date();
  const screen = h("div", { class: "firing", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "firing-title", "data-alarm": alarm.id },
    h("div", { class: "top" },
      h("div", { class: "time" }, formatClock(now.toISOString())),
      h("h1", { id: "firing-title", title: alarm.title }, alarm.title),
      h("p", { class: "schedule" }, describe(alarm.schedule)),
      alarm.note ? h("p", {}, alarm.note) : null),
    h("div", { class: "bottom" },
      h("div", { class: "slider" }, slider, h("span", {}, "Slide to complete →")),
      snoozes, soundButton,
      err));
  document.body.append(screen);
  const release = trapFocus(screen);
  document.title = `⏰ ${alarm.title}`;
  slider.focus();
  current = { close, alarmId: alarm.id };
}
