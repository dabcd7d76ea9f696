"""The ``kenning`` command: a thin layer over :class:`kenning.Memory`.

Library errors become one-line messages and exit status 1; no tracebacks.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone

from .errors import KenningError

DEMO = [
    ("2026-07-01T10:00:00Z", "Hi! I live in Berlin and I work at Google as a backend engineer."),
    ("2026-07-01T10:01:00Z", "I'm allergic to peanuts, and I love ramen."),
    ("2026-07-20T18:30:00Z", "ok thanks!"),
    ("2026-08-16T09:00:00Z", "I'm looking at the Toyota Corolla Hybrid."),
    ("2026-09-03T10:00:00Z", "Big news: I moved to Lisbon last month. I just started a new job at Stripe."),
    ("2026-09-03T10:02:00Z", "I don't eat meat anymore, and I'm training for a half marathon in March."),
]


def _memory(args):
    from .memory import Memory

    return Memory(args.db)


def cmd_demo(args) -> int:
    from .memory import Memory

    mem = Memory(args.db)
    dataset = args.dataset or f"demo-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}"
    where = getattr(mem.store, "path", args.db)
    print(f"kenning demo: store {where}, dataset {dataset!r}\n")
    started = time.perf_counter()
    for at, text in DEMO:
        r = mem.add(text, dataset=dataset, at=at)
        print(f"[{at[:10]}] user: {text}")
        print(f"           -> {r.status}: stored {r.candidates_stored}, updated {r.candidates_updated}, "
              f"deduped {r.candidates_deduped}" + (f" ({r.reason})" if r.reason else ""))
    print(f"\nIngested {len(DEMO)} messages in {time.perf_counter() - started:.2f}s.\n")
    print("Live facts now:")
    for f in mem.list_facts(dataset, limit=100).facts:
        print(f"  - {f.predicate}: {f.object}  (since {f.valid_at.date()}, confidence {f.confidence:.2f})")
    print("\nHistory (every fact, including superseded and ended ones):")
    for f in mem.list_facts(dataset, limit=100, include_invalidated=True).facts:
        state = "live"
        if f.invalid_at is not None:
            state = f"superseded {f.invalid_at.date()}" if f.superseded_by else f"deleted {f.invalid_at.date()}"
        elif f.valid_until is not None:
            state = f"until {f.valid_until.date()}"
        print(f"  - {f.predicate}: {f.object}  [{f.valid_at.date()} .. {state}]")
    print("\nAs of 2026-07-15:")
    for f in mem.list_facts(dataset, limit=100, as_of="2026-07-15T00:00:00Z").facts:
        print(f"  - {f.predicate}: {f.object}")
    query = "Where does the user live and work?"
    res = mem.recall(query, dataset=dataset, limit=5)
    print(f"\nrecall({query!r}).context:\n{res.context}")
    mem.close()
    return 0


def cmd_add(args) -> int:
    mem = _memory(args)
    r = mem.add(args.text, dataset=args.dataset, at=args.at, role=args.role, client_ref=args.client_ref)
    print(r.model_dump_json(indent=2, exclude={"memory"}))
    return 0


def cmd_facts(args) -> int:
    mem = _memory(args)
    page = mem.list_facts(args.dataset, q=args.q, limit=args.limit, include_invalidated=args.history,
                          as_of=args.as_of, entity=args.entity)
    for f in page.facts:
        print(json.dumps(f.model_dump(mode="json")) if args.json else f"{f.valid_at.date()}  {f.predicate}: {f.object}")
    print(f"({len(page.facts)} of {page.total})", file=sys.stderr)
    return 0


def cmd_recall(args) -> int:
    mem = _memory(args)
    res = mem.recall(args.query, dataset=args.dataset, limit=args.limit)
    print(res.context or "(nothing recalled)")
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
    workers = [Worker(mem, lease_seconds=args.lease, poll_seconds=args.poll) for _ in range(args.threads)]
    print(f"kenning worker: {len(workers)} thread(s) on {getattr(mem.store, 'path', args.db)}", flush=True)
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
    print(f"kenning worker: ran {sum(done)} job(s)", flush=True)
    return 0


def cmd_serve(args) -> int:
    """The HTTP API and the queue workers on one store."""
    import uvicorn

    from .server import build

    app, mem, auth = build(args.db, host=args.host)
    where = getattr(mem.store, "path", args.db)
    print(f"kenning serve: data in {where}")
    if auth.dev_mode:
        print("kenning serve: no API key configured; single-user development mode on loopback (every request is "
              "the service principal of the default project). Create keys with `kenning keys create`.")
    print(f"kenning serve: http://{args.host}:{args.port}  (OpenAPI at /docs)", flush=True)
    mem._workers.ensure_started()
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        mem.close()
    return 0


def cmd_keys(args) -> int:
    from .memory import Memory
    from .server.auth import KEY_ROLES, hash_key, new_key

    if args.role not in KEY_ROLES:
        print(f"kenning: role must be one of {', '.join(KEY_ROLES)}", file=sys.stderr)
        return 1
    mem = Memory(args.db, embedder=None)
    key = new_key(args.project)
    mem.store.put_api_key(hash_key(key), args.project, args.role, args.name)
    mem.close()
    print(key)
    print(f"(a {args.role} key for project {args.project!r}; it is shown once, only its hash is stored)",
          file=sys.stderr)
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
    mem = _memory(args)
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    except OSError as exc:
        print(f"kenning: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    with source:
        counts = mem.import_(source, embed=args.embed)
    print(json.dumps(counts))
    mem.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kenning", description="Long-term memory for AI assistants.")
    ap.add_argument("--db", default=None, help="store URL or path (default: $KENNING_HOME/kenning.db)")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="ingest a short conversation and print the facts, history and recall")
    p.add_argument("--dataset", default=None, help="default: a new demo-<time> dataset")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("add", help="add one message said by the user")
    p.add_argument("text")
    p.add_argument("--dataset", required=True)
    p.add_argument("--at", default=None, help="message time, ISO 8601 (default: now)")
    p.add_argument("--role", default="user")
    p.add_argument("--client-ref", default=None)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("facts", help="list facts: live, as of a time, or the whole history")
    p.add_argument("--dataset", required=True)
    p.add_argument("--q", default=None, help="keyword filter")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--history", action="store_true", help="include superseded, ended and deleted facts")
    p.add_argument("--as-of", default=None)
    p.add_argument("--entity", default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_facts)

    p = sub.add_parser("serve", help="run the HTTP API and the queue workers")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8420)
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

    p = sub.add_parser("worker", help="run queue workers for add_turn jobs in the foreground")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lease", type=float, default=60.0, help="seconds a claimed job stays leased")
    p.add_argument("--poll", type=float, default=0.5, help="seconds between looks at an empty queue")
    p.add_argument("--exit-when-idle", action="store_true", help="stop once no job is queued or running")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("recall", help="print the context block for a query")
    p.add_argument("query")
    p.add_argument("--dataset", required=True)
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("export", help="write every fact (with its history), entity, message, note, core file and "
                                      "document as JSON lines")
    p.add_argument("--dataset", default=None, help="one dataset (default: all, the organization's and documents too)")
    p.add_argument("--vectors", action="store_true", help="carry the embeddings (default: recompute after import)")
    p.add_argument("--out", default=None, help="file to write (default: stdout)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="restore an export into this store (all or nothing; existing rows are skipped)")
    p.add_argument("file", help="the export's JSON lines, or - for stdin")
    p.add_argument("--embed", action="store_true", help="compute the vectors the export did not carry")
    p.set_defaults(func=cmd_import)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KenningError as exc:
        print(f"kenning: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
