"""kenning in the OpenAI Agents SDK: the real, pinned SDK's Runner, driven by its own scripted model
(agents.testing.ScriptedModel, which records every call's input and instructions); a real Memory in
process, and the real server over HTTP. No network: tracing is off for every test."""
from __future__ import annotations

import asyncio

import pytest

agents = pytest.importorskip("agents", reason="the optional OpenAI Agents SDK (pip install 'kenning[openai-agents]')")
from agents import Agent, Runner, SQLiteSession, set_tracing_disabled  # noqa: E402  (after the skip)
from agents.exceptions import UserError  # noqa: E402
from agents.memory import Session, SessionSettings  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402
from openai.types.responses import ResponseOutputMessage, ResponseOutputRefusal, ResponseReasoningItem  # noqa: E402
from openai.types.responses.response_reasoning_item import Summary  # noqa: E402

from docs_runner import DOCS, run_page  # noqa: E402
from kenning import InputError, Memory, NotFound, PermissionDenied  # noqa: E402
from kenning.integrations.openai_agents import (KenningSession, UserMemoryBinding, kenning_instructions,  # noqa: E402
                                                kenning_tools)

COFFEE = "The user takes their coffee black."


@pytest.fixture(autouse=True)
def _no_tracing():
    """The SDK exports traces to OpenAI by default; no test may try the network."""
    set_tracing_disabled(True)


@pytest.fixture
def sam(mem):
    return UserMemoryBinding(mem, "sam")


def run(agent, text, **kwargs):
    return asyncio.run(Runner.run(agent, text, **kwargs))


def agent_with(model, **kwargs):
    return Agent(name="Assistant", model=model, tools=kenning_tools(), **kwargs)


def remember_turn(call_id="call_1", reply="Noted."):
    """What a model answers to "remember this" when it thinks first: reasoning and a call, then a reply."""
    return [[ResponseReasoningItem(id=f"rs_{call_id}", type="reasoning",
                                   summary=[Summary(text="worth keeping", type="summary_text")]),
             function_call("remember", {"text": COFFEE}, call_id=call_id)],
            [assistant_message(reply, item_id=f"msg_{call_id}")]]


def outputs(call):
    """The function_call_output texts a model call was given."""
    return [item["output"] for item in call.input if item.get("type") == "function_call_output"]


def items(session):
    return asyncio.run(session.get_items())


# -- the Session ------------------------------------------------------------------------------------
def test_is_an_sdk_session(sam):
    session = KenningSession("chat-1", sam, session_settings=SessionSettings(limit=3))
    assert isinstance(session, Session)
    assert session.session_id == "chat-1" and session.session_settings.limit == 3
    assert items(session) == []
    with pytest.raises(InputError, match="session_id"):
        KenningSession(" ", sam)
    with pytest.raises(InputError, match="dataset"):
        KenningSession("chat-1", sam.memory)


def test_a_user_id_or_no_memory_is_refused_with_the_two_right_forms(mem):
    """``KenningSession("c1", "sam")``: a user id where the memory goes. A TypeError shows both right forms
    (kenning's InputError about ``dataset`` misled), as does a session with no memory at all."""
    forms = ('KenningSession(session_id, UserMemoryBinding(memory, "sam"))',
             'KenningSession(session_id, memory, dataset="sam")')
    for build in (lambda: KenningSession("c1", "sam"), lambda: KenningSession("c1", dataset="sam")):
        with pytest.raises(TypeError) as caught:
            build()
        assert all(form in str(caught.value) for form in forms), caught.value
    with pytest.raises(TypeError) as caught:
        KenningSession("c1")
    assert str(caught.value) == ("KenningSession needs the memory of the user whose chat it keeps: pass "
                                 "KenningSession(session_id, UserMemoryBinding(memory, user_id)) or "
                                 "KenningSession(session_id, memory, dataset=user_id)")
    with pytest.raises(TypeError, match=r'not the user id .sam.: pass kenning_tools\(UserMemoryBinding\(memory, '):
        kenning_tools("sam")
    with pytest.raises(TypeError, match=r'kenning_instructions\(instructions, memory, dataset="sam"\)'):
        kenning_instructions("Be brief.", "sam")
    # both forms work, and the page shows both
    assert KenningSession("c1", mem, dataset="sam").user.dataset == "sam"
    assert KenningSession("c1", UserMemoryBinding(mem, "sam")).user.dataset == "sam"
    page = (DOCS / "openai-agents.md").read_text()
    assert all(form in page for form in forms)
    assert 'KenningSession("monday", memory, dataset="sam")' in page   # and its example runs it


def test_add_items_takes_a_list_of_items_only(sam, mem):
    """A dict, a string, a tuple, or a list holding something that is not an item: a TypeError that says
    what add_items takes (not "dictionary update sequence element #0"), before anything is written."""
    session = KenningSession("chat-1", sam)
    hello = {"role": "user", "content": "hello"}
    for wrong, says in ((hello, "got dict: put it in a list"), ("hello", "got str"), ((hello,), "got tuple"),
                        (None, "got NoneType"), ([hello, "hello"], "item 1 is str"),
                        ([assistant_message("Hi.")], "item.model_dump(exclude_unset=True)")):
        with pytest.raises(TypeError, match="add_items takes a list of items") as caught:
            asyncio.run(session.add_items(wrong))
        assert says in str(caught.value)
    assert mem.messages.thread("sam", "chat-1").total == 0
    asyncio.run(session.add_items([hello]))
    assert items(session) == [hello]


def test_round_trip_across_runs_matches_the_sdk_own_session(sam, mem):
    """Two runs on one session: the second model call sees the first turn's items, in order, exactly as
    the SDK's own SQLiteSession gives them back; kenning reads the words as a conversation."""
    kenning, reference = KenningSession("chat-1", sam), SQLiteSession("chat-1")
    try:
        seen = []
        for session in (kenning, reference):
            model = ScriptedModel([*remember_turn(), [assistant_message("Black, no sugar.", item_id="msg_2")]])
            agent = agent_with(model)
            run(agent, "I take my coffee black.", context=sam, session=session)
            run(agent, "How do I take it?", context=sam, session=session)
            model.assert_complete()
            seen.append(model.calls[-1].input)
        expected = asyncio.run(reference.get_items())
    finally:
        reference.close()
    assert seen[0] == seen[1]
    assert [i.get("type", "message") for i in seen[0]] == ["message", "reasoning", "function_call",
                                                           "function_call_output", "message", "message"]
    assert seen[0][-1] == {"role": "user", "content": "How do I take it?"}
    assert items(kenning) == expected
    thread = mem.messages.thread("sam", "chat-1").messages
    assert [(m.role, m.content if m.role != "tool" else "…") for m in thread] == [
        ("user", "I take my coffee black."), ("tool", "…"), ("tool", "…"), ("tool", "…"),
        ("assistant", "Noted."), ("user", "How do I take it?"), ("assistant", "Black, no sugar.")]


def test_a_streamed_run_keeps_its_turn_too(sam):
    model = ScriptedModel(remember_turn())
    session = KenningSession("chat-1", sam)

    async def main():
        result = Runner.run_streamed(agent_with(model), "Remember my coffee.", context=sam, session=session)
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(main()) == "Noted."
    assert model.calls[0].streamed and model.calls[1].input == items(session)[:-1]
    assert items(session)[-1]["content"][0]["text"] == "Noted."


def test_every_kind_of_item_comes_back_as_it_went_in(sam, mem):
    """Words where the words rebuild the item, its JSON as a tool message otherwise; never a changed item."""
    reply = assistant_message("Here you go.", item_id="msg_9").model_dump(exclude_unset=True)
    cited = ResponseOutputMessage.model_validate({**reply, "content": [{**reply["content"][0], "annotations": [
        {"type": "url_citation", "url": "https://example.org", "title": "x", "start_index": 0, "end_index": 4}]}]})
    refusal = ResponseOutputMessage(id="msg_r", type="message", role="assistant", status="completed",
                                    content=[ResponseOutputRefusal(type="refusal", refusal="I can't help with that.")])
    cases = [
        ({"role": "user", "content": "Hello there"}, "user"),
        ({"role": "system", "content": "Be brief."}, "system"),
        ({"role": "assistant", "content": "Earlier reply"}, "assistant"),
        (reply, "assistant"),
        ({"role": "developer", "content": "Internal rule"}, "tool"),
        ({"role": "user", "content": [{"type": "input_text", "text": "Look"},
                                      {"type": "input_image", "image_url": "https://example.org/a.png",
                                       "detail": "auto"}]}, "tool"),
        ({"role": "user", "content": "Typed", "type": "message"}, "tool"),
        ({"role": "assistant", "content": "   "}, "tool"),
        (cited.model_dump(exclude_unset=True), "tool"),
        (refusal.model_dump(exclude_unset=True), "tool"),
        (function_call("recall", {"query": "x"}, call_id="c9").model_dump(exclude_unset=True), "tool"),
        ({"type": "function_call_output", "call_id": "c9", "output": "nothing"}, "tool"),
        ({"id": "rs_9", "type": "reasoning", "summary": [], "encrypted_content": "gAAA"}, "tool"),
    ]
    session = KenningSession("kinds", sam)
    asyncio.run(session.add_items([item for item, _ in cases]))
    assert items(session) == [item for item, _ in cases]
    assert [m.role for m in mem.messages.thread("sam", "kinds").messages] == [role for _, role in cases]


def test_get_items_latest_first_limit(sam):
    session = KenningSession("chat-1", sam, session_settings=SessionSettings(limit=2))
    said = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(5)]
    asyncio.run(session.add_items(said))
    assert items(session) == said[-2:]
    assert asyncio.run(session.get_items(limit=3)) == said[-3:]
    assert asyncio.run(session.get_items(limit=0)) == []
    assert asyncio.run(session.get_items(limit=50)) == said


def test_a_long_session_is_read_page_by_page():
    """More items than one page of messages.thread: the latest come back, in order."""
    with Memory(":memory:", embedder=None) as plain:
        session = KenningSession("long", plain, "sam")
        said = [{"role": "assistant", "content": f"line {i}"} for i in range(230)]
        asyncio.run(session.add_items(said))
        assert items(session) == said
        assert asyncio.run(session.get_items(limit=120)) == said[-120:]
        assert asyncio.run(session.pop_item()) == said[-1]
        asyncio.run(session.add_items(said[:3]))               # the chat's first items, said again at its end
        assert items(session) == said[:-1] + said[:3]


def test_user_messages_are_mined_once_without_a_second_copy(sam, mem):
    session = KenningSession("chat-1", sam)
    run(agent_with(ScriptedModel([[assistant_message("Lisbon is lovely.")]])), "I live in Lisbon.",
        context=sam, session=session)
    mem.flush()
    thread = mem.messages.thread("sam", "chat-1")
    assert [m.role for m in thread.messages] == ["user", "assistant"]   # kept once: the worker mined that message
    facts = mem.list_facts("sam").facts
    assert [(f.predicate, f.object) for f in facts] == [("lives in", "lisbon")]
    assert facts[0].episode_id == thread.messages[0].episode_id         # the fact cites the session's message


def test_pop_item_takes_back_the_message_and_what_it_taught(sam, mem):
    session = KenningSession("chat-1", sam)
    said = [{"role": "user", "content": "I live in Lisbon."}, {"role": "assistant", "content": "Noted."}]
    asyncio.run(session.add_items(said))
    mem.flush()
    assert asyncio.run(session.pop_item()) == said[1]
    assert len(mem.list_facts("sam").facts) == 1           # the assistant's words taught nothing
    assert asyncio.run(session.pop_item()) == said[0]
    assert mem.list_facts("sam").facts == []
    assert asyncio.run(session.pop_item()) is None
    assert mem.messages.thread("sam", "chat-1").total == 0
    asyncio.run(session.add_items(said[:1]))                 # said again after the pop: kept and mined again
    mem.flush()
    assert items(session) == said[:1]
    assert [f.object for f in mem.list_facts("sam").facts] == ["lisbon"]


def test_pop_before_the_worker_mined_it(sam, mem):
    """A turn still queued goes with its message: the worker cannot bring it back."""
    session = KenningSession("chat-1", sam)
    asyncio.run(session.add_items([{"role": "user", "content": "I work at Google."}]))
    assert asyncio.run(session.pop_item()) == {"role": "user", "content": "I work at Google."}
    mem.flush()
    assert mem.messages.thread("sam", "chat-1").total == 0 and mem.list_facts("sam").facts == []


def test_clear_session_removes_that_chat_only(sam, mem):
    session, other = KenningSession("chat-1", sam), KenningSession("chat-2", sam)
    asyncio.run(session.add_items([{"role": "user", "content": "I live in Lisbon."}]))
    asyncio.run(other.add_items([{"role": "user", "content": "I work at Google."}]))
    mem.flush()
    asyncio.run(session.clear_session())
    assert items(session) == [] and len(items(other)) == 1
    assert [f.object for f in mem.list_facts("sam").facts] == ["google"]
    asyncio.run(session.clear_session())                     # an empty chat: nothing to do


def test_a_retried_add_items_is_kept_once(sam, mem):
    session = KenningSession("chat-1", sam)
    batch = [{"role": "user", "content": "I live in Lisbon."},
             function_call("recall", {"query": "home"}, call_id="c1").model_dump(exclude_unset=True),
             {"type": "function_call_output", "call_id": "c1", "output": "nothing"},
             {"role": "assistant", "content": "Noted."}]
    asyncio.run(session.add_items(batch[:2]))                # a first try that failed half way
    asyncio.run(session.add_items(batch))                    # the retry
    asyncio.run(session.add_items(batch))                    # and once more, after it had all landed
    assert items(session) == batch
    mem.flush()
    assert len(mem.list_facts("sam").facts) == 1
    again = [{"role": "user", "content": "I live in Lisbon."}]
    asyncio.run(session.add_items(again))                    # the same words later on: a new message
    assert items(session) == batch + again
    assert asyncio.run(session.pop_item()) == again[0]
    asyncio.run(session.add_items([{"role": "user", "content": "Something else"}]))   # a new item in its place
    assert items(session) == batch + [{"role": "user", "content": "Something else"}]


# -- tools and instructions -------------------------------------------------------------------------
def test_a_turn_that_remembers_then_answers(sam, mem):
    model = ScriptedModel([*remember_turn(), [assistant_message("Black, I know.")]])
    agent = agent_with(model, instructions=kenning_instructions("Be brief."))
    assert [t.name for t in agent.tools] == ["recall", "remember", "forget"]
    result = run(agent, "Please remember I take my coffee black.", context=sam)
    assert result.final_output == "Noted."
    [note] = mem.notes.list("sam")
    assert note.text == COFFEE
    assert outputs(model.calls[1]) == [f"Remembered as note {note.note_id}."]
    # the memory is read once per run: the note saved mid-run is in the next run's instructions
    assert model.calls[1].system_instructions == model.calls[0].system_instructions
    assert COFFEE not in model.calls[0].system_instructions
    run(agent, "Please remember I take my coffee black.", context=sam)
    model.assert_complete()
    assert COFFEE in model.calls[2].system_instructions


def test_a_new_conversation_recalls_what_the_first_stored(sam, mem):
    first = ScriptedModel(remember_turn())
    run(agent_with(first, instructions=kenning_instructions("Be brief.")), "Remember: black coffee.",
        context=sam, session=KenningSession("chat-1", sam))
    second = ScriptedModel([[function_call("recall", {"query": "coffee"}, call_id="c2")],
                            [assistant_message("Black.")]])
    result = run(agent_with(second, instructions=kenning_instructions("Be brief.")), "How do I take my coffee?",
                 context=sam, session=KenningSession("chat-2", sam))
    second.assert_complete()
    assert result.final_output == "Black."
    opening = second.calls[0]
    assert [i.get("content") for i in opening.input] == ["How do I take my coffee?"]   # a new chat: no history
    assert opening.system_instructions.startswith("Be brief.\n\nYou have long-term memory")
    assert COFFEE in opening.system_instructions.split("<user_memory>")[1]              # recalled into the prompt
    assert second.calls[1].system_instructions == opening.system_instructions          # read once per run
    [recalled] = outputs(second.calls[1])
    note = mem.notes.list("sam")[0]
    assert COFFEE in recalled and f"- {note.note_id} (note): {COFFEE}" in recalled


def test_core_memory_in_the_instructions_and_bad_arguments_answered(sam, mem):
    mem.memory_tool("sam", {"command": "create", "path": "/memories/profile.md", "file_text": "Prefers metric"})
    model = ScriptedModel([[function_call("forget", {"id": "n_missing"}, call_id="c1"),
                            function_call("remember", {"text": "  "}, call_id="c2"),
                            function_call("recall", {"query": "weather"}, call_id="c3")],
                           [assistant_message("Done.")]])
    run(agent_with(model, instructions=kenning_instructions(tools_hint=False, limit=0)), "Hi", context=sam)
    instructions = model.calls[0].system_instructions
    assert instructions.startswith("What you remember about this user") and "Prefers metric" in instructions
    forgot, remembered, recalled = outputs(model.calls[1])
    assert "no note or fact 'n_missing'" in forgot and "Call recall" in forgot
    assert "empty" in remembered and "one sentence" in remembered
    assert recalled == "Nothing is remembered about this user that bears on 'weather'."
    assert mem.notes.list("sam") == []


def test_tools_bound_to_a_user_and_a_forget(mem):
    note = mem.notes.save("sam", COFFEE)
    model = ScriptedModel([[function_call("forget", {"id": note.note_id}, call_id="c1")], [assistant_message("Gone.")]])
    agent = Agent(name="A", model=model, tools=kenning_tools(mem, "sam"), instructions=kenning_instructions(
        "Hi.", mem, "sam"))
    run(agent, "Forget how I take my coffee.")   # no context: the tools were given their user
    assert outputs(model.calls[1]) == [f"Forgot note {note.note_id}."]
    assert mem.notes.list("sam") == []


def test_a_run_without_a_user_raises_the_sdk_user_error_wherever_it_is_found():
    """No user in the run's context is a mistake in setting the run up: the SDK's UserError, whether the
    instructions find it first or a tool does (it is kenning's InputError too), as the page says."""
    for extra in ({"instructions": kenning_instructions("Be brief.")}, {}):
        model = ScriptedModel([[function_call("recall", {"query": "x"}, call_id="c1")]])
        with pytest.raises(UserError, match=r"context=UserMemoryBinding\(memory, dataset\)") as caught:
            run(agent_with(model, **extra), "Hi", context={"user": "sam"})
        assert isinstance(caught.value, InputError) and "got context dict" in str(caught.value)
    with pytest.raises(InputError, match="dataset needs the memory"):
        kenning_tools(dataset="sam")
    page = (DOCS / "openai-agents.md").read_text()
    assert "| the run names no user: no `context=`, or a context with no `UserMemoryBinding` | the tools, the " \
           "instructions | the SDK's `UserError`" in page


def test_forget_leaves_the_users_words_and_messages_delete_takes_them_back(sam, mem):
    """What the page says forget does: the fact leaves recall, the message it came from does not; an
    application takes a message back with messages.delete, which removes it with its facts."""
    session = KenningSession("chat-1", sam)
    asyncio.run(session.add_items([{"role": "user", "content": "I'm allergic to peanuts."}]))
    mem.flush()
    [fact] = mem.list_facts("sam").facts
    model = ScriptedModel([[function_call("forget", {"id": fact.fact_id}, call_id="c1")], [assistant_message("Done.")]])
    run(agent_with(model), "Forget my allergy.", context=sam)
    assert outputs(model.calls[1]) == [f"Forgot fact {fact.fact_id}."]
    recalled = mem.recall("peanuts", "sam")
    assert [item.kind for item in recalled.items] == ["message"]            # the fact is gone, the words are not
    assert "Earlier messages" in recalled.context and "allergic to peanuts" in recalled.context
    assert mem.messages.delete("sam", fact.episode_id)["messages"] == 1       # the application takes it back
    assert mem.recall("peanuts", "sam").items == [] and items(session) == []
    with pytest.raises(NotFound):
        mem.delete_fact("sam", fact.fact_id)                                  # gone for good, with its facts
    page = " ".join((DOCS / "openai-agents.md").read_text().split())
    assert "forgets a note, or soft-deletes a fact" in page and 'under "Earlier messages"' in page
    assert 'memory.messages.delete("sam", message_id)' in page


# -- whose memory ----------------------------------------------------------------------------------
def test_another_users_memory_is_refused_in_process(mem, sam):
    ana = mem.as_user("ana")
    for build in (lambda: KenningSession("chat-1", ana, "sam"), lambda: kenning_tools(ana, "sam"),
                  lambda: kenning_instructions("", ana, "sam"),
                  lambda: KenningSession("chat-1", UserMemoryBinding(ana, "ana"), "sam")):
        with pytest.raises(PermissionDenied):
            build()
    # sam's chat in a run whose context is ana's: refused before anything is read or written
    model = ScriptedModel([[assistant_message("Hi.")]])
    with pytest.raises(PermissionDenied, match="dataset 'sam'"):
        run(agent_with(model), "Hi", context=UserMemoryBinding(ana, "ana"), session=KenningSession("chat-1", sam))
    assert model.calls == () and mem.messages.thread("sam", "chat-1").total == 0


def test_over_http_with_a_user_token(keyed_server):
    """The same turns through the real server with sam's user token; a token for ana is refused there."""
    with Memory(keyed_server.url, api_key=keyed_server.keys["service"]) as service:
        sam_client, ana_client = service.as_user("sam"), service.as_user("ana")
        with sam_client, ana_client:
            sam = UserMemoryBinding(sam_client, "sam")
            session = KenningSession("chat-1", sam)
            model = ScriptedModel([*remember_turn(), [function_call("recall", {"query": "coffee"}, call_id="c2")],
                                   [assistant_message("Black.")]])
            agent = agent_with(model, instructions=kenning_instructions("Be brief."))
            run(agent, "I take my coffee black.", context=sam, session=session)
            result = run(agent, "How do I take it?", context=sam, session=session)
            assert result.final_output == "Black."
            assert model.calls[-2].input[:5] == items(session)[:5]
            assert COFFEE in outputs(model.calls[-1])[-1] and COFFEE in model.calls[-1].system_instructions
            last = items(session)[-1]
            assert asyncio.run(session.pop_item()) == last and last["content"][0]["text"] == "Black."
            asyncio.run(session.add_items([{"role": "user", "content": "I live in Lisbon."}]))
            service.flush()
            store = keyed_server.memory
            assert [n.text for n in store.notes.list("sam", project="acme")] == [COFFEE]
            assert store.messages.thread("sam", "chat-1", project="acme").total == 9
            assert [f.object for f in store.list_facts("sam", project="acme").facts] == ["lisbon"]
            asyncio.run(session.clear_session())
            assert store.messages.thread("sam", "chat-1", project="acme").total == 0
            assert store.list_facts("sam", project="acme").facts == []

            stolen = UserMemoryBinding(ana_client, "sam")   # the client cannot know; the server refuses
            with pytest.raises(PermissionDenied):
                items(KenningSession("chat-1", stolen))
            with pytest.raises(UserError) as caught:   # not an answer for the model: out of the run
                run(agent_with(ScriptedModel([[function_call("recall", {"query": "x"}, call_id="c1")]])), "Hi",
                    context=stolen)
            assert isinstance(caught.value.__cause__, PermissionDenied)


# -- the page and the package ------------------------------------------------------------------------
def test_the_docs_page_runs_as_written(tmp_path, monkeypatch):
    scripted = ScriptedModel([*remember_turn(reply="Noted: black, no sugar."),
                              [function_call("recall", {"query": "coffee"}, call_id="c2")],
                              [assistant_message("Black, no sugar.")]])
    ns = run_page("openai-agents.md", tmp_path, monkeypatch, swap={'model="gpt-4.1"': "model=scripted"},
                  namespace={"scripted": scripted})
    scripted.assert_complete()
    assert ns["first"] == "Noted: black, no sugar." and ns["second"] == "Black, no sugar."
    assert COFFEE in outputs(scripted.calls[-1])[0]
    assert ns["history"][0] == {"role": "user", "content": "Remember that I take my coffee black, no sugar."}
    assert [i.get("type") for i in ns["history"][1:4]] == ["reasoning", "function_call", "function_call_output"]
