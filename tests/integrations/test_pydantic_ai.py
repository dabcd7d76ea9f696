"""kenning in a real Pydantic AI agent: its FunctionModel scripts the model, kenning is a real Memory (in process
or the HTTP server on loopback). No network, no mocks."""
from __future__ import annotations

import asyncio
import importlib
import re
import sys
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest

pydantic_ai = pytest.importorskip("pydantic_ai", reason="the optional Pydantic AI (pip install 'kenning[pydantic-ai]')")
from pydantic_ai import Agent  # noqa: E402  (after the skip)
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from docs_runner import run_page  # noqa: E402
from kenning import Memory, PermissionDenied  # noqa: E402
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
    model was shown: the instructions of every request and every tool return."""

    def __init__(self, *steps: Step):
        self.steps = list(steps)
        self.instructions: list[str | None] = []
        self.returns: list[ToolReturnPart] = []
        self.tools: list[AgentInfo] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages, info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        self.tools.append(info)
        if isinstance(messages[-1], ModelRequest):
            self.returns += [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        assert self.steps, "the model was asked more often than the test scripted"
        return self.steps.pop(0)(self)

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


def test_the_docs_page_runs_as_written(tmp_path, monkeypatch, capsys):
    def forget_all(script: Script) -> ModelResponse:
        ids = re.findall(r"^- (\w+) \((?:note|fact)\):", script.returns[-1].content, re.MULTILINE)
        return ModelResponse(parts=[ToolCallPart("forget", {"id": i}) for i in ids])

    def usual(script: Script) -> ModelResponse:
        known = "coffee black, no sugar" in (script.instructions[-1] or "")
        return ModelResponse(parts=[TextPart("One black coffee, coming up." if known else "What would you like?")])

    barista = Script(call("remember", text="Sam takes his coffee black, no sugar."), say("Noted!"), usual)
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
    assert out[5:] == ["Done: oat lattes from now on.", "2 turns handed over"]
    assert sorted(r.content.split()[1] for r in support.returns if r.tool_name == "forget") == ["fact", "note"]
    with Memory() as memory:  # the page's store, reopened: the black coffee forgotten, the latte kept
        memory.flush()  # the turn the page handed over last, mined now
        assert [h.note.text for h in memory.notes.search("sam", "coffee")] == ["Sam drinks oat lattes."]
        facts = [f.text for f in memory.list_facts("sam").facts]
        assert not any("black" in f for f in facts) and any("oat lattes" in f for f in facts), facts


def test_without_pydantic_ai_the_import_says_how_to_install(monkeypatch):
    for name in [n for n in sys.modules if n == "pydantic_ai" or n.startswith("pydantic_ai.")]:
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: "import pydantic_ai" fails
    monkeypatch.delitem(sys.modules, "kenning.integrations.pydantic_ai")
    with pytest.raises(ImportError, match=r"pip install 'kenning\[pydantic-ai\]'"):
        importlib.import_module("kenning.integrations.pydantic_ai")
