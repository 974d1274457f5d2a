// Schedules as the API takes them (proto/openapi.yaml Schedule), the presets of the
// three-tap creation, and how an alarm's schedule and next fire read to a person.
export const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
/** Every IANA zone the browser knows, with this device's and UTC first. */
export const zones = () => [...new Set([zone(), "UTC", ...(Intl.supportedValuesOf?.("timeZone") || [])])];
const pad = (n) => String(n).padStart(2, "0");
export const localMidnight = (date = new Date()) => new Date(date.getFullYear(), date.getMonth(), date.getDate()).toISOString();
/** The instant a `YYYY-MM-DD` day starts in time zone `tz` (the server reads a schedule's start
 *  day in the schedule's own zone). */
export function midnightIn(day, tz) {
  const [y, m, d] = day.split("-").map(Number);
  const wall = Date.UTC(y, m - 1, d);
  const offset = (t) => {
    const p = Object.fromEntries(new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit",
      day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).formatToParts(t).map((x) => [x.type, x.value]));
    return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second) - t;
  };
  let t = wall - offset(wall);
  t = wall - offset(t);   // again, for a day that starts across a DST change
  return new Date(t).toISOString();
}
export const isoDay = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

const base = (type, time = "09:00") => ({ type, timeOfDay: time, timezone: zone(), startDate: localMidnight(), floating: true });
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The presets of the creation sheet: a title and a schedule each, ready to save. */
export function presets(now = new Date()) {
  return [
    { id: "monthly-1", label: "Monthly · 1st, 09:00", title: "Pay rent", schedule: { ...base("monthly"), monthlyType: "fixed", dayOfMonth: 1 } },
    { id: "monthly-last", label: "Monthly · last day", title: "Month-end review", schedule: { ...base("monthly"), monthlyType: "fixed", dayOfMonth: 0 } },
    { id: "weekly-mon", label: "Weekly · Monday", title: "Weekly check-in", schedule: { ...base("weekly"), daysOfWeek: [1] } },
    { id: "annual-today", label: `Yearly · ${MONTHS[now.getMonth()]} ${now.getDate()}`, title: "Yearly renewal",
      schedule: { ...base("annual"), month: now.getMonth() + 1, dayOfMonthAnnual: now.getDate() } },
    { id: "custom-90", label: "Every 90 days", title: "Replace filter", schedule: { ...base("custom"), intervalDays: 90 } },
    { id: "quarterly", label: "Every 3 months · 1st", title: "Quarterly taxes", schedule: { ...base("monthly"), monthlyType: "fixed", dayOfMonth: 1, interval: 3 } },
  ];
}

/** A schedule from the detailed form's values. */
export function fromForm(v) {
  const tz = v.timezone || zone();
  const s = { type: v.type, timeOfDay: v.time || "09:00", timezone: tz, startDate: midnightIn(v.startDate || isoDay(new Date()), tz) };
  if (v.interval && Number(v.interval) > 1 && ["weekly", "monthly", "annual"].includes(v.type)) s.interval = Number(v.interval);
  // US-7.3: floating follows the owner's current zone (the default); fixed keeps this one.
  s.floating = v.floating !== "fixed";
  switch (v.type) {
    case "weekly": s.daysOfWeek = v.days?.length ? v.days.map(Number) : [1]; break;
    case "monthly":
      if (v.monthly === "relative") { s.monthlyType = "relative"; s.relativeWeek = Number(v.relativeWeek || 1); s.relativeDayOfWeek = Number(v.relativeDay || 1); }
      else { s.monthlyType = "fixed"; s.dayOfMonth = v.monthly === "last" ? 0 : Number(v.dayOfMonth || 1); }
      break;
    case "annual": s.month = Number(v.month || 1); s.dayOfMonthAnnual = Number(v.dayOfMonthAnnual || 1); break;
    case "custom": s.intervalDays = Number(v.intervalDays || 30); break;
    case "once": break;
  }
  return s;
}

const ordinal = (n) => n === 5 ? "last" : ["first", "second", "third", "fourth"][n - 1];
/** The clock of every time shown: the profile's 12/24-hour setting (US-7.1). */
let hour12;
export function setClock(use24HourFormat) { hour12 = use24HourFormat === undefined ? undefined : !use24HourFormat; }

/** "09:30" (a schedule's local time) in the user's clock: "9:30 AM" or "09:30". */
export function formatTime(hm) {
  if (!hm) return "—";
  const [h, m] = hm.split(":").map(Number);
  return new Date(2000, 0, 1, h, m).toLocaleTimeString(undefined, { hour: hour12 === false ? "2-digit" : "numeric", minute: "2-digit", hour12 });
}

/** ["Fri, Jan 1", "9:00 AM"] (the year only when it is not this one): a card's headline. */
export function shortDate(iso, now = new Date()) {
  if (!iso) return ["—", ""];
  const d = new Date(iso);
  const day = d.toLocaleDateString(undefined, { weekday: "short", month: "short", day: "numeric",
    year: d.getFullYear() === now.getFullYear() ? undefined : "numeric" });
  return [day, formatClock(iso)];
}

/** An instant's time of day in the user's clock. */
export function formatClock(iso) {
  return new Date(iso).toLocaleTimeString(undefined, { hour: hour12 === false ? "2-digit" : "numeric", minute: "2-digit", hour12 });
}

/** "in 3 days", "in 5 h", "in 12 min", "now", "2 h ago": compact, for a card. */
export function relative(iso, now = Date.now()) {
  if (!iso) return "";
  const s = Math.round((new Date(iso).getTime() - now) / 1000), a = Math.abs(s);
  const text = a < 60 ? null : a < 3600 ? `${Math.round(a / 60)} min` : a < 86400 ? `${Math.round(a / 3600)} h`
    : `${Math.round(a / 86400)} day${Math.round(a / 86400) === 1 ? "" : "s"}`;
  if (!text) return "now";
  return s > 0 ? `in ${text}` : `${text} ago`;
}

export function describe(s) {
  const every = (s.interval || 1) > 1 ? `every ${s.interval} ` : "";
  switch (s.type) {
    case "weekly": return `${every ? every + "weeks" : "Weekly"} on ${(s.daysOfWeek || []).map((d) => WEEKDAYS[d - 1]).join(", ")} at ${formatTime(s.timeOfDay)}`;
    case "monthly":
      if (s.monthlyType === "relative") return `${every ? every + "months" : "Monthly"} on the ${ordinal(s.relativeWeek)} ${WEEKDAYS[s.relativeDayOfWeek - 1]} at ${formatTime(s.timeOfDay)}`;
      return `${every ? every + "months" : "Monthly"} on ${s.dayOfMonth === 0 ? "the last day" : `day ${s.dayOfMonth}`} at ${formatTime(s.timeOfDay)}`;
    case "annual": return `${every ? every + "years" : "Yearly"} on ${MONTHS[s.month - 1]} ${s.dayOfMonthAnnual} at ${formatTime(s.timeOfDay)}`;
    case "custom": return `Every ${s.intervalDays} days at ${formatTime(s.timeOfDay)}`;
    case "once": return `Once, ${new Date(s.startDate).toLocaleDateString(undefined, { timeZone: s.timezone, month: "short", day: "numeric", year: "numeric" })} at ${formatTime(s.timeOfDay)}`;
    default: return s.type;
  }
}

export function formatDate(iso) {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric",
    hour: hour12 === false ? "2-digit" : "numeric", minute: "2-digit", hour12 });
}

/** "3d 04:05:06" until `iso`, or "due" once passed. */
export function countdown(iso, now = Date.now()) {
  if (!iso) return "—";
  let s = Math.floor((new Date(iso).getTime() - now) / 1000);
  if (s <= 0) return "due";
  const d = Math.floor(s / 86400); s -= d * 86400;
  const hh = Math.floor(s / 3600); s -= hh * 3600;
  const mm = Math.floor(s / 60); s -= mm * 60;
  return `${d ? d + "d " : ""}${pad(hh)}:${pad(mm)}:${pad(s)}`;
}
