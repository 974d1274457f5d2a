// The operations page: polls GET /v1/ops/status with the operator's token every 5 s and shows
// the consumers stopped at an event their build does not know (with the way out), the scheduler's
// replicas, partitions and epochs, timers, fires per minute, a lateness chart, each service's
// health and build version, each stream's head and its consumers' lag, and the gateway's last errors.
const KEY = "chronir.opsToken";
const $ = (id) => document.getElementById(id);
const series = [];

function esc(s) { return String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
// Each cell names its column (`data-label`): on a phone a row is shown as a card of labelled
// lines (ops.css), and the explicit roles keep it a table for screen readers.
function table(el, head, rows) {
  el.innerHTML = `<thead role="rowgroup"><tr role="row">${head.map((h) => `<th scope="col" role="columnheader">${esc(h)}</th>`).join("")}</tr></thead>` +
    `<tbody role="rowgroup">${rows.length ? rows.map((r) => `<tr role="row">${r.map((c, i) => `<td role="cell" data-label="${esc(head[i])}">${c}</td>`).join("")}</tr>`).join("")
      : `<tr role="row"><td role="cell" colspan="${head.length}" class="muted">none</td></tr>`}</tbody>`;
}
const ms = (v) => (v == null ? "—" : `${Math.round(v)} ms`);
const status = (s) => `<span class="${s === "ok" ? "ok" : "bad"}">${esc(s)}</span>`;

function chart() {
  const svg = $("chart"), w = 600, hgt = 160, pad = 28;
  const max = Math.max(10, ...series.map((p) => p.p99));
  const x = (i) => pad + (i * (w - pad - 8)) / Math.max(1, series.length - 1);
  const y = (v) => hgt - pad + 8 - (v / max) * (hgt - pad - 8);
  const line = (key, color) => `<polyline fill="none" stroke="${color}" stroke-width="2" points="${series.map((p, i) => `${x(i)},${y(p[key])}`).join(" ")}"/>`;
  svg.innerHTML = `<text x="4" y="14" fill="currentColor" font-size="11">${Math.round(max)} ms</text><text x="4" y="${hgt - 6}" fill="currentColor" font-size="11">0</text>` +
    line("p50", "var(--color-accent-text)") + line("p99", "var(--color-warning)") +
    `<text x="${w - 120}" y="14" fill="var(--color-accent-text)" font-size="11">p50</text><text x="${w - 80}" y="14" fill="var(--color-warning)" font-size="11">p99</text>` +
    // Until two samples exist there is no line to draw: say so rather than show an empty box.
    (series.length < 2 ? `<text x="${w / 2}" y="${hgt / 2}" text-anchor="middle" fill="currentColor" font-size="16">Collecting: a point every 5 s</text>` : "");
}

// One line per consumer stopped at an event of a type or version its build does not know: it
// waits for an upgrade of its service, or for the operator to skip that event.
function blocked(services) {
  const rows = services.flatMap((v) => (v.blocked ?? []).map((b) => ({ service: v.service, ...b })));
  $("blocked").hidden = rows.length === 0;
  $("blocked-list").innerHTML = rows.map((b) => {
    const skip = `chronirctl consumer skip --service ${b.service} --stream ${b.stream} --seq ${b.seq} --reason '…'`;
    return `<li data-blocked="${esc(b.service)}"><b>${esc(b.service)}</b> stopped at <b>${esc(b.stream)}</b> event ${esc(b.seq)} ` +
      `(${esc(b.type)} v${esc(b.version)}) since ${esc(new Date(b.since).toLocaleString())}: ${esc(b.reason)}. ` +
      `Upgrade ${esc(b.service)}, or skip: <code>${esc(skip)}</code></li>`;
  }).join("");
}

function render(s) {
  blocked(s.services);
  $("updated").textContent = `updated ${new Date(s.generatedAt).toLocaleTimeString()}`;
  const sc = s.scheduler;
  if (sc) {
    $("totals").innerHTML = [["partitions", `${sc.partitions} (${sc.unownedPartitions} unowned)`], ["replicas", sc.replicas.filter((r) => r.alive).length],
      ["timers in wheels", sc.replicas.reduce((n, r) => n + r.timersInWheel, 0)], ["timers in horizon", sc.timersInHorizon], ["timers in table", sc.timersInTable],
      ["fires / min", sc.firesLastMinute]].map(([k, v]) => `<div class="tile"><span class="muted">${esc(k)}</span><b>${esc(v)}</b></div>`).join("");
    table($("replicas"), ["replica", "alive", "partitions", "epochs", "timers", "fires/min", "lateness p50", "p99", "max", "heartbeat"],
      sc.replicas.map((r) => [esc(r.instance), status(r.alive ? "ok" : "down"), r.partitions, r.minEpoch == null ? "—" : `${r.minEpoch}–${r.maxEpoch}`,
        r.timersInWheel, r.firesLastMinute, ms(r.latenessP50Ms), ms(r.latenessP99Ms), ms(r.latenessMaxMs), esc(new Date(r.heartbeatAt).toLocaleTimeString())]));
    const alive = sc.replicas.filter((r) => r.alive);
    series.push({ p50: Math.max(0, ...alive.map((r) => r.latenessP50Ms)), p99: Math.max(0, ...alive.map((r) => r.latenessP99Ms)) });
    if (series.length > 60) series.shift();
    chart();
  } else {
    $("totals").innerHTML = `<div class="tile bad">scheduler unreachable: ${esc(s.schedulerError)}</div>`;
  }
  table($("services"), ["service", "status", "version", "instance", "uptime", "dead letters", "detail"],
    s.services.map((v) => [esc(v.service), status(v.status), v.version == null ? "—" : `<code class="version">${esc(v.version)}</code>`, esc(v.instance ?? "—"),
      v.uptimeSeconds == null ? "—" : `${Math.round(v.uptimeSeconds)} s`, v.deadLetters ?? "—", esc(v.detail ?? "")]));
  table($("streams"), ["stream", "head", "consumer", "checkpoint", "lag"],
    s.streams.flatMap((st) => st.consumers.length ? st.consumers.map((c, i) => [i ? "" : esc(st.stream), i ? "" : st.head, esc(c.service), c.checkpoint,
      c.blockedAt == null ? `<span class="${c.lag > 1000 ? "bad" : ""}">${c.lag}</span>` : `<span class="bad">${c.lag}, blocked at ${esc(c.blockedAt)}</span>`])
      : [[esc(st.stream), st.head, "—", "—", "—"]]));
  table($("errors"), ["when", "request", "status", "code", "message"],
    s.errors.map((e) => [esc(new Date(e.at).toLocaleTimeString()), esc(`${e.method} ${e.path}`), e.status, esc(e.code), esc(e.message)]));
}

async function poll() {
  const token = sessionStorage.getItem(KEY);
  if (!token) { $("login").hidden = false; $("status").hidden = true; return; }
  try {
    const r = await fetch("/v1/ops/status", { headers: { Authorization: `Bearer ${token}` } });
    if (r.status === 401 || r.status === 404) {
      const body = await r.json().catch(() => ({}));
      sessionStorage.removeItem(KEY);
      $("login-error").textContent = body.detail || body.message || `HTTP ${r.status}`;
      $("login").hidden = false; $("status").hidden = true;
      return;
    }
    if (!r.ok) { $("updated").textContent = `the gateway answered ${r.status}`; return; }
    render(await r.json());
    $("login").hidden = true; $("status").hidden = false;
  } catch (e) { $("updated").textContent = `unreachable: ${e.message}`; }
}

$("login").addEventListener("submit", (e) => { e.preventDefault(); sessionStorage.setItem(KEY, $("token").value.trim()); $("login-error").textContent = ""; poll(); });
poll();
setInterval(poll, 5000);
