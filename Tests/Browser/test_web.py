"""The web client and the operations page, driven in headless Chromium (issue: the web app).

Each test signs its users up through the app itself; the operator's chronirctl only raises
tiers (as a purchase would)."""
import datetime as dt
import json
import os
import re
import subprocess
import time

from playwright.sync_api import expect

from conftest import BASE, access_token, reload_me, set_tier, shot, sign_up


def next_first_of_month_9utc(now):
    first = now.replace(day=1, hour=9, minute=0, second=0, microsecond=0)
    if first <= now:
        first = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return first


def create_from_preset(page, preset, title=None):
    page.get_by_role("button", name="New alarm").click()                 # tap 1
    page.locator(f"[data-preset='{preset}']").click()                    # tap 2
    if title:
        page.get_by_label("Title").fill(title)
    page.get_by_role("button", name="Create", exact=True).click()        # tap 3


def once_due_next_minute(page, title):
    """Fills the detailed creation form with a one-time alarm due at the next whole minute (UTC)
    at least 25 s away; answers that instant and the still open form."""
    now = dt.datetime.now(dt.timezone.utc)
    due = (now + dt.timedelta(minutes=1)).replace(second=0, microsecond=0)
    if (due - now).total_seconds() < 25:
        due += dt.timedelta(minutes=1)
    page.get_by_role("button", name="New alarm").click()
    page.get_by_role("button", name="More options…").click()
    form = page.get_by_role("dialog", name="New alarm — every option")
    form.get_by_label("Title").fill(title)
    form.get_by_label("Repeats").select_option("once")
    form.get_by_label("Time", exact=True).fill(due.strftime("%H:%M"))
    form.get_by_label("Starts (or the day, for once)").fill(due.strftime("%Y-%m-%d"))
    form.get_by_label("Time zone").select_option("UTC")
    return due, form


def test_signup_and_a_monthly_alarm_in_three_taps(new_page):
    page = new_page()
    page.goto(f"{BASE}/app/")
    expect(page.get_by_role("button", name="Create account")).to_be_visible()
    shot(page, "signup")
    sign_up(page, "Lex", onboard="walk")
    expect(page.get_by_role("heading", name="Alarms for the long cycles")).to_be_visible()
    shot(page, "onboarding")
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="Next").click()
    page.get_by_role("button", name="Create my first alarm").click()
    # Onboarding opens the creation sheet: tap the preset, tap Create.
    expect(page.get_by_role("dialog", name="New alarm")).to_be_visible()
    page.locator("[data-preset='monthly-1']").click()
    shot(page, "create")
    page.get_by_role("button", name="Create", exact=True).click()
    card = page.locator("[data-alarm]").filter(has_text="Pay rent")
    expect(card).to_be_visible()
    expected = next_first_of_month_9utc(dt.datetime.now(dt.timezone.utc))
    iso = card.locator(".next-date").get_attribute("data-iso")
    assert dt.datetime.fromisoformat(iso.replace("Z", "+00:00")) == expected, iso
    expect(card.locator(".next-date")).to_contain_text(expected.strftime("%b ") + str(expected.day))
    expect(card).to_contain_text("Monthly on day 1 at 9:00 AM")   # the profile's 12-hour clock
    # And a second one the same way, from the list: three taps.
    create_from_preset(page, "weekly-mon")
    expect(page.locator("[data-alarm]")).to_have_count(2)
    # Sorted by next fire, whichever of the two comes first this month: the list's order is
    # the order of the instants the cards show (and the weekly one is within the coming week).
    listed = [(card.locator(".title").inner_text(), card.locator(".next-date").get_attribute("data-iso"))
              for card in page.locator("[data-alarm]").all()]
    instants = {title: dt.datetime.fromisoformat(iso.replace("Z", "+00:00")) for title, iso in listed}
    assert sorted(instants) == ["Pay rent", "Weekly check-in"], listed
    assert instants["Pay rent"] == expected, listed
    weekly_in = instants["Weekly check-in"] - dt.datetime.now(dt.timezone.utc)
    assert dt.timedelta(0) < weekly_in <= dt.timedelta(days=7), listed
    assert instants["Pay rent"] != instants["Weekly check-in"] or instants["Pay rent"].weekday() == 0, listed
    order = [instants[title] for title, _ in listed]
    assert order == sorted(order), listed
    expect(page.locator(".toast")).to_have_count(0, timeout=10_000)
    shot(page, "list")


def test_firing_screen_at_the_instant_slide_to_complete_history(new_page):
    page = new_page()
    _, uid = sign_up(page, "Ringer")
    set_tier(uid, "plus")
    reload_me(page)
    due, form = once_due_next_minute(page, "Take the bins out")
    form.get_by_role("button", name="Create").click()
    card = page.locator("[data-alarm]").filter(has_text="Take the bins out")
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    # An accountability policy with no free snooze: the firing screen shows the first one's price.
    token = access_token(page)
    status = page.evaluate("""(a) => fetch(`/v1/alarms/${a[0]}/snooze-policy`, {method: 'PUT',
        headers: {Authorization: `Bearer ${a[1]}`, 'Content-Type': 'application/json'},
        body: JSON.stringify({enabled: true, freeSnoozes: 0})}).then(r => r.status)""", [alarm_id, token])
    assert status == 200
    firing = page.locator(".firing")
    expect(firing).to_be_visible(timeout=(due - dt.datetime.now(dt.timezone.utc)).total_seconds() * 1000 + 30_000)
    appeared = dt.datetime.now(dt.timezone.utc)
    assert appeared >= due - dt.timedelta(milliseconds=500), f"the firing screen came at {appeared}, before {due}"
    assert appeared <= due + dt.timedelta(seconds=10), f"the firing screen came at {appeared}, long after {due}"
    expect(firing).to_contain_text("Take the bins out")
    expect(firing.get_by_role("button", name="Snooze 1 day")).to_be_visible()   # Plus: longer snoozes
    expect(firing.get_by_role("button", name="Snooze 10 min")).to_contain_text("$0.99")   # paid, priced before any 402
    shot(page, "firing")
    # A modal alarm: Tab cycles inside it.
    for _ in range(9):
        page.keyboard.press("Tab")
        assert page.evaluate("document.querySelector('.firing').contains(document.activeElement)")
    slider = firing.get_by_label("Slide to complete")
    slider.focus()
    page.keyboard.press("End")
    expect(firing).to_have_count(0)
    page.goto(f"{BASE}/app/#/alarms/{alarm_id}")
    row = page.get_by_role("list", name="Completion history").get_by_role("listitem").first
    expect(row).to_contain_text("Completed")
    expect(page.get_by_text("Streak: 1")).to_be_visible()
    expect(page.locator(".toast")).to_have_count(0, timeout=10_000)
    shot(page, "history", full=True)


def test_a_free_snooze_shows_snoozed_until_and_the_tier_limits(new_page):
    """US-1.4 and the Free limits on screen: the firing screen offers 10 min and 1 hour and shows
    the Plus lengths locked; after a snooze the list and the alarm say "Snoozed until …"; the
    sound picker locks the Plus tones; the history shows the last completion only."""
    page = new_page()
    sign_up(page, "Dozy")
    due, form = once_due_next_minute(page, "Water the orchid")
    # Free: two sounds to choose from, the rest shown locked; 10 minutes for a tap.
    sound = form.get_by_label("Sound")
    expect(sound.locator("option")).to_have_count(8)
    expect(sound.locator("option:disabled")).to_have_count(6)
    expect(sound.locator("option", has_text="Birdsong (Plus)")).to_be_disabled()
    form.get_by_label("Snooze for (1 day, 1 week and custom with Plus)").select_option("10")
    form.get_by_role("button", name="Create").click()
    card = page.locator("[data-alarm]").filter(has_text="Water the orchid")
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    firing = page.locator(".firing")
    expect(firing).to_be_visible(timeout=(due - dt.datetime.now(dt.timezone.utc)).total_seconds() * 1000 + 30_000)
    expect(firing.get_by_role("button", name="Snooze 10 min")).to_be_enabled()
    expect(firing.get_by_role("button", name="Snooze 1 hour")).to_be_enabled()
    expect(firing.locator("[data-locked='1440']")).to_have_text("1 day · Plus")
    expect(firing.locator("[data-locked='1440']")).to_be_disabled()
    expect(firing.get_by_label("Custom snooze in minutes")).to_have_count(0)
    shot(page, "firing-free")
    # At 320 px the firing screen still fits: the time on one line, the title clamped, the
    # schedule shown, nothing wider than the screen.
    page.set_viewport_size({"width": 320, "height": 640})
    lines = page.evaluate("""() => { const r = document.createRange(); r.selectNodeContents(document.querySelector('.firing .time'));
        return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }""")
    assert lines == 1, f"the time wraps onto {lines} lines"
    expect(firing.locator(".schedule")).to_contain_text("Once")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), "the firing screen scrolls sideways at 320 px"
    shot(page, "firing-320")
    page.set_viewport_size({"width": 412, "height": 860})
    firing.get_by_role("button", name="Snooze 10 min").click()
    expect(firing).to_have_count(0)
    until = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=10)
    badge = page.locator("[data-alarm]").filter(has_text="Water the orchid").locator(".badge-snoozed")
    expect(badge).to_contain_text("Snoozed until")
    expect(badge).to_contain_text("(1/3)")
    snoozed = dt.datetime.fromisoformat(badge.get_attribute("data-snoozed").replace("Z", "+00:00"))
    assert abs((snoozed - until).total_seconds()) < 15, (snoozed, until)
    expect(badge).to_contain_text(snoozed.strftime("%-I:%M %p"))   # the profile's 12-hour clock, the page's zone (UTC)
    shot(page, "snoozed-list")
    page.set_viewport_size({"width": 1280, "height": 860})
    shot(page, "snoozed-list-desktop")
    page.set_viewport_size({"width": 412, "height": 860})
    page.goto(f"{BASE}/app/#/alarms/{alarm_id}")
    expect(page.locator("p.snoozed")).to_contain_text("Snoozed until")
    # Done: the snooze is gone from the alarm, the history says it was snoozed first; Free sees
    # the last completion with the rest locked.
    page.get_by_role("button", name="Mark done").click()
    row = page.get_by_role("list", name="Completion history").get_by_role("listitem").first
    expect(row).to_contain_text("Snoozed 1× then completed")
    expect(page.locator("[data-locked='history']")).to_contain_text("Last completed")
    expect(page.locator("[data-locked='history']").get_by_role("link", name="see the full history with Plus")).to_be_visible()
    page.reload()
    expect(page.locator("p.snoozed")).to_have_count(0)
    expect(page.locator(".toast")).to_have_count(0, timeout=10_000)
    # Drawn again after the reload before the picture (the history comes after the page).
    expect(row).to_contain_text("Snoozed 1× then completed")
    expect(page.locator("[data-locked='history']")).to_contain_text("Last completed")
    shot(page, "history-free", full=True)


def test_group_members_see_each_others_completions(new_page):
    a = new_page()
    b = new_page()
    _, uid_a = sign_up(a, "Avery")
    _, uid_b = sign_up(b, "Blake")
    for uid in (uid_a, uid_b):
        set_tier(uid, "premium")
    reload_me(a)
    reload_me(b)
    a.goto(f"{BASE}/app/#/groups")
    a.get_by_label("Name").fill("Flat 3")
    a.get_by_role("button", name="Create group").click()
    expect(a.get_by_role("heading", name="Flat 3")).to_be_visible()
    # The group's rules: the owner chooses who edits its alarms.
    rules = a.get_by_role("form", name="Group rules")
    expect(rules).to_be_visible()
    rules.get_by_label("Who creates and edits the group's alarms").select_option("everyone")
    rules.get_by_role("button", name="Save rules").click()
    expect(a.locator(".toast").filter(has_text="Saved")).to_be_visible()
    shot(a, "group-rules")
    a.set_viewport_size({"width": 1280, "height": 800})
    shot(a, "group-rules-desktop")
    a.set_viewport_size({"width": 412, "height": 860})
    a.get_by_role("button", name="Invite by link").click()
    link = a.get_by_label("Invitation link").input_value()
    assert re.search(r"/invite/[A-Za-z0-9_-]+$", link), link
    # The link opens the app on the invitation.
    b.goto(link)
    expect(b.get_by_text("Avery invited you to the group “Flat 3”.")).to_be_visible()
    b.get_by_role("button", name="Accept").click()
    expect(b.get_by_role("heading", name="Flat 3")).to_be_visible()
    # Avery's alarm, moved into the group, reaches Blake's list.
    a.goto(f"{BASE}/app/#/alarms")
    create_from_preset(a, "custom-90", title="Water the plants")
    expect(a.locator("[data-alarm]").filter(has_text="Water the plants")).to_be_visible()
    a.goto(a.url.split("#")[0] + "#/groups")
    a.get_by_role("link", name=re.compile("Flat 3")).click()
    a.get_by_role("button", name="Add one of my alarms").click()
    a.get_by_role("dialog").get_by_role("button", name="Water the plants").click()
    expect(a.locator(".list").get_by_text("Water the plants")).to_be_visible()
    b.goto(f"{BASE}/app/#/alarms")
    expect(b.locator("[data-alarm]").filter(has_text="Water the plants")).to_be_visible(timeout=20_000)
    shot(b, "group-list")
    # Avery marks it done; Blake, on another screen, is told.
    a.goto(f"{BASE}/app/#/alarms")
    a.locator("[data-alarm]").filter(has_text="Water the plants").click()
    a.get_by_role("button", name="Mark done").click()
    toast = b.locator(".toast").filter(has_text="Water the plants")
    expect(toast).to_be_visible(timeout=20_000)
    expect(toast).to_contain_text("Avery")
    shot(b, "group-toast")


def test_a_shared_alarm_follows_the_owners_edit_pause_and_delete_live(new_page):
    """Issue 41 item 2: Blake's screen follows what Avery does to the alarm they share, without
    a reload: the live stream's silent `alarm_changed` makes the app read the delta feed."""
    a = new_page(1280, 800)
    b = new_page()
    _, uid_a = sign_up(a, "Avery")
    sign_up(b, "Blake")
    set_tier(uid_a, "premium")
    reload_me(a)
    create_from_preset(a, "custom-90", title="Take the bins out")
    card = a.locator("[data-alarm]").filter(has_text="Take the bins out")
    card.click()
    a.get_by_role("button", name="Share by link").click()
    link = a.get_by_label("Invitation link").input_value()
    b.goto(link)
    expect(b.get_by_text("Avery invited you to the alarm “Take the bins out”.")).to_be_visible()
    b.get_by_role("button", name="Accept").click()
    b_card = b.locator("[data-alarm]").filter(has_text="Take the bins out")
    expect(b_card).to_be_visible(timeout=10_000)
    b_card.click()
    expect(b.get_by_role("heading", name="Take the bins out")).to_be_visible()
    expect(b.get_by_role("button", name="Leave")).to_be_visible()
    # Avery renames it: Blake's page shows the new title, with no reload of Blake's page.
    b.evaluate("window.__notReloaded = true")
    a.keyboard.press("Escape")
    a.get_by_role("button", name="Edit").click()
    a.get_by_label("Title").fill("Bins and recycling")
    a.get_by_role("button", name="Save").click()
    expect(b.get_by_role("heading", name="Bins and recycling")).to_be_visible(timeout=5_000)
    # Avery pauses it: Blake's page says so.
    a.get_by_role("button", name="Pause").click()
    expect(b.locator(".when").get_by_text("Paused")).to_be_visible(timeout=5_000)
    shot(b, "shared-follows-phone")
    assert b.evaluate("window.__notReloaded === true"), "Blake's page was reloaded"
    # Avery deletes it (sent when the undo window closes): Blake is told and back on the list.
    a.get_by_role("button", name="Delete").click()
    a.get_by_role("dialog").get_by_role("button", name="Delete").click()   # US-1.6: asked first
    expect(b.locator(".toast").filter(has_text="was deleted by its owner")).to_be_visible(timeout=15_000)
    expect(b.locator("[data-alarm]").filter(has_text="Bins and recycling")).to_have_count(0)
    assert b.url.endswith("#/alarms"), b.url
    assert b.evaluate("window.__notReloaded === true"), "Blake's page was reloaded"
    b.set_viewport_size({"width": 1280, "height": 800})
    shot(b, "shared-follows-desktop")


def test_a_free_user_meets_the_paywall_on_the_third_alarm(new_page):
    page = new_page()
    _, uid = sign_up(page, "Frugal")
    create_from_preset(page, "monthly-1")
    expect(page.locator("[data-alarm]")).to_have_count(1)
    create_from_preset(page, "annual-today")
    expect(page.locator("[data-alarm]")).to_have_count(2)
    # The limit is shown before any work, and the refused form stays as filled.
    expect(page.locator("[data-usage]")).to_have_text("2 of 2 active alarms on Free")
    create_from_preset(page, "custom-90", title="Replace the water filter")
    sheet = page.get_by_role("dialog", name="New alarm")
    expect(sheet.get_by_role("alert")).to_contain_text("Free keeps 2 alarms on")
    expect(sheet.get_by_label("Title")).to_have_value("Replace the water filter")
    shot(page, "limit-kept-form")
    sheet.get_by_role("link", name="see Plus").click()
    page.wait_for_url("**/app/#/upgrade")
    expect(page.get_by_role("heading", name="Upgrade Chronir")).to_be_visible()
    expect(page.locator("[data-tier='plus']")).to_contain_text("$1.99")
    assert "com.chronir" not in page.locator("#paywall").inner_text(), "store product ids shown to people"
    page.get_by_role("button", name="Show yearly prices").click()
    expect(page.locator("[data-tier='plus']")).to_contain_text("$14.99")
    shot(page, "paywall", full=True)
    # Bought elsewhere (here: set by an operator): the open page follows without a reload, told
    # by the live stream's `plan_changed`.
    expect(page.locator("[data-tier='free']")).to_contain_text("Your plan")
    page.evaluate("window.__notReloaded = true")
    set_tier(uid, "plus")
    expect(page.locator(".toast").filter(has_text="Your plan is now Plus")).to_be_visible(timeout=15_000)
    expect(page.locator("[data-tier='plus']")).to_contain_text("Your plan")
    page.goto(f"{BASE}/app/#/alarms")
    expect(page.locator("[data-usage]")).to_have_text("2 alarms")
    assert page.evaluate("window.__notReloaded === true"), "the page was reloaded"


def test_the_operations_page_shows_the_running_scheduler(new_page):
    page = new_page(width=1200, height=900)
    page.goto(f"{BASE}/ops/")
    page.get_by_label(re.compile("Operator token")).fill("not the token")
    page.get_by_role("button", name="Open").click()
    expect(page.locator("#login-error")).to_contain_text("operator")
    page.get_by_label(re.compile("Operator token")).fill(os.environ["CHRONIR_OPS_TOKEN"])
    page.get_by_role("button", name="Open").click()
    replicas = page.get_by_role("table", name="Scheduler replicas")
    expect(replicas).to_contain_text("scheduler-1")
    expect(replicas.locator("tbody tr").first).to_contain_text("ok")
    expect(page.get_by_role("table", name="Streams")).to_contain_text("alarms")
    services = page.get_by_role("table", name="Services")
    expect(services).to_contain_text("notifications")
    # Each running service's build version (`git describe`, issue 39): one build runs the suite.
    versions = services.locator("code.version")
    expect(versions.first).to_have_text(re.compile(r"^[A-Za-z0-9._+-]+$"))
    assert len(set(versions.all_inner_texts())) == 1, versions.all_inner_texts()
    # Nothing is blocked in a fresh suite: no banner of blocked consumers, no "blocked at" lag.
    expect(page.locator("#blocked")).to_be_hidden()
    expect(page.get_by_role("table", name="Streams")).not_to_contain_text("blocked at")
    # A second sample for the chart (the page samples every 5 s).
    expect(page.locator("#chart polyline")).to_have_count(2, timeout=15_000)
    shot(page, "ops", full=True)
    # At phone width nothing is wider than the screen and nothing scrolls inside a box: each
    # table row is a card of labelled lines, still a table to a screen reader.
    for width in [320, 412]:
        page.set_viewport_size({"width": width, "height": 860})
        expect(services).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), \
            page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        over = page.evaluate(OVERFLOW)
        assert not over, f"ops at {width} px: {over}"
    expect(services.get_by_role("row").filter(has_text="notifications").get_by_role("cell").first).to_be_visible()
    label = page.evaluate("getComputedStyle(document.querySelector('#services td[data-label=version]'), '::before').content")
    assert label.startswith('"version"'), label
    shot(page, "ops-phone", full=True)
    from axe_playwright_python.sync_playwright import Axe
    problems = serious_violations({"ops-phone": Axe().run(page)})
    assert not problems, "\n".join(problems)


def test_offline_the_saved_list_still_reads_and_resyncs(new_page):
    page = new_page()
    sign_up(page, "Traveller")
    create_from_preset(page, "monthly-last")
    expect(page.locator("[data-alarm]")).to_have_count(1)
    page.wait_for_function("navigator.serviceWorker && navigator.serviceWorker.controller !== null || "
                           "navigator.serviceWorker.ready.then(() => true)")
    page.reload()   # the service worker now controls the page and has the shell
    page.wait_for_function("navigator.serviceWorker.controller !== null")
    page.context.set_offline(True)
    page.reload()
    expect(page.locator("[data-alarm]").filter(has_text="Month-end review")).to_be_visible()
    expect(page.locator("#offline")).to_be_visible()
    page.context.set_offline(False)
    page.evaluate("window.dispatchEvent(new Event('online'))")
    expect(page.locator("#offline")).to_be_hidden()


def serious_violations(checked):
    """The serious and critical axe findings of each named screen, one line each."""
    return [f"{name}: {v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
            for name, result in checked.items() for v in result.response["violations"] if v["impact"] in ("serious", "critical")]


def test_accessibility_no_serious_axe_violations(new_page):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    page = new_page()
    page.emulate_media(reduced_motion="reduce")   # no sheet animation half-way through a measurement
    page.goto(f"{BASE}/app/#/signup")
    expect(page.get_by_role("button", name="Create account")).to_be_visible()
    checked = {"signup": axe.run(page)}
    sign_up(page, "Reader")
    create_from_preset(page, "monthly-1")
    expect(page.locator("[data-alarm]")).to_have_count(1)
    expect(page.locator(".toast")).to_have_count(0, timeout=10_000)
    checked["list"] = axe.run(page)
    alarm_id = page.locator("[data-alarm]").first.get_attribute("data-alarm")
    # Every screen (issue 43): the alarm, groups, plans, settings; then the creation sheet.
    for name, route, ready in [("detail", f"#/alarms/{alarm_id}", "Mark done"), ("groups", "#/groups", "Create group"),
                               ("upgrade", "#/upgrade", "Show yearly prices"), ("settings", "#/settings", "Save")]:
        page.goto(f"{BASE}/app/{route}")
        expect(page.get_by_role("button", name=ready)).to_be_attached()
        if name == "detail":   # with a history entry, its coloured mark included
            page.get_by_role("button", name="Mark done").click()
            expect(page.get_by_role("list", name="Completion history").get_by_role("listitem")).to_have_count(1)
        checked[name] = axe.run(page)
    page.goto(f"{BASE}/app/#/alarms")
    expect(page.locator("[data-alarm]")).to_have_count(1)
    page.get_by_role("button", name="New alarm").click()
    checked["create"] = axe.run(page)
    problems = serious_violations(checked)
    assert not problems, "\n".join(problems)
    # Keyboard only: the sheet opens on its first preset; Enter picks it, Tab reaches Create.
    page.keyboard.press("Enter")
    expect(page.locator("[data-preset='monthly-1']")).to_have_attribute("aria-pressed", "true")
    for _ in range(7):   # the other five presets, the title, then Create
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Create"
    page.keyboard.press("Enter")
    expect(page.locator("[data-alarm]")).to_have_count(2)


def test_pause_delete_with_undo_and_settings(new_page):
    page = new_page()
    sign_up(page, "Keeper")
    create_from_preset(page, "quarterly", title="Quarterly taxes")
    card = page.locator("[data-alarm]").filter(has_text="Quarterly taxes")
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    # Pause: the card says so and sinks to the bottom.
    card.click()
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    page.goto(f"{BASE}/app/#/alarms")
    expect(page.locator("[data-alarm]").filter(has_text="Quarterly taxes")).to_contain_text("Paused")
    # Delete, then undo: it comes back and the server still has it.
    page.locator("[data-alarm]").filter(has_text="Quarterly taxes").click()
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("[data-alarm]")).to_have_count(0)
    page.locator(".toast").get_by_role("button", name="Undo").click()
    expect(page.locator("[data-alarm]")).to_have_count(1)
    time.sleep(6)  # past the 5 s undo window: a delete not undone would have been sent by now
    token = access_token(page)
    status = page.evaluate("(a) => fetch(`/v1/alarms/${a[0]}`, {headers: {Authorization: `Bearer ${a[1]}`}}).then(r => r.status)", [alarm_id, token])
    assert status == 200, status
    # Delete for good: gone from the server after the undo window.
    page.locator("[data-alarm]").first.click()
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("[data-alarm]")).to_have_count(0)
    page.wait_for_function("(a) => fetch(`/v1/alarms/${a[0]}`, {headers: {Authorization: `Bearer ${a[1]}`}}).then(r => r.status === 404)",
                           arg=[alarm_id, token], timeout=15_000, polling=1000)
    # Settings: the name and the time zone are saved on the profile.
    page.goto(f"{BASE}/app/#/settings")
    page.get_by_label("Name", exact=True).fill("Keeper Two")
    page.get_by_label(re.compile(r"^Time zone")).select_option("Asia/Manila")   # not "Home time zone"
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".toast").filter(has_text="Saved")).to_be_visible()
    me = page.evaluate("(t) => fetch('/v1/me', {headers: {Authorization: `Bearer ${t}`}}).then(r => r.json())", token)
    assert me["displayName"] == "Keeper Two" and me["settings"]["timezone"] == "Asia/Manila", me


def test_sign_in_with_apple_and_google_by_their_redirect_flows(new_page, identity):
    # Apple: the button leaves for the provider, whose form posts back to /oauth/callback.
    page = new_page()
    page.goto(f"{BASE}/app/#/signup")
    page.get_by_role("button", name="Continue with Apple").click()
    page.get_by_role("button", name="Continue as Ada").click()
    page.wait_for_url("**/app/#/welcome")
    assert "id_token" not in page.url
    s = json.loads(page.evaluate("localStorage.getItem('chronir.session')"))
    assert s["user"]["displayName"] == "Ada Apple"
    provider, q = identity.requests[-1]
    assert provider == "apple" and q["response_mode"] == "form_post" and q["redirect_uri"].endswith("/oauth/callback")
    assert re.fullmatch(r"[0-9a-f]{64}", q["nonce"]), "Apple is sent the SHA-256 of the nonce"
    shot(page, "signin-apple-welcome")
    # Google: the answer comes back in the fragment, through a redirect that keeps it.
    page = new_page()
    page.goto(f"{BASE}/app/#/signin")
    page.get_by_role("button", name="Continue with Google").click()
    page.get_by_role("link", name="Continue as Gia").click()
    page.wait_for_url("**/app/#/welcome")
    s = json.loads(page.evaluate("localStorage.getItem('chronir.session')"))
    assert s["user"]["displayName"] == "Gia Müller"   # UTF-8 claims read as UTF-8
    assert identity.requests[-1][0] == "google"
    # An answer this page did not ask for is refused, and nobody is signed in.
    page = new_page()
    page.goto(f"{BASE}/app/#id_token=forged&state=forged")
    expect(page.get_by_role("alert")).to_contain_text("did not start here")
    assert page.evaluate("localStorage.getItem('chronir.session')") is None


def test_refresh_token_is_out_of_script_reach(new_page):
    """Issue 37: the web app's refresh token lives in an HttpOnly cookie (issue 57: with the
    __Host- prefix, so Path=/ and no Domain), its access token in memory; a script (an XSS, an
    extension) finds neither in storage."""
    page = new_page()
    sign_up(page, "Careful")
    stored = page.evaluate("JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage})")
    assert "refreshToken" not in stored and "accessToken" not in stored, stored
    assert "chronir_refresh" not in page.evaluate("document.cookie")
    cookies = {c["name"]: c for c in page.context.cookies()}
    c = cookies["__Host-chronir_refresh"]
    assert c["httpOnly"] and c["secure"] and c["sameSite"] == "Strict" and c["path"] == "/", c
    # A reload keeps the user signed in (the cookie brings a new access token) and the list loads.
    page.reload()
    page.wait_for_url("**/app/#/alarms")
    expect(page.locator("#bar")).to_be_visible()
    page.wait_for_timeout(500)
    assert page.url.endswith("#/alarms"), page.url
    assert page.evaluate("fetch('/v1/me').then(r => r.status)") == 401, "a request without the in-memory token is refused"
    # Signing out ends the session and deletes the cookie.
    page.goto(f"{BASE}/app/#/settings")
    page.get_by_role("button", name="Sign out", exact=True).last.click()   # not "Sign out everywhere", nor another session's
    page.wait_for_url("**/app/#/signin")
    assert not any("chronir_refresh" in c["name"] for c in page.context.cookies())


def test_the_root_leads_to_the_web_client(new_page):
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    for method in ("GET", "HEAD"):
        try:
            opener.open(urllib.request.Request(f"{BASE}/", method=method))
            raise AssertionError(f"{method} / answered without a redirect")
        except urllib.error.HTTPError as e:
            assert e.code == 302, (method, e.code)
            assert e.headers["Location"] == "/app/", (method, e.headers["Location"])
    page = new_page()
    page.goto(f"{BASE}/")
    page.wait_for_url("**/app/")
    expect(page.get_by_role("button", name="Create account")).to_be_visible()


def server_alarm(page, alarm_id):
    """The alarm as the server has it now (status, body)."""
    return page.evaluate("""(a) => fetch(`/v1/alarms/${a[0]}`, {headers: {Authorization: `Bearer ${a[1]}`}})
        .then(async r => [r.status, r.status === 200 ? await r.json() : null])""", [alarm_id, access_token(page)])


def test_no_silent_failure_mark_then_delete_and_quick_edits(new_page):
    """Issue 43.1: a write right after another is made on the version the first one left, so
    what the user saw is what the server has: mark done then delete at once deletes it; two
    quick edits both land, the second last."""
    page = new_page()
    sign_up(page, "Hasty")
    create_from_preset(page, "monthly-1", title="Pay the rent")
    card = page.locator("[data-alarm]").filter(has_text="Pay the rent")
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    card.click()
    # The mark's answer is held until the delete's confirmation is open, then let through: the
    # page drawn again for the mark must not take the open sheet away (it did whenever the
    # answer came after the click on Delete, as under load).
    held = []
    page.route("**/v1/alarms/*/completions", lambda route: held.append(route))
    page.get_by_role("button", name="Mark done").click()
    for _ in range(200):
        if held:
            break
        page.wait_for_timeout(25)
    assert held, "the mark was never sent"
    page.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog")
    expect(confirm).to_be_visible()
    held[0].continue_()
    page.unroute("**/v1/alarms/*/completions")
    expect(page.locator(".toast").filter(has_text="Done")).to_be_visible()
    expect(confirm).to_be_visible()
    confirm.get_by_role("button", name="Delete").click()
    expect(page.locator("[data-alarm]")).to_have_count(0)
    page.wait_for_function("(a) => fetch(`/v1/alarms/${a[0]}`, {headers: {Authorization: `Bearer ${a[1]}`}}).then(r => r.status === 404)",
                           arg=[alarm_id, access_token(page)], timeout=15_000, polling=500)
    expect(page.locator(".toast").filter(has_text="Could not delete")).to_have_count(0)

    create_from_preset(page, "weekly-mon", title="Water the plants")
    card = page.locator("[data-alarm]").filter(has_text="Water the plants")
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    card.click()
    for title in ["Water the ferns", "Water the ferns and the palm"]:
        page.get_by_role("button", name="Edit").click()
        page.get_by_role("dialog", name="Edit alarm").get_by_label("Title").fill(title)
        page.get_by_role("dialog", name="Edit alarm").get_by_role("button", name="Save").click()
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    status, alarm = server_alarm(page, alarm_id)
    assert status == 200 and alarm["title"] == "Water the ferns and the palm", alarm
    # Switched off from its card: the server agrees.
    page.goto(f"{BASE}/app/#/alarms")
    page.get_by_role("switch", name="Water the ferns and the palm on").click()
    expect(page.locator("[data-alarm]").filter(has_text="Water the ferns").locator(".when")).to_contain_text("Off")
    page.wait_for_function("(a) => fetch(`/v1/alarms/${a[0]}`, {headers: {Authorization: `Bearer ${a[1]}`}}).then(r => r.json()).then(x => x.isActive === false)",
                           arg=[alarm_id, access_token(page)], timeout=10_000, polling=500)


OVERFLOW = """() => [...document.querySelectorAll('body *')].filter(e => {
    if (e.closest('.skip')) return false;
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return false;   // scrolls or clips inside its box
    }
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (r.right > innerWidth + 1 || r.left < -1);
}).map(e => `${e.tagName.toLowerCase()}.${e.className || ''} ${Math.round(e.getBoundingClientRect().right)}px`).slice(0, 8)"""


def test_every_screen_fits_from_320_to_1280(new_page):
    """Issue 43.2: no element wider than the viewport at 320, 390 and 1280 px on any screen, and
    no focus ring left on the page by code."""
    page = new_page()
    sign_up(page, "Narrow")
    create_from_preset(page, "monthly-1", title="A rather long alarm title that has to wrap on the narrowest phones")
    card = page.locator("[data-alarm]").first
    expect(card).to_be_visible()
    alarm_id = card.get_attribute("data-alarm")
    card.click()
    page.get_by_role("button", name="Mark done").click()
    expect(page.get_by_role("list", name="Completion history").get_by_role("listitem")).to_have_count(1)
    # Each screen with what shows it has drawn its content (a screen still empty fits any width,
    # and a picture of it shows nothing: both seen with two browsers sharing the machine).
    screens = {"#/alarms": lambda: page.locator("[data-alarm]").first,
               f"#/alarms/{alarm_id}": lambda: page.get_by_role("button", name="Mark done"),
               "#/groups": lambda: page.get_by_role("button", name="Create group"),
               "#/settings": lambda: page.get_by_role("button", name="Save"),
               "#/upgrade": lambda: page.get_by_role("button", name="Show yearly prices")}

    def show(screen):
        page.goto(f"{BASE}/app/{screen}")
        expect(screens[screen]()).to_be_visible()

    for width in [320, 390, 1280]:
        page.set_viewport_size({"width": width, "height": 800})
        for screen in screens:
            show(screen)
            page.wait_for_function("() => document.querySelector('main').children.length > 0")   # the live stream never idles
            page.wait_for_timeout(500)
            over = page.evaluate(OVERFLOW)
            assert not over, f"{screen} at {width} px: {over}"
            ring = page.evaluate("getComputedStyle(document.querySelector('main')).outlineStyle")
            assert ring == "none", f"{screen} at {width} px: main shows a focus outline"
    page.set_viewport_size({"width": 320, "height": 700})
    show("#/alarms")
    shot(page, "list-320")
    show(f"#/alarms/{alarm_id}")
    shot(page, "detail-320", full=True)
    show("#/settings")
    shot(page, "settings-320", full=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    show("#/alarms")
    shot(page, "list-1280")
    show("#/settings")
    shot(page, "settings-1280", full=True)


def mailed_token(email, subject):
    """The token of the newest mail to `email` with `subject`, read from the accounts service's
    mail queue (the suite has no SMTP relay: the queued mail is what the mailbox would receive)."""
    import re
    import time
    url = f"postgres://postgres@127.0.0.1:{os.environ.get('BROWSER_PG_PORT', '55436')}/chronir"
    for _ in range(50):
        out = subprocess.run(["psql", url, "-tAc",
                              f"SELECT body FROM accounts.mail_outbox WHERE recipient = '{email}' AND subject = '{subject}' ORDER BY id DESC LIMIT 1"],
                             capture_output=True, text=True, timeout=30).stdout
        m = re.search(r"#/(?:reset|verify)/([A-Za-z0-9_-]+)", out)
        if m:
            return m.group(1)
        time.sleep(0.2)
    raise AssertionError(f"no '{subject}' mail to {email}")


def test_mail_links_open_the_app(new_page):
    """Issue 57: the links of the reset and verification mails (/reset-password, /verify-email)
    open screens of the web app, which set the new password and confirm the address."""
    page = new_page()
    email, _ = sign_up(page, "Forgetful")
    page.evaluate("(e) => fetch('/v1/auth/password-reset', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({email: e})})", email)
    token = mailed_token(email, "Reset your Chronir password")
    for width, height, name in [(412, 860, "reset-password-phone"), (1280, 800, "reset-password-desktop")]:
        p = new_page(width, height)
        # The mail's link (the token in the fragment, never sent), and an older mail's.
        p.goto(f"{BASE}/app/#/reset/{token}" if width < 800 else f"{BASE}/reset-password?token={token}")
        p.wait_for_url("**/app/#/reset/*")
        expect(p.get_by_role("heading", name="Choose a new password")).to_be_visible()
        shot(p, name)
    p.get_by_label("New password (at least 8 characters)").fill("a brand new horse")
    p.get_by_role("button", name="Set new password").click()
    expect(p.locator("#view [role=status]")).to_contain_text("Sign in with your new password")
    assert token not in p.url, p.url
    # The token worked once: the new password signs in, the old one does not.
    status = p.evaluate("""(e) => fetch('/v1/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({email: e, password: 'a brand new horse'})}).then(r => r.status)""", email)
    assert status == 200, status
    # A used token is refused with a clear message.
    again = new_page()
    again.goto(f"{BASE}/reset-password?token={token}")
    again.get_by_label("New password (at least 8 characters)").fill("yet another horse")
    again.get_by_role("button", name="Set new password").click()
    expect(again.get_by_role("alert")).to_contain_text("not a valid reset token")

    # The verification link confirms the address.
    page2 = new_page()
    email2, _ = sign_up(page2, "Confirmer")
    token2 = page2.evaluate("""async () => { const t = await fetch('/v1/auth/refresh', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-Chronir-Session': 'cookie'}, body: '{}'}).then(r => r.json());
        return fetch('/v1/me/email-verification', {method: 'POST', headers: {Authorization: 'Bearer ' + t.accessToken}}).then(r => r.status) }""")
    assert token2 == 202, token2
    verify = mailed_token(email2, "Confirm your email for Chronir")
    # Issue 74: opened signed out (as the owner of an address someone else signed up with
    # would), the link confirms nothing and says what to do.
    for width, height, name in [(412, 860, "verify-signed-out-phone"), (1280, 800, "verify-signed-out-desktop")]:
        out = new_page(width, height)
        out.goto(f"{BASE}/app/#/verify/{verify}")
        expect(out.locator("#view [role=status]")).to_contain_text("Sign in to the account this mail was sent for")
        expect(out.get_by_role("link", name="reset its password")).to_be_visible()
        assert verify not in out.url, out.url
        shot(out, name)
    # Signed in to the account it was sent for, it confirms.
    page2.goto(f"{BASE}/app/#/verify/{verify}")
    expect(page2.locator("#view [role=status]")).to_contain_text("Your address is confirmed")
    shot(page2, "verify-email-phone")


def test_forgot_password_and_sign_in_settings(new_page):
    """Issue 74: "Forgot your password?" sends the reset mail; Settings lists the sessions
    (this browser marked), signs another one out, and signs out everywhere."""
    page = new_page(412, 860)
    email, _ = sign_up(page, "Securer")
    # A second session of the same account (another device).
    other = page.evaluate("""(e) => fetch('/v1/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({email: e, password: 'correct horse battery'})}).then(r => r.json())""", email)
    page.goto(f"{BASE}/app/#/settings")
    card = page.get_by_role("region", name="Sign-in and security")
    expect(card.locator("[data-current=true]")).to_contain_text("this browser")
    expect(card.locator("[data-current=false]")).to_have_count(1)
    expect(card).to_contain_text("not confirmed yet")
    expect(card).to_contain_text("No Apple or Google sign-in is linked")
    card.scroll_into_view_if_needed()
    shot(page, "settings-security-phone")
    desktop = new_page(1280, 800)
    desktop.goto(f"{BASE}/app/#/signin")
    desktop.get_by_label("Email").fill(email)
    desktop.get_by_label("Password").fill("correct horse battery")
    desktop.get_by_role("button", name="Sign in").click()
    desktop.wait_for_url("**/app/#/alarms")
    desktop.goto(f"{BASE}/app/#/settings")
    dcard = desktop.get_by_role("region", name="Sign-in and security")
    expect(dcard.locator("[data-current=false]")).to_have_count(2)
    dcard.scroll_into_view_if_needed()
    shot(desktop, "settings-security-desktop")
    # Sign the other device out from the phone: its refresh token stops working.
    card.locator("[data-current=false]").first.get_by_role("button", name="Sign out", exact=True).click()
    expect(page.locator(".toast").filter(has_text="Signed out there")).to_be_visible()
    refreshed = page.evaluate("""(t) => fetch('/v1/auth/refresh', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({refreshToken: t})}).then(r => r.status)""", other["refreshToken"])
    assert refreshed == 401, refreshed
    # Sign out everywhere: this browser goes back to sign in, and so does the desktop.
    page.once("dialog", lambda d: d.accept())
    card.get_by_role("button", name="Sign out everywhere").click()
    page.wait_for_url("**/app/#/signin")
    desktop.reload()
    desktop.wait_for_url("**/app/#/signin", timeout=15_000)

    # Forgot your password? — the link on the sign-in screen sends the mail.
    page.get_by_role("link", name="Forgot your password?").click()
    expect(page.get_by_role("heading", name="Reset your password")).to_be_visible()
    shot(page, "forgot-password-phone")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Send the reset mail").click()
    expect(page.locator("#view [role=status]")).to_contain_text("If an account has this address")
    assert mailed_token(email, "Reset your Chronir password")
