"""Bad input: every refusal is a KenningError subclass with a message that says how to fix it,
and a refused write stores nothing."""
from __future__ import annotations

import inspect
from datetime import timedelta

import pytest

import kenning
from kenning import (ConfigError, EmptyText, InputError, InvalidScope, InvalidTime, KenningError, Memory,
                     NotFound, Settings, TextTooLarge, errors)
from kenning.model import Scope


def _error_classes():
    return [obj for _, obj in inspect.getmembers(errors, inspect.isclass)
            if issubclass(obj, BaseException) and obj.__module__ == errors.__name__]


def test_every_error_class_subclasses_kenning_error():
    classes = _error_classes()
    assert len(classes) >= 15
    for cls in classes:
        assert issubclass(cls, KenningError), cls


def test_error_tree_shape():
    assert issubclass(InputError, ValueError)
    assert issubclass(NotFound, KeyError)
    for cls in (TextTooLarge, EmptyText, InvalidTime, InvalidScope):
        assert issubclass(cls, InputError)
    assert issubclass(errors.DimensionMismatch, errors.EmbeddingError)
    assert issubclass(errors.NonFiniteVector, errors.EmbeddingError)
    assert issubclass(errors.MigrationError, errors.StoreError)
    assert issubclass(errors.DuplicateFact, errors.StoreError)
    assert KenningError.__name__ != "MemoryError"


def test_every_error_class_is_public():
    for cls in _error_classes():
        assert getattr(kenning, cls.__name__) is cls
        assert cls.__name__ in kenning.__all__


def test_not_found_message_is_not_quoted():
    assert str(NotFound("no fact 'x'")) == "no fact 'x'"
    assert str(NotFound()) == "not found"


# -- the write path refuses bad input and stores nothing -------------------------------------

def _nothing_stored(mem, dataset="sam"):
    assert mem.list_facts(dataset, include_invalidated=True).total == 0
    assert mem.list_entities(dataset) == []


def test_text_over_the_limit_is_refused_and_nothing_is_stored(mem):
    text = "I live in Berlin. " * 6000
    assert len(text) > 100_000
    with pytest.raises(TextTooLarge) as info:
        mem.add(text, "sam", message_id="m-big")
    assert "100,000" in str(info.value)
    _nothing_stored(mem)
    assert mem.store.get_episode(Scope("default", "default", "sam"), "m-big") is None


def test_text_at_the_limit_is_accepted(local_embedder):
    with Memory(":memory:", settings=Settings(max_text_chars=40)) as mem:
        mem.add("I live in Berlin." + " " * 23, "sam")  # exactly 40
        with pytest.raises(TextTooLarge):
            mem.add("I live in Berlin." + " " * 24, "sam")
        assert mem.list_facts("sam").total == 1


@pytest.mark.parametrize("text", ["", " ", "\n\t  \n"])
def test_empty_text_is_refused(mem, text):
    with pytest.raises(EmptyText):
        mem.add(text, "sam")
    _nothing_stored(mem)


@pytest.mark.parametrize("text", [None, 42, b"I live in Berlin", ["I live in Berlin"]])
def test_text_must_be_a_string(mem, text):
    with pytest.raises(InputError):
        mem.add(text, "sam")


@pytest.mark.parametrize("role", ["User", "bot", "", None, "human"])
def test_bad_role_is_refused(mem, role):
    with pytest.raises(InputError) as info:
        mem.add("I live in Berlin.", "sam", role=role)
    assert "user" in str(info.value)
    _nothing_stored(mem)


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "not a time", "", 12345, 1.5])
def test_bad_time_is_refused(mem, value):
    with pytest.raises(InvalidTime):
        mem.add("I live in Berlin.", "sam", at=value)
    with pytest.raises(InvalidTime):
        mem.list_facts("sam", as_of=value)
    _nothing_stored(mem)


def test_message_time_in_the_future_is_refused(mem, now):
    with pytest.raises(InvalidTime):
        mem.add("I live in Berlin.", "sam", at=now + timedelta(days=365 * 70))
    _nothing_stored(mem)


# -- scope names ----------------------------------------------------------------------------------

BAD_NAMES = ["", " ", "a b", "../x", "x/y", "-lead", ".hidden", "a" * 129, "tab\there", "é", None, 7]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_dataset_name_is_refused_everywhere(mem, name):
    calls = [
        lambda: mem.add("I live in Berlin.", name),
        lambda: mem.recall("where", name),
        lambda: mem.list_facts(name),
        lambda: mem.list_entities(name),
        lambda: mem.delete_fact(name, "f_1"),
    ]
    for call in calls:
        with pytest.raises(InvalidScope) as info:
            call()
        assert "dataset" in str(info.value)


@pytest.mark.parametrize("field", ["project", "environment"])
@pytest.mark.parametrize("name", ["a b", "../x", ""])
def test_invalid_project_or_environment_is_refused(mem, field, name):
    kwargs = {field: name}
    if name == "":
        # "" falls back to the default, like None: only a present bad name is an error
        mem.list_facts("sam", **kwargs)
        return
    with pytest.raises(InvalidScope) as info:
        mem.list_facts("sam", **kwargs)
    assert field in str(info.value)
    with pytest.raises(InvalidScope):
        mem.add("I live in Berlin.", "sam", **kwargs)


def test_valid_names_are_accepted(mem):
    for name in ["sam", "user_42", "a", "A9", "org:team@x.y-z", "a" * 128]:
        assert mem.list_facts(name).total == 0


# -- reads of unknown things ---------------------------------------------------------------------

def test_unknown_dataset_lists_an_empty_page(mem):
    page = mem.list_facts("nobody")
    assert page.facts == [] and page.total == 0
    assert mem.list_facts("nobody", include_invalidated=True, q="berlin", as_of="2025-01-01T00:00:00Z").total == 0


def test_unknown_dataset_has_no_entities(mem):
    assert mem.list_entities("nobody") == []


def test_unknown_dataset_recalls_nothing(mem):
    res = mem.recall("Where does the user live?", "nobody")
    assert res.facts == [] and res.context == ""


def test_delete_of_an_unknown_fact_raises_not_found(mem):
    with pytest.raises(NotFound) as info:
        mem.delete_fact("sam", "f_does_not_exist")
    assert "f_does_not_exist" in str(info.value)


def test_delete_of_another_datasets_fact_raises_not_found(mem):
    r = mem.add("I live in Berlin.", "sam")
    with pytest.raises(NotFound):
        mem.delete_fact("alex", r.memory_ids[0])
    with pytest.raises(NotFound):
        mem.delete_fact("sam", r.memory_ids[0], environment="prod")
    assert mem.list_facts("sam").total == 1


# -- limits -----------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [0, 101, -1, 1000])
def test_limit_out_of_range_is_refused(mem, limit):
    with pytest.raises(InputError) as info:
        mem.list_facts("sam", limit=limit)
    assert "100" in str(info.value)
    with pytest.raises(InputError):
        mem.recall("where", "sam", limit=limit)


@pytest.mark.parametrize("limit", [1, 100])
def test_limit_bounds_are_accepted(mem, limit):
    mem.list_facts("sam", limit=limit)
    mem.recall("where", "sam", limit=limit)


@pytest.mark.parametrize("limit", [None, "10", 2.5])
def test_list_facts_limit_must_be_an_integer(mem, limit):
    with pytest.raises(InputError):
        mem.list_facts("sam", limit=limit)


@pytest.mark.parametrize("limit", [None, "abc"])
def test_recall_limit_must_be_an_integer(mem, limit):
    with pytest.raises(InputError):
        mem.recall("where", "sam", limit=limit)


@pytest.mark.parametrize("offset", [-1, None, "0"])
def test_bad_offset_is_refused(mem, offset):
    with pytest.raises(InputError):
        mem.list_facts("sam", offset=offset)


@pytest.mark.parametrize("query", ["", "   ", None])
def test_empty_recall_query_is_refused(mem, query):
    with pytest.raises(InputError):
        mem.recall(query, "sam")


# -- configuration ---------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["ftp://host/x", "mysql://u@h/db"])
def test_unusable_store_url_raises_config_error(url, local_embedder):
    with pytest.raises(ConfigError) as info:
        Memory(url)
    assert "sqlite" in str(info.value)


def test_unreachable_postgres_raises_config_error_naming_it(tmp_path, local_embedder):
    url = f"postgresql://kenning:secret@/kenning?host={tmp_path}/no-server"
    with pytest.raises(ConfigError) as info:
        Memory(url)
    assert "cannot connect to PostgreSQL" in str(info.value) and "secret" not in str(info.value)


def test_unwritable_store_path_raises_config_error(tmp_path, local_embedder):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError):
        Memory(str(blocker / "k.db"))


def test_unknown_embedder_or_extractor_raises_config_error(local_embedder):
    with pytest.raises(ConfigError):
        Memory(":memory:", embedder="word2vec")
    with pytest.raises(ConfigError):
        Memory(":memory:", extractor="magic")


@pytest.mark.parametrize("env", [{"KENNING_ENTITY_THRESHOLD": "2"}, {"KENNING_MAX_TEXT_CHARS": "0"},
                                 {"KENNING_DEDUP_THRESHOLD": "high"}, {"KENNING_ONNX_THREADS": "0"}])
def test_bad_setting_raises_config_error(env):
    with pytest.raises(ConfigError) as info:
        Settings.from_env(env)
    assert str(info.value)


def test_settings_read_the_environment_at_call_time(monkeypatch, tmp_path):
    monkeypatch.setenv("KENNING_PROJECT", "acme")
    monkeypatch.setenv("KENNING_ONE_VALUE_PREDICATES", "plays, owns")
    s = Settings.from_env()
    assert s.project == "acme" and s.one_value_predicates == ("plays", "owns")
    assert Settings.from_env(project="other").project == "other"


# -- messages -----------------------------------------------------------------------------------

def test_every_error_message_is_non_empty_and_actionable(mem, tmp_path):
    attempts = {
        "too large": lambda: mem.add("x" * 100_001, "sam"),
        "empty": lambda: mem.add("  ", "sam"),
        "role": lambda: mem.add("hi", "sam", role="bot"),
        "time": lambda: mem.add("hi", "sam", at="soon"),
        "scope": lambda: mem.list_facts("a b"),
        "limit": lambda: mem.list_facts("sam", limit=0),
        "not found": lambda: mem.delete_fact("sam", "f_x"),
        "url": lambda: Memory("ftp://x"),
        "query": lambda: mem.recall("", "sam"),
        "embed_pending": lambda: Memory(":memory:", embedder=None).embed_pending(),
    }
    for what, call in attempts.items():
        with pytest.raises(KenningError) as info:
            call()
        message = str(info.value)
        assert message.strip(), what
        assert len(message) > 20, (what, message)
