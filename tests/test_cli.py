"""The command line: every command has help, tables and JSON, one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kenning.cli import build_parser, main


def _commands(parser, prefix=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + (name,), sub, action
                yield from _commands(sub, prefix + (name,))


def test_every_command_has_help_text():
    parser = build_parser()
    missing = []
    for path, sub, action in _commands(parser):
        helps = {a.dest: a.help for a in action._choices_actions}
        if not helps.get(path[-1]):
            missing.append(" ".join(path))
    assert not missing, f"commands without help: {missing}"
    names = {path[0] for path, _, _ in _commands(parser)}
    for required in ("serve", "worker", "add", "add-turn", "recall", "facts", "entities", "notes", "core", "export",
                     "import", "keys", "bench", "mcp", "erase", "erasures", "compact"):
        assert required in names


def run(tmp_path, *args, check=True):
    db = str(tmp_path / "k.db")
    proc = subprocess.run([sys.executable, "-m", "kenning.cli", "--db", db, *args], capture_output=True, text=True,
                          env={"KENNING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "250"},
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_add_facts_entities_notes_core_as_tables_and_json(tmp_path):
    run(tmp_path, "add", "I live in Berlin.", "--dataset", "sam", "--at", "2026-07-01T10:00:00Z")
    run(tmp_path, "add", "I moved to Lisbon last month.", "--dataset", "sam", "--at", "2026-09-03T10:00:00Z")
    table = run(tmp_path, "facts", "--dataset", "sam").stdout
    assert "lisbon" in table and "berlin" not in table
    rows = [json.loads(line) for line in run(tmp_path, "--json", "facts", "--dataset", "sam",
                                             "--include-invalidated").stdout.splitlines()]
    assert {r["object"] for r in rows} == {"berlin", "lisbon"}
    after = [json.loads(line) for line in run(tmp_path, "facts", "--dataset", "sam", "--as-of",
                                              "2026-07-15T00:00:00Z", "--json").stdout.splitlines()]
    assert [r["object"] for r in after] == ["berlin"]
    assert "lisbon" in run(tmp_path, "entities", "--dataset", "sam").stdout
    run(tmp_path, "notes", "save", "Works in the Lisbon office", "--dataset", "sam")
    assert "Lisbon office" in run(tmp_path, "notes", "list", "--dataset", "sam").stdout
    out = run(tmp_path, "core", "tool", "--dataset", "sam",
              '{"command": "create", "path": "/memories/a.md", "file_text": "hi"}').stdout
    assert out.strip() == "File created successfully at: /memories/a.md"
    assert "/memories/a.md" in run(tmp_path, "core", "view", "--dataset", "sam").stdout
    assert "lisbon" in run(tmp_path, "recall", "Where does the user live?", "--dataset", "sam").stdout


def test_a_memory_tool_command_that_is_not_json_is_a_clear_error(tmp_path):
    bad = run(tmp_path, "core", "tool", "--dataset", "sam", "not json", check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("kenning: the command is not JSON") and '"command": "view"' in bad.stderr


def test_add_reads_a_long_message_from_stdin(tmp_path):
    db = str(tmp_path / "k.db")
    text = ("I live in Porto. " + "filler words here " * 10_000)[:99_000]   # near the 100k limit
    proc = subprocess.run([sys.executable, "-m", "kenning.cli", "--db", db, "add", "-", "--dataset", "sam"],
                          input=text, capture_output=True, text=True, timeout=120,
                          env={"KENNING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    found = [json.loads(line) for line in run(tmp_path, "--json", "facts", "--dataset", "sam").stdout.splitlines()]
    (fact,) = [f for f in found if f["predicate"] == "lives in"]
    assert fact["object"] == "porto" and "I live in Porto" in fact["source_quote"]


def test_facts_as_of_a_time_calls_what_was_live_then_live(tmp_path):
    run(tmp_path, "add", "I live in Berlin.", "--dataset", "sam", "--at", "2026-07-01T10:00:00Z")
    run(tmp_path, "add", "I moved to Lisbon last month.", "--dataset", "sam", "--at", "2026-09-03T10:00:00Z")
    then = [json.loads(line) for line in run(tmp_path, "--json", "facts", "--dataset", "sam", "--as-of",
                                             "2026-07-15T00:00:00Z").stdout.splitlines()]
    assert [(r["object"], r["state"]) for r in then] == [("berlin", "live")]


def test_add_turn_waits_for_its_receipt(tmp_path):
    out = run(tmp_path, "--json", "add-turn", "I play the cello.", "--dataset", "sam", "--wait", "30").stdout
    assert json.loads(out)["processing_status"] == "done"


def test_errors_are_one_line_and_non_zero(tmp_path):
    proc = run(tmp_path, "facts", "--dataset", "a b", check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("kenning: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_keys_create_prints_a_key_once(tmp_path):
    key = run(tmp_path, "keys", "create", "--project", "acme").stdout.strip()
    assert key.startswith("kn_acme_")
    from kenning import Memory
    from kenning.server.auth import hash_key
    with Memory(f"sqlite:///{tmp_path}/k.db", embedder=None) as mem:
        found = mem.store.find_api_key(hash_key(key))
        assert (found.project, found.role, found.key_id) == ("acme", "service", hash_key(key)[:16])


def test_keys_list_and_revoke(tmp_path):
    import json

    run(tmp_path, "keys", "create", "--project", "acme", "--name", "ci")
    run(tmp_path, "keys", "create", "--project", "beta", "--role", "member")
    listed = [json.loads(line) for line in run(tmp_path, "keys", "list", "--json").stdout.splitlines()]
    assert [(k["project"], k["role"], k["name"]) for k in listed] == [("acme", "service", "ci"),
                                                                      ("beta", "member", None)]
    assert all(len(k["key_id"]) == 16 and k["revoked_at"] is None for k in listed)
    acme = listed[0]["key_id"]
    wrong = run(tmp_path, "keys", "revoke", acme, "--project", "beta", check=False)   # not beta's key
    assert wrong.returncode == 1 and "no live API key" in wrong.stderr
    assert "revoked" in run(tmp_path, "keys", "revoke", acme).stdout
    assert run(tmp_path, "keys", "revoke", acme, check=False).returncode == 1            # already revoked
    live = [json.loads(line) for line in run(tmp_path, "keys", "list", "--json").stdout.splitlines()]
    assert [k["project"] for k in live] == ["beta"]
    every = [json.loads(line) for line in run(tmp_path, "keys", "list", "--all", "--json").stdout.splitlines()]
    assert [k["revoked_at"] is not None for k in every] == [True, False]


@pytest.mark.parametrize("project", ["../x y", "acme\n", "", ".lead", "x" * 129])
def test_keys_create_refuses_a_project_no_request_could_name(tmp_path, project):
    proc = run(tmp_path, "keys", "create", "--project", project, check=False)
    assert proc.returncode == 1 and "no project name" in proc.stderr
    assert run(tmp_path, "keys", "list", "--json").stdout == ""


@pytest.mark.parametrize("argv", [["--help"], ["notes", "--help"], ["core", "tool", "--help"]])
def test_help_exits_cleanly(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_every_bench_name_maps_to_a_script_of_the_checkout(tmp_path, capsys):
    from pathlib import Path

    from kenning.cli import BENCHES

    bench = Path(__file__).resolve().parents[1] / "bench"
    if not bench.is_dir():
        pytest.skip("bench/ is not in this checkout")
    assert {"latency", "peers", "locomo", "write"} <= set(BENCHES)
    assert [name for name, script in BENCHES.items() if not (bench / script).is_file()] == []
    assert main(["bench", "--bench-dir", str(tmp_path), "write"]) == 1          # a folder without the scripts
    assert "not found" in capsys.readouterr().err


def test_the_demo_leaves_nothing_in_the_users_store(tmp_path):
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-m", "kenning.cli", "demo"], capture_output=True, text=True, timeout=300,
                          env={"KENNING_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "250",
                               "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "a temporary store at" in proc.stdout and "lisbon" in proc.stdout.lower()
    assert not home.exists() and not any(tmp_path.glob("kenning-demo-*"))      # removed when it ended


def test_a_message_from_standard_input_loses_only_its_final_newline(tmp_path):
    db = str(tmp_path / "k.db")
    for text in ("I live in Berlin.\n", "Line one.\nLine two.\r\n"):
        subprocess.run([sys.executable, "-m", "kenning.cli", "--db", db, "add", "-", "--dataset", "sam"], input=text,
                       capture_output=True, text=True, timeout=120, check=True,
                       env={"KENNING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    from kenning import Memory

    with Memory(db) as mem:
        stored = sorted(m.content for m in mem.messages.thread("sam", None).messages)
    assert stored == ["I live in Berlin.", "Line one.\nLine two."]


def on_a_terminal(tmp_path, answer: str, *args) -> subprocess.CompletedProcess:
    """The command with a real terminal (a pseudo-terminal) as its standard input, ``answer`` typed into it."""
    import os
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", str(tmp_path / "k.db"), *args],
                                stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={"KENNING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "250"})
        os.close(slave)
        os.write(master, answer.encode())
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(master)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_erase_asks_on_a_terminal_and_erases_only_when_confirmed(tmp_path):
    run(tmp_path, "add", "I play the cello.", "--dataset", "sam")
    run(tmp_path, "add", "I live in Porto.", "--dataset", "kim")
    (fact,) = [json.loads(line) for line in run(tmp_path, "--json", "facts", "--dataset", "sam").stdout.splitlines()]

    declined = on_a_terminal(tmp_path, "n\n", "erase", "fact", "sam", fact["fact_id"])
    assert declined.returncode == 1 and "nothing was erased" in declined.stderr
    assert declined.stdout.startswith("Dry run") and fact["fact_id"] in declined.stdout   # what would go, first
    assert "Erase this for good?" in declined.stderr
    assert run(tmp_path, "--json", "facts", "--dataset", "sam").stdout.strip(), "still there"

    confirmed = on_a_terminal(tmp_path, "y\n", "erase", "fact", "sam", fact["fact_id"])
    assert confirmed.returncode == 0, confirmed.stderr
    assert "Erased for good: fact" in confirmed.stdout and fact["fact_id"] in confirmed.stdout
    assert run(tmp_path, "--json", "facts", "--dataset", "sam", "--history").stdout == ""

    # A whole dataset takes its name typed out; a plain "y" is not enough.
    assert on_a_terminal(tmp_path, "y\n", "erase", "dataset", "kim").returncode == 1
    assert "kim" in run(tmp_path, "datasets").stdout
    erased = on_a_terminal(tmp_path, "kim\n", "erase", "dataset", "kim")
    assert erased.returncode == 0 and "Type the dataset's name (kim)" in erased.stderr
    assert "kim" not in run(tmp_path, "datasets").stdout
    assert [e["kind"] for e in map(json.loads, run(tmp_path, "--json", "erasures").stdout.splitlines())] == \
        ["dataset", "fact"]
