// The paywall (GET /v1/products) and the settings: profile, time zone, sign-in and security, export, sign out, delete.
import { api, session } from "../api.js";
import { store } from "../store.js";
import { zones } from "../schedule.js";
import { h, toast, field, errorText } from "../ui.js";
import { securityCard } from "./security.js";

export async function paywallView() {
  const reason = sessionStorage.getItem("chronir.paywallReason");
  sessionStorage.removeItem("chronir.paywallReason");
  await store.loadMe().catch(() => {});   // the plan as it is now (an upgrade elsewhere shows at once)
  const { products, tiers } = await api("GET", "/v1/products");
  let period = "monthly";
  const grid = h("div", { class: "tiers" });
  const paint = () => grid.replaceChildren(...tiers.map((t) => {
    const p = products.find((x) => x.tier === t.tier && x.period === period);
    const current = (store.me?.tier || "free") === t.tier;
    return h("div", { class: "card stack", "data-tier": t.tier },
      h("div", { class: "title" }, t.tier[0].toUpperCase() + t.tier.slice(1)),
      h("div", { class: "countdown" }, p ? `$${p.priceUSD.toFixed(2)}` : "$0", h("span", { class: "muted", style: "font-size:16px" }, p ? (period === "monthly" ? " / month" : " / year") : "")),
      p?.annualSavingsPercent ? h("span", { class: "badge badge-warning" }, `Save ${p.annualSavingsPercent}%`) : null,
      h("ul", {}, ...t.features.map((f) => h("li", {}, f))),
      current ? h("p", { class: "muted" }, "Your plan") : p ? h("p", { class: "muted" },
        `Subscribe to ${planName(t.tier)} for $${p.priceUSD.toFixed(2)} ${period === "monthly" ? "a month" : "a year"} in the Chronir app on iPhone or Android; your plan follows you here.`) : null);
  }));
  paint();
  const toggle = h("button", { class: "btn", "aria-pressed": "false", onclick: () => {
    period = period === "monthly" ? "annual" : "monthly";
    toggle.setAttribute("aria-pressed", String(period === "annual"));
    toggle.textContent = period === "monthly" ? "Show yearly prices" : "Show monthly prices";
    paint();
  } }, "Show yearly prices");
  return h("section", { class: "stack", id: "paywall" },
    h("h1", {}, "Upgrade Chronir"),
    reason ? h("p", { class: "card", role: "alert" }, reason) : null,
    toggle, grid);
}

/** The theme: the system's, or light or dark as chosen (kept on this device). */
export function applyTheme(theme = localStorage.getItem("chronir.theme") || "system") {
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
}

/** Settings per US-7.1: profile, time zones, default sound and snooze, the pre-alarm default,
 *  12/24-hour clock, theme, analytics consent, export, sign out, delete, and About. */
export async function settingsView() {
  const me = await store.loadMe();
  const err = h("p", { class: "error", role: "alert" });
  const name = h("input", { name: "displayName", value: me.displayName, maxlength: 80, required: true });
  const tz = h("select", { name: "timezone" }, ...[...new Set([me.settings?.timezone, ...zones()].filter(Boolean))].map((z) => h("option", { value: z, selected: z === me.settings?.timezone }, z)));
  const home = h("select", { name: "homeTimezone" }, h("option", { value: "", selected: !me.homeTimezone }, "Same as my time zone"),
    ...[...new Set([me.homeTimezone, ...zones()].filter(Boolean))].map((z) => h("option", { value: z, selected: z === me.homeTimezone }, z)));
  const free = me.tier === "free";
  const snoozeLengths = [...new Set([...(free ? [10, 60] : [10, 60, 1440, 10080]), me.settings?.defaultSnoozeMinutes ?? 60])].sort((x, y) => x - y);
  const snoozeLabel = (m) => (m === 60 ? "1 hour" : m === 1440 ? "1 day" : m === 10080 ? "1 week" : m % 60 ? `${m} min` : `${m / 60} hours`);
  const snooze = h("select", { name: "defaultSnoozeMinutes" }, ...snoozeLengths.map((m) => h("option", { value: m, selected: m === me.settings?.defaultSnoozeMinutes }, snoozeLabel(m))));
  const sound = h("select", { name: "soundId" }, h("option", { value: me.settings?.soundId || "default", selected: true }, me.settings?.soundId || "default"));
  api("GET", "/v1/sounds").then((r) => sound.replaceChildren(...r.sounds.map((x) => h("option", { value: x.id, selected: x.id === me.settings?.soundId, disabled: !x.available },
    x.available ? x.name : `${x.name} (${x.tier[0].toUpperCase()}${x.tier.slice(1)})`)))).catch(() => {});
  const check = (nameAttr, on) => h("input", { type: "checkbox", name: nameAttr, checked: !!on, style: "display:inline;width:auto;min-height:auto" });
  const preAlarm = check("preAlarmWarningEnabled", me.settings?.preAlarmWarningEnabled ?? true);
  const clock = h("select", { name: "clock" }, h("option", { value: "12", selected: !me.settings?.use24HourFormat }, "12-hour (9:00 AM)"),
    h("option", { value: "24", selected: !!me.settings?.use24HourFormat }, "24-hour (09:00)"));
  const theme = h("select", { name: "theme", onchange: (e) => { localStorage.setItem("chronir.theme", e.target.value); applyTheme(e.target.value); } },
    ...["system", "light", "dark"].map((t) => h("option", { value: t, selected: (localStorage.getItem("chronir.theme") || "system") === t },
      t === "system" ? "Same as the system" : t[0].toUpperCase() + t.slice(1))));
  const consent = check("analyticsConsent", me.analyticsConsent);
  const act = async (fn) => { err.textContent = ""; try { await fn(); } catch (e) { err.textContent = errorText(e); } };
  return h("section", { class: "stack" },
    h("h1", {}, "Settings"),
    h("p", {}, `${me.email || "anonymous account"} · `, h("strong", { "data-plan": me.tier }, planName(me.tier)), " · ", h("a", { href: "#/upgrade" }, "Plans")),
    h("form", { class: "stack card", onsubmit: (e) => { e.preventDefault(); act(async () => {
      store.me = await api("PATCH", "/v1/me", { displayName: name.value, homeTimezone: home.value || null, analyticsConsent: consent.checked,
        settings: { timezone: tz.value, defaultSnoozeMinutes: Number(snooze.value), soundId: sound.value,
          preAlarmWarningEnabled: preAlarm.checked, use24HourFormat: clock.value === "24" } });
      await store.loadMe();
      toast("Saved");
    }); } },
      field("Name", name), field("Time zone", tz), field("Home time zone", home),
      field(free ? "Sound for new alarms (more with Plus)" : "Sound for new alarms", sound),
      field(free ? "Snooze new alarms for (1 day and 1 week with Plus)" : "Snooze new alarms for", snooze),
      h("label", {}, preAlarm, " Warn me the day before (new alarms)"),
      field("Clock", clock), field("Theme", theme),
      h("label", {}, consent, " Share anonymous usage statistics (no titles, notes or names)"),
      h("button", { class: "btn btn-primary", type: "submit" }, "Save")),
    err,
    securityCard(me),
    h("div", { class: "row" },
      h("button", { class: "btn", onclick: () => act(async () => {
        const r = await api("GET", "/v1/me/export", undefined, { raw: true });
        h("a", { href: URL.createObjectURL(await r.blob()), download: "chronir-export.json" }).click();
      }) }, "Export my data"),
      h("button", { class: "btn", onclick: () => act(async () => {
        await api("POST", "/v1/auth/logout", {}).catch(() => {});   // ends the session; the gateway clears the cookie
        window.dispatchEvent(new Event("chronir:signed-out"));
      }) }, "Sign out"),
      h("button", { class: "btn btn-danger", onclick: () => act(async () => {
        if (!confirm("Delete your account and everything in it? This cannot be undone.")) return;
        await api("DELETE", "/v1/me");
        window.dispatchEvent(new Event("chronir:signed-out"));
      }) }, "Delete account")),
    h("section", { class: "card stack", "aria-label": "About" },
      h("h2", { style: "margin:0" }, "About"),
      h("p", {}, "Chronir — alarms for the long cycles: weekly, monthly, yearly."),
      h("p", {}, h("a", { href: "mailto:support@chronir.app" }, "Support"), " · ",
        h("a", { href: "https://chronir.app/privacy", rel: "noopener" }, "Privacy policy"), " · ",
        h("a", { href: "https://chronir.app/licenses", rel: "noopener" }, "Licenses"))));
}

/** "Free", "Plus", "Premium". */
export const planName = (tier) => (tier ? tier[0].toUpperCase() + tier.slice(1) : "Free");
