"""Pages of a dataset's other memory: notes and core files (read and edited through the same permission
gate as the API), and the recall playground.

Editing a core file sends the version the editor was opened at (``expected_version``): if the file
changed meanwhile, nothing is written; the page comes back with the editor's text kept, the current
version and what differs, and saving again then writes over the version now shown.
"""
from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ...errors import InputError, MemoryConflict, NotFound
from .render import Dashboard, PAGE, diff_lines, int_param, local_target

HISTORY_PAGE = 50   # versions of a core file the page lists and diffs between


def routes(d: Dashboard, router: APIRouter) -> None:
    # -- notes -------------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/notes", response_class=HTMLResponse)
    def notes(request: Request, dataset: str):
        _, m, kw = d.api(request)
        offset = int_param(request.query_params.get("offset"), 0, 0, 10**9, "offset")
        shown = m.notes.list(dataset, include_forgotten=True, limit=PAGE, offset=offset, **kw)
        more = len(m.notes.list(dataset, include_forgotten=True, limit=1, offset=offset + PAGE, **kw)) > 0
        return d.render(request, "notes.html", dataset=dataset, tab="notes", notes=shown, offset=offset,
                        prev=max(0, offset - PAGE) if offset else None, next=offset + PAGE if more else None)

    def back_to_notes(dataset: str, done: str) -> RedirectResponse:
        return RedirectResponse(f"/datasets/{quote(dataset, safe='')}/notes?{urlencode({'done': done})}", status_code=303)

    @router.post("/datasets/{dataset}/notes/save")
    async def save_note(request: Request, dataset: str):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        note = m.notes.save(dataset, data.get("text", ""), namespace=data.get("namespace") or "user", **kw)
        return RedirectResponse(f"/datasets/{quote(dataset, safe='')}/notes?{urlencode({'done': 'saved'})}"
                                f"#note-{quote(note.note_id, safe='')}", status_code=303)

    @router.post("/datasets/{dataset}/notes/{note_id}/edit")
    async def edit_note(request: Request, dataset: str, note_id: str):
        """A note is never changed in place: the new text is saved and the old note forgotten, pointing to it."""
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        new = m.notes.save(dataset, data.get("text", ""), namespace=data.get("namespace") or "user", **kw)
        if new.note_id != note_id:
            m.notes.forget(dataset, note_id, superseded_by=new.note_id, **kw)
        return back_to_notes(dataset, "edited")

    @router.post("/datasets/{dataset}/notes/{note_id}/forget", response_class=HTMLResponse)
    async def forget_note(request: Request, dataset: str, note_id: str):
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        if data.get("confirmed") != "yes":
            d.allowed(m, kw, dataset)      # another user's dataset: refused now, as the API would, not after asking
            return d.render(request, "confirm.html", dataset=dataset, tab="notes", title="Forget this note?",
                            items=[data.get("text") or note_id], explain="It leaves search and recall; the notes "
                            "page keeps it, marked forgotten.", action=str(request.url.path), fields={},
                            button="Forget it", back=f"/datasets/{quote(dataset, safe='')}/notes")
        m.notes.forget(dataset, note_id, **kw)
        return back_to_notes(dataset, "forgotten")

    # -- core files --------------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/core", response_class=HTMLResponse)
    def core(request: Request, dataset: str):
        params = request.query_params
        return core_page(request, dataset, params.get("namespace", "user") or "user", params.get("path"),
                         a=params.get("a"), b=params.get("b"))

    def core_page(request: Request, dataset: str, namespace: str, path: str | None, *, a=None, b=None,
                  http_status: int = 200, **extra) -> HTMLResponse:
        _, m, kw = d.api(request)
        files = m.core.list(dataset, namespace, **kw)
        versions, diff, current = [], [], None
        if path:
            # the newest versions, oldest first: a page stays small however often the file changed
            versions = m.core.history(dataset, path, namespace, HISTORY_PAGE, newest_first=True, **kw)[::-1]
            current = next((f for f in files if f.path == path), None)
            numbers = [v.version for v in versions]
            if numbers:
                b = int_param(b, numbers[-1], min(numbers), max(numbers), "b")
                a = int_param(a, max(min(numbers), b - 1), min(numbers), max(numbers), "a")
                by = {v.version: v for v in versions}
                if a in by and b in by:
                    diff = diff_lines(by[a].content or "", by[b].content or "")
        return d.render(request, "core.html", http_status=http_status, dataset=dataset, tab="core",
                        namespace=namespace, files=files, path=path, versions=versions, diff=diff, a=a, b=b,
                        current=current, **extra)

    async def core_form(request: Request):
        """A core-file form, checked and allowed to write: its fields, the gate's memory, the file."""
        data = await d.form(request)
        _, m, kw = d.api(request, write=True)
        return data, m, kw, data.get("namespace") or "user", (data.get("path") or "").strip()

    @router.post("/datasets/{dataset}/core/save", response_class=HTMLResponse)
    async def save_core(request: Request, dataset: str):
        data, m, kw, namespace, path = await core_form(request)
        text = data.get("text", "").replace("\r\n", "\n")     # browsers send CRLF line ends from a textarea
        expected = int_param(data.get("expected_version"), 0, 0, 2**53, "expected_version")
        try:
            saved = m.core.write(dataset, path, text, expected_version=expected, namespace=namespace, **kw)
        except MemoryConflict as exc:
            try:
                now = m.core.read(dataset, path, namespace, **kw)
            except NotFound:
                now = None
            conflict = {"message": str(exc), "expected": expected, "current": now,
                        "diff": diff_lines(now.content if now else "", text)}
            return core_page(request, dataset, namespace, path if now else None, http_status=409,
                             conflict=conflict, draft=text, draft_path=path)
        where = urlencode({"namespace": namespace, "path": saved.path, "saved": saved.version})
        return RedirectResponse(f"/datasets/{quote(dataset, safe='')}/core?{where}", status_code=303)

    @router.post("/datasets/{dataset}/core/delete", response_class=HTMLResponse)
    async def delete_core(request: Request, dataset: str):
        data, m, kw, namespace, path = await core_form(request)
        if not path:
            raise InputError("path: which core file to delete")
        back = local_target(f"/datasets/{quote(dataset, safe='')}/core?{urlencode({'namespace': namespace})}")
        if data.get("confirmed") != "yes":
            m.core.list(dataset, namespace, **kw)    # the gate for this dataset and namespace, before asking
            return d.render(request, "confirm.html", dataset=dataset, tab="core", title=f"Delete {path}?",
                            items=[path], explain="It leaves the rendered core memory; its versions stay in "
                            "the history.", action=str(request.url.path),
                            fields={"namespace": namespace, "path": path}, button="Delete the file", back=back)
        m.core.remove(dataset, path, namespace, **kw)
        return RedirectResponse(back, status_code=303)

    # -- recall playground -------------------------------------------------------------------------
    @router.get("/datasets/{dataset}/recall", response_class=HTMLResponse)
    def recall(request: Request, dataset: str):
        _, m, kw = d.api(request)
        q = request.query_params.get("q", "").strip()
        limit = int_param(request.query_params.get("limit"), 10, 1, 100, "limit")
        result = m.recall(q, dataset, limit=limit, **kw) if q else None
        return d.render(request, "recall.html", dataset=dataset, tab="recall", q=q, limit=limit, result=result)
