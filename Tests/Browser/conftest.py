"""Fixtures of the browser tests: Chromium from the distribution, a fresh context per user,
the suite's URL, the operator's tools (chronirctl for tiers, the ops token)."""
import json
import os
import subprocess
import uuid

import pytest
from playwright.sync_api import sync_playwright

BASE = os.environ.get("CHRONIR_WEB_URL", "http://127.0.0.1:8080")
SHOTS = os.environ.get("CHRONIR_SCREENSHOTS", "docs/screenshots")


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=os.environ.get("CHRONIR_CHROMIUM", "/usr/bin/chromium"), headless=True,
                              args=["--autoplay-policy=no-user-gesture-required", "--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def new_page(browser):
    contexts = []

    def make(width=412, height=860):
        ctx = browser.new_context(viewport={"width": width, "height": height}, timezone_id="UTC", locale="en-US")
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(15_000)
        return page

    yield make
    for c in contexts:
        c.close()


def shot(page, name, full=False):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=full)


def sign_up(page, name, onboard="skip"):
    """Signs a new user up through the app; answers (email, uid)."""
    email = f"{name.lower()}-{uuid.uuid4().hex[:10]}@example.com"
    page.goto(f"{BASE}/app/#/signup")
    page.get_by_label("Your name").fill(name)
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password (at least 8 characters)").fill("correct horse battery")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url("**/app/#/welcome")
    if onboard == "skip":
        page.get_by_role("button", name="Skip").click()
        page.wait_for_url("**/app/#/alarms")
    uid = json.loads(page.evaluate("localStorage.getItem('chronir.session')"))["user"]["uid"]
    return email, uid


def access_token(page):
    """A fresh access token of the page's session, as the app gets one: a refresh with the
    HttpOnly cookie (no script can read the refresh token; the access token is in memory)."""
    return page.evaluate("""() => fetch('/v1/auth/refresh', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-Chronir-Session': 'cookie'}, body: '{}'})
        .then(r => r.json()).then(j => j.accessToken)""")


def set_tier(uid, tier):
    subprocess.run([os.environ["CHRONIR_CTL"], "tier", "set", "--user", uid, "--tier", tier], check=True,
                   env={**os.environ, "CHRONIR_LOG_LEVEL": "critical"}, capture_output=True, timeout=30)


def reload_me(page):
    """Makes the app read the profile again (after an operator changed the tier)."""
    page.evaluate("localStorage.removeItem('chronir.me')")
    page.reload()


@pytest.fixture(scope="session")
def identity():
    """The local Apple and Google sign-in stand-in the suite was started against
    (scripts/browser-test.sh points the accounts service and the gateway at its port)."""
    from fake_identity import FakeIdentityProviders

    providers = FakeIdentityProviders(int(os.environ.get("CHRONIR_FAKE_IDP_PORT", "18291"))).start()
    yield providers
    providers.stop()


# Two groups of tests, one per browser when scripts/browser-test.sh runs them side by side
# (pytest-xdist, --dist loadgroup): the two tests that wait for a whole minute go to different
# groups, each first in its own, so they wait for the same minute instead of one after the other;
# the rest alternate in the file's order. One process (no xdist) runs the same order: the two
# minute waits first, then the rest.
MINUTE_WAITS = ("test_firing_screen_at_the_instant_slide_to_complete_history",
                "test_a_free_snooze_shows_snoozed_until_and_the_tier_limits")


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): the browser that runs this test (pytest-xdist)")


# tryfirst: xdist reads the marks into each test's group in its own hook of this name, which
# pytest would otherwise call before this one (the later plugin first), finding none.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    first = {name: i for i, name in enumerate(MINUTE_WAITS)}
    items.sort(key=lambda item: (item.name not in first, first.get(item.name, 0)))
    rest = 0
    for item in items:
        if item.name in first:
            group = first[item.name]
        else:
            group, rest = rest % 2, rest + 1
        item.add_marker(pytest.mark.xdist_group(f"browser-{group}"))
