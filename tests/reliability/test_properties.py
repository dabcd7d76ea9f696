"""Property-based tests (hypothesis): memory tool paths, the rule extractor and the write path on
arbitrary text, and the store's as-of listings against a reference model of the write history.

Every test is bounded (``max_examples``), has no deadline and is derandomised: a run repeats itself.
"""
from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import Memory, timeutil
from kenning.errors import InputError, MemoryToolError
from kenning.extract.parse import ParseExtractor

PROFILE = dict(deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large])
ROOT = "/memories"


# -- a. memory tool paths ----------------------------------------------------------------------

# Pieces an attacker (or a confused model) puts in a path: traversal, encodings of dots and slashes
# (single, double, triple, quadruple, overlong UTF-8), backslashes, NUL and other control bytes.
NASTY = ["..", ".", "", "%2e%2e", "%2E%2e", "%252e%252e", "%25252e%25252e", "%2525252e%2525252e", "%2f", "%252f",
         "%5c", "\\", "..\\..", "\x00", "%00", "\n", "\x7f", "%c0%ae%c0%ae", "\u2025", "\uff0e\uff0e", "．．",
         "memories", "a", "notes.md", "ü", "🙂", "\u202e", " ", "~", "*", "?", "%", "%%", "%zz"]


def _encoded(text: str, rounds: int, upper: bool) -> str:
    """``text`` percent-encoded ``rounds`` times over (every character the first time)."""
    for n in range(rounds):
        text = "".join(f"%{ord(c):02X}" if upper else f"%{ord(c):02x}" for c in text) if n == 0 else \
            text.replace("%", "%25")
    return text


encoded = st.builds(_encoded, st.sampled_from(["..", ".", "/", "\\", "/..", "\x00"]), st.integers(0, 7), st.booleans())
segments = st.one_of(st.sampled_from(NASTY), encoded, st.text(max_size=8))
built = st.builds(lambda head, parts: head + "/".join(parts),
                  st.sampled_from([ROOT + "/", ROOT, "/", "", "//memories/", "/memories/../", "/memories/./",
                                   "/MEMORIES/", "memories/", "/memories%2f", "%2fmemories/", "\\memories\\"]),
                  st.lists(segments, max_size=6))
paths = st.one_of(built, built, encoded.map(lambda e: f"{ROOT}/{e}"), st.text(max_size=40), st.builds(lambda n: ROOT + "/" + "a" * n, st.integers(200, 20_000)),
                  st.none(), st.integers(), st.just(["/memories/x"]))
texts = st.text(max_size=60)


def commands(draw_path=paths):
    return st.one_of(
        st.builds(lambda p, r: {"command": "view", "path": p, **({"view_range": r} if r else {})},
                  draw_path, st.none() | st.lists(st.integers(-2, 5), min_size=2, max_size=2)),
        st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, draw_path, texts),
        st.builds(lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
                  draw_path, texts, texts),
        st.builds(lambda p, line, t: {"command": "insert", "path": p, "insert_line": line, "insert_text": t},
                  draw_path, st.integers(-1, 4), texts),
        st.builds(lambda p: {"command": "delete", "path": p}, draw_path),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, draw_path, draw_path),
    )


def _under_root(path: str) -> bool:
    """Independently of kenning's canonical(): a path strictly inside /memories, no way out."""
    parts = path.split("/")
    return (path.startswith(ROOT + "/") and parts[1] == "memories" and all(parts[2:])
            and not any(p in (".", "..") for p in parts) and posixpath.normpath(path) == path
            and "\\" not in path and not any(ord(c) < 32 or ord(c) == 127 for c in path))


@pytest.fixture
def plain_mem():
    m = Memory(":memory:", embedder=None)
    yield m
    m.close()


@settings(max_examples=150, **PROFILE)
@given(st.lists(commands(), min_size=1, max_size=8))
def test_memory_tool_never_leaves_memories(plain_mem, cmds):
    dataset = f"d{uuid.uuid4().hex[:12]}"
    # A few real files, so that edits, deletes and renames of nasty paths have something to act on.
    plain_mem.memory_tool(dataset, {"command": "create", "path": "/memories/notes.md", "file_text": "a\nb"})
    plain_mem.memory_tool(dataset, {"command": "create", "path": "/memories/a/b.md", "file_text": "x"})
    for cmd in cmds:
        before = {f.path: f.content for f in plain_mem.core.list(dataset)}
        try:
            plain_mem.memory_tool(dataset, cmd)
        except MemoryToolError as exc:
            assert isinstance(exc.text, str) and exc.text
            assert {f.path: f.content for f in plain_mem.core.list(dataset)} == before, "a failed command changed files"
        files = plain_mem.core.list(dataset)
        for f in files:
            assert _under_root(f.path), f"stored core file path {f.path!r} after {cmd!r}"
            # What the listing names, the tool can address: it reads the same file back.
            shown = plain_mem.memory_tool(dataset, {"command": "view", "path": f.path})
            assert shown.startswith(f"Here's the content of {f.path} with line numbers:"), (f.path, shown[:200])
        for f in files:  # a file's name is never shadowed by a directory of the same name
            assert not any(g.path.startswith(f.path + "/") for g in files), f.path


@settings(max_examples=300, **PROFILE)
@given(paths)
def test_canonical_paths_stay_inside(path):
    from kenning.core_files import canonical

    try:
        out = canonical(path)
    except MemoryToolError:
        return
    assert out == ROOT or _under_root(out), (path, out)
    decoded = out
    for _ in range(8):  # what a later consumer that percent-decodes again would see
        decoded = unquote(decoded)
    assert ".." not in decoded.split("/"), (path, out, decoded)


# -- b. the rule extractor and the write path on arbitrary text -------------------------------------

# Any code point: control characters, NUL, RTL marks, combining marks, emoji, CJK, and half surrogate
# pairs too (a Python str may hold one, though no UTF-8 text can).
UNICODE = st.text(st.characters(exclude_categories=()), max_size=400)
TEMPLATES = ["I live in {}.", "My name is {}", "I like {} and {}", "I'm allergic to {}!", "I work at {} as a {}.",
             "I used to live in {}", "I no longer like {}", "I moved to {} last month", "I was born on {}",
             "My favorite color is {}", "{} {}", "I love {}, {} and {}.", "I am {} years old",
             "I live in {} since {}", "I don't eat {}", "I'm moving to {} in {}."]
words = st.one_of(UNICODE.map(lambda s: s[:60]), st.sampled_from(["Berlin", "\u202eLisbon\u202c", "🙂🙂", "ß", "İstanbul",
                                                                  "September", "2019", "last year", "\x00", "\u0301",
                                                                  "", " ", "..", "a" * 5000]))
TEXT = st.one_of(
    UNICODE,
    st.builds(lambda t, ws: t.format(*(ws + [""] * 3)[:t.count("{}")]), st.sampled_from(TEMPLATES),
              st.lists(words, max_size=3)),
    st.builds(lambda w, n: (w + " ") * n, st.text(min_size=1, max_size=12), st.integers(1, 3_000)),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(1_000, 60_000)),  # one huge "word"
    st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=20).map(lambda ts: " ".join(ts).replace("{}", "X")),
)
NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
# Message times: mostly now, else anywhere in the calendar ("last year" said in the year 1 has no date).
TIMES = st.one_of(st.just(NOW), st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31),
                                             timezones=st.just(timezone.utc)))
DATED = ["last year", "last month", "yesterday", "tomorrow", "next year", "in December", "since March 5th",
         "3000 years ago", "for 99999 years", "in 10000 years", "last Monday", "next July", "in 2019", "since 1990"]


@settings(max_examples=400, **PROFILE)
@given(st.one_of(TEXT, st.builds(lambda d, w: f"I moved to {w} {d}.", st.sampled_from(DATED), words)), TIMES)
def test_rule_extractor_never_raises_and_only_speaks_of_the_user(text, at):
    for cand in ParseExtractor().extract(text, at=at, context=[], known_entities=[]):
        assert cand.subject == "user", cand


@settings(max_examples=150, **PROFILE)
@given(st.one_of(TEXT, st.builds(lambda n: "I live in Oslo. " * n, st.integers(6_000, 6_300)),
                 st.builds(lambda d: f"I moved to Rome {d}.", st.sampled_from(DATED))),
       st.one_of(st.just(None), TIMES.filter(lambda t: t <= NOW)))
def test_add_raises_only_input_errors_and_stores_only_user_facts(plain_mem, text, at):
    dataset = f"d{uuid.uuid4().hex[:12]}"
    try:
        result = plain_mem.add(text, dataset, at=at)
    except InputError as exc:
        if len(text) > plain_mem.settings.max_text_chars:
            assert exc.code == "TOO_LARGE", exc
        elif not text.strip():
            assert exc.code == "EMPTY_TEXT", exc
        else:
            assert any(0xD800 <= ord(c) <= 0xDFFF for c in text) and "surrogate" in str(exc), exc
        assert plain_mem.datasets(q=dataset).total == 0, "an add that failed kept something"
        return
    assert len(text) <= plain_mem.settings.max_text_chars and text.strip()
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    assert result.status in ("stored", "skipped")
    for fact in plain_mem.list_facts(dataset, include_invalidated=True, limit=100).facts:
        assert fact.subject == "user"
        assert 0 < len(fact.object) <= 500 or fact.object == ""
        assert fact.predicate == fact.predicate.lower().strip() and fact.predicate


# -- c. the store's as-of listings against a reference model -------------------------------------

CITIES = ["Berlin", "Lisbon", "Paris", "Oslo"]          # "lives in": one value at a time
HOBBIES = ["chess", "jazz", "hiking"]                   # "likes": many values
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


class Clock:
    """The wall clock every part of kenning reads (timeutil.now), advanced by the test."""

    def __init__(self):
        self.t = T0

    def now(self) -> datetime:
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(timeutil, "now", c.now)
    return c


@dataclass
class Row:
    """The model's fact: what the write history says, live on [start, end)."""
    fact_id: str
    predicate: str
    object: str
    start: datetime
    end: datetime | None = None
    deleted: bool = False

    def live(self, t: datetime) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


ADD = st.tuples(st.just("add"), st.sampled_from(["lives in", "likes"]), st.integers(0, 3), st.integers(1, 72))
DELETE = st.tuples(st.just("delete"), st.sampled_from(["lives in", "likes"]), st.integers(0, 5), st.integers(1, 72))
IN_ORDER = st.lists(st.one_of(ADD, ADD, DELETE), min_size=3, max_size=16)


def _say(predicate: str, i: int) -> tuple[str, str]:
    value = CITIES[i % len(CITIES)] if predicate == "lives in" else HOBBIES[i % len(HOBBIES)]
    return (f"I live in {value}." if predicate == "lives in" else f"I like {value}."), value.lower()


def _listed(mem: Memory, dataset: str, t: datetime | None = None) -> list[tuple[str, str, str]]:
    page = mem.list_facts(dataset, as_of=t, limit=100)
    assert page.total == len(page.facts)
    return sorted((f.predicate, f.object, f.fact_id) for f in page.facts)


def _check_in_order(mem: Memory, clock: Clock, ops) -> None:
    """Messages said when they happen (message time = the clock), deletes at the clock: the model is
    the plain reading of the history. A one-value slot holds the latest value from its message on;
    the value it replaces ends there; a repeat of a live value changes nothing; many values coexist;
    a delete ends a fact at that moment; nothing else ends anything. Every instant, before, between
    and after the writes, must list exactly the model's live facts, ids included."""
    dataset = f"d{uuid.uuid4().hex[:12]}"
    clock.t = T0
    rows: list[Row] = []
    times = [T0 - timedelta(days=1)]
    for op, predicate, i, hours in ops:
        clock.t += timedelta(hours=hours)
        times.append(clock.t)
        live = [r for r in rows if r.predicate == predicate and r.end is None]
        if op == "delete":
            if not live:
                continue
            victim = live[i % len(live)]
            mem.delete_fact(dataset, victim.fact_id)
            victim.end, victim.deleted = clock.t, True
            continue
        text, value = _say(predicate, i)
        result = mem.add(text, dataset, at=clock.t)
        same = [r for r in live if r.object == value]
        if same:  # a repeat of a live value: deduplicated against it
            assert result.status == "skipped" and result.reason == "duplicate", result
            assert result.memory_ids == [same[0].fact_id]
            continue
        assert result.status == "stored" and len(result.memory_ids) == 1, result
        if predicate == "lives in":
            for r in live:  # one value: the new one supersedes the live one
                r.end = clock.t
            assert result.supersedes == [r.fact_id for r in live]
        rows.append(Row(result.memory_ids[0], predicate, value, clock.t))
    probes = sorted({*times, *(t + timedelta(minutes=30) for t in times), clock.t + timedelta(days=3650)})
    for t in probes:
        want = sorted((r.predicate, r.object, r.fact_id) for r in rows if r.live(t))
        assert _listed(mem, dataset, t) == want, f"as of {t}"
    assert _listed(mem, dataset) == sorted((r.predicate, r.object, r.fact_id) for r in rows if r.end is None)


# Late messages: each add's message time lies up to 200 hours (0: none) before the clock.
LATE_ADD = st.tuples(st.just("add"), st.sampled_from(["lives in", "lives in", "likes"]), st.integers(0, 3),
                     st.integers(1, 48), st.sampled_from([0, 0, 20, 50, 90, 150]) | st.integers(0, 200))
LATE_DELETE = st.tuples(st.just("delete"), st.sampled_from(["lives in", "likes"]), st.integers(0, 5),
                        st.integers(1, 72), st.just(0))
OUT_OF_ORDER = st.lists(st.one_of(LATE_ADD, LATE_ADD, LATE_ADD, LATE_DELETE), min_size=5, max_size=16)


@dataclass
class Said:
    """A message the model keeps: said at ``time``; ``deleted`` when its fact was deleted."""
    time: datetime
    predicate: str
    value: str
    deleted: datetime | None = None


def _check_out_of_order(mem: Memory, clock: Clock, ops) -> None:
    """Messages may arrive late (older messages imported, or queued behind newer ones). The model:

    - a message repeating a value that is live now (for a one-value slot: the current value) is
      deduplicated, as documented ("an exact repeat returns the existing id"): it adds nothing to the
      history, whenever it was said;
    - every other message holds from the time it was said; in a one-value slot, until the next
      message in time order (never in arrival order), so as of any t the slot holds the value of the
      latest such message said at or before t; in a many-value slot, until it is deleted;
    - a delete ends its fact at that moment.

    As of every instant (each message and delete, just before, half an hour after, and now) the listing
    must hold exactly the model's values, never two of a one-value slot, never a deleted fact after its
    deletion.

    A delete is stamped with the wall clock while a message carries the time it was said; a message
    said before a delete but stored after it is outside this model, so a late message here is never
    older than the last delete (kenning lists both the deleted value and the late one between the two
    times). Deduplication is lossy by design, and the model follows it: a repeat's time is not kept,
    so a late "Oslo" from 10:01 that arrives after "Berlin" at 10:00 and its repeat at 10:02 holds on
    from 10:01 (the current value becomes Oslo), and a late repeat of the current value does not
    extend it backwards ("Oslo" in January, "Berlin" in March, a late "Berlin" from February: as of
    February the slot still shows Oslo)."""
    dataset = f"d{uuid.uuid4().hex[:12]}"
    clock.t = T0
    said: list[Said] = []
    deleted: dict[str, datetime] = {}
    floor = T0  # a late message is said no earlier than the last delete
    times = [T0 - timedelta(days=1)]

    def current(predicate: str) -> list[Said]:
        open_ = [m for m in said if m.predicate == predicate and m.deleted is None]
        if predicate == "lives in":
            latest = max((m for m in said if m.predicate == predicate), key=lambda m: m.time, default=None)
            return [latest] if latest is not None and latest.deleted is None else []
        return open_

    for n, (op, predicate, i, hours, lag) in enumerate(ops):
        clock.t += timedelta(hours=hours)
        if op == "delete":
            live = [f for f in mem.list_facts(dataset, limit=100).facts if f.predicate == predicate]
            assert sorted(f.object for f in live) == sorted(m.value for m in current(predicate))
            if live:
                victim = live[i % len(live)]
                mem.delete_fact(dataset, victim.fact_id)
                deleted[victim.fact_id] = floor = clock.t
                next(m for m in current(predicate) if m.value == victim.object).deleted = clock.t
                times.append(clock.t)
            continue
        text, value = _say(predicate, i)
        at = min(max(clock.t - timedelta(hours=lag), floor) + timedelta(microseconds=n), clock.t)  # distinct times
        live = current(predicate)
        same = [m for m in live if m.value == value]
        result = mem.add(text, dataset, at=at)
        times.append(at)
        if same:
            assert result.reason == "duplicate", (at, value, result)
            continue
        assert result.status == "stored", (at, value, result)
        said.append(Said(at, predicate, value))

    def model(t: datetime) -> list[tuple[str, str]]:
        out = [("likes", m.value) for m in said if m.predicate == "likes" and m.time <= t
               and (m.deleted is None or t < m.deleted)]
        latest = max((m for m in said if m.predicate == "lives in" and m.time <= t), key=lambda m: m.time, default=None)
        if latest is not None and (latest.deleted is None or t < latest.deleted):
            out.append(("lives in", latest.value))
        return sorted(out)

    probes = sorted({*times, *(t + timedelta(minutes=30) for t in times), *(t - timedelta(microseconds=1) for t in times)})
    for t in probes:
        listed = mem.list_facts(dataset, as_of=t, limit=100).facts
        assert sorted((f.predicate, f.object) for f in listed) == model(t), f"as of {t}"
        for f in listed:
            assert f.fact_id not in deleted or t < deleted[f.fact_id], f"deleted {f.object} listed as of {t}"
    now = sorted((f.predicate, f.object) for f in mem.list_facts(dataset, limit=100).facts)
    assert now == sorted((m.predicate, m.value) for p in ("likes", "lives in") for m in current(p))


@settings(max_examples=150, **PROFILE)
@given(IN_ORDER)
def test_as_of_listings_match_the_history_sqlite(plain_mem, clock, ops):
    _check_in_order(plain_mem, clock, ops)


@settings(max_examples=150, **PROFILE)
@given(OUT_OF_ORDER)
def test_as_of_listings_with_late_messages_sqlite(plain_mem, clock, ops):
    _check_out_of_order(plain_mem, clock, ops)


@pytest.fixture
def pg_mem(pg_url):
    m = Memory(pg_url, embedder=None)
    yield m
    m.close()


@pytest.mark.postgres
@settings(max_examples=60, **PROFILE)
@given(st.one_of(IN_ORDER.map(lambda ops: ("in order", ops)), OUT_OF_ORDER.map(lambda ops: ("late", ops))))
def test_as_of_listings_postgres(pg_mem, clock, case):
    kind, ops = case
    (_check_in_order if kind == "in order" else _check_out_of_order)(pg_mem, clock, ops)
