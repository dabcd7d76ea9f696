"""The bundled embedder and the embedder contract: shape, unit length, meaning, order, dimensions."""
from __future__ import annotations

import numpy as np
import pytest

from kenning import DimensionMismatch, EmbeddingError, Memory, NonFiniteVector
from kenning.embed.base import CachedEmbedder, check_vectors
from kenning.embed.local import MODEL_NAME, LocalEmbedder


@pytest.fixture(scope="module")
def raw(local_embedder):
    """The uncached local model under the shared cache (already loaded)."""
    inner = local_embedder.inner
    assert isinstance(inner, LocalEmbedder)
    return inner


def test_local_embedder_gives_384_dim_unit_vectors(local_embedder):
    assert isinstance(local_embedder, CachedEmbedder)
    assert local_embedder.dim == 384 and local_embedder.name == MODEL_NAME
    vecs = local_embedder.embed_batch(["I live in Lisbon.", "jazz", "x" * 3000, "ü ß 東京"])
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert np.isfinite(vecs).all()


def test_embedding_is_deterministic(raw):
    a = raw.embed("The user lives in Lisbon.")
    b = raw.embed("The user lives in Lisbon.")
    np.testing.assert_array_equal(a, b)


def test_similar_sentences_score_higher_than_unrelated(local_embedder):
    anchor, close, far = local_embedder.embed_batch([
        "I live in Berlin.", "My home is in Berlin, Germany.", "I am allergic to peanuts."])
    assert float(anchor @ close) > float(anchor @ far) + 0.2
    q, home, food = local_embedder.embed_batch([
        "Where does the user live?", "user lives in lisbon. About: lisbon.", "user likes ramen. About: ramen."])
    assert float(q @ home) > float(q @ food)


def test_embed_batch_preserves_order_for_mixed_lengths(raw):
    words = "the user lives in lisbon and loves jazz ramen cello marathon".split()
    texts = [" ".join(words[: (i * 7) % len(words) + 1]) + f" number {i}" + " very" * ((i * 5) % 40)
             for i in range(45)]  # more than one internal batch, lengths shuffled
    batch = raw.embed_batch(texts)
    single = np.stack([raw.embed(t) for t in texts])
    sims = batch @ single.T
    assert (np.argmax(sims, axis=1) == np.arange(len(texts))).all()
    assert np.diag(sims).min() > 0.99


def test_empty_batch_and_non_strings(local_embedder):
    assert local_embedder.embed_batch([]).shape == (0, 384)
    with pytest.raises(EmbeddingError):
        local_embedder.embed_batch(["ok", 3])


def test_cache_returns_the_same_vectors(raw):
    cached = CachedEmbedder(raw, size=8)
    texts = ["one", "two", "three", "one"]
    np.testing.assert_allclose(cached.embed_batch(texts), raw.embed_batch(texts), atol=1e-3)
    np.testing.assert_allclose(cached.embed_batch(texts[::-1]), raw.embed_batch(texts[::-1]), atol=1e-3)
    assert len(cached._cache) == 3


def test_full_cache_still_answers_a_batch_that_mixes_old_and_new_texts(raw):
    cached = CachedEmbedder(raw, size=2)
    cached.embed_batch(["one", "two"])  # the cache is now full; "one" is the oldest entry
    got = cached.embed_batch(["one", "three"])
    np.testing.assert_allclose(got, raw.embed_batch(["one", "three"]), atol=1e-3)


def test_add_keeps_working_after_the_embedding_cache_fills(raw):
    with Memory(":memory:", embedder=CachedEmbedder(raw, size=6)) as mem:
        for text in ["I live in Berlin.", "I love jazz.", "I love ramen.", "I play the cello.", "I love tea.",
                     "I moved to Lisbon."]:
            mem.add(text, "sam")
        assert [f.object for f in mem.list_facts("sam", q="lisbon").facts] == ["lisbon"]


def test_batch_larger_than_the_cache(raw):
    cached = CachedEmbedder(raw, size=2)
    assert cached.embed_batch(["one", "two", "three"]).shape == (3, 384)
    assert len(cached._cache) == 2


def test_cache_is_safe_to_share_between_threads(raw):
    import threading

    cached = CachedEmbedder(raw, size=5)
    words = [f"word {i}" for i in range(12)]
    expected = {w: v for w, v in zip(words, raw.embed_batch(words))}
    barrier, failures = threading.Barrier(4), []

    def worker(k):
        barrier.wait()
        for j in range(6):
            batch = [words[(k * 3 + j + i) % len(words)] for i in range(4)]
            got = cached.embed_batch(batch)
            for text, vec in zip(batch, got):
                if float(vec @ expected[text]) < 0.99:
                    failures.append((k, text))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert failures == []
    assert len(cached._cache) <= 5


# -- the contract that every provider gets for free -------------------------------------------

def test_fake_embedder_is_a_working_plugin(hash_embedder_cls):
    emb = hash_embedder_cls(16)
    vecs = emb.embed_batch(["a b", "c"])
    assert vecs.shape == (2, 16)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_provider_output_of_the_wrong_width_is_refused(hash_embedder_cls):
    with pytest.raises(DimensionMismatch):
        hash_embedder_cls(16, broken="short").embed_batch(["hello"])


def test_provider_output_with_nan_is_refused(hash_embedder_cls):
    with pytest.raises(NonFiniteVector):
        hash_embedder_cls(16, broken="nan").embed_batch(["hello"])


def test_check_vectors_never_pads_or_truncates():
    ok = check_vectors(np.ones(4), 4)
    assert ok.shape == (1, 4) and ok.dtype == np.float32
    for bad in (np.ones(3), np.ones(5), np.ones((2, 3)), np.ones((2, 2, 4))):
        with pytest.raises(DimensionMismatch):
            check_vectors(bad, 4)


# -- stores remember the dimension they were created with ------------------------------------

def test_store_made_with_the_real_embedder_refuses_another_dimension(db_path, hash_embedder_cls, local_embedder):
    with Memory(str(db_path)) as mem:
        mem.add("I live in Berlin.", "sam")
    with pytest.raises(DimensionMismatch) as info:
        Memory(str(db_path), embedder=hash_embedder_cls(16))
    assert "384" in str(info.value) and "16" in str(info.value)
    with Memory(str(db_path), embedder=None) as plain:  # no embedder: still readable
        assert plain.list_facts("sam").total == 1
    with Memory(str(db_path)) as again:
        assert again.list_facts("sam").total == 1


def test_store_made_with_a_fake_embedder_refuses_the_real_one(db_path, hash_embedder_cls, local_embedder):
    with Memory(str(db_path), embedder=hash_embedder_cls(16)) as mem:
        mem.add("I live in Berlin.", "sam")
    with pytest.raises(DimensionMismatch):
        Memory(str(db_path))
    with Memory(str(db_path), embedder=hash_embedder_cls(16, name="other-16")) as same_dim:
        assert same_dim.list_facts("sam").total == 1


def test_embedder_with_broken_output_stores_nothing(hash_embedder_cls):
    with Memory(":memory:", embedder=hash_embedder_cls(16, broken="nan")) as mem:
        with pytest.raises(NonFiniteVector):
            mem.add("I live in Berlin.", "sam")
        assert mem.list_facts("sam", include_invalidated=True).total == 0


def test_token_states_line_up_with_the_text_and_pool_to_the_embedding():
    fresh = LocalEmbedder()
    text = "My sister Ana moved to Lisbon."
    (vectors, offsets), = fresh.token_states([text])
    assert vectors.shape == (len(offsets), 384) and len(offsets) >= 6
    assert [text[a:b].lower() for a, b in offsets[:3]] == ["my", "sister", "ana"]     # no [CLS], no [SEP]
    assert text in fresh._recent
    shared = fresh.embed(text)            # served from the forward pass the states came from
    assert text not in fresh._recent
    again = LocalEmbedder().embed(text)   # computed on its own
    assert np.allclose(shared, again, atol=1e-5)


def test_the_learned_extractor_reads_with_the_memorys_own_model():
    from kenning.embed.base import CachedEmbedder

    with Memory(":memory:", extractor="learned") as memory:
        assert isinstance(memory.embedder, CachedEmbedder)
        assert memory.extractor.encoder is memory.embedder.inner
