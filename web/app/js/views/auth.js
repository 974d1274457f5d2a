// Sign up, sign in, and the three onboarding screens (US-6.1).
import { api, signedIn, session, refresh } from "../api.js";
import { store } from "../store.js";
import { zone } from "../schedule.js";
import { h, field, errorText } from "../ui.js";
import { providers, start } from "../oauth.js";

export function authView(mode) {
  const up = mode === "signup";
  const err = h("p", { class: "error", role: "alert" }, sessionStorage.getItem("chronir.authError") || "");
  sessionStorage.removeItem("chronir.authError");
  // Apple and Google, when this server is configured for them.
  const others = h("div", { class: "stack", "aria-label": "Other ways to sign in", role: "group" });
  providers().then((list) => {
    const names = { apple: "Continue with Apple", google: "Continue with Google" };
    others.replaceChildren(...list.filter((p) => names[p.name]).map((p) =>
      h("button", { class: "btn", type: "button", "data-provider": p.name, onclick: () => start(p).catch((e) => { err.textContent = errorText(e); }) }, names[p.name])));
    if (list.length) others.append(h("p", { class: "muted", style: "text-align:center" }, "or with your email"));
  });
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: up ? "new-password" : "current-password", required: true, minlength: up ? 8 : null });
  const name = h("input", { type: "text", name: "displayName", autocomplete: "name", required: true, maxlength: 80 });
  const form = h("form", { class: "stack", onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = "";
    try {
      const body = up ? { email: email.value, password: password.value, displayName: name.value, timezone: zone() } : { email: email.value, password: password.value };
      signedIn(await api("POST", up ? "/v1/auth/signup" : "/v1/auth/login", body));
      store.clear();
      await store.loadMe();
      const after = sessionStorage.getItem("chronir.after");
      sessionStorage.removeItem("chronir.after");
      location.hash = after || (up ? "#/welcome" : "#/alarms");
    } catch (e2) { err.textContent = errorText(e2); }
  } },
    up ? field("Your name", name) : null,
    field("Email", email),
    field("Password" + (up ? " (at least 8 characters)" : ""), password),
    err,
    h("button", { class: "btn btn-primary", type: "submit" }, up ? "Create account" : "Sign in"));
  return h("section", {},
    h("h1", {}, up ? "Never miss the things that come once a month" : "Welcome back"),
    h("p", { class: "muted" }, "Chronir keeps long-cycle alarms — rent, renewals, filters, check-ups — and rings until you mark them done."),
    others,
    form,
    up ? null : h("p", {}, h("a", { href: "#/forgot" }, "Forgot your password?")),
    h("p", {}, up ? "Have an account? " : "New here? ", h("a", { href: up ? "#/signin" : "#/signup" }, up ? "Sign in" : "Create an account")));
}

/** "Forgot your password?": a reset mail to the address, when it has an account (the answer
 *  is the same either way). Also how the owner of an address someone else signed up with
 *  takes that account back: the reset proves the address and removes what was made in it. */
export function forgotView() {
  const err = h("p", { class: "error", role: "alert" });
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true, maxlength: 254 });
  const section = h("section", {});
  const form = h("form", { class: "stack", onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = "";
    try {
      await api("POST", "/v1/auth/password-reset", { email: email.value });
      section.replaceChildren(
        h("h1", {}, "Check your mail"),
        h("p", { role: "status" }, "If an account has this address, a mail with a link to choose a new password is on its way."),
        h("a", { class: "btn", href: "#/signin" }, "Back to sign in"));
    } catch (e2) { err.textContent = errorText(e2); }
  } },
    h("label", {}, "Email", email),
    err,
    h("button", { class: "btn btn-primary", type: "submit" }, "Send the reset mail"));
  section.append(
    h("h1", {}, "Reset your password"),
    h("p", { class: "muted" }, "We mail a link to choose a new password. Resetting signs you out on every device. If someone else made an account with your address, the reset gives it to you and removes everything they made in it."),
    form);
  return section;
}

/** The link of a password-reset mail: a new password for the account, then sign in. */
export function resetView(token) {
  const err = h("p", { class: "error", role: "alert" });
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true, minlength: 8, maxlength: 128 });
  const section = h("section", {});
  const form = h("form", { class: "stack", onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = "";
    try {
      await api("POST", "/v1/auth/password-reset/confirm", { token, password: password.value });
      history.replaceState(null, "", `${location.pathname}#/signin`);
      section.replaceChildren(
        h("h1", {}, "Your password is changed"),
        h("p", { role: "status" }, "You were signed out everywhere. Sign in with your new password."),
        h("a", { class: "btn btn-primary", href: "#/signin" }, "Sign in"));
    } catch (e2) { err.textContent = errorText(e2); }
  } },
    field("New password (at least 8 characters)", password),
    err,
    h("button", { class: "btn btn-primary", type: "submit" }, "Set new password"));
  section.append(
    h("h1", {}, "Choose a new password"),
    h("p", { class: "muted" }, "This link works once, for a limited time. Setting a password signs you out on every device."),
    form);
  return section;
}

/** The link of a verification mail. It confirms the address only inside the account it was
 *  sent for (issue 74): signed out, the screen says so and offers to sign in (coming back
 *  here after) — and tells the owner of an address someone else signed up with what to do. */
export function verifyView(token) {
  const status = h("p", { role: "status" }, "Confirming your address…");
  const section = h("section", { class: "stack" }, h("h1", {}, "Confirm your email"), status);
  // The token leaves the address bar (and the history) at once.
  history.replaceState(null, "", `${location.pathname}${session.get() ? "#/signin" : "#/signup"}`);
  const notYours = h("p", { class: "muted" }, "Did not make a Chronir account? Someone typed your address: ignore the mail and nothing is confirmed. To take that account and remove what was made in it, ",
    h("a", { href: "#/forgot" }, "reset its password"), ".");
  if (!session.get()) {
    status.textContent = "Sign in to the account this mail was sent for: the link confirms the address only there.";
    section.append(h("a", { class: "btn btn-primary", href: "#/signin", onclick: () => sessionStorage.setItem("chronir.after", `#/verify/${token}`) }, "Sign in to confirm"), notYours);
    return section;
  }
  (async () => {
    if (!session.get()?.accessToken) await refresh();   // after a reload: the access token from the cookie
    await api("POST", "/v1/auth/verify-email", { token });
  })()
    .then(() => {
      status.textContent = "Your address is confirmed. Thank you.";
      section.append(h("a", { class: "btn btn-primary", href: "#/alarms" }, "Open Chronir"));
    })
    .catch((e) => {
      status.textContent = "";
      const other = e?.code === "CA007";
      section.append(h("p", { class: "error", role: "alert" }, errorText(e)),
        h("p", {}, other ? "Sign out, then sign in to the account the mail was sent to and open the link again."
                         : "Ask for a new mail from Settings once you are signed in."), notYours);
    });
  return section;
}

const screens = [
  ["Alarms for the long cycles", "Weekly, monthly, yearly or every N days — Chronir knows the last day of February and the second Tuesday."],
  ["It rings until it's done", "A firing alarm takes the whole screen. Slide to complete, or snooze for as long as your plan allows."],
  ["Start with one", "Rent on the 1st? Pick a preset and save — three taps."],
];

export function onboardingView() {
  let i = 0;
  const title = h("h1"), text = h("p", { class: "muted" }), dots = h("p", { "aria-hidden": "true" });
  const next = h("button", { class: "btn btn-primary", onclick: () => { if (i < screens.length - 1) { i++; paint(); } else finish(true); } });
  function paint() {
    title.textContent = screens[i][0]; text.textContent = screens[i][1];
    dots.textContent = screens.map((_, k) => (k === i ? "●" : "○")).join(" ");
    next.textContent = i < screens.length - 1 ? "Next" : "Create my first alarm";
    if (i === 1 && "Notification" in window && Notification.permission === "default") Notification.requestPermission().catch(() => {});
  }
  function finish(create) {
    localStorage.setItem("chronir.onboarded", "1");
    api("POST", "/v1/analytics/events", { events: [{ name: "onboarding_completed", properties: { step: create ? "create" : "skipped" } }] }).catch(() => {});
    if (create) sessionStorage.setItem("chronir.openCreate", "1");
    location.hash = "#/alarms";
  }
  paint();
  return h("section", { class: "onboard stack" }, title, text, dots, h("div", { class: "row", style: "justify-content:center" },
    h("button", { class: "btn", onclick: () => finish(false) }, "Skip"), next));
}
