// The live stream (GET /v1/me/events, Server-Sent Events) read with fetch so the bearer token
// goes in a header; reconnects with the last event id, so nothing is missed or repeated.
import { refresh, session } from "./api.js";

export function listen(onEvent, onState = () => {}) {
  let stopped = false, lastId = sessionStorage.getItem("chronir.lastEventId") || "", controller;
  async function run() {
    while (!stopped) {
      controller = new AbortController();
      try {
        const s = session.get();
        if (!s?.accessToken) return;
        const url = "/v1/me/events" + (lastId ? `?lastEventId=${encodeURIComponent(lastId)}` : "");
        const r = await fetch(url, { headers: { Authorization: `Bearer ${s.accessToken}`, Accept: "text/event-stream" }, signal: controller.signal });
        if (r.status === 401) {
          if (await refresh().catch(() => false)) continue;
          window.dispatchEvent(new Event("chronir:signed-out"));
          return;
        }
        if (!r.ok || !r.body) throw new Error(`live stream: HTTP ${r.status}`);
        onState("open");
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
            const ev = parse(block);
            if (ev?.data) {
              if (ev.id) { lastId = ev.id; sessionStorage.setItem("chronir.lastEventId", lastId); }
              try { onEvent(ev.event || "message", JSON.parse(ev.data)); } catch (e) { console.error(e); }
            }
          }
        }
      } catch (e) { if (stopped) return; }
      onState("closed");
      await wait(1500);
    }
  }
  function parse(block) {
    const ev = {};
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":"); const k = i < 0 ? line : line.slice(0, i); const v = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (k === "data") ev.data = ev.data ? ev.data + "\n" + v : v; else ev[k] = v;
    }
    return ev;
  }
  run();
  return () => { stopped = true; controller?.abort(); };
}

/** Forgets where the stream stood (sign-out: the next user starts from their own inbox). */
export function forgetPosition() { sessionStorage.removeItem("chronir.lastEventId"); }

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
