"""Case format and checks shared by the offline extractor's development sentence suites
(``bench/extract_dev_suites.py`` reports them; development data, not a test: the rule extractor was
written against them).

``C(id, text, has=[(pred, obj)], nothing=True, lacks=…, not_live=…, ends=…,
negated=…, near={obj: (iso, days)}, future=…, count=…, hedged=…)``;
see sentences.py's docstring for what each key means.
"""
from __future__ import annotations

from datetime import datetime, timezone

from typing import NamedTuple

from kenning.predicates import PredicateRegistry, normalise

# Thursday 20 August 2026, 10:00 UTC: the default message time.
AT = datetime(2026, 8, 20, 10, 0, tzinfo=timezone.utc)
NEGATION = ("not ", "never", "n't", "dislikes", "no longer")


def at(iso: str) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=timezone.utc)


class Case(NamedTuple):
    id: str
    text: str
    expect: dict


class Pair(NamedTuple):
    """Two ways of saying one kind of thing: both must land in one one-value slot."""
    first: str
    second: str
    predicate: str | None
    id: str


def C(id_, text, **expect) -> Case:
    return Case(id_, text, expect)


def P(first: str, second: str, predicate: str | None, id: str) -> Pair:
    return Pair(first, second, predicate, id)


def _norm(s: str | None) -> str:
    return (s or "").lower()


def _pred_ok(want, pred: str) -> bool:
    if want is None:
        return True
    options = want if isinstance(want, tuple) else (want,)
    return any(_norm(o) in _norm(pred) for o in options)


def _obj_ok(want, obj: str) -> bool:
    options = want if isinstance(want, tuple) else (want,)
    for o in options:
        o = _norm(o)
        if o.startswith("="):
            if _norm(obj).strip() == o[1:]:
                return True
        elif o in _norm(obj):
            return True
    return False


def _negated(pred: str) -> bool:
    p = _norm(pred)
    return p == "dislikes" or any(n in p for n in NEGATION)


def _ended(c, when: datetime) -> bool:
    return bool(c.ends) or (c.valid_until is not None and c.valid_until <= when)


def _show(cands) -> str:
    return "; ".join(
        f"{c.predicate!r}:{c.object!r}"
        + (f" valid_at={c.valid_at.date()}" if c.valid_at else "")
        + (f" until={c.valid_until.date()}" if c.valid_until else "")
        + (" ends" if c.ends else "")
        + f" conf={c.confidence}"
        for c in cands) or "(nothing)"


def _with(cands, obj):
    return [c for c in cands if _obj_ok(obj, c.object)]


def check(extractor, text: str, expect: dict) -> None:
    """Raises AssertionError saying what ``extractor`` got wrong on the case."""
    when = expect.get("at", AT)
    cands = extractor.extract(text, at=when)
    got = _show(cands)

    if expect.get("nothing"):
        assert not cands, f"expected nothing from {text!r}, got {got}"
    for pred, obj in expect.get("has", []):
        assert any(_pred_ok(pred, c.predicate) and _obj_ok(obj, c.object) for c in cands), \
            f"missing ({pred!r}, {obj!r}) in {text!r}; got {got}"
    for pred, obj in expect.get("lacks", []):
        bad = [c for c in cands if _pred_ok(pred, c.predicate) and (not obj or _obj_ok(obj, c.object))]
        assert not bad, f"unexpected ({pred!r}, {obj!r}) in {text!r}; got {got}"
    for obj in expect.get("not_live", []):
        live = [c for c in _with(cands, obj) if not _negated(c.predicate) and not _ended(c, when)]
        assert not live, f"{obj!r} should not be a live positive fact for {text!r}; got {got}"
    for obj in expect.get("ends", []):
        assert any(_ended(c, when) for c in _with(cands, obj)), \
            f"expected a candidate ending {obj!r} for {text!r}; got {got}"
    for obj in expect.get("negated", []):
        hits = _with(cands, obj)
        assert hits and all(_negated(c.predicate) for c in hits), \
            f"expected {obj!r} negated in {text!r}; got {got}"
    for obj in expect.get("future", []):
        hits = _with(cands, obj)
        assert hits and all(c.valid_at is not None and c.valid_at > when for c in hits), \
            f"expected {obj!r} to start after the message time for {text!r}; got {got}"
    for obj, (iso, days) in expect.get("near", {}).items():
        hits = _with(cands, obj)
        assert hits, f"no candidate for {obj!r} in {text!r}; got {got}"
        target = at(iso)
        assert any(abs(((c.valid_at or when) - target).total_seconds()) <= days * 86400 for c in hits), \
            f"valid_at of {obj!r} not within {days} days of {iso} for {text!r}; got {got}"
    for obj, n in expect.get("count", {}).items():
        assert len(_with(cands, obj)) == n, f"expected {n} candidate(s) for {obj!r} in {text!r}; got {got}"
    if expect.get("hedged"):
        assert all(c.confidence <= 0.6 for c in cands), f"hedged message not down-weighted: {got}"


def check_same_slot(ex, first: str, second: str, predicate: str | None) -> None:
    """Two ways of saying one kind of thing land in one one-value slot, so the newer supersedes."""
    a = ex.extract(first, at=datetime(2026, 1, 10, tzinfo=timezone.utc))
    b = ex.extract(second, at=AT)
    assert a and b, f"first: {_show(a)} | second: {_show(b)}"
    pa, pb = normalise(a[0].predicate), normalise(b[0].predicate)
    assert pa == pb, f"different slots: {pa!r} vs {pb!r} ({_show(a)} | {_show(b)})"
    assert PredicateRegistry().is_one_value(pa), f"{pa!r} is not a one-value slot, so nothing supersedes"
    if predicate:
        assert pa == predicate
    assert a[0].object != b[0].object
