// The Chronir API from the browser: JSON requests with the session's bearer token, renewed
// once through /v1/auth/refresh when it has expired. Errors carry the API's CA code.
//
// No token is stored where a script could read it later: the refresh token lives in an
// HttpOnly cookie the gateway sets for /v1/auth/refresh (every request says
// `X-Chronir-Session: cookie`), the access token in this module's memory only. localStorage
// keeps just the signed-in user, so a reload knows to refresh.
const KEY = "chronir.session";
const COOKIE_MODE = { "X-Chronir-Session": "cookie" };
let accessToken = null;

export class ApiError extends Error {
  constructor(status, code, message, details) { super(message); this.status = status; this.code = code; this.details = details; }
}

export const session = {
  /** The signed-in user and the access token in memory (null until a refresh after a reload). */
  get() {
    let s;
    try { s = JSON.parse(localStorage.getItem(KEY)); } catch { s = null; }
    return s ? { user: s.user, accessToken, legacyRefreshToken: s.refreshToken } : null;
  },
  set(s) {
    if (s.accessToken) accessToken = s.accessToken;
    localStorage.setItem(KEY, JSON.stringify({ user: s.user }));
  },
  clear() { accessToken = null; localStorage.removeItem(KEY); },
};

async function send(method, path, body, headers = {}) {
  const s = session.get();
  const h = { ...COOKIE_MODE, ...headers };
  if (s?.accessToken) h.Authorization = `Bearer ${s.accessToken}`;
  let payload;
  if (body instanceof Blob) { payload = body; }
  else if (body !== undefined) { h["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  return fetch(path, { method, headers: h, body: payload });
}

let refreshing = null;

/** Renews the tokens once for every caller that met a 401 at the same time (a refresh token
 *  works once: two refreshes with it would end the session). The refresh token is the cookie;
 *  a session stored by an older version of the app (its token in localStorage) moves into the
 *  cookie with this refresh. Answers false when the server refused, throws when offline. */
export function refresh() {
  refreshing ??= (async () => {
    const s = session.get();
    if (!s) return false;
    const r = await fetch("/v1/auth/refresh", { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", ...COOKIE_MODE },
      body: JSON.stringify(s.legacyRefreshToken ? { refreshToken: s.legacyRefreshToken } : {}) });
    if (!r.ok) return false;
    const next = await r.json();
    session.set({ accessToken: next.accessToken, user: next.user ?? s.user });
    return true;
  })().finally(() => { setTimeout(() => { refreshing = null; }, 0); });
  return refreshing;
}

/** Sends a request; answers the parsed JSON (or null for 204), the Response for `raw`. */
export async function api(method, path, body, { headers, raw } = {}) {
  let r = await send(method, path, body, headers);
  if (r.status === 401 && !path.startsWith("/v1/auth/") && await refresh()) r = await send(method, path, body, headers);
  if (raw && r.ok) return r;
  if (r.status === 204 || r.status === 304) return null;
  const type = r.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await r.json() : await r.text();
  if (!r.ok) {
    if (r.status === 401 && !path.startsWith("/v1/auth/")) window.dispatchEvent(new Event("chronir:signed-out"));
    // Errors are RFC 9457 problem details (application/problem+json): `detail` is the text
    // (`message`, the same text, is what servers before them sent).
    throw new ApiError(r.status, data?.code, data?.detail || data?.message || `HTTP ${r.status}`, data?.details);
  }
  return data;
}

export function signedIn(result) {
  session.set({ accessToken: result.accessToken, user: result.user });
}
