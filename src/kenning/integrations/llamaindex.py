"""Kenning as a memory block of LlamaIndex's ``Memory``, and as tools for its agents.

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.memory import Memory as ChatMemory
    from kenning import Memory
    from kenning.integrations.llamaindex import KenningMemoryBlock, kenning_tools

    mem = Memory()
    chat_memory = ChatMemory.from_defaults(session_id="chat-1",
                                           memory_blocks=[KenningMemoryBlock(mem, dataset="sam")])
    agent = FunctionAgent(llm=llm, tools=kenning_tools(mem, dataset="sam"))
    reply = await agent.run("I moved to Lisbon last month.", memory=chat_memory)

LlamaIndex's ``Memory`` reads its blocks before every model call (``aget`` with the session's
short-term messages) and hands a block messages (``aput``) only when short-term memory overflows its
token limit and flushes the oldest ones. A short chat never overflows, so a block that waited for
``aput`` would never see it. :class:`KenningMemoryBlock` therefore writes on both: at every read it
queues the turns of the window it has not written yet (``add_turn`` only queues: the reply does not
wait for extraction), and on a flush it writes whatever left the window unseen. Each turn's
``client_ref`` is ``turn_ref`` (:mod:`kenning.integrations._user`) over the chat (the session id), the role, the
text and how many identical turns came before it in the same messages: LlamaIndex messages carry no
id, and a position in the window shifts when the window flushes, so this is what stays the same when
a message is handed over again (a re-read, a flush, a restarted process, a ``chat_history`` passed
anew). The block's text is the user's core memory files and recall's context for the latest user
message; "" when there is neither, and ``Memory`` then adds nothing to the prompt.

:func:`kenning_tools` gives an agent ``recall``, ``remember`` and ``forget`` as ``FunctionTool``s,
the same three verbs, with the same arguments (``query``, ``text``, ``id``), as kenning's MCP server and
the other adapters.
"""
# No ``from __future__ import annotations``: FunctionTool reads the tools' Annotated signatures at run time.
import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any

try:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.memory import BaseMemoryBlock
    from llama_index.core.tools import FunctionTool
except ImportError as exc:  # no llama-index-core, or one older than Memory's blocks (0.12.35)
    raise ImportError("kenning.integrations.llamaindex needs llama-index-core 0.14: "
                      "pip install 'kenning[llamaindex]'") from exc

from ._user import UserMemoryBinding, turn_ref

__all__ = ["KenningMemoryBlock", "kenning_tools"]

SENT_CACHE = 4096   # turns a block remembers having written; past it, kenning's client_ref check alone dedupes


class KenningMemoryBlock(BaseMemoryBlock[str]):
    """One end user's kenning memory inside LlamaIndex's ``Memory``: recalled into the prompt, written from the chat.

    ``memory`` is a kenning ``Memory`` (in process or ``Memory("http://…", api_key=…)``) or either's
    ``as_user(dataset)``. ``chat`` names the kenning chat the turns go to (default: the ``Memory``'s
    ``session_id``). Assistant turns are kept as messages too (kenning never mines them; recall can
    quote what the assistant said) unless ``keep_assistant=False``; system and tool messages never are,
    since they hold instructions and tool output (recall's own among them), not what the user said.
    """

    name: str = Field(default="kenning", description="The name of the memory block.")
    description: str | None = Field(
        default="What kenning remembers about this user that bears on the latest message.")
    dataset: str = Field(description="The end user whose memory this is.")
    chat: str | None = Field(default=None, description="The kenning chat for the turns; default: the session id.")
    limit: int = Field(default=10, ge=1, le=100, description="At most this many recalled items.")
    include_core: bool = Field(default=True, description="Put the user's core memory files before the context.")
    keep_assistant: bool = Field(default=True, description="Keep assistant turns as messages, beside the user's.")

    _user: UserMemoryBinding = PrivateAttr()
    _sent: set = PrivateAttr(default_factory=set)

    def __init__(self, memory: Any, dataset: str, *, project: str | None = None, environment: str | None = None,
                 **fields: Any):
        user = UserMemoryBinding(memory, dataset, project=project, environment=environment)  # refuses a wrong user now
        super().__init__(dataset=dataset, **fields)
        self._user = user

    async def aput(self, messages: list[ChatMessage], from_short_term_memory: bool = False,
                   session_id: str | None = None) -> None:
        if isinstance(messages, ChatMessage):   # handed one message: the block was given where a Memory goes
            raise TypeError("KenningMemoryBlock is a block of LlamaIndex's Memory, not a Memory itself: pass "
                            "memory=ChatMemory.from_defaults(session_id=…, memory_blocks=[block]), with "
                            "`from llama_index.core.memory import Memory as ChatMemory`")
        await super().aput(messages, from_short_term_memory=from_short_term_memory, session_id=session_id)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        return await asyncio.to_thread(self._read, list(messages or []), block_kwargs.get("session_id"))

    async def _aput(self, messages: list[ChatMessage]) -> None:
        session = next((m.additional_kwargs.get("session_id") for m in messages), None)  # set by Memory's flush
        await asyncio.to_thread(self._keep, messages, session)

    def _read(self, messages: list[ChatMessage], session_id: str | None) -> str:
        users = [m for m in messages if m.role.value == "user"]
        if len(users) > 1 and messages[-1] is users[-1] and users[-1].content == users[-2].content:
            messages = messages[:-1]  # an agent reading after its tool calls appends the run's message again
        query = (users[-1].content or "").strip() if users else ""
        parts = [self._user.core()] if self.include_core else []
        if query:
            parts.append(self._user.context(query, self.limit))
        self._keep(messages, session_id)  # after recall, so this turn is not recalled back to itself
        return "\n\n".join(p for p in parts if p)

    def _keep(self, messages: list[ChatMessage], session_id: str | None) -> None:
        """Write the turns of ``messages`` (one chat's, oldest first) not written yet; a turn written
        before, by this block or another, is stored once."""
        chat = self.chat or session_id
        roles = ("user", "assistant") if self.keep_assistant else ("user",)
        before: Counter[tuple[str, str]] = Counter()
        for message in messages:
            role, text = message.role.value, message.content or ""
            if role not in roles or not text.strip():   # a tool call alone has no text to keep
                continue
            ref = turn_ref(chat, role, before[role, text], text)
            before[role, text] += 1
            if ref in self._sent:
                continue
            self._user.add_turn(role, text, chat=chat, client_ref=ref)
            if len(self._sent) >= SENT_CACHE:
                self._sent.clear()
            self._sent.add(ref)


def kenning_tools(memory: Any, dataset: str, *, namespace: str = "user", limit: int = 10,
                  project: str | None = None, environment: str | None = None) -> list[FunctionTool]:
    """``recall``, ``remember`` and ``forget`` on one user's memory, for a LlamaIndex agent.

    A failure (an unknown id, a user token for another dataset) raises kenning's error, which the
    agent sends back to the model as the tool's error output.
    """
    user = UserMemoryBinding(memory, dataset, namespace=namespace, project=project, environment=environment)

    def recall(query: Annotated[str, Field(description="the question or the user's message")]) -> str:
        res = user.recall(query, limit)
        ids = [f"- {item.kind} {item.id}: {item.text}" for item in res.items if item.kind in ("fact", "note")]
        if not res.context:
            return "Nothing remembered bears on this."
        return res.context + ("\n\nIds, for forget:\n" + "\n".join(ids) if ids else "")

    def remember(text: Annotated[str, Field(description="what to keep, as a sentence that stands on its own")]) -> str:
        note = user.remember(text)
        return f"Saved note {note.note_id}."

    def forget(id: Annotated[str, Field(description="a note or fact id, as recall lists them")]) -> str:
        return f"Forgot {user.forget(id)} {id}."

    described = {
        recall: "What is remembered about the user that bears on the query, with the ids of the items.",
        remember: "Save a note to the user's long-term memory; saving a text already kept returns that note.",
        forget: "Forget a note, or delete a fact, by the id recall gave. It leaves every search.",
    }
    return [FunctionTool.from_defaults(fn=fn, async_fn=_on_thread(fn), name=fn.__name__, description=text)
            for fn, text in described.items()]


def _on_thread(fn: Callable[..., str]) -> Callable[..., Any]:
    """The agent awaits its tools: kenning's synchronous calls run on a worker thread, off the event loop."""
    async def run(*args: Any, **kwargs: Any) -> str:
        return await asyncio.to_thread(fn, *args, **kwargs)
    return run
