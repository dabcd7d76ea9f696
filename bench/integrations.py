"""What kenning adds to one agent turn, in LangGraph, LlamaIndex, the OpenAI Agents SDK and Pydantic AI.

For each framework the same agent runs twice per step, once without kenning and once with it, set up as
its page under docs/integrations/ shows, interleaved (without, with, without, with, ...) so that drift
of the machine hits both alike:

- LangGraph: ``langchain.agents.create_agent`` with an ``InMemorySaver``; with kenning,
  ``middleware=[KenningMiddleware(mem)]`` (recall into the system message, ``KenningTurns.save`` after
  the answer). Sync ``invoke``.
- LlamaIndex: a ``FunctionAgent`` run with a LlamaIndex ``Memory`` (one SQL chat store for the app);
  with kenning, that ``Memory`` holds a ``KenningMemoryBlock``, which LlamaIndex reads twice a run
  (before the model call and when the agent finishes): each read is core memory and recall for the
  latest user message, and hands over the turns it has not written yet.
- OpenAI Agents SDK: ``Runner.run``; with kenning, ``kenning_instructions``, ``kenning_tools()`` and a
  ``KenningSession``, which keeps the run's items as messages (``add_items``, called twice a run: the
  input, then the reply) and queues the user's message for extraction. The agent without kenning has
  no session (the SDK keeps no conversation unless given one), so keeping the chat counts as kenning's.
- Pydantic AI: ``Agent.run``; with kenning, ``capabilities=[KenningMemory()]`` (tools, instructions
  with core memory and recall, the hand-over at the end of the run).

The model is each framework's own offline double (LangChain's fake chat model, ``agents.testing.
ScriptedModel``, LlamaIndex's ``MockFunctionCallingLLM``, Pydantic AI's ``FunctionModel``): it answers at
once with one line of text and calls no tool, so a turn is the framework's own work plus, with kenning,
kenning's work on the response path. Every turn is the first of a new conversation (a new thread,
session or chat), so no arm carries a growing history.

kenning is an embedded ``Memory`` on a SQLite file in a temporary folder, with the bundled embedder, the
default extractor and the default worker thread (as an app runs it). Each framework has its own user
(dataset), filled before timing with ``--messages`` user messages (default 200) through ``mem.add``:
sentences about one person (home, work, family, food, pets, plans) made from templates with a fixed
seed, dated over the preceding months. Every prompt is new to the process (the embedding cache never
answers one), as a user's next message is.

Per framework, after ``--warmup`` untimed steps (default 3), ``--turns`` steps are timed (default 30).
Each step times, in this order: a turn without kenning, the same prompt as a turn with kenning, and then,
for a new prompt of the same kind, kenning's two halves alone, called as the adapter calls them:

- recall: what the adapter reads before the model answers (``KenningRecall.context`` for LangGraph; core
  memory and recall's context for the others, twice for LlamaIndex, whose block is read twice a run);
- the hand-over: ``KenningTurns.save`` of the prompt and the reply (LangGraph); the block's ``aput`` of
  the prompt, then of the prompt and the reply, as its two reads write them (LlamaIndex); the session's
  two ``add_items``, as the SDK calls them (Agents SDK); ``remember_run(deps, result)``, the capability's
  hand-over, on a finished run of the prompt made untimed (Pydantic AI). ``add_turn`` only queues: the
  turn returns before extraction. The async ones are timed as awaited, their hop to a thread included.

Before each timed call the queue is drained, untimed (``mem.flush()``), as a user's think time between
messages lets the worker finish; the extraction a turn starts still runs beside the rest of that turn,
on the worker thread, in the same interpreter. ``--no-settle`` drops the wait (turns back to back, the
worker always busy). ``KENNING_WORKER_THREADS=0`` runs with no worker at all (nothing is extracted, the
queue only grows, nothing is drained): the difference to a normal run is what the extraction running
beside a turn costs that turn.

    .venv/bin/python bench/integrations.py [--turns 30] [--warmup 3] [--messages 200] [--seed 7]
                                           [--framework langgraph ...] [--no-settle]

The numbers, per framework, in milliseconds of wall time: median and p90 (nearest rank) of a turn
without kenning and with it; "added", the median with minus the median without (the JSON also has the
median of the per-step differences); the medians of recall alone and of the hand-over alone, which
show where the added time goes; and "other", added minus those two: the glue (hops to worker threads,
the session's read of an empty chat, the tools' schemas) and what the framework itself does for
kenning's pieces (LangGraph's extra middleware node, LlamaIndex rendering a memory block into the
system message), with the extraction a hand-over starts running beside the rest of the turn. All are
medians of their own samples, so "other" is an estimate, and noise on a busy machine can move it
either way (the JSON keeps every sample and the machine's load average before and after). Writes
bench/results/integrations.json, with the machine, the versions, the date and the command.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import pct, write  # noqa: E402

FRAMEWORKS = ("langgraph", "llamaindex", "openai-agents", "pydantic-ai")
PACKAGES = ("langgraph", "langchain", "langchain-core", "llama-index-core", "openai-agents", "pydantic-ai-slim")
SYSTEM = "You are a friendly personal assistant. Be brief."
REPLY = "Happy to help with that. Here is a short suggestion to start with."

# -- the dataset: sentences about one person, and questions they might ask ---------------------------------
SLOTS = {
    "city": ["Lisbon", "Porto", "Berlin", "Madrid", "Dublin", "Vienna", "Prague", "Oslo", "Lyon", "Turin",
             "Seville", "Ghent", "Krakow", "Bologna", "Edinburgh", "Valencia"],
    "relative": ["sister", "brother", "mother", "father", "aunt", "uncle", "cousin", "grandmother", "niece"],
    "name": ["Ana", "Tom", "Lea", "Marco", "Ines", "Jonas", "Priya", "Omar", "Sofia", "Ben", "Clara", "Yusuf",
             "Maya", "Luis", "Nora", "Felix"],
    "job": ["nurse", "software engineer", "teacher", "architect", "pharmacist", "data analyst", "chef",
            "physiotherapist", "translator", "accountant", "graphic designer", "lawyer"],
    "company": ["a small bakery", "the city hospital", "a logistics startup", "a design studio", "the university",
                "a bank", "a bike shop", "a travel agency"],
    "allergen": ["peanuts", "shellfish", "gluten", "lactose", "cats", "pollen", "sesame", "kiwi"],
    "coffee": ["black, no sugar", "with oat milk", "as a flat white", "with a splash of milk", "decaf after noon"],
    "food": ["ramen", "mushroom risotto", "grilled sardines", "dal", "tacos", "pho", "moussaka", "gnocchi",
             "shakshuka", "bibimbap"],
    "pet": ["dog", "cat", "rabbit", "parrot", "tortoise"],
    "petname": ["Miso", "Rex", "Pepper", "Luna", "Biscuit", "Olive", "Tofu", "Ziggy"],
    "language": ["Portuguese", "German", "Japanese", "Spanish", "Italian", "Korean", "Dutch"],
    "sport": ["tennis", "climbing", "five-a-side football", "swimming", "yoga", "badminton", "rowing"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "month": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"],
    "book": ["Dune", "Middlemarch", "The Overstory", "Piranesi", "Stoner", "The Left Hand of Darkness",
             "Pachinko", "A Gentleman in Moscow"],
    "race": ["half marathon", "10k run", "sprint triathlon", "charity bike ride", "trail race"],
    "music": ["jazz", "lo-fi beats", "Bach", "old soul records", "film scores", "bossa nova"],
    "goal": ["a new bike", "a flat of my own", "a trip to Japan", "a sabbatical", "an electric car"],
    "n": ["two", "three", "four", "five", "six", "eight", "ten"],
    "dislike": ["coriander", "olives", "crowded trains", "loud restaurants", "early meetings", "horror films"],
    "place": ["food bank", "animal shelter", "community garden", "library", "youth club"],
    "occasion": ["birthday", "anniversary", "housewarming", "graduation", "retirement party"],
}
FACTS = [
    "I live in {city} now.", "I moved to {city} in {month}.", "I grew up in {city}.",
    "My {relative} {name} lives in {city}.", "I work as a {job} at {company}.",
    "I started a new job as a {job} in {month}.", "I'm allergic to {allergen}.", "I take my coffee {coffee}.",
    "My favourite food is {food}.", "I have a {pet} called {petname}.", "Our {pet} {petname} is {n} years old.",
    "I've been learning {language} for {n} months.", "I play {sport} every {day}.",
    "My {relative} {name}'s birthday is in {month}.", "I'm reading {book} at the moment.",
    "I don't eat {food} anymore.", "We're planning a trip to {city} in {month}.", "My partner {name} is a {job}.",
    "I'm training for a {race} in {month}.", "I listen to {music} when I work.", "I'm saving up for {goal}.",
    "I have a call with {name} every {day}.", "I can't stand {dislike}.",
    "I volunteer at the {place} on {day}s.", "My {relative} {name} just had a baby.",
    "My best friend {name} works as a {job} in {city}.", "I cook {food} for my {relative} most {day}s.",
]
PROMPTS = [
    "What should I cook for dinner on {day}?", "Can you suggest a weekend plan in {city}?",
    "What gift could I get my {relative} for their {occasion}?", "Any tips for my {sport} session on {day}?",
    "Help me plan a trip to {city} in {month}.", "Recommend a book for someone who liked {book}.",
    "What's a quick lunch without {allergen}?", "How should I prepare for my {race}?",
    "Teach me how to order coffee in {language}.", "What could I do with {name} on {day} evening?",
    "Suggest a playlist like {music} for a long drive.", "How do I keep my {pet} busy while I work?",
    "What should I pack for {city} in {month}?", "Give me a recipe that uses {food}.",
    "How can I save faster for {goal}?", "What's a good present for {name}'s {occasion}?",
]


def fill(template: str, rng: random.Random) -> str:
    return template.format(**{k: rng.choice(v) for k, v in SLOTS.items() if "{" + k + "}" in template})


class Prompts:
    """User messages never said before in this process, from the templates: no embedding cache hit."""

    def __init__(self, seed: int):
        self.rng, self.said = random.Random(seed), set()

    def __call__(self) -> str:
        for _ in range(200):
            text = fill(self.rng.choice(PROMPTS), self.rng)
            if text not in self.said:
                self.said.add(text)
                return text
        text = f"{text} ({len(self.said)})"   # the templates ran out (a very long --turns)
        self.said.add(text)
        return text


def history(n: int, seed: int) -> list[tuple[str, datetime]]:
    """``n`` varied user messages about one person, oldest first, over the months before now."""
    rng, now = random.Random(seed), datetime.now(timezone.utc)
    start = now - timedelta(days=max(n, 30))
    return [(fill(rng.choice(FACTS), rng), start + timedelta(days=i, minutes=rng.randrange(24 * 60)))
            for i in range(n)]


# -- the frameworks: the same agent without and with kenning, and kenning's two halves alone ---------------
def _chat() -> str:
    return f"chat-{uuid.uuid4().hex[:12]}"


class LangGraph:
    name = "langgraph"
    calls = ("create_agent(model, system_prompt=…, checkpointer=InMemorySaver(), "
             "middleware=[KenningMiddleware(mem)]).invoke(…, config)")
    recall_is = "KenningRecall.context (once: one model call)"
    hand_over_is = "KenningTurns.save of the prompt and the reply, as after_model calls it"

    def __init__(self, mem, dataset: str):
        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
        from langchain_core.messages import AIMessage
        from langgraph.checkpoint.memory import InMemorySaver

        from kenning.integrations.langgraph import KenningMiddleware, KenningRecall, KenningTurns

        class Scripted(FakeMessagesListChatModel):
            """LangChain's fake chat model, answering every call at once with a new AIMessage of REPLY."""

            def bind_tools(self, tools, **kwargs):
                return self

            def _generate(self, messages, stop=None, run_manager=None, **kwargs):
                from langchain_core.outputs import ChatGeneration, ChatResult
                return ChatResult(generations=[ChatGeneration(message=AIMessage(REPLY))])

        def model():
            return Scripted(responses=[AIMessage(REPLY)])

        self.dataset = dataset
        self.recaller, self.turns = KenningRecall(mem), KenningTurns(mem)   # the middleware's two halves
        self.agents = {False: create_agent(model(), tools=[], system_prompt=SYSTEM, checkpointer=InMemorySaver()),
                       True: create_agent(model(), tools=[], system_prompt=SYSTEM, checkpointer=InMemorySaver(),
                                          middleware=[KenningMiddleware(mem)])}

    def config(self) -> dict:
        return {"configurable": {"user_id": self.dataset, "thread_id": _chat()}}

    def turn(self, kenning: bool, prompt: str):
        config = self.config()
        agent = self.agents[kenning]
        return lambda: agent.invoke({"messages": [{"role": "user", "content": prompt}]}, config)

    def recall(self, prompt: str):
        from langchain_core.messages import HumanMessage

        messages, config = [HumanMessage(prompt, id=str(uuid.uuid4()))], self.config()
        return lambda: self.recaller.context(messages, config)

    def hand_over(self, prompt: str):
        from langchain_core.messages import AIMessage, HumanMessage

        messages = [HumanMessage(prompt, id=str(uuid.uuid4())), AIMessage(REPLY, id=f"lc_run--{uuid.uuid4()}")]
        config = self.config()
        return lambda: self.turns.save(messages, config)

    def close(self, runner):
        pass


class LlamaIndex:
    name = "llamaindex"
    calls = ("FunctionAgent(llm=MockFunctionCallingLLM(…)).run(prompt, memory=ChatMemory.from_defaults("
             "session_id=…, memory_blocks=[KenningMemoryBlock(mem, dataset=…)]))")
    recall_is = "core memory + recall's context, twice (Memory reads the block twice a run)"
    hand_over_is = "KenningMemoryBlock.aput of the prompt, then of the prompt and the reply (its two reads' writes)"

    def __init__(self, mem, dataset: str):
        from llama_index.core.agent.workflow import FunctionAgent
        from llama_index.core.base.llms.types import ChatMessage
        from llama_index.core.llms.mock import MockFunctionCallingLLM
        from sqlalchemy.ext.asyncio import create_async_engine

        from kenning.integrations._user import UserMemoryBinding   # what the block reads through
        from kenning.integrations.llamaindex import KenningMemoryBlock

        def answer(messages, **kwargs):
            return ChatMessage(role="assistant", content=REPLY)

        self.mem, self.dataset, self.block_of = mem, dataset, KenningMemoryBlock
        self.message = ChatMessage
        self.engine = create_async_engine("sqlite+aiosqlite:///:memory:")   # the app's one chat store
        self.agents = {k: FunctionAgent(llm=MockFunctionCallingLLM(response_generator=answer), tools=[],
                                        system_prompt=SYSTEM) for k in (False, True)}
        self.block = KenningMemoryBlock(mem, dataset=dataset)   # for the hand-over alone
        self.user, self.limit = UserMemoryBinding(mem, dataset), self.block.limit

    def turn(self, kenning: bool, prompt: str):
        from llama_index.core.memory import Memory as ChatMemory

        blocks = [self.block_of(self.mem, dataset=self.dataset)] if kenning else []
        chat = ChatMemory.from_defaults(session_id=_chat(), memory_blocks=blocks, async_engine=self.engine)
        agent = self.agents[kenning]

        async def run():
            return str(await agent.run(prompt, memory=chat))
        return run

    def recall(self, prompt: str):
        def read():
            for _ in range(2):
                self.user.core()
                self.user.context(prompt, self.limit)
        return read

    def hand_over(self, prompt: str):
        chat = _chat()
        said = self.message(role="user", content=prompt)
        reply = self.message(role="assistant", content=REPLY)

        async def keep():   # as at the block's two reads: the prompt, then the prompt and the reply
            await self.block.aput([said], session_id=chat)
            await self.block.aput([said, reply], session_id=chat)
        return keep

    def close(self, runner):
        runner.run(self.engine.dispose())


class OpenAIAgents:
    name = "openai-agents"
    calls = ("Runner.run(Agent(model=ScriptedModel(…), instructions=kenning_instructions(…), "
             "tools=kenning_tools()), prompt, context=UserMemoryBinding(mem, …), session=KenningSession(…))")
    recall_is = "core memory + recall's context (the instructions, once a run)"
    hand_over_is = "KenningSession.add_items, as the SDK calls it: the input, then the reply"

    def __init__(self, mem, dataset: str, steps: int):
        from agents import Agent, set_tracing_disabled
        from agents.testing import ScriptedModel, assistant_message

        from kenning.integrations.openai_agents import (KenningSession, UserMemoryBinding, kenning_instructions,
                                                        kenning_tools)

        set_tracing_disabled(True)   # no trace export: nothing leaves the machine
        self.session_of, self.user = KenningSession, UserMemoryBinding(mem, dataset)

        def model():
            return ScriptedModel([[assistant_message(REPLY)] for _ in range(steps)])

        self.agents = {False: Agent(name="Assistant", model=model(), instructions=SYSTEM),
                       True: Agent(name="Assistant", model=model(), instructions=kenning_instructions(SYSTEM),
                                   tools=kenning_tools())}
        self.reply_item = {"id": "scripted-message", "role": "assistant", "status": "completed", "type": "message",
                           "content": [{"annotations": [], "text": REPLY, "type": "output_text", "logprobs": []}]}

    def turn(self, kenning: bool, prompt: str):
        from agents import Runner

        agent = self.agents[kenning]
        kwargs = {"context": self.user, "session": self.session_of(_chat(), self.user)} if kenning else {}

        async def run():
            return (await Runner.run(agent, prompt, **kwargs)).final_output
        return run

    def recall(self, prompt: str):
        def read():
            self.user.core()
            self.user.context(prompt, 10)
        return read

    def hand_over(self, prompt: str):
        session = self.session_of(_chat(), self.user)
        said, reply = [{"role": "user", "content": prompt}], [dict(self.reply_item)]

        async def keep():
            await session.add_items(said)
            await session.add_items(reply)
        return keep

    def close(self, runner):
        pass


class PydanticAI:
    name = "pydantic-ai"
    calls = ("Agent(FunctionModel(…), deps_type=KenningDeps, capabilities=[KenningMemory()]).run(prompt, "
             "deps=KenningDeps.for_user(mem, …, chat=…))")
    recall_is = "core memory + recall's context (kenning_instructions, once a run)"
    hand_over_is = "remember_run(deps, result): add_turn of the prompt and the reply, as the capability does"

    def __init__(self, mem, dataset: str, runner):
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart
        from pydantic_ai.models.function import FunctionModel

        from kenning.integrations.pydantic_ai import KenningDeps, KenningMemory

        def answer(messages, info):
            return ModelResponse(parts=[TextPart(REPLY)])

        self.mem, self.dataset, self.deps_of, self.runner = mem, dataset, KenningDeps.for_user, runner
        self.agents = {False: Agent(FunctionModel(answer), instructions=SYSTEM),
                       True: Agent(FunctionModel(answer), instructions=SYSTEM, deps_type=KenningDeps,
                                   capabilities=[KenningMemory()])}

    def turn(self, kenning: bool, prompt: str):
        agent = self.agents[kenning]
        kwargs = {"deps": self.deps_of(self.mem, self.dataset, chat=_chat())} if kenning else {}

        async def run():
            return (await agent.run(prompt, **kwargs)).output
        return run

    def recall(self, prompt: str):
        binding = self.deps_of(self.mem, self.dataset).kenning

        def read():
            binding.core()
            binding.context(prompt)
        return read

    def hand_over(self, prompt: str):
        from kenning.integrations.pydantic_ai import remember_run

        result = self.runner.run(self.agents[False].run(prompt))   # a finished run of the prompt, untimed
        deps = self.deps_of(self.mem, self.dataset, chat=_chat())
        return lambda: remember_run(deps, result)

    def close(self, runner):
        pass


# -- the measurement ---------------------------------------------------------------------------------------
def ms_of(runner, fn) -> float:
    """Wall milliseconds of one call: ``fn()``, or, for a coroutine function, one await on ``runner``'s loop
    (timed inside the coroutine, so the loop's own start and stop are left out)."""
    if asyncio.iscoroutinefunction(fn):
        async def timed():
            t = time.perf_counter()
            await fn()
            return (time.perf_counter() - t) * 1000
        return runner.run(timed())
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def stats(ms: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(ms), 2), "p90_ms": round(pct(ms, 90), 2)}


def measure(fw, mem, runner, prompts: Prompts, turns: int, warmup: int, settle: bool) -> dict:
    """``settle``: drain the queue before each timed call (needs a worker thread)."""
    out = {"without": [], "with": [], "recall": [], "hand_over": []}
    for step in range(warmup + turns):
        prompt, other = prompts(), prompts()
        for key, call in (("without", fw.turn(False, prompt)), ("with", fw.turn(True, prompt)),
                          ("recall", fw.recall(other)), ("hand_over", fw.hand_over(other))):
            if settle:
                mem.flush()
            ms = ms_of(runner, call)
            if step >= warmup:
                out[key].append(ms)
    if mem.settings.worker_threads:
        mem.flush()
    diffs = [b - a for a, b in zip(out["without"], out["with"], strict=True)]
    without, with_ = stats(out["without"]), stats(out["with"])
    return {"agent": fw.calls, "recall_is": fw.recall_is, "hand_over_is": fw.hand_over_is,
            "turns": turns, "warmup": warmup, "without": without, "with": with_,
            "added_p50_ms": round(with_["p50_ms"] - without["p50_ms"], 2),
            "added_paired_p50_ms": round(statistics.median(diffs), 2),
            "recall": stats(out["recall"]), "hand_over": stats(out["hand_over"]),
            "other_p50_ms": round(with_["p50_ms"] - without["p50_ms"] - statistics.median(out["recall"])
                                  - statistics.median(out["hand_over"]), 2),
            "samples_ms": {k: [round(v, 3) for v in vals] for k, vals in out.items()}}


def build(name: str, mem, dataset: str, steps: int, runner):
    if name == "langgraph":
        return LangGraph(mem, dataset)
    if name == "llamaindex":
        return LlamaIndex(mem, dataset)
    if name == "openai-agents":
        return OpenAIAgents(mem, dataset, steps)
    return PydanticAI(mem, dataset, runner)


def table(results: dict) -> str:
    head = (f"{'framework':<15}{'without p50/p90':>18}{'with p50/p90':>18}{'added':>9}"
            f"{'recall p50':>12}{'hand-over p50':>15}{'other':>8}")
    lines = [head, "-" * len(head)]
    for name, r in results.items():
        w, k = r["without"], r["with"]
        lines.append(f"{name:<15}{w['p50_ms']:>9.1f} / {w['p90_ms']:<6.1f}{k['p50_ms']:>9.1f} / {k['p90_ms']:<6.1f}"
                     f"{r['added_p50_ms']:>9.1f}{r['recall']['p50_ms']:>12.1f}{r['hand_over']['p50_ms']:>15.1f}"
                     f"{r['other_p50_ms']:>8.1f}")
    return "\n".join(lines) + ("\n(ms per turn; added = median with - median without; other = added - recall"
                               " - hand-over: the glue and the framework's own work for kenning's pieces)")


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):   # not on this platform
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30, help="timed steps per framework (each: a turn without and "
                                                          "with kenning, recall alone, the hand-over alone)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first, per framework")
    ap.add_argument("--messages", type=int, default=200, help="user messages each framework's user has said "
                                                              "before timing (mem.add)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--framework", action="append", choices=FRAMEWORKS, default=None,
                    help="only this framework (repeat); default: all four")
    ap.add_argument("--no-settle", action="store_true", help="do not drain the queue before each timed call")
    args = ap.parse_args(argv)
    if args.turns < 1 or args.warmup < 0 or args.messages < 0:
        ap.error("--turns must be at least 1, --warmup and --messages at least 0")
    names = args.framework or list(FRAMEWORKS)
    argv = sys.argv[1:] if argv is None else list(argv)
    workers = os.environ.get("KENNING_WORKER_THREADS")
    command = " ".join([*([f"KENNING_WORKER_THREADS={workers}"] if workers else []),
                        ".venv/bin/python bench/integrations.py", *argv])
    warnings.filterwarnings("ignore", category=DeprecationWarning)   # llama-index-core's pydantic reads

    from kenning import Memory

    started, load_before = time.perf_counter(), _load()
    results, prefill = {}, {}
    prompts = Prompts(args.seed)
    said = history(args.messages, args.seed)
    with tempfile.TemporaryDirectory() as folder, asyncio.Runner() as runner:
        with Memory(f"sqlite:///{folder}/integrations.db") as mem:
            mem.add("I live in Berlin.", dataset="warmup")   # loads the embedder and the extractor
            settle = not args.no_settle and mem.settings.worker_threads > 0
            for name in names:
                dataset = f"user-{name}"
                t = time.perf_counter()
                for i, (text, at) in enumerate(said):
                    mem.add(text, dataset=dataset, at=at, message_id=f"{dataset}-{i}")
                prefill[name] = round(time.perf_counter() - t, 1)
                print(f"{name}: {args.messages} messages added in {prefill[name]}s; timing {args.turns} turns ...",
                      flush=True)
                fw = build(name, mem, dataset, args.warmup + args.turns, runner)
                try:
                    results[name] = measure(fw, mem, runner, prompts, args.turns, args.warmup, settle)
                finally:
                    fw.close(runner)
            settings = {"worker_threads": mem.settings.worker_threads, "onnx_threads": mem.settings.onnx_threads,
                        "extractor": type(mem.extractor).__name__, "embedder": mem.embedder.name}
    print()
    print(table(results))
    write("integrations", {
        "command": command,
        "description": "ms kenning adds to one agent turn per framework, offline scripted model answering at once "
                       "with text; without and with kenning interleaved; recall and the hand-over alone beside",
        "turns": args.turns, "warmup": args.warmup, "messages_per_user": args.messages, "seed": args.seed,
        "settle": settle, "memory": {"store": "sqlite (temporary file)", **settings},
        "prefill_seconds": prefill, "wall_seconds": round(time.perf_counter() - started, 1),
        "load_average": {"before": load_before, "after": _load()},   # 1, 5, 15 min: other work on the machine
        "frameworks": results,
    }, *PACKAGES)


if __name__ == "__main__":
    main()
