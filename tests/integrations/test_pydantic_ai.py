"""kenning in a real Pydantic AI agent: its FunctionModel scripts the model, kenning is a real Memory (in process
or the HTTP server on loopback). No network, no mocks."""
from __future__ import annotations

import asyncio
import re
import sys
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest

pydantic_ai = pytest.importorskip("pydantic_ai", reason="the optional Pydantic AI (pip install 'kenning[pydantic-ai]')")
from pydantic_ai import Agent  # noqa: E402  (after the skip)
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.exceptions import UnexpectedModelBehavior  # noqa: E402
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from docs_runner import DOCS, run_page  # noqa: E402
from kenning import Memory, PermissionDenied, TextTooLarge  # noqa: E402
from kenning.integrations.pydantic_ai import (KenningDeps, KenningMemory, UserMemoryBinding,  # noqa: E402
                                              aremember_run, kenning_instructions, kenning_toolset, remember_run)


@pytest.fixture(autouse=True)
def _no_real_models(monkeypatch):
    """Pydantic AI's own guard: a hosted model reached by mistake raises instead of calling out."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)


@pytest.fixture(autouse=True)
def _close_the_run_sync_loop():
    """``Agent.run_sync`` makes an event loop the thread's current one and leaves it open for the next call;
    close it after the test, or the garbage collector finds it open (a ResourceWarning, so a failure)."""
    yield
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # no current loop: 3.12+ warns before making one
            loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:  # none, and none may be made here
        return
    loop.close()
    asyncio.set_event_loop(None)


Step = Callable[["Script"], ModelResponse]


def call(tool: str, **args) -> Step:
    return lambda script: ModelResponse(parts=[ToolCallPart(tool, args)])


def say(text: str) -> Step:
    return lambda script: ModelResponse(parts=[TextPart(text)])


class Script:
    """A FunctionModel that answers each model request with the next step, across runs, and keeps what the
    model was shown: the instructions of every request and every tool return. Streamed (``run_stream``), a
    step's text comes a word at a time."""

    def __init__(self, *steps: Step):
        self.steps = list(steps)
        self.instructions: list[str | None] = []
        self.returns: list[ToolReturnPart] = []
        self.tools: list[AgentInfo] = []
        self.model = FunctionModel(self._respond, stream_function=self._stream)

    def _respond(self, messages, info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        self.tools.append(info)
        if isinstance(messages[-1], ModelRequest):
            self.returns += [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        assert self.steps, "the model was asked more often than the test scripted"
        return self.steps.pop(0)(self)

    async def _stream(self, messages, info: AgentInfo):
        for i, part in enumerate(self._respond(messages, info).parts):
            if isinstance(part, TextPart):
                for word in re.findall(r"\S+\s*", part.content):
                    yield word
            else:
                yield {i: DeltaToolCall(part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id)}

    def said(self, tool: str) -> list[str]:
        return [r.content for r in self.returns if r.tool_name == tool]


def agent(script: Script, **kwargs) -> Agent:
    return Agent(script.model, deps_type=KenningDeps, capabilities=[KenningMemory(**kwargs)])


COFFEE = "Sam takes his coffee black, no sugar."


def test_a_turn_calls_remember_and_hands_the_exchange_over(mem):
    script = Script(call("remember", text=COFFEE), say("Noted: black, no sugar."))
    result = agent(script).run_sync("I take my coffee black. Remember that!",
                                    deps=KenningDeps.for_user(mem, "sam", chat="morning"))

    assert result.output == "Noted: black, no sugar."
    tools = {t.name: t for t in script.tools[0].function_tools}
    assert sorted(tools) == ["forget", "recall", "remember"]
    assert "long-term memory" in tools["remember"].description
    assert tools["forget"].parameters_json_schema["properties"]["id"]["description"]
    [saved] = script.said("remember")
    note_id = re.fullmatch(r"Remembered as note (n_\w+)\.", saved).group(1)
    assert [(h.note.note_id, h.note.text) for h in mem.notes.search("sam", "coffee")] == [(note_id, COFFEE)]
    mem.flush()
    kept = [(m.role, m.content) for m in mem.messages.thread("sam", "morning").messages]
    assert kept == [("user", "I take my coffee black. Remember that!"), ("assistant", "Noted: black, no sugar.")]
    assert mem.list_facts("ana").facts == [] and mem.notes.search("ana", "coffee") == []


def test_a_new_conversation_recalls_what_the_first_stored(mem):
    first = Script(call("remember", text=COFFEE), say("Noted."))
    agent(first).run_sync("Remember: black coffee, no sugar.", deps=KenningDeps.for_user(mem, "sam", chat="c1"))
    [saved] = first.said("remember")
    note_id = saved.split()[-1].rstrip(".")

    second = Script(call("recall", query="how does Sam take his coffee"), say("Black, no sugar."))
    agent(second).run_sync("How do I like my coffee?", deps=KenningDeps.for_user(mem, "sam", chat="c2"))
    [recalled] = second.said("recall")
    assert COFFEE in recalled and f"- {note_id} (note): {COFFEE}" in recalled
    assert "<user_memory>" in second.instructions[0] and COFFEE in second.instructions[0]
    assert first.instructions[0] is not None and COFFEE not in first.instructions[0]


def test_instructions_are_read_once_per_run(mem):
    """Saved mid-run, a memory shows from the next run on: one recall per run, one stable prompt prefix."""
    script = Script(call("remember", text="Sam's dog is called Rex."), say("Rex, noted."), say("Rex."))
    deps = KenningDeps.for_user(mem, "sam")
    run = agent(script, hand_over=False)
    run.run_sync("My dog is called Rex.", deps=deps)
    run.run_sync("What is my dog called?", deps=deps)
    during, after = script.instructions[:2], script.instructions[2]
    assert during[0] == during[1] and "Rex" not in during[0]
    assert "Sam's dog is called Rex." in after


def test_forget_takes_a_note_or_a_fact_and_a_wrong_id_goes_back_to_the_model(mem):
    note = mem.notes.save("sam", COFFEE)
    fact = mem.add("I live in Lisbon.", dataset="sam").memory
    script = Script(call("forget", id="n_nope"), call("forget", id=note.note_id), call("forget", id=fact.fact_id),
                    call("recall", query="coffee"), call("recall", query=""), say("Done."))
    agent(script, instructions=False).run_sync("Forget my coffee and where I live.",
                                               deps=KenningDeps.for_user(mem, "sam"))

    wrong, forgot_note, forgot_fact = (r for r in script.returns if r.tool_name == "forget")
    assert wrong.outcome == "retried" and "n_nope" in wrong.content and "Call recall" in wrong.content
    assert forgot_note.outcome == forgot_fact.outcome == "success"
    assert forgot_note.content == f"Forgot note {note.note_id}."
    assert forgot_fact.content == f"Forgot fact {fact.fact_id}."
    recalled, empty = (r for r in script.returns if r.tool_name == "recall")
    assert recalled.content == "Nothing is remembered about this user that bears on 'coffee'."
    assert empty.outcome == "retried"
    assert mem.notes.search("sam", "coffee") == [] and mem.list_facts("sam").facts == []


def test_another_users_memory_is_refused_in_process(mem):
    with pytest.raises(PermissionDenied, match="'ana'"):
        KenningDeps.for_user(mem.as_user("ana"), "sam")
    script = Script(call("remember", text=COFFEE), say("Noted."))
    agent(script).run_sync("Remember my coffee.", deps=KenningDeps.for_user(mem.as_user("sam"), "sam"))
    assert [h.note.text for h in mem.notes.search("sam", "coffee")] == [COFFEE]


def test_over_http_with_a_user_token(keyed_server):
    """Sam's token reads and writes Sam's memory; bound to Ana, the server refuses and the run raises."""
    with Memory(keyed_server.url, api_key=keyed_server.keys["service"]) as service:
        sam = service.as_user("sam")
        try:
            first = Script(call("remember", text=COFFEE), say("Noted."))
            agent(first).run_sync("Remember my coffee.", deps=KenningDeps.for_user(sam, "sam", chat="c1"))
            second = Script(call("recall", query="coffee"), say("Black."))
            agent(second).run_sync("My coffee?", deps=KenningDeps.for_user(sam, "sam", chat="c2"))
            assert COFFEE in second.said("recall")[0] and COFFEE in second.instructions[0]
            sam.flush()
            assert [m.role for m in sam.messages.thread("sam", "c1").messages] == ["user", "assistant"]

            stolen = Script(call("remember", text="Ana owes me money."), say("Noted."))
            with pytest.raises(PermissionDenied):
                agent(stolen, instructions=False).run_sync("Hi", deps=KenningDeps.for_user(sam, "ana"))
            assert service.recall("money", "ana").items == []
        finally:
            sam.close()


def test_handing_a_run_over_twice_stores_it_once(mem):
    script = Script(say("Hello Sam."))
    deps = KenningDeps(UserMemoryBinding(mem, "sam"))  # no chat: the run's conversation id groups it
    result = agent(script).run_sync("Hi, I'm Sam and I live in Porto.", deps=deps)  # the capability hands over
    again = remember_run(deps, result)  # and a retried request handler hands the same run over again
    assert [r.reason for r in again] == ["already_ingested", "already_ingested"]
    mem.flush()
    kept = mem.messages.thread("sam", result.conversation_id).messages
    assert [(m.role, m.content) for m in kept] == [("user", "Hi, I'm Sam and I live in Porto."),
                                                    ("assistant", "Hello Sam.")]
    assert "user lives in porto" in [f.text for f in mem.list_facts("sam").facts]


def test_your_own_deps_type_and_an_async_agent(mem):
    @dataclass
    class AppDeps:
        kenning: UserMemoryBinding
        plan: str

    mem.notes.save("sam", COFFEE)
    script = Script(call("recall", query="coffee"), say("Black."))
    support = Agent(script.model, deps_type=AppDeps, toolsets=[kenning_toolset()], instructions=kenning_instructions)
    deps = AppDeps(UserMemoryBinding(mem, "sam"), plan="pro")

    async def main():
        result = await support.run("How do I take my coffee?", deps=deps)
        return result, await aremember_run(deps, result, chat="support")

    result, receipts = asyncio.run(main())
    assert result.output == "Black." and COFFEE in script.said("recall")[0] and COFFEE in script.instructions[0]
    assert [r.status for r in receipts] == ["processing", "skipped"]  # a user turn is mined; a reply is kept as said
    mem.flush()
    assert len(mem.messages.thread("sam", "support").messages) == 2

    with pytest.raises(TypeError, match="KenningDeps.for_user"):
        Agent(Script(say("x")).model, toolsets=[kenning_toolset()], instructions=kenning_instructions).run_sync(
            "Hi", deps="sam")


def thread(mem: Memory, chat: str) -> list[tuple[str, str]]:
    mem.flush()
    return [(m.role, m.content) for m in mem.messages.thread("sam", chat).messages]


def anyio_workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "AnyIO worker thread"}


def test_a_stream_is_handed_over_once_its_reply_has_streamed(mem):
    """run_stream_sync as a newcomer writes it, with no ``with`` block: the run stays open until the result is
    garbage collected, yet the turn is handed over as soon as the reply has streamed. And the run leaves no
    thread behind: Pydantic AI runs a plain instructions function on an AnyIO worker that stops only when the
    run ends, and that worker kept the process from exiting (kenning's pieces are coroutines)."""
    mem.notes.save("sam", "Sam collects stamps.")
    script = Script(say("Stamps."), call("recall", query="stamps"), say("You collect stamps, Sam."))

    async def main():
        deps = KenningDeps.for_user(mem, "sam", chat="s1")
        async with agent(script).run_stream("Remind me?", deps=deps) as streamed:
            output = await streamed.get_output()
            kept = thread(mem, "s1")  # before the block ends the run
            again = [r.reason for r in await aremember_run(deps, streamed)]  # a stream's result, handed over again
            return output, kept, again

    assert asyncio.run(main()) == ("Stamps.", [("user", "Remind me?"), ("assistant", "Stamps.")],
                                   ["already_ingested", "already_ingested"])
    assert len(thread(mem, "s1")) == 2  # ending the run handed nothing over twice

    before = anyio_workers()
    stream = agent(script).run_stream_sync("What do I collect?", deps=KenningDeps.for_user(mem, "sam", chat="s2"))
    try:
        assert "".join(stream.stream_text(delta=True, debounce_by=None)) == "You collect stamps, Sam."
        assert thread(mem, "s2") == [("user", "What do I collect?"), ("assistant", "You collect stamps, Sam.")]
        assert "Sam collects stamps." in script.said("recall")[0] and "Sam collects stamps." in script.instructions[1]
        left = anyio_workers() - before
        for worker in left:  # a worker a finished run leaves stops at once; one waiting on this open run never
            worker.join(timeout=1)
        assert [w for w in left if w.is_alive()] == []
    finally:
        stream.__exit__(None, None, None)  # end the run (so a worker left behind stops, and the test with it)
    assert len(thread(mem, "s2")) == 2


def test_a_stream_stopped_early_keeps_the_users_message_not_the_half_reply(mem):
    script = Script(say("A Volvo and jazz: noted, Sam, I will remember."), say("Polish, noted, Sam."))
    run = agent(script, tools=False)

    async def main():
        deps = KenningDeps.for_user(mem, "sam", chat="a")
        async with run.run_stream("I drive a Volvo and I love jazz.", deps=deps) as streamed:
            async for chunk in streamed.stream_text(delta=True, debounce_by=None):
                assert chunk == "A "
                break

    asyncio.run(main())
    assert thread(mem, "a") == [("user", "I drive a Volvo and I love jazz.")]
    with run.run_stream_sync("I speak Polish.", deps=KenningDeps.for_user(mem, "sam", chat="b")) as streamed:
        for _ in streamed.stream_text(delta=True, debounce_by=None):
            break
    assert thread(mem, "b") == [("user", "I speak Polish.")]
    assert "user drives volvo" in [f.text for f in mem.list_facts("sam").facts]  # the kept message is mined


def test_kenning_deps_built_from_a_memory_says_to_use_for_user(mem):
    """``KenningDeps(memory, "sam")`` mirrors ``UserMemoryBinding(memory, "sam")`` but would make "sam" the chat
    and fail inside the run with "...to be a KenningDeps... got KenningDeps"; it is refused where it is made."""
    refused = r'`kenning` must be a UserMemoryBinding.*KenningDeps\.for_user\(memory, "sam"\)'
    with pytest.raises(TypeError, match=refused):
        KenningDeps(mem, "sam")
    with pytest.raises(TypeError, match="`chat` must be a string"):
        KenningDeps(UserMemoryBinding(mem, "sam"), chat=42)
    assert KenningDeps(UserMemoryBinding(mem, "sam"), "c1").chat == "c1"


def test_max_retries_and_pydantic_ais_test_model(mem):
    """A wrong id goes back to the model, within the tools' retries (``max_retries``, else the agent's).
    TestModel calls every tool with made-up arguments, forget too, until its retries run out: the page
    says to name the tools it calls."""
    guesses = [call("forget", id=i) for i in ("Sam takes his coffee black", "n_nope", "f_nope")]
    with pytest.raises(UnexpectedModelBehavior, match="'forget' exceeded max retries count of 1"):
        agent(Script(*guesses), instructions=False).run_sync("Forget my coffee.", deps=KenningDeps.for_user(mem, "sam"))
    script = Script(*guesses, say("I could not find that memory."))
    result = agent(script, instructions=False, max_retries=3).run_sync("Forget my coffee.",
                                                                       deps=KenningDeps.for_user(mem, "sam"))
    assert result.output == "I could not find that memory."
    assert [r.outcome for r in script.returns] == ["retried"] * 3
    told = script.returns[0].content
    assert "Call recall" in told and "a note's starts with n_" in told and "not the memory's words" in told

    tested = Agent("test", deps_type=KenningDeps, capabilities=[KenningMemory()])
    deps = KenningDeps.for_user(mem, "sam", chat="t")
    with tested.override(model=TestModel()), pytest.raises(UnexpectedModelBehavior, match="'forget'"):
        tested.run_sync("Hi", deps=deps)
    with tested.override(model=TestModel(call_tools=["recall", "remember"])):
        assert "Remembered as note" in tested.run_sync("Hi", deps=deps).output
    assert thread(mem, "t")[0] == ("user", "Hi")


def test_forget_leaves_the_users_words_and_messages_delete_takes_them_back(mem):
    """What the page says forget does: the fact leaves recall, the message it came from does not (the next
    run's instructions still show it, under "Earlier messages"); messages.delete takes it back for good."""
    agent(Script(say("Noted.")), tools=False).run_sync("I'm allergic to peanuts.",
                                                       deps=KenningDeps.for_user(mem, "sam", chat="c1"))
    mem.flush()
    [fact] = mem.list_facts("sam").facts
    script = Script(call("forget", id=fact.fact_id), say("Forgotten."), say("Nothing to avoid that I know of."))
    forgetful = agent(script, hand_over=False)
    forgetful.run_sync("Forget my allergy.", deps=KenningDeps.for_user(mem, "sam", chat="c2"))
    assert script.said("forget") == [f"Forgot fact {fact.fact_id}."]
    forgetful.run_sync("Any foods with peanuts I should avoid?", deps=KenningDeps.for_user(mem, "sam", chat="c3"))
    assert "allergic to: peanuts" not in script.instructions[-1]                # the fact is gone
    assert "Earlier messages" in script.instructions[-1] and "user: I'm allergic to peanuts." in script.instructions[-1]
    assert mem.messages.delete("sam", fact.episode_id)["facts"] == 1             # the application takes it back
    assert mem.recall("peanuts", "sam").items == []
    page = " ".join((DOCS / "pydantic-ai.md").read_text().split())
    assert "forgets a note, or soft-deletes a fact" in page and 'under "Earlier messages"' in page
    assert 'memory.messages.delete("sam", message_id)' in page


def test_a_message_longer_than_kenning_keeps(mem):
    """A 120,000-character prompt: the instructions recall for its first 100,000 characters; the hand-over
    refuses it whole (TextTooLarge fails the run, and nothing of it is kept), as the page says."""
    mem.notes.save("sam", COFFEE)
    long = ("How do I take my coffee again? " * 4000)[:120_000]
    script = Script(say("Black, no sugar."), say("Black."))
    result = agent(script, tools=False, hand_over=False).run_sync(long, deps=KenningDeps.for_user(mem, "sam"))
    assert result.output == "Black, no sugar." and COFFEE in script.instructions[0]
    with pytest.raises(TextTooLarge, match="120,000 characters"):
        agent(script, tools=False, instructions=False).run_sync(long, deps=KenningDeps.for_user(mem, "sam", chat="l"))
    assert thread(mem, "l") == []
    page = " ".join((DOCS / "pydantic-ai.md").read_text().split())
    assert "a message over 100,000 characters" in page and "`kenning.TextTooLarge`" in page


def test_the_docs_page_runs_as_written(tmp_path, monkeypatch, capsys):
    def forget_all(script: Script) -> ModelResponse:
        ids = re.findall(r"^- (\w+) \((?:note|fact)\):", script.returns[-1].content, re.MULTILINE)
        return ModelResponse(parts=[ToolCallPart("forget", {"id": i}) for i in ids])

    def usual(script: Script) -> ModelResponse:
        known = "coffee black, no sugar" in (script.instructions[-1] or "")
        return ModelResponse(parts=[TextPart("One black coffee, coming up." if known else "What would you like?")])

    barista = Script(call("remember", text="Sam takes his coffee black, no sugar."), say("Noted!"), usual,
                     say("A cinnamon bun goes well with a black coffee."))  # streamed, a word at a time
    support = Script(call("recall", query="coffee"), forget_all, call("remember", text="Sam drinks oat lattes."),
                     say("Done: oat lattes from now on."))
    # The page defines a @dataclass; dataclasses look up the module a class was made in, and run_page
    # execs the blocks as module "__docs__" without registering one.
    monkeypatch.setitem(sys.modules, "__docs__", types.ModuleType("__docs__"))
    run_page("pydantic-ai.md", tmp_path, monkeypatch,
             swap={'"openai:gpt-4.1"': "barista_model", '"anthropic:claude-sonnet-4-5"': "support_model"},
             namespace={"barista_model": barista.model, "support_model": support.model})

    out = capsys.readouterr().out.splitlines()
    assert out[:4] == ["Noted!", "One black coffee, coming up.",
                       "user: I always take my coffee black, no sugar. Please remember that.", "assistant: Noted!"]
    assert "coffee black" in out[4]  # the fact the worker extracted from Sam's words
    assert out[5:] == ["A cinnamon bun goes well with a black coffee.", "Done: oat lattes from now on.",
                       "2 turns handed over", "test passed"]  # the last: the page's TestModel test
    assert sorted(r.content.split()[1] for r in support.returns if r.tool_name == "forget") == ["fact", "note"]
    with Memory() as memory:  # the page's store, reopened: the black coffee forgotten, the latte kept
        memory.flush()  # the turn the page handed over last, mined now
        assert [h.note.text for h in memory.notes.search("sam", "coffee")] == ["Sam drinks oat lattes."]
        streamed = [(m.role, m.content) for m in memory.messages.thread("sam", "afternoon").messages]
        assert streamed == [("user", "Something sweet with my usual today?"),
                            ("assistant", "A cinnamon bun goes well with a black coffee.")]
        facts = [f.text for f in memory.list_facts("sam").facts]
        assert not any("black" in f for f in facts) and any("oat lattes" in f for f in facts), facts
