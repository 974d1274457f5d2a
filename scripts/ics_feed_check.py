#!/usr/bin/env python3
"""Reads a calendar feed with an independent iCalendar parser (icalendar) and expands each
event's RRULE with python-dateutil: prints JSON {calendar: {...}, events: [{uid, summary,
description, alarms: [minutes before], next: [Unix seconds]}]} with the first `count`
occurrences at or after `after` (Unix seconds). Used by CalendarFeedTests.

usage: ics_feed_check.py FILE AFTER COUNT
"""
import json
import sys
from datetime import datetime, timezone

from dateutil.rrule import rrulestr
from icalendar import Calendar

path, after, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cal = Calendar.from_ical(open(path, "rb").read())
out = {"calendar": {k: str(cal.get(k)) for k in ("REFRESH-INTERVAL", "X-PUBLISHED-TTL", "X-WR-CALNAME") if cal.get(k) is not None},
       "events": []}
start = datetime.fromtimestamp(after, timezone.utc)
for ev in cal.walk("VEVENT"):
    dtstart = ev.decoded("DTSTART")
    rule = rrulestr(ev.get("RRULE").to_ical().decode(), dtstart=dtstart)
    nxt = []
    for dt in rule:
        if dt >= start:
            nxt.append(int(dt.astimezone(timezone.utc).timestamp()))
            if len(nxt) == count:
                break
    alarms = []
    for a in ev.walk("VALARM"):
        trigger = a.decoded("TRIGGER")
        alarms.append(int(-trigger.total_seconds() // 60))
    out["events"].append({"uid": str(ev.get("UID")), "summary": str(ev.get("SUMMARY")),
                          "description": str(ev.get("DESCRIPTION", "")), "alarms": sorted(alarms), "next": nxt})
print(json.dumps(out))
