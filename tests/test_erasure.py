"""Erasure, proven on both stores: after each kind of erasure the store's files hold none of the erased
words (the SQLite file, its WAL and shared memory; PostgreSQL's relation files once compacted and
checkpointed), no read path returns them, and other datasets and the rest of the same message are intact.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kenning import Memory
from kenning.errors import InputError, NotFound, PermissionDenied


class Erasable:
    """A Memory on a file store of the backend and ``count(word)``: the word's occurrences in the store's
    files (case-insensitive bytes)."""

    def __init__(self, backend: str, tmp_path: Path, request, embedder):
        self.backend = backend
        if backend == "sqlite":
            self.path = tmp_path / "k.db"
            self.url = f"sqlite:///{self.path}"
        else:
            self.server = request.getfixturevalue("pg_server")
            if self.server._embedded is None:
                pytest.skip("the byte scan reads the embedded PostgreSQL's files; this server is elsewhere")
            self.url = self.server.new_database(fresh=True)   # no earlier test's deleted bytes in its files
            request.addfinalizer(lambda: self.server.drop(self.url))
        self.mem = Memory(self.url, embedder=embedder, extractor="parse")
        request.addfinalizer(self.mem.close)

    def files(self) -> list[Path]:
        if self.backend == "sqlite":
            return [p for p in self.path.parent.iterdir() if p.name.startswith(self.path.name)]
        admin = self.server._admin
        admin.execute("CHECKPOINT")   # every page on disk: what the scan cannot see is not there
        name = urlsplit(self.url).path.lstrip("/")
        oid = admin.execute("SELECT oid FROM pg_database WHERE datname = %s", (name,)).fetchone()[0]
        folder = Path(self.server._folder) / "data" / "base" / str(oid)
        return [p for p in folder.iterdir() if p.is_file()]

    def count(self, word: str) -> int:
        needle = word.lower().encode()
        found = {}
        for p in self.files():
            try:
                n = p.read_bytes().lower().count(needle)
            except FileNotFoundError:   # a relation file dropped while scanning
                continue
            if n:
                found[self.relation(p)] = found.get(self.relation(p), 0) + n
        if found:   # printed with a failing test's output: where the word is left
            print(f"{word!r} found in {found}")
        return sum(found.values())

    def relation(self, path: Path) -> str:
        """The file's name, or for PostgreSQL the relation whose file (or fork, or segment) it is."""
        if self.backend == "sqlite":
            return path.name
        node = path.name.split("_")[0].split(".")[0]
        if not node.isdigit():
            return path.name
        import psycopg
        with psycopg.connect(self.url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_filenode_relation(0, %s)::text", (int(node),)).fetchone()
        return f"{row[0] or 'unknown'} ({path.name})"


@pytest.fixture
def erasable(backend, tmp_path, request, local_embedder):
    return Erasable(backend, tmp_path, request, local_embedder)


def everything_read(mem: Memory, dataset: str, queries: list[str]) -> str:
    """What every read path of the library gives back about the dataset, as one text."""
    out = []
    for q in queries:
        r = mem.recall(q, dataset=dataset, limit=20)
        out += [r.context, *(f.model_dump_json() for f in r.facts), *(n.model_dump_json() for n in r.notes),
                *(m.model_dump_json() for m in r.messages)]
        out += [h.model_dump_json() for h in mem.messages.search(dataset, q, limit=50)]
        out += [h.model_dump_json() for h in mem.notes.search(dataset, q, limit=50)]
    facts = mem.list_facts(dataset, include_invalidated=True, limit=100)
    out += [f.model_dump_json() for f in facts.facts]
    for f in facts.facts:   # the history at every time a fact began
        out += [g.model_dump_json() for g in mem.list_facts(dataset, as_of=f.valid_at, limit=100).facts]
    out += [e.model_dump_json() for e in mem.list_entities(dataset)]
    for chat in mem.messages.chats(dataset).chats:
        out += [m.model_dump_json() for m in mem.messages.thread(dataset, chat.chat, limit=100).messages]
    out += [n.model_dump_json() for n in mem.notes.list(dataset, include_forgotten=True, limit=100)]
    out.append(mem.core.render(dataset))
    for file in mem.core.list(dataset):
        out += [v.model_dump_json() for v in mem.core.history(dataset, file.path)]
    out += [j.model_dump_json() for j in mem.jobs(dataset, limit=100)]
    out += list(mem.export(dataset))
    out.append(mem.erase.log(dataset).model_dump_json())
    return "\n".join(out).lower()


def dataset_of_sam(mem: Memory) -> dict[str, str]:
    """Sam's memory with rare words in every place a word can be kept; Ana's beside it."""
    ids = {}
    mem.add("I live in Porto.", "sam", chat="c1", message_id="m1")
    r = mem.add("I adopted a greyhound called Zorblax from the Quillington shelter, and I work at Brightwave.",
                "sam", chat="c1", message_id="m2")
    ids["zorblax_facts"] = [f.fact_id for f in mem.list_facts("sam", message_id="m2").facts]
    mem.add("She sleeps on the sofa all day.", "sam", chat="c1", message_id="m3")
    mem.add("I moved to Marrakesh last week.", "sam", chat="c2", message_id="m4")
    mem.notes.save("sam", "Zorblax is afraid of thunderstorms.")
    mem.memory_tool("sam", {"command": "create", "path": "/memories/pets.md",
                            "file_text": "Dog: Zorblax (greyhound)\nLikes long walks\n"})
    mem.memory_tool("sam", {"command": "str_replace", "path": "/memories/pets.md", "old_str": "long walks",
                            "new_str": "long walks by the river"})
    mem.add("I keep bees at the Vexmoor allotment and my dog is called Zorblax too.", "ana", chat="c1")
    mem.flush()
    assert r.memory_ids
    return ids


def test_erase_content_leaves_nothing_anywhere_and_the_dry_run_said_so(erasable):
    mem = erasable.mem
    dataset_of_sam(mem)
    assert erasable.count("zorblax") and erasable.count("quillington")
    before_ana = list(mem.export("ana"))[1:]   # every row of Ana's (after the header, which is dated)

    preview = mem.erase.content("sam", "ZORBLAX", dry_run=True)
    assert preview.dry_run and preview.erasure_id is None
    assert everything_read(mem, "sam", ["zorblax"]).count("zorblax") > 0   # the dry run removed nothing
    assert mem.erase.log("sam").total == 0                                 # nor logged anything

    receipt = mem.erase.content("sam", "ZORBLAX")
    assert receipt.physical == "done" and receipt.erasure_id
    for kind in ("messages", "notes", "core_files", "core_file_versions", "facts"):
        assert receipt.removed.get(kind) == preview.removed.get(kind), kind
        assert sorted(receipt.ids.get(kind, [])) == sorted(preview.ids.get(kind, [])), kind
    assert receipt.ids["messages"] == ["m2"]

    seen = everything_read(mem, "sam", ["zorblax", "greyhound", "quillington", "dog", "Where do I work?"])
    assert "zorblax" not in seen and "quillington" not in seen
    assert "porto" in seen and "marrakesh" in seen and "long walks by the river" in seen   # the rest stays
    assert erasable.count("quillington") == 0 and erasable.count("brightwave") == 0
    assert erasable.count("zorblax") > 0                                   # Ana's own words stay...
    assert list(mem.export("ana"))[1:] == before_ana                      # ...untouched
    mem.erase.dataset("ana")
    assert erasable.count("zorblax") == 0 and erasable.count("vexmoor") == 0


def test_erase_fact_cuts_its_words_out_of_the_message_and_keeps_the_rest(erasable):
    mem = erasable.mem
    mem.add("I live in Porto.", "sam", chat="c1", message_id="m1")
    mem.add("I work at Brightwave and I play the theremin with Yolandequist.", "sam", chat="c1", message_id="m2")
    mem.add("Weekends are for hiking.", "sam", chat="c1", message_id="m3")
    facts = mem.list_facts("sam", message_id="m2").facts
    work = next(f for f in facts if f.object == "brightwave")
    others = [f for f in facts if f.fact_id != work.fact_id]
    assert erasable.count("brightwave")

    receipt = mem.erase.fact("sam", work.fact_id)
    assert receipt.ids["facts"] == [work.fact_id] and receipt.redacted == ["m2"]
    message = mem.messages.get("sam", "m2")
    # one sentence taught both facts: the value goes, the words the other fact stands on stay
    assert message.content == "I work at [erased] and I play the theremin with Yolandequist."
    left = {f.fact_id for f in mem.list_facts("sam", include_invalidated=True).facts}
    assert work.fact_id not in left and {f.fact_id for f in others} <= left   # other facts of it stay
    seen = everything_read(mem, "sam", ["Where do I work?", "brightwave", "theremin"])
    assert "brightwave" not in seen and "porto" in seen and "hiking" in seen
    # the redacted message is searchable by what it still says, and found by its new words only
    assert [h.message_id for h in mem.messages.search("sam", "hiking theremin", limit=5)][:2]
    assert erasable.count("brightwave") == 0
    with pytest.raises(NotFound):
        mem.erase.fact("sam", work.fact_id)


def test_erase_fact_keeps_the_words_a_fact_that_stays_stands_on(erasable):
    mem = erasable.mem
    said = "We're moving to Quenchester in September."
    mem.add(said, "sam", at="2026-06-01T10:00:00Z", message_id="m1")
    facts = {f.predicate: f for f in mem.list_facts("sam", include_invalidated=True).facts}
    assert set(facts) == {"plans to move to", "lives in"}   # one sentence, one value, two facts
    receipt = mem.erase.fact("sam", facts["plans to move to"].fact_id)
    assert receipt.ids["facts"] == [facts["plans to move to"].fact_id] and receipt.redacted == []
    assert mem.messages.get("sam", "m1").content == said      # the fact that stays still stands on its words
    [left] = mem.list_facts("sam", include_invalidated=True).facts
    assert (left.fact_id, left.source_quote) == (facts["lives in"].fact_id, said)
    # the last fact of the message erased, the message says nothing more and goes whole, logged as a message
    receipt = mem.erase.fact("sam", left.fact_id)
    assert receipt.ids["messages"] == ["m1"] and receipt.redacted == []
    [entry, _] = mem.erase.log("sam").erasures
    assert entry.hashes["message:m1"] == hashlib.sha256(said.encode()).hexdigest()
    assert not any(key.startswith("quote:") for key in entry.hashes)
    assert erasable.count("quenchester") == 0


def test_an_erased_message_can_be_sent_again_under_its_client_ref(erasable):
    """The idempotency receipt goes with the message: else the same turn sent again (a person saying it again,
    a client retrying) would be answered "already ingested" with erased ids, and nothing kept."""
    mem = erasable.mem
    first = mem.add("I adopted a dog called Pemberwick.", "sam", client_ref="turn-1", message_id="m1")
    receipt = mem.erase.message("sam", "m1")
    assert receipt.ids["ingests"] == ["turn-1"] and receipt.removed["ingests"] == 1
    again = mem.add("I adopted a dog called Pemberwick.", "sam", client_ref="turn-1", message_id="m1")
    assert again.status == "stored" and again.memory_ids and again.memory_ids != first.memory_ids
    assert mem.messages.get("sam", "m1").content == "I adopted a dog called Pemberwick."


def test_erase_fact_takes_every_version_of_the_value_and_the_value_before_is_live_again(erasable):
    mem = erasable.mem
    mem.add("I live in Berlin.", "sam", at="2026-01-05T10:00:00Z", message_id="m1")
    mem.add("I moved to Quentovic.", "sam", at="2026-03-05T10:00:00Z", message_id="m2")
    mem.add("I moved to Oslo.", "sam", at="2026-05-05T10:00:00Z", message_id="m3")
    mem.add("I moved to Quentovic.", "sam", at="2026-07-05T10:00:00Z", message_id="m4")
    versions = [f for f in mem.list_facts("sam", include_invalidated=True).facts if f.object == "quentovic"]
    assert len(versions) == 2
    receipt = mem.erase.fact("sam", versions[-1].fact_id)
    assert receipt.physical == "done"
    assert sorted(receipt.ids["facts"]) == sorted(f.fact_id for f in versions)
    assert sorted(receipt.ids.get("messages", []) + receipt.redacted) == ["m2", "m4"]
    live = {f.object for f in mem.list_facts("sam").facts if f.predicate == "lives in"}
    assert live == {"oslo"}
    seen = everything_read(mem, "sam", ["Where do I live?", "quentovic"])
    assert "quentovic" not in seen and "oslo" in seen and "berlin" in seen
    assert erasable.count("quentovic") == 0


def test_erase_message_takes_its_facts_and_context_and_restores_what_they_superseded(erasable):
    mem = erasable.mem
    mem.add("I live in Berlin.", "sam", chat="c1", message_id="m1")
    mem.add("I moved to Xochimilcan and I love the Ptarmiganfest there.", "sam", chat="c1", message_id="m2")
    mem.add("It was a long drive.", "sam", chat="c1", message_id="m3")
    receipt = mem.erase.message("sam", "m2")
    assert receipt.ids["messages"] == ["m2"] and receipt.removed["facts"] >= 1 and receipt.restored
    assert {f.object for f in mem.list_facts("sam").facts if f.predicate == "lives in"} == {"berlin"}
    seen = everything_read(mem, "sam", ["Where do I live?", "xochimilcan", "festival", "drive"])
    assert "xochimilcan" not in seen and "ptarmiganfest" not in seen and "long drive" in seen
    assert erasable.count("xochimilcan") == 0 and erasable.count("ptarmiganfest") == 0


def test_erase_dataset_and_delete_dataset_leave_nothing_and_are_logged_without_text(erasable):
    mem = erasable.mem
    dataset_of_sam(mem)
    preview = mem.erase.dataset("sam", dry_run=True)
    assert preview.removed["messages"] == 4 and mem.list_facts("sam").total
    counts = mem.delete_dataset("sam")   # per table, as it always answered
    assert counts["episodes"] == 4 and {("messages" if k == "episodes" else k): n for k, n in counts.items()} \
        == preview.removed
    assert erasable.count("quillington") == 0 and erasable.count("marrakesh") == 0
    assert erasable.count("vexmoor") > 0                      # Ana's memory is untouched
    assert everything_read(mem, "sam", ["zorblax"]).count("zorblax") == 0
    log = mem.erase.log("sam")
    assert log.total == 1 and log.erasures[0].kind == "dataset" and log.erasures[0].removed == preview.removed


def test_the_log_keeps_ids_and_hashes_never_the_text(erasable):
    mem = erasable.mem
    mem.add("I adopted a greyhound called Zorblax.", "sam", message_id="m1")
    mem.erase.message("sam", "m1", by="support ticket 7")
    mem.erase.content("sam", "zorblax")   # nothing left to match: logged all the same
    page = mem.erase.log("sam")
    assert page.total == 2 and page.erasures[1].by == "support ticket 7"
    record = page.erasures[1]
    text = "I adopted a greyhound called Zorblax."
    assert record.hashes["message:m1"] == hashlib.sha256(text.encode()).hexdigest()
    assert "zorblax" not in page.model_dump_json().lower() and "greyhound" not in page.model_dump_json().lower()
    assert erasable.count("zorblax") == 0


def test_another_process_serves_nothing_erased(erasable, local_embedder):
    """A second Memory on the same store (another process's caches) sees the erasure at its next read,
    even once the dataset holds as many changes again as when it cached it."""
    mem = erasable.mem
    other = Memory(erasable.url, embedder=local_embedder, extractor="parse")
    try:
        for i, city in enumerate(["Porto", "Quentovic", "Lagos"]):
            mem.messages.index("sam", f"Trip {i}: I visited {city} with Zorblax.", chat="c1")
        assert "zorblax" in other.recall("trips with the dog", dataset="sam").context.lower()
        mem.erase.dataset("sam")
        for i in range(3):
            mem.messages.index("sam", f"Trip {i}: a quiet week at home.", chat="c1")
        seen = other.recall("trips with the dog", dataset="sam")
        assert "zorblax" not in seen.model_dump_json().lower()
    finally:
        other.close()


def test_erase_content_refuses_a_text_too_short_to_mean_anything(erasable):
    with pytest.raises(InputError):
        erasable.mem.erase.content("sam", " a ")


def test_dry_run_is_true_or_false_never_a_truthy_guess(erasable):
    mem = erasable.mem
    mem.add("I live in Porto.", "sam", message_id="m1")
    fact = mem.list_facts("sam").facts[0]
    for erase in (lambda d: mem.erase.fact("sam", fact.fact_id, dry_run=d), lambda d: mem.erase.message("sam", "m1", dry_run=d),
                  lambda d: mem.erase.content("sam", "porto", dry_run=d), lambda d: mem.erase.dataset("sam", dry_run=d)):
        for wrong in ("yes", "false", 1, None):
            with pytest.raises(InputError, match="dry_run must be True"):
                erase(wrong)
    assert mem.list_facts("sam").facts == [fact] and mem.erase.log("sam").total == 0


def test_a_user_may_erase_their_own_memory_only(erasable):
    mem = erasable.mem
    mem.add("I work at Brightwave.", "sam", message_id="m1")
    mem.add("I work at Brightwave too.", "ana", message_id="m1")
    sam = mem.as_user("sam")
    with pytest.raises(PermissionDenied):
        sam.erase.message("ana", "m1")
    with pytest.raises(PermissionDenied):
        sam.erase.content("sam", "brightwave", document_scopes=["shared"])
    with pytest.raises(PermissionDenied):
        sam.erase.compact()
    receipt = sam.erase.content("sam", "brightwave", by="spoofed")
    assert receipt.removed["messages"] == 1
    assert sam.erase.log("sam").erasures[0].by == "user:sam via spoofed"
    assert mem.list_facts("ana").total == 1


def test_documents_holding_the_text_go_when_their_scope_is_named(erasable):
    mem = erasable.mem
    mem.documents.write("sam-agent", "notes/trip.md", "Packing list for Quentovic")
    mem.documents.write("sam-agent", "notes/other.md", "Nothing here")
    mem.documents.write("elsewhere", "notes/trip.md", "Quentovic too")
    receipt = mem.erase.content("sam", "quentovic", document_scopes=["sam-agent"])
    assert receipt.ids["documents"] == ["sam-agent:notes/trip.md"]
    assert [d.path for d in mem.documents.list("sam-agent")] == ["notes/other.md"]
    assert mem.documents.read("elsewhere", "notes/trip.md").text == "Quentovic too"


def test_deferred_compaction_is_pending_until_compact(erasable, backend, local_embedder):
    from kenning.config import Settings

    mem = Memory(erasable.url, embedder=local_embedder, extractor="parse",
                 settings=Settings(erase_compaction="deferred"))
    try:
        mem.add("I adopted a greyhound called Zorblax.", "sam", message_id="m1")
        receipt = mem.erase.message("sam", "m1")
        assert receipt.physical == "pending" and mem.erase.log("sam").erasures[0].compacted_at is None
        assert mem.erase.compact() is True
        assert mem.erase.log("sam").erasures[0].compacted_at is not None
        assert erasable.count("zorblax") == 0
    finally:
        mem.close()


def test_organization_memory_is_erased_only_when_asked_and_with_the_manage_permission(erasable):
    mem = erasable.mem
    mem.notes.save("sam", "Quentovic office closes at six", namespace="organization")
    mem.notes.save("sam", "Sam flies to Quentovic on Monday")
    mem.notes.save("sam", "The office is in Lisbon", namespace="organization")
    alone = mem.erase.content("sam", "quentovic")
    assert alone.removed["notes"] == 1   # the organization's note is not the dataset's
    with pytest.raises(PermissionDenied):
        mem.as_user("sam").erase.content("sam", "quentovic", organization=True)
    preview = mem.as_user("sam", "admin").erase.content("sam", "quentovic", organization=True, dry_run=True)
    assert [i.split("/")[0] for i in preview.ids["notes"]] == ["organization"]
    receipt = mem.as_user("sam", "admin").erase.content("sam", "quentovic", organization=True)
    assert receipt.ids["notes"] == preview.ids["notes"]
    assert [n.text for n in mem.notes.list("sam", "organization")] == ["The office is in Lisbon"]
    assert erasable.count("quentovic") == 0


def test_over_http_a_user_token_erases_its_own_memory_and_reads_its_log(keyed_server):
    """The Python client against a real server: what a service key and a user token may erase."""
    with Memory(keyed_server.url, api_key=keyed_server.keys["service"]) as service:
        service.add("I adopted a greyhound called Zorblax.", "sam", message_id="m1")
        service.add("I adopted a cat called Zorblax.", "ana", message_id="m1")
        with service.as_user("sam") as sam:
            with pytest.raises(PermissionDenied):
                sam.erase.message("ana", "m1")
            with pytest.raises(PermissionDenied):
                sam.erase.compact()
            preview = sam.erase.content("sam", "zorblax", dry_run=True)
            assert preview.dry_run and preview.ids["messages"] == ["m1"]
            receipt = sam.erase.content("sam", "zorblax")
            assert receipt.ids["messages"] == ["m1"] and receipt.physical == "done"
            log = sam.erase.log("sam")
            assert log.total == 1 and log.erasures[0].by.startswith("user:sam via key:")
            assert "zorblax" not in sam.recall("What is my dog called?", dataset="sam").model_dump_json().lower()
        assert service.erase.log().total == 1   # the project's log, for a service key
        assert "zorblax" in service.recall("What is my cat called?", dataset="ana").context.lower()
        receipt = service.erase.dataset("ana")
        assert receipt.removed["messages"] == 1 and service.erase.compact() is True


def test_a_finished_turn_keeps_its_receipt_not_its_words(erasable):
    mem = erasable.mem
    kept = mem.add_turn(dataset="sam", role="user", content="I adopted a greyhound called Zorblax.", thread="t1")
    passing = mem.add_turn(dataset="sam", role="user", content="My PIN is 4417 at Quillbank.", thread="t2",
                           temporary=True)
    mem.flush()
    jobs = {j.request_id: j for j in mem.jobs("sam")}
    assert jobs[kept.request_id].status == jobs[passing.request_id].status == "done"
    assert jobs[kept.request_id].content == jobs[passing.request_id].content == ""
    assert mem.status(kept.request_id).status == "done"
    assert "zorblax" in mem.messages.thread("sam", "t1").messages[0].content.lower()   # the message holds them
    assert "quillbank" not in "".join(j.model_dump_json() for j in mem.jobs("sam")).lower()
    receipt = mem.erase.message("sam", mem.messages.thread("sam", "t1").messages[0].episode_id)
    assert receipt.ids["jobs"] == [kept.request_id]


def test_a_dry_run_says_exactly_what_the_erasure_does(erasable):
    """Entities left unnamed and values made live again included: the dry run is the erasure, rolled back."""
    mem = erasable.mem
    mem.add("I live in Berlin.", "sam", message_id="m1")
    mem.add("I moved to Lisbon last month.", "sam", message_id="m2")
    mem.add("I play the cello.", "sam", message_id="m3")
    cello = next(f for f in mem.list_facts("sam").facts if "cello" in f.object)
    for erase, args in ((mem.erase.fact, ("sam", cello.fact_id)), (mem.erase.message, ("sam", "m2")),
                        (mem.erase.content, ("sam", "lisbon"))):
        before = list(mem.export("sam"))[1:]
        preview = erase(*args, dry_run=True)
        assert list(mem.export("sam"))[1:] == before and mem.erase.log("sam").total == 0   # nothing happened
        assert preview.removed.get("entities") == 1 and preview.erasure_id is None
        if args[1] != cello.fact_id:
            assert preview.restored and preview.restored == [f.fact_id for f in mem.list_facts(
                "sam", include_invalidated=True).facts if f.object == "berlin"]
    real = mem.erase.message("sam", "m2")
    assert (real.removed, real.ids, real.restored) == (preview.removed, preview.ids, preview.restored)


@pytest.mark.parametrize("backend", ["postgres"])
def test_postgres_keeps_no_statistics_of_what_people_said(erasable):
    """ANALYZE (or autovacuum's) copies sampled values into pg_statistic, out of an erasure's reach: the text
    columns keep none, so after an erasure neither the catalog's view nor the files hold the words."""
    mem = erasable.mem
    for i in range(30):
        mem.add(f"I'm learning to play the Thrumbleharp, lesson {i}.", "sam", message_id=f"m{i}")
    mem.notes.save("sam", "Thrumbleharp lessons on Tuesdays")
    admin = erasable.server._admin
    with psycopg_connect(erasable.url) as conn:
        conn.execute("ANALYZE")
        assert conn.execute("SELECT count(*) FROM pg_stats WHERE tablename = 'episodes'").fetchone()[0] > 0

        def in_statistics() -> int:
            return conn.execute("SELECT count(*) FROM pg_stats WHERE concat_ws(' ', most_common_vals::text,"
                                " histogram_bounds::text, most_common_elems::text) ILIKE '%thrumbleharp%'"
                                ).fetchone()[0]
        assert in_statistics() == 0
        mem.erase.content("sam", "thrumbleharp")
        conn.execute("ANALYZE")
        assert in_statistics() == 0
    admin.execute("CHECKPOINT")
    assert erasable.count("thrumbleharp") == 0


def psycopg_connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_delete_over_http_is_logged_with_who_asked(keyed_server):
    with Memory(keyed_server.url, api_key=keyed_server.keys["service"]) as service:
        service.add("I keep bees.", "ana", message_id="m1")
        assert service.delete_dataset("ana")["episodes"] == 1
        record = service.erase.log("ana").erasures[0]
        assert record.kind == "dataset" and record.by.startswith("key:")


def test_a_reader_holding_an_old_snapshot_leaves_the_erasure_pending_not_every_writer_waiting(tmp_path, monkeypatch):
    """SQLite's WAL cannot be truncated while another connection reads an older snapshot, and the checkpoint
    waits holding the write lock: it waits ERASE_WAIT_SECONDS, not the 30 s a writer waits, then leaves the
    erasure pending for `compact`."""
    import sqlite3
    import time

    import kenning.store.sqlite as sqlite_store

    monkeypatch.setattr(sqlite_store, "ERASE_WAIT_SECONDS", 1)
    path = tmp_path / "k.db"
    with Memory(f"sqlite:///{path}", embedder=None, extractor="parse") as mem:
        mem.add("I live in Vorthelm.", "sam", message_id="m1")
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM facts").fetchone()
        started = time.monotonic()
        receipt = mem.erase.content("sam", "vorthelm")
        waited = time.monotonic() - started
        assert receipt.physical == "pending" and waited < 10
        assert mem.erase.log("sam").erasures[0].compacted_at is None
        reader.rollback()
        reader.close()
        assert mem.erase.compact() is True and mem.erase.log("sam").erasures[0].compacted_at is not None
    assert sum(p.read_bytes().lower().count(b"vorthelm") for p in tmp_path.iterdir()) == 0


def test_an_erased_note_leaves_no_successor_named_on_the_note_it_replaced(erasable):
    mem = erasable.mem
    old = mem.notes.save("sam", "Prefers tea in the morning")
    new = mem.notes.save("sam", "Prefers Glimmerbrew tea in the morning")
    mem.notes.forget("sam", old.note_id, superseded_by=new.note_id)
    receipt = mem.erase.content("sam", "glimmerbrew")
    assert receipt.ids["notes"] == [new.note_id]
    [left] = mem.notes.list("sam", include_forgotten=True)
    assert (left.note_id, left.superseded_by) == (old.note_id, None) and left.forgotten_at is not None
    assert erasable.count("glimmerbrew") == 0


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize("where", ["another database", "this database"])
def test_a_transaction_older_than_the_erasure_leaves_it_pending_not_done(erasable, monkeypatch, where):
    """VACUUM FULL keeps a deleted row that a transaction begun before the deletion may still read: one open
    in another database of the server (its transaction id holds every snapshot back) or a snapshot in this
    one. The erasure then says pending, and `compact` finishes it once that transaction has ended."""
    import psycopg

    import kenning.store.postgres as postgres_store

    monkeypatch.setattr(postgres_store, "ERASE_WAIT_SECONDS", 1)
    mem = erasable.mem
    mem.add("I live in Berlin.", "sam", message_id="m1")
    mem.add("I moved to Quentovic.", "sam", message_id="m2")
    with psycopg.connect(erasable.server.admin_url if where == "another database" else erasable.url) as older:
        if where == "another database":
            older.execute("SELECT pg_current_xact_id()")                       # a writer's transaction id
        else:
            older.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            older.execute("SELECT count(*) FROM meta")                         # a reader's snapshot
        receipt = mem.erase.message("sam", "m2")
        assert receipt.physical == "pending" and mem.erase.log("sam").erasures[0].compacted_at is None
        older.rollback()
    assert mem.erase.compact() is True and mem.erase.log("sam").erasures[0].compacted_at is not None
    assert erasable.count("quentovic") == 0
