// The paywall (GET /v1/products) and the settings: profile, time zone, export, sign out, delete.
import { api, session } from "../api.js";
import { store } from "../store.js";
import { zones } from "../schedule.js";
import { h, toast, field, errorText } from "../ui.js";

export async function paywallView() {
  const reason = sessionStorage.getItem("chronir.paywallReason");
  sessionStorage.removeItem("chronir.paywallReason");
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
      current ? h("p", { class: "muted" }, "Your plan") : p ? h("p", { class: "muted" }, `Subscribe in the Chronir app (${p.iosProductId}); your plan follows you here.`) : null);
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
  const consent = h("input", { type: "checkbox", name: "analyticsConsent", checked: !!me.analyticsConsent, style: "display:inline;width:auto;min-height:auto" });
  const act = async (fn) => { err.textContent = ""; try { await fn(); } catch (e) { err.textContent = errorText(e); } };
  return h("section", { class: "stack" },
    h("h1", {}, "Settings"),
    h("p", {}, `${me.email || "anonymous account"} · `, h("strong", {}, me.tier), " · ", h("a", { href: "#/upgrade" }, "Plans")),
    h("form", { class: "stack card", onsubmit: (e) => { e.preventDefault(); act(async () => {
      store.me = await api("PATCH", "/v1/me", { displayName: name.value, homeTimezone: home.value || null, analyticsConsent: consent.checked,
        settings: { timezone: tz.value, defaultSnoozeMinutes: Number(snooze.value) } });
      store.save(); toast("Saved");
    }); } },
      field("Name", name), field("Time zone", tz), field("Home time zone", home),
      field(free ? "Snooze new alarms for (1 day and 1 week with Plus)" : "Snooze new alarms for", snooze),
      h("label", {}, consent, " Share anonymous usage statistics (no titles, notes or names)"),
      h("button", { class: "btn btn-primary", type: "submit" }, "Save")),
    err,
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
      }) }, "Delete account")));
}
