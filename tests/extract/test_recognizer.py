"""The learned extractor's candidate stage: the fine-tuned encoder as int8 ONNX, its tags read back as
character spans, and messages longer than it was trained on tagged in windows."""
from __future__ import annotations

import shutil

import pytest

from kenning.errors import ConfigError
from kenning.extract.learned.extractor import MODEL
from kenning.extract.learned.recognizer import MAX_PIECES, Recognizer, decode, tag_names, windows

NAMES = tag_names(["lives_in", "pet"])


@pytest.fixture(scope="module")
def recognizer():
    return Recognizer(MODEL)


def test_tags_read_back_as_spans():
    o, b_city, i_city, b_pet, i_pet = (NAMES.index(n) for n in ("O", "B-lives_in", "I-lives_in", "B-pet", "I-pet"))
    offsets = [(0, 2), (3, 6), (7, 10), (11, 14), (15, 18), (19, 22)]
    assert decode([o, b_city, i_city, o, b_pet, i_pet], offsets, NAMES) == [(3, 10, "lives_in"), (15, 22, "pet")]
    # an I of another class starts its own span; an I after O starts one too
    assert decode([b_city, i_pet, o, i_city], offsets[:4], NAMES) == [(0, 2, "lives_in"), (3, 6, "pet"),
                                                                     (11, 14, "lives_in")]


def test_windows_cover_every_piece_and_end_where_a_sentence_starts():
    starts = list(range(0, 1000, 4))          # 250 pieces, one every 4 characters
    breaks = [0, 400, 520, 900]               # sentences begin at pieces 100, 130 and 225
    got = windows(len(starts), starts, breaks, size=126)
    assert got[0] == (0, 100) and got[1] == (100, 225) and got[-1][1] == 250
    assert all(a < b and b - a <= 126 for a, b in got)
    assert [p for a, b in got for p in range(a, b)] == list(range(250))
    assert windows(300, list(range(300)), [], size=126) == [(0, 126), (126, 252), (252, 300)]   # no sentences


def test_a_long_message_is_tagged_to_its_end(recognizer):
    filler = "The weather was grey and the train was late again, so we waited on the platform for a while. "
    text = filler * 40 + "I live in Lisbon and my dog is called Rufus."
    assert len(recognizer._tokenizer.encode(text).ids) > 6 * MAX_PIECES
    (spans,) = recognizer.spans([text], [[i * len(filler) for i in range(41)]])
    found = {text[s:e]: c for s, e, c in spans}
    assert found.get("Lisbon") == "lives_in" and "Rufus" in found
    assert all(text[s:e].strip() == text[s:e] and e > s for s, e, _ in spans)


def test_spans_become_the_docs_entities(recognizer):
    from kenning.extract.learned.candidates import pipeline

    nlp = pipeline()
    (doc,) = recognizer.tag([nlp("We moved to Porto in May and I adopted a greyhound.")])
    assert {(e.text, e.label_) for e in doc.ents} >= {("Porto", "lives_in")}


def test_a_recognizer_that_is_not_what_was_trained_is_refused(tmp_path):
    for name in ("recognizer.onnx", "recognizer.json"):
        shutil.copyfile(MODEL / name, tmp_path / name)
    with open(tmp_path / "recognizer.onnx", "r+b") as f:
        f.seek(-10, 2)
        f.write(b"\0" * 10)
    with pytest.raises(ConfigError, match="sha256"):
        Recognizer(tmp_path)
    (tmp_path / "recognizer.onnx").unlink()
    with pytest.raises(ConfigError, match="no trained recognizer"):
        Recognizer(tmp_path)
