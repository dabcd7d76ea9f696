"""Archival notes through ``mem.notes``: save, search, list, forget, save_extracted, namespaces,
size limits, embeddings filled later, and tenancy.

Real stores (each test on SQLite and PostgreSQL) and the real bundled embedder throughout.
To count embedder calls the real embedder is wrapped in a small ``Embedder`` subclass
handed to ``Memory`` the way any provider is.
"""
from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from kenning import EmptyText, Embedder, InputError, Memory, Note, NoteHit, NotFound, Scope, Settings, TextTooLarge

# Keyword evidence needs words that are rare in the index: keyword tests save these first.
FILLER = ["We talked about the weather today.", "Dinner was pasta with friends.",
          "The meeting moved to Tuesday.", "I watched a documentary about whales.",
          "My sister called in the evening."]
LISBON = "The user works in the Lisbon office."
LISBON_NEAR = "The user works at the Lisbon office."  # cosine ≈ 0.99 with LISBON
DOG = "The user has a dog named Rex."
TEA = "Prefers tea over coffee."
TEA_PARAPHRASE = "Likes tea more than coffee."        # cosine ≈ 0.906 with TEA: just under 0.92


def sc(dataset: str, project: str = "default", environment: str = "default") -> Scope:
    return Scope(project, environment, dataset)


class CountingEmbedder(Embedder):
    """The real embedder, counting the provider calls (one per ``embed_batch``)."""

    def __init__(self, inner: Embedder):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[list[str]] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed_batch(texts)


@pytest.fixture
def counting(local_embedder):
    return CountingEmbedder(local_embedder)


@pytest.fixture
def mem(new_memory, local_embedder):
    """Each test runs on both stores (see conftest: the conformance suite)."""
    return new_memory()


def embedded(mem, kind: str = "note", dataset: str = "sam") -> list[str]:
    """Ids of the dataset's remembered notes that have a vector: a search deep enough returns every one."""
    dim = mem.store.embedding_dim() or 384
    query = np.full(dim, 1 / np.sqrt(dim), dtype=np.float32)
    return sorted(key for key, _ in mem.store.vector_search(sc(dataset), kind, query, 10_000))


def fill(mem, dataset="sam", **tenant):
    for text in FILLER:
        mem.notes.save(dataset, text, **tenant)


def cos(emb, a, b):
    return float(emb.embed(a) @ emb.embed(b))


def note_texts(notes):
    return [n.text for n in notes]


def hit_texts(hits):
    return [h.note.text for h in hits]


# -- save, list, search -----------------------------------------------------------------------------

def test_save_returns_the_note_and_list_shows_it(mem):
    note = mem.notes.save("sam", LISBON)
    assert isinstance(note, Note)
    assert note.text == LISBON and note.namespace == "user" and note.note_id
    assert note.forgotten_at is None and note.superseded_by is None
    assert [n.note_id for n in mem.notes.list("sam")] == [note.note_id]


def test_list_is_in_saving_order_and_pages(mem):
    saved = [mem.notes.save("sam", t).note_id for t in FILLER]
    assert [n.note_id for n in mem.notes.list("sam")] == saved
    assert [n.note_id for n in mem.notes.list("sam", limit=2, offset=1)] == saved[1:3]


@pytest.mark.parametrize("limit, offset", [(0, 0), (101, 0), (True, 0), (10, -1), (10, 1.5)])
def test_list_refuses_bad_paging(mem, limit, offset):
    with pytest.raises(InputError):
        mem.notes.list("sam", limit=limit, offset=offset)


def test_search_ranks_by_meaning_and_words_and_says_why(mem):
    fill(mem)
    mem.notes.save("sam", LISBON)
    mem.notes.save("sam", DOG)
    hits = mem.notes.search("sam", "Lisbon office")
    assert all(isinstance(h, NoteHit) for h in hits)
    assert hits[0].note.text == LISBON
    assert {"vector", "keyword"} <= set(hits[0].signals)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    meaning = mem.notes.search("sam", "where is their workplace")  # no shared word
    assert meaning[0].note.text == LISBON and "vector" in meaning[0].signals


def test_search_limit(mem):
    fill(mem)
    query = "weather dinner meeting whales sister"
    assert len(mem.notes.search("sam", query, limit=100)) >= 3
    assert len(mem.notes.search("sam", query, limit=2)) == 2


def test_keyword_search_works_without_an_embedder(plain):
    fill(plain)
    plain.notes.save("sam", LISBON)
    hits = plain.notes.search("sam", "Lisbon")
    assert hit_texts(hits) == [LISBON] and set(hits[0].signals) == {"keyword"}


def test_search_on_an_unknown_dataset_is_empty(mem):
    mem.notes.save("sam", LISBON)
    assert mem.notes.search("nobody", "Lisbon office") == []
    assert mem.notes.list("nobody") == []


@pytest.mark.parametrize("query", ["", "   ", None])
def test_empty_search_query_is_refused(mem, query):
    with pytest.raises(InputError):
        mem.notes.search("sam", query)


@pytest.mark.parametrize("limit", [0, 101, True, "5"])
def test_search_limit_out_of_range_is_refused(mem, limit):
    with pytest.raises(InputError):
        mem.notes.search("sam", "Lisbon", limit=limit)


def test_a_100k_character_query_works(mem):
    fill(mem)
    mem.notes.save("sam", LISBON)
    query = ("Lisbon office " * 8000)[:100_000]
    assert len(query) == 100_000
    assert mem.notes.search("sam", query)[0].note.text == LISBON


def test_saving_the_same_text_twice_does_not_crash(mem):
    first = mem.notes.save("sam", LISBON)
    again = mem.notes.save("sam", LISBON)
    assert again.text == LISBON
    assert first.note_id in [n.note_id for n in mem.notes.list("sam")]


# -- namespaces ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("namespace", ["user", "project", "organization", "agent:planner", "chat:c-1",
                                       "agent:a.b@c"])
def test_valid_namespaces_are_kept(mem, namespace):
    note = mem.notes.save("sam", LISBON, namespace=namespace)
    assert note.namespace == namespace
    assert [n.namespace for n in mem.notes.list("sam", namespace=namespace)] == [namespace]


@pytest.mark.parametrize("namespace", ["", "bogus", "User", "agent:", "chat:", "agent", "agent:a b",
                                       "agent:" + "x" * 129, None])
def test_an_invalid_namespace_is_refused_everywhere(mem, namespace):
    with pytest.raises(InputError):
        mem.notes.save("sam", LISBON, namespace=namespace)
    with pytest.raises(InputError):
        mem.notes.save_extracted("sam", [LISBON], namespace=namespace)
    if namespace is not None:  # None means "every namespace" for search and list
        with pytest.raises(InputError):
            mem.notes.search("sam", "Lisbon", namespace=namespace)
        with pytest.raises(InputError):
            mem.notes.list("sam", namespace=namespace)
    assert mem.notes.list("sam") == []


def test_a_namespace_list_with_an_invalid_member_is_refused(mem):
    with pytest.raises(InputError):
        mem.notes.search("sam", "Lisbon", namespace=["user", "bogus"])


def test_a_non_text_namespace_is_refused_by_search(mem):
    for call in (lambda: mem.notes.save("sam", LISBON, namespace=7), lambda: mem.notes.list("sam", namespace=7),
                 lambda: mem.notes.search("sam", "Lisbon", namespace=7)):
        with pytest.raises(InputError):
            call()


def test_search_and_list_filter_by_namespace(mem):
    fill(mem)
    mem.notes.save("sam", LISBON)
    mem.notes.save("sam", "Agent reminder: renew the Lisbon office badge.", namespace="agent:a1")
    mem.notes.save("sam", "Chat note: Lisbon office parking is full.", namespace="chat:c1")
    assert len(hit_texts(mem.notes.search("sam", "Lisbon office"))) == 3
    assert hit_texts(mem.notes.search("sam", "Lisbon office", namespace="user")) == [LISBON]
    assert hit_texts(mem.notes.search("sam", "Lisbon office", namespace="agent:a1")) == [
        "Agent reminder: renew the Lisbon office badge."]
    both = hit_texts(mem.notes.search("sam", "Lisbon office", namespace=["agent:a1", "chat:c1"]))
    assert sorted(both) == sorted(["Agent reminder: renew the Lisbon office badge.",
                                   "Chat note: Lisbon office parking is full."])
    assert mem.notes.search("sam", "Lisbon office", namespace="agent:other") == []
    assert note_texts(mem.notes.list("sam", namespace="chat:c1")) == ["Chat note: Lisbon office parking is full."]
    assert len(mem.notes.list("sam")) == len(FILLER) + 3


def test_namespace_filter_without_an_embedder(plain):
    fill(plain)
    plain.notes.save("sam", LISBON)
    plain.notes.save("sam", "Agent reminder: renew the Lisbon office badge.", namespace="agent:a1")
    assert len(plain.notes.search("sam", "Lisbon office")) == 2  # unfiltered: keyword finds both
    assert hit_texts(plain.notes.search("sam", "Lisbon office", namespace="user")) == [LISBON]


# -- forget -------------------------------------------------------------------------------------------

def test_forget_hides_the_note_but_keeps_it_traceable(mem):
    fill(mem)
    old = mem.notes.save("sam", LISBON)
    new = mem.notes.save("sam", "The user now works in the Porto office.")
    mem.notes.forget("sam", old.note_id, superseded_by=new.note_id)

    assert LISBON not in hit_texts(mem.notes.search("sam", "Lisbon office"))
    assert LISBON not in note_texts(mem.notes.list("sam"))
    assert LISBON not in [n.text for n in mem.recall("Lisbon office", "sam").notes]
    assert "Lisbon" not in mem.recall("Lisbon office", "sam").context

    kept = {n.note_id: n for n in mem.notes.list("sam", include_forgotten=True)}
    assert kept[old.note_id].forgotten_at is not None
    assert kept[old.note_id].superseded_by == new.note_id
    assert kept[new.note_id].forgotten_at is None
    assert mem.store.get_notes(sc("sam"), [old.note_id])[0].text == LISBON


def test_forget_without_a_successor(mem):
    note = mem.notes.save("sam", LISBON)
    mem.notes.forget("sam", note.note_id)
    assert mem.notes.list("sam") == []
    (kept,) = mem.notes.list("sam", include_forgotten=True)
    assert kept.forgotten_at is not None and kept.superseded_by is None


def test_forget_twice_keeps_the_first_forgetting(mem):
    note = mem.notes.save("sam", LISBON)
    mem.notes.forget("sam", note.note_id)
    first = mem.notes.list("sam", include_forgotten=True)[0].forgotten_at
    mem.notes.forget("sam", note.note_id)
    assert mem.notes.list("sam", include_forgotten=True)[0].forgotten_at == first


def test_forgetting_an_unknown_note_raises_not_found(mem):
    with pytest.raises(NotFound):
        mem.notes.forget("sam", "n_nope")


def test_superseded_by_an_unknown_note_raises_not_found_and_forgets_nothing(mem):
    note = mem.notes.save("sam", LISBON)
    with pytest.raises(NotFound):
        mem.notes.forget("sam", note.note_id, superseded_by="n_nope")
    assert note_texts(mem.notes.list("sam")) == [LISBON]


def test_another_datasets_notes_cannot_be_forgotten_or_cited(mem):
    mine = mem.notes.save("sam", LISBON)
    theirs = mem.notes.save("alex", DOG)
    with pytest.raises(NotFound):
        mem.notes.forget("alex", mine.note_id)
    with pytest.raises(NotFound):
        mem.notes.forget("sam", mine.note_id, superseded_by=theirs.note_id)
    with pytest.raises(NotFound):
        mem.notes.forget("sam", mine.note_id, project="acme")
    assert note_texts(mem.notes.list("sam")) == [LISBON]


def test_a_forgotten_text_can_be_saved_again(mem):
    note = mem.notes.save("sam", LISBON)
    mem.notes.forget("sam", note.note_id)
    again = mem.notes.save("sam", LISBON)
    assert again.note_id != note.note_id
    assert note_texts(mem.notes.list("sam")) == [LISBON]


# -- save_extracted -----------------------------------------------------------------------------------

def test_save_extracted_embeds_the_batch_in_one_call(counting, new_memory):
    with new_memory(embedder=counting) as mem:
        saved = mem.notes.save_extracted("sam", [LISBON, DOG, TEA])
        assert note_texts(saved) == [LISBON, DOG, TEA]
        assert len(counting.calls) == 1 and len(counting.calls[0]) == 3
        assert len(embedded(mem)) == 3


def test_save_extracted_skips_near_duplicates_of_kept_notes(counting, new_memory):
    assert cos(counting.inner, LISBON, LISBON_NEAR) >= 0.92 > cos(counting.inner, LISBON, DOG)
    with new_memory(embedder=counting) as mem:
        mem.notes.save("sam", LISBON)
        counting.calls.clear()
        saved = mem.notes.save_extracted("sam", [LISBON_NEAR, DOG, LISBON])
        assert note_texts(saved) == [DOG]
        assert len(counting.calls) == 1
        assert sorted(note_texts(mem.notes.list("sam"))) == sorted([LISBON, DOG])


def test_save_extracted_skips_near_duplicates_within_the_batch(counting, new_memory):
    with new_memory(embedder=counting) as mem:
        saved = mem.notes.save_extracted("sam", [LISBON, LISBON_NEAR, DOG, DOG])
        assert note_texts(saved) == [LISBON, DOG]
        assert len(counting.calls) == 1


def test_save_extracted_dedupes_per_namespace(mem):
    mem.notes.save("sam", LISBON, namespace="agent:a1")
    assert note_texts(mem.notes.save_extracted("sam", [LISBON_NEAR])) == [LISBON_NEAR]


def test_save_extracted_ignores_forgotten_notes(mem):
    note = mem.notes.save("sam", LISBON)
    mem.notes.forget("sam", note.note_id)
    assert note_texts(mem.notes.save_extracted("sam", [LISBON_NEAR])) == [LISBON_NEAR]


def test_default_threshold_is_0_92(mem, local_embedder):
    assert 0.9 < cos(local_embedder, TEA, TEA_PARAPHRASE) < 0.92
    mem.notes.save("sam", TEA)
    assert note_texts(mem.notes.save_extracted("sam", [TEA_PARAPHRASE])) == [TEA_PARAPHRASE]


@pytest.mark.parametrize("threshold", [0, 0.0, -0.1, 1.0001, 2.0, 9e300, float("nan"), float("inf"), True, "0.9"])
def test_a_dedupe_threshold_outside_0_to_1_is_refused_and_nothing_is_saved(mem, threshold):
    """Above 1 once meant "keep every text", which let a caller skip the dedupe on thousands of
    texts; the threshold is a cosine similarity, so (0, 1] is all it can be."""
    with pytest.raises(InputError, match="dedupe_threshold"):
        mem.notes.save_extracted("sam", [TEA], dedupe_threshold=threshold)
    assert mem.notes.list("sam") == []


def test_a_batch_over_the_cap_is_refused_whole(local_embedder, new_memory):
    with new_memory(settings=Settings(max_notes_per_call=3)) as mem:
        with pytest.raises(InputError, match="at most 3 texts"):
            mem.notes.save_extracted("sam", [f"note number {i}" for i in range(4)])
        assert mem.notes.list("sam") == []
        assert len(mem.notes.save_extracted("sam", [TEA, LISBON, "A third thing entirely."])) == 3


def test_a_large_batch_dedupes_within_itself_and_against_kept_notes(mem):
    mem.notes.save("sam", LISBON)
    texts = [LISBON_NEAR, TEA, TEA] + [f"Reminder {i}: water plant {i} on day {i}." for i in range(200)]
    saved = note_texts(mem.notes.save_extracted("sam", texts, dedupe_threshold=1.0))
    assert LISBON_NEAR in saved and saved.count(TEA) == 1 and len(saved) == 1 + 1 + 200
    again = note_texts(mem.notes.save_extracted("sam", [LISBON_NEAR, TEA_PARAPHRASE], dedupe_threshold=0.95))
    assert again == [TEA_PARAPHRASE]   # LISBON_NEAR is kept now; the paraphrase is under 0.95


def test_dedupe_threshold_argument_overrides_the_setting(mem):
    mem.notes.save("sam", TEA)
    assert mem.notes.save_extracted("sam", [TEA_PARAPHRASE], dedupe_threshold=0.9) == []
    assert note_texts(mem.notes.save_extracted("sam", [LISBON_NEAR], dedupe_threshold=0.9)) == [LISBON_NEAR]
    assert note_texts(mem.notes.save_extracted("sam", [LISBON], dedupe_threshold=0.999)) == [LISBON]


def test_note_dedupe_threshold_setting(local_embedder, monkeypatch, new_memory):
    with new_memory(settings=Settings(note_dedupe_threshold=0.9)) as mem:
        mem.notes.save("sam", TEA)
        assert mem.notes.save_extracted("sam", [TEA_PARAPHRASE]) == []
    monkeypatch.setenv("KENNING_NOTE_DEDUPE_THRESHOLD", "0.9")
    with new_memory() as mem:
        mem.notes.save("sam", TEA)
        assert mem.notes.save_extracted("sam", [TEA_PARAPHRASE]) == []


def test_save_extracted_of_nothing_saves_and_embeds_nothing(counting, new_memory):
    with new_memory(embedder=counting) as mem:
        assert mem.notes.save_extracted("sam", []) == []
        assert counting.calls == []


@pytest.mark.parametrize("texts", [LISBON, None, {"a": 1}, 3])
def test_save_extracted_takes_a_list(mem, texts):
    with pytest.raises(InputError):
        mem.notes.save_extracted("sam", texts)
    assert mem.notes.list("sam") == []


def test_one_bad_text_saves_none_of_the_batch(mem):
    with pytest.raises(TextTooLarge):
        mem.notes.save_extracted("sam", [LISBON, "x" * 100_001])
    with pytest.raises(EmptyText):
        mem.notes.save_extracted("sam", [LISBON, "  "])
    assert mem.notes.list("sam") == []


def test_save_extracted_without_an_embedder_skips_exact_repeats_only(plain):
    plain.notes.save("sam", LISBON)
    assert note_texts(plain.notes.save_extracted("sam", [LISBON, LISBON_NEAR])) == [LISBON_NEAR]


def test_save_extracted_dedupes_against_a_pending_note(local_embedder, store_url):
    url = store_url
    with Memory(url, embedder=None) as plain:
        plain.notes.save("sam", LISBON)
    with Memory(url) as mem:
        assert mem.notes.save_extracted("sam", [LISBON_NEAR]) == []


# -- size --------------------------------------------------------------------------------------------

def test_a_note_over_100k_characters_is_refused(mem):
    with pytest.raises(TextTooLarge):
        mem.notes.save("sam", "x" * 100_001)
    assert mem.notes.list("sam", include_forgotten=True) == []


def test_a_note_of_100k_characters_is_kept_whole(mem):
    note = mem.notes.save("sam", "Lisbon office. " + "x" * (100_000 - 15))
    assert len(mem.notes.list("sam")[0].text) == 100_000 == len(note.text)
    assert mem.notes.search("sam", "Lisbon office")[0].note.note_id == note.note_id


def test_max_note_chars_setting(local_embedder, new_memory):
    with new_memory(settings=Settings(max_note_chars=50)) as mem:
        mem.notes.save("sam", "x" * 50)
        with pytest.raises(TextTooLarge):
            mem.notes.save("sam", "y" * 51)
        assert len(mem.notes.list("sam")) == 1


@pytest.mark.parametrize("text, error", [("", EmptyText), (" \n ", EmptyText), (None, InputError),
                                         (42, InputError)])
def test_empty_or_non_text_notes_are_refused(mem, text, error):
    with pytest.raises(error):
        mem.notes.save("sam", text)


# -- embeddings filled later --------------------------------------------------------------------------

def test_notes_saved_without_an_embedder_are_embedded_later(local_embedder, store_url):
    url = store_url
    with Memory(url, embedder=None) as plain:
        note = plain.notes.save("sam", LISBON)
        assert [key for _, key, _ in plain.store.pending("note", 10)] == [note.note_id]
        assert embedded(plain) == []
    with Memory(url) as mem:
        mem.embed_pending()
        assert mem.store.pending("note", 10) == []
        hits = mem.notes.search("sam", "where is their workplace")  # no shared word: the vector finds it
        assert hit_texts(hits) == [LISBON] and "vector" in hits[0].signals


class EditingEmbedder(CountingEmbedder):
    """Edits a note's text from another connection while its vector is being computed (a racing writer)."""

    def __init__(self, inner, path, note_id, new_text):
        super().__init__(inner)
        self.path, self.note_id, self.new_text = path, note_id, new_text

    def _embed(self, texts):
        if not self.calls:
            with sqlite3.connect(self.path) as other:
                other.execute("UPDATE notes SET text = ? WHERE note_id = ?", (self.new_text, self.note_id))
        return super()._embed(texts)


def test_embed_pending_writes_no_vector_for_a_text_that_changed_meanwhile(tmp_path, local_embedder):
    path = tmp_path / "k.db"
    with Memory(str(path), embedder=None) as plain:
        note = plain.notes.save("sam", LISBON)
    racing = EditingEmbedder(local_embedder, path, note.note_id, DOG)
    with Memory(str(path), embedder=racing) as mem:
        mem.embed_pending()
        assert racing.calls[0] == [LISBON]
        assert [(key, text) for _, key, text in mem.store.pending("note", 10)] == [(note.note_id, DOG)]
        mem.embed_pending()  # the edited text is embedded on the next pass
        assert mem.store.pending("note", 10) == []
        ((key, score),) = mem.store.vector_search(sc("sam"), "note", local_embedder.embed(DOG), 10)
        assert key == note.note_id and score > 0.99


def test_set_vector_refuses_a_stale_text(mem, local_embedder, new_memory):
    with new_memory(embedder=None) as plain:
        note = plain.notes.save("sam", LISBON)
        plain.store.check_embedding_model(local_embedder.name, local_embedder.dim)
        vec = local_embedder.embed("an older text")
        assert plain.store.set_vector("note", sc("sam"), note.note_id, "an older text", vec) is False
        assert [key for _, key, _ in plain.store.pending("note", 10)] == [note.note_id]
        assert plain.store.set_vector("note", sc("sam"), note.note_id, LISBON, local_embedder.embed(LISBON))
        assert plain.store.pending("note", 10) == []


# -- tenancy ----------------------------------------------------------------------------------------

TENANTS = [dict(dataset="alex"), dict(project="acme"), dict(environment="prod"),
           dict(project="acme", environment="prod")]


def _other(tenant):
    tenant = dict(tenant)
    return tenant.pop("dataset", "sam"), tenant


@pytest.mark.parametrize("tenant", TENANTS)
def test_another_tenant_sees_no_notes(mem, tenant):
    fill(mem)
    note = mem.notes.save("sam", LISBON)
    dataset, kw = _other(tenant)
    fill(mem, dataset, **kw)
    assert LISBON in hit_texts(mem.notes.search("sam", "Lisbon office"))
    assert LISBON not in hit_texts(mem.notes.search(dataset, "Lisbon office", **kw))
    assert LISBON not in note_texts(mem.notes.list(dataset, include_forgotten=True, **kw))
    assert LISBON not in [n.text for n in mem.recall("Lisbon office", dataset, **kw).notes]
    with pytest.raises(NotFound):
        mem.notes.forget(dataset, note.note_id, **kw)


@pytest.mark.parametrize("tenant", TENANTS)
def test_another_tenant_sees_no_notes_by_keyword(plain, tenant):
    fill(plain)
    plain.notes.save("sam", LISBON)
    dataset, kw = _other(tenant)
    fill(plain, dataset, **kw)
    assert hit_texts(plain.notes.search("sam", "Lisbon")) == [LISBON]
    assert plain.notes.search(dataset, "Lisbon", **kw) == []
    assert plain.recall("Lisbon", dataset, **kw).notes == []


def test_near_duplicates_in_another_dataset_do_not_block_saving(mem):
    mem.notes.save("alex", LISBON)
    mem.notes.save("sam", LISBON, project="acme")
    assert note_texts(mem.notes.save_extracted("sam", [LISBON])) == [LISBON]
