"""Erasing for good, from the dashboard: a fact, a message, everything holding a text, or the whole dataset;
the dataset's erasure log, and every dataset's (``/erasures``).

Deleting a fact keeps it in the history; erasing keeps nothing, so it always takes two steps, each a POST
that passes the form checks every change passes (same origin, the form token bound to the caller's
credential) and the permission gate with ``write=True`` (a key that may only read is refused, as the API
refuses it). The first step asks the library for a dry run and shows its receipt: what would go, counted
per kind, with the facts, messages and notes named. Only the second, sent from that page, erases, and
only while a new dry run still says the same (the page carries the preview's digest; if the data changed
meanwhile, the new receipt is shown to confirm again). Erasing the whole dataset also asks for its name
to be typed. The log names the signed-in principal as who asked, as the API's erase routes do.

The erasure log page shows ids, counts, who and when: the log keeps no text, so neither does the page.
"""
from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ...errors import NotFound
from ...model import ErasureReceipt
from ..auth import Principal
from ..routes.erasure import by
from .render import Dashboard, PAGE, int_param, local_target, pages

LOG_PAGE = 50     # erasure-log entries per page (the API's default page)
SHOWN = PAGE      # items of each kind a preview names (the rest are counted)
# What the receipts' kinds are called on the page: (one, many). A dataset's dry run counts its tables.
KINDS = {
    "facts": ("fact", "facts"), "messages": ("message", "messages"), "episodes": ("message", "messages"),
    "redacted": ("message with words cut out", "messages with words cut out"),
    "quotes": ("other fact's quote cut", "other facts' quotes cut"),
    "restored": ("earlier fact live again", "earlier facts live again"),
    "notes": ("note", "notes"), "entities": ("entity", "entities"), "core_files": ("core file", "core files"),
    "core_file_versions": ("earlier core-file version", "earlier core-file versions"),
    "documents": ("document", "documents"), "jobs": ("turn in the queue", "turns in the queue"),
    "ingests": ("idempotency receipt", "idempotency receipts"),
}


def kind_name(key: str, n: int) -> str:
    one, many = KINDS.get(key, (key.replace("_", " "), key.replace("_", " ")))
    return one if n == 1 else many


def counted(removed: dict[str, int]) -> str:
    """'1 fact, 2 messages' (kinds with none left out); 'nothing' when every count is 0."""
    parts = [f"{n} {kind_name(key, n)}" for key, n in removed.items() if n]
    return ", ".join(parts) or "nothing"


def digest(receipt: ErasureReceipt) -> str:
    """What a dry run would erase, as a short digest the confirmation carries (its time left out)."""
    body = json.dumps({"kind": receipt.kind, "dataset": receipt.dataset, "removed": receipt.removed,
                       "ids": receipt.ids, "redacted": receipt.redacted}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def routes(d: Dashboard, router: APIRouter) -> None:
    def home(dataset: str) -> str:
        return f"/datasets/{quote(dataset, safe='')}"

    def named(p: Principal, m, kw: dict, dataset: str, receipt: ErasureReceipt) -> dict:
        """The facts, messages, notes and entities a dry run names, read through the gate (the dry run
        itself already passed it), at most SHOWN of each."""
        ids = receipt.ids
        facts = {f.fact_id: f for f in d.facts_by_id(p, m, kw, dataset, ids.get("facts", [])[:SHOWN])}
        messages, redacted = [], []
        for wanted, into in ((ids.get("messages", []), messages), (receipt.redacted, redacted)):
            for message_id in wanted[:SHOWN]:
                try:
                    into.append(m.messages.get(dataset, message_id, **kw))
                except NotFound:
                    pass
        notes = []
        if ids.get("notes"):
            scope = d.memory.services.scope(dataset, p.project, p.environment)
            with d.memory.store.reading(scope):
                notes = d.memory.store.get_notes(scope, ids["notes"][:SHOWN])
        entities = []
        if ids.get("entities"):
            wanted = set(ids["entities"])
            entities = [e for e in m.list_entities(dataset, **kw) if e.entity_id in wanted][:SHOWN]
        return {"facts": [facts[i] for i in ids.get("facts", [])[:SHOWN] if i in facts], "messages": messages,
                "redacted": redacted, "notes": notes, "entities": entities,
                "core_files": ids.get("core_files", [])[:SHOWN], "documents": ids.get("documents", [])[:SHOWN]}

    def confirm_or_erase(request: Request, p: Principal, m, kw: dict, dataset: str, data: dict[str, str],
                         erase: Callable[[bool], ErasureReceipt], *, what: str, action: str, back: str,
                         fields: dict[str, str] | None = None, name_check: bool = False):
        """Step one (no ``confirmed``): the dry run's receipt, to confirm. Step two: erase, if the dry run
        still says what was confirmed (and, for a whole dataset, its name was typed); else step one again."""
        preview = erase(True)
        seen = digest(preview)
        confirmed = data.get("confirmed") == "yes"
        changed = confirmed and not hmac.compare_digest(data.get("preview", "").encode(), seen.encode())
        problem = None
        if confirmed and not changed and name_check and data.get("confirm_name", "").strip() != dataset:
            problem = f"Type the dataset's name, {dataset}, to erase it: nothing was erased."
        if confirmed and not changed and problem is None:
            done = erase(False)
            where = urlencode({"done": done.erasure_id or ""})
            return RedirectResponse(f"{home(dataset)}/erase?{where}", status_code=303)
        counts = [(key, n, kind_name(key, 2)) for key, n in preview.removed.items() if n]   # 2: the kind's name
        return d.render(request, "confirm_erase.html", http_status=409 if changed else 422 if problem else 200,
                        dataset=dataset, tab="erase", what=what, receipt=preview, counts=counts,
                        items=named(p, m, kw, dataset, preview) if preview.kind != "dataset" else {},
                        preview=seen, changed=changed, problem=problem, action=action,
                        fields=fields or {}, back=back, name_check=name_check, nothing=not counts)

    async def begin(request: Request):
        """A posted erase form: its fields, after the form checks; who asks, allowed to write."""
        data = await d.form(request)
        p, m, kw = d.api(request, write=True)
        return data, p, m, kw

    # -- the erasure page: by content, the whole dataset, the log ---------------------------------
    @router.get("/datasets/{dataset}/erase", response_class=HTMLResponse)
    def erase_page(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        log = m.erase.log(dataset, LOG_PAGE, offset, **kw)
        done_id = request.query_params.get("done", "").strip()
        done = None
        if done_id:
            recent = log.erasures if offset == 0 else m.erase.log(dataset, LOG_PAGE, 0, **kw).erasures
            done = next((e for e in recent if e.erasure_id == done_id), None)
        entries = [(e, counted(e.removed)) for e in log.erasures]
        return d.render(request, "erase.html", dataset=dataset, tab="erase", entries=entries, done=done,
                        done_counts=counted(done.removed) if done else None, keep={},
                        nav=pages(log.total, LOG_PAGE, offset))

    @router.get("/erasures", response_class=HTMLResponse)
    def every_erasure(request: Request):
        """Every dataset's erasures (a user's key: its own dataset's, as the API answers it): the one place a
        dataset erased whole, gone from the list of datasets, still shows its entry."""
        _, m, kw = d.api(request)
        only = request.query_params.get("dataset", "").strip() or None
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        log = m.erase.log(only, LOG_PAGE, offset, **kw)
        entries = [(e, counted(e.removed)) for e in log.erasures]
        return d.render(request, "erasures.html", tab="erasures", entries=entries, only=only or "", done=None,
                        keep={"dataset": only} if only else {}, nav=pages(log.total, LOG_PAGE, offset))

    @router.post("/datasets/{dataset}/erase/content", response_class=HTMLResponse)
    async def erase_content(request: Request, dataset: str):
        data, p, m, kw = await begin(request)
        text = data.get("text", "")
        who = by(p)
        return confirm_or_erase(
            request, p, m, kw, dataset, data,
            lambda dry: m.erase.content(dataset, text, dry_run=dry, by=who, **kw),
            what=f"everything holding “{text}”", action=str(request.url.path), back=f"{home(dataset)}/erase",
            fields={"text": text})

    @router.post("/datasets/{dataset}/erase/dataset", response_class=HTMLResponse)
    async def erase_dataset(request: Request, dataset: str):
        data, p, m, kw = await begin(request)
        who = by(p)
        return confirm_or_erase(
            request, p, m, kw, dataset, data, lambda dry: m.erase.dataset(dataset, dry_run=dry, by=who, **kw),
            what=f"the whole dataset {dataset}", action=str(request.url.path), back=f"{home(dataset)}/erase",
            name_check=True)

    @router.post("/datasets/{dataset}/erase/facts/{fact_id}", response_class=HTMLResponse)
    async def erase_fact(request: Request, dataset: str, fact_id: str):
        data, p, m, kw = await begin(request)
        who = by(p)
        back = local_target(data.get("back") or f"{home(dataset)}/facts/{quote(fact_id, safe='')}")
        return confirm_or_erase(
            request, p, m, kw, dataset, data,
            lambda dry: m.erase.fact(dataset, fact_id, dry_run=dry, by=who, **kw),
            what="this fact and the words it came from", action=str(request.url.path), back=back,
            fields={"back": back})

    @router.post("/datasets/{dataset}/erase/messages/{message_id}", response_class=HTMLResponse)
    async def erase_message(request: Request, dataset: str, message_id: str):
        data, p, m, kw = await begin(request)
        who = by(p)
        back = local_target(data.get("back") or f"{home(dataset)}/messages/{quote(message_id, safe='')}")
        return confirm_or_erase(
            request, p, m, kw, dataset, data,
            lambda dry: m.erase.message(dataset, message_id, dry_run=dry, by=who, **kw),
            what=f"message {message_id} and what it taught", action=str(request.url.path), back=back,
            fields={"back": back})
