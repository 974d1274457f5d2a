// Sign in with Apple and Google by the providers' redirect flows (no provider script is loaded):
// the app sends the user to the provider with a random state and nonce; the provider comes back
// to /oauth/callback, which the gateway turns into /app/#id_token=…&state=…; the app checks the
// state and hands the ID token to /v1/auth/apple or /v1/auth/google, where the server verifies it.
import { api, signedIn } from "./api.js";

const KEY = "chronir.oauth";
let listed = null;

/** The providers this server offers to browsers (empty when none is configured). */
export function providers() {
  listed ??= fetch("/v1/auth/providers").then((r) => (r.ok ? r.json() : { providers: [] })).then((b) => b.providers || [])
    .catch(() => { listed = null; return []; });
  return listed;
}

function random() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(text) {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** Leaves for the provider's sign-in page. Apple gets the SHA-256 of the nonce (the server
 *  checks the token's nonce against the hash of the raw one, as for the phone apps). */
export async function start(p) {
  const state = random(), nonce = random();
  sessionStorage.setItem(KEY, JSON.stringify({ state, nonce, provider: p.name, at: Date.now() }));
  const q = new URLSearchParams({ client_id: p.clientId, redirect_uri: `${location.origin}/oauth/callback`, state });
  if (p.name === "apple") {
    q.set("response_type", "code id_token"); q.set("response_mode", "form_post"); q.set("scope", "name email");
    q.set("nonce", await sha256Hex(nonce));
  } else {
    q.set("response_type", "id_token"); q.set("scope", "openid email profile"); q.set("nonce", nonce); q.set("prompt", "select_account");
  }
  location.assign(`${p.authorizeUrl}${p.authorizeUrl.includes("?") ? "&" : "?"}${q}`);
}

function claims(token) {
  try {
    const b64 = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch { return {}; }
}

/** Whether the page was opened by a provider's answer. */
export function isCallback() {
  const q = new URLSearchParams(location.hash.slice(1));
  return q.has("state") && (q.has("id_token") || q.has("error"));
}

/** Finishes a sign-in from the fragment: answers the session, or throws a readable error. The
 *  fragment is removed first, so the token does not stay in the address bar or the history. */
export async function finish() {
  const q = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, "", `${location.pathname}#/signin`);
  const saved = JSON.parse(sessionStorage.getItem(KEY) || "null");
  sessionStorage.removeItem(KEY);
  if (!saved || saved.state !== q.get("state") || Date.now() - saved.at > 15 * 60_000) {
    throw new Error("That sign-in did not start here (or took too long); please try again.");
  }
  if (q.get("error")) throw new Error(q.get("error") === "user_cancelled_authorize" || q.get("error") === "access_denied"
    ? "Sign-in was cancelled." : `The provider refused the sign-in: ${q.get("error_description") || q.get("error")}`);
  const token = q.get("id_token");
  const c = claims(token);
  if (saved.provider === "google") {
    if (c.nonce !== saved.nonce) throw new Error("The sign-in answer does not match this request; please try again.");
    return signedIn(await api("POST", "/v1/auth/google", { idToken: token, nonce: saved.nonce, displayName: c.name || undefined }));
  }
  let displayName;
  try {
    const n = JSON.parse(q.get("user") || "{}").name || {};
    displayName = [n.firstName, n.lastName].filter(Boolean).join(" ") || undefined;
  } catch { /* the name comes only on the first sign-in */ }
  return signedIn(await api("POST", "/v1/auth/apple", { identityToken: token, nonce: saved.nonce, displayName }));
}
