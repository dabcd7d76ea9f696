"""The public API behaves the same in process and over HTTP (same results, same exception types)."""
from __future__ import annotations

import pytest

from kenning import (DocumentConflict, EmptyText, InputError, MemoryConflict, MemoryToolError, NotFound,
                     TextTooLarge)


def test_add_supersede_history_as_of(api):
    api.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z")
    r = api.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z")
    assert r.candidates_updated == 1 and r.supersedes
    assert [f.object for f in api.list_facts("sam").facts] == ["lisbon"]
    assert [f.object for f in api.list_facts("sam", as_of="2026-07-15T00:00:00Z").facts] == ["berlin"]
    assert {f.object for f in api.list_facts("sam", include_invalidated=True).facts} == {"berlin", "lisbon"}
    assert {e.name for e in api.list_entities("sam")} == {"berlin", "lisbon"}


def test_skips_and_idempotency(api):
    assert api.add("You should visit Porto.", "sam", role="assistant").reason == "skipped_non_user_turn"
    first = api.add("I play the cello.", "sam", client_ref="m1")
    again = api.add("I play the cello.", "sam", client_ref="m1")
    assert again.reason == "already_ingested" and again.memory_ids == first.memory_ids
    assert api.add("ok thanks!", "sam").reason == "no_valid_candidates"


def test_bad_input_raises_the_same_types(api):
    with pytest.raises(TextTooLarge):
        api.add("x" * 100_001, "sam")
    with pytest.raises(EmptyText):
        api.add("   ", "sam")
    with pytest.raises(InputError):
        api.recall("", "sam")
    with pytest.raises(InputError):
        api.list_facts("sam", limit=0)
    with pytest.raises(NotFound):
        api.delete_fact("sam", "f_missing")
    assert api.list_facts("nobody").total == 0


def test_recall_and_delete(api):
    api.add("I live in Porto.", "sam")
    api.add("I'm allergic to shellfish.", "sam")
    res = api.recall("Does the user have any food allergies?", "sam")
    assert res.facts[0].object == "shellfish" and "shellfish" in res.context
    api.delete_fact("sam", res.facts[0].fact_id)
    assert "shellfish" not in [f.object for f in api.list_facts("sam").facts]


def test_queue(api):
    r = api.add_turn("sam", "user", "I live in Oslo.")
    api.flush(timeout=30)
    s = api.status(r.request_id)
    assert s.processing_status == "done"
    assert api.status(memory_id=s.memory_id).searchable


def test_messages_and_notes(api):
    api.messages.index("sam", "Planning the Kyoto trip for April", chat="c1", message_id="m1")
    assert api.messages.get("sam", "m1").content == "Planning the Kyoto trip for April"
    assert api.messages.search("sam", "japan travel")[0].message_id == "m1"
    assert api.messages.search("sam", "japan travel", exclude_chat="c1") == []
    note = api.notes.save("sam", "Works in the Lisbon office")
    assert api.notes.search("sam", "where does sam work")[0].note.note_id == note.note_id
    assert api.notes.save_extracted("sam", ["Works in the Lisbon office.", "Prefers mornings"])[0].text == \
        "Prefers mornings"
    api.notes.forget("sam", note.note_id)
    assert note.note_id not in [n.note_id for n in api.notes.list("sam")]


def test_core_files(api):
    assert api.memory_tool("sam", {"command": "create", "path": "/memories/p.md", "file_text": "Name: Sam"}) == \
        "File created successfully at: /memories/p.md"
    with pytest.raises(MemoryToolError) as info:
        api.memory_tool("sam", {"command": "view", "path": "/memories/none"})
    assert info.value.text == "The path /memories/none does not exist. Please provide a valid path."
    f = api.core.write("sam", "/memories/p.md", "Name: Samuel", expected_version=1)
    assert f.version == 2
    with pytest.raises(MemoryConflict):
        api.core.write("sam", "/memories/p.md", "x", expected_version=1)
    assert [v.version for v in api.core.history("sam", "/memories/p.md")] == [1, 2]
    assert "Samuel" in api.core.render("sam")


def test_documents(api):
    d = api.documents.write("run1", "plan.md", "step 1")
    with pytest.raises(DocumentConflict):
        api.documents.write("run1", "plan.md", "step 2")
    assert api.documents.write("run1", "plan.md", "step 2", expected_version=d.version).version == 2
    assert [x.path for x in api.documents.list("run1")] == ["plan.md"]
    api.documents.delete("run1", "plan.md")
    with pytest.raises(NotFound):
        api.documents.read("run1", "plan.md")


def test_export_round_trip(api):
    api.add("I live in Berlin.", "sam")
    lines = list(api.export("sam"))
    assert len(lines) >= 3 and '"kenning-export"' in lines[0]


def test_datasets_list_counts_and_search(api):
    api.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z")
    api.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z")
    api.add("I play the cello.", "alex")
    api.notes.save("alex", "Prefers morning meetings")
    api.notes.save("zoe_2", "Vegetarian")
    api.memory_tool("orgless", {"command": "create", "path": "/memories/a.md", "file_text": "hi"})
    api.notes.save("sam", "The office closes at six", namespace="organization")   # kept apart, not a user
    page = api.datasets()
    assert [d.dataset for d in page.datasets] == ["alex", "orgless", "sam", "zoe_2"] and page.total == 4
    sam = next(d for d in page.datasets if d.dataset == "sam")
    assert (sam.facts, sam.entities, sam.messages, sam.notes) == (1, 2, 2, 0) and sam.last_activity is not None
    assert [d.dataset for d in api.datasets(q="A").datasets] == ["alex", "sam"]
    assert [d.dataset for d in api.datasets(q="_").datasets] == ["zoe_2"]       # a literal, not a wildcard
    second = api.datasets(limit=2, offset=2)
    assert [d.dataset for d in second.datasets] == ["sam", "zoe_2"] and second.total == 4
    with pytest.raises(InputError):
        api.datasets(limit=1000)


def test_jobs_list_newest_first_with_status(api):
    first = api.add_turn("sam", "user", "I live in Oslo.")
    second = api.add_turn("alex", "user", "I play the oboe.")
    api.flush(timeout=30)
    jobs = api.jobs()
    assert [j.request_id for j in jobs] == [second.request_id, first.request_id]
    assert all(j.status == "done" for j in jobs)
    assert [j.request_id for j in api.jobs("sam")] == [first.request_id]
    assert api.jobs(status="failed") == []
    with pytest.raises(InputError):
        api.jobs(status="exploded")


def test_deleting_a_dataset_erases_it_and_touches_no_other(api):
    for dataset in ("sam", "alex", "sam2"):
        api.add("I live in Berlin.", dataset, at="2026-07-01T10:00:00Z", message_id=f"{dataset}-m1")
        api.add("I moved to Lisbon last month.", dataset, at="2026-09-03T10:00:00Z")
        api.notes.save(dataset, "Prefers morning meetings")
        api.memory_tool(dataset, {"command": "create", "path": "/memories/a.md", "file_text": "hi"})
    api.notes.save("sam", "The office closes at six", namespace="organization")
    before = {d.dataset: d for d in api.datasets().datasets}
    counts = api.delete_dataset("sam")
    assert counts["facts"] == 2 and counts["episodes"] == 2 and counts["notes"] == 1 and counts["core_files"] == 1
    assert api.list_facts("sam", include_invalidated=True).total == 0 and api.list_entities("sam") == []
    assert api.notes.list("sam") == [] and api.recall("Where does the user live?", "sam").items == []
    with pytest.raises(NotFound):
        api.messages.get("sam", "sam-m1")
    with pytest.raises(NotFound):                                         # what was erased reads as gone
        api.core.read("sam", "/memories/a.md")
    after = {d.dataset: d for d in api.datasets().datasets}
    assert set(after) == {"alex", "sam2"} and all(after[d] == before[d] for d in after)
    assert [n.text for n in api.notes.list("alex", namespace="organization")] == ["The office closes at six"]
    assert api.recall("Where does the user live?", "sam2").facts[0].object == "lisbon"
    api.core.remove("sam2", "/memories/a.md")
    with pytest.raises(NotFound):
        api.core.read("sam2", "/memories/a.md")
    api.add("I live in Porto.", "sam")                                    # the name can be used again
    assert [f.object for f in api.list_facts("sam").facts] == ["porto"]
    assert api.delete_dataset("nobody") == {k: 0 for k in counts}


def test_conversations_and_the_facts_each_turn_gave(api):
    api.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z", chat="c1", message_id="m1")
    api.add("Nice, Berlin is lovely.", "sam", role="assistant", at="2026-07-01T10:00:05Z", chat="c1",
            message_id="m1a")
    api.add("I moved to Lisbon last month. My sister Maya visits often.", "sam", at="2026-09-03T10:00:00Z",
            chat="c1", message_id="m2")
    api.add("I love hiking.", "sam", at="2026-09-05T10:00:00Z", chat="c2", message_id="m3")
    api.add("I play the cello.", "sam", at="2026-06-01T09:00:00Z", message_id="m0")          # no chat
    api.add("I play chess.", "alex", at="2026-09-06T10:00:00Z", chat="c1")                   # another dataset

    page = api.messages.chats("sam")
    assert page.total == 3
    assert [(c.chat, c.messages, c.user_turns, c.facts) for c in page.chats] == [
        ("c2", 1, 1, 1), ("c1", 3, 2, 3), (None, 1, 1, 1)]                                 # latest activity first
    c1 = page.chats[1]
    assert c1.first_at.isoformat().startswith("2026-07-01T10:00") and c1.last_at.isoformat().startswith("2026-09-03")
    assert [c.chat for c in api.messages.chats("sam", limit=1, offset=1).chats] == ["c1"]

    thread = api.messages.thread("sam", "c1")
    assert [(m.episode_id, m.role) for m in thread.messages] == [
        ("m1", "user"), ("m1a", "assistant"), ("m2", "user")]
    assert thread.total == 3 and [m.episode_id for m in api.messages.thread("sam", "c1", limit=1, offset=2).messages] == ["m2"]
    assert [m.episode_id for m in api.messages.thread("sam", None).messages] == ["m0"]
    assert api.messages.thread("sam", "nope").total == 0

    mined = api.list_facts("sam", message_id="m2", include_invalidated=True).facts
    assert {f.object for f in mined} == {"lisbon", "maya"} and all(f.episode_id == "m2" for f in mined)
    assert api.list_facts("sam", message_id="m1a", include_invalidated=True).total == 0
    assert [f.object for f in api.list_facts("sam", message_id="m1").facts] == []            # berlin: superseded
    assert [f.object for f in api.list_facts("sam", kind="relation").facts] == ["maya"]
    assert {f.object for f in api.list_facts("sam", entity_type="PLACE", include_invalidated=True).facts} == {
        "berlin", "lisbon"}
    by_slot = [f.predicate for f in api.list_facts("sam", order="slot", include_invalidated=True).facts]
    assert by_slot == sorted(by_slot)
    by_time = [f.valid_at for f in api.list_facts("sam", include_invalidated=True).facts]
    assert by_time == sorted(by_time)
    by_anchor = [f.anchor for f in api.list_facts("sam", order="anchor", include_invalidated=True).facts]
    assert by_anchor == sorted(by_anchor, key=lambda a: (a != "user", a))
    with pytest.raises(InputError, match="order.*'time'.*'anchor'"):     # the same refusal, in or out of process
        api.list_facts("sam", order="sideways")
    with pytest.raises(InputError, match="kind.*'attribute'"):
        api.list_facts("sam", kind="rumour")
