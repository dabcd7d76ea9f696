"""The MCP server as clients meet it: `kenning mcp` in a subprocess, driven by the MCP SDK's own client.

The store is a SQLite file the test writes through the library first, so the
server sees what another process wrote (facts need the write pipeline, which
the tools do not expose).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from kenning import Memory, cli
from kenning.core_files import TEXTS

TOOLS = {"memory", "recall", "remember", "forget", "list_facts", "erase"}


def _server_args(db, *more: str) -> list[str]:
    return ["-m", "kenning.cli", "--db", str(db), "mcp", "--dataset", "sam", *more]


def _env(tmp_path) -> dict[str, str]:
    return {"KENNING_HOME": str(tmp_path / "server-home")}


def over_stdio(db, tmp_path, session) -> object:
    """Start `kenning mcp` over stdio, run ``session(client)``, hang up; return what it returned."""
    params = StdioServerParameters(command=sys.executable, args=_server_args(db), env=_env(tmp_path))

    async def main():
        with open(tmp_path / "mcp-stderr.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=30) as client:
                return await session(client)

    return asyncio.run(main())


def text(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


@pytest.fixture
def db(db_path, local_embedder):
    """A store file with one user fact in dataset 'sam' (and one in another dataset the server must not show)."""
    with Memory(str(db_path)) as mem:
        mem.add("I live in Berlin.", dataset="sam", at="2026-01-10T09:00:00Z")
        mem.add("I live in Oslo.", dataset="someone-else")
    return db_path


def test_memory_tool_over_stdio(db, tmp_path):
    async def session(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        created = await client.call_tool("memory", {"command": "create", "path": "/memories/prefs.md",
                                                    "file_text": "- coffee: black\n- tea: none"})
        viewed = await client.call_tool("memory", {"command": "view", "path": "/memories/prefs.md"})
        edited = await client.call_tool("memory", {"command": "str_replace", "path": "/memories/prefs.md",
                                                   "old_str": "tea: none", "new_str": "tea: green"})
        inserted = await client.call_tool("memory", {"command": "insert", "path": "/memories/prefs.md",
                                                     "insert_line": 0, "insert_text": "# Preferences"})
        ranged = await client.call_tool("memory", {"command": "view", "path": "/memories/prefs.md",
                                                   "view_range": [1, 2]})
        renamed = await client.call_tool("memory", {"command": "rename", "old_path": "/memories/prefs.md",
                                                    "new_path": "/memories/user/prefs.md"})
        listing = await client.call_tool("memory", {"command": "view", "path": "/memories"})
        outside = await client.call_tool("memory", {"command": "view", "path": "/etc/passwd"})
        traversal = await client.call_tool("memory", {"command": "create", "path": "/memories/../x.md",
                                                      "file_text": "x"})
        missing = await client.call_tool("memory", {"command": "delete", "path": "/memories/nope.md"})
        unknown = await client.call_tool("memory", {"command": "shred", "path": "/memories"})
        deleted = await client.call_tool("memory", {"command": "delete", "path": "/memories/user"})
        return (tools, created, viewed, edited, inserted, ranged, renamed, listing, outside, traversal, missing,
                unknown, deleted)

    (tools, created, viewed, edited, inserted, ranged, renamed, listing, outside, traversal, missing, unknown,
     deleted) = over_stdio(db, tmp_path, session)

    assert set(tools) == TOOLS
    props = tools["memory"].input_schema["properties"]
    assert set(props) == {"command", "path", "file_text", "old_str", "new_str", "insert_line", "insert_text",
                          "old_path", "new_path", "view_range"}
    assert tools["memory"].input_schema["required"] == ["command"]
    assert props["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]

    assert not created.is_error and text(created) == "File created successfully at: /memories/prefs.md"
    assert text(viewed) == ("Here's the content of /memories/prefs.md with line numbers:\n"
                            "     1\t- coffee: black\n     2\t- tea: none")
    assert text(edited).startswith(TEXTS["edited"].format(path="/memories/prefs.md"))
    assert "     2\t- tea: green" in text(edited)
    assert text(inserted) == "The file /memories/prefs.md has been edited."
    assert text(ranged).endswith("     1\t# Preferences\n     2\t- coffee: black")
    assert text(renamed) == "Successfully renamed /memories/prefs.md to /memories/user/prefs.md"
    assert text(listing).startswith(TEXTS["dir"].format(path="/memories"))
    assert "/memories/user/prefs.md" in text(listing)
    # Failures are error results with kenning's exact memory tool texts.
    assert outside.is_error and text(outside) == TEXTS["not_memories"].format(path="/etc/passwd")
    assert traversal.is_error and text(traversal) == TEXTS["escape"].format(path="/memories/../x.md")
    assert missing.is_error and text(missing) == "Error: The path /memories/nope.md does not exist"
    assert unknown.is_error and text(unknown) == TEXTS["bad_command"].format(command="shred")
    assert not deleted.is_error and text(deleted) == "Successfully deleted /memories/user"

    with Memory(str(db)) as mem:  # the server wrote to the dataset it was started for, in the store file
        assert mem.core.list("sam") == []
        assert [v.op for v in mem.core.history("sam", "/memories/prefs.md")][:2] == ["create", "str_replace"]


def test_remember_recall_forget_over_stdio(db, tmp_path):
    async def session(client):
        saved = await client.call_tool("remember", {"text": "Works in the Lisbon office on Tuesdays."})
        again = await client.call_tool("remember", {"text": "Works in the Lisbon office on Tuesdays."})
        found = await client.call_tool("recall", {"query": "Which office does the user work in?", "limit": 5})
        note_id = saved.structured_content["note_id"]
        forgot = await client.call_tool("forget", {"id": note_id})
        after = await client.call_tool("recall", {"query": "Which office does the user work in?"})
        unknown = await client.call_tool("forget", {"id": "n_nothing"})
        empty = await client.call_tool("recall", {"query": "   "})
        return saved, again, found, forgot, after, unknown, empty

    saved, again, found, forgot, after, unknown, empty = over_stdio(db, tmp_path, session)

    note = saved.structured_content
    assert not saved.is_error and note["text"] == "Works in the Lisbon office on Tuesdays."
    assert note["note_id"].startswith("n_") and note["namespace"] == "user"
    assert json.loads(text(saved)) == note                      # the same data as text, for text-only clients
    assert again.structured_content["note_id"] == note["note_id"]  # saving it twice keeps one note

    recalled = found.structured_content
    assert set(recalled) == {"context", "items"}
    assert "Lisbon office" in recalled["context"]
    notes = [i for i in recalled["items"] if i["kind"] == "note"]
    assert notes and notes[0]["id"] == note["note_id"]
    scores = [i["score"] for i in recalled["items"]]
    assert scores == sorted(scores, reverse=True)

    assert forgot.structured_content == {"id": note["note_id"], "kind": "note"}
    assert all(i["id"] != note["note_id"] for i in after.structured_content["items"])
    assert unknown.is_error and "n_nothing" in text(unknown)
    assert empty.is_error and text(empty) == "query is empty; pass the question or the user's message"


def test_list_facts_over_stdio(db, tmp_path):
    async def session(client):
        live = await client.call_tool("list_facts", {})
        before = await client.call_tool("list_facts", {"as_of": "2026-01-01T00:00:00Z"})
        fact_id = live.structured_content["facts"][0]["fact_id"]
        recalled = await client.call_tool("recall", {"query": "Where does the user live?"})
        forgot = await client.call_tool("forget", {"id": fact_id})
        gone = await client.call_tool("list_facts", {})
        history = await client.call_tool("list_facts", {"include_invalidated": True})
        bad_time = await client.call_tool("list_facts", {"as_of": "the day before yesterday"})
        return live, before, recalled, forgot, gone, history, bad_time

    live, before, recalled, forgot, gone, history, bad_time = over_stdio(db, tmp_path, session)

    page = live.structured_content
    assert page["total"] == 1                      # only dataset 'sam'; the other dataset's fact stays out
    fact = page["facts"][0]
    assert (fact["predicate"], fact["object"]) == ("lives in", "berlin")
    assert fact["valid_at"].startswith("2026-01-10")
    assert before.structured_content["total"] == 0  # not yet true on 1 January
    assert "lives in: berlin" in recalled.structured_content["context"]
    item = next(i for i in recalled.structured_content["items"] if i["kind"] == "fact")
    assert item["id"] == fact["fact_id"] and item["episode_id"] == fact["episode_id"]
    assert forgot.structured_content == {"id": fact["fact_id"], "kind": "fact"}
    assert gone.structured_content["total"] == 0
    kept = history.structured_content["facts"]
    assert [f["fact_id"] for f in kept] == [fact["fact_id"]] and kept[0]["invalid_at"] is not None
    assert bad_time.is_error and "as_of" in text(bad_time)


def test_erase_shows_a_dry_run_then_erases_for_good_over_stdio(db, tmp_path):
    with Memory(str(db)) as mem:
        mem.add("I play the cello.", dataset="sam", at="2026-02-01T09:00:00Z")
        mem.notes.save("sam", "Sings in the Lisbon choir.")
        facts = {f.object: f for f in mem.list_facts("sam").facts}
        (theirs,) = mem.list_facts("someone-else").facts
    berlin, cello = facts["berlin"], facts["cello"]

    async def session(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        calls = [("erase", {"id": berlin.fact_id}),                       # a dry run: nothing goes
                 ("list_facts", {"include_invalidated": True}),
                 ("erase", {"id": berlin.fact_id, "confirm": True}),
                 ("list_facts", {"include_invalidated": True}),
                 ("erase", {"id": cello.episode_id, "confirm": True}),    # a message, with its fact
                 ("erase", {"text": "lisbon choir"}),
                 ("erase", {"text": "lisbon choir", "confirm": True}),
                 ("recall", {"query": "choir"}),
                 ("erase", {"id": theirs.fact_id, "confirm": True}),      # another dataset's: not found here
                 ("erase", {"id": theirs.episode_id, "confirm": True}),
                 ("erase", {}), ("erase", {"id": berlin.fact_id, "text": "berlin"}),
                 ("erase", {"text": "nothing like this", "confirm": False}),
                 ("erase", {"id": berlin.fact_id, "confirm": True})]       # already gone
        return tools, [await client.call_tool(name, args) for name, args in calls]

    tools, (dry, before, erased, after, message, dry_text, by_text, recalled, theirs_fact, theirs_message, neither,
            both, nothing, again) = over_stdio(db, tmp_path, session)

    description = tools["erase"].description
    assert "PERMANENTLY" in description and "forget" in description and "confirm=true" in description
    assert set(tools["erase"].input_schema["properties"]) == {"id", "text", "confirm"}
    assert tools["erase"].input_schema["properties"]["confirm"]["default"] is False
    assert tools["erase"].annotations.destructive_hint is True

    receipt = dry.structured_content
    assert not dry.is_error and receipt["dry_run"] and receipt["erasure_id"] is None
    assert receipt["ids"]["facts"] == [berlin.fact_id] and "confirm=true" in receipt["note"]
    assert json.loads(text(dry)) == receipt                                  # the same data as text
    assert berlin.fact_id in {f["fact_id"] for f in before.structured_content["facts"]}
    receipt = erased.structured_content
    assert not receipt["dry_run"] and receipt["erasure_id"].startswith("er_") and "permanently" in receipt["note"]
    assert berlin.fact_id not in {f["fact_id"] for f in after.structured_content["facts"]}, "not even the history"
    assert message.structured_content["ids"]["messages"] == [cello.episode_id]
    assert message.structured_content["ids"]["facts"] == [cello.fact_id]
    assert dry_text.structured_content["dry_run"] and dry_text.structured_content["removed"]["notes"] == 1
    assert by_text.structured_content["removed"]["notes"] == 1
    assert "choir" not in json.dumps(recalled.structured_content).lower()
    for refused in (theirs_fact, theirs_message):
        assert refused.is_error and "no fact or message" in text(refused) and "nothing was erased" in text(refused)
    assert neither.is_error and "not neither" in text(neither)
    assert both.is_error and "not both" in text(both)
    assert not nothing.is_error and nothing.structured_content["note"].startswith("Nothing to erase")
    assert again.is_error and "no fact or message" in text(again)

    with Memory(str(db)) as mem:
        assert [f.fact_id for f in mem.list_facts("someone-else").facts] == [theirs.fact_id]   # untouched
        log = mem.erase.log("sam").erasures
        assert [(e.kind, e.by) for e in log] == [("content", "mcp"), ("message", "mcp"), ("fact", "mcp")]
        assert mem.erase.log("someone-else").total == 0


def test_erase_over_http_goes_through_the_callers_permissions(db, tmp_path):
    """A user token erases through ``as_user`` (the log names the user); a service key as the service. Either
    reaches only the dataset the server serves."""
    from kenning.server.auth import Tokens, hash_key

    secret = "test-secret-0123456789abcdef"
    with Memory(str(db)) as mem:
        mem.store.put_api_key(hash_key("kn_default_svc"), "default", "service")
        mem.add("I play the cello.", dataset="sam", at="2026-02-01T09:00:00Z")
        facts = {f.object: f.fact_id for f in mem.list_facts("sam").facts}
        (theirs,) = mem.list_facts("someone-else").facts
    key_id = hash_key("kn_default_svc")[:16]
    member = Tokens(secret).mint("default", "default", "sam", "member", 600, key_id)[0]

    with HttpServer(db, tmp_path, env={"KENNING_SECRET": secret}) as server:
        async def run(credential, calls):
            async with _client(server.url, credential) as client:
                return [await client.call_tool("erase", args) for args in calls]

        as_user = asyncio.run(run(member, [{"id": facts["berlin"], "confirm": True},
                                           {"id": theirs.fact_id, "confirm": True}]))
        as_service = asyncio.run(run("kn_default_svc", [{"id": facts["cello"], "confirm": True}]))

    assert not as_user[0].is_error and as_user[0].structured_content["ids"]["facts"] == [facts["berlin"]]
    assert as_user[1].is_error and "no fact or message" in text(as_user[1])
    assert not as_service[0].is_error
    with Memory(str(db)) as mem:
        log = mem.erase.log("sam").erasures
        assert [e.by for e in log] == [f"mcp key:{key_id}", f"user:sam via mcp key:{key_id}"]
        assert mem.list_facts("sam", include_invalidated=True).total == 0
        assert [f.fact_id for f in mem.list_facts("someone-else").facts] == [theirs.fact_id]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`kenning mcp --http` in a subprocess, its log kept, until the block ends."""

    def __init__(self, db, tmp_path, *more: str, env: dict | None = None):
        self.port, self.log = _free_port(), tmp_path / "mcp-http.log"
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.args = [sys.executable, *_server_args(db, "--http", "--port", str(self.port), *more)]
        self.env = {**os.environ, **_env(tmp_path), **(env or {})}

    def __enter__(self):
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60     # a busy CI machine loads the model slowly
        try:
            while True:
                assert self.proc.poll() is None, self.log.read_text()
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    return self
                except OSError:
                    assert time.monotonic() < deadline, "the HTTP server did not start"
                    time.sleep(0.05)
        except BaseException:
            self.__exit__()      # never leave a server behind a failed start
            raise

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def printed_token(self) -> str:
        return re.search(r"Bearer (mt_\S+)", self.log.read_text()).group(1)


@contextlib.asynccontextmanager
async def _client(url: str, credential: str | None, **headers):
    """The official client over streamable HTTP; the HTTP client we hand it is ours to close."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    auth = {"Authorization": f"Bearer {credential}"} if credential else {}
    async with create_mcp_http_client(headers={**auth, **headers}) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
            yield client


def test_streamable_http(db, tmp_path):
    with HttpServer(db, tmp_path) as server:
        async def main():
            async with _client(server.url, server.printed_token()) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                created = await client.call_tool("memory", {"command": "create", "path": "/memories/a.md",
                                                            "file_text": "over http"})
                viewed = await client.call_tool("memory", {"command": "view", "path": "/memories/a.md"})
                bad = await client.call_tool("memory", {"command": "view", "path": "/memories/../../etc"})
                facts = await client.call_tool("list_facts", {})
                return names, created, viewed, bad, facts

        names, created, viewed, bad, facts = asyncio.run(main())

    assert names == TOOLS
    assert text(created) == "File created successfully at: /memories/a.md"
    assert text(viewed).endswith("     1\tover http")
    assert bad.is_error and text(bad) == TEXTS["escape"].format(path="/memories/../../etc")
    assert facts.structured_content["total"] == 1


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "attacker", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, **headers) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30)


def test_http_needs_the_printed_token_and_refuses_web_pages(db, tmp_path):
    """Issue 16, item 8: any local process read and wrote the dataset; a foreign Host and Origin got 200."""
    with HttpServer(db, tmp_path) as server:
        token = server.printed_token()
        bearer = {"Authorization": f"Bearer {token}"}
        assert _post(server.url).status_code == 401
        assert _post(server.url, Authorization="Bearer mt_guess").status_code == 401
        assert _post(server.url, **bearer, Origin="https://evil.example").status_code == 403
        assert _post(server.url, **bearer, Host="evil.example").status_code in (400, 421)
        assert _post(server.url, **bearer).status_code == 200


def test_http_with_keys_takes_the_projects_keys_and_dataset_tokens(db, tmp_path, monkeypatch):
    from kenning.server.auth import Tokens, hash_key

    secret = "test-secret-0123456789abcdef"
    with Memory(str(db), embedder=None) as mem:
        mem.store.put_api_key(hash_key("kn_default_svc"), "default", "service")
        mem.store.put_api_key(hash_key("kn_default_ro"), "default", "member")
        mem.store.put_api_key(hash_key("kn_other_svc"), "other", "service")
    key_id = hash_key("kn_default_svc")[:16]
    tokens = Tokens(secret)
    mine = tokens.mint("default", "default", "sam", "member", 600, key_id)[0]
    theirs = tokens.mint("default", "default", "someone-else", "member", 600, key_id)[0]
    with HttpServer(db, tmp_path, env={"KENNING_SECRET": secret}) as server:
        assert "Bearer mt_" not in server.log.read_text()          # keys exist: no process token
        assert _post(server.url, Authorization="Bearer kn_default_svc").status_code == 200
        assert _post(server.url, Authorization=f"Bearer {mine}").status_code == 200
        assert _post(server.url, Authorization=f"Bearer {theirs}").status_code == 403
        assert _post(server.url, Authorization="Bearer kn_default_ro").status_code == 403   # reads only
        assert _post(server.url, Authorization="Bearer kn_other_svc").status_code == 403
        with Memory(str(db), embedder=None) as mem:
            assert mem.store.revoke_api_key(key_id)
        assert _post(server.url, Authorization="Bearer kn_default_svc").status_code == 401
        assert _post(server.url, Authorization=f"Bearer {mine}").status_code == 401


def test_http_beyond_loopback_needs_a_key(db, capsys):
    assert cli.main(["--db", str(db), "mcp", "--dataset", "sam", "--http", "--host", "0.0.0.0"]) == 1
    assert "refusing to serve MCP on 0.0.0.0" in capsys.readouterr().err


def test_bad_dataset_fails_before_serving(db, capsys):
    assert cli.main(["--db", str(db), "mcp", "--dataset", "not a name!"]) == 1
    assert "dataset 'not a name!' is not a valid name" in capsys.readouterr().err


def test_dataset_from_the_environment(db, monkeypatch, capsys):
    monkeypatch.setenv("KENNING_DATASET", "bad name from env")
    assert cli.main(["--db", str(db), "mcp"]) == 1   # read from the environment, and refused like --dataset
    assert "'bad name from env' is not a valid name" in capsys.readouterr().err


def test_a_user_token_gets_the_apis_permissions_tool_by_tool(db, tmp_path):
    """Issue 31, finding 6: over HTTP a member's user token forgot an organization note (the API answers
    403): every tool now acts through ``as_user``, so each call is allowed or refused as the library's
    user face (which the API uses) allows or refuses it."""
    from kenning import PermissionDenied
    from kenning.server.auth import Tokens, hash_key

    secret = "test-secret-0123456789abcdef"
    with Memory(str(db), embedder=None) as mem:
        mem.store.put_api_key(hash_key("kn_default_svc"), "default", "service")
        org = mem.notes.save("sam", "Office closes at six.", namespace="organization").note_id
        own = mem.notes.save("sam", "Prefers tea.").note_id
        other = mem.notes.save("someone-else", "Not sam's.").note_id
    key_id = hash_key("kn_default_svc")[:16]
    member = Tokens(secret).mint("default", "default", "sam", "member", 600, key_id)[0]
    admin = Tokens(secret).mint("default", "default", "sam", "admin", 600, key_id)[0]
    calls = [("recall", {"query": "office"}), ("list_facts", {}), ("remember", {"text": "Walks to work."}),
             ("memory", {"command": "create", "path": "/memories/m.md", "file_text": "x"}),
             ("memory", {"command": "view", "path": "/memories"}),
             ("forget", {"id": other}), ("forget", {"id": own}), ("forget", {"id": org})]

    def library(user, name: str, args: dict) -> bool:
        """Whether the user face allows the call (NotFound counts as allowed: nothing to do)."""
        try:
            if name == "forget":
                try:
                    user.notes.forget("sam", args["id"])
                except Exception as exc:   # noqa: BLE001
                    if isinstance(exc, PermissionDenied):
                        raise
            elif name == "memory":
                user.memory_tool("sam", {"command": args["command"], "path": args["path"]} if args["command"] == "view"
                                 else {**args, "path": "/memories/lib.md"})
            elif name == "remember":
                user.notes.save("sam", "Lib: " + args["text"])
            elif name == "recall":
                user.recall(args["query"], "sam")
            else:
                user.list_facts("sam")
            return True
        except PermissionDenied:
            return False

    with Memory(str(db), embedder=None) as mem:
        expected = {role: [library(mem.as_user("sam", role), name, args) for name, args in calls]
                    for role in ("member",)}
    assert expected["member"] == [True, True, True, True, True, True, True, False]

    with HttpServer(db, tmp_path, env={"KENNING_SECRET": secret}) as server:
        async def run(credential):
            async with _client(server.url, credential) as client:
                return [await client.call_tool(name, args) for name, args in calls]

        as_member = asyncio.run(run(member))
        refused = as_member[-1]
        assert refused.is_error and "permission" in text(refused)
        assert [not r.is_error or "no note or fact" in text(r) for r in as_member] == expected["member"]
        with Memory(str(db), embedder=None) as mem:
            assert org in {n.note_id for n in mem.notes.list("sam", "organization")}   # still there
        as_admin = asyncio.run(run(admin))
        assert not as_admin[-1].is_error                                               # an admin may
        with Memory(str(db), embedder=None) as mem:
            assert org not in {n.note_id for n in mem.notes.list("sam", "organization")}
