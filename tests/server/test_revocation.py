"""Nothing outlives its revocation: development mode ends with the first key, revoking a key ends its
tokens and sign-ins, tokens are short-lived, and the dashboard's sign-in resists login CSRF.

Each test reproduces an attack from the security review (issue 16, items 4, 7 and 9) on a real server.
"""
from __future__ import annotations

import re
import time

import httpx
from live_server import LiveServer

from kenning import Memory
from kenning.server.auth import DEV_RECHECK_SECONDS, hash_key
from test_dashboard import sign_in


def test_development_mode_ends_when_a_key_is_created_against_the_running_server(tmp_path):
    db = f"sqlite:///{tmp_path}/k.db"
    with LiveServer(Memory(db)) as live, live.client() as anon:
        assert anon.post("/v1/memory/add", json={"text": "I live in Oslo.", "dataset": "victim"}).status_code == 200
        with Memory(db, embedder=None) as other_process:          # `kenning keys create` on the same store
            other_process.store.put_api_key(hash_key("kn_default_new"), "default", "service")
        created = time.monotonic()
        while (r := anon.delete("/v1/datasets/victim")).status_code != 401:   # refused within DEV_RECHECK_SECONDS
            assert r.status_code == 200 and time.monotonic() - created < DEV_RECHECK_SECONDS + 0.5
            with Memory(db, embedder=None) as again:                 # (what a refused window let through, back)
                again.add("I live in Oslo.", "victim")
            time.sleep(0.05)
        assert r.json()["error"]["code"] == "UNAUTHORIZED"
        assert anon.get("/datasets/victim").status_code == 303                  # the dashboard asks to sign in
        with live.client("kn_default_new") as keyed:
            assert keyed.get("/v1/datasets/victim/facts").json()["facts"]      # nothing was lost


def test_revoking_a_key_ends_the_key_its_tokens_and_its_sign_ins(keyed_server):
    live, store = keyed_server, keyed_server.memory.store
    store.put_api_key(hash_key("kn_acme_ops"), "acme", "service", "ops")
    with live.client(live.keys["service"]) as svc, live.client("kn_acme_ops") as ops:
        minted = svc.post("/v1/tokens", json={"dataset": "sam"}).json()
        service_id = hash_key(live.keys["service"])[:16]
        assert minted["key_id"] == service_id
        listed = ops.get("/v1/keys").json()
        assert {k["key_id"] for k in listed} == {service_id, hash_key(live.keys["member"])[:16],
                                                 hash_key("kn_acme_ops")[:16]}       # acme's keys, no other's
        assert all("hash" not in k and "key" not in k for k in listed)
        with httpx.Client(base_url=live.url, timeout=30) as browser:
            assert sign_in(browser, live.keys["service"]).status_code == 303
            assert browser.get("/datasets/sam").status_code == 200
            with live.client(minted["token"]) as user:
                assert user.get("/v1/datasets/sam/facts").status_code == 200
                with live.client(live.keys["other"]) as other:                   # another project's key
                    assert other.delete(f"/v1/keys/{service_id}").status_code == 404
                with live.client(live.keys["member"]) as member:                 # a member key reads only
                    assert member.delete(f"/v1/keys/{service_id}").status_code == 403
                revoked = ops.delete(f"/v1/keys/{service_id}")
                assert revoked.status_code == 200 and revoked.json()["revoked_at"]
                assert user.get("/v1/datasets/sam/facts").status_code == 401     # the token died with its key
                assert "revoked" in user.get("/v1/datasets/sam/facts").json()["error"]["message"]
            assert svc.get("/v1/datasets").status_code == 401
            assert browser.get("/datasets/sam").status_code == 303               # so did the sign-in
        assert ops.delete(f"/v1/keys/{service_id}").status_code == 404
        assert {k["key_id"] for k in ops.get("/v1/keys", params={"include_revoked": True}).json()} >= {service_id}


def test_tokens_are_short_lived_by_default_and_capped(keyed_server, monkeypatch):
    with keyed_server.client(keyed_server.keys["service"]) as svc:
        default = svc.post("/v1/tokens", json={"dataset": "sam"}).json()
        assert abs(default["expires_at"] - (time.time() + 3600)) < 60
        day = svc.post("/v1/tokens", json={"dataset": "sam", "expires_in": 86_400})
        assert day.status_code == 200
        month = svc.post("/v1/tokens", json={"dataset": "sam", "expires_in": 30 * 86_400})
        assert month.status_code == 422 and "at most 86400 seconds" in month.json()["error"]["message"]


def test_a_token_minted_in_development_mode_ends_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("KENNING_SECRET", "test-secret-0123456789abcdef")
    with LiveServer(Memory(f"sqlite:///{tmp_path}/k.db")) as live, live.client() as anon:
        token = anon.post("/v1/tokens", json={"dataset": "sam"}).json()["token"]
        with live.client(token) as user:
            assert user.get("/v1/datasets/sam/facts").status_code == 200
            live.memory.store.put_api_key(hash_key("kn_default_k"), "default", "service")
            time.sleep(DEV_RECHECK_SECONDS)
            r = user.get("/v1/datasets/sam/facts")
            assert r.status_code == 401 and "development mode" in r.json()["error"]["message"]


def _login_form(client: httpx.Client) -> str:
    return re.search(r'name="login_token" value="([^"]+)"', client.get("/login").text).group(1)


def test_another_site_cannot_sign_a_browser_into_its_own_account(keyed_server):
    """Login CSRF: the attacker holds a valid key (their own) and wants the victim's browser signed in with it."""
    live, attacker_key = keyed_server, keyed_server.keys["other"]
    with httpx.Client(base_url=live.url, timeout=30) as victim:
        cross_site = victim.post("/login", data={"key": attacker_key}, headers={"Origin": "https://evil.example"})
        assert cross_site.status_code == 403 and "kenning_session" not in cross_site.headers.get("set-cookie", "")
        no_token = victim.post("/login", data={"key": attacker_key})          # no Origin (an old browser)
        assert no_token.status_code == 403
        with httpx.Client(base_url=live.url, timeout=30) as attacker:         # a token from the attacker's own visit
            stolen = _login_form(attacker)
        _login_form(victim)                                                   # the victim has a nonce of its own
        replay = victim.post("/login", data={"key": attacker_key, "login_token": stolen})
        assert replay.status_code == 403 and "kenning_session" not in victim.cookies
        assert sign_in(victim, live.keys["service"]).status_code == 303       # the real form still works


def test_the_session_cookie_is_no_key_and_signing_out_ends_it(keyed_server):
    live = keyed_server
    with httpx.Client(base_url=live.url, timeout=30) as browser:
        r = sign_in(browser, live.keys["service"], "/datasets/sam")
        cookie = browser.cookies["kenning_session"]
        assert live.keys["service"] not in r.headers["set-cookie"] and cookie.startswith("ks_")
        assert live.memory.store.find_session(cookie) is None                 # the store keeps only its hash
        page = browser.get("/datasets/sam").text
        token = re.search(r'name="form_token" value="([^"]+)"', page).group(1)
        assert browser.post("/logout", data={"form_token": token}).status_code == 303
    with httpx.Client(base_url=live.url, timeout=30, cookies={"kenning_session": cookie}) as replay:
        assert replay.get("/datasets/sam").status_code == 303                 # the copied cookie is dead
    with httpx.Client(base_url=live.url, timeout=30, cookies={"kenning_session": live.keys["service"]}) as raw:
        assert raw.get("/datasets/sam").status_code == 303                    # a raw key is no session


def test_the_session_cookie_is_secure_over_https(keyed_server):
    """Behind a TLS proxy on loopback (uvicorn trusts its X-Forwarded-Proto) the cookie is Secure."""
    live = keyed_server
    with httpx.Client(base_url=live.url, timeout=30) as browser:
        token = _login_form(browser)
        r = browser.post("/login", data={"key": live.keys["service"], "login_token": token},
                         headers={"X-Forwarded-Proto": "https"})
        assert r.status_code == 303 and "secure" in r.headers["set-cookie"].lower()
        plain = sign_in(browser, live.keys["service"])
        assert "secure" not in plain.headers["set-cookie"].lower()
