#!/usr/bin/env python3
"""One picture of a soak run (issue 75): fault lanes, fires planned vs delivered, lateness and
consumer lag on one time axis, as an SVG (no plotting library needed).

    python3 scripts/soak_picture.py [SOAK_DIR] [OUT.svg] [SOAK_OUTPUT]
        (defaults: .run/soak, .run/soak/soak.svg; SOAK_OUTPUT: the soak's own output, whose
        verdict line becomes the title)

Reads what scripts/soak.sh leaves in its directory: schedule.txt (the episodes in order),
faults.log (when each began and recovered), progress.log (the generator's tallies every 5 s),
report.json (fires expected per due minute) and positions.txt (stream heads and consumer
checkpoints sampled through the run). Time is in seconds from the first due instant.
"""
import datetime as dt
import json
import re
import sys
from html import escape

CLASS_COLOURS = {"kill": "#d62728", "stop": "#ff7f0e", "pg": "#9467bd", "failpoint": "#8c564b",
                 "blackhole": "#1f77b4", "conns": "#2ca02c", "clock": "#17becf"}


def clock_seconds(text, day):
    """'HH:MM:SS' of the run's day → epoch seconds (UTC)."""
    h, m, s = (int(x) for x in text.split(":"))
    return dt.datetime(day.year, day.month, day.day, h, m, s, tzinfo=dt.timezone.utc).timestamp()


def read(soak):
    progress = open(f"{soak}/progress.log").read().splitlines()
    start = None
    for line in progress:
        m = re.search(r"due from (\S+)", line)
        if m:
            start = dt.datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
            break
    if start is None:
        sys.exit("soak_picture: progress.log names no first due instant")
    t0 = start.timestamp()
    fires, lateness = [], []
    for line in progress:
        m = re.match(r"\[(\d\d:\d\d:\d\d)\] fire pushes (\d+)/(\d+).*p99 lateness (\d+) ms", line)
        if m:
            t = clock_seconds(m.group(1), start) - t0
            fires.append((t, int(m.group(2)), int(m.group(3))))
            lateness.append((t, int(m.group(4))))
    classes = [line.split()[1] for line in open(f"{soak}/schedule.txt").read().splitlines()
               if re.match(r"\s*-?[\d.]+ \w+", line)]
    began, ended, names = {}, {}, {}
    for line in open(f"{soak}/faults.log").read().splitlines():
        m = re.match(r"\[(\d\d:\d\d:\d\d)\]\s+#(\d+) (?:(\w+): )?(.*)", line)
        if not m:
            continue
        t = clock_seconds(m.group(1), start) - t0
        n = int(m.group(2))
        rest = m.group(4)
        r = re.match(r"recovered in ([\d.]+)s", rest)
        if r:
            ended[n] = t
        elif rest.startswith("NOT recovered"):
            ended[n] = t
        elif n not in began:
            began[n] = t
            names[n] = rest
    episodes = []
    for n in sorted(began):
        cls = classes[n - 1] if n - 1 < len(classes) else "?"
        episodes.append((n, cls, began[n], ended.get(n, began[n]), names[n]))
    planned = []
    report = json.load(open(f"{soak}/report.json"))
    total = 0
    for minute in report.get("audit", {}).get("byMinute", []):
        due = dt.datetime.fromisoformat(minute["due"].replace("Z", "+00:00")).timestamp() - t0
        total += minute["expected"]
        planned.append((due, total))
    heads, lag = {}, {}
    for line in open(f"{soak}/positions.txt").read().splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        at, kind, who, stream, value = int(parts[0]) - t0, parts[1], parts[2], parts[3], int(parts[4])
        if kind == "head":
            heads[(at, stream)] = value
    for line in open(f"{soak}/positions.txt").read().splitlines():
        parts = line.split()
        if len(parts) != 5 or parts[1] != "checkpoint":
            continue
        at, stream, value = int(parts[0]) - t0, parts[3], int(parts[4])
        head = heads.get((at, stream))
        if head is not None:
            lag[at] = max(lag.get(at, 0), head - value)
    return episodes, fires, planned, lateness, sorted(lag.items())


def svg(episodes, fires, planned, lateness, lag, title):
    width, left, right = 1100, 120, 20
    times = [e[2] for e in episodes] + [e[3] for e in episodes] + [f[0] for f in fires] + [p[0] for p in planned] + [a for a, _ in lag]
    lo, hi = min(times + [0]), max(times + [1])
    span = hi - lo or 1

    def x(t):
        return left + (t - lo) / span * (width - left - right)

    out = []
    y = 48
    # The verdict in two lines at most: "soak: planned …, late 0," / "faults …".
    head, _, tail = title.partition(", faults")
    out.append(f'<text x="8" y="20" font-size="13" font-weight="bold">{escape(head)}</text>')
    if tail:
        out.append(f'<text x="8" y="36" font-size="12">faults{escape(tail)}</text>')
    # Fault lanes.
    classes = sorted({e[1] for e in episodes})
    lane = 18
    out.append(f'<text x="8" y="{y + 12}" font-size="12" font-weight="bold">faults</text>')
    for i, cls in enumerate(classes):
        yy = y + 20 + i * lane
        out.append(f'<text x="8" y="{yy + 12}" font-size="11">{escape(cls)}</text>')
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{yy + 8}" y2="{yy + 8}" stroke="#eee"/>')
        for n, c, b, e, name in episodes:
            if c != cls:
                continue
            w = max(3, x(e) - x(b))
            out.append(f'<rect x="{x(b):.1f}" y="{yy + 2}" width="{w:.1f}" height="12" fill="{CLASS_COLOURS.get(c, "#777")}" '
                       f'opacity="0.85"><title>#{n} {escape(name)} ({e - b:.1f} s to recovered)</title></rect>')
            out.append(f'<text x="{x(b) + w + 2:.1f}" y="{yy + 12}" font-size="9" fill="#555">#{n}</text>')
    y += 30 + len(classes) * lane

    def panel(label, series, unit, colour, step=False, extra=None, extra_colour="#999", extra_label=None):
        nonlocal y
        h = 120
        top = max([v for _, v in series] + ([v for _, v in extra] if extra else []) + [1])
        out.append(f'<text x="8" y="{y + 12}" font-size="12" font-weight="bold">{escape(label)}</text>')
        # The left margin holds about 20 characters a line: the unit's words wrap under the maximum.
        lines, line = [], f"max {top:g}"
        for word in unit.split():
            if len(line) + 1 + len(word) > 20:
                lines.append(line)
                line = word
            else:
                line += " " + word
        lines.append(line)
        for k, text in enumerate(lines):
            out.append(f'<text x="8" y="{y + 28 + 12 * k}" font-size="10" fill="#555">{escape(text)}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{width - left - right}" height="{h}" fill="none" stroke="#ccc"/>')

        def path(points, colour, dashed=False, as_step=False):
            if not points:
                return
            d = []
            prev = None
            for t, v in points:
                px, py = x(t), y + h - v / top * (h - 4)
                if as_step and prev is not None:
                    d.append(f"L{px:.1f},{prev:.1f}")
                d.append(("M" if not d else "L") + f"{px:.1f},{py:.1f}")
                prev = py
            dash = ' stroke-dasharray="5,3"' if dashed else ""
            out.append(f'<path d="{" ".join(d)}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>')

        if extra:
            path(extra, extra_colour, dashed=True, as_step=True)
            out.append(f'<text x="{width - right - 220}" y="{y + 14}" font-size="10" fill="{extra_colour}">- - {escape(extra_label)}</text>')
        path(series, colour, as_step=step)
        y += h + 24

    panel("fires", [(t, got) for t, got, _ in fires], "pushes", "#1f77b4", extra=[(lo, 0)] + planned,
          extra_label="planned (due so far)")
    panel("p99 lateness", lateness, "ms, of every fire so far", "#d62728")
    panel("consumer lag", lag, "events behind the head", "#2ca02c")
    # The axis.
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{y}" y2="{y}" stroke="#333"/>')
    tick = 60 if span > 240 else 30
    t = (int(lo) // tick) * tick
    while t <= hi:
        if t >= lo:
            out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y}" y2="{y + 5}" stroke="#333"/>')
            out.append(f'<text x="{x(t):.1f}" y="{y + 18}" font-size="10" text-anchor="middle">{t:g}</text>')
        t += tick
    out.append(f'<text x="{left}" y="{y + 34}" font-size="10" fill="#555">seconds from the first due instant</text>')
    height = y + 44
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>' + "".join(out) + "</svg>\n")


def main():
    soak = sys.argv[1] if len(sys.argv) > 1 else ".run/soak"
    target = sys.argv[2] if len(sys.argv) > 2 else f"{soak}/soak.svg"
    episodes, fires, planned, lateness, lag = read(soak)
    verdict = ""
    if len(sys.argv) > 3:
        lines = [l for l in open(sys.argv[3]).read().splitlines() if l.startswith("soak: planned")]
        verdict = lines[-1] if lines else ""
    title = "soak: " + (verdict[len("soak: "):] if verdict else f"{len(episodes)} episodes")
    open(target, "w").write(svg(episodes, fires, planned, lateness, lag, title))
    print(f"soak_picture: {target} ({len(episodes)} episodes, {len(fires)} tallies, {len(lag)} lag samples)")


if __name__ == "__main__":
    main()
