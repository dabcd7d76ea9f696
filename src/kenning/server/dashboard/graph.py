"""A person's entity graph, drawn on the server as plain SVG.

Why on the server: the dashboard's Content-Security-Policy allows no outside scripts and no inline
styles, so the layout is computed here (numpy, deterministic: the same facts always give the same
bytes) and shipped as markup that colours itself only through classes the stylesheet defines.

The picture: the user at the centre, each entity the given facts name around it, grouped into
angular sectors by type, then eased by a short force layout (Fruchterman-Reingold style) so that
entities named in the same message drift together without losing their sector.

What a line says: a user→entity line is drawn from the facts naming the entity as of a time (now by
default). Where every one of those facts is a negation ("does not eat · fish") the line is crossed and
the label reads "fish (not)"; where none of them holds any more (ended or replaced) it is dashed and
reads "(ended)"; where all of them start later, "(future)". Words as well as strokes, so the marks do
not rest on colour, and each mark in use has a legend entry. ``Graph.groups`` gives the same
connections as a list grouped by type, for screens too narrow for the picture.

What it costs: a page draws at most MAX_ENTITIES entities (the most connected; the caller is told how
many there were, to say so and link to the full list) and MAX_CO_MENTIONS co-mention lines. Every
step that compares positions (repulsion, pushing circles apart, keeping labels off each other) looks
only at neighbours found through a grid of cells (spatial hashing), so the work grows about linearly
with what is drawn, never with the square of it.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from markupsafe import Markup, escape

from ...model import ENTITY_TYPES, Entity, Fact
from ...predicates import is_negated

USER = "user"
FONT = 11.0                 # the label font size (px) the stylesheet should use: labels are fitted by it
CHAR_W = 0.62 * FONT        # a generous average glyph width, to keep labels inside the frame
MARGIN = 8.0
LABEL_GAP = 4.0             # between a circle and its label
PAD = 2.0                   # the least gap between two circles
MAX_LABEL = 24              # visible characters; the full name is in the node's <title>
TITLE_FACTS = 8             # facts listed in a node's <title> before "and N more"
ITERATIONS = 50             # force-layout steps: enough to ease the radial start, cheap at 300 nodes
SEPARATE_PASSES = 150
LEGEND_ROW = 18.0
SWATCH = 10.0
NOTE_ROW = 18.0             # the line above the graph that says how many entities are drawn, when not all are
MAX_ENTITIES = 300          # entities drawn at most: the most connected (and the selected one)
MAX_CO_MENTIONS = 2_000     # co-mention lines drawn at most: the pairs named together most often
LABEL_CELL = 32.0           # grid cell (px) for finding the labels and circles a label could cover
SAMPLE_W = 22.0             # a legend entry's sample line
CROSS = 4.0                 # half the size of the cross on a negated line

# What each mark on a line means, in the legend (the word itself is what the label carries).
MARKS = {"not": "not: a negation", "ended": "ended: no longer true", "future": "future: starts later",
         "deleted": "deleted"}
# The list view's group headings, in the graph's type order.
GROUP_NAMES = {"PERSON": "People", "ORG": "Organisations", "PLACE": "Places", "PRODUCT": "Products",
               "SKILL": "Skills", "TOPIC": "Topics", "EVENT": "Events", "FOOD": "Food", "ROLE": "Roles",
               "CONCEPT": "Concepts", "THING": "Things", "DATE": "Dates"}


@dataclass
class Node:
    key: str                 # "user" for the centre, else the entity_id
    name: str                # the entity name (the default label; "user" for the centre)
    type: str                # "USER" for the centre, else the entity type
    x: float
    y: float
    r: float
    facts: list[Fact]        # the facts that name it (for the user node: facts with no entity object)
    label: str = ""          # the visible name, uncut (the caller's ``label``)
    href: str = ""           # its link ("" for none)


@dataclass
class Edge:
    a: str                   # node keys
    b: str
    predicates: list[str]    # user→entity: the distinct predicates of the facts naming the entity
    kind: str                # "fact" (user→entity) or "co-mention" (named by facts of one message)
    state: str = "live"      # user→entity: "live", "future", "ended" (ended or replaced) or "deleted"
    negated: bool = False    # user→entity: every fact that gives it its state is a negation

    @property
    def marks(self) -> list[str]:
        """The words a line's label carries: "not", then "ended" / "future" / "deleted" (none when live)."""
        return (["not"] if self.negated else []) + ([self.state] if self.state != "live" else [])


@dataclass
class Graph:
    svg: Markup
    nodes: list[Node]
    edges: list[Edge]
    total: int = 0           # entities the facts name; len(nodes) - 1 of them are drawn

    @property
    def drawn(self) -> int:
        return len(self.nodes) - 1

    @property
    def capped(self) -> bool:
        return self.drawn < self.total

    @property
    def groups(self) -> list[tuple[str, list[tuple[Node, Edge]]]]:
        """The drawn entities as a list: (heading, [(node, its user→entity edge)]) per type, in the
        picture's type order, each group by name."""
        edges = {e.b: e for e in self.edges if e.kind == "fact"}
        out: dict[str, list[tuple[Node, Edge]]] = {}
        for n in self.nodes[1:]:
            out.setdefault(n.type, []).append((n, edges[n.key]))
        return [(GROUP_NAMES.get(t, t.capitalize()), rows) for t, rows in out.items()]


def build_graph(entities: list[Entity], facts: list[Fact], *, href: Callable[[Node], str],
                label: Callable[[Node], str] = lambda n: n.name, selected: str | None = None,
                width: int = 900, height: int = 600, most: int = MAX_ENTITIES, list_href: str = "",
                at: datetime | None = None) -> Graph:
    """The graph of the entities ``facts`` name (the caller picks the facts: live ones, or history).

    ``href`` gives each node's link (an empty string: no link), ``label`` its visible text, and
    ``selected`` the key of a node to mark (its edges are highlighted). At most ``most`` entities are
    drawn, the most connected (the selected one always); when some are left out, a line above the graph
    says how many, linking to ``list_href`` (the full entity list) if given. Lines are marked as
    negated, ended or future as of ``at`` (default: now).
    """
    width, height = max(int(width), 320), max(int(height), 240)
    most = max(int(most), 1)
    at = datetime.now(timezone.utc) if at is None else at
    nodes, episodes, total = _nodes(entities, facts, most, selected)
    edges = _edges(nodes, episodes, at)
    marks = {e.b: e.marks for e in edges if e.kind == "fact"}
    for n in nodes:
        n.label, n.href = label(n), href(n)
    labels = [_truncate(n.label) + _suffix(marks.get(n.key, [])) for n in nodes]
    used = [m for m in MARKS if any(m in ms for ms in marks.values())]
    legend, legend_h = _legend(_type_order({n.type for n in nodes[1:]}), used, width, height)
    top = NOTE_ROW if len(nodes) - 1 < total else 0.0
    _layout(nodes, edges, labels, width, height - legend_h - top)
    for n in nodes:
        n.y += top
    return Graph(_svg(nodes, edges, labels, legend, selected, width, height, total, list_href), nodes,
                 edges, total)


# -- the model: nodes and edges ---------------------------------------------------------------------

def _type_rank(t: str) -> tuple[int, str]:
    """Types in a fixed order (the model's), unknown ones after it by name: sectors never reshuffle."""
    return (ENTITY_TYPES.index(t), "") if t in ENTITY_TYPES else (len(ENTITY_TYPES), t)


def _type_order(types: set[str]) -> list[str]:
    return sorted(types, key=_type_rank)


def _radius(count: int, scale: float) -> float:
    """Mild growth with the facts naming a node (log), shrunk a little when the graph is crowded."""
    return scale * (7.0 + min(2.2 * math.log2(max(count, 1)), 9.0))


def _nodes(entities: list[Entity], facts: list[Fact], most: int = MAX_ENTITIES, selected: str | None = None
           ) -> tuple[list[Node], dict[str, list[str]], int]:
    """The user plus each entity at least one fact names (name and type must both match): the ``most``
    most connected of them (named by the most facts, then in the most messages; ``selected`` always),
    the episodes naming the drawn ones, and how many entities the facts name in all."""
    by_name: dict[tuple[str, str], Entity] = {}
    for e in entities:
        by_name.setdefault((e.name, e.type), e)
    named: dict[str, list[Fact]] = {}
    user_facts: list[Fact] = []
    episodes: dict[str, list[str]] = {}           # episode_id → the entity keys its facts name
    for f in facts:
        if not f.object_is_entity:
            user_facts.append(f)
            continue
        hit = by_name.get((f.object, f.entity_type or ""))
        if hit is None:
            continue
        named.setdefault(hit.entity_id, []).append(f)
        if f.episode_id is not None:
            keys = episodes.setdefault(f.episode_id, [])
            if hit.entity_id not in keys:
                keys.append(hit.entity_id)
    found = [e for e in by_name.values() if e.entity_id in named]
    total = len(found)
    if total > most:
        mentions: dict[str, int] = {}
        for keys in episodes.values():
            for key in keys:
                mentions[key] = mentions.get(key, 0) + 1
        found.sort(key=lambda e: (e.entity_id != selected, -len(named[e.entity_id]),
                                  -mentions.get(e.entity_id, 0), _type_rank(e.type), e.name, e.entity_id))
        found = found[:most]
        kept = {e.entity_id for e in found}
        episodes = {ep: [k for k in keys if k in kept] for ep, keys in episodes.items()}
    found.sort(key=lambda e: (_type_rank(e.type), e.name, e.entity_id))
    scale = 1.0 if len(found) <= 60 else max(0.55, math.sqrt(60 / len(found)))
    user = Node(USER, USER, "USER", 0.0, 0.0, 16.0 * max(scale, 0.75), user_facts)
    return [user] + [Node(e.entity_id, e.name, e.type, 0.0, 0.0, _radius(len(named[e.entity_id]), scale),
                          named[e.entity_id]) for e in found], episodes, total


_EDGE_STATE = {"live": "live", "future": "future", "ended": "ended", "superseded": "ended", "deleted": "deleted"}


def _standing(facts: list[Fact], at: datetime) -> tuple[str, bool]:
    """A user→entity line's state as of ``at`` (the best of its facts': live, future, ended, deleted; a
    replaced fact has ended) and whether every fact in that state is a negation."""
    states = [_EDGE_STATE[f.state_at(at)] for f in facts]
    state = next((s for s in ("live", "future", "ended", "deleted") if s in states), "live")
    deciding = [f for f, s in zip(facts, states) if s == state]
    return state, bool(deciding) and all(is_negated(f.predicate) for f in deciding)


def _suffix(marks: list[str]) -> str:
    return f" ({', '.join(marks)})" if marks else ""


def _edges(nodes: list[Node], episodes: dict[str, list[str]], at: datetime,
           most: int = MAX_CO_MENTIONS) -> list[Edge]:
    """One user→entity edge each (its state as of ``at``), then co-mention edges (deduplicated, in node
    order): at most ``most``, the pairs named together in the most messages."""
    edges = [Edge(USER, n.key, list(dict.fromkeys(f.predicate for f in n.facts)), "fact", *_standing(n.facts, at))
             for n in nodes[1:]]
    index = {n.key: i for i, n in enumerate(nodes)}
    pairs: dict[tuple[int, int], int] = {}
    for keys in episodes.values():
        idx = sorted(index[k] for k in keys if k in index)
        for i, a in enumerate(idx):
            for b in idx[i + 1:]:
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
    chosen = sorted(pairs) if len(pairs) <= most else sorted(sorted(pairs, key=lambda p: (-pairs[p], p))[:most])
    edges += [Edge(nodes[a].key, nodes[b].key, [], "co-mention") for a, b in chosen]
    return edges


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1].rstrip() + "…"


# -- the layout -------------------------------------------------------------------------------------

def _radial(nodes: list[Node], rx: float, ry: float) -> np.ndarray:
    """Start positions: a sector per type (sized by its count, plus one so a lone entity has room),
    nodes spread over it and staggered across a few rings so neighbours do not sit on one arc."""
    m = len(nodes)
    groups: dict[str, int] = {}
    for n in nodes:
        groups[n.type] = groups.get(n.type, 0) + 1
    rings = min(6, max(1, math.ceil(math.sqrt(m / 8))))
    fracs = [0.65] if rings == 1 else list(np.linspace(0.4, 0.92, rings))
    total = sum(c + 1 for c in groups.values())
    out = np.zeros((m, 2))
    angle, i = -math.pi / 2, 0
    for count in groups.values():                 # nodes are already sorted by type
        span = 2 * math.pi * (count + 1) / total
        for j in range(count):
            a = angle + span * (j + 1) / (count + 1)
            f = fracs[j % rings]
            out[i] = (rx * f * math.cos(a), ry * f * math.sin(a))
            i += 1
        angle += span
    return out


def _bounds(r: np.ndarray, widths: np.ndarray, right: np.ndarray, w: float, h: float) -> tuple[np.ndarray, ...]:
    """Where each centre may sit so its circle and its label (on its side) stay inside the frame."""
    room = widths + LABEL_GAP
    x_lo = MARGIN + r + np.where(right, 0.0, room)
    x_hi = w - MARGIN - r - np.where(right, room, 0.0)
    ext = np.maximum(r, 0.7 * FONT)
    y_lo, y_hi = MARGIN + ext, h - MARGIN - ext
    x_lo, x_hi = np.minimum(x_lo, (x_lo + x_hi) / 2), np.maximum(x_hi, (x_lo + x_hi) / 2)
    y_lo, y_hi = np.minimum(y_lo, (y_lo + y_hi) / 2), np.maximum(y_hi, (y_lo + y_hi) / 2)
    return x_lo, x_hi, y_lo, y_hi


def _clamp(pos: np.ndarray, bounds: tuple[np.ndarray, ...]) -> None:
    x_lo, x_hi, y_lo, y_hi = bounds
    pos[1:, 0] = np.clip(pos[1:, 0], x_lo[1:], x_hi[1:])
    pos[1:, 1] = np.clip(pos[1:, 1], y_lo[1:], y_hi[1:])


def _layout(nodes: list[Node], edges: list[Edge], labels: list[str], w: float, h: float) -> None:
    """Radial start, a few force steps, then overlaps pushed apart; the user stays pinned at the centre."""
    n = len(nodes)
    cx, cy = w / 2, h / 2
    nodes[0].x, nodes[0].y = cx, cy
    if n == 1:
        return
    r = np.array([nd.r for nd in nodes])
    widths = np.array([len(t) * CHAR_W for t in labels])
    room = min(float(widths[1:].max()), w / 4) + LABEL_GAP
    rx = max(w / 2 - MARGIN - room - float(r.max()), w * 0.15)
    ry = max(h / 2 - MARGIN - FONT - float(r.max()), h * 0.15)
    pos = np.empty((n, 2))
    pos[0] = (cx, cy)
    pos[1:] = _radial(nodes[1:], rx, ry) + (cx, cy)
    anchor = pos.copy()
    index = {nd.key: i for i, nd in enumerate(nodes)}
    co = [(index[e.a], index[e.b]) for e in edges if e.kind == "co-mention"]
    ea = np.array([a for a, _ in co], dtype=int)
    eb = np.array([b for _, b in co], dtype=int)
    degree = np.bincount(np.concatenate([ea, eb]), minlength=n).astype(float)
    pull_w = 0.3 / np.maximum(1.0, np.sqrt(degree[ea] * degree[eb])) if len(co) else np.zeros(0)
    box = _bounds(r, np.zeros(n), np.ones(n, dtype=bool), w, h)

    # Fruchterman-Reingold: repulsion k²/d between near nodes (a cutoff keeps far nodes from piling
    # everything against the frame), springs d²/k along co-mention edges, and a spring back to each
    # node's radial start (the user→entity edge's share: it keeps the type sectors). A spring's pull
    # is divided by its ends' degrees, so one message naming dozens of entities cannot crush them into
    # a ball. Moves are capped by a temperature that cools to nothing.
    k = min(0.9 * math.sqrt((w - 2 * MARGIN) * (h - 2 * MARGIN) / n), min(w, h) / 8)   # small graphs stay compact
    for it in range(ITERATIONS):
        i, j = _near(pos, 2 * k)                    # repulsion reaches 2k: only the pairs in neighbouring cells
        delta = pos[i] - pos[j]
        d2 = np.maximum((delta ** 2).sum(-1), 0.01)
        push = np.where(d2 < 4 * k * k, k * k / d2, 0.0)
        disp = np.zeros((n, 2))
        for axis in (0, 1):
            disp[:, axis] = np.bincount(i, delta[:, axis] * push, n)
        if len(co):
            dv = pos[ea] - pos[eb]
            pull = dv * (pull_w * np.linalg.norm(dv, axis=1) / k)[:, None]
            for axis in (0, 1):                     # bincount: a fast scatter-add over many edges
                disp[:, axis] += (np.bincount(eb, pull[:, axis], n) - np.bincount(ea, pull[:, axis], n))
        da = anchor - pos
        disp += da * np.linalg.norm(da, axis=1)[:, None] / k
        length = np.maximum(np.linalg.norm(disp, axis=1), 1e-9)
        t = k * (1 - it / ITERATIONS)
        step = disp * (np.minimum(length, t) / length)[:, None]
        step[0] = 0.0
        pos += step
        _clamp(pos, box)

    # Labels go on the side away from the centre; the side is fixed now so clamping cannot flip it.
    right = pos[:, 0] >= cx
    box = _bounds(r, widths, right, w, h)
    _clamp(pos, box)
    _separate(pos, r, box)
    for nd, (x, y) in zip(nodes, pos):
        nd.x, nd.y = float(x), float(y)


_OFFSETS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]


def _near(pos: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j), i ≠ j, of points that may lie within ``reach`` of each other: the pairs in
    the same or touching cells of a grid of that size (spatial hashing). About linear in the points for a
    layout that fills its frame, where comparing all pairs is quadratic; no pair closer than ``reach`` is missed."""
    n = len(pos)
    cells = np.floor(pos / max(reach, 1e-9)).astype(np.int64)
    cells -= cells.min(0)
    span = int(cells[:, 1].max()) + 3              # a row of empty cells between columns: y ± 1 never wraps
    key = cells[:, 0] * span + cells[:, 1]
    order = np.argsort(key, kind="stable")
    sorted_keys = key[order]
    starts_of = np.arange(n)
    out_i, out_j = [], []
    for dx, dy in _OFFSETS:
        target = key + dx * span + dy
        lo = np.searchsorted(sorted_keys, target, "left")
        count = np.searchsorted(sorted_keys, target, "right") - lo
        total = int(count.sum())
        if not total:
            continue
        first = np.cumsum(count) - count            # where each point's run starts in the flat list
        at = np.arange(total) - np.repeat(first - lo, count)
        out_i.append(np.repeat(starts_of, count))
        out_j.append(order[at])
    if not out_i:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    i, j = np.concatenate(out_i), np.concatenate(out_j)
    keep = i != j
    return i[keep], j[keep]


def _separate(pos: np.ndarray, r: np.ndarray, box: tuple[np.ndarray, ...]) -> None:
    """Push overlapping circles apart (the user, pinned, keeps room for its label below it). Two entities can
    overlap only in neighbouring cells of a grid as wide as the largest overlap distance between entities:
    those pairs are compared, and the user (larger, with its label) with every entity."""
    n = len(pos)
    reach = r.copy()
    reach[0] += 1.6 * FONT
    cell = 2 * float(reach[1:].max()) + PAD
    others = np.arange(1, n)
    user = np.zeros(n - 1, dtype=others.dtype)
    # a fixed direction for centres that coincide, so the result stays deterministic
    turn = np.arange(n) * 2.399963
    spread = np.stack([np.cos(turn), np.sin(turn)], 1)
    for _ in range(SEPARATE_PASSES):
        i, j = _near(pos[1:], cell)
        i, j = np.concatenate([i + 1, user, others]), np.concatenate([j + 1, others, user])
        delta = pos[i] - pos[j]
        d = np.sqrt((delta ** 2).sum(-1))
        over = np.maximum(reach[i] + reach[j] + PAD - d, 0.0)
        if not len(over) or over.max() < 0.01:
            return
        hit = over > 0
        i, j, delta, d, over = i[hit], j[hit], delta[hit], d[hit], over[hit]
        same = d < 1e-6
        unit = np.where(same[:, None], spread[i], delta / np.where(same, 1.0, d)[:, None])
        share = np.where(j == 0, 1.0, 0.5)         # the pinned user does not move: the other goes all the way
        push = unit * (over * share)[:, None]
        move = np.zeros((n, 2))
        for axis in (0, 1):
            move[:, axis] = np.bincount(i, push[:, axis], n)
        move[0] = 0.0
        pos += move * 0.6                           # under-relaxed: crowded nodes settle instead of oscillating
        _clamp(pos, box)


# -- the markup -------------------------------------------------------------------------------------

def _num(v: float) -> str:
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _cls(t: str) -> str:
    return "type-" + re.sub(r"[^a-z0-9-]", "-", t.lower())


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _legend(types: list[str], marks: list[str], w: int, h: int) -> tuple[list[tuple[str, str, float, float]], float]:
    """Legend items (kind, key, x, y) in rows along the bottom: a swatch per type ("type"), then a sample
    line per mark in use ("mark"); and the height they take from the layout."""
    items: list[tuple[str, str, float, float]] = []
    x, row = MARGIN, 0
    entries = [("type", t, SWATCH + 4 + len(t) * CHAR_W + 14) for t in types]
    entries += [("mark", m, SAMPLE_W + 4 + len(MARKS[m]) * CHAR_W + 14) for m in marks]
    for kind, key, item_w in entries:
        if x + item_w > w - MARGIN and x > MARGIN:
            x, row = MARGIN, row + 1
        items.append((kind, key, x, float(row)))
        x += item_w
    if not items:
        return [], 0.0
    height = (row + 1) * LEGEND_ROW + 4
    return [(k, key, x, h - height + r * LEGEND_ROW) for k, key, x, r in items], height


def _node_title(n: Node, marks: Sequence[str] = ()) -> str:
    kind = "User" if n.type == "USER" else n.type.capitalize()
    said = list(dict.fromkeys(f"{f.predicate} {f.object}" for f in n.facts))
    text = f"{n.name} ({', '.join([kind, *marks])})"
    if said:
        text += ": " + "; ".join(said[:TITLE_FACTS])
        if len(said) > TITLE_FACTS:
            text += f"; and {len(said) - TITLE_FACTS} more"
    return text


Box = tuple[float, float, float, float]   # x0, y0, x1, y1


def _label_place(n: Node, text: str, cx: float) -> tuple[float, float, str, Box]:
    """Where a node's label goes (beside it, away from the centre; the user's under it) and the box it covers."""
    width = len(text) * CHAR_W
    if n.key == USER:                           # under the centre, where the layout keeps room
        lx, ly, anchor = n.x, n.y + n.r + FONT * 1.1, "middle"
        x0 = lx - width / 2
    elif n.x >= cx:
        lx, ly, anchor = n.x + n.r + LABEL_GAP, n.y + 0.35 * FONT, "start"
        x0 = lx
    else:
        lx, ly, anchor = n.x - n.r - LABEL_GAP, n.y + 0.35 * FONT, "end"
        x0 = lx - width
    return lx, ly, anchor, (x0, ly - FONT, x0 + width, ly + 0.25 * FONT)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


class _Boxes:
    """Boxes kept in a grid of LABEL_CELL cells, so the boxes one box could cover are found without
    looking at every box (spatial hashing)."""

    def __init__(self):
        self.boxes: list[Box] = []
        self.owners: list[int] = []
        self.cells: dict[tuple[int, int], list[int]] = {}

    @staticmethod
    def _cells(box: Box):
        x0, y0 = math.floor(box[0] / LABEL_CELL), math.floor(box[1] / LABEL_CELL)
        x1, y1 = math.floor(box[2] / LABEL_CELL), math.floor(box[3] / LABEL_CELL)
        return ((cx, cy) for cx in range(x0, x1 + 1) for cy in range(y0, y1 + 1))

    def add(self, box: Box, owner: int = -1) -> None:
        self.boxes.append(box)
        self.owners.append(owner)
        for c in self._cells(box):
            self.cells.setdefault(c, []).append(len(self.boxes) - 1)

    def hits(self, box: Box, besides: int = -2) -> bool:
        """Whether ``box`` overlaps a kept box (one kept for owner ``besides`` does not count)."""
        for c in self._cells(box):
            for k in self.cells.get(c, ()):
                if self.owners[k] != besides and _overlap(box, self.boxes[k]):
                    return True
        return False


def _crowded(nodes: list[Node], places: list[tuple[float, float, str, Box]], selected: str | None) -> set[int]:
    """The labels left to hover: placed greedily, the user's and the selected node's first, then by how many
    facts name the node; a label that would cover a label already placed, or another node, waits for hover."""
    circles = _Boxes()
    for j, n in enumerate(nodes):
        circles.add((n.x - n.r, n.y - n.r, n.x + n.r, n.y + n.r), j)
    order = sorted(range(len(nodes)), key=lambda i: (nodes[i].key != USER, nodes[i].key != selected,
                                                     -len(nodes[i].facts), nodes[i].name))
    placed = _Boxes()
    crowded: set[int] = set()
    for i in order:
        box = places[i][3]
        keep = i == 0 or nodes[i].key == selected
        if not keep and (placed.hits(box) or circles.hits(box, besides=i)):
            crowded.add(i)
            continue
        placed.add(box)
    return crowded


def _cross(a: Node, b: Node) -> str:
    """A small × halfway along the visible part of the line from ``a`` to ``b`` (between the circles)."""
    d = max(math.dist((a.x, a.y), (b.x, b.y)), 1e-9)
    ux, uy = (b.x - a.x) / d, (b.y - a.y) / d
    mid = a.r + max(d - a.r - b.r, 0.0) / 2
    x, y = a.x + ux * mid, a.y + uy * mid
    c = CROSS
    return (f'<path class="cross" d="M{_num(x - c)} {_num(y - c)}L{_num(x + c)} {_num(y + c)}'
            f'M{_num(x - c)} {_num(y + c)}L{_num(x + c)} {_num(y - c)}"/>')


def _strike(n: Node) -> str:
    """A slash across a circle: the thing is named, but as what the user is not or does not."""
    k = 0.75 * n.r
    return f'<path class="strike" d="M{_num(n.x - k)} {_num(n.y + k)}L{_num(n.x + k)} {_num(n.y - k)}"/>'


def _edge_classes(e: Edge, selected: str | None) -> str:
    cls = f"edge edge-{e.kind}"
    cls += " negated" if e.negated else ""
    cls += f" state-{e.state}" if e.state != "live" else ""
    return cls + (" highlight" if selected is not None and selected in (e.a, e.b) else "")


def _legend_markup(legend: list[tuple[str, str, float, float]]) -> list[str]:
    out = ['<g class="legend">']
    for kind, key, x, y in legend:
        if kind == "type":
            out.append(f'<g class="legend-item"><rect class="swatch {_cls(key)}" x="{_num(x)}" y="{_num(y + 4)}" '
                       f'width="{_num(SWATCH)}" height="{_num(SWATCH)}" rx="2"/>'
                       f'<text class="legend-label" x="{_num(x + SWATCH + 4)}" y="{_num(y + 4 + SWATCH - 1)}">'
                       f'{escape(key.capitalize())}</text></g>')
            continue
        mid = y + 4 + SWATCH / 2
        cls = "edge edge-fact " + ("negated" if key == "not" else f"state-{key}")
        sample = f'<path class="{cls} sample" d="M{_num(x)} {_num(mid)}H{_num(x + SAMPLE_W)}"/>'
        if key == "not":
            c = CROSS
            cx = x + SAMPLE_W / 2
            sample += (f'<path class="cross" d="M{_num(cx - c)} {_num(mid - c)}L{_num(cx + c)} {_num(mid + c)}'
                       f'M{_num(cx - c)} {_num(mid + c)}L{_num(cx + c)} {_num(mid - c)}"/>')
        out.append(f'<g class="legend-item legend-mark" data-mark="{key}">{sample}'
                   f'<text class="legend-label" x="{_num(x + SAMPLE_W + 4)}" y="{_num(y + 4 + SWATCH - 1)}">'
                   f'{escape(MARKS[key])}</text></g>')
    out.append('</g>')
    return out


def _node_markup(n: Node, text: str, marks: list[str], place: tuple[float, float, str, Box], crowded: bool,
                 selected: bool) -> str:
    """A node: its link, circle (struck through when negated), label (the marks in a tspan) and title."""
    cls = (f"node {_cls(n.type)}" + (" negated" if "not" in marks else "")
           + "".join(f" state-{m}" for m in marks if m != "not") + (" selected" if selected else ""))
    attr = f' href="{escape(n.href)}"' if n.href else ""
    attr += f' class="{cls}" data-key="{escape(n.key)}" data-name="{escape(n.name)}" data-type="{escape(n.type)}"'
    attr += f' data-marks="{" ".join(marks)}"' if marks else ""
    lx, ly, anchor, _ = place
    suffix = _suffix(marks)
    name = text[:len(text) - len(suffix)] if suffix else text
    mark = f'<tspan class="mark">{escape(suffix)}</tspan>' if suffix else ""
    label = (f'<text x="{_num(lx)}" y="{_num(ly)}" text-anchor="{anchor}" '
             f'class="{"label crowded" if crowded else "label"}">{escape(name)}{mark}</text>')
    return (f'<a{attr}><circle cx="{_num(n.x)}" cy="{_num(n.y)}" r="{_num(n.r)}"/>'
            + (_strike(n) if "not" in marks else "") + label + f'<title>{escape(_node_title(n, marks))}</title></a>')


def _svg(nodes: list[Node], edges: list[Edge], labels: list[str], legend: list[tuple[str, str, float, float]],
         selected: str | None, w: int, h: int, total: int = 0, list_href: str = "") -> Markup:
    by_key = {n.key: n for n in nodes}
    marks = {e.b: e.marks for e in edges if e.kind == "fact"}
    drawn = len(nodes) - 1
    note = (f"Showing the {drawn:,} most connected of {total:,} entities"
            + (": see the full list" if list_href else "")) if drawn < total else ""
    shown = f"{drawn:,} of {_plural(total, 'entity', 'entities')}" if note else _plural(drawn, 'entity', 'entities')
    desc = f"{shown}, {_plural(len(edges), 'connection', 'connections')}"
    counts = [(sum(m in ms for ms in marks.values()), m) for m in MARKS]
    said = [f"{n} {'negated' if m == 'not' else m}" for n, m in counts if n]
    desc += (" (" + ", ".join(said) + ")." if said else ".")
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
            f'aria-labelledby="graph-title graph-desc" viewBox="0 0 {w} {h}" width="100%">'),
           '<title id="graph-title">Entity graph</title>',
           f'<desc id="graph-desc">{escape(desc)}</desc>',
           ]
    if note:
        text = (f'<text class="legend-label graph-note" x="{_num(MARGIN)}" y="{_num(MARGIN + FONT)}">'
                f'{escape(note)}</text>')
        out.append(f'<a class="graph-note" href="{escape(list_href)}">{text}</a>' if list_href
                   else f'<g class="graph-note">{text}</g>')
    out.append('<g class="edges">')
    for e in edges:
        a, b = by_key[e.a], by_key[e.b]
        what = ", ".join(e.predicates) if e.kind == "fact" else "mentioned with"
        out.append(f'<line class="{_edge_classes(e, selected)}" data-a="{escape(e.a)}" data-b="{escape(e.b)}" '
                   f'x1="{_num(a.x)}" y1="{_num(a.y)}" x2="{_num(b.x)}" y2="{_num(b.y)}">'
                   f'<title>{escape(f"{a.name} — {what} — {b.name}{_suffix(e.marks)}")}</title></line>')
        if e.negated:
            out.append(_cross(a, b))
    out.append('</g><g class="nodes">')
    places = [_label_place(n, text, nodes[0].x) for n, text in zip(nodes, labels)]
    crowded = _crowded(nodes, places, selected)
    for i, (n, text) in enumerate(zip(nodes, labels)):
        out.append(_node_markup(n, text, marks.get(n.key, []), places[i], i in crowded, n.key == selected))
    out.append('</g>')
    if len(nodes) == 1:
        out.append(f'<text class="empty" x="{_num(nodes[0].x)}" y="{_num(nodes[0].y + nodes[0].r + FONT * 3)}" '
                   f'text-anchor="middle">No entities yet</text>')
    if legend:
        out += _legend_markup(legend)
    out.append('</svg>')
    return Markup("".join(out))
