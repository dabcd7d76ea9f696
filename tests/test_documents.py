"""Versioned documents through ``mem.documents``: compare-and-set writes, expiry, purge, tenancy, and
racing writers (threads with their own ``Memory`` on one SQLite file, and threads sharing one).

Real stores, each test on both backends (SQLite in memory or a file, PostgreSQL); no embedder
(documents never embed).
Expiry uses real time with short lifetimes: a document that must still be visible gets an hour.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from kenning import DocumentConflict, EmptyText, InputError, Memory, NotFound, Settings, TextTooLarge


@pytest.fixture
def mem(new_memory):
    m = new_memory(embedder=None)
    yield m
    m.close()


def expire_now(mem, scope="s", path="p", text="gone soon"):
    mem.documents.write(scope, path, text, expires_in=0.01)
    time.sleep(0.03)


# -- compare and set -------------------------------------------------------------------------------

def test_write_new_then_read(mem):
    doc = mem.documents.write("agent:run-1", "plan/steps.md", "1. think")
    assert (doc.scope_key, doc.path, doc.text, doc.version, doc.expires_at) == (
        "agent:run-1", "plan/steps.md", "1. think", 1, None)
    again = mem.documents.read("agent:run-1", "plan/steps.md")
    assert again == doc


def test_expected_version_none_means_must_not_exist(mem):
    mem.documents.write("s", "p", "first")
    with pytest.raises(DocumentConflict) as info:
        mem.documents.write("s", "p", "second")
    assert info.value.code == "MEMORY_DOCUMENT_CONFLICT"
    assert mem.documents.read("s", "p").text == "first"


def test_expected_version_must_be_the_live_version(mem):
    mem.documents.write("s", "p", "v1")
    assert mem.documents.write("s", "p", "v2", expected_version=1).version == 2
    with pytest.raises(DocumentConflict):
        mem.documents.write("s", "p", "stale", expected_version=1)
    with pytest.raises(DocumentConflict):
        mem.documents.write("s", "p", "future", expected_version=3)
    assert mem.documents.write("s", "p", "v3", expected_version=2).version == 3
    doc = mem.documents.read("s", "p")
    assert (doc.text, doc.version) == ("v3", 3)


def test_expected_version_for_an_absent_document_conflicts(mem):
    with pytest.raises(DocumentConflict):
        mem.documents.write("s", "never", "x", expected_version=1)
    with pytest.raises(NotFound):
        mem.documents.read("s", "never")


def test_updated_at_moves_created_at_stays(mem):
    first = mem.documents.write("s", "p", "v1")
    second = mem.documents.write("s", "p", "v2", expected_version=1)
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at


@pytest.mark.parametrize("version", [True, "1", 1.0])
def test_expected_version_must_be_an_integer(mem, version):
    mem.documents.write("s", "p", "v1")
    with pytest.raises(InputError):
        mem.documents.write("s", "p", "v2", expected_version=version)
    assert mem.documents.read("s", "p").version == 1


# -- list, delete, names ---------------------------------------------------------------------------

def test_list_by_scope_and_prefix(mem):
    for path in ("notes/a", "notes/b", "plan"):
        mem.documents.write("s", path, path)
    mem.documents.write("other", "notes/c", "c")
    assert [d.path for d in mem.documents.list("s")] == ["notes/a", "notes/b", "plan"]
    assert [d.path for d in mem.documents.list("s", "notes/")] == ["notes/a", "notes/b"]
    assert mem.documents.list("s", "zzz") == []
    assert [d.path for d in mem.documents.list("other")] == ["notes/c"]


def test_delete(mem):
    mem.documents.write("s", "p", "x")
    mem.documents.delete("s", "p")
    with pytest.raises(NotFound):
        mem.documents.read("s", "p")
    with pytest.raises(NotFound):
        mem.documents.delete("s", "p")
    # a deleted document can be made again from scratch
    assert mem.documents.write("s", "p", "again").text == "again"


@pytest.mark.parametrize("scope_key, path", [
    ("", "p"), ("s", ""), ("s", "../etc/passwd"), ("s", "a/../b"), ("..", "p"), ("s p", "p"), ("s", "a\x00"),
    ("s", "x" * 257), (None, "p"), ("s", 5),
])
def test_bad_names_are_refused(mem, scope_key, path):
    with pytest.raises(InputError):
        mem.documents.write(scope_key, path, "x")
    with pytest.raises(InputError):
        mem.documents.read(scope_key, path)


def test_text_checks(mem, new_memory):
    with pytest.raises(InputError):
        mem.documents.write("s", "p", 42)
    small = new_memory(embedder=None, settings=Settings(max_text_chars=10))
    try:
        with pytest.raises(TextTooLarge):
            small.documents.write("s", "p", "x" * 11)
    finally:
        small.close()
    with pytest.raises(EmptyText):
        mem.documents.write("s", "blank", "   ")
    assert mem.documents.write("s", "empty", "").text == ""


def test_projects_and_environments_are_separate(mem):
    mem.documents.write("s", "p", "default")
    mem.documents.write("s", "p", "other project", project="other")
    mem.documents.write("s", "p", "prod", environment="prod")
    assert mem.documents.read("s", "p").text == "default"
    assert mem.documents.read("s", "p", project="other").text == "other project"
    assert mem.documents.read("s", "p", environment="prod").text == "prod"
    mem.documents.delete("s", "p", project="other")
    assert mem.documents.read("s", "p").text == "default"


# -- expiry and purge ------------------------------------------------------------------------------

def test_a_document_is_visible_until_it_expires(mem):
    doc = mem.documents.write("s", "p", "x", expires_in=3600)
    assert doc.expires_at is not None
    assert timedelta(minutes=59) < doc.expires_at - doc.created_at <= timedelta(hours=1)
    assert mem.documents.read("s", "p").text == "x"
    assert [d.path for d in mem.documents.list("s")] == ["p"]
    also = mem.documents.write("s", "q", "y", expires_in=timedelta(hours=2))
    assert also.expires_at - also.created_at == timedelta(hours=2)


def test_expired_documents_are_invisible(mem):
    expire_now(mem)
    with pytest.raises(NotFound):
        mem.documents.read("s", "p")
    assert mem.documents.list("s") == []
    # an expired document counts as absent: a new one may be written with expected_version=None
    with pytest.raises(DocumentConflict):
        mem.documents.write("s", "p", "stale", expected_version=1)
    fresh = mem.documents.write("s", "p", "fresh")
    assert fresh.text == "fresh" and fresh.expires_at is None and fresh.version == 2


def test_rewriting_without_expires_in_makes_a_document_permanent(mem):
    mem.documents.write("s", "p", "x", expires_in=0.2)
    mem.documents.write("s", "p", "y", expected_version=1)
    time.sleep(0.25)
    assert mem.documents.read("s", "p").text == "y"


@pytest.mark.parametrize("expires_in", [0, -1, timedelta(seconds=-5), float("nan")])
def test_expires_in_must_be_positive(mem, expires_in):
    with pytest.raises(InputError):
        mem.documents.write("s", "p", "x", expires_in=expires_in)
    with pytest.raises(NotFound):
        mem.documents.read("s", "p")


def test_purge_deletes_expired_documents_only(mem):
    mem.documents.write("s", "keep", "x")
    mem.documents.write("s", "later", "x", expires_in=3600)
    mem.documents.write("s", "a", "x", expires_in=0.01)
    mem.documents.write("t", "b", "x", expires_in=0.01)
    mem.documents.write("s", "other-project", "x", expires_in=0.01, project="other")
    time.sleep(0.03)
    assert mem.documents.purge() == 2
    assert mem.documents.purge() == 0
    assert [d.path for d in mem.documents.list("s")] == ["keep", "later"]
    # purge works per project and environment
    assert mem.documents.purge(project="other") == 1


def test_purged_versions_start_again(mem):
    expire_now(mem)
    mem.documents.purge()
    assert mem.documents.write("s", "p", "new").version == 1


def test_deleting_an_expired_document_is_not_found(mem):
    expire_now(mem)
    with pytest.raises(NotFound):
        mem.documents.delete("s", "p")


# -- racing writers --------------------------------------------------------------------------------

THREADS = 8


def race(write_for_thread) -> tuple[list, list]:
    """Run THREADS writers released together by a barrier; returns (winners, losers)."""
    barrier = threading.Barrier(THREADS)
    wins, losses, errors = [], [], []
    lock = threading.Lock()

    def run(i):
        try:
            barrier.wait(timeout=10)
            doc = write_for_thread(i)
            with lock:
                wins.append((i, doc))
        except DocumentConflict as exc:
            with lock:
                losses.append((i, exc))
        except BaseException as exc:  # anything else fails the test below
            with lock:
                errors.append((i, exc))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    return wins, losses


@pytest.mark.parametrize("expected", [None, 1], ids=["create", "update"])
def test_racing_writers_with_own_memory_on_one_file_exactly_one_wins(expected, store_url):
    url = store_url
    setup = Memory(url, embedder=None)
    if expected == 1:
        setup.documents.write("s", "p", "start")
    mems = [Memory(url, embedder=None) for _ in range(THREADS)]
    try:
        wins, losses = race(lambda i: mems[i].documents.write("s", "p", f"writer {i}", expected_version=expected))
        assert len(wins) == 1 and len(losses) == THREADS - 1
        winner, doc = wins[0]
        final = setup.documents.read("s", "p")
        assert (final.text, final.version) == (f"writer {winner}", (expected or 0) + 1)
        assert doc.version == final.version
    finally:
        for m in mems:
            m.close()
        setup.close()


@pytest.mark.parametrize("expected", [None, 1], ids=["create", "update"])
def test_racing_writers_sharing_one_memory_exactly_one_wins(store_url, expected):
    mem = Memory(store_url, embedder=None)
    try:
        if expected == 1:
            mem.documents.write("s", "p", "start")
        wins, losses = race(lambda i: mem.documents.write("s", "p", f"writer {i}", expected_version=expected))
        assert len(wins) == 1 and len(losses) == THREADS - 1
        final = mem.documents.read("s", "p")
        assert (final.text, final.version) == (f"writer {wins[0][0]}", (expected or 0) + 1)
    finally:
        mem.close()


def test_losers_read_again_and_retry_until_all_land(store_url):
    """The documented recipe: on DocumentConflict read the live version and retry. Every write lands once."""
    url = store_url
    setup = Memory(url, embedder=None)
    setup.documents.write("s", "log", "")
    mems = [Memory(url, embedder=None) for _ in range(THREADS)]

    def append(i):
        m = mems[i]
        while True:
            doc = m.documents.read("s", "log")
            try:
                return m.documents.write("s", "log", doc.text + f"[{i}]", expected_version=doc.version)
            except DocumentConflict:
                continue

    try:
        wins, losses = race(append)
        assert len(wins) == THREADS and losses == []
        final = setup.documents.read("s", "log")
        assert final.version == THREADS + 1
        assert sorted(final.text.strip("[]").split("][")) == sorted(str(i) for i in range(THREADS))
    finally:
        for m in mems:
            m.close()
        setup.close()
