"""The dashboard in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``)
driven by Selenium against a server on loopback.

Covers: the dataset list, the facts page, the ``as of`` control (date field, slider by keyboard, and
the no-JavaScript form) showing the Berlin → Lisbon change at the right date, deleting a fact and
seeing it move to the history, the recall playground, and keyboard access. Screenshots of each step
go to ``test-artifacts/dashboard/``.

Without a Chromium here the tests are skipped, unless ``KENNING_REQUIRE_BROWSER=1`` (as CI sets it):
then a missing browser fails them.
"""
from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from live_server import LiveServer

from kenning import Memory

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--window-size=1280,900"]


def _browser_paths():
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (binary and driver):
        message = "headless Chromium needs the Debian packages chromium and chromium-driver"
        if os.environ.get("KENNING_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return binary, driver


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary, driver_path = _browser_paths()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})   # console messages, CSP reports among them
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


@pytest.fixture
def site(tmp_path):
    mem = Memory(f"sqlite:///{tmp_path}/k.db")
    mem.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z", message_id="m1")
    mem.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z", message_id="m2")
    mem.add("I love hiking.", "sam", at="2026-09-05T10:00:00Z", message_id="m3")
    mem.add("I play the cello.", "alex", at="2026-09-06T10:00:00Z")
    with LiveServer(mem) as live:
        yield live


def shot(driver, name: str) -> None:
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def wait_for(driver, condition, timeout: float = 10):
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def settled(d):
        # htmx swaps the facts in place, and a form post reloads the page: an element read mid-swap is
        # stale (Chrome may say so as "Node with given id does not belong to the document"), so try again.
        try:
            return condition(d)
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return False
            raise

    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(settled)


def objects(driver) -> set[str]:
    from selenium.webdriver.common.by import By

    return {row.get_attribute("data-object") for row in driver.find_elements(By.CSS_SELECTOR, "#facts tr[data-fact-id]")}


def summary(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "facts-summary").text


def test_datasets_then_facts_of_one(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/")
    rows = browser.find_elements(By.CSS_SELECTOR, "#datasets tbody tr")
    assert [r.get_attribute("data-dataset") for r in rows] == ["alex", "sam"]
    sam = browser.find_element(By.CSS_SELECTOR, 'tr[data-dataset="sam"]')
    assert [c.text for c in sam.find_elements(By.CSS_SELECTOR, "td.num")] == ["2", "3", "0", "3"]
    shot(browser, "01-datasets")
    sam.find_element(By.LINK_TEXT, "sam").click()
    wait_for(browser, lambda d: d.current_url.endswith("/datasets/sam"))
    assert objects(browser) == {"lisbon", "hiking"}
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#facts section h2")]
    assert "lisbon" in headings and "hiking" in headings           # grouped by anchor entity
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-object="lisbon"]')
    assert "I moved to Lisbon last month." in row.text and row.find_element(By.LINK_TEXT, "message")
    shot(browser, "02-facts")


def test_as_of_control_shows_berlin_then_lisbon_at_the_right_date(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    lisbon = next(f for f in site.memory.list_facts("sam").facts if f.object == "lisbon")
    day_before = (lisbon.valid_at - timedelta(days=1)).date().isoformat()
    day_after = (lisbon.valid_at + timedelta(days=1)).date().isoformat()
    browser.get(site.url + "/datasets/sam")
    field = browser.find_element(By.ID, "as_of")

    def set_date(value: str) -> None:   # what picking a day in the date field does: set it, fire change
        browser.execute_script("arguments[0].value = arguments[1];"
                               "arguments[0].dispatchEvent(new Event('change', {bubbles: true}));", field, value)

    set_date(day_before)
    wait_for(browser, lambda d: f"as of {day_before}" in summary(d))
    assert objects(browser) == {"berlin"}
    assert f"as_of={day_before}" in browser.current_url              # the URL keeps the view
    shot(browser, "03-as-of-before-the-move")
    field = browser.find_element(By.ID, "as_of")
    set_date(day_after)
    wait_for(browser, lambda d: f"as of {day_after}" in summary(d))
    assert objects(browser) == {"lisbon"}
    shot(browser, "04-as-of-after-the-move")

    # The slider, by keyboard: Home is the first day anything was true, each arrow one day later. A day
    # means its end: Berlin, said at 10:00 on the first day, is live as of that day.
    slider = browser.find_element(By.ID, "as_of_slider")
    assert slider.is_displayed()
    slider.send_keys(Keys.HOME)
    wait_for(browser, lambda d: "as of 2026-07-01 23:59 UTC" in summary(d))
    assert objects(browser) == {"berlin"}
    browser.find_element(By.ID, "as_of_slider").send_keys(Keys.ARROW_RIGHT)
    wait_for(browser, lambda d: "as of 2026-07-02 23:59 UTC" in summary(d))
    assert objects(browser) == {"berlin"}
    shot(browser, "05-as-of-slider")

    # Without JavaScript the same form is an ordinary GET: the page at that URL says the same.
    browser.get(site.url + f"/datasets/sam?as_of={day_after}")
    assert objects(browser) == {"lisbon"} == {f.object for f in site.memory.list_facts("sam", as_of=day_after).facts}


def test_deleting_a_fact_moves_it_to_the_history(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam")
    browser.find_element(By.CSS_SELECTOR, 'tr[data-object="hiking"] button.danger').click()
    wait_for(browser, lambda d: "hiking" not in objects(d))
    assert objects(browser) == {"lisbon"}
    assert "hiking" not in {f.object for f in site.memory.list_facts("sam").facts}
    shot(browser, "06-after-delete")
    browser.find_element(By.LINK_TEXT, "History").click()
    wait_for(browser, lambda d: d.current_url.endswith("/history"))
    states = {li.get_attribute("data-object"): li.get_attribute("data-state")
              for li in browser.find_elements(By.CSS_SELECTOR, "#history li[data-fact-id]")}
    assert states == {"berlin": "superseded", "lisbon": "live", "hiking": "deleted"}
    successor = browser.find_element(By.CSS_SELECTOR, 'li[data-object="berlin"] a.successor')
    assert successor.text == "lives in: lisbon"
    successor.click()                                                  # superseded links to its replacement
    wait_for(browser, lambda d: d.current_url.endswith("#fact-" + next(
        f.fact_id for f in site.memory.list_facts("sam").facts if f.object == "lisbon")))
    shot(browser, "07-history")


def test_recall_playground_and_keyboard_access(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(site.url + "/datasets/sam/recall")
    box = browser.find_element(By.ID, "q")
    box.send_keys("Where does the user live?", Keys.ENTER)
    wait_for(browser, lambda d: d.find_elements(By.ID, "context"))
    assert "lives in: lisbon" in browser.find_element(By.ID, "context").text
    first = browser.find_element(By.CSS_SELECTOR, "#items tbody tr")
    assert first.get_attribute("data-kind") == "fact" and "lisbon" in first.text
    assert "vector" in first.find_element(By.CSS_SELECTOR, ".signals").text   # the signals that found it
    shot(browser, "08-recall")
    browser.get(site.url + "/")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.text == "Skip to content"
    focused.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "main"


def test_the_content_policy_blocks_nothing_the_dashboard_uses(browser, site):
    """Every page under its restrictive Content-Security-Policy: the console reports no violation."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get_log("browser")                                      # drop what earlier tests logged
    for path in ("/", "/datasets/sam", "/datasets/sam/history", "/jobs", "/datasets/sam/recall"):
        browser.get(site.url + path)
    browser.find_element(By.ID, "q").send_keys("Where does the user live?", Keys.ENTER)   # htmx swaps in place
    wait_for(browser, lambda d: d.find_elements(By.ID, "context"))
    violations = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    assert violations == []


def test_the_api_docs_render_offline_from_the_servers_own_assets(browser, site):
    """/docs (Swagger UI) lists every operation and /redoc renders, with every script, style and image
    loaded from this server: nothing comes from a CDN (this machine has no internet either)."""
    from selenium.webdriver.common.by import By

    ops = [op for item in site.app.openapi()["paths"].values() for op in item.values()]
    browser.get_log("browser")
    browser.get(site.url + "/docs")
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) == len(ops), timeout=30)
    shown = {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-description")}
    assert "Recall what is relevant to a query" in shown and "List a dataset's facts" in shown
    assert browser.find_elements(By.CSS_SELECTOR, ".btn.authorize")   # the bearer scheme's Authorize button
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(url.startswith(site.url) for url in loaded), loaded
    shot(browser, "docs")
    browser.get(site.url + "/redoc")
    wait_for(browser, lambda d: "Recall what is relevant to a query" in d.find_element(By.TAG_NAME, "body").text,
             timeout=30)
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    logo = "https://cdn.redoc.ly/redoc/logo-mini.svg"   # ReDoc's footer logo: tried, refused by the page's policy
    assert [url for url in loaded if not url.startswith(site.url)] in ([], [logo]), loaded
    shot(browser, "redoc")
    log = browser.get_log("browser")
    if logo in loaded:
        assert any(logo in e["message"] and "Content Security Policy" in e["message"] for e in log), log
    errors = [e["message"] for e in log if e["level"] == "SEVERE" and logo not in e["message"]]
    assert errors == [], errors
