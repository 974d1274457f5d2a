// Offline reading: the app shell is cached on install and served when the network is gone;
// the alarms themselves are kept by the app in localStorage (js/store.js).
const CACHE = "chronir-shell-v3";
const SHELL = ["./", "index.html", "app.css", "tokens.css", "icon.svg", "manifest.webmanifest", "js/app.js", "js/api.js", "js/live.js",
  "js/store.js", "js/ui.js", "js/schedule.js", "js/oauth.js", "js/sound.js", "js/views/auth.js", "js/views/alarms.js", "js/views/firing.js", "js/views/groups.js", "js/views/account.js", "js/views/security.js"];

self.addEventListener("install", (e) => { e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting())); });
self.addEventListener("activate", (e) => { e.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k)))).then(() => self.clients.claim())); });
self.addEventListener("fetch", (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== "GET" || url.origin !== location.origin || !url.pathname.startsWith("/app/")) return;
  // Network first (an upgrade shows at once), the cached shell when offline.
  e.respondWith(fetch(e.request).then((r) => {
    if (r.ok) { const copy = r.clone(); caches.open(CACHE).then((c) => c.put(e.request, copy)); }
    return r;
  }).catch(() => caches.match(e.request).then((m) => m || caches.match("index.html"))));
});
