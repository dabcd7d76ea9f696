"""The dashboard against a penetration test's findings, each on a real server (loopback, a store on disk):

- 9: every read goes through the API's permission gate (a user token sees only its own dataset's facts,
  the delete confirmation included), and a fact page answers alike for an id of another dataset and for
  an id that exists nowhere;
- 14: a query parameter is capped (the API's limit on search words in a URL), answered with a clear page;
  no error page shows a file path or a traceback;
- 15: the entity graph draws at most MAX_ENTITIES entities, says so, and links to the full list.
"""
from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from kenning.errors import StoreError
from kenning.model import Entity, Fact, Scope
from kenning.server.auth import hash_key
from kenning.server.dashboard.graph import MAX_ENTITIES
from kenning.server.schema import GET_QUERY_CHARS
from kenning.store.base import KEY_ID_CHARS

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def form_token(html: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', html).group(1)


def alert(html: str) -> str:
    """The message of an error page."""
    return re.search(r'role="alert">(.*?)</p>', html, re.S).group(1)


@pytest.fixture
def two_users(keyed_server):
    """alice and bob in project acme; a service client, alice's user token and each one's fact ids."""
    live = keyed_server
    with live.client(live.keys["service"]) as admin:
        for text, dataset in (("I live in Berlin.", "alice"), ("I love hiking.", "alice"),
                              ("I live in Paris.", "bob"), ("I work at Globex.", "bob")):
            assert admin.post("/v1/memory/add", json={"text": text, "dataset": dataset}).status_code == 200
        token = admin.post("/v1/tokens", json={"dataset": "alice"}).json()["token"]
    ids = {d: {f.object: f.fact_id for f in live.memory.list_facts(d, project="acme").facts} for d in ("alice", "bob")}
    assert set(ids["bob"]) == {"paris", "globex"} and set(ids["alice"]) == {"berlin", "hiking"}
    live.token, live.ids = token, ids
    return live


# -- finding 9: the gate ---------------------------------------------------------------------------------

def test_a_user_token_cannot_see_another_users_facts_on_the_delete_confirmation(two_users):
    live = two_users
    bob = list(live.ids["bob"].values())
    with live.client(live.token) as alice:
        token = form_token(alice.get("/datasets/alice").text)
        # the API refuses alice the same facts
        assert alice.delete(f"/v1/datasets/bob/facts/{bob[0]}").status_code == 403
        r = alice.post("/datasets/bob/facts/delete", data={"form_token": token, "fact_id": bob})
        assert r.status_code == 403, r.text[:300]
        assert "paris" not in r.text.lower() and "globex" not in r.text.lower()
        r = alice.post(f"/datasets/bob/facts/{bob[0]}/delete", data={"form_token": token})   # the one-button form
        assert r.status_code == 403 and "paris" not in r.text.lower()
        # bob's ids under alice's own dataset: not hers, so nothing to show (and nothing deleted)
        r = alice.post("/datasets/alice/facts/delete", data={"form_token": token, "fact_id": bob})
        assert r.status_code == 200 and "paris" not in r.text.lower() and "globex" not in r.text.lower()
        # her own facts are shown to be confirmed
        r = alice.post("/datasets/alice/facts/delete", data={"form_token": token,
                                                             "fact_id": list(live.ids["alice"].values())})
        assert r.status_code == 200 and "Delete 2 facts?" in r.text and "hiking" in r.text.lower()
        # other confirmations refuse another user's dataset before asking, as the API refuses the change
        assert alice.post("/datasets/bob/notes/n_x/forget", data={"form_token": token}).status_code == 403
        assert alice.post("/datasets/bob/core/delete", data={"form_token": token,
                                                             "path": "/memories/a.md"}).status_code == 403
    assert {f.object for f in live.memory.list_facts("bob", project="acme").facts} == {"paris", "globex"}


def test_a_fact_page_answers_alike_for_another_datasets_fact_and_for_none(two_users):
    live = two_users
    bob = live.ids["bob"]["paris"]

    def pages(client, dataset):
        """The fact page of bob's fact and of an id that exists nowhere, in ``dataset``, ids blanked."""
        out = []
        for fact_id in (bob, "f_nope"):
            r = client.get(f"/datasets/{dataset}/facts/{fact_id}")
            out.append((r.status_code, r.text.replace(fact_id, "<id>")))
        return out

    with live.client(live.token) as alice:
        # in another user's dataset: refused whether the id exists or not (no 403-versus-404 oracle)
        there, nowhere = pages(alice, "bob")
        assert there[0] == 403 and there == nowhere
        assert "paris" not in there[1].lower()
        # in her own dataset: an id of bob's is as unknown as one that exists nowhere
        there, nowhere = pages(alice, "alice")
        assert there[0] == 404 and there == nowhere
        assert "paris" not in there[1].lower()
        assert alice.get(f"/datasets/alice/facts/{live.ids['alice']['berlin']}").status_code == 200
    # a service key of another project: acme's ids are unknown to it, never a different answer
    with live.client(live.keys["other"]) as other:
        there, nowhere = pages(other, "bob")
        assert there[0] == 404 and there == nowhere


# -- finding 14: capped query parameters, error pages without paths ----------------------------------------

def test_a_query_parameter_over_the_cap_is_refused_with_a_clear_page(two_users):
    live = two_users
    path = live.memory.store.location
    long = "x" * 60_000
    pages = [("/", {"q": long}), ("/datasets/alice", {"q": long}), ("/datasets/alice/recall", {"q": long}),
             ("/datasets/alice", {"as_of": long}), ("/datasets/alice", {"kind": long}),
             ("/datasets/alice/entities", {"entity": long}), ("/datasets/alice/core", {"path": long}),
             ("/datasets/alice/conversations/view", {"chat": long}), ("/jobs", {"dataset": long}),
             ("/datasets/alice", {long: "1"}), ("/", {"q": "y" * (GET_QUERY_CHARS + 1)})]
    with live.client(live.keys["service"]) as admin:
        for url, params in pages:
            r = admin.get(url, params=params)
            assert r.status_code == 422, (url, list(params), r.status_code)
            assert r.headers["content-type"].startswith("text/html") and "<html" in r.text
            message = alert(r.text)
            assert "INVALID_INPUT" in message and f"at most {GET_QUERY_CHARS:,}" in message, message
            assert "xxxxxxxxxx" not in r.text and path not in r.text and "Traceback" not in r.text
        for url in ("/datasets/" + long, "/datasets/alice/facts/" + long, "/datasets/alice/messages/" + long):
            r = admin.get(url)                                  # nor is a long part of the address echoed
            assert r.status_code == 422 and f"at most {GET_QUERY_CHARS:,}" in alert(r.text)
            assert "xxxxxxxxxx" not in r.text and len(r.text) < 5_000
        # at the cap, the pages work (the store takes that many characters)
        for url in ("/", "/datasets/alice", "/datasets/alice/recall"):
            r = admin.get(url, params={"q": "y" * GET_QUERY_CHARS})
            assert r.status_code == 200, (url, r.text[:300])


def test_no_error_page_shows_a_file_path_or_a_traceback(two_users, monkeypatch):
    live = two_users
    path = live.memory.store.location
    assert path.endswith("k.db")

    def broken(*args, **kwargs):
        raise StoreError(f"SQLite error on {path}: disk I/O error")

    def crashed(*args, **kwargs):
        raise RuntimeError(f"unexpected failure reading {path}")

    with live.client(live.keys["service"]) as admin:
        for failure in (broken, crashed):
            monkeypatch.setattr(live.memory.store, "datasets", failure)
            r = admin.get("/")
            assert r.status_code == 500 and "<html" in r.text
            assert path not in r.text and "k.db" not in r.text and "Traceback" not in r.text
            assert "the server log has the details" in alert(r.text)
            monkeypatch.undo()


# -- finding 15: the graph is capped ------------------------------------------------------------------------

def test_the_entity_page_draws_at_most_the_cap_and_says_so(keyed_server):
    live = keyed_server
    n = 1_500
    scope = Scope("acme", "default", "crowd")
    store = live.memory.store
    with store.transaction(scope):
        for i in range(n):
            e = Entity(entity_id=f"e_{i:05d}", name=f"thing {i}", type="THING", created_at=T)
            store.insert_entity(scope, e, None)
            for j in range(1 + (i % 3 == 0)):          # every third entity is named twice: the most connected
                f = Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate="owns" if j else "likes", object=e.name,
                         object_is_entity=True, entity_type="THING", text=f"user likes {e.name}",
                         valid_at=T + timedelta(minutes=i), created_at=T)
                store.insert_fact(scope, f, f"{f.text}.", None)
    with httpx.Client(base_url=live.url, timeout=120,
                      headers={"Authorization": f"Bearer {live.keys['service']}"}) as admin:
        page = admin.get("/datasets/crowd/entities", params={"view": "history"}).text
    svg = re.search(r"<svg[^>]*class=\"graph\".*?</svg>", page, re.S).group(0)
    drawn = re.findall(r'<a [^>]*class="node type-thing[^"]*" data-key="([^"]+)"', svg)
    assert 0 < len(drawn) <= MAX_ENTITIES
    assert all(int(key[2:]) % 3 == 0 for key in drawn)                  # the most connected ones
    assert f"Showing the {len(drawn):,} most connected of {n:,} entities" in svg
    assert re.search(r'<a class="graph-note" href="#entities">', svg)      # the link to the full list
    assert len(re.findall(r'<tr data-entity="thing \d+"', page)) == n   # which lists every entity


# -- erasing for good: the same gate and the same form checks as every change ------------------------------

def erase_form(client, url: str, token: str, **fields) -> httpx.Response:
    """Both steps of an erasure: the dry run's page, then its confirmation (the preview digest it carries)."""
    asked = client.post(url, data={"form_token": token, **fields})
    assert asked.status_code == 200, asked.text[:300]
    digest = re.search(r'name="preview" value="([^"]+)"', asked.text).group(1)
    return client.post(url, data={"form_token": token, "confirmed": "yes", "preview": digest, **fields})


def test_a_key_that_may_only_read_cannot_erase_and_sees_only_the_log(two_users):
    live = two_users
    berlin = live.ids["alice"]["berlin"]
    with live.client(live.keys["service"]) as admin:       # something in the log to read
        token = form_token(admin.get("/datasets/alice/erase").text)
        assert erase_form(admin, "/datasets/alice/erase/content", token, text="hiking").status_code == 303
    with live.client(live.keys["member"]) as member:
        page = member.get("/datasets/alice/erase")
        assert page.status_code == 200 and 'data-kind="content"' in page.text   # reading the log is allowed
        token = form_token(page.text)
        for url, fields in ((f"/datasets/alice/erase/facts/{berlin}", {}), ("/datasets/alice/erase/messages/x", {}),
                            ("/datasets/alice/erase/content", {"text": "Berlin"}), ("/datasets/alice/erase/dataset",
                                                                                 {"confirm_name": "alice"})):
            for step in ({}, {"confirmed": "yes", "preview": "0" * 32}):      # the dry run and the erasure alike
                r = member.post(url, data={"form_token": token, **fields, **step})
                assert r.status_code == 403 and "may only read" in alert(r.text), (url, step)
                assert "<html" in r.text and "berlin" not in r.text.lower()
    assert {f.object for f in live.memory.list_facts("alice", project="acme").facts} == {"berlin"}
    assert [e.kind for e in live.memory.erase.log("alice", project="acme").erasures] == ["content"]


def test_the_log_names_who_erased_and_a_user_token_erases_only_its_own_dataset(two_users):
    live = two_users
    bob, alice_berlin = live.ids["bob"]["paris"], live.ids["alice"]["berlin"]
    with live.client(live.token) as alice:
        token = form_token(alice.get("/datasets/alice").text)
        for url in (f"/datasets/bob/erase/facts/{bob}", "/datasets/bob/erase/content", "/datasets/bob/erase/dataset"):
            r = alice.post(url, data={"form_token": token, "text": "Paris"})
            assert r.status_code == 403 and "paris" not in r.text.lower(), url
        assert erase_form(alice, f"/datasets/alice/erase/facts/{alice_berlin}", token).status_code == 303
        assert alice.get("/datasets/bob/erase").status_code == 403          # nor read another user's log
    with live.client(live.keys["service"]) as admin:
        token = form_token(admin.get("/datasets/bob/erase").text)
        assert erase_form(admin, "/datasets/bob/erase/content", token, text="Globex").status_code == 303
        log = admin.get("/datasets/bob/erase").text
    key_id = hash_key(live.keys["service"])[:KEY_ID_CHARS]          # the key's public id, never the key
    [by_admin] = [e.by for e in live.memory.erase.log("bob", project="acme").erasures]
    assert by_admin == f"key:{key_id}" and f">key:{key_id}<" in log and live.keys["service"] not in log
    [by_alice] = [e.by for e in live.memory.erase.log("alice", project="acme").erasures]
    assert by_alice == f"user:alice via key:{key_id}"               # her token was minted by the service key
    assert {f.object for f in live.memory.list_facts("bob", project="acme").facts} == {"paris"}
    assert {f.object for f in live.memory.list_facts("alice", project="acme").facts} == {"hiking"}
    [hers], [his] = (live.memory.erase.log(d, project="acme").erasures for d in ("alice", "bob"))
    with live.client(live.token) as alice:            # the project's log page: hers only, as the API answers
        page = alice.get("/erasures").text
        assert hers.erasure_id in page and his.erasure_id not in page
        assert alice.get("/erasures?dataset=bob").status_code == 403
    with live.client(live.keys["service"]) as admin:
        page = admin.get("/erasures").text
        assert hers.erasure_id in page and his.erasure_id in page


def test_an_erase_form_without_the_form_token_or_from_another_site_erases_nothing(two_users):
    live = two_users
    berlin = live.ids["alice"]["berlin"]
    with live.client(live.keys["service"]) as admin:
        token = form_token(admin.get("/datasets/alice/erase").text)
        asked = admin.post("/datasets/alice/erase/content", data={"form_token": token, "text": "Berlin"})
        digest = re.search(r'name="preview" value="([^"]+)"', asked.text).group(1)
        confirm = {"confirmed": "yes", "preview": digest, "text": "Berlin"}
        for url, extra in (("/datasets/alice/erase/content", {}), (f"/datasets/alice/erase/facts/{berlin}", {}),
                           ("/datasets/alice/erase/dataset", {"confirm_name": "alice"})):
            for forged in ({}, {"form_token": "x" + token}):                                   # none, or a wrong one
                r = admin.post(url, data={**confirm, **extra, **forged})
                assert r.status_code == 403 and "stale or came from elsewhere" in alert(r.text), url
            r = admin.post(url, data={**confirm, **extra, "form_token": token},
                           headers={"Origin": "http://evil.example"})
            assert r.status_code == 403 and "evil.example" in r.text, url                          # another site
    with live.client(live.token) as alice:    # a token is bound to its credential: the admin's fails for alice
        r = alice.post("/datasets/alice/erase/content", data={**confirm, "form_token": token})
        assert r.status_code == 403 and "stale or came from elsewhere" in alert(r.text)
    with httpx.Client(base_url=live.url, timeout=30) as anonymous:                               # not signed in
        r = anonymous.post("/datasets/alice/erase/content", data={**confirm, "form_token": token})
        assert r.status_code == 403 and "stale or came from elsewhere" in alert(r.text)
    assert {f.object for f in live.memory.list_facts("alice", project="acme").facts} == {"berlin", "hiking"}
    assert live.memory.erase.log("alice", project="acme").total == 0
