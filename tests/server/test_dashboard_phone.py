"""The entity graph and the time line for a person with a family, a negation, an ending and a plan: drawn as
such on a desktop, and readable on a 360 px phone.

The data is said the way a person says it ("I don't eat fish", "I gave up the cello", "We are moving to
Portland next year"), through the default extractor, at times counted back from now, so the plan is always
in the future and the ending always in the past whatever day the tests run.

Over HTTP (no browser): the pages carry the marks and the list forms. In headless Chromium (as
test_dashboard_browser.py, whose browser fixture this module shares): at 1366 px the pictures show the
marks and legend; on a 360 × 740 phone (Chrome's mobile emulation) nothing needed lies outside the
screen, text is at least 11 px, and the as-of line and the plans show. Screenshots go to
``test-artifacts/dashboard/``.
"""
from __future__ import annotations

import base64
import re
from datetime import datetime, timedelta, timezone

import pytest
from live_server import module_server
from test_dashboard_browser import ARTIFACTS, browser, shot  # noqa: F401  (browser: a fixture used below)

from kenning import Memory
from kenning.predicates import is_negated

PHONE = {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True}
SAID = [  # (days ago, what the person said)
    (330, "I live in Berlin."),
    (320, "My sister Maya lives in Porto."),
    (300, "My daughter Isla is six and my wife Sofia works at Acme."),
    (250, "I play the cello."),
    (240, "I love fish."),
    (200, "I moved to Lisbon last month."),
    (120, "I gave up the cello."),
    (60, "I'm vegetarian now. I don't eat fish."),
    (30, "We are moving to Portland next year."),
]


def family(path) -> Memory:
    mem = Memory(f"sqlite:///{path}")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    for i, (ago, text) in enumerate(SAID):
        mem.add(text, "sam", at=now - timedelta(days=ago), message_id=f"m{i}", chat="c1")
    return mem


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("phone")
    with module_server(lambda: family(root / "k.db"), root / "home") as live:
        yield live


@pytest.fixture(scope="module")
def facts(site):
    """The stored facts by what they say, checked to be the story the tests are about."""
    every = site.memory.list_facts("sam", include_invalidated=True, limit=100).facts
    by = {(f.predicate, f.object): f for f in every}
    assert by[("does not eat", "fish")].state == "live" and is_negated("does not eat")
    assert by[("plays", "cello")].state == "ended"
    assert by[("lives in", "portland")].state == "future"
    assert {("has sister", "maya"), ("has daughter", "isla"), ("has wife", "sofia")} <= set(by)
    return by


# -- over HTTP: the marks and the list forms are in the page -------------------------------------------

def test_the_graph_page_marks_the_negation_and_lists_the_family(site, facts):
    with site.client() as c:
        live = c.get("/datasets/sam/entities").text
        history = c.get("/datasets/sam/entities?view=history").text
    svg = re.search(r'<svg[^>]*class="graph".*?</svg>', live, re.S).group(0)
    fish = re.search(r'<a [^>]*data-name="fish"[^>]*>.*?</a>', svg, re.S).group(0)
    assert 'data-marks="not"' in fish and "negated" in fish and 'class="strike"' in fish
    assert re.search(r'>fish<tspan class="mark"> \(not\)</tspan></text>', fish)
    assert re.search(r'<line class="edge edge-fact negated"[^>]*data-b="[^"]+"', svg) and 'class="cross"' in svg
    assert 'data-mark="not"' in svg and "not: a negation" in svg                    # the legend says what it means
    assert 'data-name="cello"' not in svg                                           # ended: only in the history
    listed = re.search(r'<section class="graph-list narrow-only".*?</section>', live, re.S).group(0)
    people = re.search(r"<h3>People</h3>(.*?)</ul>", listed, re.S).group(1)
    assert {"maya", "isla", "sofia"} <= set(re.findall(r'data-name="([^"]+)"', people))
    row = re.search(r'<li class="connection negated state-live" data-key="[^"]+" data-name="fish".*?</li>', listed, re.S)
    assert row and "does not eat" in row.group(0) and ">not</span>" in row.group(0)
    svg = re.search(r'<svg[^>]*class="graph".*?</svg>', history, re.S).group(0)
    cello = re.search(r'<a [^>]*data-name="cello"[^>]*>.*?</a>', svg, re.S).group(0)
    assert 'data-marks="ended"' in cello and '<tspan class="mark"> (ended)</tspan>' in cello
    assert re.search(r'<line class="edge edge-fact state-ended"', svg) and 'data-mark="ended"' in svg


def test_the_time_line_page_marks_them_and_lists_them_around_the_as_of_line(site, facts):
    with site.client() as c:
        page = c.get("/datasets/sam/timeline").text
    svg = re.search(r'<svg[^>]*class="timeline".*?</svg>', page, re.S).group(0)
    fish = facts[("does not eat", "fish")]
    rect = re.search(rf'<rect class="([^"]*)" data-fact-id="{fish.fact_id}".*?</rect><text[^>]*>([^<]*)</text>', svg)
    assert "negated" in rect.group(1).split() and rect.group(2).startswith("not ")
    cello = facts[("plays", "cello")]
    block = re.search(rf'<a [^>]*><rect class="([^"]*)" data-fact-id="{cello.fact_id}".*?</a>', svg, re.S)
    assert "ended" in block.group(1).split() and 'class="end-cap"' in block.group(0)
    assert "negated-key" in page and "ended-key" in page                           # the legend, in words
    vlist = re.search(r'<ol class="vtimeline" id="timeline-vlist">(.*?)</ol>', page, re.S).group(1)
    order = re.findall(r'data-fact-id="([^"]+)"|id="(as-of-marker)"', vlist)
    ids = [fid or marker for fid, marker in order]
    marker = ids.index("as-of-marker")
    plan = facts[("lives in", "portland")].fact_id
    assert ids.index(plan) > marker and ids.index(fish.fact_id) < marker < len(ids) - 1
    assert len(ids) - 1 == len(re.findall(r'<rect class="bar', svg)) + len(re.findall(r'<path class="event', svg))
    items = dict(re.findall(r'data-fact-id="([^"]+)" data-state="[^"]+" data-marks="([^"]*)"', vlist))
    assert items[fish.fact_id] == "not" and items[cello.fact_id] == "ended" and items[plan] == "future"


# -- in a browser ----------------------------------------------------------------------------------------

def full_page_shot(driver, name: str) -> None:
    """The whole page, below the fold too (a phone's screen shows only its top)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    data = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                                                "scale": 1}})["data"]
    (ARTIFACTS / f"{name}.png").write_bytes(base64.b64decode(data))


@pytest.fixture
def phone(browser):  # noqa: F811
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture
def desktop(browser):  # noqa: F811
    browser.set_window_size(1366, 900)
    try:
        yield browser
    finally:
        browser.set_window_size(1280, 900)


# Where each element's box lies, whether it is shown, and the text sizes (CSS px) inside it.
BOXES = """
return Array.from(document.querySelectorAll(arguments[0])).map(function (el) {
  var r = el.getBoundingClientRect(), s = getComputedStyle(el);
  var sizes = [el].concat(Array.from(el.querySelectorAll('*'))).filter(function (e) {
    return Array.from(e.childNodes).some(function (n) { return n.nodeType === 3 && n.textContent.trim(); });
  }).map(function (e) { return parseFloat(getComputedStyle(e).fontSize); });
  return {left: r.left, right: r.right, top: r.top + window.scrollY, height: r.height, text: el.textContent,
          shown: s.display !== 'none' && r.width > 0 && r.height > 0, sizes: sizes,
          key: el.getAttribute('data-name') || el.getAttribute('data-fact-id') || el.id};
});"""


def boxes(driver, selector: str) -> list[dict]:
    return driver.execute_script(BOXES, selector)


def assert_fits_the_phone(driver, selector: str) -> list[dict]:
    """Nothing wider than the screen; every element ``selector`` finds shown, inside 0..360, text >= 11 px."""
    assert driver.execute_script("return window.innerWidth") == 360
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
    found = boxes(driver, selector)
    assert found, selector
    for b in found:
        assert b["shown"], b
        assert 0 <= b["left"] and b["right"] <= 360, b
        assert b["sizes"] and min(b["sizes"]) >= 11, b
    return found


def test_on_a_phone_the_graph_is_a_grouped_list_that_fits(phone, site, facts):
    from selenium.webdriver.common.by import By

    phone.get(site.url + "/datasets/sam/entities")
    assert not phone.find_element(By.CSS_SELECTOR, "svg.graph").is_displayed()     # too small to read: a list instead
    rows = assert_fits_the_phone(phone, "#graph-list li.connection")
    drawn = {f.object for f in site.memory.list_facts("sam").facts if f.object_is_entity}
    drawn |= {f.object for f in site.memory.list_facts("sam", include_invalidated=True).facts
              if f.object_is_entity and f.state == "future"}
    assert {r["key"] for r in rows} == drawn
    headings = [h.text for h in phone.find_elements(By.CSS_SELECTOR, "#graph-list h3")]
    assert headings[0] == "People"                                                   # the family first
    people = [li.get_attribute("data-name")
              for li in phone.find_elements(By.XPATH, "//section[@id='graph-list']/h3[.='People']"
                                                      "/following-sibling::ul[1]/li")]
    assert {"maya", "isla", "sofia"} <= set(people)
    fish = phone.find_element(By.CSS_SELECTOR, '#graph-list li[data-name="fish"]')
    assert "does not eat" in fish.text and fish.find_element(By.CSS_SELECTOR, ".badge.mark-not").text == "not"
    assert assert_fits_the_phone(phone, "#entities tbody tr")                        # the full list, as cards
    full_page_shot(phone, "phone-360-entities")
    phone.get(site.url + "/datasets/sam/entities?view=history")
    assert_fits_the_phone(phone, "#graph-list li.connection")
    cello = phone.find_element(By.CSS_SELECTOR, '#graph-list li[data-name="cello"]')
    assert cello.find_element(By.CSS_SELECTOR, ".badge.mark-ended").text == "ended"
    full_page_shot(phone, "phone-360-entities-history")


def test_on_a_phone_the_time_line_is_a_vertical_list_with_the_as_of_line_and_the_plans(phone, site, facts):
    from selenium.webdriver.common.by import By

    phone.get(site.url + "/datasets/sam/timeline")
    assert not phone.find_element(By.CSS_SELECTOR, "svg.timeline").is_displayed()
    items = assert_fits_the_phone(phone, "#timeline-vlist li")
    ids = [b["key"] for b in items]
    tops = [b["top"] for b in items]
    assert tops == sorted(tops)                                                      # one column, top to bottom
    (marker,) = [b for b in items if b["key"] == "as-of-marker"]
    today = datetime.now(timezone.utc)
    assert marker["text"].strip().startswith(f"as of {today.day} {today:%b %Y}")
    plan = facts[("lives in", "portland")].fact_id
    past = [facts[k].fact_id for k in (("lives in", "berlin"), ("plays", "cello"), ("does not eat", "fish"))]
    assert all(ids.index(p) < ids.index("as-of-marker") < ids.index(plan) for p in past)
    line = phone.find_element(By.ID, "as-of-marker")
    phone.execute_script("arguments[0].scrollIntoView({block: 'center'})", line)
    assert line.is_displayed() and phone.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{plan}"]').is_displayed()
    rule = phone.execute_script("var s = getComputedStyle(arguments[0]); return [s.borderTopStyle, s.borderTopWidth]", line)
    assert rule[0] == "solid" and float(rule[1].rstrip("px")) >= 2                    # drawn as a line, not just words
    future = phone.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{plan}"]')
    assert "Portland" in future.text and future.find_element(By.CSS_SELECTOR, ".badge.mark-future").text == "future"
    fish = phone.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{facts[("does not eat", "fish")].fact_id}"]')
    assert fish.find_element(By.CSS_SELECTOR, ".badge.mark-not").text == "not"
    shot(phone, "phone-360-timeline-as-of")
    full_page_shot(phone, "phone-360-timeline")
    # an as-of day in the past moves the line up the list: the move to Lisbon comes after it
    lisbon = facts[("lives in", "lisbon")]
    day = (lisbon.valid_at - timedelta(days=5)).date().isoformat()
    phone.get(site.url + f"/datasets/sam/timeline?as_of={day}")
    ids = [b["key"] for b in assert_fits_the_phone(phone, "#timeline-vlist li")]
    assert ids.index(facts[("lives in", "berlin")].fact_id) < ids.index("as-of-marker") < ids.index(lisbon.fact_id)


def test_on_a_desktop_the_pictures_mark_negations_and_endings_and_fit(desktop, site, facts):
    from selenium.webdriver.common.by import By

    desktop.get(site.url + "/datasets/sam/entities")
    assert desktop.find_element(By.CSS_SELECTOR, "svg.graph").is_displayed()
    assert not desktop.find_element(By.ID, "graph-list").is_displayed()
    figure = desktop.find_element(By.ID, "graph-figure")
    assert desktop.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", figure)
    svg = desktop.find_element(By.CSS_SELECTOR, "svg.graph").rect
    labels = boxes(desktop, "svg.graph .node text.label")
    for b in labels:                                          # every label inside the picture, and readable
        assert svg["x"] <= b["left"] and b["right"] <= svg["x"] + svg["width"], b
        assert b["height"] >= 11, b
    fish = desktop.find_element(By.CSS_SELECTOR, 'svg.graph a.node[data-name="fish"]')
    assert fish.find_element(By.CSS_SELECTOR, "text.label").text == "fish (not)"
    edge = desktop.find_element(By.CSS_SELECTOR, f'svg.graph line.edge-fact[data-b="{fish.get_attribute("data-key")}"]')
    assert "negated" in edge.get_attribute("class")
    cross = desktop.find_element(By.CSS_SELECTOR, "svg.graph path.cross").rect
    line = edge.rect                                          # the cross sits on the line
    assert line["x"] - 6 <= cross["x"] + cross["width"] / 2 <= line["x"] + line["width"] + 6
    assert line["y"] - 6 <= cross["y"] + cross["height"] / 2 <= line["y"] + line["height"] + 6
    legend = desktop.find_element(By.CSS_SELECTOR, 'svg.graph .legend-mark[data-mark="not"]')
    assert legend.is_displayed() and legend.text == "not: a negation"
    full_page_shot(desktop, "1366-entities-marks")
    desktop.get(site.url + "/datasets/sam/entities?view=history")
    cello = desktop.find_element(By.CSS_SELECTOR, 'svg.graph a.node[data-name="cello"]')
    assert cello.find_element(By.CSS_SELECTOR, "text.label").text == "cello (ended)"
    full_page_shot(desktop, "1366-entities-history-marks")

    desktop.get(site.url + "/datasets/sam/timeline")
    assert not desktop.find_element(By.ID, "timeline-vlist").is_displayed()
    figure = desktop.find_element(By.ID, "timeline-figure")
    assert desktop.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", figure)
    fish = desktop.find_element(By.CSS_SELECTOR, f'rect.bar[data-fact-id="{facts[("does not eat", "fish")].fact_id}"]')
    assert "negated" in fish.get_attribute("class")
    assert fish.find_element(By.XPATH, "following-sibling::*[1]").text.startswith("not ")
    cello = desktop.find_element(By.CSS_SELECTOR, f'rect.bar[data-fact-id="{facts[("plays", "cello")].fact_id}"]')
    cap = cello.find_element(By.XPATH, "following-sibling::*[local-name()='line'][@class='end-cap']")
    assert abs(cap.rect["x"] - (cello.rect["x"] + cello.rect["width"])) < 3      # the cap at the bar's end
    ended = cello.find_element(By.XPATH, "following-sibling::*[local-name()='text'][@class='end-label']")
    assert ended.text == "ended" and ended.rect["x"] >= cap.rect["x"]
    plan = desktop.find_element(By.CSS_SELECTOR, f'rect.bar[data-fact-id="{facts[("lives in", "portland")].fact_id}"]')
    cursor = desktop.find_element(By.ID, "as-of-cursor")
    frame = figure.rect
    for el in (plan, cursor, fish, cello):                    # all in view, none scrolled off
        assert frame["x"] <= el.rect["x"] and el.rect["x"] + el.rect["width"] <= frame["x"] + frame["width"]
    assert plan.rect["x"] > cursor.rect["x"] and "future" in plan.get_attribute("class")
    for b in boxes(desktop, "svg.timeline text"):
        assert b["height"] >= 11, b
    full_page_shot(desktop, "1366-timeline-marks")
