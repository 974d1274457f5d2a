// The Chronir API from the browser: JSON requests with the session's bearer token, renewed
// once through /v1/auth/refresh when it has expired. Errors carry the API's CA code.
const KEY = "chronir.session";

export class ApiError extends Error {
  constructor(status, code, message, details) { super(message); this.status = status; this.code = code; this.details = details; }
}

export const session = {
  get() { try { return JSON.parse(localStorage.getItem(KEY)); } catch { return null; } },
  set(s) { localStorage.setItem(KEY, JSON.stringify(s)); },
  clear() { localStorage.removeItem(KEY); },
};

async function send(method, path, body, headers = {}) {
  const s = session.get();
  const h = { ...headers };
  if (s?.accessToken) h.Authorization = `Bearer ${s.accessToken}`;
  let payload;
  if (body instanceof Blob) { payload = body; }
  else if (body !== undefined) { h["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  return fetch(path, { method, headers: h, body: payload });
}

let refreshing = null;

/** Renews the tokens once for every caller that met a 401 at the same time (a refresh token
 *  works once: two refreshes with it would end the session). */
export function refresh() {
  refreshing ??= (async () => {
    const s = session.get();
    if (!s?.refreshToken) return false;
    const r = await fetch("/v1/auth/refresh", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refreshToken: s.refreshToken }) });
    if (!r.ok) return false;
    const next = await r.json();
    session.set({ ...s, accessToken: next.accessToken, refreshToken: next.refreshToken, user: next.user ?? s.user });
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
    throw new ApiError(r.status, data?.code, data?.message || `HTTP ${r.status}`, data?.details);
  }
  return data;
}

export function signedIn(result) {
  session.set({ accessToken: result.accessToken, refreshToken: result.refreshToken, user: result.user });
}
