"""kenning as LangGraph's long-term memory: a ``BaseStore`` kept in each end user's memory, and hooks that
hand every finished turn to kenning and kenning's recall to the model.

    from langchain.agents import create_agent
    from kenning import Memory
    from kenning.integrations.langgraph import KenningMiddleware, KenningStore

    mem = Memory()
    agent = create_agent("anthropic:claude-sonnet-4-5", tools=[...], store=KenningStore(mem, user_at=1),
                         middleware=[KenningMiddleware(mem)])
    agent.invoke({"messages": [{"role": "user", "content": "I take my coffee black."}]},
                 {"configurable": {"user_id": "sam", "thread_id": "t1"}})

**The store.** Element ``user_at`` of a namespace names the user, whose kenning dataset holds the item:
``user_at=1`` for ``("memories", "sam")`` (LangMem's ``("memories", "{langgraph_user_id}")``), ``user_at=0``
for ``("sam", "memories")`` (LangGraph's ``(user_id, "memories")``). It has no default: a wrong guess files
every user's items under one "user" named ``"memories"``. A namespace without that element is refused: no item
belongs to nobody. Each item is two things in the user's memory, both in one kenning namespace
(``agent:langgraph`` unless told otherwise): a core file holding the exact record (namespace, key and value as
JSON; versioned, so a replaced or deleted value stays in the history, and its created and updated times are
the item's), and a note holding the item's text (``value["content"]`` when it is a string, as LangMem writes,
else a readable rendering; ``index=[...]`` picks fields, ``index=False`` keeps none), so ``search(query=...)``
ranks by kenning's hybrid ranking (vectors and keywords) and ``mem.recall`` finds the item too. An ``agent:``
namespace keeps the JSON out of the user's rendered core memory. Expiry (``ttl``) is refused, as ``BaseStore``
does for stores without it: a user's memory in kenning does not expire (documents do, but they are the
service's, not a user's).

**The hooks.** :class:`KenningMiddleware` is for ``langchain.agents.create_agent``, LangGraph 1.x's agent
(``create_react_agent`` and its ``post_model_hook`` are deprecated since 1.0): before each model call it
adds recall's context for the latest user message to the system message, for that call only; after the
model's final reply it queues the turn. :class:`KenningTurns` (a node) and :class:`KenningRecall` (a prompt
function) are the same two halves for a ``StateGraph`` of your own. The user and the thread come from the
run's config (``config["configurable"]["user_id"]`` and ``["thread_id"]``), else from its runtime context
(``context=Ctx(user_id=...)`` with ``context_schema=Ctx``: an attribute or a dict key of that name), else
(for ``user_id``) from LangMem's ``langgraph_user_id``; a run that names two different users is refused. A
turn's ``client_ref`` comes from its message id, so running a graph again stores nothing twice.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import operator
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.config import get_config
    from langgraph.runtime import get_runtime
    from langgraph.store.base import (BaseStore, GetOp, Item, ListNamespacesOp, MatchCondition, Op, PutOp, Result,
                                      SearchItem, SearchOp)
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # no LangGraph 1.x, or no LangChain 1.x (create_agent and its middleware)
    raise ImportError("kenning.integrations.langgraph needs LangGraph 1.0 or later and LangChain 1.1 or later: "
                      "pip install 'kenning[langgraph]'") from exc

from ..errors import InputError, MemoryConflict, NotFound, PermissionDenied
from ..model import CoreFile, Receipt
from ..notes import ORGANIZATION, check_namespace
from ..services import MAX_QUERY_CHARS
from ._user import UserMemoryBinding, turn_ref

__all__ = ["KenningStore", "KenningMiddleware", "KenningTurns", "KenningRecall"]

RECORDS = "/memories/langgraph"   # the folder of the core files that hold the items
SEARCH_DEPTH = 100                # notes ranked per search (the API's largest page)
PUT_TRIES = 5                     # a put that keeps losing the compare-and-set race gives up after these
CONTEXT_HEADER = "What you remember about this user from earlier conversations (use what bears on the request):"
LANGMEM_USER_KEY = "langgraph_user_id"   # the key LangMem's docs put the user under
COMPARE = {"$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt,
           "$lte": operator.le}
log = logging.getLogger(__name__)


# -- the store -------------------------------------------------------------------------------------------
class KenningStore(BaseStore):
    """LangGraph's ``BaseStore`` on kenning: every item in the memory of the user its namespace names.

    ``memory`` is ``Memory(...)``, the HTTP client, or either's ``as_user(dataset)`` (then a namespace naming
    anyone else raises :class:`~kenning.errors.PermissionDenied`). ``user_at`` (required) is the position of
    the user id in your namespaces: 1 for ``("memories", user_id)``, 0 for ``(user_id, "memories")``. A user
    id must be both a kenning dataset name and a LangGraph namespace label, which may not hold a ``.``: 1-128
    letters, digits and ``_ : @ -`` (an account id, not an email). ``namespace`` is the kenning namespace
    the items live in (``agent:<id>``, ``chat:<id>``, ``project:<id>`` or ``user``), never ``organization``,
    which every user of the project shares.
    """

    def __init__(self, memory: Any, *, user_at: int | None = None, namespace: str = "agent:langgraph",
                 project: str | None = None, environment: str | None = None):
        if user_at is None:
            raise InputError('KenningStore needs user_at=, the position of the user id in your namespaces: '
                             'KenningStore(mem, user_at=1) for ("memories", user_id), as LangMem\'s docs write '
                             '("memories", "{langgraph_user_id}"); KenningStore(mem, user_at=0) for '
                             '(user_id, "memories"), as LangGraph\'s docs write. There is no default: the wrong '
                             'one would file every user\'s items under one user named "memories"')
        if isinstance(user_at, bool) or not isinstance(user_at, int) or user_at < 0:
            raise InputError(f"user_at is the position of the user id in a namespace (0, 1, …), not {user_at!r}")
        if check_namespace(namespace) == ORGANIZATION:
            raise InputError("a store keeps each user's items apart; organization memory is shared by every user, "
                             "so pick agent:<id> (the default agent:langgraph), chat:<id>, project:<id> or user")
        self.memory, self.user_at, self.namespace = memory, user_at, namespace
        self.where = {k: v for k, v in (("project", project), ("environment", environment)) if v is not None}

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Every operation is checked first; then the reads run in order, then the writes: reads see the
        store as it was before the batch, and of several puts to one key the last wins (as LangGraph's own
        stores do)."""
        ops = list(ops)
        users = {i: self._user(op.namespace_prefix if isinstance(op, SearchOp) else op.namespace)
                 for i, op in enumerate(ops) if isinstance(op, (GetOp, PutOp, SearchOp))}
        puts: dict[tuple[tuple[str, ...], str], tuple[UserMemoryBinding, PutOp]] = {}
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                if op.ttl is not None:
                    raise NotImplementedError("KenningStore does not expire items (a user's memory in kenning "
                                              "does not expire); put without ttl, or delete the item when it is done")
                if op.value is not None:
                    _dump(dict(op.value))   # a value JSON cannot hold fails here, before anything is written
                puts[tuple(op.namespace), op.key] = users[i], op
            elif not isinstance(op, (GetOp, SearchOp, ListNamespacesOp)):
                raise InputError(f"KenningStore cannot run a {type(op).__name__}")
        results: list[Result] = [None] * len(ops)
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[i] = self._get(users[i], op)
            elif isinstance(op, SearchOp):
                results[i] = self._search(users[i], op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        for user, op in puts.values():
            if op.value is None:
                self._delete(user, op)
            else:
                self._put(user, op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # -- one user's items ---------------------------------------------------------------------------
    def _user(self, namespace: tuple[str, ...]) -> UserMemoryBinding:
        namespace = tuple(namespace)
        if len(namespace) <= self.user_at or namespace[self.user_at] == "*":
            example = tuple("<user id>" if i == self.user_at else "memories" for i in range(max(2, self.user_at + 1)))
            raise InputError(f"namespace {namespace!r} names no user: KenningStore reads element {self.user_at} of a "
                             f"namespace as the user id (user_at={self.user_at}), e.g. {example}")
        return self._binding(namespace[self.user_at])

    def _binding(self, dataset: str) -> UserMemoryBinding:
        return UserMemoryBinding(self.memory, dataset, namespace=self.namespace, **self.where)

    def _records(self, user: UserMemoryBinding) -> list[tuple[CoreFile, dict]]:
        """The user's items, each with the core file that holds it (other files of the namespace skipped)."""
        out = []
        for file in user.files():
            record = _record(file)
            if record is not None:
                out.append((file, record))
        return out

    def _get(self, user: UserMemoryBinding, op: GetOp) -> Item | None:
        file = user.read_file(_path(op.namespace, op.key))
        record = _record(file)
        if file is None or record is None or tuple(record["namespace"]) != tuple(op.namespace) \
                or record["key"] != op.key:
            return None
        return Item(**_fields(file, record))

    def _put(self, user: UserMemoryBinding, op: PutOp) -> None:
        value = dict(op.value or {})
        text = "" if op.index is False else _item_text(value, op.index)
        path = _path(op.namespace, op.key)
        for _ in range(PUT_TRIES):
            current = user.read_file(path)
            before = (_record(current) or {}).get("note")
            note = user.remember(text).note_id if text.strip() else None
            body = _dump({"namespace": list(op.namespace), "key": op.key, "value": value, "note": note})
            try:   # compare-and-set: a put that raced another one to this key reads again and retries
                user.write_file(path, body, current.version if current else 0)
                break
            except MemoryConflict:
                continue
        else:
            raise MemoryConflict(f"item {op.key!r} in {tuple(op.namespace)!r} kept changing while it was written; "
                                 "retry the put")
        if before and before != note:
            self._release(user, before)

    def _delete(self, user: UserMemoryBinding, op: PutOp) -> None:
        file = user.read_file(_path(op.namespace, op.key))
        record = _record(file)
        if file is None or record is None or not user.remove_file(file.path):
            return
        if record.get("note"):
            self._release(user, record["note"])

    def _release(self, user: UserMemoryBinding, note_id: str) -> None:
        """Forget a note no item holds any more (two items with one text share it). It stays in the history."""
        if any(record.get("note") == note_id for _, record in self._records(user)):
            return
        try:
            user.forget(note_id)
        except NotFound:   # erased meanwhile: nothing left to forget
            pass

    def _search(self, user: UserMemoryBinding, op: SearchOp) -> list[SearchItem]:
        """Items under the prefix that pass the filter: with a query, the ones whose text kenning ranks for it
        first, best first, then the rest (as InMemoryStore fills a page with unscored items); without one,
        the most recently updated first."""
        prefix = tuple(op.namespace_prefix)
        found = [(f, r) for f, r in self._records(user)
                 if tuple(r["namespace"][:len(prefix)]) == prefix and _passes(r["value"], op.filter)]
        found.sort(key=lambda fr: (fr[0].updated_at, fr[1]["key"]), reverse=True)
        scores: dict[str | None, float] = {}
        if op.query and op.query.strip() and any(r.get("note") for _, r in found):
            for hit in user.search_notes(op.query[:MAX_QUERY_CHARS], SEARCH_DEPTH):
                scores.setdefault(hit.note.note_id, hit.score)
        if scores:
            found.sort(key=lambda fr: -scores.get(fr[1].get("note"), float("-inf")))   # stable: ties keep recency
        page = found[op.offset:op.offset + op.limit]
        return [SearchItem(**_fields(f, r), score=scores.get(r.get("note"))) for f, r in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        named = next((c.path for c in conditions if c.match_type == "prefix" and len(c.path) > self.user_at
                      and c.path[self.user_at] != "*"), None)
        users = [self._user(tuple(named))] if named else [self._binding(d) for d in self._datasets()]
        spaces = {tuple(r["namespace"]) for u in users for _, r in self._records(u)}
        spaces = {ns for ns in spaces if all(_matches_path(c, ns) for c in conditions)}
        if op.max_depth is not None:
            spaces = {ns[:op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset:op.offset + op.limit]

    def _datasets(self) -> list[str]:
        """Every user this memory may see (a user's own memory: that user), for a listing that names none."""
        names, offset = [], 0
        while True:
            page = self.memory.datasets(limit=100, offset=offset, **self.where)
            names += [d.dataset for d in page.datasets]
            offset += 100
            if not page.datasets or offset >= page.total:
                return names


def _item_text(value: dict, index: Sequence[str] | None = None) -> str:
    """What an item says, as kenning ranks and recalls it: the fields ``index`` names (LangGraph's path
    syntax), else ``value["content"]`` (a string as is, as LangMem writes it), else the whole value, read
    as ``field: value`` pairs."""
    if index:
        return "\n".join(t for path in index for t in get_text_at_path(value, path))
    return _readable(value.get("content", value) if isinstance(value, dict) else value)


def _readable(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_nested(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple)):
        return ", ".join(_nested(v) for v in value)
    return json.dumps(value)


def _nested(value: Any) -> str:
    return f"({_readable(value)})" if isinstance(value, dict) else _readable(value)


def _path(namespace: Sequence[str], key: str) -> str:
    """One file per item, named by a digest: any key and namespace, in a fixed-length, valid path."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()[:40]
    return f"{RECORDS}/{digest}.json"


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"a store value must be JSON (strings, numbers, booleans, None, lists and dicts): {exc}") \
            from None


def _record(file: CoreFile | None) -> dict | None:
    if file is None or not file.path.startswith(RECORDS + "/"):
        return None
    try:
        record = json.loads(file.content)
    except ValueError:
        return None
    return record if isinstance(record, dict) and {"namespace", "key", "value"} <= record.keys() else None


def _fields(file: CoreFile, record: dict) -> dict[str, Any]:
    """The item a record holds: its times are the file's (created at the first version, updated at the last)."""
    return {"namespace": tuple(record["namespace"]), "key": record["key"], "value": record["value"],
            "created_at": file.created_at, "updated_at": file.updated_at}


def _passes(value: dict, wanted: dict | None) -> bool:
    """InMemoryStore's filter: each field equal (dicts field by field, lists element by element), or
    compared with $eq $ne $gt $gte $lt $lte."""
    return all(_matches(value.get(k), v) for k, v in (wanted or {}).items())


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(str(k).startswith("$") for k in wanted):
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return isinstance(value, (list, tuple)) and len(value) == len(wanted) and all(map(_matches, value, wanted))
    return value == wanted


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op not in COMPARE:
        raise InputError(f"unknown filter operator {op!r}; use one of {', '.join(COMPARE)}")
    if op in ("$eq", "$ne"):
        return COMPARE[op](value, operand)
    try:
        return COMPARE[op](float(value), float(operand))
    except (TypeError, ValueError):   # a missing or non-numeric field is not greater or less than anything
        return False


def _matches_path(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[:len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p in ("*", n) for p, n in zip(path, part))


# -- the hooks -------------------------------------------------------------------------------------------
class _Run:
    """Whose memory a graph run is: the user its config (or its runtime context) names, or the one a binding
    was made for."""

    def __init__(self, memory: Any, user_key: str, thread_key: str, project: str | None, environment: str | None):
        self.memory, self.user_key, self.thread_key = memory, user_key, thread_key
        self.where = {k: v for k, v in (("project", project), ("environment", environment)) if v is not None}

    def named(self, config: RunnableConfig | None, runtime: Any = None) -> str | None:
        """The user the run names: ``config["configurable"][user_key]``, else the runtime context's
        ``user_key`` (attribute or dict key), else, for the default key, LangMem's ``langgraph_user_id`` in
        either. Two sources naming different users is refused: a tool and a hook would write for different
        people."""
        configurable, context = (config or {}).get("configurable") or {}, _context(runtime)
        sources = [(f"config['configurable'][{self.user_key!r}]", configurable.get(self.user_key)),
                   (f"the runtime context's {self.user_key}", _read(context, self.user_key))]
        if self.user_key == "user_id":
            sources += [(f"config['configurable'][{LANGMEM_USER_KEY!r}]", configurable.get(LANGMEM_USER_KEY)),
                        (f"the runtime context's {LANGMEM_USER_KEY}", _read(context, LANGMEM_USER_KEY))]
        found = [(where, str(value)) for where, value in sources if value is not None and value != ""]
        if len({value for _, value in found}) > 1:
            raise InputError("the run names two different users: "
                             + ", ".join(f"{where} is {value!r}" for where, value in found)
                             + "; name one user per run")
        return found[0][1] if found else None

    def user(self, config: RunnableConfig | None, runtime: Any = None) -> UserMemoryBinding:
        named = self.named(config, runtime)
        if isinstance(self.memory, UserMemoryBinding):
            if named is not None and named != self.memory.dataset:
                raise PermissionDenied(f"this graph's memory belongs to {self.memory.dataset!r}; the run "
                                       f"names {named!r}", "memory:read")
            return self.memory
        if named is None:
            raise InputError(
                f"the run names no user: invoke the graph with config={{'configurable': {{'{self.user_key}': ..., "
                f"'{self.thread_key}': ...}}}}, or with the runtime context (create_agent(..., "
                f"context_schema=Ctx) and invoke(..., context=Ctx({self.user_key}=...)), a dataclass, pydantic model "
                f"or dict with a {self.user_key!r} field); a different key: user_key=\"...\" (and "
                f"thread_key=\"...\")")
        return UserMemoryBinding(self.memory, named, **self.where)

    def thread(self, config: RunnableConfig | None, runtime: Any = None) -> str | None:
        thread = ((config or {}).get("configurable") or {}).get(self.thread_key)
        if thread is None or thread == "":
            thread = _read(_context(runtime), self.thread_key)
        return None if thread is None or thread == "" else str(thread)


def _runtime(runtime: Any = None) -> Any:
    """The runtime a hook was handed, else the current graph run's (None outside a run)."""
    if runtime is not None:
        return runtime
    try:
        return get_runtime()
    except (RuntimeError, KeyError):   # called outside a graph run
        return None


def _context(runtime: Any = None) -> Any:
    return getattr(_runtime(runtime), "context", None)


def _read(context: Any, key: str) -> Any:
    """``key`` of a runtime context: a dict's key, or a dataclass's or pydantic model's attribute."""
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(key)
    return getattr(context, key, None)


def _messages(state: Any) -> list[BaseMessage]:
    messages = state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", state)
    return list(messages or [])


def _config(config: RunnableConfig | None) -> RunnableConfig | None:
    if config is not None:
        return config
    try:
        return get_config()
    except RuntimeError:   # called outside a graph run
        return None


def _finished_turn(messages: Sequence[BaseMessage], replies: bool = True) -> list[tuple[int, BaseMessage]]:
    """The turn a conversation ends with, once the model has answered it: the user's messages since the
    model last answered, and (``replies``) that answer, with their positions. Nothing while the model is
    still calling tools."""
    if not messages or not _answer(messages[-1]):
        return []
    end = len(messages) - 1
    last = end - 1
    while last >= 0 and not isinstance(messages[last], HumanMessage):   # this turn's tool calls and results
        if _answer(messages[last]):   # the model answered before, with no user message since
            last = -1
            break
        last -= 1
    first = last
    while first > 0 and isinstance(messages[first - 1], HumanMessage):
        first -= 1
    turn = [(p, messages[p]) for p in range(first, last + 1)] if last >= 0 else []
    return turn + ([(end, messages[end])] if replies else [])


def _answer(message: BaseMessage) -> bool:
    """The model's answer to the user: an AI message that calls no tool."""
    return isinstance(message, AIMessage) and not message.tool_calls


class KenningTurns:
    """Hands each finished turn to kenning: a ``StateGraph`` node placed after the model's node.

    When the conversation ends with the model's answer (an AI message without tool calls), the user's
    messages of that turn are queued with ``add_turn`` (a worker mines them for facts; the reply is not
    kept waiting) and, with ``replies``, the answer is kept as said. Each message's ``client_ref`` is made
    from the thread and its message id (or, lacking one, its position and text), so a graph that runs again
    over the same messages stores nothing twice. ``memory`` is a kenning memory (the user comes from
    ``config["configurable"][user_key]`` or the runtime context) or a
    :class:`~kenning.integrations.UserMemoryBinding`.

    A node placed before the model's node sees the user's messages with no answer yet: it queues those
    (the facts are still mined) and logs a warning, once per node, that the replies are kept only by a node
    placed after the model's (with ``replies=False`` there is nothing to warn about).
    """

    def __init__(self, memory: Any, *, replies: bool = True, user_key: str = "user_id", thread_key: str = "thread_id",
                 project: str | None = None, environment: str | None = None):
        self.run, self.replies = _Run(memory, user_key, thread_key, project, environment), replies
        self.warned = False

    def __call__(self, state: Any, config: RunnableConfig) -> dict:
        self.save(_messages(state), config)
        return {}

    def save(self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
             runtime: Any = None) -> list[Receipt]:
        """Queue the finished turn ``messages`` end with (or, before the model has answered, the user's
        messages waiting for the answer); one receipt per message handed over."""
        turn = _finished_turn(messages, self.replies) or self._unanswered(messages)
        if not turn:
            return []
        config, runtime = _config(config), _runtime(runtime)
        user, thread = self.run.user(config, runtime), self.run.thread(config, runtime)
        receipts = []
        for position, message in turn:
            text, role = message.text, "user" if isinstance(message, HumanMessage) else "assistant"
            if not text.strip():
                continue
            ref = turn_ref(thread, message.id) if message.id else \
                turn_ref(thread, position, role, text) if thread is not None else None
            receipts.append(user.add_turn(role, text, chat=thread, client_ref=ref))
        return receipts

    async def asave(self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
                    runtime: Any = None) -> list[Receipt]:
        return await asyncio.to_thread(self.save, messages, _config(config), _runtime(runtime))

    def _unanswered(self, messages: Sequence[BaseMessage]) -> list[tuple[int, BaseMessage]]:
        """The user's messages a conversation ends with, no answer yet: this node runs before the model's."""
        if not messages or isinstance(messages[-1], AIMessage):   # answered, or the model is calling tools
            return []
        first = len(messages)
        while first > 0 and isinstance(messages[first - 1], HumanMessage):
            first -= 1
        if self.replies and not self.warned:
            self.warned = True
            kept = "queued the user's messages" if first < len(messages) else "stored nothing"
            log.warning("KenningTurns ran before the model answered (the conversation ends with a %s, not the "
                        "model's reply): it %s, but the model's replies are kept only when this node runs after "
                        "the node that calls the model, e.g. add_edge('chat', 'remember') then "
                        "add_edge('remember', END). (Logged once per node.)", type(messages[-1]).__name__, kept)
        return [(p, messages[p]) for p in range(first, len(messages))]


class KenningRecall:
    """Recall's context for the latest user message, for the model: a prompt function for a ``StateGraph``.

    ``recall(state, config)`` returns the state's messages with a system message in front holding what
    kenning recalls for the user's latest message (just the messages when nothing bears on it): pass it
    to your model, ``model.invoke(recall(state, config))``. ``context`` is the text alone.
    """

    def __init__(self, memory: Any, *, limit: int = 10, user_key: str = "user_id", thread_key: str = "thread_id",
                 project: str | None = None, environment: str | None = None):
        self.run, self.limit = _Run(memory, user_key, thread_key, project, environment), limit

    def __call__(self, state: Any, config: RunnableConfig) -> list[BaseMessage]:
        messages = _messages(state)
        block = self.context(messages, config)
        return ([SystemMessage(block)] if block else []) + messages

    def context(self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
                runtime: Any = None) -> str:
        """The system text for the latest user message: a header and recall's context, or "" ."""
        query = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage) and m.text.strip()), "")
        if not query:
            return ""
        found = self.run.user(_config(config), _runtime(runtime)).context(query[-MAX_QUERY_CHARS:], self.limit)
        return f"{CONTEXT_HEADER}\n{found}" if found else ""

    async def acontext(self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
                       runtime: Any = None) -> str:
        return await asyncio.to_thread(self.context, messages, _config(config), _runtime(runtime))


class KenningMiddleware(AgentMiddleware):
    """kenning in ``langchain.agents.create_agent``: recall before each model call, the turn after the answer.

    Recall's context for the latest user message joins the system message of each model call (the
    thread's saved messages are left as they were); once the model answers without calling a tool, the
    turn is queued as :class:`KenningTurns` does. ``recall=False`` or ``turns=False`` leaves either half out.
    The user comes from the run's config or its runtime context (``context_schema=`` and ``context=``).
    """

    def __init__(self, memory: Any, *, recall: bool = True, limit: int = 10, turns: bool = True,
                 replies: bool = True, user_key: str = "user_id", thread_key: str = "thread_id",
                 project: str | None = None, environment: str | None = None):
        super().__init__()
        self.recall = KenningRecall(memory, limit=limit, user_key=user_key, thread_key=thread_key, project=project,
                                    environment=environment) if recall else None
        self.turns = KenningTurns(memory, replies=replies, user_key=user_key, thread_key=thread_key, project=project,
                                  environment=environment) if turns else None

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        if self.recall is not None:
            request = _with_context(request, self.recall.context(request.messages, runtime=request.runtime))
        return handler(request)

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        if self.recall is not None:
            request = _with_context(request, await self.recall.acontext(request.messages, runtime=request.runtime))
        return await handler(request)

    def after_model(self, state: Any, runtime: Any) -> None:
        if self.turns is not None:
            self.turns.save(_messages(state), runtime=runtime)

    async def aafter_model(self, state: Any, runtime: Any) -> None:
        if self.turns is not None:
            await self.turns.asave(_messages(state), runtime=runtime)


def _with_context(request: ModelRequest, block: str) -> ModelRequest:
    """The request with ``block`` added to its system message (kept a list of content blocks if it was one,
    so a provider's cache markers survive)."""
    if not block:
        return request
    system = request.system_message
    if system is None:
        content: Any = block
    elif isinstance(system.content, str):
        content = f"{system.content}\n\n{block}" if system.content else block
    else:
        content = [*system.content, {"type": "text", "text": block}]
    return request.override(system_message=SystemMessage(content))
