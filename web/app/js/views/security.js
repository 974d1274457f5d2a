// Settings' "Sign-in and security" card: the address and its confirmation, the Apple and
// Google sign-ins linked to the account (unlink), and the signed-in sessions (sign one out, or
// sign out everywhere). Issue 74.
import { api } from "../api.js";
import { h, toast, errorText } from "../ui.js";

const when = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "—");
const providerName = (p) => ({ apple: "Apple", google: "Google" })[p] || p;

/** The card; `me` is the profile as loaded. */
export function securityCard(me) {
  const err = h("p", { class: "error", role: "alert" });
  const identities = h("ul", { class: "plain", "aria-label": "Linked sign-ins" });
  const sessions = h("ul", { class: "plain", "aria-label": "Signed-in sessions" });
  const act = async (fn) => { err.textContent = ""; try { await fn(); } catch (e) { err.textContent = errorText(e); } };

  async function paintIdentities() {
    const { identities: list } = await api("GET", "/v1/me/identities");
    identities.replaceChildren(...(list.length ? list.map((i) => h("li", { class: "row", "data-provider": i.provider },
      h("span", { style: "flex:1" }, `${providerName(i.provider)}${i.email ? ` (${i.email})` : ""} · linked ${when(i.linkedAt)}`),
      h("button", { class: "btn", onclick: () => act(async () => {
        if (!confirm(`Stop signing in with ${providerName(i.provider)}?`)) return;
        await api("DELETE", `/v1/me/identities/${encodeURIComponent(i.provider)}`);
        toast(`${providerName(i.provider)} unlinked`);
        await paintIdentities();
      }) }, "Unlink"))) : [h("li", { class: "muted" }, "No Apple or Google sign-in is linked.")]));
  }

  async function paintSessions() {
    const { sessions: list } = await api("GET", "/v1/me/sessions");
    list.sort((a, b) => Number(b.current) - Number(a.current));   // this browser first
    sessions.replaceChildren(...list.map((s) => h("li", { class: "row", "data-current": s.current ? "true" : "false" },
      h("span", { style: "flex:1" }, `Signed in ${when(s.createdAt)} · last active ${when(s.lastActiveAt)}`, s.current ? h("strong", {}, " · this browser") : ""),
      s.current ? null : h("button", { class: "btn", onclick: () => act(async () => {
        await api("DELETE", `/v1/me/sessions/${encodeURIComponent(s.id)}`);
        toast("Signed out there");
        await paintSessions();
      }) }, "Sign out"))));
  }

  const verified = me.emailVerified || !!me.emailVerifiedAt;
  const address = me.email
    ? h("p", {}, `${me.email} · `, verified ? "confirmed" : h("span", {}, "not confirmed yet ",
        h("button", { class: "btn", onclick: () => act(async () => {
          await api("POST", "/v1/me/email-verification");
          toast("A confirmation mail is on its way. Open its link while signed in here.");
        }) }, "Send the confirmation mail")))
    : h("p", { class: "muted" }, "No address: link one to sign in from other devices.");

  paintIdentities().catch((e) => { err.textContent = errorText(e); });
  paintSessions().catch((e) => { err.textContent = errorText(e); });
  return h("section", { class: "card stack", "aria-label": "Sign-in and security" },
    h("h2", { style: "margin:0" }, "Sign-in and security"),
    address,
    h("h3", { style: "margin:0" }, "Apple and Google"), identities,
    h("h3", { style: "margin:0" }, "Where you are signed in"), sessions,
    err,
    h("button", { class: "btn btn-danger", onclick: () => act(async () => {
      if (!confirm("Sign out on every device, this browser included?")) return;
      await api("DELETE", "/v1/me/sessions");
      window.dispatchEvent(new Event("chronir:signed-out"));
    }) }, "Sign out everywhere"));
}
