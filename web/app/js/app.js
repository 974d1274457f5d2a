// The Chronir web client: hash routes, the shell, the live stream (fires, completion toasts).
import { api, refresh, session } from "./api.js";
import { forgetPosition, listen } from "./live.js";
import { store } from "./store.js";
import { toast } from "./ui.js";
import { finish as finishProviderSignIn, isCallback } from "./oauth.js";
import { authView, forgotView, onboardingView, resetView, verifyView } from "./views/auth.js";
import { listView, detailView } from "./views/alarms.js";
import { showFiring } from "./views/firing.js";
import { groupsView, groupView, inviteView } from "./views/groups.js";
import { applyTheme, paywallView, settingsView } from "./views/account.js";

const view = document.getElementById("view");
let stopLive = null, cleanup = null, generation = 0;

const routes = [
  [/^#\/(signin|signup)$/, (m) => authView(m[1]), false],
  [/^#\/welcome$/, () => onboardingView(), true],
  [/^#\/alarms$/, () => listView(), true],
  [/^#\/alarms\/([^/]+)$/, (m) => detailView(decodeURIComponent(m[1])), true],
  [/^#\/groups$/, () => groupsView(), true],
  [/^#\/groups\/([^/]+)$/, (m) => groupView(decodeURIComponent(m[1])), true],
  [/^#\/invite\/([^/]+)$/, (m) => inviteView(decodeURIComponent(m[1])), false],
  [/^#\/forgot$/, () => forgotView(), false],
  [/^#\/reset\/([A-Za-z0-9_-]+)$/, (m) => resetView(m[1]), false],
  [/^#\/verify\/([A-Za-z0-9_-]+)$/, (m) => verifyView(m[1]), false],
  [/^#\/upgrade$/, () => paywallView(), true],
  [/^#\/settings$/, () => settingsView(), true],
];

async function route({ keepFocus = false } = {}) {
  const hash = location.hash || (session.get() ? "#/alarms" : "#/signup");
  const signed = !!session.get();
  const match = routes.map(([re, fn, auth]) => [hash.match(re), fn, auth]).find(([m]) => m);
  if (!match) { location.hash = signed ? "#/alarms" : "#/signup"; return; }
  const [m, fn, needsAuth] = match;
  if (needsAuth && !signed) { sessionStorage.setItem("chronir.after", hash); location.hash = "#/signin"; return; }
  document.getElementById("bar").hidden = !signed;
  for (const a of document.querySelectorAll(".bar nav a")) {
    if (hash.startsWith(a.getAttribute("href"))) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  if (signed) startLive();
  cleanup?.();
  cleanup = null;
  document.getElementById("overlay").replaceChildren();   // a sheet belongs to the page it opened on
  view.replaceChildren();
  delete view.dataset.edited;
  const mine = ++generation;   // a slow page that finishes after a later navigation is dropped
  try {
    const result = await fn(m);
    if (mine !== generation) { result?.cleanup?.(); return; }
    if (result?.node) { view.replaceChildren(result.node); cleanup = result.cleanup; }
    else if (result) view.replaceChildren(result);
  } catch (e) {
    if (mine !== generation) return;
    view.replaceChildren(Object.assign(document.createElement("p"), { className: "error", textContent: e.message }));
  }
  if (!keepFocus) view.focus({ preventScroll: true });
}

function startLive() {
  if (stopLive) return;
  stopLive = listen(async (type, n) => {
    if (type === "alarm_fired" && n.data?.assignedTo && n.data.assignedTo !== store.me?.uid) {
      // Assigned to someone else (US-10.4): told, not rung.
      toast(`${n.title.replace(/^Chronir: /, "")} — ${n.body}`);
      store.sync().catch(() => {});
    } else if (type === "alarm_fired") {
      // The current state: a fire replayed after a reconnect that was already completed does not ring again.
      const alarm = await api("GET", `/v1/alarms/${n.data.alarmId}`).catch(() => store.alarms.get(n.data?.alarmId));
      const done = alarm?.lastCompletedDate && n.data?.occurrenceAt && new Date(alarm.lastCompletedDate) >= new Date(n.data.occurrenceAt);
      if (alarm && !done) showFiring(alarm, n);
      store.sync().catch(() => {});
    } else if (type === "alarm_completed") {
      toast(`${n.title} — ${n.body}`);
      store.sync().catch(() => {});
    } else if (type === "alarm_changed") {
      // Someone else changed a shared alarm: the feed brings the new state; the page follows.
      await store.sync().catch(() => {});
      const id = n.data?.alarmId, change = n.data?.change;
      const here = location.hash === `#/alarms/${encodeURIComponent(id)}`;
      if (n.data?.reason) toast(`${n.title} — ${n.body}`);   // the owner's plan changed it: say why
      if (change === "removed" || change === "deleted") {
        if (!n.data?.reason) toast(change === "deleted" ? `“${n.title}” was deleted by its owner` : `“${n.title}” is no longer shared with you`);
        if (here) location.hash = "#/alarms";
      } else if (here && !document.getElementById("overlay").hasChildNodes()) {
        route();   // the alarm's page shows the new state (not while a sheet is open on it)
      }
    } else if (type === "plan_changed") {
      // Bought on a phone, lapsed, or set by support: the limits and locks on this page follow now.
      // The page is drawn again only when nothing would be lost: no sheet or ringing alarm open,
      // no form on the page typed into (the list repaints itself from the store meanwhile).
      await store.loadMe().catch(() => {});
      toast(n.body);
      const busy = document.getElementById("overlay").hasChildNodes() || document.querySelector(".firing") || view.dataset.edited;
      if (!busy) route({ keepFocus: true });
    } else if (type === "pre_alarm" || type === "alarm_missed" || type.startsWith("invitation")) {
      toast(n.body ? `${n.title}: ${n.body}` : n.title);
      store.sync().catch(() => {});
    }
  });
}

function signedOut() {
  stopLive?.(); stopLive = null;
  forgetPosition();
  session.clear(); store.clear();
  location.hash = "#/signin";
}

applyTheme();
// A delete refused twice (the alarm keeps changing elsewhere) is said, and the alarm shows again.
store.failed = (alarm, status) => toast(`Could not delete “${alarm.title}”: it changed elsewhere (${status}). It is back in your list.`, { ms: 8000 });
// The plan can change elsewhere (a purchase in the app): read it again when the page comes back.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && session.get()?.accessToken) store.loadMe().catch(() => {});
});
window.addEventListener("chronir:signed-out", signedOut);
window.addEventListener("hashchange", () => route());
// A form on the page that was typed into is not redrawn under the user (a plan change).
view.addEventListener("input", () => { view.dataset.edited = "1"; });
window.addEventListener("online", () => {
  document.getElementById("offline").hidden = true;
  store.flushMarks().catch(() => {}).then(() => store.sync().catch(() => {}));
});
window.addEventListener("offline", () => { document.getElementById("offline").hidden = false; });
store.listeners.add(() => { document.getElementById("offline").hidden = !store.offline; });
if ("serviceWorker" in navigator) navigator.serviceWorker.register("sw.js").catch(() => {});
// Deletes waiting for their undo go out when the page goes away, or at the next start.
window.addEventListener("pagehide", () => { store.flushDeletes({ all: true }); });
// The skip link moves focus without changing the route.
document.querySelector(".skip").addEventListener("click", (e) => { e.preventDefault(); view.focus(); });

// Back from Apple or Google: finish the sign-in, then the list (or onboarding the first time).
async function boot() {
  // After a reload the access token is gone (it lives in memory): the cookie brings a new one.
  // Refused: signed out. Offline: the cached list still shows, and requests retry the refresh.
  if (session.get() && !session.get().accessToken && !isCallback()) {
    try { if (!await refresh()) { session.clear(); store.clear(); } } catch { /* offline */ }
  }
  store.flushDeletes({ all: true });
  store.flushMarks().catch(() => {});
  if (isCallback()) {
    try {
      await finishProviderSignIn();
      store.clear();
      await store.loadMe();
      const after = sessionStorage.getItem("chronir.after");
      sessionStorage.removeItem("chronir.after");
      history.replaceState(null, "", `${location.pathname}${after || (localStorage.getItem("chronir.onboarded") ? "#/alarms" : "#/welcome")}`);
    } catch (e) {
      sessionStorage.setItem("chronir.authError", e.code ? `${e.message} (${e.code})` : e.message);
    }
  }
  route();
}
boot();


