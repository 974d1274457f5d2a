// The signed-in user's alarms, kept in memory and in localStorage so the list reads offline,
// and brought up to date through the delta feed (GET /v1/alarms?since=cursor).
import { api, session } from "./api.js";
import { setClock } from "./schedule.js";

const ALARMS = "chronir.alarms", CURSOR = "chronir.feedCursor", ME = "chronir.me", PENDING = "chronir.pendingDeletes",
  MARKS = "chronir.pendingMarks";
const pending = () => JSON.parse(localStorage.getItem(PENDING) || "{}");
const marks = () => JSON.parse(localStorage.getItem(MARKS) || "[]");

export const store = {
  me: JSON.parse(localStorage.getItem(ME) || "null"),
  alarms: new Map(Object.entries(JSON.parse(localStorage.getItem(ALARMS) || "{}"))),
  cursor: localStorage.getItem(CURSOR) || "0",
  offline: false,
  listeners: new Set(),

  changed() { for (const f of this.listeners) f(); },
  save() {
    localStorage.setItem(ALARMS, JSON.stringify(Object.fromEntries(this.alarms)));
    localStorage.setItem(CURSOR, this.cursor);
    if (this.me) localStorage.setItem(ME, JSON.stringify(this.me));
  },
  clear() { for (const k of [ALARMS, CURSOR, ME, PENDING, MARKS]) localStorage.removeItem(k); this.alarms.clear(); this.cursor = "0"; this.me = null; },

  async loadMe() { this.me = await api("GET", "/v1/me"); setClock(this.me.settings?.use24HourFormat); this.save(); this.changed(); return this.me; },

  /** Active alarms this user owns, and the plan's limit (null: none), for "2 of 2 alarms". */
  usage() {
    const active = [...this.alarms.values()].filter((a) => a.ownerId === this.me?.uid && a.isActive && !a.deletedAt).length;
    return { active, limit: (this.me?.tier || "free") === "free" ? 2 : null };
  },

  /** Applies the feed from the stored cursor until it has nothing more. */
  async sync() {
    try {
      for (let page = 0; page < 50; page++) {
        const r = await api("GET", `/v1/alarms?since=${encodeURIComponent(this.cursor)}`);
        for (const c of r.changes) {
          if (c.deleted || !c.alarm || c.alarm.deletedAt) this.alarms.delete(c.id);
          else if (!(c.id in pending())) this.alarms.set(c.id, c.alarm);   // a delete waiting for its undo stays hidden
        }
        this.cursor = r.nextCursor;
        if (!r.hasMore) break;
      }
      this.offline = false;
      this.save();
    } catch (e) {
      if (e.status) throw e;
      this.offline = true;   // no network: keep what was saved
    }
    this.changed();
  },

  /** Deletes an alarm after `ms` unless ``undoDelete`` comes first; a page closed meanwhile
   *  sends it as it goes (or at the next start), so the delete is never lost. */
  deleteLater(alarm, ms = 5000) {
    localStorage.setItem(PENDING, JSON.stringify({ ...pending(), [alarm.id]: { version: alarm.version, due: Date.now() + ms } }));
    this.remove(alarm.id);
    setTimeout(() => this.flushDeletes(), ms + 50);
  },
  undoDelete(alarm) {
    const p = pending(); delete p[alarm.id]; localStorage.setItem(PENDING, JSON.stringify(p));
    this.put(alarm);
  },
  /** Sends the deletes that are due (all of them when the page goes away). */
  async flushDeletes({ all = false } = {}) {
    const token = session.get()?.accessToken;
    if (!token) return;
    for (const [id, d] of Object.entries(pending())) {
      if (!all && d.due > Date.now()) continue;
      try {
        const r = await fetch(`/v1/alarms/${encodeURIComponent(id)}`, { method: "DELETE", keepalive: true,
          headers: { Authorization: `Bearer ${token}`, "If-Match": `"${d.version}"` } });
        // 412: the If-Match version is stale (409 from servers before problem details): the
        // alarm changed after the user chose to delete it (a mark, a member's edit). The delete
        // still stands — it is sent again on the current version, once; a second refusal is
        // shown, never hidden.
        let stale = r.status === 412 || r.status === 409;
        let ok = r.ok || r.status === 404;
        if (stale) {
          const now = await api("GET", `/v1/alarms/${encodeURIComponent(id)}`).catch((e) => (e.status === 404 ? "gone" : null));
          if (now === "gone") ok = true;
          else if (now) {
            const again = await fetch(`/v1/alarms/${encodeURIComponent(id)}`, { method: "DELETE", keepalive: true,
              headers: { Authorization: `Bearer ${session.get()?.accessToken}`, "If-Match": `"${now.version}"` } });
            ok = again.ok || again.status === 404;
            if (!ok) { this.put(now); this.failed?.(now, again.status); }
          }
        }
        if (ok || stale) { const p = pending(); delete p[id]; localStorage.setItem(PENDING, JSON.stringify(p)); }
        if (!r.ok && !ok) this.sync().catch(() => {});   // refused: the alarm shows again
      } catch { /* offline: kept for the next start */ }
    }
  },

  /** Marks an occurrence done (or skipped): `scheduledDate` when given, else the alarm's
   *  pending one. Offline, the mark waits in localStorage with the occurrence and the time it
   *  was made, and goes out when the network is back (``flushMarks``): the server records it
   *  at that time, or turns a `missed` log into the late completion. Answers the server's
   *  reply, or null when the mark was queued. */
  async mark(alarm, { status = "completed", scheduledDate, note } = {}) {
    const body = { status };
    if (scheduledDate) body.scheduledDate = scheduledDate;
    if (note) body.note = note;
    const madeAt = new Date().toISOString();
    try {
      const r = await api("POST", `/v1/alarms/${encodeURIComponent(alarm.id)}/completions`, body);
      if (r.alarm) this.put(r.alarm);
      return r;
    } catch (e) {
      if (e.status) throw e;   // refused: the caller shows why
      const queued = { alarmId: alarm.id, ...body, completedAt: madeAt };
      queued.scheduledDate ??= alarm.nextFireDate;   // the occurrence it was, whatever comes next
      localStorage.setItem(MARKS, JSON.stringify([...marks(), queued]));
      this.offline = true;
      this.changed();
      return null;
    }
  },
  /** Marks waiting for the network. */
  pendingMarks() { return marks(); },
  /** Sends the queued marks in order, one flush at a time. A mark leaves the queue once the
   *  server took or refused it for good (4xx); it stays when the network, a deploy or the
   *  session is in the way (no answer, 5xx, 429, 401). */
  async flushMarks() {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      for (const m of marks()) {
        const { alarmId, ...body } = m;
        try {
          const r = await api("POST", `/v1/alarms/${encodeURIComponent(alarmId)}/completions`, body);
          if (r.alarm) this.put(r.alarm);
        } catch (e) {
          if (!e.status || e.status >= 500 || e.status === 429 || e.status === 401) return;
        }
        localStorage.setItem(MARKS, JSON.stringify(marks().filter((x) => x.alarmId !== alarmId || x.completedAt !== m.completedAt)));
      }
    })().finally(() => { this.flushing = null; this.changed(); });
    return this.flushing;
  },

  /** Changes alarm `id` against the newest version this page knows, and keeps the answer (the
   *  next write starts from it). When it changed elsewhere meanwhile (412), the alarm is read
   *  again and `retry(current)` decides: true sends the same change on the current version,
   *  false throws (the caller shows the current alarm). Never a success that did not happen. */
  async patch(id, body, { retry = () => true } = {}) {
    const send = (version) => api("PATCH", `/v1/alarms/${encodeURIComponent(id)}`, body,
      version === undefined ? {} : { headers: { "If-Match": `"${version}"` } });
    let alarm;
    try {
      alarm = await send(this.alarms.get(id)?.version);
    } catch (e) {
      if (e.status !== 412 && e.status !== 409) throw e;
      const current = await api("GET", `/v1/alarms/${encodeURIComponent(id)}`);
      this.put(current);
      if (!retry(current)) throw Object.assign(new Error("This alarm was changed elsewhere; your change was not saved. Here is the current alarm."), { stale: true });
      alarm = await send(current.version);
    }
    this.put(alarm);
    return alarm;
  },

  put(alarm) { if (alarm.deletedAt) this.alarms.delete(alarm.id); else this.alarms.set(alarm.id, alarm); this.save(); this.changed(); },
  remove(id) { this.alarms.delete(id); this.save(); this.changed(); },

  /** Alarms sorted by next fire (paused and ended ones last). */
  sorted() {
    const key = (a) => (a.isPaused || !a.isActive || !a.nextFireDate) ? Infinity : new Date(a.nextFireDate).getTime();
    return [...this.alarms.values()].sort((a, b) => key(a) - key(b) || a.title.localeCompare(b.title));
  },
};

setClock(store.me?.settings?.use24HourFormat);
