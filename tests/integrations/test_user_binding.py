"""UserMemoryBinding, the one end user every framework adapter acts for: its checks and its verbs."""
from __future__ import annotations

import asyncio

import pytest

from kenning import InputError, NotFound, PermissionDenied
from kenning.integrations._user import UserMemoryBinding, turn_ref


def test_a_users_memory_cannot_be_bound_to_another_user(mem):
    with pytest.raises(PermissionDenied):
        UserMemoryBinding(mem.as_user("ana"), "sam")
    assert UserMemoryBinding(mem.as_user("sam"), "sam").dataset == "sam"
    for bad in ("", None, "a/b"):
        with pytest.raises(InputError):
            UserMemoryBinding(mem, bad)


def test_remember_recall_forget_a_note_and_a_fact(mem):
    sam = UserMemoryBinding(mem, "sam")
    note = sam.remember("Sam's dog is called Biscuit.")
    mem.add("I live in Porto.", "sam")
    assert "Biscuit" in sam.context("What is my dog called?") and "porto" in sam.context("Where do I live?")
    fact = mem.list_facts("sam").facts[0].fact_id
    assert (sam.forget(note.note_id), sam.forget(fact)) == ("note", "fact")
    assert "Biscuit" not in sam.context("What is my dog called?")
    with pytest.raises(NotFound):
        sam.forget("n_nothing")
    assert UserMemoryBinding(mem, "ana").context("dog Biscuit Porto") == ""


def test_an_over_long_question_is_cut_to_what_recall_takes(mem):
    sam = UserMemoryBinding(mem, "sam")
    mem.add("I live in Porto.", "sam")
    assert "porto" in sam.context("Where do I live? " + "and so on " * 12_000)


def test_turns_are_queued_once_per_client_ref_and_the_async_twins_agree(mem):
    sam = UserMemoryBinding(mem, "sam")
    ref = turn_ref("t1", "m1")
    assert ref == turn_ref("t1", "m1") != turn_ref("t1", "m2")
    first = sam.add_turn("user", "I play the cello.", chat="t1", client_ref=ref)
    again = asyncio.run(sam.aadd_turn("user", "I play the cello.", chat="t1", client_ref=ref))
    assert first.status == "processing" and again.already_exists and again.request_id == first.request_id
    mem.flush(timeout=60)
    assert [m.content for m in sam.thread("t1").messages] == ["I play the cello."]
    assert "cello" in asyncio.run(sam.acontext("What instrument do I play?"))
