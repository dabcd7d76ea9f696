"""Secrets: keys stored only as hashes, no key or user text in the logs, constant-time checks, and a
server secret made on first start, kept with the data and never in the repository."""
from __future__ import annotations

import hashlib
import inspect
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest

from kenning import Memory, Settings
from kenning.extract.llm import RetryPolicy
from kenning.extract.openai import OpenAIExtractor
from kenning.server import auth as auth_mod
from kenning.server import build, dashboard, server_secret
from live_server import LiveServer
from llm_server import ScriptedServer, error_reply, openai_reply

ROOT = Path(__file__).resolve().parents[2]
KENNING = str(Path(sys.executable).with_name("kenning"))
CANARY = "Zorbulon-7 canary text"        # user text that must never reach a log


def _keys_create(db: str, home: Path) -> str:
    out = subprocess.run([KENNING, "--db", db, "keys", "create", "--project", "acme", "--role", "service"],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "KENNING_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return re.search(r"kn_acme_[A-Za-z0-9_-]+", out.stdout).group(0)


def test_api_keys_are_stored_only_as_hashes(store_url, tmp_path):
    key = _keys_create(store_url, tmp_path)
    digest = hashlib.sha256(key.encode()).hexdigest()
    with Memory(store_url) as mem:
        assert (mem.store.find_api_key(digest).project, mem.store.find_api_key(digest).role) == ("acme", "service")
        if store_url.startswith("sqlite"):
            stored = b"".join(p.read_bytes() for p in tmp_path.glob("k.db*"))
        else:
            rows = mem.store._q("SELECT * FROM api_keys")
            stored = repr([dict(r) for r in rows]).encode()
    assert key.encode() not in stored and digest.encode() in stored


def test_keys_and_user_text_stay_out_of_the_logs_at_info(tmp_path, monkeypatch, caplog):
    """In process, every logger at INFO: requests with a key, user text in bodies and query strings, a model
    server that fails, echoes the user's words in its error bodies and answers with unusable JSON."""
    monkeypatch.setenv("KENNING_SECRET", "test-secret-0123456789abcdef")
    caplog.set_level(logging.INFO)
    with ScriptedServer() as model:
        echo = f"I cannot process: {CANARY}"
        model.push(error_reply(500, echo), openai_reply(f'{{"facts": "{CANARY}"'),
                   openai_reply(f'not json {CANARY}'))
        extractor = OpenAIExtractor(base_url=model.url + "/v1", model="m", api_key="sk-model-secret", timeout=2,
                                    retry=RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02))
        mem = Memory(f"sqlite:///{tmp_path}/k.db", extractor=extractor, embedder=None)
        key = "kn_acme_" + "s" * 32
        mem.store.put_api_key(auth_mod.hash_key(key), "acme", "service")
        with LiveServer(mem) as live, live.client(key) as c:
            c.post("/v1/memory/add_turn", json={"dataset": "sam", "role": "user", "content": f"I live in {CANARY}."})
            deadline = time.monotonic() + 30            # the turn is acme's: wait for acme's queue to drain
            while c.get("/v1/jobs/open").json()["count"] and time.monotonic() < deadline:
                time.sleep(0.05)
            c.post("/v1/recall", json={"query": f"where is {CANARY}?", "dataset": "sam"})
            c.get("/v1/datasets/sam/notes/search", params={"q": CANARY})
            c.get("/v1/datasets/sam/facts", params={"q": CANARY})
            c.get("/datasets/sam/recall", params={"q": CANARY})
            c.get("/v1/datasets/sam/facts", headers={"Authorization": "Bearer kn_acme_wrong" + "x" * 24})
            jobs = c.get("/v1/jobs", params={"dataset": "sam"}).json()
    assert jobs[0]["status"] == "failed"                       # the model faults happened and were logged
    assert any(r.levelno >= logging.INFO for r in caplog.records)
    # The test's own HTTP client logs its request lines (httpx, INFO): those are the caller's, not kenning's.
    ours = [r for r in caplog.records if r.levelno >= logging.INFO
            and not (r.name == "httpx" and live.url in r.getMessage())]
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in ours)
    for secret in (CANARY, quote(CANARY), quote_plus(CANARY), key, "sk-model-secret", "kn_acme_wrong"):
        assert secret not in logged, secret


def test_a_real_server_process_logs_no_key_and_no_user_text(tmp_path):
    home = tmp_path / "home"
    db = f"sqlite:///{tmp_path}/k.db"
    key = _keys_create(db, home)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([KENNING, "--db", db, "serve", "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env={**os.environ, "KENNING_HOME": str(home)})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30,
                          headers={"Authorization": f"Bearer {key}"}) as c:
            deadline = time.monotonic() + 30
            while True:
                try:
                    c.get("/v1/health")
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "server did not start"
                    time.sleep(0.1)
            assert c.post("/v1/memory/add", json={"text": f"I live in {CANARY}.", "dataset": "sam"}).status_code == 200
            c.get("/v1/datasets/sam/notes/search", params={"q": CANARY})
            c.get("/v1/health", headers={"Authorization": f"Bearer {key}x"})
            c.post("/v1/memory/add", json={"text": "x" * 100_001, "dataset": "sam"})
    finally:
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=30)[0].decode()
    assert "kenning serve" in output
    assert key not in output and CANARY not in output


def test_secret_checks_compare_in_constant_time():
    """Signatures and form tokens are compared with hmac.compare_digest; API keys are looked up by
    their SHA-256, so no comparison ever runs on the key itself."""
    assert "compare_digest" in inspect.getsource(auth_mod.Tokens.verify)
    assert "compare_digest" in inspect.getsource(dashboard.Dashboard.form_lists)   # behind every dashboard form
    source = inspect.getsource(auth_mod.Auth.credential)
    assert "find_api_key(hash_key(credential))" in source and not re.search(r"credential\s*[!=]=", source)


def test_the_server_secret_is_made_on_first_start_and_kept_with_the_data(tmp_path, monkeypatch):
    monkeypatch.delenv("KENNING_SECRET", raising=False)
    settings = Settings(home=str(tmp_path / "home"))
    first = server_secret(settings, environ={})
    path = tmp_path / "home" / "server-secret"
    assert path.stat().st_mode & 0o777 == 0o600 and len(first) >= 32
    assert path.parent.stat().st_mode & 0o777 == 0o700                        # issue 31, finding 13
    assert server_secret(settings, environ={}) == first                       # kept across restarts
    mem = Memory(f"sqlite:///{tmp_path}/k.db", settings=settings)
    _, _, auth = build(memory=mem)
    token, _ = auth.tokens.mint("default", "default", "sam", "member", 60)
    mem.close()
    mem = Memory(f"sqlite:///{tmp_path}/k.db", settings=settings)
    _, _, again = build(memory=mem)
    assert again.principal(f"Bearer {token}").dataset == "sam"                # a token survives the restart
    mem.close()


def test_no_secret_or_real_key_is_in_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert not [p for p in tracked if p.endswith("server-secret") or p.endswith(".db")]
    minted = re.compile(r"\bkn_[a-z0-9][\w.:@-]*_[A-Za-z0-9_-]{32}\b")   # what new_key() makes
    found = []
    for name in tracked:
        path = ROOT / name
        if path.suffix in {".png", ".onnx"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        found += [(name, m.group(0)) for m in minted.finditer(text)]
    assert found == []


def test_the_server_secret_is_never_readable_by_others_even_for_a_moment(tmp_path, monkeypatch):
    """Issue 31, finding 13: it was written 0644 and chmod-ed after; now it is created 0600 (under a umask
    that would make any file world-readable), and racing starts agree on one secret."""
    import os
    import threading

    monkeypatch.delenv("KENNING_SECRET", raising=False)
    old = os.umask(0o000)
    try:
        settings = Settings(home=str(tmp_path / "fresh"))
        made: list[str] = []
        opened = []
        real_open = os.open

        def spy(path, flags, mode=0o777, *a, **kw):
            if "server-secret" in str(path) and flags & os.O_CREAT:
                opened.append(mode)
            return real_open(path, flags, mode, *a, **kw)

        monkeypatch.setattr(os, "open", spy)
        threads = [threading.Thread(target=lambda: made.append(server_secret(settings, environ={})))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        os.umask(old)
    assert opened and set(opened) == {0o600}
    assert len(set(made)) == 1
    assert (tmp_path / "fresh" / "server-secret").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "fresh").stat().st_mode & 0o777 == 0o700
