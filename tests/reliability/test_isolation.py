"""Tenant isolation probes: every HTTP route and every library method that addresses a tenant, hit by
principals that must not see or change the victims' memory.

Tenants (project · environment · dataset) are seeded through the service principal with unique canary
strings (``zq<tag>…``) in every row they own: facts (live, superseded, deleted), entities, messages,
idempotency records, notes in every namespace (one forgotten, one waiting for its vector), core files
with a history (one removed), organization memory, documents (one expired) and jobs (queued, failed,
done). Then each attacker sends its probes:

- another dataset's ids: fact, note and message ids, core-file paths, request ids, client refs,
  entity names, document keys, used in the attacker's own dataset (``delete_fact`` on A with B's id);
- another project's key (project ``other`` against ``acme``) and the same dataset names there;
- another environment: the ``X-Kenning-Environment`` header (and ``environment=`` in the library),
  including a user token minted in ``staging`` that names ``default`` in the header;
- forged credentials: a flipped signature, payloads edited to another dataset, role, project,
  environment or expiry, a token signed with another secret, expired tokens, malformed ones, unknown
  and misplaced keys; a member key on every write route;
- ids guessed by enumeration (``f_000…``, ``1``, near misses of real ids);
- scope smuggling on every request: ``project``/``environment``/``dataset`` in the query string and
  in JSON bodies, which no route may honour; imports whose rows name another tenant or reuse its keys.

Checked: no response (body, or the text of a library result or exception) contains a string of a
tenant the caller may not read, apart from what the probe itself sent; the victims' data, as the
service principal exports it (every row, vectors included, plus jobs), is identical after each
attacker's probes, apart from the tenants that attacker may change; refusals have the right status
(401 for bad credentials, 403 for a member key writing, a user token naming another dataset or a
service-only route); nothing answers 5xx. The route table must cover every route of the OpenAPI
document and the library table every public method that takes ``project=``, so a new route or
method without a probe fails here. A summary of the counts is printed.
"""
from __future__ import annotations

import base64
import inspect
import json
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import httpx
import pytest

from kenning import KenningError, Memory, Settings
from kenning.server.auth import Tokens, hash_key
from live_server import LiveServer

SECRET = "isolation-secret-0123456789abcdef"
KEYS = {"service": "kn_acme_service_isolation", "admin": "kn_acme_admin_isolation",
        "member": "kn_acme_member_isolation", "other": "kn_other_service_isolation"}
NAMESPACES = ["user", "agent:x", "chat:y", "project:z"]
CORE_NAMESPACES = ["user", "project:z"]
ORG = "_organization"
Q = "lighthouse where do I live work like"        # words every victim row shares, no canary

NDJSON = {"Content-Type": "application/x-ndjson"}


# -- tenants and their ids ------------------------------------------------------------------------------

@dataclass
class Tenant:
    """One unit of the victims' data: a dataset, a project-environment's organization memory or documents."""
    key: tuple[str, str, str]            # (project, environment, dataset | "_organization" | "docs")
    sensitive: set[str] = field(default_factory=set)   # canaries, ids and paths it owns

    @property
    def site(self) -> tuple[str, str]:
        return self.key[:2]

    def canary(self, tag: str, what: str) -> str:
        text = f"zq{tag}{what}{uuid.uuid4().hex[:10]}"
        self.sensitive.add(text)
        return text


@dataclass
class Ids:
    """Ids to try somewhere they do not belong."""
    name: str
    site: tuple[str, str] | None = None
    fact_ids: list[str] = field(default_factory=list)
    note_ids: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    chats: list[str] = field(default_factory=list)
    client_refs: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    core: list[tuple[str, str]] = field(default_factory=list)       # (namespace, path)
    request_ids: list[str] = field(default_factory=list)
    docs: list[tuple[str, str]] = field(default_factory=list)       # (scope_key, path)
    export: list[str] = field(default_factory=list)                 # the tenant's export lines


def _kw(project, environment):
    return {"project": project, "environment": environment}


def seed_dataset(mem: Memory, t: Tenant, tag: str, ids: Ids) -> None:
    project, env, dataset = t.key
    kw = _kw(project, env)
    ids.site = (project, env)

    def add(text):
        ref, msg, chat = t.canary(tag, "ref"), t.canary(tag, "msg"), t.canary(tag, "chat")
        ids.client_refs.append(ref)
        ids.message_ids.append(msg)
        ids.chats.append(chat)
        return mem.add(text, dataset, client_ref=ref, message_id=msg, chat=chat, **kw)

    add(f"I live in {t.canary(tag, 'city')}.")
    add(f"I live in {t.canary(tag, 'city')}.")                        # supersedes the first
    gone = add(f"I work at {t.canary(tag, 'org')}.")
    mem.delete_fact(dataset, gone.memory_ids[0], **kw)                # deleted, kept in the history
    add(f"I like {t.canary(tag, 'like')}.")
    ep = mem.messages.index(dataset, f"lighthouse message {t.canary(tag, 'say')}", chat=ids.chats[0],
                            message_id=t.canary(tag, "msg"), **kw)
    ids.message_ids.append(ep.episode_id)
    for ns in NAMESPACES:
        ids.note_ids.append(mem.notes.save(dataset, f"lighthouse note {t.canary(tag, 'note')}", ns, **kw).note_id)
    for ns in CORE_NAMESPACES:
        path = f"/memories/{t.canary(tag, 'path')}.md"
        mem.core.write(dataset, path, f"lighthouse file {t.canary(tag, 'file')}\nsecond line", namespace=ns, **kw)
        mem.core.str_replace(dataset, path, "second line", t.canary(tag, "edit"), namespace=ns, **kw)
        ids.core.append((ns, path))
    old = mem.notes.save(dataset, f"lighthouse old note {t.canary(tag, 'old')}", **kw)
    new = mem.notes.save(dataset, f"lighthouse new note {t.canary(tag, 'new')}", **kw)
    mem.notes.forget(dataset, old.note_id, new.note_id, **kw)
    ids.note_ids += [old.note_id, new.note_id]
    removed = f"/memories/{t.canary(tag, 'removed')}.md"
    mem.core.write(dataset, removed, f"lighthouse removed {t.canary(tag, 'rm')}", **kw)
    mem.core.remove(dataset, removed, **kw)
    ids.core.append(("user", removed))
    ids.fact_ids += [f.fact_id for f in mem.list_facts(dataset, include_invalidated=True, limit=100, **kw).facts]
    entities = mem.list_entities(dataset, **kw)
    ids.entities += [e.name for e in entities]
    t.sensitive |= {e.entity_id for e in entities}
    t.sensitive |= set(ids.fact_ids) | set(ids.note_ids) | set(ids.message_ids) | {p for _, p in ids.core}


def seed_org(mem: Memory, t: Tenant, tag: str, ids: Ids) -> None:
    project, env, _ = t.key
    kw = _kw(project, env)
    note = mem.notes.save("seed", f"lighthouse org note {t.canary(tag, 'onote')}", "organization", **kw)
    path = f"/memories/{t.canary(tag, 'opath')}.md"
    mem.core.write("seed", path, f"lighthouse org file {t.canary(tag, 'ofile')}", namespace="organization", **kw)
    ids.note_ids.append(note.note_id)
    ids.core.append(("organization", path))
    t.sensitive |= {note.note_id, path}


def seed_docs(mem: Memory, t: Tenant, tag: str, ids: Ids) -> None:
    project, env, _ = t.key
    kw = _kw(project, env)
    key = t.canary(tag, "scope")
    live, expired = f"{t.canary(tag, 'doc')}.md", f"{t.canary(tag, 'expired')}.md"
    mem.documents.write(key, live, f"lighthouse doc {t.canary(tag, 'text')}", **kw)
    mem.documents.write(key, expired, f"lighthouse old doc {t.canary(tag, 'gone')}", expires_in=0.05, **kw)
    ids.docs += [(key, live), (key, expired)]


def seed_jobs(mem: Memory, t: Tenant, tag: str, ids: Ids, phase: str) -> None:
    """``phase`` "finished": a failed and a done job (claimed and finished by hand, no worker runs);
    "queued": one left in the queue. Every tenant's finished jobs come before any queued one."""
    from kenning import timeutil
    from kenning.model import AddResult

    project, env, dataset = t.key
    kw = _kw(project, env)
    outcomes = [("failed", t.canary(tag, "err")), ("done", None)] if phase == "finished" else [("queued", None)]
    for status, error in outcomes:
        ref = t.canary(tag, "jref")
        r = mem.add_turn(dataset, "user", f"I live in {t.canary(tag, 'turn')}.", client_ref=ref, **kw)
        ids.request_ids.append(r.request_id)
        ids.client_refs.append(ref)
        t.sensitive.add(r.request_id)
        if status == "queued":
            continue
        job = mem.store.claim("seed", 60, timeutil.now())
        assert job is not None and job.request_id == r.request_id
        result = None if error else AddResult(status="stored", memory_ids=ids.fact_ids[-1:]).model_dump(mode="json")
        mem.store.finish(job.request_id, "seed", result, error=f"extractor failed: {error}" if error else None)


def seed_pending(mem: Memory, t: Tenant, tag: str, ids: Ids) -> None:
    """A note without its vector (imported without one), for embed_pending to fill or leave alone."""
    project, env, dataset = t.key
    note_id = f"n_{uuid.uuid4().hex}"
    header = {"kind": "kenning-export", "version": 1, "embedding_model": None, "dim": None, "vectors": False}
    note = {"kind": "note", "project": project, "environment": env, "dataset": dataset, "note_id": note_id,
            "namespace": "chat:pending", "text": f"lighthouse pending {t.canary(tag, 'pend')}",
            "created_at": "2026-01-01T00:00:00Z", "forgotten_at": None, "superseded_by": None}
    assert mem.import_([json.dumps(header), json.dumps(note)])["note"] == 1
    ids.note_ids.append(note_id)
    t.sensitive.add(note_id)


# The victims: three datasets named alike in three places, mallory (whose tokens attack), and the
# organization memory and documents of each project-environment.
SEEDS = {  # tenant name -> (key, tag, ids source)
    "ds": (("acme", "default", "victim"), "vds", "acme/default/victim"),
    "mal": (("acme", "default", "mallory"), "mal", "acme/default/mallory"),
    "aorg": (("acme", "default", ORG), "aorg", "acme/default/victim"),
    "adoc": (("acme", "default", "docs"), "adoc", "acme/default/victim"),
    "env": (("acme", "prod", "victim"), "venv", "acme/prod/victim"),
    "eorg": (("acme", "prod", ORG), "eorg", "acme/prod/victim"),
    "edoc": (("acme", "prod", "docs"), "edoc", "acme/prod/victim"),
    "prj": (("other", "default", "victim"), "vprj", "other/default/victim"),
    "porg": (("other", "default", ORG), "porg", "other/default/victim"),
    "pdoc": (("other", "default", "docs"), "pdoc", "other/default/victim"),
}


@dataclass
class World:
    tenants: dict[str, Tenant]
    sources: dict[str, Ids]

    def by_key(self, key) -> str | None:
        return next((name for name, t in self.tenants.items() if t.key == key), None)


def seed_world(mem: Memory) -> World:
    tenants = {name: Tenant(key) for name, (key, _, _) in SEEDS.items()}
    sources = {src: Ids(src) for _, _, src in SEEDS.values()}
    datasets = [n for n, (key, _, _) in SEEDS.items() if key[2] not in (ORG, "docs")]
    for name, (key, tag, src) in SEEDS.items():
        seed = seed_org if key[2] == ORG else seed_docs if key[2] == "docs" else seed_dataset
        seed(mem, tenants[name], tag, sources[src])
    for phase in ("finished", "queued"):
        for name in datasets:
            seed_jobs(mem, tenants[name], SEEDS[name][1], sources[SEEDS[name][2]], phase)
    for name in datasets:
        seed_pending(mem, tenants[name], SEEDS[name][1], sources[SEEDS[name][2]])
    for name in datasets:
        project, env, dataset = tenants[name].key
        sources[SEEDS[name][2]].export = list(mem.export(dataset, project=project, environment=env))
    sources["guessed"] = guessed(sources["acme/default/victim"])
    time.sleep(0.1)   # the expired documents expire
    return World(tenants, sources)


def guessed(real: Ids) -> Ids:
    """Ids an attacker could guess: zeros, small numbers, and near misses of real ids."""
    def near(value: str) -> str:
        return value[:-1] + ("0" if value[-1] != "0" else "1")

    zeros = "0" * 32
    return Ids("guessed", None, fact_ids=[f"f_{zeros}", "f_1", "1", "0", near(real.fact_ids[0])],
               note_ids=[f"n_{zeros}", "n_1", "1", near(real.note_ids[0])],
               message_ids=[f"ep_{zeros}", "1", "m1", near(real.message_ids[0])], chats=["1"],
               client_refs=["1", "0"], entities=["1", "berlin"],
               core=[("user", "/memories/1.md"), ("user", "/memories/notes.md"), ("organization", "/memories/1.md")],
               request_ids=[f"req_{zeros}", "req_1", "1", near(real.request_ids[0])],
               docs=[("1", "1"), ("shared", "plan.md")])


def snapshot(mem: Memory, world: World) -> dict[str, object]:
    """Every row of every tenant as the service principal exports it (vectors included), and its jobs."""
    out = {}
    for name, t in world.tenants.items():
        project, env, dataset = t.key
        kw = _kw(project, env)
        if dataset == "docs":
            lines = [line for line in mem.export(None, include_vectors=True, **kw) if '"kind":"document"' in line]
            out[name] = sorted(lines)
            continue
        lines = list(mem.export(dataset, include_vectors=True, **kw))[1:]
        jobs = [] if dataset == ORG else [j.model_dump(mode="json") for j in mem.jobs(dataset, limit=100, **kw)]
        out[name] = (sorted(lines), jobs)
    return out


# -- principals -----------------------------------------------------------------------------------------

@dataclass
class Who:
    name: str
    kind: str                            # service | member | user | forged
    project: str
    env: str
    datasets: list[str]                  # the dataset names its probes use
    read: set[str]                       # tenants it may read
    change: set[str]                     # tenants its dataset-addressed probes may change
    wide: set[str]                       # tenants its project-wide operations may change
    headers: dict = field(default_factory=dict)
    bound: str | None = None             # a user token's dataset
    api: object = None                   # library attackers: the Memory or UserMemory
    kw: dict = field(default_factory=dict)


ACME_DEFAULT = {"ds", "mal", "aorg", "adoc"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(token: str) -> tuple[dict, str]:
    payload, signature = token[3:].split(".")
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))), signature


def _edited(token: str, **changes) -> str:
    claims, signature = _claims(token)
    return f"ut_{_b64(json.dumps(claims | changes, separators=(',', ':')).encode())}.{signature}"


def forged_credentials(genuine: str, expired: str) -> dict[str, dict]:
    """name -> request headers. None of them may authenticate."""
    payload, signature = genuine[3:].split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    other_secret = Tokens("another-secret-0123456789abcdef").mint("acme", "default", "victim", "owner", 3600)[0]
    crafted_expired = Tokens(SECRET).mint("acme", "default", "mallory", "owner", -60)[0]
    tokens = {
        "flipped signature": f"ut_{payload}.{flipped}",
        "payload edited to another dataset": _edited(genuine, d="victim"),
        "payload edited to role owner": _edited(genuine, r="owner"),
        "payload edited to another project": _edited(genuine, p="other", d="victim"),
        "payload edited to another environment": _edited(genuine, e="prod", d="victim"),
        "signed with another secret": other_secret,
        "expired (minted with a tiny expiry)": expired,
        "expired (crafted with the server secret)": crafted_expired,
        "expired, expiry edited": _edited(crafted_expired, exp=int(time.time()) + 10 ** 6),
        "empty signature": f"ut_{payload}.",
        "no signature part": f"ut_{payload}",
        "three parts": f"ut_{payload}.{signature}.{signature}",
        "token without its prefix": genuine[3:],
        "api key as a token": f"ut_{KEYS['service']}",
        "unknown api key": "kn_acme_guessed",
        "api key with a space": f" {KEYS['service']}",
    }
    out = {name: {"Authorization": f"Bearer {value}"} for name, value in tokens.items()}
    out["non-ascii signature"] = {"Authorization": f"Bearer ut_{payload}.{signature[:-1]}".encode() + b"\xe9"}
    out["basic scheme"] = {"Authorization": f"Basic {KEYS['service']}"}
    out["bearer without a credential"] = {"Authorization": "Bearer"}
    out["no credentials"] = {}
    return out


# -- the HTTP route table ---------------------------------------------------------------------------------

@dataclass
class Req:
    method: str
    url: str
    params: dict | None = None
    json: object = None
    content: str | None = None
    ds: str | None = None          # the dataset it names
    docs: bool = False             # addresses the documents of the caller's project and environment
    site: bool = False             # reads across the caller's project and environment (a service's view)
    wide: bool = False             # changes across the caller's project and environment
    write: bool | None = None      # None: the route's
    secret_content: bool = False   # carries a victim's rows as they are (refused, or restored where they were)
    expect: int | None = None      # the status a service key must get


@dataclass
class Route:
    write: bool
    need: str                      # any | key (service or member keys) | service (service keys only)
    build: Callable[[str, Ids, Who], list[Req]]


def _d(ds):
    return f"/v1/datasets/{ds}"


IMPORT_KEYS = {"kind", "fact_id", "entity_id", "note_id", "episode_id", "client_ref", "path", "namespace",
               "superseded_by", "version", "scope_key"}


def _import_bodies(ds: str, ids: Ids, who: Who) -> list[Req]:
    if not ids.export:
        return [Req("POST", "/v1/import", content="", ds=None)]
    header, rows = ids.export[0], [json.loads(line) for line in ids.export[1:]]
    # The same keys (ids, paths, client refs) in the caller's own place, with the words left out: the
    # canaries stay the victim's, so an answer that shows one later is still a leak.
    rescoped = [json.dumps({k: v if k in IMPORT_KEYS else re.sub(r"zq\w+", "imported", v) if isinstance(v, str)
                            else v for k, v in r.items()} | {"project": who.project, "environment": who.env,
                                                           "dataset": ds}) for r in rows]
    own = json.dumps({"kind": "note", "project": who.project, "environment": who.env, "dataset": ds,
                      "note_id": f"n_{uuid.uuid4().hex}", "namespace": "user", "text": "imported",
                      "created_at": "2026-01-01T00:00:00Z", "forgotten_at": None, "superseded_by": None})
    here = ids.site == (who.project, who.env)     # as exported, into this caller's own project: a restore
    refused = None if here else 403
    return [Req("POST", "/v1/import", content="".join(ids.export), wide=here, secret_content=True, expect=refused),
            Req("POST", "/v1/import", content="\n".join([header.strip(), *rescoped]), expect=200),  # same keys, here
            Req("POST", "/v1/import", content="\n".join([header.strip(), own, ids.export[1].strip()]),
                wide=here, secret_content=True, expect=refused)]                             # one row foreign


def _tool(ds, ids):
    reqs = [Req("POST", f"{_d(ds)}/memory_tool", json={"command": {"command": "view", "path": "/memories"},
                                                          "namespace": ns}, ds=ds, write=False)
            for ns in NAMESPACES + ["organization"]]
    for ns, path in ids.core:
        for command in ({"command": "view", "path": path},
                        {"command": "str_replace", "path": path, "old_str": "lighthouse", "new_str": "x"},
                        {"command": "rename", "old_path": path, "new_path": "/memories/moved.md"},
                        {"command": "delete", "path": path}):
            reqs.append(Req("POST", f"{_d(ds)}/memory_tool", json={"command": command, "namespace": ns}, ds=ds,
                            write=command["command"] != "view"))
    return reqs


ROUTES: dict[str, Route] = {
    "POST /v1/memory/add": Route(True, "any", lambda ds, ids, who: [
        Req("POST", "/v1/memory/add", json={"text": "I live in Attackville.", "dataset": ds, "client_ref": ref,
                                            "message_id": mid}, ds=ds)
        for ref, mid in zip(ids.client_refs[:3], ids.message_ids[:3])] or [
        Req("POST", "/v1/memory/add", json={"text": "I live in Attackville.", "dataset": ds}, ds=ds)]),
    "POST /memory/add": Route(True, "any", lambda ds, ids, who: [
        Req("POST", "/memory/add", json={"text": "I like oboes.", "dataset": ds, "client_ref": ref}, ds=ds)
        for ref in ids.client_refs[:2]]),
    "POST /v1/memory/add_turn": Route(True, "any", lambda ds, ids, who: [
        Req("POST", "/v1/memory/add_turn", json={"dataset": ds, "role": "user", "content": "I play the oboe.",
                                                 "client_ref": ref, "message_id": ids.message_ids[0]}, ds=ds)
        for ref in ids.client_refs[-3:]]),
    "GET /v1/memory/status/{id}": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"/v1/memory/status/{i}", site=True) for i in ids.fact_ids + ids.request_ids]),
    "POST /v1/recall": Route(False, "any", lambda ds, ids, who: [
        Req("POST", "/v1/recall", json={"query": Q, "dataset": ds, "limit": 50}, ds=ds)]),
    "GET /v1/datasets/{dataset}/facts": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/facts", params=p, ds=ds)
        for p in [{"include_invalidated": "true", "limit": 100}, {"q": "live"}, {"as_of": "2100-01-01T00:00:00Z"}]
        + [{"entity": e, "include_invalidated": "true"} for e in ids.entities[:2]]
        + [{"message_id": m, "include_invalidated": "true", "order": "anchor"} for m in ids.message_ids]]),
    "DELETE /v1/datasets/{dataset}/facts/{fact_id}": Route(True, "any", lambda ds, ids, who: [
        Req("DELETE", f"{_d(ds)}/facts/{f}", ds=ds) for f in ids.fact_ids]),
    "GET /v1/datasets/{dataset}/entities": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/entities", params=p, ds=ds) for p in ({}, {"type": "PLACE"})]),
    "GET /v1/jobs/open": Route(False, "any", lambda ds, ids, who: [Req("GET", "/v1/jobs/open", site=True)]),
    "POST /v1/jobs/retry_failed": Route(True, "any", lambda ds, ids, who: [
        Req("POST", "/v1/jobs/retry_failed", json={"dataset": ds}, ds=ds),
        Req("POST", "/v1/jobs/retry_failed", json={}, wide=True)]),
    "GET /v1/jobs": Route(False, "any", lambda ds, ids, who: [
        Req("GET", "/v1/jobs", params={"dataset": ds, "limit": 100}, ds=ds),
        Req("GET", "/v1/jobs", params={"status": "failed"}, site=True),
        Req("GET", "/v1/jobs", params={"limit": 100}, site=True)]),
    "DELETE /v1/datasets/{dataset}": Route(True, "key", lambda ds, ids, who: [Req("DELETE", _d(ds), ds=ds)]),
    "POST /v1/datasets/{dataset}/remine": Route(True, "key", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/remine", json={}, ds=ds),
        Req("POST", f"{_d(ds)}/remine", json={"message_ids": ids.message_ids[:2]}, ds=ds)]),
    "GET /v1/datasets": Route(False, "any", lambda ds, ids, who: [
        Req("GET", "/v1/datasets", site=True), Req("GET", "/v1/datasets", params={"q": "victim"}, site=True)]),
    "POST /v1/datasets/{dataset}/messages": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/messages", json={"content": "lighthouse chatter", "message_id": m,
                                                "chat": ids.chats[0] if ids.chats else None}, ds=ds)
        for m in ids.message_ids]),
    "GET /v1/datasets/{dataset}/messages/search": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/messages/search", params=p, ds=ds)
        for p in [{"q": Q, "limit": 100}] + [{"q": Q, "exclude_chat": c} for c in ids.chats[:1]]]),
    "GET /v1/datasets/{dataset}/chats": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/chats", params={"limit": 100}, ds=ds)]),
    "GET /v1/datasets/{dataset}/thread": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/thread", params={"limit": 100, **({"chat": c} if c else {})}, ds=ds)
        for c in [None, *ids.chats]]),
    "GET /v1/datasets/{dataset}/messages/{message_id}": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/messages/{m}", ds=ds) for m in ids.message_ids]),
    "DELETE /v1/datasets/{dataset}/messages/{message_id}": Route(True, "any", lambda ds, ids, who: [
        Req("DELETE", f"{_d(ds)}/messages/{m}", ds=ds) for m in ids.message_ids]),
    "DELETE /v1/datasets/{dataset}/chats/{chat}": Route(True, "any", lambda ds, ids, who: [
        Req("DELETE", f"{_d(ds)}/chats/{c}", ds=ds) for c in ids.chats]),
    "POST /v1/datasets/{dataset}/notes": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/notes", json={"text": "lighthouse attacker note", "namespace": ns}, ds=ds)
        for ns in ("user", "organization", "agent:x")]),
    "POST /v1/datasets/{dataset}/notes/extracted": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/notes/extracted", json={"texts": ["lighthouse a", "lighthouse b"], "namespace": ns},
            ds=ds) for ns in ("user", "organization")]),
    "GET /v1/datasets/{dataset}/notes": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/notes", ds=ds,
            params={"include_forgotten": "true", "limit": 100} | ({"namespace": ns} if ns else {}))
        for ns in [None, *NAMESPACES, "chat:pending", "organization"]]),
    "GET /v1/datasets/{dataset}/notes/search": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/notes/search", params={"q": Q, "limit": 100} | ({"namespace": ns} if ns else {}), ds=ds)
        for ns in (None, "user", "organization", "chat:pending")]),
    "POST /v1/datasets/{dataset}/notes/{note_id}/forget": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/notes/{n}/forget", json=body, ds=ds)
        for n in ids.note_ids for body in ({}, {"superseded_by": ids.note_ids[0]})]),
    "POST /v1/datasets/{dataset}/memory_tool": Route(True, "any", lambda ds, ids, who: _tool(ds, ids)),
    "GET /v1/datasets/{dataset}/core": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/core", params={"namespace": ns}, ds=ds) for ns in NAMESPACES + ["organization"]]),
    "GET /v1/datasets/{dataset}/core/render": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/core/render", ds=ds),
        Req("GET", f"{_d(ds)}/core/render", params={"namespaces": ",".join(NAMESPACES + ["organization"])}, ds=ds)]),
    "GET /v1/datasets/{dataset}/core/file": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/core/file", params={"path": p, "namespace": ns}, ds=ds) for ns, p in ids.core]),
    "PUT /v1/datasets/{dataset}/core/file": Route(True, "any", lambda ds, ids, who: [
        Req("PUT", f"{_d(ds)}/core/file", json={"path": p, "text": "overwritten", "expected_version": v,
                                                "namespace": ns}, ds=ds)
        for ns, p in ids.core for v in (2, None)]),
    "GET /v1/datasets/{dataset}/core/view": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/core/view", params={"path": p, "namespace": ns}, ds=ds)
        for ns, p in ids.core + [(n, "/memories") for n in NAMESPACES + ["organization"]]]),
    "POST /v1/datasets/{dataset}/core/str_replace": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/core/str_replace", json={"path": p, "old": "lighthouse", "new": "x",
                                                        "namespace": ns}, ds=ds) for ns, p in ids.core]),
    "POST /v1/datasets/{dataset}/core/insert": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/core/insert", json={"path": p, "line": 0, "text": "x", "namespace": ns}, ds=ds)
        for ns, p in ids.core]),
    "POST /v1/datasets/{dataset}/core/remove": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/core/remove", json={"path": p, "namespace": ns}, ds=ds) for ns, p in ids.core]),
    "POST /v1/datasets/{dataset}/core/rename": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/core/rename", json={"old_path": p, "new_path": "/memories/moved2.md",
                                                   "namespace": ns}, ds=ds) for ns, p in ids.core]),
    "GET /v1/datasets/{dataset}/core/history": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/core/history", params={"path": p, "namespace": ns}, ds=ds) for ns, p in ids.core]),
    "GET /v1/documents/{scope_key}": Route(False, "key", lambda ds, ids, who: [
        Req("GET", f"/v1/documents/{k}", docs=True) for k in dict.fromkeys(k for k, _ in ids.docs)]),
    "GET /v1/documents/{scope_key}/{path}": Route(False, "key", lambda ds, ids, who: [
        Req("GET", f"/v1/documents/{k}/{p}", docs=True) for k, p in ids.docs]),
    "PUT /v1/documents/{scope_key}/{path}": Route(True, "key", lambda ds, ids, who: [
        Req("PUT", f"/v1/documents/{k}/{p}", json={"text": "overwritten", "expected_version": 1}, docs=True)
        for k, p in ids.docs]),
    "DELETE /v1/documents/{scope_key}/{path}": Route(True, "key", lambda ds, ids, who: [
        Req("DELETE", f"/v1/documents/{k}/{p}", docs=True) for k, p in ids.docs]),
    "POST /v1/documents_purge": Route(True, "key", lambda ds, ids, who: [
        Req("POST", "/v1/documents_purge", wide=True)]),
    "POST /v1/embed_pending": Route(True, "service", lambda ds, ids, who: [
        Req("POST", "/v1/embed_pending", wide=True)]),
    "GET /v1/export": Route(False, "service", lambda ds, ids, who: [
        Req("GET", "/v1/export", params={"dataset": ds, "include_vectors": "true"}, ds=ds),
        Req("GET", "/v1/export", site=True)]),
    "POST /v1/import": Route(True, "service", _import_bodies),
    "POST /v1/tokens": Route(True, "service", lambda ds, ids, who: [
        Req("POST", "/v1/tokens", json={"dataset": ds, "role": r}, ds=ds) for r in ("member", "owner")]),
    # erasures last: what they are allowed to erase (the caller's own rows) the probes above still see
    "GET /v1/datasets/{dataset}/erasures": Route(False, "any", lambda ds, ids, who: [
        Req("GET", f"{_d(ds)}/erasures", params={"limit": 100}, ds=ds)]),
    "GET /v1/erasures": Route(False, "service", lambda ds, ids, who: [
        Req("GET", "/v1/erasures", params={"limit": 100}, site=True)]),
    "POST /v1/datasets/{dataset}/erase/content": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/erase/content", json={"text": "lighthouse", "dry_run": True}, ds=ds),
        Req("POST", f"{_d(ds)}/erase/content", json={"text": "lighthouse", "dry_run": True, "organization": True,
                                                      "document_scopes": [k for k, _ in ids.docs][:2]}, ds=ds, write=False),
        Req("POST", f"{_d(ds)}/erase/content", json={"text": "zq", "organization": True, "dry_run": False,
                                                      "document_scopes": [k for k, _ in ids.docs][:2]}, ds=ds, wide=True),
        Req("POST", f"{_d(ds)}/erase/content", json={"text": "lighthouse", "dry_run": False}, ds=ds)]),
    "POST /v1/datasets/{dataset}/erase/facts/{fact_id}": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/erase/facts/{f}", json={"dry_run": dry}, ds=ds)
        for f in ids.fact_ids for dry in (True, False)]),
    "POST /v1/datasets/{dataset}/erase/messages/{message_id}": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/erase/messages/{m}", json={"dry_run": dry}, ds=ds)
        for m in ids.message_ids for dry in (True, False)]),
    "POST /v1/datasets/{dataset}/erase": Route(True, "any", lambda ds, ids, who: [
        Req("POST", f"{_d(ds)}/erase", json={"dry_run": dry}, ds=ds) for dry in (True, False)]),
    "POST /v1/erasures/compact": Route(True, "service", lambda ds, ids, who: [
        Req("POST", "/v1/erasures/compact", wide=True)]),
}
NOT_PROBED = {"GET /v1/health",    # answers the same to everyone: {"status": "ok", "version": …}
              # project-wide key management: probing it would revoke the sweep's own keys; another project's
              # keys are neither listed nor revocable (tests/server/test_revocation.py)
              "GET /v1/keys", "DELETE /v1/keys/{key_id}"}


def api_routes(app) -> set[str]:
    """Every route of the HTTP API: the OpenAPI document, and the app's routes that are in its schema."""
    from fastapi.routing import APIRoute

    documented = {f"{method.upper()} {path}" for path, item in app.openapi()["paths"].items() for method in item}
    registered = set()

    def walk(routes):
        for r in routes:
            inner = getattr(r, "original_router", None)
            if inner is not None:
                walk(inner.routes)
            elif isinstance(r, APIRoute) and r.include_in_schema:
                registered.update(f"{m} {r.path_format}" for m in r.methods)   # {x:path} → {x}
    walk(app.routes)
    assert registered <= documented, registered - documented
    return documented


# -- running probes -----------------------------------------------------------------------------------------

@dataclass
class Tally:
    probes: Counter = field(default_factory=Counter)     # by kind
    routes: Counter = field(default_factory=Counter)     # by route / method
    leaks: list = field(default_factory=list)
    changes: list = field(default_factory=list)
    wrong: list = field(default_factory=list)            # wrong status / unexpected exception
    sent: list = field(default_factory=list)             # what the callers sent

    def kind(self, who: Who, src: Ids, write: bool, key: str) -> str:
        if who.kind == "forged":
            return "forged or expired credential"
        if who.kind == "member" and write:
            return "member key on a write route"
        if key.endswith("import"):
            return "import with another tenant's rows or keys"
        if src.name == "guessed":
            return "ids guessed by enumeration"
        if src.site and src.site[0] != who.project:
            return "another project"
        if src.site and src.site[1] != who.env:
            return "another environment"
        return "another dataset (its name or its ids)"


def hidden(world: World, who: Who, req_ds: str | None, docs: bool, site: bool) -> set[str]:
    """The strings this answer may not hold: tenants the caller may not read, and, for an answer about
    one dataset (or the documents), every other tenant too."""
    allowed = set(who.read)
    if not site:
        allowed &= {world.by_key((who.project, who.env, "docs" if docs else req_ds)),
                    None if docs else world.by_key((who.project, who.env, ORG))}
    return set().union(*(t.sensitive for name, t in world.tenants.items() if name not in allowed))


def scan(tally: Tally, label: str, sent: list[str], answer: str, secret: set[str]) -> None:
    answer = answer.lower()
    found = sorted(s for s in secret if s.lower() in answer and not any(s.lower() in x for x in sent))
    if found:
        tally.leaks.append((label, found[:3], answer[:300]))


def check_changes(tally: Tally, mem: Memory, world: World, before: dict, who: Who, allowed: set[str],
                  phase: str) -> dict:
    after = snapshot(mem, world)
    for name in world.tenants:
        if name not in allowed and after[name] != before[name]:
            tally.changes.append((who.name, phase, name))
    return after


def http_expected(who: Who, route: Route, req: Req) -> int | None:
    write = route.write if req.write is None else req.write
    if who.kind == "forged":
        return 401
    if who.kind == "member" and (write or route.need == "service"):
        return 403
    if req.expect is not None and who.kind == "service":
        return req.expect
    if who.kind == "user":
        if route.need in ("key", "service"):
            return 403
        if req.ds is not None and req.ds != who.bound:
            return 403
    return None


def run_http(live: LiveServer, world: World, whos: list[Who], tally: Tally) -> None:
    mem = live.memory
    before = snapshot(mem, world)
    for who in whos:
        sources = [world.sources["acme/default/victim"]] if who.kind == "forged" else list(world.sources.values())
        with httpx.Client(base_url=live.url, headers=who.headers, timeout=30) as client:
            for phase in ("dataset", "wide"):
                for key, route in ROUTES.items():
                    seen = set()
                    for src in sources:
                        for ds in who.datasets:
                            reqs = route.build(ds, src, who)
                            for req in reqs[:1] if who.kind == "forged" else reqs:
                                if req.wide != (phase == "wide"):
                                    continue
                                sig = (req.method, req.url, json.dumps(req.params, sort_keys=True),
                                       json.dumps(req.json, sort_keys=True), req.content)
                                if sig in seen:
                                    continue
                                seen.add(sig)
                                send(client, world, who, key, route, req, src, tally)
                before = check_changes(tally, mem, world, before, who,
                                       who.change if phase == "dataset" else who.change | who.wide, phase)


def send(client, world: World, who: Who, key: str, route: Route, req: Req, src: Ids, tally: Tally) -> None:
    template = key.split(" ", 1)[1]
    params = dict(req.params or {})
    smuggled = {"project": src.site[0] if src.site else "other", "environment": src.site[1] if src.site else "prod"}
    params.update(smuggled)                                  # no route may honour these
    body = req.json
    if isinstance(body, dict):
        body = {**smuggled, **({"dataset": "victim"} if "{dataset}" in template else {}), **body}
    r = client.request(req.method, req.url, params=params, json=body if req.content is None else None,
                       content=req.content, headers=None if req.content is None else NDJSON)
    # What the callers have sent so far is theirs to know (an id reused in their own dataset is now also
    # a row of theirs); a victim's canary words are never sent except in imports that land where they were.
    sent = tally.sent
    sent.append(f"{req.url} {json.dumps(params)} {json.dumps(body)} "
                f"{'' if req.secret_content else req.content or ''}".lower())
    label = f"{who.name}: {req.method} {req.url} [{src.name}]"
    tally.probes[tally.kind(who, src, route.write if req.write is None else req.write, key)] += 1
    tally.routes[key] += 1
    want = http_expected(who, route, req)
    if r.status_code >= 500 or (want is not None and r.status_code != want):
        tally.wrong.append((label, r.status_code, want, r.text[:200]))
    scan(tally, label, sent, r.text, hidden(world, who, req.ds, req.docs, req.site))


# -- fixtures -----------------------------------------------------------------------------------------------

@pytest.fixture
def world_server(tmp_path, monkeypatch, hash_embedder_cls):
    """A keyed server (no development mode, a secret for user tokens, no worker: jobs stay as seeded)
    over a store seeded with the victims."""
    monkeypatch.setenv("KENNING_SECRET", SECRET)
    # rates high enough for the sweep's thousands of probes per token (rates have their own tests)
    mem = Memory(f"sqlite:///{tmp_path}/k.db", embedder=hash_embedder_cls(32),
                 settings=Settings(worker_threads=0, rate_limit_user="1000000/minute", rate_limit_key="1000000/minute"))
    for name, key in KEYS.items():
        mem.store.put_api_key(hash_key(key), "other" if name == "other" else "acme",
                              "service" if name == "other" else name)
    world = seed_world(mem)
    with LiveServer(mem) as live:
        yield live, world


def _bearer(key: str, env: str | None = None) -> dict:
    return {"Authorization": f"Bearer {key}"} | ({"X-Kenning-Environment": env} if env else {})


def mint(live, key: str, dataset: str, role: str, env: str | None = None, expires_in: float = 3600) -> str:
    with live.client(key) as c:
        r = c.post("/v1/tokens", json={"dataset": dataset, "role": role, "expires_in": expires_in},
                   headers={"X-Kenning-Environment": env} if env else {})
    assert r.status_code == 200, r.text
    return r.json()["token"]


def attackers(live) -> list[Who]:
    mal_member = mint(live, KEYS["service"], "mallory", "member")
    mal_owner = mint(live, KEYS["service"], "mallory", "owner")
    staging = mint(live, KEYS["service"], "victim", "owner", env="staging")
    other_victim = mint(live, KEYS["other"], "victim", "owner")
    short = mint(live, KEYS["service"], "mallory", "owner", expires_in=0.01)
    time.sleep(0.1)                                   # the short-lived token expires (exp is whole seconds)
    whos = [Who(f"forged: {name}", "forged", "acme", "default", ["victim"], set(), set(), set(), headers)
            for name, headers in forged_credentials(mal_member, short).items()]
    mal = {"mal", "aorg"}
    whos += [
        Who("user token mallory (member)", "user", "acme", "default", ["mallory", "victim"], mal, {"mal"}, {"mal"},
            _bearer(mal_member), bound="mallory"),
        Who("user token mallory (owner)", "user", "acme", "default", ["mallory", "victim"], mal, mal, mal,
            _bearer(mal_owner), bound="mallory"),
        Who("user token mallory + X-Kenning-Environment: prod", "user", "acme", "default", ["mallory", "victim"],
            mal, {"mal"}, {"mal"}, _bearer(mal_member, "prod"), bound="mallory"),
        Who("user token of acme/staging/victim + X-Kenning-Environment: default", "user", "acme", "staging",
            ["victim", "mallory"], set(), set(), set(), _bearer(staging, "default"), bound="victim"),
        Who("member key acme", "member", "acme", "default", ["sam", "victim", "mallory"], ACME_DEFAULT, set(),
            set(), _bearer(KEYS["member"])),
        Who("member key acme + X-Kenning-Environment: prod", "member", "acme", "prod", ["victim"],
            {"env", "eorg", "edoc"}, set(), set(), _bearer(KEYS["member"], "prod")),
        Who("service key acme + X-Kenning-Environment: staging", "service", "acme", "staging", ["victim", "mallory"],
            set(), set(), set(), _bearer(KEYS["service"], "staging")),
        Who("admin key acme + X-Kenning-Environment: staging", "service", "acme", "staging", ["victim"],
            set(), set(), set(), _bearer(KEYS["admin"], "staging")),
        Who("service key acme", "service", "acme", "default", ["sam"], ACME_DEFAULT, {"aorg", "adoc"},
            ACME_DEFAULT, _bearer(KEYS["service"])),
        # last: the other project may change its own victim (same dataset name as acme's)
        Who("user token of other/default/victim", "user", "other", "default", ["victim", "mallory"],
            {"prj", "porg"}, {"prj", "porg"}, {"prj", "porg"}, _bearer(other_victim), bound="victim"),
        Who("service key other", "service", "other", "default", ["oscar", "mallory"], {"prj", "porg", "pdoc"},
            {"porg", "pdoc"}, {"prj", "porg", "pdoc"}, _bearer(KEYS["other"])),
    ]
    return whos


def controls(live, world: World) -> None:
    """The probes mean something: the right principal does see each victim, through the same routes."""
    cases = [(_bearer(KEYS["service"]), "ds"), (_bearer(KEYS["service"], "prod"), "env"),
             (_bearer(KEYS["other"]), "prj")]
    for headers, name in cases:
        with httpx.Client(base_url=live.url, headers=headers, timeout=30) as c:
            facts = c.get("/v1/datasets/victim/facts", params={"include_invalidated": "true"}).text
            notes = c.get("/v1/datasets/victim/notes", params={"include_forgotten": "true"}).text
            src = world.sources[SEEDS[name][2]]
            message = c.get(f"/v1/datasets/victim/messages/{src.message_ids[0]}")
            status = c.get(f"/v1/memory/status/{src.request_ids[0]}")
            assert message.status_code == 200 and status.status_code == 200, (message.text, status.text)
            assert all(f in facts for f in src.fact_ids) and all(n in notes for n in src.note_ids[:4])


# -- the tests ------------------------------------------------------------------------------------------------

def test_the_route_table_covers_every_api_route(world_server):
    live, _ = world_server
    routes = api_routes(live.app) - NOT_PROBED
    assert set(ROUTES) == routes, {"without a probe": sorted(routes - set(ROUTES)),
                                   "probed but gone": sorted(set(ROUTES) - routes)}
    from fastapi.routing import APIRoute

    def pages(routes):
        for r in routes:
            inner = getattr(r, "original_router", None)
            yield from pages(inner.routes) if inner is not None else [r]
    from kenning.server.dashboard import is_page
    from kenning.server.guard import ASSETS, DOCS

    hidden_routes = [r.path for r in pages(live.app.routes) if isinstance(r, APIRoute) and not r.include_in_schema]
    # the dashboard's pages, the documentation pages (the guard's DOCS: their own access rule) and the
    # redirects to static files (ASSETS); never an API route
    assert hidden_routes and all(is_page(path) or path in DOCS or path in ASSETS for path in hidden_routes), hidden_routes


def test_http_isolation_probes(world_server, capsys):
    live, world = world_server
    started = time.monotonic()
    controls(live, world)
    whos = attackers(live)
    tally = Tally()
    run_http(live, world, whos, tally)
    elapsed = time.monotonic() - started
    routes = sorted(tally.routes)
    with capsys.disabled():
        print(f"\nisolation (HTTP): {len(routes)} routes probed, {sum(tally.routes.values())} probes by "
              f"{len(whos)} principals, leaks {len(tally.leaks)}, changes {len(tally.changes)}, "
              f"wrong answers {len(tally.wrong)}, {elapsed:.1f} s")
        for kind, n in sorted(tally.probes.items()):
            print(f"  {n:6d}  {kind}")
    assert set(routes) == set(ROUTES)
    assert not tally.leaks, tally.leaks[:10]
    assert not tally.changes, tally.changes
    assert not tally.wrong, tally.wrong[:10]


def test_open_jobs_count_is_the_callers_own(world_server):
    """A user token learns nothing of other datasets, not even how many turns they have queued."""
    live, world = world_server
    token = mint(live, KEYS["service"], "mallory", "member")
    with live.client(token) as c:
        mine = [j for j in c.get("/v1/jobs", params={"limit": 100}).json() if j["status"] in ("queued", "distilling")]
        assert mine and {j["dataset"] for j in mine} == {"mallory"}
        assert c.get("/v1/jobs/open").json() == {"count": len(mine)}
    with live.client(KEYS["service"]) as c:    # the service key counts its project and environment
        assert c.get("/v1/jobs/open").json() == {"count": 2}      # victim's and mallory's queued turns
    with live.client(KEYS["other"]) as c:
        assert c.get("/v1/jobs/open").json() == {"count": 1}


def test_an_import_that_names_another_tenant_imports_nothing(world_server):
    live, world = world_server
    mem = live.memory
    before = snapshot(mem, world)
    src = world.sources["acme/default/victim"]
    own = json.dumps({"kind": "note", "project": "other", "environment": "default", "dataset": "oscar",
                      "note_id": f"n_{uuid.uuid4().hex}", "namespace": "user", "text": "mine",
                      "created_at": "2026-01-01T00:00:00Z", "forgotten_at": None, "superseded_by": None})
    bodies = ["\n".join([src.export[0].strip(), own, line.strip()]) for line in src.export[1:]]
    with live.client(KEYS["other"]) as c:
        for body in bodies:
            r = c.post("/v1/import", content=body, headers=NDJSON)
            assert r.status_code == 403 and r.json()["error"]["code"] == "PERMISSION_DENIED", r.text
    with live.client(KEYS["service"]) as c:
        r = c.post("/v1/import", content="".join(src.export), headers={"X-Kenning-Environment": "prod", **NDJSON})
        assert r.status_code == 403, r.text                       # acme's key, but another environment
    assert mem.notes.list("oscar", project="other") == []
    assert snapshot(mem, world) == before


def test_imported_rows_never_rewrite_or_move_existing_ones(world_server):
    """Import keeps a row whose key is already stored as it is: rows carrying a victim's keys with other
    words, other times, forgotten or deleted marks, into its own place or into another dataset, change
    nothing of the victim (library and HTTP)."""
    live, world = world_server
    mem = live.memory
    before = snapshot(mem, world)
    src = world.sources["acme/default/victim"]
    header, rows = src.export[0].strip(), [json.loads(line) for line in src.export[1:]]

    def altered(row, **scope):
        """The row with every field but its keys changed to another value of its type."""
        from kenning.transfer import RECORDS, RENAMED

        types = {RENAMED.get(f, f): t for f, t in RECORDS[row["kind"]][1].items()}
        fixed = IMPORT_KEYS | {"project", "environment", "dataset", "subject", "role", "fact_kind", "type", "op"}
        other = {"str": "rewritten", "str?": "rewritten", "time": "2030-01-01T00:00:00Z",
                 "time?": "2030-01-01T00:00:00Z", "float": 0.123, "list": ["rewritten"],
                 "object": {"status": "skipped", "reason": "rewritten"}}
        out = {k: v if k in fixed or k not in types else (not v) if types[k] == "bool" else other.get(types[k], v)
               for k, v in row.items()}
        return json.dumps(out | scope)

    in_place = [header, *(altered(r) for r in rows)]
    counts = mem.import_(in_place)
    assert counts["skipped"] == len(rows) and sum(v for k, v in counts.items() if k != "skipped") == 0, counts
    moved = [header, *(altered(r, dataset="sam") for r in rows)]
    mem.import_(moved)
    with live.client(KEYS["service"]) as c:
        r = c.post("/v1/import", content="\n".join(in_place), headers=NDJSON)
        assert r.status_code == 200 and r.json()["skipped"] == len(rows), r.text
        assert c.post("/v1/import", content="\n".join([header, *(altered(r, dataset="sam2") for r in rows)]),
                      headers=NDJSON).status_code == 200
    assert snapshot(mem, world) == before
    # the moved rows that could move are the dataset's own copies now; ids unique store-wide stayed put
    assert mem.list_facts("sam", include_invalidated=True, project="acme").total == 0
    assert all(n.note_id not in src.note_ids for n in mem.notes.list("sam", include_forgotten=True, project="acme"))


def _seed_named(mem: Memory, key: tuple[str, str, str], extra: dict[str, Tenant]) -> Tenant:
    project, env, dataset = key
    t = Tenant(key)
    kw = _kw(project, env)
    tag = f"del{len(extra)}"
    mem.add(f"I live in {t.canary(tag, 'city')}.", dataset, client_ref=t.canary(tag, "ref"), **kw)
    mem.messages.index(dataset, f"lighthouse {t.canary(tag, 'say')}", **kw)
    mem.notes.save(dataset, f"lighthouse {t.canary(tag, 'note')}", "agent:x", **kw)
    mem.core.write(dataset, f"/memories/{t.canary(tag, 'path')}.md", t.canary(tag, "file"), **kw)
    mem.add_turn(dataset, "user", f"I like {t.canary(tag, 'turn')}.", **kw)
    extra[f"{project}/{env}/{dataset}"] = t
    return t


def test_deleting_a_dataset_touches_no_other(world_server):
    """mem0 #3928 deleted every user: here one dataset goes, and nothing else, not its namesakes in
    another project or environment, not names that contain it or differ in case, not shared memory."""
    live, world = world_server
    mem = live.memory
    extra: dict[str, Tenant] = {}
    for key in [("acme", "default", "sam"), ("acme", "prod", "sam"), ("acme", "staging", "sam"),
                ("other", "default", "sam"), ("acme", "default", "Sam"), ("acme", "default", "samantha"),
                ("acme", "default", "sam2"), ("acme", "default", "xsam")]:
        _seed_named(mem, key, extra)
    every = World({**world.tenants, **extra}, world.sources)
    before = snapshot(mem, every)

    def gone(name: str) -> dict:
        after = snapshot(mem, every)
        changed = {n for n in every.tenants if after[n] != before[n]}
        assert changed == ({name} if name else set()), changed
        if name:
            project, env, dataset = every.tenants[name].key
            assert len(list(mem.export(dataset, project=project, environment=env))) == 1   # a header only
            assert mem.jobs(dataset, project=project, environment=env) == []
        return after

    with live.client(KEYS["service"]) as c:
        for name in ("sa_", "sa%25", "SAM", "sam ", "victim2"):      # a LIKE pattern, another case, no such dataset
            r = c.delete(f"/v1/datasets/{name}")
            assert r.status_code in (200, 422) and (r.status_code == 422 or not any(r.json().values())), r.text
        assert c.delete(f"/v1/datasets/{ORG}").status_code == 422   # the shared organization scope is no dataset
        before = gone(None)
        r = c.delete("/v1/datasets/sam")
        assert r.status_code == 200 and r.json()["facts"] >= 1 and r.json()["jobs"] == 1, r.text
    before = gone("acme/default/sam")
    for headers in (_bearer(KEYS["member"]), _bearer(mint(live, KEYS["service"], "sam", "owner")),
                    _bearer(KEYS["member"], "prod")):
        with httpx.Client(base_url=live.url, headers=headers, timeout=30) as c:
            assert c.delete("/v1/datasets/sam").status_code == 403
            assert c.delete("/v1/datasets/victim").status_code == 403
    before = gone(None)
    with live.client(KEYS["other"]) as c:
        assert c.delete("/v1/datasets/sam").json()["facts"] >= 1
    before = gone("other/default/sam")
    mem.delete_dataset("sam", project="acme", environment="prod")
    before = gone("acme/prod/sam")
    with pytest.raises(KenningError):
        mem.delete_dataset(ORG, project="acme")
    with pytest.raises(KenningError):
        mem.as_user("sam", "owner", project="acme", environment="staging").delete_dataset("sam")
    gone(None)


# -- the library ----------------------------------------------------------------------------------------------

@dataclass
class Call:
    path: str                      # "notes.forget": the method, on a Memory or a UserMemory
    args: tuple
    kwargs: dict
    ds: str | None = None
    docs: bool = False
    site: bool = False
    wide: bool = False


def L(path, *args, ds=None, docs=False, site=False, wide=False, **kwargs) -> Call:
    return Call(path, args, kwargs, ds, docs, site, wide)


def _lib_tool(path, ds, ids):
    calls = [L(path, ds, {"command": "view", "path": "/memories"}, ns, ds=ds) for ns in NAMESPACES + ["organization"]]
    for ns, p in ids.core:
        for command in ({"command": "view", "path": p},
                        {"command": "str_replace", "path": p, "old_str": "lighthouse", "new_str": "x"},
                        {"command": "rename", "old_path": p, "new_path": "/memories/moved.md"},
                        {"command": "delete", "path": p}):
            calls.append(L(path, ds, command, ns, ds=ds))
    return calls


LIBRARY: dict[str, Callable[[str, Ids], list[Call]]] = {
    "add": lambda ds, ids: [L("add", "I live in Attackville.", ds, client_ref=r, message_id=m, ds=ds)
                            for r, m in zip(ids.client_refs[:3], ids.message_ids[:3])],
    "add_turn": lambda ds, ids: [L("add_turn", ds, "user", "I play the oboe.", client_ref=r,
                                   message_id=ids.message_ids[0], ds=ds) for r in ids.client_refs[-3:]],
    "as_user": lambda ds, ids: [L("as_user", ds, "owner", ds=ds)],      # then reads its facts, notes, files
    "datasets": lambda ds, ids: [L("datasets", site=True), L("datasets", "victim", site=True)],
    "delete_dataset": lambda ds, ids: [L("delete_dataset", ds, ds=ds)],
    "delete_fact": lambda ds, ids: [L("delete_fact", ds, f, ds=ds) for f in ids.fact_ids],
    "embed_pending": lambda ds, ids: [L("embed_pending", wide=True)],
    "export": lambda ds, ids: [L("export", ds, include_vectors=True, ds=ds), L("export", site=True)],
    "jobs": lambda ds, ids: [L("jobs", ds, limit=100, ds=ds), L("jobs", None, "failed", site=True)],
    "list_entities": lambda ds, ids: [L("list_entities", ds, ds=ds), L("list_entities", ds, type="PLACE", ds=ds)],
    "list_facts": lambda ds, ids: [L("list_facts", ds, include_invalidated=True, limit=100, ds=ds),
                                   L("list_facts", ds, q="live", ds=ds)]
    + [L("list_facts", ds, entity=e, include_invalidated=True, ds=ds) for e in ids.entities[:2]]
    + [L("list_facts", ds, include_invalidated=True, message_id=m, order="slot", ds=ds) for m in ids.message_ids],
    "memory_tool": lambda ds, ids: _lib_tool("memory_tool", ds, ids),
    "recall": lambda ds, ids: [L("recall", Q, ds, limit=50, ds=ds)],
    "retry_failed": lambda ds, ids: [L("retry_failed", ds, ds=ds), L("retry_failed", wide=True)],
    "remine": lambda ds, ids: [L("remine", ds, ds=ds), L("remine", ds, ids.message_ids[:2], ds=ds)],
    "status": lambda ds, ids: [L("status", memory_id=f, site=True) for f in ids.fact_ids]
    + [L("status", r, site=True) for r in ids.request_ids],
    "notes.forget": lambda ds, ids: [L("notes.forget", ds, n, s, ds=ds) for n in ids.note_ids
                                     for s in (None, ids.note_ids[0])],
    "notes.list": lambda ds, ids: [L("notes.list", ds, ns, True, 100, ds=ds)
                                   for ns in [None, *NAMESPACES, "chat:pending", "organization"]],
    "notes.save": lambda ds, ids: [L("notes.save", ds, "lighthouse attacker note", ns, ds=ds)
                                   for ns in ("user", "organization", "agent:x")],
    "notes.save_extracted": lambda ds, ids: [L("notes.save_extracted", ds, ["lighthouse a", "lighthouse b"], ns, ds=ds)
                                             for ns in ("user", "organization")],
    "notes.search": lambda ds, ids: [L("notes.search", ds, Q, 100, ns, ds=ds)
                                     for ns in (None, "user", "organization", ["chat:pending", "agent:x"])],
    "core.history": lambda ds, ids: [L("core.history", ds, p, ns, ds=ds) for ns, p in ids.core],
    "core.insert": lambda ds, ids: [L("core.insert", ds, p, 0, "x", ns, ds=ds) for ns, p in ids.core],
    "core.list": lambda ds, ids: [L("core.list", ds, ns, ds=ds) for ns in CORE_NAMESPACES + ["organization"]],
    "core.memory_tool": lambda ds, ids: _lib_tool("core.memory_tool", ds, ids),
    "core.read": lambda ds, ids: [L("core.read", ds, p, ns, ds=ds) for ns, p in ids.core],
    "core.remove": lambda ds, ids: [L("core.remove", ds, p, ns, ds=ds) for ns, p in ids.core],
    "core.rename": lambda ds, ids: [L("core.rename", ds, p, "/memories/moved2.md", ns, ds=ds) for ns, p in ids.core],
    "core.render": lambda ds, ids: [L("core.render", ds, ds=ds),
                                    L("core.render", ds, CORE_NAMESPACES + ["organization"], ds=ds)],
    "core.str_replace": lambda ds, ids: [L("core.str_replace", ds, p, "lighthouse", "x", namespace=ns, ds=ds)
                                         for ns, p in ids.core],
    "core.view": lambda ds, ids: [L("core.view", ds, p, ns, ds=ds) for ns, p in ids.core]
    + [L("core.view", ds, "/memories", ns, ds=ds) for ns in CORE_NAMESPACES + ["organization"]],
    "core.write": lambda ds, ids: [L("core.write", ds, p, "overwritten", v, ns, ds=ds)
                                   for ns, p in ids.core for v in (2, None)],
    "messages.get": lambda ds, ids: [L("messages.get", ds, m, ds=ds) for m in ids.message_ids],
    "messages.index": lambda ds, ids: [L("messages.index", ds, "lighthouse chatter", "user",
                                         ids.chats[0] if ids.chats else None, m, ds=ds) for m in ids.message_ids],
    "messages.chats": lambda ds, ids: [L("messages.chats", ds, 100, ds=ds)],
    "messages.thread": lambda ds, ids: [L("messages.thread", ds, c, 100, ds=ds) for c in [None, *ids.chats]],
    "messages.search": lambda ds, ids: [L("messages.search", ds, Q, c, 100, ds=ds) for c in [None, *ids.chats[:1]]],
    "messages.delete": lambda ds, ids: [L("messages.delete", ds, m, ds=ds) for m in ids.message_ids],
    "messages.delete_chat": lambda ds, ids: [L("messages.delete_chat", ds, c, ds=ds) for c in ids.chats],
    "documents.delete": lambda ds, ids: [L("documents.delete", k, p, docs=True) for k, p in ids.docs],
    "documents.list": lambda ds, ids: [L("documents.list", k, docs=True)
                                       for k in dict.fromkeys(k for k, _ in ids.docs)],
    "documents.purge": lambda ds, ids: [L("documents.purge", wide=True)],
    "documents.read": lambda ds, ids: [L("documents.read", k, p, docs=True) for k, p in ids.docs],
    "documents.write": lambda ds, ids: [L("documents.write", k, p, "overwritten", 1, docs=True) for k, p in ids.docs],
    "erase.log": lambda ds, ids: [L("erase.log", ds, 100, ds=ds)],
    "erase.content": lambda ds, ids: [
        L("erase.content", ds, "lighthouse", dry_run=True, ds=ds),
        L("erase.content", ds, "zq", organization=True, document_scopes=[k for k, _ in ids.docs][:2], ds=ds, wide=True),
        L("erase.content", ds, "lighthouse", ds=ds)],
    "erase.fact": lambda ds, ids: [L("erase.fact", ds, f, dry_run=dry, ds=ds) for f in ids.fact_ids for dry in (True, False)],
    "erase.message": lambda ds, ids: [L("erase.message", ds, m, dry_run=dry, ds=ds)
                                      for m in ids.message_ids for dry in (True, False)],
    "erase.dataset": lambda ds, ids: [L("erase.dataset", ds, dry_run=dry, ds=ds) for dry in (True, False)],
}


# import_ writes where its records say; its project= only narrows what it accepts (refusing other tenants'
# records: tests/test_export.py), and the HTTP sweep probes /v1/import with every tenant's export.
NOT_TENANT_METHODS = {"import_"}


def library_methods(mem: Memory) -> set[str]:
    """Every public method of the library that addresses a tenant (takes ``project=``)."""
    out = set()
    for prefix, obj in (("", mem), ("notes.", mem.notes), ("core.", mem.core), ("messages.", mem.messages),
                        ("documents.", mem.documents), ("erase.", mem.erase)):
        for name in dir(obj):
            fn = getattr(obj, name, None)
            if not name.startswith("_") and callable(fn) and not inspect.isclass(fn) \
                    and "project" in inspect.signature(fn).parameters:
                out.add(prefix + name)
    return out - NOT_TENANT_METHODS


def _resolve(api, path: str):
    obj = api
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _text(value) -> str:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    if hasattr(value, "__iter__"):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return repr(value)


def lib_expected_refusal(who: Who, call: Call, kw: dict) -> bool:
    if who.kind != "user":
        return False
    return (call.docs or call.path in ("delete_dataset", "remine") or bool(kw)   # kw: another project or environment
            or (call.ds is not None and call.ds != who.bound))


def call_library(world: World, who: Who, call: Call, src: Ids, tally: Tally) -> bool:
    from kenning import PermissionDenied
    from kenning.permissions import UserMemory

    fn = _resolve(who.api, call.path)
    if fn is None:                                  # e.g. a UserMemory offers no export
        return False
    params = inspect.signature(fn).parameters
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    kw = {k: v for k, v in who.kw.items() if takes_any or k in params}
    label = f"{who.name}: {call.path}{call.args} {call.kwargs} [{src.name}]"
    tally.sent.append(json.dumps([call.args, call.kwargs], default=str).lower())
    tally.probes[tally.kind(who, src, False, call.path)] += 1
    tally.routes[call.path] += 1
    try:
        value = fn(*call.args, **call.kwargs, **kw)
        if isinstance(value, UserMemory):           # as_user: what the bound user then reads
            ds = call.args[0]
            value = [value.list_facts(ds, include_invalidated=True, limit=100), value.notes.list(ds, None, True),
                     value.core.list(ds), value.core.render(ds), value.jobs()]
        answer = _text(value)
        refused = False
    except KenningError as exc:
        answer, refused = f"{type(exc).__name__}: {exc}", isinstance(exc, PermissionDenied)
    except Exception as exc:                        # a crash is a bug, whoever calls
        tally.wrong.append((label, f"{type(exc).__name__}: {exc}"))
        return True
    if lib_expected_refusal(who, call, kw) and not refused:
        tally.wrong.append((label, "not refused", answer[:200]))
    scan(tally, label, tally.sent, answer, hidden(world, who, call.ds, call.docs, call.site))
    return True


def run_library(mem: Memory, world: World, whos: list[Who], tally: Tally) -> None:
    before = snapshot(mem, world)
    for who in whos:
        for phase in ("dataset", "wide"):
            for name, build in LIBRARY.items():
                for src in world.sources.values():
                    for ds in who.datasets:
                        for call in build(ds, src):
                            if call.wide == (phase == "wide"):
                                call_library(world, who, call, src, tally)
            before = check_changes(tally, mem, world, before, who,
                                   who.change if phase == "dataset" else who.change | who.wide, phase)


@pytest.fixture
def world_memory(hash_embedder_cls):
    mem = Memory(":memory:", embedder=hash_embedder_cls(32), settings=Settings(worker_threads=0))
    yield mem, seed_world(mem)
    mem.close()


def library_attackers(mem: Memory) -> list[Who]:
    acme = _kw("acme", "default")
    mal = {"mal", "aorg"}

    def user(dataset, role, **where):
        return mem.as_user(dataset, role, **(acme | where))
    return [
        Who("as_user(mallory, member)", "user", "acme", "default", ["mallory", "victim"], mal, {"mal"}, {"mal"},
            bound="mallory", api=user("mallory", "member")),
        Who("as_user(mallory, owner)", "user", "acme", "default", ["mallory", "victim"], mal, mal, mal,
            bound="mallory", api=user("mallory", "owner")),
        Who("as_user(mallory, owner), environment='prod'", "user", "acme", "default", ["mallory"], mal, set(),
            set(), bound="mallory", api=user("mallory", "owner"), kw={"environment": "prod"}),
        Who("as_user(mallory, owner), project='other'", "user", "acme", "default", ["mallory"], mal, set(), set(),
            bound="mallory", api=user("mallory", "owner"), kw={"project": "other"}),
        Who("as_user(victim, owner) in acme/staging", "user", "acme", "staging", ["victim", "mallory"], set(),
            set(), set(), bound="victim", api=user("victim", "owner", environment="staging")),
        Who("Memory, environment='staging'", "service", "acme", "staging", ["victim", "mallory"], set(), set(),
            set(), api=mem, kw=_kw("acme", "staging")),
        Who("Memory, project='intruder'", "service", "intruder", "default", ["victim", "mallory"], set(), set(),
            set(), api=mem, kw=_kw("intruder", "default")),
        Who("Memory, acme/default, dataset 'sam'", "service", "acme", "default", ["sam"], ACME_DEFAULT,
            {"aorg", "adoc"}, ACME_DEFAULT, api=mem, kw=acme),
        Who("as_user(victim, owner) in other/default", "user", "other", "default", ["victim", "mallory"],
            {"prj", "porg"}, {"prj", "porg"}, {"prj", "porg"}, bound="victim",
            api=user("victim", "owner", project="other")),
    ]


def test_the_library_table_covers_every_tenant_method():
    mem = Memory(":memory:", embedder=None, settings=Settings(worker_threads=0))
    try:
        methods = library_methods(mem)
    finally:
        mem.close()
    assert set(LIBRARY) == methods, {"without a probe": sorted(methods - set(LIBRARY)),
                                     "probed but gone": sorted(set(LIBRARY) - methods)}


def test_library_isolation_probes(world_memory, capsys):
    mem, world = world_memory
    started = time.monotonic()
    whos = library_attackers(mem)
    tally = Tally()
    run_library(mem, world, whos, tally)
    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\nisolation (library): {len(tally.routes)} methods probed, {sum(tally.routes.values())} calls by "
              f"{len(whos)} principals, leaks {len(tally.leaks)}, changes {len(tally.changes)}, "
              f"wrong answers {len(tally.wrong)}, {elapsed:.1f} s")
        for kind, n in sorted(tally.probes.items()):
            print(f"  {n:6d}  {kind}")
    assert set(tally.routes) == set(LIBRARY)
    assert not tally.leaks, tally.leaks[:10]
    assert not tally.changes, tally.changes
    assert not tally.wrong, "\n".join(map(str, tally.wrong[:10]))
