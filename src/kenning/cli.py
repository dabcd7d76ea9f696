"""The ``kenning`` command: a thin layer over :class:`kenning.Memory`.

Library errors become one-line messages and exit status 1; no tracebacks.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from .errors import InputError, KenningError, NotFound
from .model import UNKNOWN_START

DEMO = [
    ("2026-07-01T10:00:00Z", "Hi! I live in Berlin and I work at Google as a backend engineer."),
    ("2026-07-01T10:01:00Z", "I'm allergic to peanuts, and I love ramen."),
    ("2026-07-20T18:30:00Z", "ok thanks!"),
    ("2026-08-16T09:00:00Z", "I'm looking at the Toyota Corolla Hybrid."),
    ("2026-09-03T10:00:00Z", "Big news: I moved to Lisbon last month. I just started a new job at Stripe."),
    ("2026-09-03T10:02:00Z", "I don't eat meat anymore, and I'm training for a half marathon in March."),
]


def _local_file(db: str | None):
    """The SQLite file ``--db`` names (None: a server, PostgreSQL, or a store in memory)."""
    from .config import Settings
    from .memory import sqlite_file

    return sqlite_file(db, Settings.from_env())


def _memory(args, create: bool = False):
    """The store of ``--db``: a local file, or a server URL (then ``--api-key`` / $KENNING_API_KEY).
    A file's folder must exist (a typo makes no folders); a command that only reads (``create`` False)
    refuses a file that is not there rather than making an empty store to read from."""
    import os

    from .memory import Memory

    path = _local_file(args.db)
    if path is not None and args.db is not None:
        if not path.parent.is_dir():
            raise InputError(f"--db {args.db}: the folder {path.parent} does not exist; create it first")
        if not create and not path.exists():
            raise InputError(f"--db {args.db}: no kenning store there (nothing to read); `kenning add` or "
                             "`kenning import` creates one")
    return Memory(args.db, api_key=getattr(args, "api_key", None) or os.environ.get("KENNING_API_KEY"))


PROSE = frozenset({"object", "text", "content", "aliases", "error", "name", "predicate"})   # columns that may fold


def _show(args, rows: list[dict], columns: list[str], title: str | None = None) -> None:
    """Rows as a table for people (rich), or as JSON lines with --json for scripts."""
    if getattr(args, "json", False):
        for row in rows:
            print(json.dumps(row, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in columns:   # an id is never cut or wrapped (it is there to be copied), nor a short value
        whole = column.endswith("_id") or column == "id"
        width = max((len(str(row.get(column) or "")) for row in rows), default=0) if whole else None
        table.add_column(column, no_wrap=column not in PROSE, min_width=width, overflow="fold")
    for row in rows:
        table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
    # As wide as the rows need, so nothing is cut; a terminal too narrow for that gets one block per
    # row ("key: value" lines), which never cuts an id either.
    console = Console(width=None if sys.stdout.isatty() else 400)
    if Console(width=10_000).measure(table).maximum <= console.width:
        console.print(table)
        return
    for row in rows:
        console.print("\n".join(f"{c}: {'' if row.get(c) is None else row.get(c)}" for c in columns),
                      soft_wrap=True, highlight=False, markup=False)
        console.print()


def cmd_add_turn(args) -> int:
    mem = _memory(args, create=True)
    r = mem.add_turn(args.dataset, args.role, args.text, thread=args.thread, client_ref=args.client_ref, at=args.at)
    if args.wait and r.request_id:
        mem.flush(timeout=args.wait)
        r = mem.status(r.request_id)
    print(r.model_dump_json(indent=None if args.json else 2, exclude_none=True))
    mem.close()
    return 0


def cmd_datasets(args) -> int:
    mem = _memory(args)
    page = mem.datasets(args.q, args.limit, args.offset)
    _show(args, [d.model_dump(mode="json") for d in page.datasets],
          ["dataset", "facts", "entities", "notes", "messages", "last_activity"], "datasets")
    print(f"({len(page.datasets)} of {page.total})", file=sys.stderr)
    mem.close()
    return 0


def cmd_jobs(args) -> int:
    mem = _memory(args)
    rows = [{**j.model_dump(mode="json", exclude={"result", "content"}), "content": j.content[:60]}
            for j in mem.jobs(args.dataset, args.status, args.limit, args.offset)]
    _show(args, rows, ["created_at", "dataset", "status", "attempts", "error", "content", "request_id"], "jobs")
    mem.close()
    return 0


def cmd_remine(args) -> int:
    """Mine kept user messages again: after a failed extraction, or with another extractor."""
    mem = _memory(args)
    results = mem.remine(args.dataset, args.message_id or None, all_messages=args.all)
    rows = [{"message_id": r.episode_id, "status": r.status, "stored": r.candidates_stored,
             "updated": r.candidates_updated, "deduped": r.candidates_deduped,
             "error": r.extraction_error or r.reason or ""} for r in results]
    _show(args, rows, ["message_id", "status", "stored", "updated", "deduped", "error"], "messages")
    failed = sum(r.extraction_error is not None for r in results)
    print(f"mined {len(results)} message(s) again; {failed} failed to extract", file=sys.stderr)
    mem.close()
    return 1 if failed else 0


def cmd_delete_fact(args) -> int:
    """Soft delete: the fact leaves every live view now and stays in the history."""
    mem = _memory(args)
    mem.delete_fact(args.dataset, args.fact_id)
    if args.json:
        print(json.dumps({"deleted": args.fact_id}))
    else:
        print(f"deleted {args.fact_id} (kept in the history: kenning facts --history)", file=sys.stderr)
    mem.close()
    return 0


def cmd_embed_pending(args) -> int:
    mem = _memory(args)
    count = mem.embed_pending()
    print(json.dumps({"facts_embedded": count}) if args.json else f"embedded {count} fact(s) and every other "
          "row that had no vector", flush=True)
    mem.close()
    return 0


def cmd_entities(args) -> int:
    mem = _memory(args)
    rows = [{"name": e.name, "type": e.type, "aliases": ", ".join(e.aliases), "entity_id": e.entity_id}
            for e in mem.list_entities(args.dataset, type=args.type)]
    _show(args, rows, ["name", "type", "aliases", "entity_id"], f"entities of {args.dataset}")
    mem.close()
    return 0


def cmd_notes(args) -> int:
    mem = _memory(args, create=args.notes_command == "save")
    if args.notes_command == "save":
        note = mem.notes.save(args.dataset, args.text, args.namespace)
        _show(args, [note.model_dump(mode="json")], ["note_id", "namespace", "text"])
    elif args.notes_command == "search":
        hits = mem.notes.search(args.dataset, args.query, args.limit, args.namespace)
        _show(args, [{"score": h.score, **h.note.model_dump(mode="json")} for h in hits],
              ["score", "note_id", "namespace", "text"])
    elif args.notes_command == "forget":
        mem.notes.forget(args.dataset, args.note_id)
        if args.json:
            print(json.dumps({"forgot": args.note_id}))
        else:
            print(f"forgot {args.note_id}", file=sys.stderr)
    else:
        notes = mem.notes.list(args.dataset, args.namespace, args.include_forgotten, args.limit)
        _show(args, [n.model_dump(mode="json") for n in notes], ["created_at", "note_id", "namespace", "text"])
    mem.close()
    return 0


def cmd_core(args) -> int:
    mem = _memory(args, create=args.core_command == "tool")
    if args.core_command == "tool":
        from .errors import MemoryToolError

        try:
            command = json.loads(args.command_json)
        except json.JSONDecodeError as exc:
            mem.close()
            raise InputError(f"the command is not JSON ({exc}); pass one object, e.g. "
                             '\'{"command": "view", "path": "/memories"}\'') from None
        try:
            text, failed = mem.memory_tool(args.dataset, command, args.namespace), False
        except MemoryToolError as exc:
            text, failed = exc.text, True
        print(json.dumps({"content": text, "is_error": failed}) if args.json else text)
        mem.close()
        return 1 if failed else 0
    if args.core_command == "render":
        text = mem.core.render(args.dataset, args.namespaces)
    else:
        text = mem.core.view(args.dataset, args.path, namespace=args.namespace)
    print(json.dumps({"text": text}) if args.json else text)
    mem.close()
    return 0


BENCHES = {"latency": "latency.py", "peers": "peers.py", "locomo": "locomo.py", "write": "write_throughput.py",
           "queue": "queue_throughput.py", "report": "report.py", "tune": "locomo_tune.py", "life": "life_questions.py",
           "reads": "reads.py", "replicas": "replicas.py", "bulk": "bulk_load.py"}


def cmd_bench(args) -> int:
    """Run a benchmark script of the source checkout's bench/ folder (they measure, they are not shipped)."""
    import runpy

    folder = Path(args.bench_dir) if args.bench_dir else Path.cwd() / "bench"
    script = folder / BENCHES[args.which]
    if not script.is_file():
        print(f"kenning: {script} not found; run from a kenning source checkout or pass --bench-dir", file=sys.stderr)
        return 1
    sys.argv = [str(script), *args.rest]
    sys.path.insert(0, str(folder))
    runpy.run_path(str(script), run_name="__main__")
    return 0


def cmd_demo(args) -> int:
    """The demo's story as prose, or with --json as JSON lines: each message's receipt, the live facts,
    the history, the facts as of 2026-07-15 and the recall, each line with its ``kind``."""
    if args.db is None:     # a store of its own, gone when the demo ends: nothing left in the user's real one
        with tempfile.TemporaryDirectory(prefix="kenning-demo-") as folder:
            args.db = str(Path(folder) / "demo.db")
            if not args.json:
                print(f"kenning demo: a temporary store at {args.db}, removed when the demo ends "
                      "(--db PATH keeps it)")
            return cmd_demo(args)
    from .memory import Memory

    mem = Memory(args.db)
    dataset = args.dataset or f"demo-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}"
    say = (lambda *a, **k: None) if args.json else print

    def emit(kind: str, **values) -> None:
        if args.json:
            print(json.dumps({"kind": kind, **values}, default=str))

    say(f"kenning demo: store {mem.store.location}, dataset {dataset!r}\n")
    emit("store", location=str(mem.store.location), dataset=dataset)
    started = time.perf_counter()
    for at, text in DEMO:
        r = mem.add(text, dataset=dataset, at=at)
        say(f"[{at[:10]}] user: {text}")
        say(f"           -> {r.status}: stored {r.candidates_stored}, updated {r.candidates_updated}, "
            f"deduped {r.candidates_deduped}" + (f" ({r.reason})" if r.reason else ""))
        emit("added", at=at, text=text, result=r.model_dump(mode="json", exclude={"memory"}))
    say(f"\nIngested {len(DEMO)} messages in {time.perf_counter() - started:.2f}s.\n")
    say("Live facts now:")
    for f in mem.list_facts(dataset, limit=100).facts:
        say(f"  - {f.predicate}: {f.object}  (since {f.valid_at.date()}, confidence {f.confidence:.2f})")
        emit("live", fact=f.model_dump(mode="json"))
    say("\nHistory (every fact, including superseded and ended ones):")
    for f in mem.list_facts(dataset, limit=100, include_invalidated=True).facts:
        state = f.state
        if f.invalid_at is not None:
            state += f" {f.invalid_at.date()}"
        elif f.valid_until is not None:
            state += f" (until {f.valid_until.date()})"
        say(f"  - {f.predicate}: {f.object}  [{f.valid_at.date() if f.start_known else '?'} .. {state}]")
        emit("history", state=state, fact=f.model_dump(mode="json"))
    say("\nAs of 2026-07-15:")
    for f in mem.list_facts(dataset, limit=100, as_of="2026-07-15T00:00:00Z").facts:
        say(f"  - {f.predicate}: {f.object}")
        emit("as_of", as_of="2026-07-15T00:00:00Z", fact=f.model_dump(mode="json"))
    query = "Where does the user live and work?"
    res = mem.recall(query, dataset=dataset, limit=5)
    say(f"\nrecall({query!r}).context:\n{res.context}")
    emit("recall", query=query, context=res.context, items=[i.id for i in res.items])
    mem.close()
    return 0


def cmd_add(args) -> int:
    # standard input ends with the newline that ended its last line (echo, a heredoc): not part of the message
    text = sys.stdin.read().removesuffix("\n").removesuffix("\r") if args.text == "-" else args.text
    mem = _memory(args, create=True)
    r = mem.add(text, dataset=args.dataset, at=args.at, role=args.role, client_ref=args.client_ref)
    print(r.model_dump_json(indent=None if args.json else 2, exclude={"memory"}))
    mem.close()
    return 0


def _facts(mem, args) -> tuple[list, int]:
    """The facts the command lists, and how many there are; with ``--predicate`` (one slot), the pages
    are read through and filtered here."""
    kw = dict(q=args.q, include_invalidated=args.history, as_of=args.as_of, entity=args.entity)
    slot = getattr(args, "predicate", None)
    if not slot:
        page = mem.list_facts(args.dataset, limit=args.limit, **kw)
        return page.facts, page.total
    found, offset = [], 0
    while True:
        page = mem.list_facts(args.dataset, limit=100, offset=offset, **kw)
        found += [f for f in page.facts if f.predicate == slot]
        offset += len(page.facts)
        if not page.facts or offset >= page.total:
            return found[:args.limit], len(found)


def cmd_facts(args) -> int:
    mem = _memory(args)
    facts, total = _facts(mem, args)
    rows = []
    for f in facts:
        row = f.model_dump(mode="json")     # its state as of --as-of: a fact live then is "live" then
        if not args.json:   # a table has no room for microseconds; --json keeps the full times
            for key in ("valid_at", "valid_until"):
                at = getattr(f, key)
                row[key] = None if at is None else "unknown" if at == UNKNOWN_START else f"{at:%Y-%m-%d %H:%M}"
        rows.append(row)
    _show(args, rows, ["valid_at", "valid_until", "predicate", "object", "confidence", "state", "fact_id"],
          f"facts of {args.dataset}")
    print(f"({len(facts)} of {total})", file=sys.stderr)
    mem.close()
    return 0


def cmd_recall(args) -> int:
    mem = _memory(args)
    res = mem.recall(args.query, dataset=args.dataset, limit=args.limit, as_of=args.as_of)
    print(res.model_dump_json() if args.json else res.context or "(nothing recalled)")
    mem.close()
    return 0


def cmd_worker(args) -> int:
    """Run queue workers in the foreground until SIGTERM/SIGINT (or, with --exit-when-idle, an empty queue)."""
    import signal
    import threading

    from .config import Settings
    from .jobs import Worker
    from .memory import Memory

    mem = Memory(args.db, settings=Settings.from_env(worker_threads=0))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    workers = [Worker(mem.services, lease_seconds=args.lease, poll_seconds=args.poll) for _ in range(args.threads)]
    say = (lambda kind, text, **v: print(json.dumps({"event": kind, **v}) if args.json else text, flush=True))
    say("started", f"kenning worker: {len(workers)} thread(s) on {mem.store.location}", threads=len(workers),
        location=str(mem.store.location))
    done = [0] * len(workers)

    def run(i: int) -> None:
        done[i] = workers[i].run(stop, idle_exit=args.exit_when_idle)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.5)
    mem.close()
    say("stopped", f"kenning worker: ran {sum(done)} job(s)", jobs=sum(done))
    return 0


def cmd_serve(args) -> int:
    """The HTTP API and the queue workers on one store."""
    path = _local_file(args.db)
    if path is not None and not path.parent.is_dir():
        raise InputError(f"--db {args.db}: the folder {path.parent} does not exist; create it first")
    listener = _listen(args.host, args.port)
    try:    # the port is given back whatever stops the server, a store that cannot open included
        return _serve(args, listener)
    finally:
        listener.close()


def _serve(args, listener) -> int:
    import uvicorn

    from .server import build, uvicorn_options
    from .server.guard import LOOPBACK

    memory = None
    if args.replica:
        from .memory import Memory

        memory = Memory(args.db, replicas=args.replica)
    app, mem, auth = build(args.db, host=args.host, memory=memory)
    if args.host.strip("[]") not in LOOPBACK and mem.store.count_api_keys() == 0:
        mem.close()
        raise InputError(f"--host {args.host}: beyond loopback every request needs an API key, and this store has "
                         "none (every request would get 401); run `kenning keys create --project …` first")
    lines = [("store", f"kenning serve: data in {mem.store.location}", {"location": str(mem.store.location)})]
    replica_set = getattr(mem.store, "replicas", None)
    for replica in replica_set.replicas if replica_set is not None else []:
        lines.append(("replica", f"kenning serve: reads from replica {replica.label}"
                      + ("" if replica.up else f" (not answering now: {replica.last_error})"),
                      {"replica": replica.label, "up": replica.up}))
    if auth.dev_mode:
        lines.append(("development_mode", "kenning serve: no API key configured; single-user development mode on "
                      "loopback (every request is the service principal of the default project). Create keys with "
                      "`kenning keys create`.", {}))
    url = f"http://{args.host}:{args.port}"
    lines.append(("serving", f"kenning serve: {url}  (OpenAPI at /docs)", {"url": url, "docs": f"{url}/docs"}))
    for kind, text, values in lines:
        print(json.dumps({"event": kind, **values}) if args.json else text, flush=True)
    # uvicorn shuts down on SIGTERM/SIGINT, then raises the signal again for the handler it found; with
    # Python's default that killed the process before the finally below stopped the workers (a job in flight
    # was abandoned until its lease ran out) and exited 143. This handler ends it as a clean stop instead.
    import signal

    def stopped(*_) -> None:
        raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stopped)
    mem.workers.ensure_started()
    try:
        config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", **uvicorn_options(mem.settings))
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        mem.close()
    return 0


def _listen(host: str, port: int):
    """Bind and listen before anything is printed, so "serving" means connections are accepted.

    A client that connects between the announcement and uvicorn's start waits in the backlog instead of
    being refused; a port another process holds is refused here, before the banner.
    """
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn binds it
    try:
        listener.bind((host.strip("[]"), port))
        listener.listen(2048)
    except OSError as exc:
        listener.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (another server there? "
                         "pass --port)") from None
    listener.set_inheritable(True)
    return listener


def cmd_migrate(args) -> int:
    """Bring a store's schema up to date (opening a store migrates it) and list its migrations."""
    from .config import Settings
    from .memory import open_store

    store = open_store(args.db, Settings.from_env())
    try:
        applied, now = store.applied_migrations(), store.migrated_now
        rows = [{"migration": name, "applied_at": at.isoformat() if at else None,
                 "applied": "now" if name in now else "before"} for name, at in applied]
        _show(args, rows, ["migration", "applied_at", "applied"], f"migrations of {store.location}")
    finally:
        store.close()
    return 0


def cmd_keys(args) -> int:
    """create (printed once, only its hash kept), list (ids, never keys) or revoke (ends its tokens and sign-ins)."""
    from .memory import Memory
    from .model import SCOPE_NAME
    from .server.auth import KEY_ROLES, hash_key, new_key

    if args.keys_command == "create":
        if args.role not in KEY_ROLES:
            print(f"kenning: role must be one of {', '.join(KEY_ROLES)}", file=sys.stderr)
            return 1
        if not SCOPE_NAME.fullmatch(args.project):
            print(f"kenning: --project {args.project!r} is no project name: 1-128 letters, digits and _.:@- "
                  "starting with a letter or digit", file=sys.stderr)
            return 1
        if args.name is not None and not 0 < len(args.name) <= 200:
            print("kenning: --name must be 1-200 characters", file=sys.stderr)
            return 1
    mem = Memory(args.db, embedder=None)
    try:
        if args.keys_command == "list":
            rows = [{"key_id": k.key_id, "project": k.project, "role": k.role, "name": k.name,
                     "created_at": k.created_at.isoformat(timespec="seconds"),
                     "revoked_at": k.revoked_at.isoformat(timespec="seconds") if k.revoked_at else None}
                    for k in mem.store.list_api_keys(args.project, args.all)]
            _show(args, rows, ["key_id", "project", "role", "name", "created_at", "revoked_at"], "API keys")
            return 0
        if args.keys_command == "revoke":
            if not mem.store.revoke_api_key(args.key_id, args.project):
                print(f"kenning: no live API key {args.key_id!r}" + (f" in project {args.project!r}" if args.project
                      else "") + "; `kenning keys list` shows them", file=sys.stderr)
                return 1
            print(f"revoked {args.key_id}: it, and the user tokens and dashboard sign-ins it granted, no longer work")
            return 0
        key = new_key(args.project)
        mem.store.put_api_key(hash_key(key), args.project, args.role, args.name)
    finally:
        mem.close()
    print(key)
    print(f"(a {args.role} key for project {args.project!r}, id {hash_key(key)[:16]}; it is shown once, only its "
          "hash is stored)", file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    """Write the export to --out (whole or not at all: a temporary file renamed at the end) or stdout."""
    import os

    mem = _memory(args)
    lines = mem.export(args.dataset, include_vectors=args.vectors)
    if args.out is None:
        sys.stdout.writelines(lines)
    else:
        partial = f"{args.out}.partial"
        try:
            with open(partial, "w", encoding="utf-8") as out:
                out.writelines(lines)
        except BaseException:
            os.unlink(partial)
            raise
        os.replace(partial, args.out)
    mem.close()
    return 0


def cmd_import(args) -> int:
    path = _local_file(args.db)
    fresh = path is not None and not path.exists()   # a failed import into a new store leaves no file
    mem = _memory(args, create=True)
    try:
        return _import(args, mem)
    except BaseException:
        mem.close()
        if fresh:
            for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                leftover.unlink(missing_ok=True)
        raise


def _import(args, mem) -> int:
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    except OSError as exc:
        print(f"kenning: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, track

    embed = False if args.no_embed else None   # None: when this store has an embedder (a server: its own)
    console = Console(stderr=True)
    with source, Progress(SpinnerColumn(), TextColumn("embedding {task.fields[kind]}s: {task.completed:,}"),
                          console=console, transient=True, disable=args.json) as bar:
        task = bar.add_task("embedding", total=None, kind="row")
        lines = source if args.json else track(source, description="importing", console=console, transient=True)
        from .memory import Memory   # a local store reports its embedding; a server does it on its side

        kw = {"progress": lambda kind, n: bar.update(task, advance=n, kind=kind)} if isinstance(mem, Memory) else {}
        counts = mem.import_(lines, embed=embed, **kw)
    print(json.dumps(counts))
    mem.close()
    return 0


# -- erasure ---------------------------------------------------------------------------------------
ERASE_NOTES = {"redacted": "the quoted words cut out of these messages; the rest of each stays",
               "restored": "live again: what had superseded them was erased"}
SHOWN_IDS = 10   # ids per kind in the readable summary (--json names them all)


def _who() -> str:
    """Who asked, as the erasure log names a local command-line erasure (a server names its caller itself)."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except Exception:   # noqa: BLE001 - no user name in this environment
        return "cli"


def _erase_target(args) -> str:
    if args.erase_command == "fact":
        return f"fact {args.fact_id} of dataset {args.dataset!r}"
    if args.erase_command == "message":
        return f"message {args.message_id} of dataset {args.dataset!r}"
    if args.erase_command == "content":
        also = ([f"documents under {', '.join(args.document_scopes)}"] if args.document_scopes else []) \
            + (["the organization memory"] if args.organization else [])
        return f"everything in dataset {args.dataset!r} holding {args.text!r}" + \
            (f" (and in {' and '.join(also)})" if also else "")
    return f"the whole dataset {args.dataset!r} (every fact, message, note, core file and queued turn)"


def _erase_once(mem, args, dry_run: bool):
    kw = {"dry_run": dry_run, "by": _who()}
    try:
        if args.erase_command == "fact":
            return mem.erase.fact(args.dataset, args.fact_id, **kw)
        if args.erase_command == "message":
            return mem.erase.message(args.dataset, args.message_id, **kw)
        if args.erase_command == "content":
            return mem.erase.content(args.dataset, args.text, document_scopes=args.document_scopes or (),
                                     organization=args.organization, **kw)
        return mem.erase.dataset(args.dataset, **kw)
    except NotFound as exc:
        hint = ("`kenning facts --dataset D --history` lists fact ids" if args.erase_command == "fact" else
                "a fact's episode_id in `kenning --json facts --dataset D --history` is its message's id")
        raise NotFound(f"{exc}; nothing was erased ({hint})") from None


def _erase_rows(receipt) -> list[tuple[str, int, list[str]]]:
    """(kind, count, ids) for each kind of row the receipt removed (or would), then the restored facts."""
    rows = []
    for kind, count in receipt.removed.items():
        if count:
            ids = receipt.redacted if kind == "redacted" else receipt.ids.get(kind, [])
            rows.append(("messages" if kind == "episodes" else kind, count, ids))   # a dataset's counts
    if receipt.restored:
        rows.append(("restored", len(receipt.restored), receipt.restored))
    return rows


def _say_receipt(args, receipt) -> None:
    """The receipt: as one JSON line with --json, else a summary for people."""
    if args.json:
        print(receipt.model_dump_json())
        return
    target = _erase_target(args)
    if receipt.dry_run:
        print(f"Dry run, nothing erased yet. Erasing {target} would remove for good:")
    else:
        print(f"Erased for good: {target} (erasure {receipt.erasure_id}):")
    rows = _erase_rows(receipt)
    if not rows:
        print("  nothing")
    width = max((len(kind) for kind, _, _ in rows), default=0)
    for kind, count, ids in rows:
        line = f"  {kind:<{width}}  {count:>5}"
        if ids:
            line += "  " + ", ".join(ids[:SHOWN_IDS])
            if len(ids) > SHOWN_IDS:
                line += f", … and {len(ids) - SHOWN_IDS} more (--json names them all)"
        if kind in ERASE_NOTES:
            line += f"  ({ERASE_NOTES[kind]})"
        print(line)
    if not receipt.dry_run:
        print("The erased bytes have left the store's files." if receipt.physical == "done" else
              "The erased bytes leave the store's files at the next `kenning compact` (compaction pending)."
              if receipt.physical == "pending" else "")


def _preview_texts(mem, args, receipt) -> None:
    """Under a dry run's counts, what the ids are: each fact's sentence and the opening of each message
    (what a person confirms is the words, not the ids)."""
    dataset, shown = receipt.dataset, []
    wanted = set(receipt.ids.get("facts", [])[:SHOWN_IDS])
    offset = 0
    while wanted and offset < 100 * 20:   # a dataset's history, a page at a time, until they are all named
        page = mem.list_facts(dataset, include_invalidated=True, limit=100, offset=offset)
        for fact in page.facts:
            if fact.fact_id in wanted:
                wanted.discard(fact.fact_id)
                shown.append(f"fact     {fact.text} ({fact.state})")
        offset += 100
        if offset >= page.total:
            break
    for kind, ids in (("message", receipt.ids.get("messages", [])), ("redacted", receipt.redacted)):
        for message_id in ids[:SHOWN_IDS]:
            try:
                said = mem.messages.get(dataset, message_id).content
            except NotFound:
                continue
            words = said if len(said) <= 100 else said[:97] + "..."
            shown.append(f"{'message ' if kind == 'message' else 'cut from'} {words!r}")
    if shown:
        print("What that is:")
        for line in shown:
            print(f"  {line}")


def _confirmed(args) -> bool:
    """Ask on the terminal: y/yes, or for a whole dataset its name typed out."""
    if args.erase_command == "dataset":
        question = f"Type the dataset's name ({args.dataset}) to erase all of it for good: "
    else:
        question = "Erase this for good? It cannot be undone [y/N]: "
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip()
    if args.erase_command == "dataset":
        return answer == args.dataset
    return answer.lower() in ("y", "yes")


def cmd_erase(args) -> int:
    """Permanent erasure: show the dry run, ask on a terminal (--yes: don't ask), then erase."""
    mem = _memory(args)
    try:
        if args.dry_run:
            preview = _erase_once(mem, args, dry_run=True)
            _say_receipt(args, preview)
            if not args.json:
                _preview_texts(mem, args, preview)
            return 0
        if not args.yes:
            preview = _erase_once(mem, args, dry_run=True)
            _say_receipt(args, preview)
            if not args.json:
                _preview_texts(mem, args, preview)
            if not sys.stdin.isatty():
                print("kenning: erasing is permanent and asks for confirmation on a terminal, and there is none; "
                      "nothing was erased. Pass --yes to erase without asking (--dry-run only shows what would go)",
                      file=sys.stderr)
                return 2
            if not _erase_rows(preview):
                print("nothing to erase", file=sys.stderr)
                return 0
            if not _confirmed(args):
                print("not confirmed: nothing was erased", file=sys.stderr)
                return 1
        receipt = _erase_once(mem, args, dry_run=False)
        _say_receipt(args, receipt)
        if not _erase_rows(receipt) and not any(d.dataset == args.dataset for d in mem.datasets(args.dataset).datasets):
            print(f"kenning: dataset {args.dataset!r} holds nothing at all (names are case-sensitive; "
                  "`kenning datasets` lists them)", file=sys.stderr)
        return 0
    finally:
        mem.close()


def _removed_text(removed: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in removed.items() if count) or "nothing"


def cmd_erasures(args) -> int:
    """The erasure log, newest first: ids, counts and hashes, never the erased text."""
    mem = _memory(args)
    try:
        page = mem.erase.log(args.dataset, args.limit, args.offset)
    finally:
        mem.close()
    rows = [r.model_dump(mode="json") for r in page.erasures]
    if not args.json:
        for row, record in zip(rows, page.erasures):
            row["at"] = f"{record.at:%Y-%m-%d %H:%M:%S}"
            row["removed"] = _removed_text(record.removed)
            row["compacted_at"] = f"{record.compacted_at:%Y-%m-%d %H:%M:%S}" if record.compacted_at else "pending"
    _show(args, rows, ["at", "erasure_id", "kind", "dataset", "by", "removed", "compacted_at"],
          "erasures" + (f" of {args.dataset}" if args.dataset else ""))
    print(f"({len(page.erasures)} of {page.total})", file=sys.stderr)
    return 0


def cmd_compact(args) -> int:
    """Make the bytes of every erasure still pending leave the store's files; exit 1 if some must wait."""
    mem = _memory(args)
    try:
        done = mem.erase.compact()
    finally:
        mem.close()
    if args.json:
        print(json.dumps({"compacted": done}))
    else:
        print("compaction complete: no erased bytes are left in the store's files" if done else
              "compaction did not complete: a table was busy (its lock was not granted in time); run "
              "`kenning compact` again")
    return 0 if done else 1


def _memory_commands(sub) -> None:
    """demo, add, facts: the first things a user runs."""
    p = sub.add_parser("demo", help="ingest a short conversation and print the facts, history and recall")
    p.add_argument("--dataset", default=None, help="default: a new demo-<time> dataset")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("add", help="add one message said by the user")
    p.add_argument("text", help="the message; - reads it from standard input (for long texts)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--at", default=None, help="message time, ISO 8601 (default: now)")
    p.add_argument("--role", default="user")
    p.add_argument("--client-ref", default=None)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("facts", help="list facts: live, as of a time, or the whole history")
    p.add_argument("--dataset", required=True)
    p.add_argument("--q", default=None, help="keyword filter")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--include-invalidated", "--history", dest="history", action="store_true",
                   help="include superseded, ended and deleted facts")
    p.add_argument("--as-of", default=None)
    p.add_argument("--entity", default=None)
    p.set_defaults(func=cmd_facts)

    p = sub.add_parser("history", help="a dataset's history, or one slot's: every fact with its state now "
                                       "(live, future, ended, superseded, deleted)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--predicate", default=None, help='one slot, e.g. "lives in"')
    p.add_argument("--limit", type=int, default=100)
    p.set_defaults(func=cmd_facts, history=True, as_of=None, q=None, entity=None)


def _running_commands(sub) -> None:
    """serve, mcp, keys, migrate, worker: running kenning as a service."""
    p = sub.add_parser("serve", help="run the HTTP API and the queue workers")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8420)
    p.add_argument("--replica", action="append", default=None, metavar="URL",
                   help="a PostgreSQL read replica of --db (repeat for more): recall and listings read there, "
                        "with read-your-writes ($KENNING_REPLICAS: comma-separated)")
    p.set_defaults(func=cmd_serve)

    def cmd_mcp(args) -> int:  # the MCP SDK loads only when this command runs
        from .mcp_server import cmd_mcp

        return cmd_mcp(args)

    p = sub.add_parser("mcp", help="run the MCP server for one dataset: stdio, or streamable HTTP with --http")
    p.add_argument("--dataset", default=None, help="whose memory the tools use (default: $KENNING_DATASET, "
                                                   "else 'default')")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8421)
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("keys", help="manage API keys")
    keys = p.add_subparsers(dest="keys_command", required=True)
    k = keys.add_parser("create", help="create an API key for a project (printed once)")
    k.add_argument("--project", required=True)
    k.add_argument("--role", default="service", help="service | admin | member")
    k.add_argument("--name", default=None)
    k.set_defaults(func=cmd_keys)
    k = keys.add_parser("list", help="list API keys (their ids, never the keys)")
    k.add_argument("--project", default=None)
    k.add_argument("--all", action="store_true", help="include revoked keys")
    k.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON lines")
    k.set_defaults(func=cmd_keys)
    k = keys.add_parser("revoke", help="revoke a key by id: it, its user tokens and its sign-ins stop working")
    k.add_argument("key_id")
    k.add_argument("--project", default=None, help="refuse unless the key belongs to this project")
    k.set_defaults(func=cmd_keys)

    p = sub.add_parser("migrate", help="bring the store's schema up to date and list its migrations")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("worker", help="run queue workers for add_turn jobs in the foreground")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lease", type=float, default=60.0, help="seconds a claimed job stays leased")
    p.add_argument("--poll", type=float, default=0.5, help="seconds between looks at an empty queue")
    p.add_argument("--exit-when-idle", action="store_true", help="stop once no job is queued or running")
    p.set_defaults(func=cmd_worker)


def _resource_commands(sub) -> None:
    """add-turn, entities, notes, core: one resource each."""
    p = sub.add_parser("add-turn", help="queue one turn for the workers and return at once")
    p.add_argument("text")
    p.add_argument("--dataset", required=True)
    p.add_argument("--role", default="user")
    p.add_argument("--thread", default=None)
    p.add_argument("--client-ref", default=None)
    p.add_argument("--at", default=None, help="message time, ISO 8601 (default: now)")
    p.add_argument("--wait", type=float, default=0, help="seconds to wait for the job and print its receipt")
    p.set_defaults(func=cmd_add_turn)

    p = sub.add_parser("datasets", help="list the datasets (end users) with their counts")
    p.add_argument("--q", default=None, help="only datasets whose name contains this")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("jobs", help="list queued turns and what became of them")
    p.add_argument("--dataset", default=None)
    p.add_argument("--status", default=None, choices=["queued", "distilling", "done", "failed"])
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("remine", help="mine kept user messages again (after a failed extraction, or with "
                                      "another extractor): by default those no fact cites")
    p.add_argument("--dataset", required=True)
    p.add_argument("--message-id", action="append", help="this message (repeatable)")
    p.add_argument("--all", action="store_true", help="every user message of the dataset, in the order said")
    p.set_defaults(func=cmd_remine)

    p = sub.add_parser("delete-fact", help="delete a fact (soft: it stays in the history)")
    p.add_argument("fact_id")
    p.add_argument("--dataset", required=True)
    p.set_defaults(func=cmd_delete_fact)

    p = sub.add_parser("embed-pending", help="compute the vectors of rows stored without one (after an "
                                              "import with --no-embed)")
    p.set_defaults(func=cmd_embed_pending)

    p = sub.add_parser("entities", help="list the entities of a dataset")
    p.add_argument("--dataset", required=True)
    p.add_argument("--type", default=None, help="only this type (PERSON, PLACE, ORG, …)")
    p.set_defaults(func=cmd_entities)

    p = sub.add_parser("notes", help="archival notes: list, save, search, forget")
    notes = p.add_subparsers(dest="notes_command", required=True)
    for name, help_text in (("list", "list a dataset's notes"), ("save", "save a note"),
                            ("search", "search notes"), ("forget", "forget a note (kept in the history)")):
        n = notes.add_parser(name, help=help_text)
        n.add_argument("--dataset", required=True)
        if name == "save":
            n.add_argument("text")
        if name == "search":
            n.add_argument("query")
        if name == "forget":
            n.add_argument("note_id")
        if name != "forget":   # each sub-command takes the flags it uses, no others
            n.add_argument("--namespace", default="user" if name == "save" else None,
                           help="user (default for save), organization, agent:<id>, chat:<id>; list and "
                                "search: all the dataset's when absent")
        if name in ("list", "search"):
            n.add_argument("--limit", type=int, default=50 if name == "list" else 10)
        if name == "list":
            n.add_argument("--include-forgotten", action="store_true", help="forgotten notes too")
        n.set_defaults(func=cmd_notes)

    p = sub.add_parser("core", help="core memory files: view, render, or run one memory tool command")
    core = p.add_subparsers(dest="core_command", required=True)
    c = core.add_parser("view", help="view a directory or file under /memories")
    c.add_argument("path", nargs="?", default="/memories")
    c2 = core.add_parser("render", help="print the files as the system prompt sees them")
    c3 = core.add_parser("tool", help="run one memory tool command given as JSON")
    c3.add_argument("command_json", help='e.g. \'{"command": "view", "path": "/memories"}\'')
    for c_ in (c, c2, c3):
        c_.add_argument("--dataset", required=True)
        if c_ is c2:
            c_.add_argument("--namespace", action="append", default=None, dest="namespaces",
                            help="a namespace to render, repeatable (default: the user's and the organization's)")
        else:
            c_.add_argument("--namespace", default="user")
        c_.set_defaults(func=cmd_core)


def _data_commands(sub) -> None:
    """bench, recall, export, import."""
    p = sub.add_parser("bench", help="run a benchmark of the source checkout: " + ", ".join(BENCHES))
    p.add_argument("which", choices=sorted(BENCHES))
    p.add_argument("--bench-dir", default=None, help="the bench/ folder (default: ./bench)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark script")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("recall", help="print the context block for a query")
    p.add_argument("query")
    p.add_argument("--dataset", required=True)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--as-of", default=None, help="ISO 8601 time: recall as of then (the facts live then, what had been said)")
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("export", help="write every fact (with its history), entity, message, note, core file and "
                                      "document as JSON lines")
    p.add_argument("--dataset", default=None, help="one dataset (default: all, the organization's and documents too)")
    p.add_argument("--vectors", action="store_true", help="carry the embeddings, so an import into a store with "
                   "the same model computes none (default: the import computes them)")
    p.add_argument("--out", default=None, help="file to write (default: stdout)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="restore an export into this store (all or nothing; existing rows are skipped)")
    p.add_argument("file", help="the export's JSON lines, or - for stdin")
    p.add_argument("--no-embed", action="store_true", help="leave the vectors the export did not carry to a "
                   "later embed-pending (default: compute them now, so recall finds the restored rows)")
    p.set_defaults(func=cmd_import)


def _dataset_argument(p, what: str, *, required: bool) -> None:
    """The dataset as the erase commands' first word or, as every other command takes it, ``--dataset``."""
    p.add_argument("dataset", nargs="?", default=None, help=f"{what}; or --dataset")
    p.add_argument("--dataset", dest="dataset_option", metavar="DATASET", default=None,
                   help="the same, given as the other commands take it")
    p.set_defaults(dataset_required=required)


def _one_dataset(parser: argparse.ArgumentParser, args) -> None:
    """Merge the two ways of naming the dataset (see :func:`_dataset_argument`)."""
    given = [d for d in (args.dataset, args.dataset_option) if d is not None]
    if len(set(given)) > 1:
        parser.error(f"two datasets named: {given[0]!r} and --dataset {given[1]!r}; name one")
    args.dataset = given[0] if given else None
    if args.dataset is None and args.dataset_required:
        parser.error("which dataset? name it as the first argument or with --dataset")


def _erasure_commands(sub) -> None:
    """erase, erasures, compact: removing what is kept about a person for good."""
    p = sub.add_parser("erase", help="erase for good (unlike delete-fact and notes forget, nothing stays in the "
                                     "history): a fact, a message, everything holding a text, or a dataset",
                       description="Erase for good: the rows go, with their words, from every table, index and "
                                   "(after compaction) the store's files; the erasure log keeps ids, counts and "
                                   "hashes, never the text. Each command first shows the dry run (what would go) "
                                   "and asks on a terminal; --yes erases without asking (scripts), --dry-run "
                                   "only shows. Without a terminal and without --yes nothing is erased (exit 2).")
    erase = p.add_subparsers(dest="erase_command", required=True)
    verbs = {"fact": "a fact, every version of its value in the history, and its quoted words in the message it "
                     "came from",
             "message": "a message, every fact learned from it, and the queued turns that carried it",
             "content": "everything in the dataset holding a text (case-insensitively): facts, messages, notes, "
                        "entities, core-file lines, turns",
             "dataset": "everything kept about one end user (the confirmation asks for the dataset's name)"}
    for name, what in verbs.items():
        e = erase.add_parser(name, help=what, description=f"Erase for good {what}. First shows the dry run (what "
                             "would go: counts and ids per kind) and asks on a terminal; --yes erases without "
                             "asking; with neither a terminal nor --yes, nothing is erased (exit 2).")
        _dataset_argument(e, "the dataset to erase" if name == "dataset" else "the dataset (end user)", required=True)
        if name == "fact":
            e.add_argument("fact_id", help="the fact's id (kenning facts --dataset D --history)")
        if name == "message":
            e.add_argument("message_id", help="the message's id (a fact's episode_id)")
        if name == "content":
            e.add_argument("text", help="the text to erase wherever it occurs (at least 2 characters)")
            e.add_argument("--document-scope", action="append", default=None, dest="document_scopes", metavar="KEY",
                           help="also documents under this scope key that hold the text (repeatable; documents "
                                "belong to no dataset)")
            e.add_argument("--organization", action="store_true", help="also the project's organization memory "
                           "(its notes and core files, shared by every user) holding the text")
        e.add_argument("--yes", "-y", action="store_true", help="erase without showing the dry run or asking")
        e.add_argument("--dry-run", action="store_true", help="only show what would be erased")
        e.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                       help="the receipt as one JSON line (the dry run's too, before the question)")
        e.set_defaults(func=cmd_erase)

    p = sub.add_parser("erasures", help="the erasure log, newest first: ids, counts and hashes, who asked, "
                                        "never the erased text")
    _dataset_argument(p, "one dataset's (default: every dataset's)", required=False)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(func=cmd_erasures)

    p = sub.add_parser("compact", help="make the bytes of erasures still pending leave the store's files "
                                       "(after KENNING_ERASE_COMPACTION=deferred); exit 1 if it must be run again")
    p.set_defaults(func=cmd_compact)


NO_JSON = ("bench", "mcp")   # their output is the benchmark script's, or the MCP protocol on stdout


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kenning", description="Long-term memory for AI assistants.")
    ap.add_argument("--db", default=None, help="store path, sqlite:///…, postgresql://…, or a server URL "
                                               "http://host:port (default: $KENNING_HOME/kenning.db)")
    ap.add_argument("--api-key", default=None, help="API key for a server URL (default: $KENNING_API_KEY)")
    ap.add_argument("--json", action="store_true", help="JSON lines instead of tables, for scripts")
    sub = ap.add_subparsers(dest="command", required=True)
    for add in (_memory_commands, _running_commands, _resource_commands, _data_commands, _erasure_commands):
        add(sub)

    for name, command in sub.choices.items():  # --json after the command too (SUPPRESS: never undo one before it)
        if name in NO_JSON:
            continue
        try:
            command.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                                 help="JSON lines instead of tables, for scripts")
        except argparse.ArgumentError:   # the command has its own --json
            pass
    return ap


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "dataset_option"):
        _one_dataset(parser, args)
    try:
        return args.func(args)
    except KenningError as exc:
        print(f"kenning: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
