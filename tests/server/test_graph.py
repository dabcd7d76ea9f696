"""The entity graph (kenning.server.dashboard.graph): nodes, edges, layout and markup, without a browser."""
from __future__ import annotations

import math
import re
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import pytest

from kenning.model import ENTITY_TYPES, Entity, Fact
from kenning.server.dashboard.graph import CHAR_W, Graph, build_graph

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
SVG = "{http://www.w3.org/2000/svg}"


def ent(entity_id: str, name: str, type: str) -> Entity:
    return Entity(entity_id=entity_id, name=name, type=type, created_at=T)


def fact(fact_id: str, predicate: str, obj: str, type: str | None = None, episode: str | None = None) -> Fact:
    return Fact(fact_id=fact_id, predicate=predicate, object=obj, object_is_entity=type is not None,
                entity_type=type, text=f"user {predicate} {obj}", valid_at=T, created_at=T, episode_id=episode)


def person() -> tuple[list[Entity], list[Fact]]:
    entities = [ent("e-lis", "lisbon", "PLACE"), ent("e-acme", "acme", "ORG"), ent("e-maya", "maya", "PERSON"),
                ent("e-none", "berlin", "PLACE")]                      # no fact names berlin
    facts = [fact("f1", "lives in", "lisbon", "PLACE", "m1"), fact("f2", "works at", "acme", "ORG", "m1"),
             fact("f3", "worked at", "acme", "ORG", "m2"), fact("f4", "sister", "maya", "PERSON"),
             fact("f5", "age", "34")]
    return entities, facts


def crowd(n: int, one_message: bool = False) -> tuple[list[Entity], list[Fact]]:
    """n entities of every type, some with long names, up to four facts each, messages naming a few
    (or all of them in one message: co-mention springs pulling every node together)."""
    entities = [ent(f"e{i}", f"a rather long entity name number {i}" if i % 7 == 0 else f"thing {i}",
                    ENTITY_TYPES[(i * 5) % len(ENTITY_TYPES)]) for i in range(n)]
    facts = [fact(f"f{i}-{j}", "knows", e.name, e.type, "m" if one_message else f"m{(i * 7) // 5}")
             for i, e in enumerate(entities) for j in range(1 + i % 4)]
    return entities, facts


def graph(entities, facts, **kw) -> Graph:
    return build_graph(entities, facts, href=lambda n: f"/datasets/sam/entities?entity={n.key}", **kw)


def parse(g: Graph) -> ET.Element:
    return ET.fromstring(str(g.svg))


def classes(el: ET.Element) -> set[str]:
    return set(el.get("class", "").split())


# -- nodes and edges ----------------------------------------------------------------------------------

def test_a_small_person_has_its_nodes_and_edges():
    g = graph(*person())
    nodes = {n.key: n for n in g.nodes}
    assert g.nodes[0].key == "user" and set(nodes) == {"user", "e-lis", "e-acme", "e-maya"}
    assert (nodes["e-lis"].name, nodes["e-lis"].type) == ("lisbon", "PLACE")
    assert nodes["user"].type == "USER" and [f.fact_id for f in nodes["user"].facts] == ["f5"]
    assert [f.fact_id for f in nodes["e-acme"].facts] == ["f2", "f3"]
    fact_edges = {e.b: e.predicates for e in g.edges if e.kind == "fact"}
    assert fact_edges == {"e-lis": ["lives in"], "e-acme": ["works at", "worked at"], "e-maya": ["sister"]}
    assert all(e.a == "user" for e in g.edges if e.kind == "fact")
    co = [{e.a, e.b} for e in g.edges if e.kind == "co-mention"]
    assert co == [{"e-lis", "e-acme"}]                                 # f1 and f2 came from message m1


def test_co_mentions_are_deduplicated_and_never_self_edges():
    entities = [ent("a", "a", "TOPIC"), ent("b", "b", "TOPIC")]
    facts = [fact("1", "likes", "a", "TOPIC", "m1"), fact("2", "likes", "b", "TOPIC", "m1"),
             fact("3", "loves", "a", "TOPIC", "m1"), fact("4", "likes", "a", "TOPIC", "m2"),
             fact("5", "likes", "b", "TOPIC", "m2"), fact("6", "hates", "a", "TOPIC", "m3")]
    co = [(e.a, e.b) for e in graph(entities, facts).edges if e.kind == "co-mention"]
    assert len(co) == 1 and set(co[0]) == {"a", "b"}


def test_facts_without_a_message_make_no_co_mention():
    entities = [ent("a", "a", "TOPIC"), ent("b", "b", "TOPIC")]
    g = graph(entities, [fact("1", "likes", "a", "TOPIC"), fact("2", "likes", "b", "TOPIC")])
    assert [e.kind for e in g.edges] == ["fact", "fact"]


def test_one_name_of_two_types_is_two_nodes():
    entities = [ent("e-org", "apple", "ORG"), ent("e-food", "apple", "FOOD")]
    facts = [fact("f1", "works at", "apple", "ORG"), fact("f2", "likes", "apple", "FOOD")]
    nodes = {n.key: n for n in graph(entities, facts).nodes}
    assert set(nodes) == {"user", "e-org", "e-food"}
    assert [f.fact_id for f in nodes["e-org"].facts] == ["f1"]
    assert [f.fact_id for f in nodes["e-food"].facts] == ["f2"]


def test_an_entity_no_fact_names_is_left_out():
    entities, facts = person()
    g = graph(entities, facts)
    assert "e-none" not in {n.key for n in g.nodes}
    assert "e-none" not in {e.b for e in g.edges}
    assert 'data-key="e-none"' not in g.svg and "berlin" not in g.svg
    # a fact naming the right name with the wrong type does not name it either
    g = graph(entities, facts + [fact("f9", "visited", "berlin", "ORG")])
    assert "e-none" not in {n.key for n in g.nodes}


def test_the_radius_grows_mildly_with_the_facts():
    entities = [ent("one", "one", "TOPIC"), ent("many", "many", "TOPIC")]
    facts = [fact("1", "likes", "one", "TOPIC")] + [fact(f"m{i}", "likes", "many", "TOPIC") for i in range(16)]
    r = {n.key: n.r for n in graph(entities, facts).nodes}
    assert r["one"] < r["many"] < 3 * r["one"]


# -- layout ---------------------------------------------------------------------------------------------

def test_the_same_input_gives_the_same_bytes():
    for make in (person, lambda: crowd(60)):
        a, b = graph(*make(), selected="e1"), graph(*make(), selected="e1")
        assert a.svg == b.svg
        assert [(n.x, n.y) for n in a.nodes] == [(n.x, n.y) for n in b.nodes]


@pytest.mark.parametrize("n, width, height, one_message", [(3, 900, 600, False), (60, 900, 600, False),
                                                          (300, 900, 600, False), (60, 480, 320, True),
                                                          (120, 400, 300, False)])
def test_nodes_and_labels_stay_inside_and_apart(n, width, height, one_message):
    g = graph(*crowd(n, one_message), width=width, height=height)
    assert len(g.nodes) == n + 1
    user = g.nodes[0]
    assert user.x == width / 2 and 0.4 * height < user.y < 0.6 * height
    for nd in g.nodes:
        assert nd.r <= nd.x <= width - nd.r and nd.r <= nd.y <= height - nd.r, nd
    for i, a in enumerate(g.nodes):
        for b in g.nodes[i + 1:]:
            assert math.dist((a.x, a.y), (b.x, b.y)) >= 0.98 * (a.r + b.r), (a.key, b.key)
    # the drawn markup too: circles and (estimated) label extents within the viewBox
    root = parse(g)
    for a in root.iter(f"{SVG}a"):
        c, t = a.find(f"{SVG}circle"), a.find(f"{SVG}text")
        cx, cy, r = float(c.get("cx")), float(c.get("cy")), float(c.get("r"))
        assert 0 <= cx - r and cx + r <= width and 0 <= cy - r and cy + r <= height
        x, w = float(t.get("x")), len(t.text) * CHAR_W
        left = {"start": x, "end": x - w, "middle": x - w / 2}[t.get("text-anchor")]
        assert 0 <= left and left + w <= width, t.text
        assert 0 <= float(t.get("y")) <= height


def test_labels_sit_on_the_side_away_from_the_centre():
    g = graph(*crowd(60))
    cx = g.nodes[0].x
    root = parse(g)
    for a in list(root.iter(f"{SVG}a"))[1:]:
        c, t = a.find(f"{SVG}circle"), a.find(f"{SVG}text")
        x = float(c.get("cx"))
        if x >= cx:
            assert t.get("text-anchor") == "start" and float(t.get("x")) > x
        else:
            assert t.get("text-anchor") == "end" and float(t.get("x")) < x


def test_types_keep_their_sectors():
    """Entities of one type start in one angular sector; the force steps ease them, not scatter them."""
    g = graph(*crowd(60))
    user = g.nodes[0]
    by_type: dict[str, list[float]] = {}
    for nd in g.nodes[1:]:
        by_type.setdefault(nd.type, []).append(math.atan2(nd.y - user.y, nd.x - user.x))
    for t, angles in by_type.items():
        mean = math.atan2(sum(map(math.sin, angles)), sum(map(math.cos, angles)))
        spread = max(abs(math.remainder(a - mean, 2 * math.pi)) for a in angles)
        assert spread < math.pi / 2, t


def test_300_entities_lay_out_quickly():
    entities, facts = crowd(300)
    graph(entities, facts)                       # warm up imports and caches
    start = time.perf_counter()
    g = graph(entities, facts)
    took = time.perf_counter() - start
    assert len(g.nodes) == 301
    assert took < 2.0, f"{took:.3f}s"


# -- markup ---------------------------------------------------------------------------------------------

def test_the_svg_parses_and_carries_the_contract():
    g = graph(*person())
    svg = str(g.svg)
    root = parse(g)
    assert root.tag == f"{SVG}svg"
    assert classes(root) == {"graph"} and root.get("role") == "img"
    assert root.get("aria-labelledby") == "graph-title graph-desc"
    assert root.get("viewBox") == "0 0 900 600" and root.get("width") == "100%"
    assert root.find(f"{SVG}title").get("id") == "graph-title"
    desc = root.find(f"{SVG}desc")
    assert desc.get("id") == "graph-desc" and desc.text == "3 entities, 4 connections."
    assert "style=" not in svg and "<style" not in svg and "<script" not in svg

    lines = list(root.iter(f"{SVG}line"))
    assert [(ln.get("data-a"), ln.get("data-b")) for ln in lines] == [(e.a, e.b) for e in g.edges]
    assert {tuple(sorted(classes(ln))) for ln in lines} == {("edge", "edge-fact"), ("edge", "edge-co-mention")}
    titles = {ln.find(f"{SVG}title").text for ln in lines}
    assert "user — lives in — lisbon" in titles and "user — works at, worked at — acme" in titles
    assert svg.index("<line") < svg.index("<a ") and svg.rindex("</line>") < svg.index("<a ")   # edges under nodes

    anchors = {a.get("data-key"): a for a in root.iter(f"{SVG}a")}
    assert set(anchors) == {"user", "e-lis", "e-acme", "e-maya"}
    lis = anchors["e-lis"]
    assert classes(lis) == {"node", "type-place"}
    assert (lis.get("data-name"), lis.get("data-type")) == ("lisbon", "PLACE")
    assert lis.get("href") == "/datasets/sam/entities?entity=e-lis"
    assert lis.find(f"{SVG}circle") is not None
    assert lis.find(f"{SVG}text").get("class") == "label" and lis.find(f"{SVG}text").text == "lisbon"
    assert lis.find(f"{SVG}title").text == "lisbon (Place): lives in lisbon"
    assert anchors["e-acme"].find(f"{SVG}title").text == "acme (Org): works at acme; worked at acme"
    assert classes(anchors["user"]) == {"node", "type-user"} and anchors["user"].get("data-type") == "USER"

    legend = root.find(f".//{SVG}g[@class='legend']")
    swatches = [r.get("class") for r in legend.iter(f"{SVG}rect")]
    assert swatches == ["swatch type-person", "swatch type-org", "swatch type-place"]   # only those present
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["Person", "Org", "Place"]

    numbers = re.findall(r'\s(?:x|y|x1|y1|x2|y2|cx|cy|r)="([^"]*)"', svg)
    assert numbers and all(re.fullmatch(r"-?\d+(\.\d{1,2})?", v) for v in numbers)


def test_names_are_escaped():
    nasty = '<script>alert("x")</script> & co'
    g = graph([ent("e&1", nasty, "ORG")], [fact("f1", "works at", nasty, "ORG")],
              label=lambda n: n.name if n.key == "user" else "<b>" + n.name)
    svg = str(g.svg)
    assert "<script" not in svg and "<b>" not in svg and "& co" not in svg
    assert "&lt;script&gt;" in svg and "&amp; co" in svg
    node = next(a for a in parse(g).iter(f"{SVG}a") if a.get("data-key") == "e&1")
    assert node.get("data-name") == nasty
    assert node.get("href") == "/datasets/sam/entities?entity=e&1"
    assert node.find(f"{SVG}title").text.startswith(nasty + " (Org)")
    assert node.find(f"{SVG}text").text.startswith("<b><script>")


def test_long_names_are_cut_in_the_label_only():
    name = "the international society of very long organisation names"
    g = graph([ent("e1", name, "ORG")], [fact("f1", "member of", name, "ORG")])
    node = next(a for a in parse(g).iter(f"{SVG}a") if a.get("data-key") == "e1")
    label = node.find(f"{SVG}text").text
    assert len(label) <= 24 and label.endswith("…") and name.startswith(label[:-1])
    assert node.find(f"{SVG}title").text.startswith(name + " (Org)")
    assert node.get("data-name") == name


def test_a_node_title_lists_eight_facts_then_counts_the_rest():
    facts = [fact(f"f{i}", f"said {i}", "acme", "ORG") for i in range(11)]
    g = graph([ent("e1", "acme", "ORG")], facts)
    title = next(a for a in parse(g).iter(f"{SVG}a") if a.get("data-key") == "e1").find(f"{SVG}title").text
    assert title.count(";") == 8 and title.endswith("; and 3 more") and "said 7 acme" in title
    assert "said 8 acme" not in title


def test_the_selected_node_is_marked_and_its_edges_highlighted():
    g = graph(*person(), selected="e-acme")
    root = parse(g)
    marked = [a.get("data-key") for a in root.iter(f"{SVG}a") if "selected" in classes(a)]
    assert marked == ["e-acme"]
    lit = {(ln.get("data-a"), ln.get("data-b")) for ln in root.iter(f"{SVG}line") if "highlight" in classes(ln)}
    expected = {(e.a, e.b) for e in g.edges if "e-acme" in (e.a, e.b)}
    assert lit == expected and len(expected) == 2                    # user→acme and the co-mention with lisbon
    assert "highlight" not in str(graph(*person()).svg) and "selected" not in str(graph(*person()).svg)


def test_an_empty_href_makes_no_link():
    g = build_graph(*person(), href=lambda n: "" if n.key == "user" else f"/e/{n.key}")
    anchors = {a.get("data-key"): a for a in parse(g).iter(f"{SVG}a")}
    assert anchors["user"].get("href") is None and anchors["e-lis"].get("href") == "/e/e-lis"


def test_no_entities_is_still_a_graph():
    g = graph([], [fact("f1", "age", "34")])
    root = parse(g)
    assert [n.key for n in g.nodes] == ["user"] and g.edges == []
    assert [a.get("data-key") for a in root.iter(f"{SVG}a")] == ["user"]
    assert root.find(f"{SVG}desc").text == "0 entities, 0 connections."
    assert any(t.text == "No entities yet" for t in root.iter(f"{SVG}text"))
    assert root.find(f".//{SVG}g[@class='legend']") is None
    assert graph([], []).nodes[0].facts == []


def test_crowded_labels_wait_for_hover_and_the_shown_ones_never_overlap():
    from kenning.server.dashboard.graph import CHAR_W, FONT

    entities, facts = crowd(300)
    g = graph(entities, facts, selected="e150")
    ns = "{http://www.w3.org/2000/svg}"
    shown, crowded = [], []
    for a in parse(g).iter(f"{ns}a"):
        text = a.find(f"{ns}text")
        x, y, anchor, width = float(text.get("x")), float(text.get("y")), text.get("text-anchor"), len(text.text) * CHAR_W
        x0 = {"start": x, "end": x - width, "middle": x - width / 2}[anchor]
        box = (x0, y - FONT, x0 + width, y + 0.25 * FONT)
        (crowded if "crowded" in classes(text) else shown).append((a.get("data-key"), box))
    assert crowded and len(shown) > 20                                   # busy: some wait, many still shown
    keys = {k for k, _ in shown}
    assert {"user", "e150"} <= keys                                      # the centre and the selection always
    for i, (_, a) in enumerate(shown):
        for _, b in shown[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    few = graph(*person())
    assert "crowded" not in str(few.svg)                                 # a small graph labels every node


# -- the cap ----------------------------------------------------------------------------------------------

def test_1500_entities_draw_at_most_the_cap_the_most_connected_and_say_so():
    from kenning.server.dashboard.graph import MAX_CO_MENTIONS, MAX_ENTITIES

    entities, facts = crowd(1500)
    g = graph(entities, facts, list_href="#entities")
    assert g.total == 1500 and g.capped and len(g.nodes) - 1 == g.drawn <= MAX_ENTITIES
    named = {}
    for f in facts:
        named[f.object] = named.get(f.object, 0) + 1
    drawn = {n.key for n in g.nodes[1:]}
    kept = min(named[e.name] for e in entities if e.entity_id in drawn)
    left = max(named[e.name] for e in entities if e.entity_id not in drawn)
    assert kept >= left                                                    # the most connected are drawn
    assert sum(e.kind == "co-mention" for e in g.edges) <= MAX_CO_MENTIONS
    root = parse(g)
    assert len(list(root.iter(f"{SVG}circle"))) == len(g.nodes)
    note = root.find(f"{SVG}a[@class='graph-note']")
    assert note.get("href") == "#entities"
    assert note.find(f"{SVG}text").text == f"Showing the {g.drawn} most connected of 1,500 entities: see the full list"
    assert root.find(f"{SVG}desc").text.startswith(f"{g.drawn} of 1,500 entities, ")
    for nd in g.nodes:                                                     # below the note, inside the frame
        assert nd.y - nd.r >= 18 and nd.y + nd.r <= 600
    # the selected entity is drawn even when it is among the least connected
    least = next(e for e in entities if e.entity_id not in drawn)
    assert least.entity_id in {n.key for n in graph(entities, facts, selected=least.entity_id).nodes}
    # one message naming every entity: the co-mention lines are capped too
    one = graph(*crowd(1500, one_message=True))
    assert len(one.nodes) - 1 <= MAX_ENTITIES and sum(e.kind == "co-mention" for e in one.edges) <= MAX_CO_MENTIONS


def test_under_the_cap_nothing_is_left_out_and_no_note_is_drawn():
    g = graph(*crowd(60), list_href="#entities")
    assert g.total == g.drawn == 60 and not g.capped
    assert "graph-note" not in str(g.svg)
    assert parse(g).find(f"{SVG}desc").text.startswith("60 entities, ")


# -- negations and endings ------------------------------------------------------------------------------

LATER = datetime(2026, 9, 1, tzinfo=timezone.utc)


def said(fact_id: str, predicate: str, obj: str, type: str, **kw) -> Fact:
    return Fact(fact_id=fact_id, predicate=predicate, object=obj, object_is_entity=True, entity_type=type,
                text=f"user {predicate} {obj}", created_at=T, **{"valid_at": T, **kw})


def life() -> tuple[list[Entity], list[Fact]]:
    """A sister, fish liked and then not eaten, a cello given up, a house bought next year."""
    entities = [ent("e-maya", "maya", "PERSON"), ent("e-fish", "fish", "FOOD"), ent("e-cello", "cello", "SKILL"),
                ent("e-house", "house", "PRODUCT")]
    facts = [said("f1", "has sister", "maya", "PERSON"),
             said("f2", "likes", "fish", "FOOD", valid_until=datetime(2026, 6, 1, tzinfo=timezone.utc)),
             said("f3", "does not eat", "fish", "FOOD", valid_at=datetime(2026, 6, 1, tzinfo=timezone.utc)),
             said("f4", "plays", "cello", "SKILL", valid_until=datetime(2026, 7, 1, tzinfo=timezone.utc)),
             said("f5", "owns", "house", "PRODUCT", valid_at=datetime(2027, 3, 1, tzinfo=timezone.utc))]
    return entities, facts


def node_text(a: ET.Element) -> str:
    return "".join(a.find(f"{SVG}text").itertext())


def test_negations_endings_and_future_starts_are_marked_on_their_lines():
    g = graph(*life(), at=LATER)
    edges = {e.b: e for e in g.edges if e.kind == "fact"}
    assert (edges["e-fish"].state, edges["e-fish"].negated, edges["e-fish"].marks) == ("live", True, ["not"])
    assert (edges["e-cello"].state, edges["e-cello"].negated, edges["e-cello"].marks) == ("ended", False, ["ended"])
    assert edges["e-house"].marks == ["future"] and edges["e-maya"].marks == []
    assert edges["e-fish"].predicates == ["likes", "does not eat"]          # both said; the live one decides
    root = parse(g)
    lines = {ln.get("data-b"): ln for ln in root.iter(f"{SVG}line")}
    assert classes(lines["e-fish"]) == {"edge", "edge-fact", "negated"}
    assert classes(lines["e-cello"]) == {"edge", "edge-fact", "state-ended"}
    assert classes(lines["e-house"]) == {"edge", "edge-fact", "state-future"}
    assert classes(lines["e-maya"]) == {"edge", "edge-fact"}
    assert lines["e-fish"].find(f"{SVG}title").text == "user — likes, does not eat — fish (not)"
    anchors = {a.get("data-key"): a for a in root.iter(f"{SVG}a")}
    assert node_text(anchors["e-fish"]) == "fish (not)" and node_text(anchors["e-cello"]) == "cello (ended)"
    assert node_text(anchors["e-house"]) == "house (future)" and node_text(anchors["e-maya"]) == "maya"
    mark = anchors["e-fish"].find(f"{SVG}text/{SVG}tspan")
    assert mark.get("class") == "mark" and mark.text == " (not)"           # the word, not only a colour
    assert {"negated"} <= classes(anchors["e-fish"]) and anchors["e-fish"].get("data-marks") == "not"
    assert "state-ended" in classes(anchors["e-cello"]) and "negated" not in classes(anchors["e-cello"])
    assert anchors["e-fish"].find(f"{SVG}title").text.startswith("fish (Food, not): ")
    strikes = [a.get("data-key") for a in anchors.values() if a.find(f"{SVG}path[@class='strike']") is not None]
    assert strikes == ["e-fish"]                                           # a slash across the negated circle only
    assert root.find(f"{SVG}desc").text == "4 entities, 4 connections (1 negated, 1 ended, 1 future)."


def test_the_cross_sits_on_the_negated_line_between_the_circles():
    g = graph(*life(), at=LATER)
    user, fish = g.nodes[0], next(n for n in g.nodes if n.key == "e-fish")
    edges = parse(g).find(f"{SVG}g[@class='edges']")
    (cross,) = edges.findall(f"{SVG}path[@class='cross']")                 # one negated line, one cross
    points = [tuple(map(float, xy.split())) for xy in re.findall(r"[ML]([-\d.]+ [-\d.]+)", cross.get("d"))]
    cx, cy = sum(p[0] for p in points) / 4, sum(p[1] for p in points) / 4
    # on the segment user→fish: collinear, and outside both circles
    cross_product = (fish.x - user.x) * (cy - user.y) - (fish.y - user.y) * (cx - user.x)
    assert abs(cross_product) / math.dist((user.x, user.y), (fish.x, fish.y)) < 0.05
    assert math.dist((cx, cy), (user.x, user.y)) > user.r and math.dist((cx, cy), (fish.x, fish.y)) > fish.r


def test_the_legend_names_each_mark_in_use_in_words():
    root = parse(graph(*life(), at=LATER))
    legend = root.find(f".//{SVG}g[@class='legend']")
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["Person", "Product", "Skill", "Food", "not: a negation",
                                                          "ended: no longer true", "future: starts later"]
    marks = [g.get("data-mark") for g in legend if g.get("data-mark")]
    assert marks == ["not", "ended", "future"]
    sample = legend.find(f"{SVG}g[@data-mark='not']")
    assert {p.get("class") for p in sample.iter(f"{SVG}path")} == {"edge edge-fact negated sample", "cross"}
    assert "data-mark" not in str(graph(*person()).svg)                      # no marks: no mark entries


def test_which_facts_decide_a_line():
    fish = [ent("e-fish", "fish", "FOOD")]
    # a live "likes" beside a live "does not eat": not a negation as a whole
    both = [said("a", "likes", "fish", "FOOD"), said("b", "does not eat", "fish", "FOOD")]
    assert not graph(fish, both, at=LATER).edges[0].negated
    # "dislikes" counts as a negation (kenning.predicates.is_negated)
    assert graph(fish, [said("a", "dislikes", "fish", "FOOD")], at=LATER).edges[0].marks == ["not"]
    # a negation that has ended: both words
    gone = [said("a", "does not eat", "fish", "FOOD", valid_until=datetime(2026, 5, 1, tzinfo=timezone.utc))]
    assert graph(fish, gone, at=LATER).edges[0].marks == ["not", "ended"]
    # replaced counts as ended; only deleted facts: deleted
    replaced = [said("a", "likes", "fish", "FOOD", invalid_at=datetime(2026, 5, 1, tzinfo=timezone.utc),
                     superseded_by="z")]
    assert graph(fish, replaced, at=LATER).edges[0].marks == ["ended"]
    deleted = [said("a", "likes", "fish", "FOOD", invalid_at=datetime(2026, 5, 1, tzinfo=timezone.utc))]
    assert graph(fish, deleted, at=LATER).edges[0].marks == ["deleted"]
    # the time decides: the cello is live before its end and ended after it
    entities, facts = life()
    before = graph(entities, facts, at=datetime(2026, 6, 15, tzinfo=timezone.utc))
    assert {e.b: e.marks for e in before.edges}["e-cello"] == []


def test_marked_labels_stay_inside_the_frame():
    entities, facts = crowd(60)
    facts = [said(f.fact_id, "does not eat" if i % 3 == 0 else f.predicate, f.object, f.entity_type,
                  valid_until=datetime(2026, 2, 1, tzinfo=timezone.utc) if i % 3 == 1 else None)
             for i, f in enumerate(facts)]
    for width, height in ((900, 600), (480, 320)):
        g = graph(entities, facts, at=LATER, width=width, height=height)
        texts = [node_text(a) for a in parse(g).iter(f"{SVG}a")]
        assert any(t.endswith("(not)") for t in texts) and any(t.endswith("(ended)") for t in texts)
        for a in parse(g).iter(f"{SVG}a"):
            t = a.find(f"{SVG}text")
            x, w = float(t.get("x")), len(node_text(a)) * CHAR_W
            left = {"start": x, "end": x - w, "middle": x - w / 2}[t.get("text-anchor")]
            assert 0 <= left and left + w <= width, node_text(a)


def test_the_list_form_groups_the_drawn_entities_by_type():
    g = build_graph(*life(), at=LATER, href=lambda n: f"/e/{n.key}", label=lambda n: n.name.title())
    groups = g.groups
    assert [h for h, _ in groups] == ["People", "Products", "Skills", "Food"]
    rows = {n.key: (n.label, n.href, e.marks, e.predicates) for _, items in groups for n, e in items}
    assert rows == {"e-maya": ("Maya", "/e/e-maya", [], ["has sister"]),
                    "e-house": ("House", "/e/e-house", ["future"], ["owns"]),
                    "e-cello": ("Cello", "/e/e-cello", ["ended"], ["plays"]),
                    "e-fish": ("Fish", "/e/e-fish", ["not"], ["likes", "does not eat"])}
    assert graph([], []).groups == []
