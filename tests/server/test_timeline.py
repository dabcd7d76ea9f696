"""The facts timeline (server-rendered SVG): spans, lanes, escaping, ticks, the markup contract."""
from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from itertools import pairwise

import pytest

from kenning.model import UNKNOWN_START, Fact
from kenning.server.dashboard.timeline import Timeline, build_timeline

NS = {"s": "http://www.w3.org/2000/svg"}
UTC = timezone.utc
NOW = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)


def fact(fact_id, predicate, obj, at, **kw):
    return Fact(fact_id=fact_id, predicate=predicate, object=obj, text=f"user {predicate} {obj}",
                valid_at=at, created_at=at, **kw)


def day(m, d, y=2026):
    return datetime(y, m, d, tzinfo=UTC)


def parse(t: Timeline) -> ET.Element:
    return ET.fromstring(str(t.svg))


def rect(root, fact_id):
    found = root.findall(f".//s:rect[@data-fact-id='{fact_id}']", NS)
    assert len(found) == 1, f"{fact_id}: {len(found)} rects"
    return found[0]


def bar(t, fact_id):
    (b,) = [b for b in t.bars if b.fact.fact_id == fact_id]
    return b


# -- spans and lanes -----------------------------------------------------------------------------------

def test_a_change_of_value_with_valid_until_is_one_lane_whose_bars_touch():
    facts = [fact("berlin", "lives_in", "berlin", day(7, 1), valid_until=day(9, 3, 2026) + timedelta(hours=10)),
             fact("lisbon", "lives_in", "lisbon", day(9, 3) + timedelta(hours=10))]
    t = build_timeline(facts, now=NOW)
    assert t.lanes == ["lives_in"]
    b, l = bar(t, "berlin"), bar(t, "lisbon")
    assert b.lane == l.lane == 0
    assert b.end == l.start and l.end is None
    assert b.x + b.width == pytest.approx(l.x, abs=1e-9)
    root = parse(t)
    rb, rl = rect(root, "berlin"), rect(root, "lisbon")
    assert float(rb.get("x")) + float(rb.get("width")) == pytest.approx(float(rl.get("x")), abs=1e-9)
    assert rb.get("y") == rl.get("y")
    assert rb.get("data-end") == rl.get("data-start") == "2026-09-03T10:00:00Z"
    assert "open" in rl.get("class").split() and rl.get("data-end") == ""
    assert "open" not in rb.get("class").split()


def test_a_fact_whose_start_nobody_said_starts_at_the_axis_edge_not_in_the_year_one():
    facts = [fact("deloitte", "works at", "deloitte", UNKNOWN_START, valid_until=day(9, 1, 2025)),
             fact("freelance", "works as", "consultant", day(9, 1, 2025))]
    t = build_timeline(facts, now=NOW)
    d = bar(t, "deloitte")
    assert d.start.year == 2025 and d.start < day(9, 1, 2025) and d.end == day(9, 1, 2025)
    r = rect(parse(t), "deloitte")
    assert "unknown-start" in r.get("class").split() and r.get("data-start") == ""
    assert "since an unknown date" in r.find("s:title", NS).text
    assert "unknown-start" not in rect(parse(t), "freelance").get("class").split()


def test_a_supersession_ends_where_the_replacement_begins_not_when_it_was_recorded():
    # Recorded two days after the move: the bar still ends at lisbon's valid_at.
    facts = [fact("berlin", "lives_in", "berlin", day(7, 1), superseded_by="lisbon", invalid_at=day(9, 5)),
             fact("lisbon", "lives_in", "lisbon", day(9, 3))]
    t = build_timeline(facts, now=NOW)
    b, l = bar(t, "berlin"), bar(t, "lisbon")
    assert t.lanes == ["lives_in"] and b.lane == l.lane
    assert b.end == day(9, 3)
    assert b.x + b.width == pytest.approx(l.x, abs=1e-9)
    classes = rect(parse(t), "berlin").get("class").split()
    assert "superseded" in classes and "open" not in classes


def test_a_supersession_whose_replacement_is_not_listed_ends_at_invalid_at():
    t = build_timeline([fact("berlin", "lives_in", "berlin", day(7, 1), superseded_by="gone",
                             invalid_at=day(9, 5))], now=NOW)
    assert bar(t, "berlin").end == day(9, 5)


def test_overlapping_values_of_one_predicate_take_two_lanes_touching_ones_share():
    facts = [fact("hiking", "likes", "hiking", day(9, 5)), fact("chess", "likes", "chess", day(9, 6)),
             fact("a", "works_at", "acme", day(1, 1), valid_until=day(3, 1)),
             fact("b", "works_at", "initech", day(3, 1), valid_until=day(5, 1)),
             fact("c", "works_at", "globex", day(6, 1))]
    t = build_timeline(facts, now=NOW)
    # predicates in order of their first valid_at; an extra lane has no label
    assert t.lanes == ["works_at", "likes", ""]
    assert {bar(t, i).lane for i in ("a", "b", "c")} == {0}
    assert {bar(t, "hiking").lane, bar(t, "chess").lane} == {1, 2}
    labels = [e.text for e in parse(t).findall(".//s:text[@class='lane-label']", NS)]
    assert labels == ["works_at", "likes"]


def test_a_deleted_fact_is_not_drawn():
    facts = [fact("keep", "likes", "tea", day(9, 1)),
             fact("gone", "likes", "coffee", day(9, 2), invalid_at=day(9, 4))]
    t = build_timeline(facts, now=NOW)
    assert [b.fact.fact_id for b in t.bars] == ["keep"]
    assert 'data-fact-id="gone"' not in t.svg and "coffee" not in t.svg


def test_an_event_is_a_marker_in_the_events_lane_after_the_others():
    facts = [fact("ev", "attended", "the concert", day(9, 10), kind="event"),
             fact("tea", "likes", "tea", day(9, 12)),
             fact("ev2", "attended", "a wedding", day(9, 10), kind="event")]
    t = build_timeline(facts, now=NOW)
    assert t.lanes == ["likes", "events", ""]      # two events at one time: two lanes, no collision
    ev, ev2 = bar(t, "ev"), bar(t, "ev2")
    assert ev.event and ev2.event and {ev.lane, ev2.lane} == {1, 2}
    assert not bar(t, "tea").event
    root = parse(t)
    assert root.findall(".//s:rect[@data-fact-id='ev']", NS) == []
    (path,) = root.findall(".//s:path[@data-fact-id='ev']", NS)
    assert "event" in path.get("class").split() and path.get("d").endswith("Z")
    assert path.find("s:title", NS).text == "attended: the concert (10 Sep 2026)"
    link = next(a for a in root.iter(f"{{{NS['s']}}}a") if a.find("s:path", NS) is path)
    assert link.get("href") == "#fact-ev"


def test_a_future_plan_is_styled_future():
    facts = [fact("trip", "plans", "trip to japan", day(3, 1, 2027), kind="plan"),
             fact("tea", "likes", "tea", day(9, 1))]
    t = build_timeline(facts, now=NOW)
    root = parse(t)
    assert "future" in rect(root, "trip").get("class").split()
    assert "kind-plan" in rect(root, "trip").get("class").split()
    assert "future" not in rect(root, "tea").get("class").split()
    assert t.end > day(3, 1, 2027)     # the axis reaches past the latest start


def test_an_open_bar_reaches_the_plots_right_edge():
    t = build_timeline([fact("tea", "likes", "tea", day(9, 1))], now=NOW, width=800)
    b = bar(t, "tea")
    assert b.end is None
    assert b.x + b.width == pytest.approx(800 - 12, abs=1e-9)
    assert b.x >= 160                               # the gutter holds the lane labels


# -- markup --------------------------------------------------------------------------------------------

def test_text_is_escaped_and_survives_the_round_trip():
    nasty = '<script>alert("x")</script> & co'
    facts = [fact("x", "likes", nasty, day(9, 1)), fact("y", "<b>pred</b>", "ok", day(9, 2))]
    t = build_timeline(facts, now=NOW, href=lambda f: f"/facts/{f.fact_id}?a=1&b=2")
    assert "<script" not in t.svg and "<b>" not in t.svg
    assert "&lt;script&gt;" in t.svg and "&amp; co" in t.svg
    root = parse(t)
    r = rect(root, "x")
    assert r.get("data-object") == nasty
    assert r.find("s:title", NS).text.startswith(f"likes: {nasty} (1 Sep 2026")
    assert nasty in [e.text for e in root.iter(f"{{{NS['s']}}}text")]
    assert "<b>pred</b>" in [e.text for e in root.iter(f"{{{NS['s']}}}text")]
    assert {a.get("href") for a in root.iter(f"{{{NS['s']}}}a")} == {"/facts/x?a=1&b=2", "/facts/y?a=1&b=2"}


def test_the_svg_is_xml_with_the_contracted_ids_and_no_inline_style():
    facts = [fact("berlin", "lives_in", "berlin", day(7, 1), valid_until=day(9, 3)),
             fact("lisbon", "lives_in", "lisbon", day(9, 3)),
             fact("ev", "attended", "concert", day(9, 10), kind="event")]
    cursor = day(8, 15)
    t = build_timeline(facts, now=NOW, cursor=cursor)
    root = parse(t)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("class") == "timeline" and root.get("role") == "img" and root.get("width") == "100%"
    assert root.get("aria-labelledby") == "timeline-title timeline-desc"
    assert re.fullmatch(r"0 0 960 \d+(\.\d+)?", root.get("viewBox"))
    assert root.find("s:title[@id='timeline-title']", NS) is not None
    desc = root.find("s:desc[@id='timeline-desc']", NS).text
    assert desc.startswith("3 facts over 1 Jul 2026 – ")
    (line,) = root.findall(".//s:line[@id='as-of-cursor']", NS)
    assert line.get("data-at") == "2026-08-15T00:00:00Z"
    assert not any("style" in e.attrib for e in root.iter())
    assert not any(e.tag.endswith(("script", "style", "foreignObject")) for e in root.iter())
    for r in root.iter(f"{{{NS['s']}}}rect"):   # compact numbers: at most two decimals
        for k in ("x", "y", "width", "height"):
            assert re.fullmatch(r"-?\d+(\.\d{1,2})?", r.get(k)), (k, r.get(k))
    r = rect(root, "berlin")
    assert r.get("rx") == "3" and r.get("data-start") == "2026-07-01T00:00:00Z"
    assert r.get("data-predicate") == "lives_in" and r.get("data-object") == "berlin"


def test_the_cursor_defaults_to_now():
    t = build_timeline([fact("tea", "likes", "tea", day(9, 1))], now=NOW)
    (line,) = parse(t).findall(".//s:line[@id='as-of-cursor']", NS)
    assert line.get("data-at") == "2026-10-01T12:00:00Z"


def test_a_narrow_bar_drops_or_shortens_its_label():
    facts = [fact("short", "lives_in", "a very long place name indeed", day(1, 1), valid_until=day(1, 3)),
             fact("long", "lives_in", "lisbon", day(1, 3))]
    t = build_timeline(facts, now=NOW)
    texts = [e.text for e in parse(t).findall(".//s:text[@class='bar-label']", NS)]
    assert "lisbon" in texts
    assert "a very long place name indeed" not in texts
    b = bar(t, "short")
    assert all(len(x) * 6.5 <= b.width for x in texts if x != "lisbon")


def test_output_is_deterministic_whatever_the_input_order():
    facts = [fact(f"f{i}", f"p{i % 3}", f"v{i}", day(1, 1) + timedelta(days=7 * i)) for i in range(12)]
    facts.append(fact("ev", "did", "thing", day(2, 2), kind="event"))
    first = build_timeline(facts, now=NOW).svg
    random.Random(7).shuffle(facts)
    assert build_timeline(facts, now=NOW).svg == first


# -- ticks ---------------------------------------------------------------------------------------------

def tick_labels(t):
    return [(float(e.get("x")), e.text) for e in parse(t).findall(".//s:text[@class='tick-label']", NS)]


def assert_apart(labels):
    for (x1, a), (x2, b) in pairwise(labels):
        assert x2 - len(b) * 3.25 > x1 + len(a) * 3.25, (a, b)


def test_a_ten_day_span_has_day_ticks():
    facts = [fact("a", "likes", "tea", day(9, 1), valid_until=day(9, 11))]
    t = build_timeline(facts, now=day(9, 11))
    labels = tick_labels(t)
    assert len(labels) >= 4
    assert all(re.fullmatch(r"\d{1,2} (Aug|Sep)", text) for _, text in labels), labels
    ats = [datetime.fromisoformat(e.get("data-at")) for e in parse(t).findall(".//s:line[@class='tick']", NS)]
    assert all(b - a <= timedelta(days=3) for a, b in pairwise(ats))
    assert_apart(labels)


def test_a_three_year_span_has_year_ticks():
    facts = [fact("a", "works_at", "acme", day(3, 1, 2024), valid_until=day(2, 1, 2027))]
    t = build_timeline(facts, now=day(2, 1, 2027))
    labels = tick_labels(t)
    assert [text for _, text in labels] == ["2025", "2026", "2027"]
    assert_apart(labels)


def test_a_months_span_has_month_ticks_that_do_not_overlap_even_when_narrow():
    facts = [fact("a", "works_at", "acme", day(1, 1, 2026), valid_until=day(12, 1, 2026))]
    for width in (960, 400):
        labels = tick_labels(build_timeline(facts, now=day(12, 1), width=width))
        assert labels and all(re.fullmatch(r"[A-Z][a-z]{2} \d{4}", text) for _, text in labels)
        assert_apart(labels)
    assert len(tick_labels(build_timeline(facts, now=day(12, 1), width=400))) < 11


# -- nothing to show -----------------------------------------------------------------------------------

@pytest.mark.parametrize("facts", [[], [fact("gone", "likes", "x", day(9, 1), invalid_at=day(9, 2))]])
def test_nothing_to_show(facts):
    t = build_timeline(facts, now=NOW)
    assert t.bars == [] and t.lanes == []
    assert t.start < NOW < t.end
    root = parse(t)
    assert root.get("class") == "timeline"
    assert root.find("s:title[@id='timeline-title']", NS) is not None
    assert root.find("s:desc[@id='timeline-desc']", NS) is not None
    assert "Nothing to show yet" in [e.text for e in root.iter(f"{{{NS['s']}}}text")]


# -- negations, endings and the list form -------------------------------------------------------------

def story() -> list[Fact]:
    """Fish liked, then not eaten; a cello given up; Lisbon until a move to Portland next year."""
    return [fact("fish", "likes", "fish", day(3, 1), valid_until=day(6, 1)),
            fact("nofish", "does not eat", "fish", day(6, 1)),
            fact("cello", "plays", "cello", day(2, 1), valid_until=day(7, 1)),
            fact("lisbon", "lives in", "lisbon", day(1, 10), valid_until=day(6, 1, 2027)),
            fact("portland", "lives in", "portland", day(6, 1, 2027))]


def texts_in(root, fact_id):
    """The texts drawn in a fact's link (its label, and "ended" after it)."""
    link = next(a for a in root.iter(f"{{{NS['s']}}}a") if a.find(f"*[@data-fact-id='{fact_id}']") is not None)
    return {e.get("class"): e.text for e in link.findall("s:text", NS)}, link


def test_a_negation_is_drawn_and_labelled_as_one():
    t = build_timeline(story(), now=NOW)
    root = parse(t)
    r = rect(root, "nofish")
    assert "negated" in r.get("class").split() and bar(t, "nofish").marks == ["not"]
    texts, _ = texts_in(root, "nofish")
    assert texts["bar-label"] == "not fish"                                # in words, not only a colour
    assert r.find("s:title", NS).text.startswith("does not eat: fish (1 Jun 2026 – open")
    assert "negated" not in rect(root, "fish").get("class").split()
    assert texts_in(root, "fish")[0]["bar-label"] == "fish"
    assert "(1 negated, 2 ended)" in root.find("s:desc", NS).text


def test_an_ended_fact_has_an_end_cap_and_says_ended():
    t = build_timeline(story(), now=NOW)
    root = parse(t)
    r = rect(root, "cello")
    assert "ended" in r.get("class").split() and bar(t, "cello").state == "ended"
    texts, link = texts_in(root, "cello")
    (cap,) = link.findall("s:line[@class='end-cap']", NS)
    end = float(r.get("x")) + float(r.get("width"))
    assert float(cap.get("x1")) == float(cap.get("x2")) == pytest.approx(end, abs=0.01)
    assert texts["end-label"] == "ended"
    (label,) = link.findall("s:text[@class='end-label']", NS)
    assert float(label.get("x")) > end                                     # after the bar, in its lane
    assert r.find("s:title", NS).text.endswith("– 1 Jul 2026, ended)")
    # Lisbon ends next year (the move): not ended yet, so no cap; Portland is future
    assert "ended" not in rect(root, "lisbon").get("class").split()
    _, lisbon = texts_in(root, "lisbon")
    assert lisbon.findall("s:line", NS) == [] and bar(t, "lisbon").state == "live"
    assert bar(t, "portland").marks == ["future"]
    # a year later the move has happened: Lisbon has ended then (the chart says what holds at ``now``)
    later = build_timeline(story(), now=day(7, 1, 2027))
    assert bar(later, "lisbon").state == "ended" and "ended" in rect(parse(later), "lisbon").get("class").split()


def test_ended_goes_inside_the_bar_when_the_lane_has_no_room_after_it():
    # a value ended where the next began (no supersession recorded): nothing fits between them
    facts = [fact("a", "works at", "a rather long employer name", day(1, 1), valid_until=day(8, 1)),
             fact("b", "works at", "b", day(8, 1))]
    t = build_timeline(facts, now=NOW)
    texts, link = texts_in(parse(t), "a")
    assert "end-label" not in texts and texts["bar-label"] == "a rather long employer name (ended)"
    assert link.findall("s:line[@class='end-cap']", NS)


def test_a_replaced_fact_is_not_called_ended():
    facts = [fact("berlin", "lives in", "berlin", day(7, 1), superseded_by="lisbon", invalid_at=day(9, 5)),
             fact("lisbon", "lives in", "lisbon", day(9, 3))]
    t = build_timeline(facts, now=NOW)
    classes = rect(parse(t), "berlin").get("class").split()
    assert "superseded" in classes and "ended" not in classes and bar(t, "berlin").marks == ["superseded"]


def test_a_plan_that_starts_last_gets_room_for_its_name():
    t = build_timeline(story(), now=NOW)
    b = bar(t, "portland")
    assert b.width >= len("portland") * 6.5 + 8
    assert "portland" in texts_in(parse(t), "portland")[0].values()


def test_the_list_form_parts_the_facts_at_the_as_of_time():
    t = build_timeline(story(), now=NOW)
    before, after = t.split()
    assert [b.fact.fact_id for b in before] == ["lisbon", "cello", "fish", "nofish"]   # by start
    assert [b.fact.fact_id for b in after] == ["portland"]
    earlier = build_timeline(story(), now=NOW, cursor=day(4, 1))
    before, after = earlier.split()
    assert [b.fact.fact_id for b in before] == ["lisbon", "cello", "fish"]
    assert [b.fact.fact_id for b in after] == ["nofish", "portland"]
    assert build_timeline([], now=NOW).split() == ([], [])
