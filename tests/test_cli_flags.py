"""Every command and every flag of the command line does what its help says, and ``--json`` parses.

The commands run in-process (``kenning.cli.main``) on a seeded SQLite file. ``CASES`` holds, per
command, invocations with a check of what they must print or change; a test first asserts that the
cases use every flag the parser has, so a new flag without a check fails here. Long-running servers
(``serve``, ``mcp``, ``worker`` without ``--exit-when-idle``) are checked where they refuse or stop.
"""
from __future__ import annotations

import argparse
import json
import socket

import pytest

from kenning import Memory
from kenning.cli import build_parser, main

EXEMPT = {  # (command, flag): why this test does not exercise it
    ("bench", "which"): "runs a benchmark script of the checkout (tests/test_cli.py maps every name to one)",
    ("bench", "--bench-dir"): "the same",
    ("bench", "rest"): "the same",
    ("serve", "--replica"): "a real streaming replica (tests/store/test_postgres_replicas.py)",
    ("mcp", "--dataset"): "the MCP server (tests/test_mcp_server.py, with the official MCP client)",
    ("mcp", "--http"): "the same",
    ("mcp", "--host"): "the same",
    ("mcp", "--port"): "the same",
}


def leaves(parser, path=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from leaves(sub, path + (name,))


def flags(parser) -> set[str]:
    return {(a.option_strings[0] if a.option_strings else a.dest) for a in parser._actions
            if not isinstance(a, argparse._HelpAction)}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("KENNING_HOME", str(tmp_path / "home"))
    path = tmp_path / "k.db"
    monkeypatch.setenv("KENNING_EXTRACTOR", "parse")     # the flags' tests, not the extractor's: fixed facts
    mem = Memory(str(path))
    mem.add("I live in Berlin.", "sam", at="2026-07-01T10:00:00Z")
    mem.add("I moved to Lisbon last month.", "sam", at="2026-09-03T10:00:00Z")
    mem.add("My sister Anna is a nurse.", "sam", at="2026-09-04T10:00:00Z")
    mem.add("I play the cello.", "alex", at="2026-09-05T10:00:00Z")
    mem.notes.save("sam", "Prefers short answers")
    mem.notes.save("sam", "Team lead", namespace="organization")
    mem.core.write("sam", "/memories/prefs.md", "tea\n")
    mem.core.write("sam", "/memories/agent.md", "be brief\n", namespace="agent:a1")
    mem.close()
    return str(path)


def kenning(capsys, db, *argv) -> tuple[int, str, str]:
    code = main(["--db", db, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def facts(capsys, db, *extra) -> list[dict]:
    code, out, _ = kenning(capsys, db, "--json", "facts", "--dataset", "sam", *extra)
    assert code == 0
    return lines(out)


def used(command: tuple[str, ...], *names: str) -> None:
    """Marks the flags the test it opens exercises; read back from this file's source (so the coverage
    test needs no other test to have run in its process, as under pytest-xdist)."""


def checked() -> dict[tuple[str, ...], set[str]]:
    import ast
    from pathlib import Path

    out: dict[tuple[str, ...], set[str]] = {}
    for node in ast.walk(ast.parse(Path(__file__).read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "used" and node.args:
            command = ast.literal_eval(node.args[0])
            out.setdefault(command, set()).update(ast.literal_eval(a) for a in node.args[1:])
    return out


def test_facts_flags(db, capsys):
    used(("facts",), "--dataset", "--q", "--limit", "--include-invalidated", "--as-of", "--entity", "--json")
    assert {f["object"] for f in facts(capsys, db)} == {"lisbon", "anna"}
    assert {f["object"] for f in facts(capsys, db, "--include-invalidated")} == {"berlin", "lisbon", "anna"}
    assert {f["object"] for f in facts(capsys, db, "--history")} == {"berlin", "lisbon", "anna"}
    then = facts(capsys, db, "--as-of", "2026-07-15T00:00:00Z")
    assert [(f["object"], f["state"]) for f in then] == [("berlin", "live")]
    assert [f["object"] for f in facts(capsys, db, "--q", "lisbon")] == ["lisbon"]
    assert len(facts(capsys, db, "--limit", "1")) == 1
    assert [f["object"] for f in facts(capsys, db, "--entity", "anna")] == ["anna"]
    code, out, _ = kenning(capsys, db, "facts", "--dataset", "sam")   # the table
    assert code == 0 and "lisbon" in out and all(f["fact_id"] in out for f in facts(capsys, db))


def test_add_and_add_turn_flags(db, capsys):
    used(("add",), "text", "--dataset", "--at", "--role", "--client-ref", "--json")
    code, out, _ = kenning(capsys, db, "--json", "add", "I work at Acme.", "--dataset", "sam", "--at",
                           "2026-10-01T09:00:00Z", "--client-ref", "m-1")
    (r,) = lines(out)
    assert code == 0 and r["status"] == "stored" and r["memory_ids"]
    assert any(f["object"] == "acme" and f["valid_at"].startswith("2026-10-01") for f in facts(capsys, db))
    _, out, _ = kenning(capsys, db, "--json", "add", "I work at Acme.", "--dataset", "sam", "--client-ref", "m-1")
    assert lines(out)[0]["reason"] == "duplicate_client_ref" or lines(out)[0]["memory_ids"] == r["memory_ids"]
    _, out, _ = kenning(capsys, db, "--json", "add", "You live in Rome.", "--dataset", "sam", "--role", "assistant")
    assert lines(out)[0]["reason"] == "skipped_non_user_turn"
    used(("add-turn",), "text", "--dataset", "--role", "--thread", "--client-ref", "--at", "--wait", "--json")
    code, out, _ = kenning(capsys, db, "--json", "add-turn", "I play the drums.", "--dataset", "sam", "--thread",
                           "t1", "--client-ref", "turn-1", "--at", "2026-10-02T09:00:00Z", "--wait", "60")
    (receipt,) = lines(out)
    assert code == 0 and receipt["status"] == "done" and receipt["processing_status"] == "done"
    _, out, _ = kenning(capsys, db, "--json", "add-turn", "Sure!", "--dataset", "sam", "--role", "assistant")
    assert lines(out)[0]["reason"] == "skipped_non_user_turn"


def test_recall_flags(db, capsys):
    used(("recall",), "query", "--dataset", "--limit", "--as-of", "--json")
    code, out, _ = kenning(capsys, db, "--json", "recall", "Where does the user live?", "--dataset", "sam",
                           "--limit", "2")
    (res,) = lines(out)
    assert code == 0 and len(res["items"]) <= 2 and "lisbon" in res["context"]
    _, out, _ = kenning(capsys, db, "--json", "recall", "Where does the user live?", "--dataset", "sam",
                        "--as-of", "2026-07-15T00:00:00Z")
    (then,) = lines(out)
    assert "berlin" in then["context"] and "lisbon" not in then["context"]
    _, out, _ = kenning(capsys, db, "recall", "Where does the user live?", "--dataset", "sam")
    assert out.startswith("User facts:")


def test_listing_commands_flags(db, capsys):
    used(("entities",), "--dataset", "--type", "--json")
    _, out, _ = kenning(capsys, db, "--json", "entities", "--dataset", "sam", "--type", "person")
    assert [e["name"] for e in lines(out)] == ["anna"]
    used(("datasets",), "--q", "--limit", "--offset", "--json")
    _, out, _ = kenning(capsys, db, "--json", "datasets")
    assert {d["dataset"] for d in lines(out)} == {"sam", "alex"}
    _, out, _ = kenning(capsys, db, "--json", "datasets", "--q", "al")
    assert [d["dataset"] for d in lines(out)] == ["alex"]
    _, first, _ = kenning(capsys, db, "--json", "datasets", "--limit", "1")
    _, second, _ = kenning(capsys, db, "--json", "datasets", "--limit", "1", "--offset", "1")
    assert len(lines(first)) == len(lines(second)) == 1 and lines(first) != lines(second)
    used(("jobs",), "--dataset", "--status", "--limit", "--offset", "--json")
    kenning(capsys, db, "add-turn", "I like tea.", "--dataset", "alex", "--wait", "60")
    kenning(capsys, db, "add-turn", "I like jazz.", "--dataset", "alex", "--wait", "60")
    _, out, _ = kenning(capsys, db, "--json", "jobs", "--dataset", "alex", "--status", "done")
    assert [j["status"] for j in lines(out)] == ["done", "done"]
    _, out, _ = kenning(capsys, db, "--json", "jobs", "--status", "failed")
    assert lines(out) == []
    _, a, _ = kenning(capsys, db, "--json", "jobs", "--limit", "1")
    _, b, _ = kenning(capsys, db, "--json", "jobs", "--limit", "1", "--offset", "1")
    assert lines(a)[0]["request_id"] != lines(b)[0]["request_id"]


def test_history_flags(db, capsys):
    used(("history",), "--dataset", "--predicate", "--limit", "--json")
    code, out, _ = kenning(capsys, db, "--json", "history", "--dataset", "sam")
    states = {(r["object"], r["state"]) for r in lines(out)}
    assert code == 0 and {("berlin", "superseded"), ("lisbon", "live")} <= states
    code, out, _ = kenning(capsys, db, "--json", "history", "--dataset", "sam", "--predicate", "lives in")
    assert [(r["object"], r["state"]) for r in lines(out)] == [("berlin", "superseded"), ("lisbon", "live")]
    code, out, err = kenning(capsys, db, "--json", "history", "--dataset", "sam", "--predicate", "lives in",
                             "--limit", "1")
    assert [r["object"] for r in lines(out)] == ["berlin"] and "(1 of 2)" in err


def test_remine_flags(db, capsys):
    used(("remine",), "--dataset", "--message-id", "--all", "--json")
    kenning(capsys, db, "add", "thanks, that helped", "--dataset", "rem")
    code, out, _ = kenning(capsys, db, "--json", "remine", "--dataset", "rem")
    (row,) = lines(out)
    assert code == 0 and (row["status"], row["stored"]) == ("skipped", 0)
    code, out, _ = kenning(capsys, db, "--json", "remine", "--dataset", "sam", "--all")
    every = lines(out)
    assert code == 0 and len(every) >= 2 and all(r["stored"] == 0 for r in every), "all of it again: nothing twice"
    code, out, _ = kenning(capsys, db, "--json", "remine", "--dataset", "sam", "--message-id", every[0]["message_id"])
    assert code == 0 and [r["message_id"] for r in lines(out)] == [every[0]["message_id"]]


def test_delete_fact_and_notes_flags(db, capsys):
    used(("delete-fact",), "fact_id", "--dataset", "--json")
    lisbon = next(f for f in facts(capsys, db) if f["object"] == "lisbon")
    code, out, _ = kenning(capsys, db, "--json", "delete-fact", lisbon["fact_id"], "--dataset", "sam")
    assert code == 0 and lines(out) == [{"deleted": lisbon["fact_id"]}]
    assert "lisbon" not in {f["object"] for f in facts(capsys, db)}
    gone = next(f for f in facts(capsys, db, "--history") if f["object"] == "lisbon")
    assert gone["state"] == "deleted"
    used(("notes", "save"), "--dataset", "text", "--namespace")
    _, out, _ = kenning(capsys, db, "--json", "notes", "save", "Uses vim", "--dataset", "sam", "--namespace", "agent:a1")
    (note,) = lines(out)
    assert note["namespace"] == "agent:a1"
    used(("notes", "list"), "--dataset", "--namespace", "--limit", "--include-forgotten")
    _, out, _ = kenning(capsys, db, "--json", "notes", "list", "--dataset", "sam", "--namespace", "agent:a1")
    assert [n["text"] for n in lines(out)] == ["Uses vim"]
    _, out, _ = kenning(capsys, db, "--json", "notes", "list", "--dataset", "sam", "--limit", "1")
    assert len(lines(out)) == 1
    used(("notes", "forget"), "--dataset", "note_id")
    code, out, _ = kenning(capsys, db, "--json", "notes", "forget", note["note_id"], "--dataset", "sam")
    assert code == 0 and lines(out) == [{"forgot": note["note_id"]}]
    _, out, _ = kenning(capsys, db, "--json", "notes", "list", "--dataset", "sam", "--namespace", "agent:a1")
    assert lines(out) == []
    _, out, _ = kenning(capsys, db, "--json", "notes", "list", "--dataset", "sam", "--namespace", "agent:a1",
                        "--include-forgotten")
    assert [n["forgotten_at"] is not None for n in lines(out)] == [True]
    used(("notes", "search"), "--dataset", "query", "--namespace", "--limit")
    _, out, _ = kenning(capsys, db, "--json", "notes", "search", "short answers", "--dataset", "sam", "--limit", "1")
    assert [n["text"] for n in lines(out)] == ["Prefers short answers"]
    _, out, _ = kenning(capsys, db, "--json", "notes", "search", "answers", "--dataset", "sam", "--namespace",
                        "organization")
    assert all(n["namespace"] == "organization" for n in lines(out))


def test_core_flags(db, capsys):
    used(("core", "view"), "path", "--dataset", "--namespace")
    code, out, _ = kenning(capsys, db, "--json", "core", "view", "/memories/prefs.md", "--dataset", "sam")
    assert code == 0 and "tea" in lines(out)[0]["text"]
    _, out, _ = kenning(capsys, db, "core", "view", "--dataset", "sam", "--namespace", "agent:a1")
    assert "/memories/agent.md" in out and "prefs.md" not in out
    used(("core", "render"), "--dataset", "--namespace")
    _, out, _ = kenning(capsys, db, "core", "render", "--dataset", "sam")
    assert "tea" in out and "be brief" not in out
    _, out, _ = kenning(capsys, db, "core", "render", "--dataset", "sam", "--namespace", "agent:a1")
    assert "be brief" in out and "tea" not in out
    used(("core", "tool"), "command_json", "--dataset", "--namespace")
    code, out, _ = kenning(capsys, db, "--json", "core", "tool", '{"command": "create", "path": "/memories/x.md", '
                           '"file_text": "hi\\n"}', "--dataset", "sam", "--namespace", "agent:a1")
    assert code == 0 and lines(out) == [{"content": "File created successfully at: /memories/x.md", "is_error": False}]
    code, out, _ = kenning(capsys, db, "--json", "core", "tool", '{"command": "view", "path": "/memories/nope"}',
                           "--dataset", "sam")
    assert code == 1 and lines(out)[0]["is_error"] is True


def test_export_import_embed_pending_flags(db, capsys, tmp_path):
    used(("export",), "--dataset", "--vectors", "--out", "--json")
    out_file = tmp_path / "sam.jsonl"
    assert kenning(capsys, db, "export", "--dataset", "sam", "--out", str(out_file))[0] == 0
    rows = lines(out_file.read_text())
    assert rows[0]["kind"] == "kenning-export" and {r.get("dataset") for r in rows[1:]} == {"sam"}
    assert not any("vector" in r for r in rows)
    _, out, _ = kenning(capsys, db, "--json", "export", "--vectors")
    assert any("vector" in r for r in lines(out)[1:]) and {r.get("dataset") for r in lines(out)[1:]} >= {"sam", "alex"}
    used(("import",), "file", "--no-embed", "--json")
    copy = str(tmp_path / "copy.db")
    code, out, _ = kenning(capsys, copy, "--json", "import", str(out_file), "--no-embed")
    assert code == 0 and lines(out)[0]["fact"] >= 3
    mem = Memory(copy)
    pending = sum(1 for kind in ("fact", "episode") for _ in mem.store.pending(kind, 1000, None, None))
    mem.close()
    assert pending > 0, "--no-embed left the vectors to embed-pending"
    used(("embed-pending",), "--json")
    code, out, _ = kenning(capsys, copy, "--json", "embed-pending")
    assert code == 0 and lines(out)[0]["facts_embedded"] >= 3


def test_keys_migrate_worker_demo_flags(db, capsys):
    used(("keys", "create"), "--project", "--role", "--name")
    code, out, err = kenning(capsys, db, "keys", "create", "--project", "acme", "--role", "member", "--name", "ci")
    assert code == 0 and out.strip().startswith("kn_acme_")
    used(("keys", "list"), "--project", "--all", "--json")
    _, out, _ = kenning(capsys, db, "keys", "list", "--project", "acme", "--json")
    (key,) = lines(out)
    assert (key["project"], key["role"], key["name"]) == ("acme", "member", "ci")
    used(("keys", "revoke"), "key_id", "--project")
    assert kenning(capsys, db, "keys", "revoke", key["key_id"], "--project", "other")[0] != 0
    assert kenning(capsys, db, "keys", "revoke", key["key_id"], "--project", "acme")[0] == 0
    _, out, _ = kenning(capsys, db, "keys", "list", "--json")
    assert lines(out) == []
    _, out, _ = kenning(capsys, db, "keys", "list", "--all", "--json")
    assert lines(out)[0]["revoked_at"]
    used(("migrate",), "--json")
    _, out, _ = kenning(capsys, db, "--json", "migrate")
    assert all(m["migration"] and m["applied_at"] and m["applied"] in ("now", "before") for m in lines(out))
    used(("worker",), "--threads", "--lease", "--poll", "--exit-when-idle", "--json")
    kenning(capsys, db, "add-turn", "I run on Sundays.", "--dataset", "sam")
    code, out, _ = kenning(capsys, db, "--json", "worker", "--threads", "2", "--lease", "30", "--poll", "0.1",
                           "--exit-when-idle")
    events = lines(out)
    assert code == 0 and events[0] == {**events[0], "event": "started", "threads": 2}
    assert events[-1]["event"] == "stopped" and events[-1]["jobs"] >= 0
    used(("demo",), "--dataset", "--json")
    code, out, _ = kenning(capsys, db, "--json", "demo", "--dataset", "demo-flags")
    kinds = [row["kind"] for row in lines(out)]
    assert code == 0 and {"added", "live", "history", "as_of", "recall"} <= set(kinds)
    assert {f["object"] for f in facts(capsys, db)} and kenning(capsys, db, "--json", "datasets", "--q", "demo-flags")


def test_serve_refusals_come_before_the_banner(db, capsys):
    used(("serve",), "--host", "--port")
    code, out, err = kenning(capsys, db, "serve", "--host", "0.0.0.0", "--port", "0")
    assert code == 1 and out == "" and "needs an API key" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, out, err = kenning(capsys, db, "serve", "--port", str(port))
    assert code == 1 and out == "" and "cannot listen" in err


def test_serve_json_prints_its_banner_as_json_lines(db, tmp_path):
    import os
    import subprocess
    import sys

    used(("serve",), "--json")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home")}
    with subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", db, "--json", "serve", "--port", str(port)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as server:
        try:
            events = []
            while not events or events[-1]["event"] != "serving":
                line = server.stdout.readline()
                assert line, server.stderr.read()
                events.append(json.loads(line))
        finally:
            server.terminate()
            server.wait(30)
    assert [e["event"] for e in events] == ["store", "development_mode", "serving"]
    assert events[-1]["url"] == f"http://127.0.0.1:{port}"


def test_erase_flags(db, capsys):
    """Each erase first shows its dry run; without a terminal it erases only with --yes (else exit 2)."""
    used(("erase", "fact"), "dataset", "--dataset", "fact_id", "--yes", "--dry-run", "--json")
    anna = next(f for f in facts(capsys, db) if f["object"] == "anna")
    code, out, err = kenning(capsys, db, "erase", "fact", "sam", anna["fact_id"])   # no terminal, no --yes
    assert code == 2 and "nothing was erased" in err and "--yes" in err
    assert out.startswith("Dry run") and anna["fact_id"] in out and anna["episode_id"] in out
    # the dataset named as every other command names it, the same; two different ones, or none, refused
    assert kenning(capsys, db, "erase", "fact", anna["fact_id"], "--dataset", "sam", "--dry-run")[1] == out
    for args, says in (((anna["fact_id"], "--dry-run"), "which dataset?"),
                       (("sam", anna["fact_id"], "--dataset", "alex", "--dry-run"), "two datasets named")):
        with pytest.raises(SystemExit) as exit:
            kenning(capsys, db, "erase", "fact", *args)
        assert exit.value.code == 2 and says in capsys.readouterr().err
    code, out, _ = kenning(capsys, db, "--json", "erase", "fact", "sam", anna["fact_id"], "--dry-run")
    (preview,) = lines(out)
    assert code == 0 and preview["dry_run"] and preview["erasure_id"] is None
    assert preview["ids"]["facts"] == [anna["fact_id"]]
    assert anna["fact_id"] in {f["fact_id"] for f in facts(capsys, db)}, "a dry run and a refusal erase nothing"
    code, out, _ = kenning(capsys, db, "erase", "fact", "sam", anna["fact_id"], "--yes", "--json")
    (receipt,) = lines(out)
    assert code == 0 and not receipt["dry_run"] and receipt["erasure_id"].startswith("er_")
    assert receipt["ids"]["facts"] == [anna["fact_id"]] and receipt["physical"] == "done"
    assert anna["fact_id"] not in {f["fact_id"] for f in facts(capsys, db, "--history")}, "not even in the history"
    code, out, err = kenning(capsys, db, "erase", "fact", "sam", anna["fact_id"], "--yes")
    assert code == 1 and out == "" and err.startswith(f"kenning: no fact {anna['fact_id']!r} in dataset 'sam'")

    used(("erase", "message"), "dataset", "--dataset", "message_id", "--yes", "--dry-run", "--json")
    history = facts(capsys, db, "--history")
    lisbon = next(f for f in history if f["object"] == "lisbon")
    berlin = next(f for f in history if f["object"] == "berlin")
    code, out, _ = kenning(capsys, db, "erase", "message", "sam", lisbon["episode_id"], "--dry-run")
    assert code == 0 and "Dry run" in out and lisbon["fact_id"] in out and lisbon["episode_id"] in out
    code, out, _ = kenning(capsys, db, "erase", "message", "sam", lisbon["episode_id"], "-y")
    assert code == 0 and out.startswith("Erased for good: message") and "erasure er_" in out
    assert f"restored      1  {berlin['fact_id']}" in out, "what the erased fact had superseded is live again"
    assert [f["object"] for f in facts(capsys, db) if f["predicate"] == "lives in"] == ["berlin"]
    code, _, err = kenning(capsys, db, "--json", "erase", "message", "sam", "ep_nothing", "--yes")
    assert code == 1 and "no message 'ep_nothing'" in err
    code, _, _ = kenning(capsys, db, "erase", "message", "--dataset", "sam", "ep_nothing", "--dry-run")
    assert code == 1

    used(("erase", "content"), "dataset", "--dataset", "text", "--document-scope", "--organization", "--yes", "--dry-run",
         "--json")
    mem = Memory(db)
    mem.documents.write("sam-docs", "/brief.md", "Sam prefers short answers.")
    note = next(n for n in mem.notes.list("sam") if n.text == "Prefers short answers")
    mem.close()
    code, out, _ = kenning(capsys, db, "--json", "erase", "content", "sam", "short answers", "--dry-run",
                           "--document-scope", "sam-docs")
    (preview,) = lines(out)
    assert preview["ids"]["notes"] == [note.note_id] and preview["ids"]["documents"] == ["sam-docs:/brief.md"]
    code, out, _ = kenning(capsys, db, "--json", "erase", "content", "--dataset", "sam", "short answers", "--yes")
    (receipt,) = lines(out)
    assert code == 0 and receipt["ids"] == {"notes": [note.note_id]}, "documents only under a named scope"
    mem = Memory(db)
    assert mem.documents.read("sam-docs", "/brief.md").text == "Sam prefers short answers."
    assert "short answers" not in " ".join(n.text for n in mem.notes.list("sam", include_forgotten=True))
    mem.close()
    code, out, _ = kenning(capsys, db, "--json", "erase", "content", "sam", "team lead", "--yes")
    assert lines(out)[0]["removed"] == {"redacted": 0}, "the organization memory only when asked"
    code, out, _ = kenning(capsys, db, "erase", "content", "sam", "team lead", "--organization", "--dry-run")
    assert code == 0 and "and in the organization memory" in out and "notes" in out and "organization/n_" in out
    code, out, _ = kenning(capsys, db, "--json", "erase", "content", "sam", "team lead", "--organization", "--yes")
    assert code == 0 and lines(out)[0]["removed"]["notes"] == 1
    mem = Memory(db)
    assert mem.notes.list("sam", "organization", include_forgotten=True) == []
    mem.close()
    code, out, err = kenning(capsys, db, "erase", "content", "sam", "x", "--yes")
    assert code == 1 and "at least 2 characters" in err

    used(("erase", "dataset"), "dataset", "--dataset", "--yes", "--dry-run", "--json")
    code, out, err = kenning(capsys, db, "--json", "erase", "dataset", "alex")
    (preview,) = lines(out)
    assert code == 2 and preview["dry_run"] and preview["removed"]["facts"] >= 1
    code, out, _ = kenning(capsys, db, "erase", "dataset", "--dataset", "alex", "--dry-run")
    assert code == 0 and "the whole dataset 'alex'" in out and "facts" in out and "messages" in out
    code, out, _ = kenning(capsys, db, "--json", "erase", "dataset", "alex", "--yes")
    assert code == 0 and lines(out)[0]["removed"]["facts"] >= 1
    _, out, _ = kenning(capsys, db, "--json", "datasets")
    assert {d["dataset"] for d in lines(out)} == {"sam"}


def test_erasures_and_compact_flags(db, capsys, monkeypatch):
    monkeypatch.setenv("KENNING_ERASE_COMPACTION", "deferred")
    cello = next(f for f in lines(kenning(capsys, db, "--json", "facts", "--dataset", "alex")[1]))
    code, out, _ = kenning(capsys, db, "erase", "fact", "alex", cello["fact_id"], "--yes")
    assert code == 0 and "at the next `kenning compact`" in out
    anna = next(f for f in facts(capsys, db) if f["object"] == "anna")
    assert kenning(capsys, db, "erase", "fact", "sam", anna["fact_id"], "--yes")[0] == 0
    used(("erasures",), "dataset", "--dataset", "--limit", "--offset", "--json")
    code, out, err = kenning(capsys, db, "--json", "erasures")
    every = lines(out)
    assert code == 0 and [(e["kind"], e["dataset"]) for e in every] == [("fact", "sam"), ("fact", "alex")]
    assert every[0]["ids"]["facts"] == [anna["fact_id"]] and every[0]["by"].startswith("cli")
    assert all(e["compacted_at"] is None for e in every) and "(2 of 2)" in err
    assert "nurse" not in out.lower() and "cello" not in out.lower(), "the log keeps ids and hashes, never text"
    _, out, _ = kenning(capsys, db, "--json", "erasures", "alex")
    assert [e["erasure_id"] for e in lines(out)] == [every[1]["erasure_id"]]
    assert kenning(capsys, db, "--json", "erasures", "--dataset", "alex")[1] == out
    _, out, _ = kenning(capsys, db, "--json", "erasures", "--limit", "1", "--offset", "1")
    assert [e["erasure_id"] for e in lines(out)] == [every[1]["erasure_id"]]
    code, out, _ = kenning(capsys, db, "erasures", "sam")   # the table
    assert code == 0 and every[0]["erasure_id"] in out and "pending" in out and "facts 1" in out
    used(("compact",), "--json")
    code, out, _ = kenning(capsys, db, "--json", "compact")
    assert code == 0 and lines(out) == [{"compacted": True}]
    code, out, _ = kenning(capsys, db, "compact")
    assert code == 0 and out.startswith("compaction complete")
    _, out, _ = kenning(capsys, db, "--json", "erasures")
    assert all(e["compacted_at"] is not None for e in lines(out))


def test_every_flag_of_every_command_is_checked():
    """The cases above cover the whole parser: a new command or flag needs a check here."""
    missing, covered = [], checked()
    for path, parser in leaves(build_parser()):
        for flag in flags(parser) - covered.get(path, set()):
            if (path[0], flag) not in EXEMPT and (" ".join(path), flag) not in EXEMPT:
                missing.append(f"{' '.join(path)} {flag}")
    assert not missing, f"flags no test here exercises: {missing}"


def test_a_read_command_refuses_a_missing_store_and_a_missing_folder(tmp_path, capsys):
    code, _, err = kenning(capsys, str(tmp_path / "nope.db"), "facts", "--dataset", "sam")
    assert code == 1 and "no kenning store there" in err and not (tmp_path / "nope.db").exists()
    code, _, err = kenning(capsys, str(tmp_path / "no" / "such" / "x.db"), "add", "hi there", "--dataset", "sam")
    assert code == 1 and "does not exist" in err and not (tmp_path / "no").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "fact"}\n')
    code, _, err = kenning(capsys, str(tmp_path / "new.db"), "import", str(bad))
    assert code == 1 and "header" in err and not list(tmp_path.glob("new.db*")), "a failed import leaves no file"
