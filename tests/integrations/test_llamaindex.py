"""KenningMemoryBlock and kenning_tools in the real llama-index-core: its Memory, FunctionAgent and
SimpleChatEngine, driven by its own scripted models (MockFunctionCallingLLM, MockLLM). No network."""
from __future__ import annotations

import asyncio
import re
import socket

import pytest

pytest.importorskip("llama_index.core", reason="the optional llama-index-core (pip install 'kenning[llamaindex]')")
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402  (after the skip)
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock  # noqa: E402
from llama_index.core.chat_engine import SimpleChatEngine  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLMWithChatMemoryOfLastCall  # noqa: E402
from llama_index.core.memory import BaseMemoryBlock  # noqa: E402
from llama_index.core.memory import Memory as ChatMemory  # noqa: E402
from llama_index.core.storage.chat_store.sql import MessageStatus  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402

from docs_runner import DOCS, run_page  # noqa: E402
from kenning import Memory, PermissionDenied  # noqa: E402
from kenning.integrations.llamaindex import KenningMemoryBlock, kenning_tools  # noqa: E402

# llama-index-core's Workflow.__init__ lists an agent's methods with inspect.getmembers, which reads the
# deprecated attributes of the pydantic model the agent is: FunctionAgent(...) itself warns, whatever we do.
pytestmark = [
    pytest.mark.filterwarnings("ignore:The `__fields__` attribute is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:The `__fields_set__` attribute is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_computed_fields' attribute on the instance is "
                               "deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_fields' attribute on the instance is "
                               "deprecated:DeprecationWarning"),
]

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Nothing leaves the machine: llama-index-core's tokenizer must come from the files it bundles
    (tiktoken downloads into $TIKTOKEN_CACHE_DIR when that is set elsewhere), and no model is called."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    connect, resolve = socket.socket.connect, socket.getaddrinfo

    def connect_loopback(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise OSError(f"the tests may not reach {address!r}")
        return connect(sock, address)

    def resolve_loopback(host, *args, **kwargs):
        if host not in LOOPBACK:
            raise OSError(f"the tests may not look up {host!r}")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect_loopback)
    monkeypatch.setattr(socket, "getaddrinfo", resolve_loopback)


@pytest.fixture
def chats():
    """``chats(session_id, *blocks)``: LlamaIndex Memory objects whose chat stores this test closes
    (an aiosqlite connection still open when collected warns, perhaps during another test)."""
    engines = []

    def make(session_id: str, *blocks: BaseMemoryBlock, **kwargs) -> ChatMemory:
        engines.append(create_async_engine("sqlite+aiosqlite:///:memory:"))
        return ChatMemory.from_defaults(session_id=session_id, memory_blocks=list(blocks), async_engine=engines[-1],
                                        **kwargs)

    yield make
    for engine in engines:
        asyncio.run(engine.dispose())


class Script:
    """The model's replies, in order; ``seen`` keeps the messages each call was shown."""

    def __init__(self, *replies):
        self.replies, self.seen = list(replies), []

    def __call__(self, messages, **kwargs) -> ChatMessage:
        self.seen.append([m.model_copy(deep=True) for m in messages])
        reply = self.replies.pop(0)
        return reply(messages) if callable(reply) else reply

    @property
    def llm(self) -> MockFunctionCallingLLM:
        return MockFunctionCallingLLM(response_generator=self)

    def system(self, call: int) -> str:
        return "\n".join(m.content or "" for m in self.seen[call] if m.role.value == "system")


def say(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def use(tool: str, call_id: str = "call_1", **kwargs) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id=call_id, tool_name=tool,
                                                               tool_kwargs=kwargs)])


def run_agent(memory, script: Script, text: str, chat: ChatMemory) -> str:
    async def main():
        agent = FunctionAgent(llm=script.llm, tools=kenning_tools(memory, "sam"))
        return str(await agent.run(text, memory=chat))
    return asyncio.run(main())


def thread(memory, chat: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in memory.messages.thread("sam", chat).messages]


def test_an_agent_turn_reaches_kenning_and_the_next_conversation_recalls_it(mem, chats):
    first = Script(use("remember", text="Sam likes short answers."), say("Noted."))
    reply = run_agent(mem, first, "I live in Lisbon and I'm allergic to peanuts.",
                      chats("chat-1", KenningMemoryBlock(mem, dataset="sam")))
    assert reply == "Noted."
    assert first.system(0) == ""   # nothing known yet: the block adds nothing to the prompt
    mem.flush()
    # the user's turn and the reply, each once: not the tool call, not its output, not the message the agent
    # hands its memory again after the tool call
    assert thread(mem, "chat-1") == [("user", "I live in Lisbon and I'm allergic to peanuts."), ("assistant", "Noted.")]
    assert {f.text for f in mem.list_facts("sam").facts} >= {"user lives in lisbon", "user is allergic to peanuts"}
    assert [n.text for n in mem.notes.list("sam")] == ["Sam likes short answers."]

    second = Script(say("A grilled fish, no peanuts."))
    run_agent(mem, second, "What should I cook tonight?", chats("chat-2", KenningMemoryBlock(mem, dataset="sam")))
    prompt = second.system(0)
    assert prompt.startswith("<memory>") and "<kenning>" in prompt
    assert "is allergic to: peanuts" in prompt and "lives in: lisbon" in prompt


def test_the_agent_recalls_and_forgets_through_the_tools(mem, chats):
    mem.add("I'm allergic to peanuts.", dataset="sam")
    fact_id = mem.list_facts("sam").facts[0].fact_id

    def forget_what_recall_listed(messages):
        listed = re.search(r"- fact (f_\w+): user is allergic to peanuts", messages[-1].content)
        return use("forget", "call_2", id=listed.group(1))

    script = Script(use("recall", query="peanuts"), forget_what_recall_listed,
                    use("forget", "call_3", id="f_nothing"), say("Done."))
    run_agent(mem, script, "Forget my peanut allergy, it was a mistake.", chats("chat-1"))

    recalled, forgotten, unknown = (script.seen[i][-1] for i in (1, 2, 3))
    assert recalled.role.value == "tool" and "is allergic to: peanuts" in recalled.content
    assert forgotten.content == f"Forgot fact {fact_id}."
    assert "no note or fact 'f_nothing'" in unknown.content   # kenning's error, handed back to the model
    assert mem.list_facts("sam").facts == []


def test_the_tools_as_the_model_sees_them(mem):
    tools = {t.metadata.name: t for t in kenning_tools(mem, "sam")}
    assert set(tools) == {"recall", "remember", "forget"}
    params = {name: tool.metadata.get_parameters_dict() for name, tool in tools.items()}
    assert params["recall"]["required"] == ["query"]
    # forget's argument is `id`, as in kenning's MCP server, the Pydantic AI and the Agents SDK adapters
    assert params["forget"]["required"] == ["id"]
    assert params["forget"]["properties"]["id"]["description"] == "a note or fact id, as recall lists them"
    assert params["remember"]["properties"]["text"]["description"].startswith("what to keep")
    assert tools["recall"].call(query="anything").content == "Nothing remembered bears on this."
    saved = tools["remember"].call(text="Prefers tea to coffee.").content
    note_id = mem.notes.list("sam")[0].note_id
    assert saved == f"Saved note {note_id}."
    assert "Prefers tea to coffee." in tools["recall"].call(query="tea or coffee?").content
    assert tools["forget"].call(id=note_id).content == f"Forgot note {note_id}."
    assert mem.notes.list("sam") == []


def test_forget_leaves_the_users_words_and_messages_delete_takes_them_back(mem):
    """What the pages say forget does: the fact leaves recall, the user's message does not (it comes back
    in the next conversation's block, under "Earlier messages"); messages.delete takes it back for good."""
    block = KenningMemoryBlock(mem, dataset="sam")
    asyncio.run(block.aget([ChatMessage(role="user", content="I'm allergic to peanuts.")], session_id="c1"))
    mem.flush()
    [fact] = mem.list_facts("sam").facts
    forget = {t.metadata.name: t for t in kenning_tools(mem, "sam")}["forget"]
    assert forget.call(id=fact.fact_id).content == f"Forgot fact {fact.fact_id}."
    asked = [ChatMessage(role="user", content="Any foods with peanuts I should avoid?")]
    text = asyncio.run(KenningMemoryBlock(mem, dataset="sam").aget(asked, session_id="c2"))
    assert "is allergic to" not in text
    assert "Earlier messages" in text and "user: I'm allergic to peanuts." in text
    assert mem.messages.delete("sam", fact.episode_id)["facts"] == 1
    assert "peanuts." not in asyncio.run(KenningMemoryBlock(mem, dataset="sam").aget(asked, session_id="c3"))
    page = " ".join((DOCS / "llamaindex.md").read_text().split())
    assert "forgets a note, or soft-deletes a fact" in page and 'under "Earlier messages"' in page
    assert 'mem.messages.delete("sam", message_id)' in page


def test_kennings_memory_or_the_block_where_llamaindex_wants_its_memory(mem):
    """Two classes named Memory: the page imports LlamaIndex's as ChatMemory and says which goes where,
    and the block, handed to an agent as its memory, says what to pass instead."""
    block = KenningMemoryBlock(mem, dataset="sam")
    with pytest.raises(TypeError, match=r"block of LlamaIndex's Memory, not a Memory itself: pass "
                                        r"memory=ChatMemory\.from_defaults\(session_id=…, memory_blocks=\[block\]\)"):
        run_agent(mem, Script(say("Hi.")), "Hello", block)
    assert mem.messages.chats("sam").chats == []
    page = (DOCS / "llamaindex.md").read_text()
    assert "from llama_index.core.memory import Memory as ChatMemory" in page
    assert "Two classes are called `Memory` here." in page
    assert "from llama_index.core.memory import Memory\n" not in page


def test_a_short_chat_over_http_is_written_and_recalled(keyed_server, chats):
    """SimpleChatEngine (sync) on a user token: two short chats, neither overflowing short-term memory."""
    service = Memory(keyed_server.url, api_key=keyed_server.keys["service"])
    sam = service.as_user("sam")
    try:
        block = KenningMemoryBlock(sam, dataset="sam")
        monday = chats("monday", block)
        SimpleChatEngine.from_defaults(llm=MockLLMWithChatMemoryOfLastCall(), memory=monday).chat(
            "I work as a nurse in Porto.")
        service.flush()
        assert thread(service, "monday")[0] == ("user", "I work as a nurse in Porto.")

        llm = MockLLMWithChatMemoryOfLastCall()
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=chats("tuesday", KenningMemoryBlock(sam, "sam")))
        engine.chat("Any advice for my commute?")
        system = [m.content for m in llm.last_chat_messages if m.role.value == "system"]
        assert len(system) == 1 and "porto" in system[0]
        # monday's reply is written when monday's memory is read again, or when handed over as Memory does
        assert [role for role, _ in thread(service, "monday")] == ["user"]
        asyncio.run(block.aput(monday.get_all(), session_id=monday.session_id))
        assert [role for role, _ in thread(service, "monday")] == ["user", "assistant"]
    finally:
        sam.close()
        service.close()


def test_a_memory_for_another_user_is_refused(mem, keyed_server, chats):
    with pytest.raises(PermissionDenied, match="'ana'"):
        KenningMemoryBlock(mem.as_user("ana"), dataset="sam")
    with pytest.raises(PermissionDenied):
        kenning_tools(mem.as_user("ana"), "sam")

    service = Memory(keyed_server.url, api_key=keyed_server.keys["service"])
    ana = service.as_user("ana")   # over HTTP the token knows its dataset; the server refuses each call
    try:
        block = KenningMemoryBlock(ana, dataset="sam")
        said = [ChatMessage(role="user", content="I live in Lisbon.")]
        with pytest.raises(PermissionDenied):
            asyncio.run(block.aget(said, session_id="s1"))
        with pytest.raises(PermissionDenied):
            asyncio.run(block.aput(said, session_id="s1"))
        with pytest.raises(PermissionDenied):
            kenning_tools(ana, "sam")[0].call(query="where?")
        assert service.messages.chats("sam").chats == []   # nothing was written for sam
    finally:
        ana.close()
        service.close()


TURNS = [("user", "I have a dog named Rex."), ("assistant", "Nice!"), ("user", "yes"), ("assistant", "Great."),
         ("user", "yes"), ("assistant", "Anything else?"), ("user", "I also have a cat.")]


def test_the_same_messages_handed_over_twice_are_stored_once(mem, chats):
    """A short-term memory too small for the chat flushes the oldest turns through ``aput``; the rest are
    written when it is read. A second block (a restarted process) handing all of them over again adds nothing,
    and the user's two identical "yes" stay two turns."""
    block = KenningMemoryBlock(mem, dataset="sam")
    chat = chats("s1", block, token_limit=20)
    chat.put_messages([ChatMessage(role=r, content=t) for r, t in TURNS])
    assert chat.get_all(status=MessageStatus.ARCHIVED)   # the oldest turns left short-term memory: aput
    chat.get()
    mem.flush()
    assert thread(mem, "s1") == TURNS

    again = KenningMemoryBlock(mem, dataset="sam")
    asyncio.run(again.aput([ChatMessage(role=r, content=t) for r, t in TURNS], session_id="s1"))
    asyncio.run(again.aget([ChatMessage(role=r, content=t) for r, t in TURNS], session_id="s1"))
    chat.put_messages([ChatMessage(role="assistant", content="Bye.")])
    chat.get()
    mem.flush()
    assert thread(mem, "s1") == TURNS + [("assistant", "Bye.")]
    assert [j.status for j in mem.jobs("sam")] == ["done"] * 4   # one extraction per user turn


def test_what_the_block_puts_in_the_prompt(mem, chats):
    mem.memory_tool("sam", {"command": "create", "path": "/memories/prefs.md", "file_text": "Vegetarian."})
    mem.add("I live in Lisbon.", dataset="sam")
    said = [ChatMessage(role="user", content="Where should I eat tonight?")]
    text = asyncio.run(KenningMemoryBlock(mem, dataset="sam").aget(said, session_id="s1"))
    core, context = mem.core.render("sam"), mem.recall("Where should I eat tonight?", "sam").context
    assert "Vegetarian." in core and "lisbon" in context
    assert text == f"{core}\n\n{context}"
    assert asyncio.run(KenningMemoryBlock(mem, dataset="sam", include_core=False).aget(said)) == context

    nobody = chats("s2", KenningMemoryBlock(mem, dataset="newcomer"))
    nobody.put(ChatMessage(role="user", content="Hello!"))
    assert [m.role.value for m in nobody.get()] == ["user"]   # nothing known: no memory in the prompt


def test_keep_assistant_false_writes_the_user_turns_only(mem, chats):
    chat = chats("s1", KenningMemoryBlock(mem, dataset="sam", keep_assistant=False))
    chat.put_messages([ChatMessage(role=r, content=t) for r, t in TURNS[:4]])
    chat.get()
    mem.flush()
    assert thread(mem, "s1") == [t for t in TURNS[:4] if t[0] == "user"]


def test_the_docs_page_runs_as_written(tmp_path, monkeypatch, capsys):
    script = Script(say("Welcome to Lisbon!"), say("How about grilled fish, with no peanuts anywhere near it?"))
    ns = run_page("llamaindex.md", tmp_path, monkeypatch,
                  swap={"from llama_index.llms.openai import OpenAI\n": "",
                        'OpenAI(model="gpt-4.1")': "scripted.llm"},
                  namespace={"scripted": script})
    try:
        assert "is allergic to: peanuts" in script.system(1) and "lives in: lisbon" in script.system(1)
        printed = capsys.readouterr().out
        assert "Welcome to Lisbon!" in printed and "grilled fish" in printed
        assert "lives in: lisbon" in printed   # the page's own recall at the end
    finally:
        for chat in (v for v in ns.values() if isinstance(v, ChatMemory)):
            asyncio.run(chat.sql_store._async_engine.dispose())   # the page leaves it to the process's exit
        ns["mem"].close()
