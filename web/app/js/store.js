// The signed-in user's alarms, kept in memory and in localStorage so the list reads offline,
// and brought up to date through the delta feed (GET /v1/alarms?since=cursor).
import { api, session } from "./api.js";

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

  async loadMe() { this.me = await api("GET", "/v1/me"); this.save(); return this.me; },

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
        // 412: the If-Match version is stale (409 from servers before problem details).
        const stale = r.status === 412 || r.status === 409;
        if (r.ok || r.status === 404 || stale) { const p = pending(); delete p[id]; localStorage.setItem(PENDING, JSON.stringify(p)); }
        if (stale) this.sync().catch(() => {});   // changed elsewhere meanwhile: show it again
      } catch { /* offline: kept for the next start */ }
    }
  },

  /** Marks an occurrence done (or skipped) with the time it was done on this device. Offline,
   *  the mark waits in localStorage and goes out when the network is back (``flushMarks``), with
   *  that time: the server records it on time, or turns a `missed` log into the late completion.
   *  Answers the server's reply, or null when the mark was queued. */
  async mark(alarm, { status = "completed", scheduledDate = alarm.nextFireDate, note } = {}) {
    const body = { status, completedAt: new Date().toISOString() };
    if (scheduledDate) body.scheduledDate = scheduledDate;
    if (note) body.note = note;
    try {
      const r = await api("POST", `/v1/alarms/${encodeURIComponent(alarm.id)}/completions`, body);
      if (r.alarm) this.put(r.alarm);
      return r;
    } catch (e) {
      if (e.status) throw e;   // refused: the caller shows why
      localStorage.setItem(MARKS, JSON.stringify([...marks(), { alarmId: alarm.id, ...body }]));
      this.offline = true;
      this.changed();
      return null;
    }
  },
  /** Marks waiting for the network. */
  pendingMarks() { return marks(); },
  /** Sends the queued marks in order; each leaves the queue once the server answered (a refusal
   *  too: it will not change by retrying). */
  async flushMarks() {
    for (const m of marks()) {
      const { alarmId, ...body } = m;
      try {
        const r = await api("POST", `/v1/alarms/${encodeURIComponent(alarmId)}/completions`, body);
        if (r.alarm) this.put(r.alarm);
      } catch (e) {
        if (!e.status) return;   // still offline
      }
      localStorage.setItem(MARKS, JSON.stringify(marks().filter((x) => x.alarmId !== alarmId || x.completedAt !== m.completedAt)));
    }
    this.changed();
  },

  put(alarm) { if (alarm.deletedAt) this.alarms.delete(alarm.id); else this.alarms.set(alarm.id, alarm); this.save(); this.changed(); },
  remove(id) { this.alarms.delete(id); this.save(); this.changed(); },

  /** Alarms sorted by next fire (paused and ended ones last). */
  sorted() {
    const key = (a) => (a.isPaused || !a.isActive || !a.nextFireDate) ? Infinity : new Date(a.nextFireDate).getTime();
    return [...this.alarms.values()].sort((a, b) => key(a) - key(b) || a.title.localeCompare(b.title));
  },
};
