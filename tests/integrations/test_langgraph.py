"""KenningStore, KenningMiddleware, KenningTurns and KenningRecall in LangGraph, LangChain's create_agent and
LangMem's memory tools, on real kenning memories (in process and over HTTP) with LangChain's fake chat model.

The list_namespaces cases are adapted from LangGraph's own store tests (libs/checkpoint/tests/test_store.py
in langchain-ai/langgraph, MIT licence): LangGraph publishes no store conformance suite (its
checkpoint-conformance package covers checkpointers only), so its InMemoryStore tests are the reference.
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta

import pytest

pytest.importorskip("langgraph", reason="the optional LangGraph (pip install 'kenning[langgraph]')")
pytest.importorskip("langchain.agents", reason="LangChain 1.x (pip install 'kenning[langgraph]')")
from langchain.agents import create_agent  # noqa: E402  (after the skip)
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from docs_runner import run_page  # noqa: E402
from kenning import InputError, Memory, PermissionDenied  # noqa: E402
from kenning.integrations._user import UserMemoryBinding  # noqa: E402
from kenning.integrations.langgraph import (KenningMiddleware, KenningRecall, KenningStore,  # noqa: E402
                                            KenningTurns, _finished_turn)

SAM = ("memories", "sam")


class ScriptedModel(FakeMessagesListChatModel):
    """LangChain's fake chat model answering from a script, keeping what each call was sent. ``bind_tools``
    hands back the model itself: the script already holds the tool calls."""

    seen: list = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def tool_call(name: str, **args) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{name}", "type": "tool_call"}])


def run(user: str, thread: str) -> dict:
    return {"configurable": {"user_id": user, "thread_id": thread}}


@pytest.fixture(params=["in_process", "http"])
def memory(request):
    """The same tests on a Memory in process and on the HTTP client of a real server (service key)."""
    if request.param == "in_process":
        yield request.getfixturevalue("mem")
        return
    live = request.getfixturevalue("keyed_server")
    client = Memory(live.url, api_key=live.keys["service"])
    client.live = live
    yield client
    client.close()


# -- the store ---------------------------------------------------------------------------------------------
def test_items_round_trip_and_a_put_replaces_keeping_history(memory):
    store = KenningStore(memory, user_at=1)
    value = {"content": "Sam takes coffee black", "tags": ["coffee", "ünïcode"], "n": 1.5, "ok": True,
             "nested": {"a": None, "b": [1, {"c": "d"}]}}
    store.put(SAM, "k1", value)
    first = store.get(SAM, "k1")
    assert (first.namespace, first.key, first.value) == (SAM, "k1", value)
    assert first.created_at == first.updated_at and first.created_at.tzinfo is not None
    assert store.search(SAM)[0] == first                     # the same item whichever way it is read
    assert store.get(SAM, "k2") is None and store.get(("memories", "ana"), "k1") is None

    store.put(SAM, "k1", {"content": "Sam takes coffee with oat milk"})
    second = store.get(SAM, "k1")
    assert second.value == {"content": "Sam takes coffee with oat milk"}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    [file] = memory.core.list("sam", "agent:langgraph")
    history = memory.core.history("sam", file.path, "agent:langgraph")
    assert [v.version for v in history] == [1, 2] and '"Sam takes coffee black"' in history[0].content


def test_item_text_surfaces_in_recall_and_leaves_it_on_delete(mem):
    store = KenningStore(mem, user_at=1)
    store.put(SAM, "allergy", {"content": "Sam is allergic to peanuts"})
    store.put(SAM, "city", {"city": "Lisbon", "since": 2019})
    assert "Sam is allergic to peanuts" in [n.text for n in mem.recall("peanuts", "sam").notes]
    assert "city: Lisbon; since: 2019" in [n.text for n in mem.recall("Which city?", "sam").notes]

    store.delete(SAM, "allergy")
    store.delete(SAM, "never-there")   # nothing to delete is no error, as in every BaseStore
    assert store.get(SAM, "allergy") is None
    assert "Sam is allergic to peanuts" not in [n.text for n in mem.recall("peanuts", "sam").notes]
    forgotten = [n for n in mem.notes.list("sam", "agent:langgraph", include_forgotten=True) if n.forgotten_at]
    assert [n.text for n in forgotten] == ["Sam is allergic to peanuts"]   # kept in the history


def test_two_items_with_one_text_share_a_note_until_both_are_gone(mem):
    store = KenningStore(mem, user_at=1)
    store.put(SAM, "a", {"content": "likes tea"})
    store.put(SAM, "b", {"content": "likes tea"})
    store.delete(SAM, "a")
    assert [n.text for n in mem.notes.list("sam", "agent:langgraph")] == ["likes tea"]
    assert store.search(SAM, query="tea")[0].score is not None
    store.put(SAM, "b", {"content": "likes green tea"})
    assert [n.text for n in mem.notes.list("sam", "agent:langgraph")] == ["likes green tea"]


def test_search_ranks_by_query_filters_and_pages(memory):
    store = KenningStore(memory, user_at=1)
    rows = {"coffee": {"content": "Sam takes coffee black", "kind": "preference", "stars": 5},
            "city": {"content": "Sam lives in Lisbon", "kind": "fact", "stars": 3},
            "pet": {"content": "Sam has a cat called Miso", "kind": "fact", "stars": 4, "meta": {"src": "chat"}},
            "work": {"content": "Sam works at a bakery", "kind": "fact", "stars": 1}}
    for key, value in rows.items():
        store.put(SAM, key, value)
    store.put(("memories", "sam", "drafts"), "draft", {"content": "a coffee draft", "kind": "fact"})
    store.put(("memories", "ana"), "coffee", {"content": "Ana takes coffee with milk", "kind": "preference"})

    ranked = store.search(SAM, query="How does Sam take coffee?")
    assert ranked[0].key == "coffee" and ranked[0].score is not None
    assert {i.key for i in ranked} == set(rows) | {"draft"}   # the prefix's items, never Ana's
    scored = [i.score for i in ranked if i.score is not None]
    assert scored == sorted(scored, reverse=True)

    assert [i.key for i in store.search(SAM)] == ["draft", "work", "pet", "city", "coffee"]  # newest first
    assert {i.key for i in store.search(SAM, filter={"kind": "fact"})} == {"city", "pet", "work", "draft"}
    assert [i.key for i in store.search(SAM, filter={"kind": "fact", "stars": {"$gte": 3}})] == ["pet", "city"]
    assert [i.key for i in store.search(SAM, filter={"meta": {"src": "chat"}})] == ["pet"]
    assert [i.key for i in store.search(SAM, filter={"kind": {"$ne": "fact"}})] == ["coffee"]
    assert store.search(("memories", "sam", "drafts"), query="coffee")[0].key == "draft"

    whole = [i.key for i in store.search(SAM, query="coffee", filter={"kind": "fact"}, limit=10)]
    pages = [i.key for offset in range(0, 4, 2)
             for i in store.search(SAM, query="coffee", filter={"kind": "fact"}, limit=2, offset=offset)]
    assert pages == whole and len(whole) == 4


def test_index_picks_what_search_and_recall_read(mem):
    store = KenningStore(mem, user_at=1)
    store.put(SAM, "doc", {"title": "Oat milk trial", "body": "ignored text about trains"}, index=["title"])
    store.put(SAM, "secret", {"content": "door code 4812"}, index=False)
    assert [n.text for n in mem.notes.list("sam", "agent:langgraph")] == ["Oat milk trial"]
    hits = store.search(SAM, query="oat milk")
    assert hits[0].key == "doc" and hits[0].score is not None
    assert [(i.key, i.score) for i in hits[1:]] == [("secret", None)]   # found by listing, never ranked
    assert store.get(SAM, "secret").value == {"content": "door code 4812"}


# list_namespaces: the cases of LangGraph's test_list_namespaces_basic and _max_depth, with user_at=0 so
# the upstream namespaces run unchanged ("a", "b", "users" and "admin" are users).
UPSTREAM = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
            ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")]


def test_list_namespaces_as_langgraph_tests_it(memory):
    store = KenningStore(memory, user_at=0)
    for i, ns in enumerate(UPSTREAM):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})

    assert sorted(store.list_namespaces(prefix=("a", "b"))) == [("a", "b", "c"), ("a", "b", "d", "e"),
                                                              ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [("a", "b", "c"), ("a", "b", "d"),
                                                                             ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("*", "users")) == [("admin", "users", "789")]
    assert store.list_namespaces(max_depth=2) == sorted({ns[:2] for ns in UPSTREAM})
    assert store.list_namespaces() == sorted(UPSTREAM)   # a service memory sees every user's


def test_a_batch_reads_first_then_writes_last_put_wins(mem):
    store = KenningStore(mem, user_at=1)
    store.put(SAM, "old", {"content": "to be deleted"})
    results = store.batch([
        PutOp(SAM, "k", {"content": "first"}),
        GetOp(SAM, "k"),
        SearchOp(SAM, filter={"content": "to be deleted"}),
        PutOp(SAM, "k", {"content": "second"}),
        PutOp(SAM, "old", None),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", SAM),)),
        GetOp(SAM, "old"),
    ])
    assert results[0] is None and results[1] is None   # reads see the store as it was before the batch
    assert [i.key for i in results[2]] == ["old"] and results[6].value == {"content": "to be deleted"}
    assert results[5] == [SAM]
    assert store.get(SAM, "k").value == {"content": "second"} and store.get(SAM, "old") is None
    [file] = mem.core.list("sam", "agent:langgraph")
    assert len(mem.core.history("sam", file.path, "agent:langgraph")) == 1   # one write for the two puts


def test_async_twins(mem):
    store = KenningStore(mem, user_at=1)

    async def main():
        await store.aput(SAM, "k", {"content": "Sam plays the cello"})
        got = await store.aget(SAM, "k")
        found = await store.asearch(SAM, query="music instrument cello")
        spaces = await store.alist_namespaces(prefix=SAM)
        both = await store.abatch([GetOp(SAM, "k"), GetOp(SAM, "missing")])
        await store.adelete(SAM, "k")
        return got, found, spaces, both, await store.aget(SAM, "k")

    got, found, spaces, both, gone = asyncio.run(main())
    assert got.value == {"content": "Sam plays the cello"} and found[0] == got and found[0].score is not None
    assert spaces == [SAM] and both[0] == got and both[1] is None and gone is None


def test_what_the_store_refuses(mem):
    store = KenningStore(mem, user_at=1)
    with pytest.raises(InputError, match=r"names no user.*user_at=1"):
        store.put(("sam",), "k", {"content": "x"})
    with pytest.raises(InputError, match="names no user"):
        store.search(("memories",), query="x")
    with pytest.raises(InputError, match="JSON"):
        store.put(SAM, "k", {"when": timedelta(days=1)})
    with pytest.raises(NotImplementedError, match="TTL is not supported by KenningStore"):
        store.put(SAM, "k", {"content": "x"}, ttl=5)
    with pytest.raises(NotImplementedError, match="does not expire items"):
        store.batch([PutOp(SAM, "k", {"content": "x"}, ttl=5)])
    with pytest.raises(InputError, match="organization"):
        KenningStore(mem, user_at=1, namespace="organization")
    with pytest.raises(InputError, match="user_at"):
        KenningStore(mem, user_at=-1)
    with pytest.raises(InputError, match="names no user"):   # the batch is checked before anything runs
        store.batch([PutOp(SAM, "ok", {"content": "x"}), PutOp(("x",), "bad", {"content": "y"})])
    assert mem.core.list("sam", "agent:langgraph") == [] and mem.notes.list("sam", "agent:langgraph") == []
    assert KenningStore(mem, user_at=0).get(("sam", "memories"), "k") is None


def test_user_at_has_no_default_and_either_shape_keeps_users_apart(mem):
    """LangGraph's docs write (user_id, "memories"), LangMem's ("memories", user_id): a default would be wrong
    for one of them, and the wrong one files everyone under a "user" called "memories"."""
    with pytest.raises(InputError, match=r'(?s)user_at=1\) for \("memories", user_id\).*'
                                         r'user_at=0\) for \(user_id, "memories"\)'):
        KenningStore(mem)
    store = KenningStore(mem, user_at=0)
    store.put(("sam", "memories"), "m1", {"content": "Sam's therapist is Dr. Reyes"})
    store.put(("ana", "memories"), "m1", {"content": "Ana is allergic to peanuts"})
    assert sorted(d.dataset for d in mem.datasets().datasets) == ["ana", "sam"]   # no user named "memories"
    assert "Reyes" in mem.recall("therapist", "sam").context
    assert "peanuts" not in mem.recall("therapist allergy", "sam").context
    mem.delete_dataset("sam")
    assert store.get(("sam", "memories"), "m1") is None   # erasing Sam erases Sam's items
    assert store.get(("ana", "memories"), "m1").value == {"content": "Ana is allergic to peanuts"}


def test_a_users_store_refuses_another_users_namespace(mem):
    KenningStore(mem, user_at=1).put(SAM, "k", {"content": "Sam's secret"})
    ana = KenningStore(mem.as_user("ana"), user_at=1)
    ana.put(("memories", "ana"), "k", {"content": "Ana likes jazz"})
    for attempt in (lambda: ana.put(SAM, "x", {"content": "planted"}), lambda: ana.get(SAM, "k"),
                    lambda: ana.search(SAM, query="secret"), lambda: ana.delete(SAM, "k"),
                    lambda: ana.list_namespaces(prefix=SAM)):
        with pytest.raises(PermissionDenied):
            attempt()
    assert ana.list_namespaces() == [("memories", "ana")]   # only her own, even unasked
    assert KenningStore(mem, user_at=1).get(SAM, "k").value == {"content": "Sam's secret"}


def test_a_user_token_over_http_is_refused_another_users_namespace(keyed_server):
    with Memory(keyed_server.url, api_key=keyed_server.keys["service"]) as service, service.as_user("ana") as token:
        sams = KenningStore(service, user_at=1)
        sams.put(SAM, "k", {"content": "Sam's secret"})
        ana = KenningStore(token, user_at=1)   # a client holding a user token bound to dataset "ana"
        ana.put(("memories", "ana"), "k", {"content": "Ana likes jazz"})
        assert ana.get(("memories", "ana"), "k").value == {"content": "Ana likes jazz"}
        with pytest.raises(PermissionDenied):
            ana.get(SAM, "k")
        with pytest.raises(PermissionDenied):
            ana.put(SAM, "x", {"content": "planted"})
        with pytest.raises(PermissionDenied):
            ana.search(SAM, query="secret")
        assert ana.list_namespaces() == [("memories", "ana")]
        assert [i.value for i in sams.search(SAM)] == [{"content": "Sam's secret"}]


# -- the hooks ---------------------------------------------------------------------------------------------
def test_finished_turn_waits_for_the_answer():
    human, ask = HumanMessage("hi", id="h1"), tool_call("lookup", q="x")
    result, answer = ToolMessage("42", tool_call_id="call_lookup"), AIMessage("It is 42.", id="a1")
    assert _finished_turn([human, ask]) == []   # still calling tools
    assert _finished_turn([human, ask, result, answer]) == [(0, human), (3, answer)]
    assert _finished_turn([human, ask, result, answer], replies=False) == [(0, human)]
    again = HumanMessage("and?", id="h2")
    assert _finished_turn([human, answer, again, HumanMessage("hello?"), answer])[0] == (2, again)
    assert _finished_turn([human, answer, answer]) == [(2, answer)]   # no user message since the last answer


def test_turns_and_recall_as_nodes_of_a_state_graph(mem):
    mem.notes.save("sam", "Sam is allergic to peanuts")
    model = ScriptedModel(responses=[AIMessage("No peanuts, then. Try the oat cookie.")])
    recall, turns = KenningRecall(mem), KenningTurns(mem)

    def chat(state: MessagesState, config) -> dict:
        return {"messages": [model.invoke(recall(state, config))]}

    graph = (StateGraph(MessagesState).add_node("chat", chat).add_node("remember", turns)
             .add_edge(START, "chat").add_edge("chat", "remember").add_edge("remember", END)
             .compile(checkpointer=InMemorySaver()))
    config = run("sam", "t1")
    out = graph.invoke({"messages": [HumanMessage("Can I eat the peanut cookie? I live in Lisbon.")]}, config)

    system = model.seen[0][0]
    assert isinstance(system, SystemMessage) and "allergic to peanuts" in system.text
    mem.flush()
    said = mem.messages.thread("sam", "t1").messages
    assert [(m.role, m.content) for m in said] == [("user", "Can I eat the peanut cookie? I live in Lisbon."),
                                                   ("assistant", "No peanuts, then. Try the oat cookie.")]
    assert "lisbon" in [f.object for f in mem.list_facts("sam").facts]   # mined by the worker
    again = turns.save(out["messages"], config)   # the same messages handed over again: stored once
    assert [r.reason for r in again] == ["already_ingested", "already_ingested"]
    assert mem.messages.thread("sam", "t1").total == 2


def test_turns_without_a_user_or_for_another_user_are_refused(mem):
    done = [HumanMessage("hi", id="h"), AIMessage("hello", id="a")]
    with pytest.raises(InputError, match="names no user"):
        KenningTurns(mem).save(done, {"configurable": {"thread_id": "t"}})
    with pytest.raises(PermissionDenied):
        KenningTurns(UserMemoryBinding(mem, "ana")).save(done, run("sam", "t"))
    with pytest.raises(PermissionDenied):
        KenningRecall(mem.as_user("ana")).context(done, run("sam", "t"))
    assert [r.status for r in KenningTurns(UserMemoryBinding(mem, "ana"), replies=False).save(done, run("ana", "t"))] \
        == ["processing"]


def test_the_missing_user_error_names_both_ways_and_user_key(mem):
    done = [HumanMessage("hi", id="h"), AIMessage("hello", id="a")]
    with pytest.raises(InputError, match=r"(?s)names no user.*configurable.*runtime context.*user_key="):
        KenningTurns(mem).save(done, {"configurable": {"thread_id": "t"}})


@dataclass
class Ctx:
    user_id: str
    thread_id: str | None = None


class CtxModel(BaseModel):
    account: str


class CtxDict(TypedDict):
    user_id: str
    thread_id: str


def test_create_agent_reads_the_user_and_thread_from_the_runtime_context(mem):
    """LangChain 1.x's way: create_agent(..., context_schema=Ctx), invoke(..., context=Ctx(user_id=...))."""
    mem.notes.save("sam", "Sam is allergic to peanuts")
    model = ScriptedModel(responses=[AIMessage("No peanuts, then.")])
    agent = create_agent(model, tools=[], middleware=[KenningMiddleware(mem)], context_schema=Ctx)
    agent.invoke({"messages": [HumanMessage("Can I eat the peanut cookie?")]}, context=Ctx("sam", "ctx1"))
    assert "allergic to peanuts" in model.seen[0][0].text   # recall ran for Sam
    mem.flush()
    assert [m.role for m in mem.messages.thread("sam", "ctx1").messages] == ["user", "assistant"]

    # a pydantic context under another key, async; the thread from the config
    model = ScriptedModel(responses=[AIMessage("Hello, Ana.")])
    agent = create_agent(model, tools=[], middleware=[KenningMiddleware(mem, user_key="account")],
                         context_schema=CtxModel)
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("I live in Porto.")]}, {"configurable": {"thread_id": "p"}},
                              context=CtxModel(account="ana")))
    mem.flush()
    assert mem.messages.thread("ana", "p").total == 2

    # the config and the context naming two people is refused; a one-user memory checks the context too
    with pytest.raises(InputError, match="two different users"):
        create_agent(ScriptedModel(responses=[AIMessage("x")]), tools=[], middleware=[KenningMiddleware(mem)],
                     context_schema=Ctx).invoke({"messages": [HumanMessage("hi")]}, run("sam", "t"),
                                                context=Ctx("ana"))
    with pytest.raises(PermissionDenied):
        create_agent(ScriptedModel(responses=[AIMessage("x")]), tools=[],
                     middleware=[KenningMiddleware(mem.as_user("ana"))], context_schema=Ctx).invoke(
            {"messages": [HumanMessage("hi")]}, context=Ctx("sam"))


def test_state_graph_nodes_read_a_dict_runtime_context(mem):
    model = ScriptedModel(responses=[AIMessage("Noted.")])
    recall, turns = KenningRecall(mem), KenningTurns(mem)

    def chat(state: MessagesState, config) -> dict:
        return {"messages": [model.invoke(recall(state, config))]}

    graph = (StateGraph(MessagesState, context_schema=CtxDict).add_node("chat", chat).add_node("remember", turns)
             .add_edge(START, "chat").add_edge("chat", "remember").add_edge("remember", END).compile())
    graph.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, context={"user_id": "sam", "thread_id": "d"})
    mem.flush()
    assert [m.content for m in mem.messages.thread("sam", "d").messages] == ["I live in Lisbon.", "Noted."]


def test_langmems_own_user_key_is_read_when_user_key_is_the_default(mem, langmem):
    namespace = ("memories", "{langgraph_user_id}")   # as LangMem's docs write it
    model = ScriptedModel(responses=[tool_call("manage_memory", content="Sam lives in Porto", action="create"),
                                     AIMessage("Saved.")])
    agent = create_agent(model, tools=[langmem.create_manage_memory_tool(namespace)],
                         middleware=[KenningMiddleware(mem)], store=KenningStore(mem, user_at=1))
    agent.invoke({"messages": [HumanMessage("I live in Porto.")]},
                 {"configurable": {"langgraph_user_id": "sam", "thread_id": "lm"}})
    assert [i.value for i in KenningStore(mem, user_at=1).search(SAM)] == [{"content": "Sam lives in Porto"}]
    mem.flush()
    assert mem.messages.thread("sam", "lm").total == 2
    with pytest.raises(InputError, match="names no user"):   # another user_key is taken at its word
        KenningTurns(mem, user_key="account").save([HumanMessage("hi", id="h"), AIMessage("yo", id="a")],
                                                   {"configurable": {"langgraph_user_id": "sam"}})


def test_a_turns_node_before_the_model_queues_the_user_and_warns_once(mem, caplog):
    model = ScriptedModel(responses=[AIMessage("ok")])

    def chat(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    def graph(turns: KenningTurns):   # the wrong order: remember, then chat
        return (StateGraph(MessagesState).add_node("remember", turns).add_node("chat", chat)
                .add_edge(START, "remember").add_edge("remember", "chat").add_edge("chat", END).compile())

    caplog.set_level(logging.WARNING, logger="kenning.integrations.langgraph")
    early = graph(KenningTurns(mem))
    for text in ["I live in Madrid.", "I work at a bakery."]:
        early.invoke({"messages": [HumanMessage(text)]}, run("sam", "t1"))
    warned = [r.getMessage() for r in caplog.records if "before the model answered" in r.getMessage()]
    assert len(warned) == 1 and "add_edge('chat', 'remember')" in warned[0]   # once per node
    mem.flush()
    assert [(m.role, m.content) for m in mem.messages.thread("sam", "t1").messages] == [
        ("user", "I live in Madrid."), ("user", "I work at a bakery.")]   # the user's words, mined all the same
    assert "madrid" in [f.object for f in mem.list_facts("sam").facts]

    caplog.clear()   # replies=False keeps no replies anyway: nothing to warn about
    graph(KenningTurns(mem, replies=False)).invoke({"messages": [HumanMessage("hi")]}, run("sam", "t2"))
    assert not [r for r in caplog.records if "before the model answered" in r.getMessage()]
    calling = [HumanMessage("hi", id="h"), tool_call("lookup", q="x"), ToolMessage("42", tool_call_id="call_lookup")]
    assert KenningTurns(mem).save(calling, run("sam", "t3")) == []   # between the tools and the model
    assert "stored nothing" in caplog.records[-1].getMessage()


@pytest.fixture
def langmem():
    return pytest.importorskip("langmem", reason="LangMem, for its memory tools (pip install langmem)")


def memory_agent(memory, langmem, model, middleware=True):
    namespace = ("memories", "{user_id}")
    return create_agent(model, tools=[langmem.create_manage_memory_tool(namespace),
                                      langmem.create_search_memory_tool(namespace)],
                        system_prompt="You are Café Lumen's assistant.",
                        middleware=[KenningMiddleware(memory)] if middleware else [],
                        store=KenningStore(memory, user_at=1), checkpointer=InMemorySaver())


def test_langmem_tools_store_in_one_thread_and_recall_in_another(memory, langmem):
    """LangMem's manage_memory writes through KenningStore; a later thread finds it by the search tool
    and by the middleware's recall; the turns reach kenning. In process and over HTTP."""
    model = ScriptedModel(responses=[
        tool_call("manage_memory", content="Sam takes coffee black, no sugar", action="create"),
        AIMessage("Noted: black, no sugar."),
        tool_call("search_memory", query="how does Sam take coffee"),
        AIMessage("One black coffee, no sugar, coming up."),
    ])
    agent = memory_agent(memory, langmem, model)
    agent.invoke({"messages": [HumanMessage("I take my coffee black, no sugar. Remember that.")]},
                 run("sam", "monday"))
    [item] = KenningStore(memory, user_at=1).search(SAM)
    assert item.value == {"content": "Sam takes coffee black, no sugar"}

    out = agent.invoke({"messages": [HumanMessage("My usual coffee, please!")]}, run("sam", "friday"))
    system = model.seen[2][0]   # the first call of the new thread
    assert system.text.startswith("You are Café Lumen's assistant.") and "Sam takes coffee black" in system.text
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert item.key in found.text and "Sam takes coffee black, no sugar" in found.text
    assert [m.text for m in out["messages"] if isinstance(m, HumanMessage)] == ["My usual coffee, please!"]

    memory.flush()
    monday = memory.messages.thread("sam", "monday").messages
    assert [(m.role, m.content) for m in monday] == [("user", "I take my coffee black, no sugar. Remember that."),
                                                     ("assistant", "Noted: black, no sugar.")]
    assert "Sam takes coffee black" in memory.recall("How does Sam take coffee?", "sam").context


def test_an_agent_over_one_users_memory_is_refused_for_another(mem, langmem):
    """The tool's put is refused by the store; with the middleware, the run is refused before the model."""
    script = [tool_call("manage_memory", content="planted", action="create"), AIMessage("done")]
    tools_only = ScriptedModel(responses=script)
    with pytest.raises(PermissionDenied):
        memory_agent(mem.as_user("ana"), langmem, tools_only, middleware=False).invoke(
            {"messages": [HumanMessage("remember this")]}, run("sam", "t"))
    assert len(tools_only.seen) == 1   # the model asked for the tool; the put was refused
    with_middleware = ScriptedModel(responses=script)
    with pytest.raises(PermissionDenied):
        memory_agent(mem.as_user("ana"), langmem, with_middleware).invoke(
            {"messages": [HumanMessage("remember this")]}, run("sam", "t"))
    assert with_middleware.seen == []
    assert mem.core.list("sam", "agent:langgraph") == [] and mem.messages.thread("sam", "t").total == 0


def test_middleware_in_an_async_agent(mem, langmem):
    KenningStore(mem, user_at=1).put(SAM, "pet", {"content": "Sam has a cat called Miso"})
    model = ScriptedModel(responses=[AIMessage("Say hi to Miso!")])
    agent = memory_agent(mem, langmem, model)
    out = asyncio.run(agent.ainvoke({"messages": [HumanMessage("What's my cat's name?")]}, run("sam", "t9")))
    assert out["messages"][-1].text == "Say hi to Miso!"
    assert "Miso" in model.seen[0][0].text
    mem.flush()
    assert mem.messages.thread("sam", "t9").total == 2


def test_the_docs_page_runs_as_written(tmp_path, monkeypatch, capsys, langmem):
    model = ScriptedModel(responses=[
        tool_call("manage_memory", content="Sam takes coffee black, no sugar", action="create"),
        AIMessage("Noted: black, no sugar."),
        AIMessage("One black coffee, no sugar, coming up."),
        AIMessage("Welcome back, Sam."),
    ])
    chat_model = ScriptedModel(responses=[AIMessage("The black coffee, as always?")])
    ns = run_page("langgraph.md", tmp_path, monkeypatch, namespace={"model": model, "chat_model": chat_model},
                  swap={'init_chat_model("anthropic:claude-sonnet-4-5")': "chat_model",
                        '"anthropic:claude-sonnet-4-5"': "model"})
    printed = capsys.readouterr().out
    friday = model.seen[2]
    assert "Café Lumen" in friday[0].text and "Sam takes coffee black, no sugar" in friday[0].text
    assert "One black coffee, no sugar, coming up." in printed
    assert "{'content': 'Sam takes coffee black, no sugar'}" in printed          # the search
    assert "user: I take my coffee black, no sugar. Remember that." in printed   # the thread
    assert "user takes coffee black" in printed                                # a fact mined from it
    saturday = model.seen[3][0].text   # recall ran for the user the runtime context named
    assert saturday.startswith("What you remember about this user") and "black" in saturday
    assert "coffee black" in chat_model.seen[0][0].text                         # the StateGraph's recall
    assert "The black coffee, as always?" in printed
    assert "belongs to dataset 'sam'; it cannot act for 'ana'" in printed       # the permission refused
    with Memory() as reopened:   # the page's memory, as it left it
        assert KenningStore(reopened, user_at=1).get(SAM, "milk").value == {"content": "Sam is trying oat milk"}
        assert reopened.messages.thread("sam", "sunday").total == 2
        assert reopened.messages.thread("sam", "saturday").total == 2
    assert ns["store"].user_at == 1
