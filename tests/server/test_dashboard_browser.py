"""The dashboard in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``)
driven by Selenium against a server on loopback.

Covers: the dataset list, the facts page, the ``as of`` control (date field, slider by keyboard, and
the no-JavaScript form) showing the Berlin → Lisbon change at the right date, deleting a fact and
seeing it move to the history, erasing (by content, and a fact from its row: the dry run's page first, then
no page shows what went), the recall playground, and keyboard access. Screenshots of each step
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
from kenning.server.dashboard.display import day as readable

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
    mem.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z", message_id="m1", chat="c1")
    mem.add("Berlin is a great city. How long have you been there?", "sam", role="assistant",
            at="2026-07-01T10:00:05Z", message_id="m1a", chat="c1")
    mem.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z", message_id="m2", chat="c1")
    mem.add("I love hiking.", "sam", at="2026-09-05T10:00:00Z", message_id="m3", chat="c1")
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
    assert [c.text for c in sam.find_elements(By.CSS_SELECTOR, "td.num")] == ["2", "3", "0", "4"]
    shot(browser, "01-datasets")
    sam.find_element(By.LINK_TEXT, "sam").click()
    wait_for(browser, lambda d: d.current_url.endswith("/datasets/sam"))
    assert objects(browser) == {"lisbon", "hiking"}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#facts-table thead tr")) == 1   # one table, one header
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-object="lisbon"]')
    assert "I moved to Lisbon last month." in row.text and row.find_element(By.LINK_TEXT, "turn")
    assert row.find_element(By.CSS_SELECTOR, "td.value a").text == "Lisbon"          # as the person wrote it
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
    wait_for(browser, lambda d: f"as of {readable(lisbon.valid_at - timedelta(days=1))}" in summary(d))
    assert objects(browser) == {"berlin"}
    assert f"as_of={day_before}" in browser.current_url              # the URL keeps the view
    shot(browser, "03-as-of-before-the-move")
    field = browser.find_element(By.ID, "as_of")
    set_date(day_after)
    wait_for(browser, lambda d: f"as of {readable(lisbon.valid_at + timedelta(days=1))}" in summary(d))
    assert objects(browser) == {"lisbon"}
    shot(browser, "04-as-of-after-the-move")

    # The slider, by keyboard: Home is the first day anything was true, each arrow one day later. A day
    # means its end: Berlin, said at 10:00 on the first day, is live as of that day.
    slider = browser.find_element(By.ID, "as_of_slider")
    assert slider.is_displayed()
    slider.send_keys(Keys.HOME)
    wait_for(browser, lambda d: "as of 1 Jul 2026, 23:59 UTC" in summary(d))
    assert objects(browser) == {"berlin"}
    browser.find_element(By.ID, "as_of_slider").send_keys(Keys.ARROW_RIGHT)
    wait_for(browser, lambda d: "as of 2 Jul 2026, 23:59 UTC" in summary(d))
    assert objects(browser) == {"berlin"}
    shot(browser, "05-as-of-slider")

    # Without JavaScript the same form is an ordinary GET: the page at that URL says the same.
    browser.get(site.url + f"/datasets/sam?as_of={day_after}")
    assert objects(browser) == {"lisbon"} == {f.object for f in site.memory.list_facts("sam", as_of=day_after).facts}


def confirm_dialog(driver):
    from selenium.webdriver.common.by import By

    dialog = driver.find_element(By.ID, "confirm-dialog")
    wait_for(driver, lambda d: dialog.get_attribute("open") is not None)
    return dialog


def test_deleting_a_fact_asks_first_then_moves_it_to_the_history(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam")
    browser.find_element(By.CSS_SELECTOR, 'tr[data-object="hiking"] td.actions button.danger').click()
    dialog = confirm_dialog(browser)
    assert "likes: hiking" in dialog.text and "stays in the history" in dialog.text
    shot(browser, "06a-confirm-delete")
    browser.find_element(By.ID, "confirm-cancel").click()                  # cancelled: nothing changes
    wait_for(browser, lambda d: d.find_element(By.ID, "confirm-dialog").get_attribute("open") is None)
    assert "hiking" in objects(browser) and "hiking" in {f.object for f in site.memory.list_facts("sam").facts}
    browser.find_element(By.CSS_SELECTOR, 'tr[data-object="hiking"] td.actions button.danger').click()
    confirm_dialog(browser)
    browser.find_element(By.ID, "confirm-ok").click()
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


def test_bulk_delete_takes_one_confirmation(browser, site):
    from selenium.webdriver.common.by import By

    site.memory.add("I play the cello and I drive a Jeep.", "sam", at="2026-09-06T10:00:00Z")
    browser.get(site.url + "/datasets/sam")
    before = objects(browser)
    assert {"cello", "jeep"} <= before
    for obj in ("cello", "jeep"):
        browser.find_element(By.CSS_SELECTOR, f'tr[data-object="{obj}"] td.select input').click()
    wait_for(browser, lambda d: d.find_element(By.ID, "selected-count").text == "2 selected")
    browser.find_element(By.ID, "bulk-delete").click()
    dialog = confirm_dialog(browser)
    assert "Delete 2 selected facts?" in dialog.text
    shot(browser, "06b-bulk-confirm")
    browser.find_element(By.ID, "confirm-ok").click()
    wait_for(browser, lambda d: "cello" not in objects(d))
    assert objects(browser) == before - {"cello", "jeep"}
    assert "deleted" in browser.find_element(By.CSS_SELECTOR, "p.notice").text


def test_the_facts_table_is_one_aligned_sortable_searchable_table(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    site.memory.add("My sister Maya lives in Porto. I play the cello.", "sam", at="2026-09-06T10:00:00Z")
    browser.get(site.url + "/datasets/sam?view=history")
    header = browser.find_elements(By.CSS_SELECTOR, "#facts-table thead th")
    rows = browser.find_elements(By.CSS_SELECTOR, "#facts-table tbody tr")
    every = site.memory.list_facts("sam", include_invalidated=True).facts
    assert len(rows) == len(every) >= 5 and all(len(r.find_elements(By.CSS_SELECTOR, "td")) == len(header) for r in rows)
    lefts = {round(r.find_element(By.CSS_SELECTOR, "td.value").rect["x"]) for r in rows}
    assert len(lefts) == 1                                             # every value starts in one column
    for r in rows:                                                     # dates never wrap: one line each
        for span in r.find_elements(By.CSS_SELECTOR, "td.when .nowrap"):
            assert span.size["height"] < 30, span.text
    shot(browser, "02b-facts-history")
    browser.find_element(By.LINK_TEXT, "Slot").click()
    wait_for(browser, lambda d: "sort=slot" in d.current_url)
    slots = [r.get_attribute("data-predicate") for r in browser.find_elements(By.CSS_SELECTOR, "#facts-table tbody tr")]
    assert slots == sorted(slots)
    assert browser.find_element(By.CSS_SELECTOR, 'th[aria-sort="ascending"]').text.startswith("Slot")
    browser.find_element(By.LINK_TEXT, "Value").click()                  # by what each fact is about: grouped
    wait_for(browser, lambda d: "sort=anchor" in d.current_url)
    groups = [g.get_attribute("data-group") for g in browser.find_elements(By.CSS_SELECTOR, "#facts-table tr.group")]
    assert groups == sorted(set(groups), key=lambda a: (a != "user", a)) and {"berlin", "lisbon", "maya"} <= set(groups)
    shot(browser, "02d-facts-by-anchor")
    browser.get(site.url + "/datasets/sam")
    box = browser.find_element(By.ID, "fact-q")
    box.send_keys("cello", Keys.ENTER)
    wait_for(browser, lambda d: objects(d) == {"cello"})
    assert "matching “cello”" in summary(browser) and "q=cello" in browser.current_url
    assert not browser.find_elements(By.XPATH, "//th[contains(., 'Confidence')]")   # the same everywhere: not shown
    shot(browser, "02c-facts-search")


def test_the_time_line_draws_the_move_as_one_bar_ending_where_the_next_begins(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam")
    browser.find_element(By.LINK_TEXT, "Time line").click()
    wait_for(browser, lambda d: d.current_url.endswith("/timeline"))
    berlin = browser.find_element(By.CSS_SELECTOR, 'svg.timeline rect.bar[data-object="berlin"]')
    lisbon = browser.find_element(By.CSS_SELECTOR, 'svg.timeline rect.bar[data-object="lisbon"]')
    end = float(berlin.get_attribute("x")) + float(berlin.get_attribute("width"))
    assert abs(end - float(lisbon.get_attribute("x"))) < 0.01
    assert berlin.get_attribute("y") == lisbon.get_attribute("y")            # one lane: the slot
    assert abs(berlin.rect["x"] + berlin.rect["width"] - lisbon.rect["x"]) < 1.5   # as drawn on screen, too
    assert "superseded" in berlin.get_attribute("class") and "open" in lisbon.get_attribute("class")
    cursor = browser.find_element(By.ID, "as-of-cursor")
    assert cursor.rect["x"] > lisbon.rect["x"]                               # today is after the move
    shot(browser, "09-timeline")
    browser.get(site.url + "/datasets/sam/timeline?as_of=2026-08-01")       # the cursor moves to the day's end
    cursor = browser.find_element(By.ID, "as-of-cursor")
    berlin = browser.find_element(By.CSS_SELECTOR, 'svg.timeline rect.bar[data-object="berlin"]')
    assert cursor.get_attribute("data-at").startswith("2026-08-01T23:59:59")
    assert berlin.rect["x"] < cursor.rect["x"] < berlin.rect["x"] + berlin.rect["width"]
    berlin.find_element(By.XPATH, "..").click()                              # a bar opens its fact
    wait_for(browser, lambda d: "/facts/" in d.current_url)
    assert [li.text.split()[-1] for li in browser.find_elements(By.CSS_SELECTOR, "#slot-story li")][-1] == "Lisbon"


def test_a_conversation_reads_as_a_transcript_with_the_facts_of_each_turn(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam/conversations")
    row = browser.find_element(By.CSS_SELECTOR, '#conversations tr[data-chat="c1"]')
    assert [c.text for c in row.find_elements(By.CSS_SELECTOR, "td.num")] == ["4", "3", "3"]
    shot(browser, "10-conversations")
    row.find_element(By.LINK_TEXT, "c1").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "transcript"))
    turns = browser.find_elements(By.CSS_SELECTOR, "#transcript li.turn")
    assert [t.get_attribute("data-role") for t in turns] == ["user", "assistant", "user", "user"]
    assert not turns[1].find_elements(By.CSS_SELECTOR, "ul.mined")            # the assistant's turn is not mined
    moved = browser.find_element(By.ID, "msg-m2")
    fact = moved.find_element(By.CSS_SELECTOR, "ul.mined a")
    assert "lives in" in fact.text and "Lisbon" in fact.text
    berlin = browser.find_element(By.CSS_SELECTOR, "#msg-m1 ul.mined li")
    assert "superseded" in berlin.text
    shot(browser, "11-transcript")
    fact.click()                                                             # the fact's history ...
    wait_for(browser, lambda d: d.find_elements(By.ID, "fact-turn"))
    assert [li.get_attribute("data-fact-id") for li in browser.find_elements(By.CSS_SELECTOR, "#slot-story li")] == [
        f.fact_id for f in site.memory.list_facts("sam", include_invalidated=True).facts if f.predicate == "lives in"]
    shot(browser, "12-fact")
    browser.find_element(By.ID, "fact-turn").click()                         # ... and back to its turn in context
    wait_for(browser, lambda d: d.current_url.endswith("#msg-m2"))
    assert "chat=c1" in browser.current_url
    assert browser.execute_script("return document.querySelector(':target').id") == "msg-m2"


def test_the_entity_graph_shows_the_person_and_what_connects_them(browser, site):
    from selenium.webdriver.common.by import By

    site.memory.add("My sister Maya lives in Porto.", "sam", at="2026-09-06T10:00:00Z")
    browser.get(site.url + "/datasets/sam/entities")
    nodes = {n.get_attribute("data-name"): n.get_attribute("data-type")
             for n in browser.find_elements(By.CSS_SELECTOR, "svg.graph a.node")}
    live = {(f.object, f.entity_type) for f in site.memory.list_facts("sam").facts if f.object_is_entity}
    assert nodes == {"user": "USER", **dict(live)}                            # berlin is history: not drawn
    assert "maya" in nodes and nodes["maya"] == "PERSON"
    edges = browser.find_elements(By.CSS_SELECTOR, "svg.graph line.edge-fact")
    assert len(edges) == len(live)
    shot(browser, "13-entities")
    browser.find_element(By.CSS_SELECTOR, 'svg.graph a.node[data-name="maya"]').click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "entity-fact-list"))
    assert "selected" in browser.find_element(By.CSS_SELECTOR, 'svg.graph a.node[data-name="maya"]').get_attribute("class")
    assert "has sister" in browser.find_element(By.ID, "entity-fact-list").text
    browser.get(site.url + "/datasets/sam/entities?view=history")
    assert browser.find_elements(By.CSS_SELECTOR, 'svg.graph a.node[data-name="berlin"]')
    since = browser.find_element(By.CSS_SELECTOR, '#entities tr[data-entity="berlin"] time').get_attribute("datetime")
    assert since.startswith("2026-07-01")                  # when it became true, not when it was stored


def test_editing_a_core_file_keeps_versions_and_shows_a_conflict(browser, site):
    from selenium.webdriver.common.by import By

    site.memory.core.write("sam", "/memories/profile.md", "Name: Sam\nCity: Berlin\n")
    browser.get(site.url + "/datasets/sam/core?path=/memories/profile.md")
    area = browser.find_element(By.ID, "core-text")
    area.clear()
    area.send_keys("Name: Sam\nCity: Lisbon\n")
    browser.find_element(By.ID, "core-save").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "core-saved"))
    assert site.memory.core.read("sam", "/memories/profile.md").content == "Name: Sam\nCity: Lisbon\n"
    assert site.memory.core.read("sam", "/memories/profile.md").version == 2
    area = browser.find_element(By.ID, "core-text")                          # opened at version 2 ...
    site.memory.core.write("sam", "/memories/profile.md", "Name: Samuel\nCity: Lisbon\n")   # ... changed elsewhere
    area.clear()
    area.send_keys("Name: Sam\nCity: Lisbon\nPet: Rufus\n")
    browser.find_element(By.ID, "core-save").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "core-conflict"))
    conflict = browser.find_element(By.ID, "core-conflict")
    assert "version 3" in conflict.text and "Pet: Rufus" in browser.find_element(By.ID, "draft").get_attribute("value")
    assert "+Pet: Rufus" in browser.find_element(By.ID, "conflict-diff").text
    assert site.memory.core.read("sam", "/memories/profile.md").content == "Name: Samuel\nCity: Lisbon\n"   # kept
    shot(browser, "14-core-conflict")
    browser.find_element(By.ID, "save-over").click()                          # deliberately over version 3
    wait_for(browser, lambda d: d.find_elements(By.ID, "core-saved"))
    assert site.memory.core.read("sam", "/memories/profile.md").content == "Name: Sam\nCity: Lisbon\nPet: Rufus\n"
    assert [v.version for v in site.memory.core.history("sam", "/memories/profile.md")] == [1, 2, 3, 4]


def test_notes_can_be_added_edited_and_forgotten(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam/notes")
    browser.find_element(By.ID, "note-text").send_keys("Works in the Berlin office")
    browser.find_element(By.XPATH, "//button[.='Save the note']").click()
    wait_for(browser, lambda d: "Note saved" in d.find_element(By.TAG_NAME, "main").text)
    note = site.memory.notes.list("sam")[0]
    row = browser.find_element(By.ID, f"note-{note.note_id}")
    row.find_element(By.TAG_NAME, "summary").click()
    area = row.find_element(By.TAG_NAME, "textarea")
    area.clear()
    area.send_keys("Works in the Lisbon office")
    row.find_element(By.XPATH, ".//button[.='Save the new text']").click()
    wait_for(browser, lambda d: "Note edited" in d.find_element(By.TAG_NAME, "main").text)
    assert [n.text for n in site.memory.notes.list("sam")] == ["Works in the Lisbon office"]
    old = site.memory.notes.list("sam", include_forgotten=True)
    assert {n.text: n.superseded_by is not None for n in old}["Works in the Berlin office"]
    shot(browser, "15-notes")


def test_erasing_by_content_shows_what_goes_then_no_page_shows_it(browser, site):
    from selenium.webdriver.common.by import By

    pages = ["/datasets/sam", "/datasets/sam?view=history", "/datasets/sam/history", "/datasets/sam/timeline",
             "/datasets/sam/entities", "/datasets/sam/entities?view=history", "/datasets/sam/conversations",
             "/datasets/sam/conversations/view?chat=c1", "/datasets/sam/messages/m2", "/datasets/sam/erase"]

    def showing(word: str) -> list[str]:
        found = []
        for path in pages:
            browser.get(site.url + path)
            if word in browser.page_source.lower():
                found.append(path)
        return found

    assert len(showing("berlin")) >= 6               # the history, time line, entities, the transcript ...
    browser.get(site.url + "/datasets/sam")
    browser.find_element(By.LINK_TEXT, "Erase").click()
    wait_for(browser, lambda d: d.current_url.endswith("/datasets/sam/erase"))
    field = browser.find_element(By.ID, "erase-text")
    assert browser.find_element(By.CSS_SELECTOR, 'label[for="erase-text"]').is_displayed()
    field.send_keys("Berlin")
    browser.find_element(By.ID, "erase-preview").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "erase-receipt"))
    counts = {row.get_attribute("data-kind"): int(row.find_element(By.TAG_NAME, "td").text)
              for row in browser.find_elements(By.CSS_SELECTOR, "#erase-counts tbody tr")}
    assert counts == {"facts": 1, "messages": 2, "entities": 1}
    assert "I live in Berlin." in browser.find_element(By.ID, "erase-messages").text
    assert "lives in: Berlin" in browser.find_element(By.ID, "erase-facts").text
    shot(browser, "16-erase-preview")
    assert site.memory.erase.log("sam").total == 0                       # the preview erased nothing
    assert site.memory.messages.get("sam", "m1").content == "I live in Berlin."
    button = browser.find_element(By.ID, "confirm-erase")
    assert button.text == "Erase permanently"
    button.click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "erased-notice"))
    assert "1 fact, 2 messages, 1 entity" in browser.find_element(By.ID, "erased-notice").text
    entry = browser.find_element(By.CSS_SELECTOR, '#erasure-log tr[data-kind="content"]')
    assert "development" in entry.text and "berlin" not in entry.text.lower()
    shot(browser, "17-erased")
    assert showing("berlin") == []                                     # on no page of the dataset
    browser.get(site.url + "/datasets/sam")
    assert objects(browser) == {"lisbon", "hiking"}                    # the rest still shows
    browser.get(site.url + "/datasets/sam/conversations/view?chat=c1")
    assert [t.get_attribute("data-message-id") for t in browser.find_elements(By.CSS_SELECTOR, "#transcript li.turn")] == [
        "m2", "m3"]


def test_erasing_a_fact_from_its_row_is_a_separate_action_that_shows_the_dry_run(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site.url + "/datasets/sam")
    actions = browser.find_element(By.CSS_SELECTOR, 'tr[data-object="hiking"] td.actions')
    delete, erase = actions.find_elements(By.TAG_NAME, "button")
    assert delete.text == "Delete" and erase.text == "Erase permanently"
    assert erase.value_of_css_property("background-color") != delete.value_of_css_property("background-color")
    erase.click()                                           # no dialog: the dry run's page is the confirmation
    wait_for(browser, lambda d: d.find_elements(By.ID, "erase-receipt"))
    assert not browser.find_elements(By.ID, "confirm-dialog")          # a page of its own, not the delete's dialog
    assert "likes: hiking" in browser.find_element(By.ID, "erase-facts").text
    assert "I love hiking." in browser.find_element(By.ID, "erase-messages").text
    browser.find_element(By.ID, "erase-cancel").click()                  # cancelled: nothing goes
    wait_for(browser, lambda d: d.current_url.endswith("/datasets/sam"))
    assert "hiking" in objects(browser)
    browser.find_element(By.CSS_SELECTOR, 'tr[data-object="hiking"] td.actions button.erase').click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "confirm-erase"))
    browser.find_element(By.ID, "confirm-erase").click()
    wait_for(browser, lambda d: d.find_elements(By.ID, "erased-notice"))
    browser.find_element(By.LINK_TEXT, "History").click()
    wait_for(browser, lambda d: d.current_url.endswith("/history"))
    assert "hiking" not in browser.page_source.lower()                   # unlike a delete, the history keeps nothing
    assert "hiking" not in {f.object for f in site.memory.list_facts("sam", include_invalidated=True).facts}


def test_every_page_fits_a_360_pixel_screen(browser, site):
    from selenium.webdriver.common.by import By

    lisbon = next(f.fact_id for f in site.memory.list_facts("sam").facts if f.object == "lisbon")
    pages = {"datasets": "/", "facts": "/datasets/sam", "history-view": "/datasets/sam?view=history",
             "timeline": "/datasets/sam/timeline", "conversations": "/datasets/sam/conversations",
             "transcript": "/datasets/sam/conversations/view?chat=c1", "entities": "/datasets/sam/entities",
             "fact": f"/datasets/sam/facts/{lisbon}", "notes": "/datasets/sam/notes", "core": "/datasets/sam/core",
             "recall": "/datasets/sam/recall?q=where", "history": "/datasets/sam/history", "jobs": "/jobs",
             "erase": "/datasets/sam/erase", "message": "/datasets/sam/messages/m2", "error": "/datasets/sam/nope"}
    browser.set_window_size(360, 800)
    try:
        for name, path in pages.items():
            browser.get(site.url + path)
            width = browser.execute_script("return window.innerWidth")
            assert browser.execute_script("return document.documentElement.scrollWidth") <= width, name
            for button in browser.find_elements(By.CSS_SELECTOR, "main button.danger"):
                if button.is_displayed():
                    assert button.rect["x"] + button.rect["width"] <= width, (name, button.text)
            shot(browser, f"360-{name}")
    finally:
        browser.set_window_size(1280, 900)


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
    for path in ("/", "/datasets/sam", "/datasets/sam/history", "/jobs", "/datasets/sam/erase", "/datasets/sam/recall"):
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
