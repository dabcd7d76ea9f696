"""The MCP server: one dataset's memory as tools for any MCP client, over stdio or streamable HTTP.

    kenning mcp --dataset sam                          # stdio (Claude Desktop, Claude Code, …)
    kenning mcp --dataset sam --http --port 8421       # streamable HTTP at http://127.0.0.1:8421/mcp

Over HTTP every request needs ``Authorization: Bearer …``: a service key of the project, or a user
token for this very dataset (the API's keys and tokens, revocation included). A store without keys
gets a random bearer token for the life of the process (printed at start, or ``KENNING_MCP_TOKEN``),
so no other local process can use the endpoint; a non-loopback address is refused without keys.

Tools: ``memory`` (Anthropic's memory tool on the dataset's core files),
``recall``, ``remember``, ``forget``, ``list_facts`` and ``erase`` (permanent: a dry run unless
``confirm`` is true).

A thin front end, like the CLI and the HTTP API: each tool is one call of a
:class:`kenning.Memory` method on the dataset the server was started for (the
client never chooses it), made as the request's caller: over HTTP a user token
acts through ``Memory.as_user`` (the API's own permission checks, so a member
cannot forget an organization note here either); a service key, the printed
token and stdio act as the service. A a :class:`~kenning.errors.KenningError` becomes an
``is_error`` result carrying the library's message. ``memory`` answers with the
memory tool's texts byte for byte, its failures included (``MemoryToolError.text``).
The other tools return structured content (with an output schema) and the same
data as JSON text, for clients that read only text.

Built on the official ``mcp`` SDK, 2.x (``MCPServer``, which 1.x called ``FastMCP``).
"""
import hmac
import inspect
import json
import os
import sys
from typing import Annotated, Literal
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

from . import __version__
from .errors import KenningError, MemoryToolError, NotFound
from .memory import Memory
from .model import ErasureReceipt, FactPage, Note
from .notes import check_namespace
from .server.errors import Unauthorized

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
DEFAULT_PORT = 8421
INSTRUCTIONS = """\
Long-term memory about the user you are talking with.
- recall: before answering, look up what you know that bears on the message (facts, notes, earlier messages).
- remember: save something worth keeping, in a sentence that stands on its own.
- forget: drop a note or a fact by the id that recall, remember or list_facts gave you.
- list_facts: what is known about the user now, or as of a past time.
- erase: remove a fact, a message or every memory holding a text PERMANENTLY (forget keeps a history; erase
  keeps nothing). Only when the user asks for it: call it first without confirm to see what would go, then
  with confirm=true.
- memory: your own memory directory /memories (view, create, str_replace, insert, delete, rename);
  view /memories at the start of a task."""


class RecalledItem(BaseModel):
    kind: Literal["fact", "note", "message"]
    id: str = Field(description="fact_id, note_id or message_id; forget takes a fact's or a note's")
    text: str
    score: float = Field(description="fused rank score; higher ranks first")
    episode_id: str | None = Field(None, description="for a fact: the message it was learned from")


class Recalled(BaseModel):
    context: str = Field(description="the ranked memories rendered as a block for the prompt")
    items: list[RecalledItem] = Field(description="everything recalled, best first")


class Forgotten(BaseModel):
    id: str
    kind: Literal["note", "fact"]


class Erased(ErasureReceipt):
    note: str = Field(description="what happened: a dry run (nothing erased yet; call again with confirm=true) "
                                  "or the erasure done")


def _erased(receipt: ErasureReceipt) -> CallToolResult:
    if receipt.dry_run and not any(receipt.removed.values()):
        note = "Nothing to erase: nothing in this memory matches. Nothing was erased."
    elif receipt.dry_run:
        note = ("Dry run: nothing has been erased yet. This is what erase would remove permanently (unlike forget, "
                "nothing of it would stay in the history, and it cannot be undone). If the user wants it gone, call "
                "erase again with the same arguments and confirm=true.")
    else:
        note = (f"Erased permanently (erasure {receipt.erasure_id}): nothing of it is kept, not even in the history; "
                "the erasure log keeps only ids, counts and hashes.")
    return _ok(Erased(**receipt.model_dump(), note=note))


def _ok(value: BaseModel) -> CallToolResult:
    data = value.model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data)


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(memory: Memory, dataset: str, namespace: str = "user", *, project: str | None = None,
                 environment: str | None = None) -> MCPServer:
    """An MCP server whose tools read and write ``dataset`` of ``memory`` (core files and notes in ``namespace``)."""
    memory.services.scope(dataset, project, environment)  # a bad name fails here, not on the first tool call
    check_namespace(namespace)
    where = {"project": project, "environment": environment}

    def principal_of(ctx: Context):
        """The caller BearerGate put on the HTTP request (None over stdio or with the printed token)."""
        try:
            request = ctx.request_context.request
        except ValueError:
            request = None
        return (getattr(request, "scope", None) or {}).get("state", {}).get(PRINCIPAL)

    def caller(ctx: Context):
        """The memory as this request's caller may use it: a user token's principal (BearerGate puts it on the
        HTTP request) gets the API's as_user checks; anything else is the service."""
        principal = principal_of(ctx)
        if principal is not None and principal.kind == "user":
            return memory.as_user(principal.dataset, principal.role or "member", project=principal.project,
                                  environment=principal.environment)
        return memory

    server = MCPServer("kenning", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    readonly = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

    def tool(**kwargs):
        """``server.tool`` with the docstring as the description, its source indentation removed (the SDK
        sends the docstring as written, indentation and all)."""
        def register(fn):
            return server.tool(description=inspect.cleandoc(fn.__doc__ or ""), **kwargs)(fn)
        return register

    @tool(name="memory", annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
    def memory_tool(
        command: Annotated[str, Field(description="the memory command",
                                      json_schema_extra={"enum": list(COMMANDS)})],
        path: Annotated[str | None, Field(description="a path under /memories (view, create, str_replace, "
                                                      "insert, delete)")] = None,
        file_text: Annotated[str | None, Field(description="create: the file's content")] = None,
        old_str: Annotated[str | None, Field(description="str_replace: text that appears exactly once")] = None,
        new_str: Annotated[str | None, Field(description="str_replace: its replacement")] = None,
        insert_line: Annotated[int | None, Field(description="insert: the line to insert after (0: the top)")] = None,
        insert_text: Annotated[str | None, Field(description="insert: the text to insert")] = None,
        old_path: Annotated[str | None, Field(description="rename: the current path")] = None,
        new_path: Annotated[str | None, Field(description="rename: the new path")] = None,
        view_range: Annotated[list[int] | None, Field(description="view: [first line, last line]; -1 for the "
                                                                  "end")] = None,
        ctx: Context = None,  # type: ignore[assignment]
    ) -> CallToolResult:
        """Your memory directory /memories: view, create, str_replace, insert, delete and rename files, as with
        Claude's memory tool. Files persist across conversations."""
        args = {"path": path, "file_text": file_text, "old_str": old_str, "new_str": new_str,
                "insert_line": insert_line, "insert_text": insert_text, "old_path": old_path,
                "new_path": new_path, "view_range": view_range}
        call = {"command": command, **{k: v for k, v in args.items() if v is not None}}
        try:
            text = caller(ctx).memory_tool(dataset, call, namespace, **where)
        except MemoryToolError as exc:
            return _error(exc.text)
        except KenningError as exc:
            return _error(f"Error: {exc}")
        return CallToolResult(content=[TextContent(type="text", text=text)])

    @tool(annotations=readonly)
    def recall(query: Annotated[str, Field(description="the question or the user's message")],
               limit: Annotated[int, Field(ge=1, le=100, description="at most this many items")] = 10,
               as_of: Annotated[str | None, Field(description="ISO 8601 time: recall as of then")] = None,
               ctx: Context = None,  # type: ignore[assignment]
               ) -> Annotated[CallToolResult, Recalled]:
        """What is remembered about the user that bears on the query: a context block ready for the prompt and
        the ranked facts, notes and messages behind it."""
        try:
            res = caller(ctx).recall(query, dataset, limit, as_of=as_of, **where)
        except KenningError as exc:
            return _error(str(exc))
        items = [RecalledItem(kind=i.kind, id=i.id, text=i.text, score=i.score,
                              episode_id=i.episode_id if i.kind == "fact" else None) for i in res.items]
        return _ok(Recalled(context=res.context, items=items))

    @tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    def remember(text: Annotated[str, Field(description="what to keep, as a sentence that stands on its own")],
                 ctx: Context = None,  # type: ignore[assignment]
                 ) -> Annotated[CallToolResult, Note]:
        """Save a note to long-term memory; saving a text already kept returns that note."""
        try:
            return _ok(caller(ctx).notes.save(dataset, text, namespace, **where))
        except KenningError as exc:
            return _error(str(exc))

    @tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False))
    def forget(id: Annotated[str, Field(description="a note_id or a fact_id")],
               ctx: Context = None,  # type: ignore[assignment]
               ) -> Annotated[CallToolResult, Forgotten]:
        """Forget a note, or delete a fact, by its id. Both leave every search but stay in the history (erase
        removes a fact or a message for good)."""
        acting = caller(ctx)
        try:
            try:
                acting.notes.forget(dataset, id, **where)
                return _ok(Forgotten(id=id, kind="note"))
            except NotFound:
                acting.delete_fact(dataset, id, **where)
                return _ok(Forgotten(id=id, kind="fact"))
        except NotFound:
            return _error(f"no note or fact {id!r} in this memory; take the id from recall, remember or list_facts")
        except KenningError as exc:
            return _error(str(exc))

    @tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False, open_world_hint=False))
    def erase(id: Annotated[str | None, Field(description="a fact_id, or a message_id (a fact's episode_id): "
                                                          "erase that fact or that message")] = None,
              text: Annotated[str | None, Field(description="instead of id: erase everything in this memory that "
                                                            "holds this text (case-insensitively)")] = None,
              confirm: Annotated[bool, Field(description="false (the default): a dry run that only says what would "
                                                         "be erased; true: erase it")] = False,
              ctx: Context = None,  # type: ignore[assignment]
              ) -> Annotated[CallToolResult, Erased]:
        """PERMANENTLY erase from the user's memory, when the user asks for something to be gone for good. Unlike
        forget (which hides a note or a fact but keeps it in the history), erase keeps nothing and cannot be undone.
        By id: a fact with every version of its value and its quoted words cut out of the message it came from, or
        a message with every fact learned from it. By text: every fact, message, note, entity and memory-file line
        holding the text. Without confirm=true nothing is erased: the answer says what would go; call again with
        confirm=true to erase it."""
        if (id is None) == (text is None):
            return _error("pass either id (a fact_id or a message_id) or text (erase everything holding it), not "
                          + ("both" if id is not None else "neither"))
        acting, principal = caller(ctx), principal_of(ctx)
        who = f"mcp key:{principal.key_id}" if principal is not None and principal.key_id else "mcp"
        kw = {"dry_run": not confirm, "by": who, **where}
        try:
            if text is not None:
                return _erased(acting.erase.content(dataset, text, **kw))
            try:
                return _erased(acting.erase.fact(dataset, id, **kw))
            except NotFound:
                return _erased(acting.erase.message(dataset, id, **kw))
        except NotFound:
            return _error(f"no fact or message {id!r} in this memory: nothing was erased; take the id from recall or "
                          "list_facts (to erase a note, pass its text)")
        except KenningError as exc:
            return _error(str(exc))

    @tool(annotations=readonly)
    def list_facts(as_of: Annotated[str | None, Field(description="ISO 8601 time: the facts live then")] = None,
                   include_invalidated: Annotated[bool, Field(description="also superseded, ended and deleted "
                                                                         "facts: the whole history")] = False,
                   q: Annotated[str | None, Field(description="keyword filter")] = None,
                   limit: Annotated[int, Field(ge=1, le=100)] = 50,
                   offset: Annotated[int, Field(ge=0)] = 0,
                   ctx: Context = None,  # type: ignore[assignment]
                   ) -> Annotated[CallToolResult, FactPage]:
        """The facts known about the user, oldest first: live now, live at a past time, or the whole history."""
        try:
            return _ok(caller(ctx).list_facts(dataset, q=q, limit=limit, offset=offset,
                                          include_invalidated=include_invalidated, as_of=as_of, **where))
        except KenningError as exc:
            return _error(str(exc))

    return server


LOOPBACK = ("127.0.0.1", "localhost", "::1")
PRINCIPAL = "kenning_principal"   # where BearerGate leaves the caller on the request's scope state


class BearerGate:
    """In front of the MCP app: a same-site Origin (no web page may drive the tools), then a bearer
    credential allowed to write this dataset, checked on every request (a revoked key stops at once)."""

    def __init__(self, app, auth, dataset: str, project: str, environment: str, token: str | None):
        self.app, self.auth, self.token = app, auth, token
        self.dataset, self.project, self.environment = dataset, project, environment

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
        host, origin = headers.get(b"host", ""), headers.get(b"origin")
        if origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            refusal = JSONResponse({"error": {"code": "CROSS_ORIGIN", "message": "no web page may call this "
                                              "MCP endpoint"}}, status_code=403)
            return await refusal(scope, receive, send)
        problem = self._refusal(headers.get(b"authorization", ""), scope)
        if problem is not None:
            status, code, message = problem
            refusal = JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                                   headers={"WWW-Authenticate": 'Bearer realm="kenning-mcp"'} if status == 401 else None)
            return await refusal(scope, receive, send)
        return await self.app(scope, receive, send)

    def _refusal(self, authorization: str, scope: dict) -> tuple[int, str, str] | None:
        scheme, _, credential = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credential:
            return 401, "UNAUTHORIZED", "send Authorization: Bearer <service key, user token or the printed token>"
        if self.token is not None and hmac.compare_digest(credential.encode(), self.token.encode()):
            return None
        try:
            p = self.auth.credential(credential, self.environment)
        except Unauthorized as exc:
            return 401, "UNAUTHORIZED", str(exc)
        if p.project != self.project or p.environment != self.environment or p.kind == "member" \
                or (p.kind == "user" and p.dataset != self.dataset):
            return 403, "PERMISSION_DENIED", (f"this endpoint serves dataset {self.dataset!r} of project "
                                              f"{self.project!r}; use a service key of that project or a user "
                                              "token for that dataset")
        scope.setdefault("state", {})[PRINCIPAL] = p
        return None


def http_app(memory: Memory, server: MCPServer, dataset: str, host: str, token: str | None):
    """The streamable-HTTP app behind :class:`BearerGate` (with the SDK's own Host checks on loopback)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import server_secret
    from .server.auth import Auth

    s = memory.settings
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                         allowed_origins=["http://127.0.0.1:*", "http://localhost:*",
                                                          "http://[::1]:*"]) \
        if host in LOOPBACK else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(transport_security=security, host=host)
    auth = Auth(memory.store, server_secret(s), False, s.project, s.environment)
    return BearerGate(app, auth, dataset, s.project, s.environment, token)


def cmd_mcp(args) -> int:
    """``kenning mcp``: serve one dataset until the client hangs up (stdio) or SIGINT/SIGTERM (HTTP)."""
    dataset = args.dataset or os.environ.get("KENNING_DATASET") or "default"
    mem = Memory(args.db)
    try:
        server = build_server(mem, dataset)
        where = mem.store.location
        if not args.http:
            print(f"kenning mcp: dataset {dataset!r} in {where}, over stdio", file=sys.stderr, flush=True)
            server.run("stdio")
            return 0
        import secrets

        import uvicorn

        from .server import uvicorn_options

        keys = mem.store.count_api_keys()
        if args.host not in LOOPBACK and not keys:
            print(f"kenning: refusing to serve MCP on {args.host}, beyond loopback, with no API key to require; "
                  "create one with `kenning keys create` first", file=sys.stderr)
            return 1
        token = os.environ.get("KENNING_MCP_TOKEN") or (None if keys else f"mt_{secrets.token_urlsafe(24)}")
        print(f"kenning mcp: dataset {dataset!r} in {where}, streamable HTTP at "
              f"http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
        if token and not os.environ.get("KENNING_MCP_TOKEN"):
            print(f"kenning mcp: send Authorization: Bearer {token}", file=sys.stderr, flush=True)
        else:
            print("kenning mcp: send Authorization: Bearer <a service key of the project or a user token for "
                  "this dataset>" + (" (or $KENNING_MCP_TOKEN)" if token else ""), file=sys.stderr, flush=True)
        uvicorn.run(http_app(mem, server, dataset, args.host, token), host=args.host, port=args.port,
                    log_level="warning", **uvicorn_options(mem.settings))
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        mem.close()
