"""A person's facts on a horizontal time axis, as server-rendered SVG.

The page must read without JavaScript and under a Content-Security-Policy that forbids inline
styles, so the chart is plain SVG markup: geometry in attributes, colours left to the stylesheet
through classes, every text escaped. Each fact is a bar from ``valid_at`` to where it stopped
holding; a change of value ("lives in berlin" then "lives in lisbon") reads as one row whose bars
touch, because both ends come from the same time-to-x mapping. Events are points, not spans.

A negation ("does not eat · fish") is drawn as a pale bar with a red border whose label reads "not
fish"; a fact that has ended (its ``valid_until`` passed: a habit given up) has an end cap and the word
"ended" after it. ``Timeline.split`` gives the same facts as a vertical list around the as-of time, for
screens too narrow for the chart.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from markupsafe import Markup, escape

from ...model import Fact
from ...predicates import is_negated
from ...timeutil import to_utc

GUTTER = 160.0      # lane labels live left of the plot
RIGHT_PAD = 12.0    # room after the plot for an open bar's end and the last tick label
HEADER = 44.0       # tick labels (first row) and the cursor label (second row)
LANE_H = 26.0
BAR_H = 18.0
CHAR_W = 6.5        # the estimated width of one character at font-size 12
MARK_R = 6.0        # an event diamond's half-size
MIN_W = 2.0         # a fact shorter than this still shows
EMPTY_H = 80.0

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
EVENTS = "events"
SVG_NS = "http://www.w3.org/2000/svg"


@dataclass
class Bar:
    """One fact's span as drawn (for an event, ``x`` is the marker's centre and ``width`` 0)."""
    fact: Fact
    start: datetime
    end: datetime | None     # None: still open (drawn to the right edge with an open end)
    lane: int                # row index in the chart
    x: float
    width: float             # pixel geometry inside the SVG's user units
    event: bool              # kind == "event": drawn as a point marker at start, not a bar
    state: str = "live"      # the fact's state now: live, future, ended or superseded
    negated: bool = False    # its predicate says the user is not / does not (kenning.predicates.is_negated)

    @property
    def marks(self) -> list[str]:
        """The words that mark it beside its value: "not", then its state unless live (an event: only "not")."""
        return (["not"] if self.negated else []) + ([self.state] if self.state != "live" and not self.event else [])


@dataclass
class Timeline:
    svg: Markup              # the whole <svg>…</svg>, every text escaped
    bars: list[Bar]
    lanes: list[str]         # the label of each lane, top to bottom ("" for a predicate's extra lanes)
    start: datetime
    end: datetime            # the axis range
    cursor: datetime | None = None   # the as-of time the chart's line marks

    def split(self) -> tuple[list[Bar], list[Bar]]:
        """The facts in time order, parted at the as-of time: what began by then, and what begins after."""
        ordered = sorted(self.bars, key=lambda b: (b.start, b.lane, b.fact.fact_id))
        at = self.cursor or self.end
        return [b for b in ordered if b.start <= at], [b for b in ordered if b.start > at]


def build_timeline(facts: list[Fact], *, now: datetime, cursor: datetime | None = None,
                   href: Callable[[Fact], str] = lambda f: f"#fact-{f.fact_id}",
                   label: Callable[[Fact], str] = lambda f: f.object,
                   width: int = 960) -> Timeline:
    """Lay out ``facts`` (deleted ones are skipped) and draw them, the as-of ``cursor`` included."""
    now = to_utc(now)
    cursor = now if cursor is None else to_utc(cursor)
    width = max(int(width), int(GUTTER + RIGHT_PAD) + 100)
    by_id = {f.fact_id: f for f in facts}
    shown = sorted((f for f in facts if not (f.invalid_at is not None and f.superseded_by is None)),
                   key=lambda f: (to_utc(f.valid_at), f.predicate, f.fact_id))
    if not shown:
        return _empty(now, width)

    spans = [(f, to_utc(f.valid_at) if f.start_known else None, _end(f, by_id)) for f in shown]
    # The cursor widens the axis too: an as-of time before the first fact must still show. A fact whose start
    # nobody said is drawn from the axis's left edge (it held for some time before its end).
    lo = min([cursor] + [s for _, s, _ in spans if s is not None]
             + [e - timedelta(days=30) for _, s, e in spans if s is None and e is not None])
    spans = [(f, s if s is not None else lo, e) for f, s, e in spans]
    hi = max([now, cursor] + [s for _, s, _ in spans] + [e for _, _, e in spans if e is not None])
    data_lo, data_hi = lo, hi
    pad = (hi - lo) * 0.03 if hi > lo else timedelta(days=15)
    lo, hi = _shift(lo, -pad), _shift(hi, pad)
    right = float(width) - RIGHT_PAD
    hi = _room_for_open(spans, label, lo, hi, right - GUTTER)
    total = (hi - lo).total_seconds()

    def x_of(t: datetime) -> float:
        # One mapping, rounded once: a bar that ends where the next begins shares its x exactly.
        return round(GUTTER + (t - lo).total_seconds() / total * (right - GUTTER), 2)

    bars, lanes = _lay_out(spans, x_of, right)
    for b in bars:
        b.state, b.negated = b.fact.state_at(now), is_negated(b.fact.predicate)
    height = HEADER + LANE_H * len(lanes) + 6.0
    body = [_lane_rows(lanes, width), _axis(lo, hi, x_of, width, height)]
    nxt, prev = {}, None      # a label after a mark or a bar's end may run up to the next one in its lane
    for b in bars:            # bars are sorted by lane, then start (so by x within a lane)
        if prev is not None and prev.lane == b.lane:
            nxt[id(prev)] = b.x
        prev = b
    body += [_draw_bar(b, nxt.get(id(b)), now, href, label, right) for b in bars]
    body.append(_cursor(cursor, now, x_of, width, height))
    n = len(shown)
    marked = [(sum(b.negated for b in bars), "negated"),
              (sum(b.state == "ended" and not b.event for b in bars), "ended")]
    said = ", ".join(f"{k} {word}" for k, word in marked if k)
    desc = (f"{n} fact{'s' if n != 1 else ''} over {_date(data_lo)} – {_date(data_hi)}, "
            f"in {len(lanes)} row{'s' if len(lanes) != 1 else ''}{f' ({said})' if said else ''}; "
            f"as of {_date(cursor)}.")
    return Timeline(svg=_root(width, height, desc, body), bars=bars, lanes=lanes, start=lo, end=hi, cursor=cursor)


# -- spans and lanes -----------------------------------------------------------------------------------

def _room_for_open(spans, label, lo: datetime, hi: datetime, plot_w: float) -> datetime:
    """The axis's end, moved right just enough that the open bar starting last (a plan's future value:
    "lives in · portland" from next year) is wide enough for its name, not a sliver of padding."""
    opens = [(s, f) for f, s, e in spans if e is None]
    if not opens or hi <= lo:
        return hi
    start, f = max(opens, key=lambda o: o[0])
    r = min((len(str(label(f))) + (4 if is_negated(f.predicate) else 0)) * CHAR_W + 12, plot_w / 4) / plot_w
    if start <= lo or (hi - start) >= (hi - lo) * r:
        return hi
    return max(hi, _shift(start, (start - lo) * (r / (1 - r))))


def _end(f: Fact, by_id: dict[str, Fact]) -> datetime | None:
    """Where a fact stopped holding: its own end, else where its replacement began, else open."""
    start = to_utc(f.valid_at)
    if f.valid_until is not None:
        end = to_utc(f.valid_until)
    elif f.superseded_by is not None:
        nxt = by_id.get(f.superseded_by)
        end = to_utc(nxt.valid_at) if nxt is not None else to_utc(f.invalid_at)
    else:
        return None
    return None if end is None else max(end, start)


def _shift(t: datetime, delta: timedelta) -> datetime:
    """``t + delta``, held inside the years datetime can hold (facts may sit at year 1 or 9999)."""
    try:
        return t + delta
    except OverflowError:
        return datetime.max.replace(tzinfo=timezone.utc) if delta > timedelta(0) else \
            datetime.min.replace(tzinfo=timezone.utc)


def _pack(items: list[tuple]) -> list[int]:
    """Interval partitioning, first fit over items sorted by start: as few lanes as possible.

    Each item is ``(lo, hi)`` with ``hi`` None for open; touching (hi == next lo) shares a lane.
    """
    ends: list = []
    out = []
    for lo, hi in items:
        for i, e in enumerate(ends):
            if e is not None and e <= lo:
                ends[i] = hi
                out.append(i)
                break
        else:
            ends.append(hi)
            out.append(len(ends) - 1)
    return out


def _lay_out(spans, x_of, right: float) -> tuple[list[Bar], list[str]]:
    """Lanes per predicate (in order of first appearance), then the events lanes last."""
    groups: dict[str, list] = {}
    events = []
    for f, s, e in spans:   # spans are sorted by start, so groups keep first-valid_at order
        if f.kind == "event":
            events.append((f, s))
        else:
            groups.setdefault(f.predicate, []).append((f, s, e))
    bars: list[Bar] = []
    lanes: list[str] = []
    for predicate, items in groups.items():
        items.sort(key=lambda i: (i[1], i[2] is None, i[2] or i[1], i[0].fact_id))
        base = len(lanes)
        for (f, s, e), lane in zip(items, _pack([(s, e) for _, s, e in items])):
            x = x_of(s)
            w = max(round((x_of(e) if e is not None else right) - x, 2), MIN_W)
            bars.append(Bar(f, s, e, base + lane, x, w, False))
            while len(lanes) <= base + lane:
                lanes.append(predicate if len(lanes) == base else "")
    if events:
        events.sort(key=lambda i: (i[1], i[0].fact_id))
        xs = [x_of(s) for _, s in events]
        base = len(lanes)
        reach = MARK_R + 1.0    # markers a few units apart would overlap: each is a short interval
        for (f, s), x, lane in zip(events, xs, _pack([(x - reach, x + reach) for x in xs])):
            bars.append(Bar(f, s, s, base + lane, x, 0.0, True))
            while len(lanes) <= base + lane:
                lanes.append(EVENTS if len(lanes) == base else "")
    bars.sort(key=lambda b: (b.lane, b.start, b.fact.fact_id))
    return bars, lanes


# -- drawing -------------------------------------------------------------------------------------------

def _num(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _attrs(pairs) -> str:
    out = []
    for k, v in pairs:
        if isinstance(v, float):
            v = _num(v)
        out.append(f' {k}="{escape(str(v))}"')
    return "".join(out)


def _el(tag: str, pairs, inner: str | None = None) -> str:
    return f"<{tag}{_attrs(pairs)}/>" if inner is None else f"<{tag}{_attrs(pairs)}>{inner}</{tag}>"


def _iso(t: datetime | None) -> str:
    return "" if t is None else to_utc(t).replace(tzinfo=None).isoformat() + "Z"


def _date(t: datetime) -> str:
    t = to_utc(t)
    text = f"{t.day} {MONTHS[t.month - 1]} {t.year}"
    return text if (t.hour, t.minute) == (0, 0) else f"{text}, {t:%H:%M}"


def _fit(text: str, room: float) -> str:
    """The text, shortened with an ellipsis to fit ``room`` units, or "" when too little fits."""
    n = int(room // CHAR_W)
    if len(text) <= n:
        return text
    return text[: n - 1].rstrip() + "…" if n >= 4 else ""


def _kind_class(kind: str) -> str:
    return "kind-" + (re.sub(r"[^a-z0-9_-]+", "-", kind.lower()).strip("-") or "other")


def _lane_top(lane: int) -> float:
    return HEADER + lane * LANE_H


def _lane_rows(lanes: list[str], width: int) -> str:
    """Row backgrounds (alternating per predicate group, so one slot's lanes read as one) and labels."""
    out, group = [], -1
    for i, name in enumerate(lanes):
        group += 1 if name else 0
        y = _lane_top(i)
        out.append(_el("rect", [("class", "lane alt" if group % 2 else "lane"), ("x", 0.0), ("y", y),
                                ("width", float(width)), ("height", LANE_H)]))
        if name:
            shown = _fit(name, GUTTER - 16) or name[:1] + "…"
            tip = _el("title", [], escape(name)) if shown != name else ""
            out.append(_el("text", [("class", "lane-label"), ("x", 8.0), ("y", y + LANE_H / 2 + 4)],
                           tip + str(escape(shown))))
    return "".join(out)


def _ticks(lo: datetime, hi: datetime, plot_w: float) -> list[tuple[datetime, str]]:
    """Ticks at calendar boundaries; the unit follows the span, the step keeps labels apart."""
    days = (hi - lo).total_seconds() / 86400

    def calendar_days():    # midnights inside [lo, hi], by ordinal: no date arithmetic to overflow
        for o in range(lo.toordinal(), hi.toordinal() + 1):
            d = datetime.fromordinal(o).replace(tzinfo=timezone.utc)
            if lo <= d <= hi:
                yield o, d

    def day_ticks(step: int):
        for o, d in calendar_days():
            if o % step == 0:
                yield d, f"{d.day} {MONTHS[d.month - 1]}"

    def week_ticks(step: int):
        for o, d in calendar_days():
            if d.weekday() == 0 and (o // 7) % step == 0:    # Mondays
                yield d, f"{d.day} {MONTHS[d.month - 1]}"

    def month_ticks(step: int):
        y, m = lo.year, lo.month
        while (y, m) <= (hi.year, hi.month):
            d = datetime(y, m, 1, tzinfo=timezone.utc)
            if d >= lo and (m - 1) % step == 0:
                yield d, f"{MONTHS[m - 1]} {y}"
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)

    def year_ticks(step: int):
        for y in range(lo.year, min(hi.year, 9999) + 1):
            d = datetime(y, 1, 1, tzinfo=timezone.utc)
            if d >= lo and y % step == 0:
                yield d, str(y)

    if days < 21:
        make, steps, unit = day_ticks, (1, 2, 3, 7, 14), 1.0
    elif days < 120:
        make, steps, unit = week_ticks, (1, 2, 4, 8), 7.0
    elif days < 1000:     # up to about two and a half years: months say more than three year marks
        make, steps, unit = month_ticks, (1, 2, 3, 6, 12), 30.4
    else:
        make, steps, unit = year_ticks, (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000), 365.25
    widest = {1.0: 6, 7.0: 6, 30.4: 8}.get(unit, 4) * CHAR_W + 12   # "13 Sep", "Sep 2026", "2027"
    for step in steps:
        if plot_w * step * unit / days >= widest:
            break
    return list(make(step))


def _axis(lo, hi, x_of, width: int, height: float) -> str:
    """Grid lines at each tick; a label only where it clears the one before and the edges."""
    out = [_el("line", [("class", "axis"), ("x1", GUTTER), ("x2", float(width) - RIGHT_PAD),
                        ("y1", HEADER), ("y2", HEADER)])]
    last_right = float("-inf")
    for at, text in _ticks(lo, hi, float(width) - RIGHT_PAD - GUTTER):
        x = x_of(at)
        out.append(_el("line", [("class", "tick"), ("data-at", _iso(at)), ("x1", x), ("x2", x),
                                ("y1", HEADER - 4), ("y2", height)]))
        half = len(text) * CHAR_W / 2
        if x - half >= max(last_right + 6, GUTTER / 2) and x + half <= width:
            out.append(_el("text", [("class", "tick-label"), ("data-at", _iso(at)), ("x", x), ("y", 14.0),
                                    ("text-anchor", "middle")], str(escape(text))))
            last_right = x + half
    return "".join(out)


def _draw_bar(b: Bar, next_x: float | None, now: datetime, href, label, right: float) -> str:
    f = b.fact
    name = str(label(f))
    shown = f"not {name}" if b.negated else name
    top = _lane_top(b.lane)
    future = b.start > now
    known = f.start_known   # a start nobody said: drawn from the axis's edge, never given a date
    data = [("data-fact-id", f.fact_id), ("data-predicate", f.predicate), ("data-object", f.object),
            ("data-start", _iso(b.start) if known else ""), ("data-end", _iso(b.end))]
    negated = ["negated"] if b.negated else []
    if b.event:
        cy = top + LANE_H / 2
        x, r = b.x, MARK_R
        d = (f"M{_num(x)} {_num(cy - r)}L{_num(x + r)} {_num(cy)}L{_num(x)} {_num(cy + r)}"
             f"L{_num(x - r)} {_num(cy)}Z")
        tip = _el("title", [], escape(f"{f.predicate}: {name} ({_date(b.start)})"))
        shape = _el("path", [("class", " ".join(["event", _kind_class(f.kind)] + (["future"] if future else [])
                                                + negated))] + data + [("d", d)], tip)
        # A label fits up to the next marker in the same lane, or the plot's edge.
        room = (next_x - r - 4 if next_x is not None else right) - (x + r + 3)
        text = _fit(shown, room)
        if text:
            shape += _el("text", [("class", "event-label"), ("x", x + r + 3), ("y", cy + 4)], str(escape(text)))
        return _el("a", [("href", href(f))], shape)
    ended = b.state == "ended"
    classes = ["bar", _kind_class(f.kind)]
    classes += ["future"] if future else []
    classes += ["open"] if b.end is None else []
    classes += ["superseded"] if f.superseded_by and f.invalid_at is not None else []   # replaced, not merely ending
    classes += ["ended"] if ended else []
    classes += negated
    classes += [] if known else ["unknown-start"]
    until = _date(b.end) if b.end is not None else "open"
    tip = _el("title", [], escape(f"{f.predicate}: {name} ({_date(b.start) if known else 'since an unknown date'} – "
                                   f"{until}{', ended' if ended else ''})"))
    shape = _el("rect", [("class", " ".join(classes))] + data
                + [("x", b.x), ("y", top + (LANE_H - BAR_H) / 2), ("width", b.width), ("height", BAR_H),
                   ("rx", "3")], tip)
    end_x = b.x + b.width
    # "ended" goes after the bar where the lane has room before its next bar, else inside after the value
    after = ended and (next_x if next_x is not None else right) - end_x - 4 >= len("ended") * CHAR_W
    inside = f"{shown} (ended)" if ended and not after and len(shown) + 8 <= (b.width - 8) // CHAR_W else shown
    text = _fit(inside, b.width - 8)
    if text:
        shape += _el("text", [("class", "bar-label"), ("x", b.x + 4), ("y", top + LANE_H / 2 + 4)],
                     str(escape(text)))
    if ended:
        shape += _el("line", [("class", "end-cap"), ("x1", end_x), ("x2", end_x), ("y1", top + 2.0),
                              ("y2", top + LANE_H - 2.0)])
        if after:
            shape += _el("text", [("class", "end-label"), ("x", end_x + 4), ("y", top + LANE_H / 2 + 4)], "ended")
    return _el("a", [("href", href(f))], shape)


def _cursor(cursor: datetime, now: datetime, x_of, width: int, height: float) -> str:
    """The as-of line, labelled in the header's second row; a plain "now" line when they differ."""
    out = ""
    if cursor != now:
        x = x_of(now)
        out += _el("line", [("class", "now"), ("data-at", _iso(now)), ("x1", x), ("x2", x),
                            ("y1", HEADER), ("y2", height)])
    x = x_of(cursor)
    text = f"as of {_date(cursor)}"
    w = len(text) * CHAR_W
    anchor = "end" if x + w / 2 > width else "start" if x - w / 2 < GUTTER / 2 else "middle"
    out += _el("line", [("id", "as-of-cursor"), ("class", "cursor"), ("data-at", _iso(cursor)),
                        ("x1", x), ("x2", x), ("y1", HEADER - 8), ("y2", height)])
    out += _el("text", [("class", "cursor-label"), ("x", x), ("y", HEADER - 12), ("text-anchor", anchor)],
               str(escape(text)))
    return out


def _root(width: int, height: float, desc: str, body: list[str]) -> Markup:
    head = (_el("title", [("id", "timeline-title")], "Timeline of facts")
            + _el("desc", [("id", "timeline-desc")], str(escape(desc))))
    return Markup(_el("svg", [("xmlns", SVG_NS), ("class", "timeline"), ("role", "img"),
                              ("aria-labelledby", "timeline-title timeline-desc"),
                              ("viewBox", f"0 0 {width} {_num(height)}"), ("width", "100%"),
                              ("font-size", "12")], head + "".join(body)))


def _empty(now: datetime, width: int) -> Timeline:
    """Still a valid chart, so the page's layout and its accessible name stay the same."""
    text = _el("text", [("class", "empty"), ("x", width / 2), ("y", EMPTY_H / 2 + 4), ("text-anchor", "middle")],
               "Nothing to show yet")
    svg = _root(width, EMPTY_H, "No facts to show.", [text])
    return Timeline(svg=svg, bars=[], lanes=[], start=now - timedelta(days=15), end=now + timedelta(days=15))
