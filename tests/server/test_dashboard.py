"""The dashboard over HTTP (no browser): pages, permissions, curation, forged forms, large datasets.

A real server on loopback; the browser tests (test_dashboard_browser.py) drive the same pages in Chromium.
"""
from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from kenning.model import Fact, Scope


def seed(mem, dataset="sam"):
    mem.add("I live in Berlin.", dataset, at="2026-07-01T10:00:00Z", message_id="m1")
    mem.add("I moved to Lisbon last month.", dataset, at="2026-09-03T10:00:00Z", message_id="m2")
    mem.add("I love hiking.", dataset, at="2026-09-05T10:00:00Z", message_id="m3")
    mem.notes.save(dataset, "Prefers morning meetings")
    mem.memory_tool(dataset, {"command": "create", "path": "/memories/prefs.md", "file_text": "likes tea\n"})
    mem.memory_tool(dataset, {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "likes tea",
                              "new_str": "likes green tea"})


def form_token(html: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', html).group(1)


def sign_in(client: httpx.Client, key: str, next: str | None = None) -> httpx.Response:
    """Sign in as a browser does: load the form (its nonce cookie and token), then post it."""
    page = client.get("/login").text
    token = re.search(r'name="login_token" value="([^"]+)"', page).group(1)
    return client.post("/login", data={"key": key, "login_token": token, **({"next": next} if next else {})})


def fact_ids(html: str) -> dict[str, str]:
    return {obj: fid for fid, obj in re.findall(r'data-fact-id="([^"]+)" data-predicate="[^"]*" data-object="([^"]*)"',
                                                html)}


@pytest.fixture
def dev(dev_server):
    seed(dev_server.memory)
    with dev_server.client() as c:
        yield dev_server, c


def test_every_page_renders_in_development_mode(dev):
    live, c = dev
    pages = ["/", "/datasets/sam", "/datasets/sam?as_of=2026-08-01", "/datasets/sam/history",
             "/datasets/sam/entities", "/datasets/sam/entities?entity=berlin", "/datasets/sam/notes",
             "/datasets/sam/core", "/datasets/sam/core?path=/memories/prefs.md",
             "/datasets/sam/recall?q=where+does+the+user+live", "/datasets/sam/messages/m1", "/jobs",
             "/jobs?status=failed", "/login", "/datasets/sam/timeline", "/datasets/sam/timeline?as_of=2026-08-01",
             "/datasets/sam/conversations", "/datasets/sam/conversations/view?none=1",
             "/datasets/sam?view=history&sort=anchor&kind=attribute&type=PLACE&q=lisbon",
             "/datasets/sam/entities?view=history", "/datasets/sam/erase"]
    for page in pages:
        r = c.get(page)
        assert r.status_code == 200, (page, r.text[:300])
        assert r.headers["content-type"].startswith("text/html") and "</html>" in r.text
    assert c.get("/static/htmx.min.js").status_code == 200
    assert "/static/style.css" in c.get("/").text and "cdn" not in c.get("/").text.lower()


def test_facts_as_of_history_and_diff_show_what_the_library_returns(dev):
    live, c = dev
    mem = live.memory
    assert set(fact_ids(c.get("/datasets/sam").text)) == {f.object for f in mem.list_facts("sam").facts}
    before = c.get("/datasets/sam", params={"as_of": "2026-07-15"}).text
    assert set(fact_ids(before)) == {f.object for f in mem.list_facts("sam", as_of="2026-07-15").facts} == {"berlin"}
    assert "Delete fact:" not in before and 'id="bulk"' not in before      # the past is read-only
    history = c.get("/datasets/sam/history").text
    assert re.search(r'data-state="superseded" data-object="berlin"', history)
    assert re.search(r'class="successor">lives in: lisbon<', history)
    diff = c.get("/datasets/sam/core", params={"path": "/memories/prefs.md", "a": 1, "b": 2}).text
    assert '<span class="del">-likes tea</span>' in diff and '<span class="add">+likes green tea</span>' in diff
    recall = c.get("/datasets/sam/recall", params={"q": "Where does the user live?"}).text
    assert "lives in: lisbon" in recall and 'data-kind="fact"' in recall


def test_datasets_page_counts_and_search(dev):
    live, c = dev
    live.memory.add("I play the cello.", "alex")
    page = c.get("/").text
    assert re.search(r'data-dataset="sam">.*?</tr>', page, re.S)
    row = re.search(r'data-dataset="sam">(.*?)</tr>', page, re.S).group(1)
    assert re.findall(r'class="num"[^>]*>(\d+)<', row) == ["2", "3", "1", "3"]     # live facts, entities, notes, messages
    found = c.get("/", params={"q": "ale"}).text
    assert 'data-dataset="alex"' in found and 'data-dataset="sam"' not in found


def test_curation_deletes_forgets_and_retries_through_the_api(dev):
    live, c = dev
    page = c.get("/datasets/sam").text
    token, hiking = form_token(page), fact_ids(page)["hiking"]
    asked = c.post(f"/datasets/sam/facts/{hiking}/delete", data={"form_token": token, "back": "/datasets/sam"})
    assert asked.status_code == 200 and "Delete 1 fact?" in asked.text               # confirmed first, nothing gone
    assert "hiking" in {f.object for f in live.memory.list_facts("sam").facts}
    r = c.post(f"/datasets/sam/facts/{hiking}/delete", data={"form_token": token, "back": "/datasets/sam",
                                                             "confirmed": "yes"})
    assert r.status_code == 303 and r.headers["location"] == "/datasets/sam"
    assert "hiking" not in {f.object for f in live.memory.list_facts("sam").facts}
    assert re.search(r'data-state="deleted" data-object="hiking"', c.get("/datasets/sam/history").text)
    note = live.memory.notes.list("sam")[0]
    asked = c.post(f"/datasets/sam/notes/{note.note_id}/forget", data={"form_token": token})
    assert asked.status_code == 200 and "Forget this note?" in asked.text and live.memory.notes.list("sam")
    assert c.post(f"/datasets/sam/notes/{note.note_id}/forget",
                  data={"form_token": token, "confirmed": "yes"}).status_code == 303
    assert live.memory.notes.list("sam") == []
    r = c.post("/jobs/retry", data={"form_token": token, "dataset": "sam"})
    assert r.status_code == 303 and "retried=0" in r.headers["location"]


def test_forged_forms_change_nothing(dev):
    live, c = dev
    page = c.get("/datasets/sam").text
    token, lisbon = form_token(page), fact_ids(page)["lisbon"]
    url = f"/datasets/sam/facts/{lisbon}/delete"
    assert c.post(url, data={}).status_code == 403                                  # no form token
    assert c.post(url, data={"form_token": "x" + token}).status_code == 403          # a wrong one
    assert c.post(url, data={"form_token": token}, headers={"Origin": "http://evil.example"}).status_code == 403
    assert "lisbon" in {f.object for f in live.memory.list_facts("sam").facts}
    r = c.post(url, data={"form_token": token, "back": "//evil.example/x", "confirmed": "yes"})   # no open redirect
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_errors_are_pages_not_json(dev):
    live, c = dev
    r = c.get("/datasets/sam/messages/nope")
    assert r.status_code == 404 and "NOT_FOUND" in r.text and "<html" in r.text
    assert c.get("/datasets/bad%20name").status_code == 422
    assert c.get("/", params={"offset": "-1"}).status_code == 422
    assert c.get("/datasets/sam", params={"as_of": "not a date"}).status_code == 422
    assert c.get("/v1/datasets/sam/facts", params={"limit": 0}).json()["error"]["code"] == "INVALID_INPUT"


def test_with_keys_the_dashboard_asks_for_one_and_obeys_its_role(keyed_server):
    live = keyed_server
    with live.client(live.keys["service"]) as admin:
        admin.post("/v1/memory/add", json={"text": "I live in Berlin.", "dataset": "sam"})
        admin.post("/v1/memory/add", json={"text": "I live in Paris.", "dataset": "alex"})
        user_token = admin.post("/v1/tokens", json={"dataset": "sam"}).json()["token"]
    with httpx.Client(base_url=live.url, timeout=30) as anon:
        r = anon.get("/datasets/sam")
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
        assert sign_in(anon, "kn_wrong").status_code == 401
        r = sign_in(anon, live.keys["member"], "/datasets/sam")
        assert r.status_code == 303 and r.headers["location"] == "/datasets/sam"
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = anon.get("/datasets/sam").text                      # the cookie is kept by the client
        berlin = fact_ids(page)["berlin"]
        r = anon.post(f"/datasets/sam/facts/{berlin}/delete", data={"form_token": form_token(page)})
        assert r.status_code == 403 and "may only read" in r.text   # a member key reads only
        r = anon.post("/datasets/sam/core/save", data={"form_token": form_token(page), "path": "/memories/a.md",
                                                       "text": "x", "expected_version": "0"})
        assert r.status_code == 403                                 # nor edit a core file or a note
        r = anon.post("/datasets/sam/notes/save", data={"form_token": form_token(page), "text": "x"})
        assert r.status_code == 403
    with httpx.Client(base_url=live.url, timeout=30) as user:
        sign_in(user, user_token)
        listed = user.get("/").text
        assert 'data-dataset="sam"' in listed and 'data-dataset="alex"' not in listed
        assert user.get("/datasets/alex").status_code == 403
        assert user.get("/datasets/alex/history").status_code == 403
        for own in ("/datasets/sam/conversations", "/datasets/sam/conversations/view?none=1",
                    "/datasets/sam/timeline", "/datasets/sam/entities"):
            assert user.get(own).status_code == 200, own                 # a user token reads its own pages
        assert user.get("/datasets/alex/conversations").status_code == 403
        page = user.get("/datasets/sam").text
        token = form_token(page)
        assert user.post("/logout", data={"form_token": token}).status_code == 303
        assert user.get("/datasets/sam").status_code == 303           # signed out
    with httpx.Client(base_url=live.url, timeout=30, headers={"Authorization": f"Bearer {live.keys['other']}"}) as other:
        assert 'data-dataset="sam"' not in other.get("/").text      # another project sees nothing of acme


def test_a_dataset_of_10000_facts_pages_quickly(dev):
    live, c = dev
    store, scope = live.memory.store, Scope("default", "default", "big")
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    with store.transaction(scope):
        for i in range(10_000):
            f = Fact(fact_id=f"f_{uuid.uuid4().hex}", predicate="likes", object=f"thing {i}",
                     text=f"user likes thing {i}", valid_at=start + timedelta(minutes=i), created_at=start)
            store.insert_fact(scope, f, f"{f.text}.", None)
    t = time.perf_counter()
    page = c.get("/datasets/big").text
    first = time.perf_counter() - t
    assert len(fact_ids(page)) == 100 and "10000 live facts" in page and 'rel="next" href="?offset=100"' in page
    last = c.get("/datasets/big", params={"offset": 9_900}).text
    assert "thing 9999" in last and 'rel="prev"' in last and 'rel="next"' not in last
    assert 'data-dataset="big"' in c.get("/").text
    print(f"\n10,000-fact dataset: first page in {first * 1000:.0f} ms")


def test_a_failed_job_shows_its_error_and_the_retry_button_recovers_it():
    from live_server import LiveServer

    from kenning import Memory
    from kenning.errors import ExtractionError
    from kenning.extract.base import Extractor
    from kenning.extract.parse import ParseExtractor

    class Flaky(Extractor):
        name, fail = "flaky", True

        def extract(self, text, *, at, context=None, known_entities=None):
            if self.fail:
                raise ExtractionError("the model answered with malformed JSON twice")
            return ParseExtractor().extract(text, at=at)

    extractor = Flaky()
    with LiveServer(Memory(":memory:", extractor=extractor)) as live, live.client() as c:
        r = live.memory.add_turn("sam", "user", "I live in Oslo.")
        live.memory.flush(timeout=30)
        page = c.get("/jobs", params={"status": "failed"}).text
        assert f'data-request-id="{r.request_id}" data-status="failed"' in page
        assert "malformed JSON twice" in page and "I live in Oslo." in page
        extractor.fail = False
        reply = c.post("/jobs/retry", data={"form_token": form_token(page), "dataset": "sam"})
        assert reply.status_code == 303 and "retried=1" in reply.headers["location"]
        live.memory.flush(timeout=30)
        assert f'data-request-id="{r.request_id}" data-status="done"' in c.get("/jobs").text
        assert [f.object for f in live.memory.list_facts("sam").facts] == ["oslo"]


def test_an_as_of_date_means_the_end_of_that_day(dev):
    live, c = dev
    # Berlin was said at 10:00 on 2026-07-01: live as of that day, not as of the day before
    that_day = c.get("/datasets/sam", params={"as_of": "2026-07-01"}).text
    assert set(fact_ids(that_day)) == {"berlin"}
    assert "live as of 1 Jul 2026, 23:59 UTC" in that_day
    assert fact_ids(c.get("/datasets/sam", params={"as_of": "2026-06-30"}).text) == {}
    # a full time is taken as it is
    assert fact_ids(c.get("/datasets/sam", params={"as_of": "2026-07-01T09:00:00Z"}).text) == {}


def test_a_browser_gets_an_error_page_and_an_api_client_json(dev):
    live, c = dev
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    for path in ("/datasets/sam/nope", "/nope"):
        r = c.get(path, headers=browser)
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html"), path
        assert "NOT_FOUND" in r.text and f"there is no page at {path}" in r.text and "</html>" in r.text
    r = c.delete("/datasets/sam", headers=browser)
    assert r.status_code == 405 and "METHOD_NOT_ALLOWED" in r.text and "<html" in r.text and r.headers["allow"]
    api = c.get("/v1/nope", headers=browser)           # the API answers JSON whoever asks
    assert api.status_code == 404 and api.json()["error"]["code"] == "NOT_FOUND"
    assert c.get("/nope").json()["error"]["code"] == "NOT_FOUND"   # no HTML asked for: JSON
    wrong = c.delete("/v1/recall")                       # every method of the path, routers included
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert r.headers["allow"] == "GET"


def test_a_core_file_is_deleted_only_once_confirmed_and_a_stale_edit_changes_nothing(dev):
    live, c = dev
    page = c.get("/datasets/sam/core", params={"path": "/memories/prefs.md"}).text
    token = form_token(page)
    assert 'name="expected_version" value="2"' in page                 # the editor says what it was opened at
    stale = c.post("/datasets/sam/core/save", data={"form_token": token, "path": "/memories/prefs.md",
                                                    "text": "likes coffee\n", "expected_version": "1"})
    assert stale.status_code == 409 and "likes coffee" in stale.text and "is at version 2, not 1" in stale.text
    assert live.memory.core.read("sam", "/memories/prefs.md").content == "likes green tea\n"
    new = c.post("/datasets/sam/core/save", data={"form_token": token, "path": "/memories/prefs.md",
                                                  "text": "likes tea\n", "expected_version": "0"})
    assert new.status_code == 409                                    # "new file" over an existing one: refused
    form = {"form_token": token, "path": "/memories/prefs.md", "namespace": "user"}
    asked = c.post("/datasets/sam/core/delete", data=form)
    assert asked.status_code == 200 and "Delete /memories/prefs.md?" in asked.text
    assert live.memory.core.list("sam")
    done = c.post("/datasets/sam/core/delete", data={**form, "confirmed": "yes"})
    assert done.status_code == 303 and live.memory.core.list("sam") == []


def test_a_fact_page_tells_its_story_and_the_message_leads_to_its_turn(dev):
    live, c = dev
    berlin = next(f for f in live.memory.list_facts("sam", include_invalidated=True).facts if f.object == "berlin")
    page = c.get(f"/datasets/sam/facts/{berlin.fact_id}").text
    assert 'class="successor">Lisbon<' in page and "superseded" in page
    assert re.findall(r'<li class="state-(\w+)" data-fact-id', page) == ["superseded", "live"]
    r = c.get("/datasets/sam/messages/m2/in-context", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].endswith("?none=1#msg-m2")
    assert 'id="msg-m2"' in c.get(r.headers["location"]).text
    assert c.get("/datasets/sam/facts/f_nope").status_code == 404
    assert c.get("/datasets/sam", params={"sort": "sideways"}).status_code == 422


# -- erasing for good: previewed, then confirmed ---------------------------------------------------------

def preview_digest(html: str) -> str:
    return re.search(r'name="preview" value="([^"]+)"', html).group(1)


def counts(html: str) -> dict[str, int]:
    """A dry run's receipt as the confirmation page shows it: kind -> count."""
    return {k: int(n) for k, n in re.findall(r'<tr data-kind="([^"]+)"><th scope="row">[^<]*</th><td class="num">(\d+)<',
                                            html)}


def dataset_pages(c, dataset: str = "sam") -> dict[str, str]:
    """Every page of the dataset that shows what it holds, read now (the messages kept included)."""
    base = f"/datasets/{dataset}"
    urls = [base, f"{base}?view=history", f"{base}/history", f"{base}/timeline", f"{base}/entities",
            f"{base}/entities?view=history", f"{base}/conversations", f"{base}/conversations/view?none=1",
            f"{base}/notes", f"{base}/core", f"{base}/core?path=/memories/prefs.md", f"{base}/erase",
            f"{base}/recall?q=where+does+the+user+live", "/erasures"]
    out = {}
    for url in urls:
        r = c.get(url)
        assert r.status_code == 200, (url, r.status_code)
        out[url] = r.text
    for msg in re.findall(r'data-message-id="([^"]+)"', out[f"{base}/conversations/view?none=1"]):
        r = c.get(f"{base}/messages/{msg}")
        assert r.status_code == 200
        out[f"{base}/messages/{msg}"] = r.text
    for fid in re.findall(r'data-fact-id="([^"]+)"', out[f"{base}/history"]):
        out[f"{base}/facts/{fid}"] = c.get(f"{base}/facts/{fid}").text
    return out


def holding(pages: dict[str, str], word: str) -> list[str]:
    return [url for url, html in pages.items() if word.lower() in html.lower()]


def test_erasing_by_content_shows_the_dry_run_first_then_no_page_shows_the_text(dev):
    live, c = dev
    mem = live.memory
    mem.add("Berlin is lovely in spring. How long have you lived there?", "sam", role="assistant",
            at="2026-07-01T10:00:05Z", message_id="m1a")
    mem.notes.save("sam", "Flew to Berlin for the conference")
    mem.memory_tool("sam", {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "likes green tea",
                            "new_str": "likes green tea\nwas in Berlin in July"})
    before = dataset_pages(c)
    assert len(holding(before, "berlin")) >= 8                   # facts, history, time line, entities, messages ...
    page = c.get("/datasets/sam/erase").text
    token = form_token(page)
    assert 'id="erase-text"' in page and '<label for="erase-text">' in page
    asked = c.post("/datasets/sam/erase/content", data={"form_token": token, "text": "Berlin"})
    assert asked.status_code == 200 and "A dry run: nothing has been erased yet." in asked.text
    assert counts(asked.text) == {"facts": 1, "messages": 2, "notes": 1, "entities": 1, "core_files": 1,
                                  "core_file_versions": 1}
    assert re.search(r'id="erase-facts">\s*<li data-fact-id="[^"]+"><span class="pred">lives in</span>: <strong>Berlin',
                     asked.text)
    assert 'data-message-id="m1"' in asked.text and 'data-message-id="m1a"' in asked.text
    assert "Flew to Berlin for the conference" in asked.text and 'id="confirm-erase"' in asked.text
    # the preview erased nothing and logged nothing
    still = dataset_pages(c)
    assert still.keys() == before.keys() and holding(still, "berlin") == holding(before, "berlin")
    assert mem.erase.log("sam").total == 0 and mem.messages.get("sam", "m1").content == "I live in Berlin."
    # a confirmation without the preview it confirms shows the dry run again, and erases nothing
    again = c.post("/datasets/sam/erase/content", data={"form_token": token, "text": "Berlin", "confirmed": "yes"})
    assert again.status_code == 409 and 'id="erase-changed"' in again.text and mem.erase.log("sam").total == 0
    odd = c.post("/datasets/sam/erase/content", data={"form_token": token, "text": "Berlin", "confirmed": "yes",
                                                      "preview": "é" * 32})
    assert odd.status_code == 409 and mem.erase.log("sam").total == 0
    done = c.post("/datasets/sam/erase/content", data={"form_token": token, "text": "Berlin", "confirmed": "yes",
                                                       "preview": preview_digest(asked.text)})
    assert done.status_code == 303 and done.headers["location"].startswith("/datasets/sam/erase?done=er_")
    assert "berlin" not in done.headers["location"].lower()
    after = dataset_pages(c)
    assert holding(after, "berlin") == []                        # no page of the dataset shows it any more
    assert c.get("/datasets/sam/messages/m1").status_code == 404
    # what else the dataset holds still shows
    assert set(fact_ids(after["/datasets/sam"])) == {"lisbon", "hiking"}
    assert "I moved to Lisbon last month." in after["/datasets/sam/conversations/view?none=1"]
    assert "Prefers morning meetings" in after["/datasets/sam/notes"]
    assert "likes green tea" in after["/datasets/sam/core?path=/memories/prefs.md"]
    assert 'data-name="hiking"' in after["/datasets/sam/entities"]
    # the log: ids, counts, who, when; never the text
    log = c.get(done.headers["location"]).text
    erasure = mem.erase.log("sam").erasures[0]
    assert f'id="erasure-{erasure.erasure_id}"' in log and 'id="erased-notice"' in log
    row = re.search(rf'id="erasure-{erasure.erasure_id}".*?</tr>', log, re.S).group(0)
    assert "1 fact, 2 messages, 1 note" in row and ">development<" in row and "m1, m1a" in row
    assert "berlin" not in log.lower()


def test_erasing_a_fact_or_a_message_is_its_own_confirmed_action_beside_delete(dev):
    live, c = dev
    mem = live.memory
    page = c.get("/datasets/sam").text
    token, ids = form_token(page), fact_ids(page)
    hiking = ids["hiking"]
    row = re.search(rf'<tr id="fact-{hiking}".*?</tr>', page, re.S).group(0)
    assert 'action="/datasets/sam/facts/delete"' in row and f'action="/datasets/sam/erase/facts/{hiking}"' in row
    assert 'class="danger erase"' in row and "Erase permanently" in row     # distinct from the delete beside it
    erase_form = re.search(r'<form[^>]*erase/facts[^>]*>', row).group(0)
    assert "data-confirm" not in erase_form                 # no one-click dialog: the dry run is the confirmation
    assert f'action="/datasets/sam/erase/facts/{hiking}"' in c.get(f"/datasets/sam/facts/{hiking}").text
    asked = c.post(f"/datasets/sam/erase/facts/{hiking}", data={"form_token": token, "back": "/datasets/sam"})
    assert asked.status_code == 200 and counts(asked.text) == {"facts": 1, "messages": 1, "entities": 1}
    assert "I love hiking." in asked.text and "hiking" in {f.object for f in mem.list_facts("sam").facts}
    done = c.post(f"/datasets/sam/erase/facts/{hiking}", data={"form_token": token, "back": "/datasets/sam",
                                                                "confirmed": "yes", "preview": preview_digest(asked.text)})
    assert done.status_code == 303
    every = mem.list_facts("sam", include_invalidated=True).facts
    assert "hiking" not in {f.object for f in every}         # unlike a delete, the history keeps nothing
    assert "hiking" not in c.get("/datasets/sam/history").text and c.get("/datasets/sam/messages/m3").status_code == 404
    # a message, from its page or its turn in the transcript
    transcript = c.get("/datasets/sam/conversations/view?none=1").text
    assert 'action="/datasets/sam/erase/messages/m2"' in transcript
    assert 'action="/datasets/sam/erase/messages/m2"' in c.get("/datasets/sam/messages/m2").text
    asked = c.post("/datasets/sam/erase/messages/m2", data={"form_token": token})
    assert asked.status_code == 200 and counts(asked.text) == {"facts": 1, "messages": 1, "entities": 1}
    assert "I moved to Lisbon last month." in asked.text and mem.messages.get("sam", "m2")
    done = c.post("/datasets/sam/erase/messages/m2", data={"form_token": token, "confirmed": "yes",
                                                           "preview": preview_digest(asked.text)})
    assert done.status_code == 303
    pages = dataset_pages(c)
    assert holding(pages, "lisbon") == [] and holding(pages, "hiking") == []
    assert set(fact_ids(pages["/datasets/sam"])) == {"berlin"}     # what Lisbon had superseded is live again
    assert [e.kind for e in mem.erase.log("sam").erasures] == ["message", "fact"]


def test_erasing_the_whole_dataset_shows_its_counts_and_asks_for_its_name(dev):
    live, c = dev
    mem = live.memory
    mem.add("I play the cello.", "alex")
    token = form_token(c.get("/datasets/sam/erase").text)
    asked = c.post("/datasets/sam/erase/dataset", data={"form_token": token})
    assert asked.status_code == 200
    assert counts(asked.text) == {"facts": 3, "entities": 3, "messages": 3, "notes": 1, "core_files": 1,
                                  "core_file_versions": 2}
    assert '<label for="confirm-name">' in asked.text and mem.list_facts("sam").total == 2
    form = {"form_token": token, "confirmed": "yes", "preview": preview_digest(asked.text)}
    wrong = c.post("/datasets/sam/erase/dataset", data={**form, "confirm_name": "alex"})
    assert wrong.status_code == 422 and 'id="erase-problem"' in wrong.text and mem.list_facts("sam").total == 2
    done = c.post("/datasets/sam/erase/dataset", data={**form, "confirm_name": "sam"})
    assert done.status_code == 303
    pages = dataset_pages(c)
    for word in ("berlin", "lisbon", "hiking", "morning meetings", "green tea"):
        assert holding(pages, word) == [], word
    assert "0 live facts" in pages["/datasets/sam"]
    assert [e.kind for e in mem.erase.log("sam").erasures] == ["dataset"]     # the log keeps the entry
    assert 'data-kind="dataset"' in pages["/datasets/sam/erase"]
    assert [f.object for f in mem.list_facts("alex").facts] == ["cello"]      # another dataset untouched
    assert "cello" in c.get("/datasets/alex").text
    # gone from the list of datasets, the erasure is still found in the project's log, which links to it
    assert 'href="/datasets/sam"' not in c.get("/").text
    every = c.get("/erasures")
    [entry] = mem.erase.log().erasures
    assert every.status_code == 200 and f'data-erasure-id="{entry.erasure_id}"' in every.text
    assert 'href="/datasets/sam/erase">sam</a>' in every.text and 'href="/erasures" aria-current="page"' in every.text
    assert "Nothing erased from alex yet." in c.get("/erasures?dataset=alex").text
