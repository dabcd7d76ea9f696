"""Another tenant's write latency while one tenant sends the worst input it can (issue 31).

A real ``kenning serve`` on a SQLite file (the embedded default, one write lock for every tenant), two
projects with service keys. Project ``beta`` (the bystander) saves a short note every 50 ms for the
whole window and its latencies are recorded; project ``alpha`` (the attacker) runs one attack at a time:

- ``none``: nothing (the baseline, measured in the same run);
- ``deep_path``: memory-tool ``create`` with a 400,000-character path ``/memories/a/a/…``, in a loop;
- ``ambiguous_replace``: three concurrent ``str_replace`` loops on a 99,999-character file whose every
  line matches;
- ``long_paths``: empty files with 1,000,000-character paths (the store grew, the quota did not move);
- ``half_open``: 600 sockets that send half a request line and stop;
- ``import_40mb``: one 40 MB ``/v1/import`` of notes.

Each attack is given the same window; the bystander's p50 / p95 / max and how many of its writes failed
are printed and written to ``bench/results/tenant_attacks.json``. ``--src`` runs the server from another
source tree (``git worktree add /tmp/old <commit>``; ``--src /tmp/old/src``) for a before/after pair::

    .venv/bin/python bench/tenant_attacks.py [--window 8] [--src PATH] [--name tenant_attacks]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import pct, write  # noqa: E402

KEYS = {"alpha": "kn_alpha_service_key_0001", "beta": "kn_beta_service_key_00001"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: Path, src: Path, home: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "KENNING_HOME": str(home), "KENNING_SECRET": "bench-secret-0123456789",
           "KENNING_RATE_LIMIT_KEY": "100000/minute", "KENNING_MAX_DATASET_CHARS": str(10**9),
           "KENNING_MAX_IMPORT_BYTES": str(200 * 2**20)}
    setup = ("from kenning import Memory\nfrom kenning.server.auth import hash_key\n"
             f"m = Memory({str(db)!r}, embedder=None)\n"
             + "".join(f"m.store.put_api_key(hash_key({k!r}), {p!r}, 'service')\n" for p, k in KEYS.items())
             + "m.close()\n")
    subprocess.run([sys.executable, "-c", setup], env=env, check=True)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kenning.cli", "--db", str(db), "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def client(url: str, project: str, timeout: float = 120) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEYS[project]}"}, timeout=timeout)


def bystander(url: str, stop: threading.Event, out: dict) -> None:
    lat, failed, i = [], 0, 0
    with client(url, "beta", timeout=600) as c:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                r = c.post("/v1/datasets/calm/notes", json={"text": f"note {i} {time.time()}"})
                ok = r.status_code < 300
            except httpx.HTTPError:
                ok = False
            lat.append((time.perf_counter() - t0) * 1000)
            failed += not ok
            i += 1
            time.sleep(0.05)
    out.update(lat=lat, failed=failed)


def tool(c: httpx.Client, command: dict) -> httpx.Response:
    return c.post("/v1/datasets/mallory/memory_tool", json={"command": command})


def attack_none(url: str, stop: threading.Event) -> None:
    stop.wait()


def attack_deep_path(url: str, stop: threading.Event) -> None:
    with client(url, "alpha") as c:
        n = 0
        while not stop.is_set():
            tool(c, {"command": "create", "path": "/memories/" + "a/" * 200_000 + f"x{n}.md", "file_text": "x"})
            n += 1


def attack_ambiguous_replace(url: str, stop: threading.Event) -> None:
    with client(url, "alpha") as c:
        tool(c, {"command": "create", "path": "/memories/big.md", "file_text": "x\n" * 49_999 + "x"})

    def loop() -> None:
        with client(url, "alpha") as c:
            while not stop.is_set():
                tool(c, {"command": "str_replace", "path": "/memories/big.md", "old_str": "x", "new_str": "y"})
    threads = [threading.Thread(target=loop) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def attack_long_paths(url: str, stop: threading.Event) -> None:
    with client(url, "alpha") as c:
        n = 0
        while not stop.is_set() and n < 20:
            tool(c, {"command": "create", "path": f"/memories/{n}/" + "p" * 999_000 + ".md", "file_text": ""})
            n += 1
    stop.wait()


def attack_half_open(url: str, stop: threading.Event) -> None:
    port = int(url.rsplit(":", 1)[1])
    sockets = []
    try:
        for _ in range(600):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /v1/health HT")
                sockets.append(s)
            except OSError:
                break
        stop.wait()
    finally:
        for s in sockets:
            s.close()


def attack_import_40mb(url: str, stop: threading.Event) -> None:
    header = json.dumps({"kind": "kenning-export", "version": 1, "embedding_model": None, "dim": None,
                         "vectors": False})
    text = "imported " * 450
    lines = [header] + [json.dumps({"kind": "note", "project": "alpha", "environment": "default", "dataset": "bulk",
                                    "namespace": "user", "note_id": f"n_{i:07}", "text": text,
                                    "created_at": "2026-01-01T00:00:00.000000+00:00", "forgotten_at": None,
                                    "superseded_by": None}) for i in range(10_000)]
    body = ("\n".join(lines) + "\n").encode()
    with client(url, "alpha", timeout=600) as c:
        c.post("/v1/import", params={"embed": "false"}, content=body,
               headers={"Content-Type": "application/x-ndjson"})
    stop.wait()


ATTACKS = {name.removeprefix("attack_"): fn for name, fn in globals().items() if name.startswith("attack_")}


def run(url: str, name: str, window: float) -> dict:
    stop, seen = threading.Event(), {}
    with client(url, "beta") as c:   # warm: the first write loads the embedding model
        c.post("/v1/datasets/calm/notes", json={"text": "warm up"})
    watcher = threading.Thread(target=bystander, args=(url, stop, seen))
    attacker = threading.Thread(target=ATTACKS[name], args=(url, stop), daemon=True)
    attacker.start()
    time.sleep(0.3)
    watcher.start()
    time.sleep(window)
    stop.set()
    watcher.join()
    attacker.join(120)
    lat = seen["lat"]
    return {"writes": len(lat), "failed": seen["failed"], "p50_ms": round(pct(lat, 50), 1),
            "p95_ms": round(pct(lat, 95), 1), "max_ms": round(max(lat), 1)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=float, default=8.0, help="seconds each attack runs while beta writes")
    ap.add_argument("--src", default=str(ROOT / "src"), help="the source tree the server runs from")
    ap.add_argument("--name", default="tenant_attacks")
    ap.add_argument("--attacks", default=",".join(ATTACKS))
    args = ap.parse_args(argv)
    results = {}
    for name in args.attacks.split(","):
        with tempfile.TemporaryDirectory() as tmp:   # a fresh server and store per attack
            proc, url = start_server(Path(tmp) / "k.db", Path(args.src), Path(tmp) / "home")
            try:
                results[name] = run(url, name, args.window)
            finally:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        r = results[name]
        print(f"{name:18} writes {r['writes']:4}  failed {r['failed']:4}  p50 {r['p50_ms']:8.1f} ms  "
              f"p95 {r['p95_ms']:8.1f} ms  max {r['max_ms']:8.1f} ms", flush=True)
    out = {"window_s": args.window, "src": args.src, "results": results}
    write(args.name, out)
    return out


if __name__ == "__main__":
    main()
