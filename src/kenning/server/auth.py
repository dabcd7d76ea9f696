"""Who is calling: API keys per project (stored hashed), user tokens, dashboard sessions, development mode.

A service or admin key acts as the service principal of its project; a member
key may only read. A user token, minted by a service key and signed with the
server secret, binds the caller to one dataset with a role (the permission
model of kenning.permissions); it names the key that minted it, and stops
working when that key is revoked. Without any key configured, a server on
loopback runs in single-user development mode: every request is the service
principal of the default project. The first key created ends development mode
for the running server, for good, within DEV_RECHECK_SECONDS (the store is asked
at most that often, so a request costs no store read for it).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from ..errors import InputError
from .errors import Unauthorized

KEY_ROLES = ("service", "admin", "member")
DEV_RECHECK_SECONDS = 1.0   # how often development mode looks for a first key


@dataclass(frozen=True)
class Principal:
    project: str
    environment: str
    kind: str                 # service | member | user
    dataset: str | None = None
    role: str | None = None   # a user's role in the organization
    key_id: str | None = None  # the API key this principal acts through (None in development mode)

    @property
    def can_write(self) -> bool:
        return self.kind in ("service", "user")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key(project: str) -> str:
    return f"kn_{project}_{secrets.token_urlsafe(24)}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    """Signed user tokens: base64url(payload).base64url(HMAC-SHA256(secret, payload))."""

    def __init__(self, secret: str):
        if len(secret) < 16:
            raise InputError("the server secret must be at least 16 characters")
        self._secret = secret.encode()

    def mint(self, project: str, environment: str, dataset: str, role: str, expires_in: float,
             key_id: str | None = None) -> tuple[str, int]:
        exp = int(time.time() + expires_in)
        payload = _b64(json.dumps({"p": project, "e": environment, "d": dataset, "r": role, "k": key_id,
                                   "exp": exp}, separators=(",", ":")).encode())
        return f"ut_{payload}.{self._sign(payload)}", exp

    def verify(self, token: str) -> Principal:
        try:
            payload, signature = token[3:].split(".")
            # as bytes: compare_digest raises TypeError on a str with non-ASCII characters (a 500, not a 401)
            if not hmac.compare_digest(signature.encode(), self._sign(payload).encode()):
                raise ValueError("bad signature")
            claims = json.loads(_unb64(payload))
        except (ValueError, json.JSONDecodeError) as exc:
            raise Unauthorized("invalid user token") from exc
        if claims.get("exp", 0) < time.time():
            raise Unauthorized("user token expired; mint a new one")
        return Principal(claims["p"], claims["e"], "user", claims["d"], claims["r"], claims.get("k"))

    def expires_at(self, token: str) -> float:
        """When a token (already verified) runs out, as a Unix time."""
        return float(json.loads(_unb64(token[3:].split(".")[0]))["exp"])

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._secret, payload.encode(), hashlib.sha256).digest())


class Auth:
    """Resolves each request's principal. ``dev_mode`` is where development mode is allowed (a
    loopback server); it is in force only while the store holds no key."""

    def __init__(self, store, secret: str | None, dev_mode: bool, project: str, environment: str,
                 session_seconds: float = 12 * 3600):
        self.store = store
        self.tokens = Tokens(secret) if secret else None
        self._dev_allowed = dev_mode
        self._dev_checked = float("-inf")
        self.session_seconds = session_seconds
        self.project, self.environment = project, environment
        self._form_key = hashlib.sha256(b"kenning-form:" + secret.encode()).digest() if secret \
            else secrets.token_bytes(32)

    @property
    def dev_mode(self) -> bool:
        """Whether development mode is in force now: allowed, and no key existed at the last look (at most
        DEV_RECHECK_SECONDS ago). Once a key is seen it stays off (revoking every key later does not reopen
        the server; restart it for that)."""
        if self._dev_allowed and time.monotonic() - self._dev_checked >= DEV_RECHECK_SECONDS:
            self._dev_checked = time.monotonic()
            if self.store.count_api_keys() > 0:
                self._dev_allowed = False
        return self._dev_allowed

    def form_token(self, credential: str | None) -> str:
        """The token a dashboard form must carry: bound to the caller's credential, unknowable to
        another site (which could make a browser post a form, but cannot read a page to copy it)."""
        return _b64(hmac.new(self._form_key, (credential or "").encode(), hashlib.sha256).digest())

    def principal(self, authorization: str | None, environment: str | None = None) -> Principal:
        env = environment or self.environment
        if not authorization:
            if self.dev_mode:
                return Principal(self.project, env, "service")
            raise Unauthorized("missing credentials: send Authorization: Bearer <api key or user token>")
        scheme, _, credential = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credential:
            raise Unauthorized("use Authorization: Bearer <api key or user token>")
        return self.credential(credential, env)

    def credential(self, credential: str, environment: str | None = None) -> Principal:
        """The principal of an API key or a user token."""
        env = environment or self.environment
        if credential.startswith("ut_"):
            if self.tokens is None:
                raise Unauthorized("this server has no secret configured, so it accepts no user tokens")
            p = self.tokens.verify(credential)
            self._check_key(p.key_id)
            return p
        found = self.store.find_api_key(hash_key(credential))
        if found is None:
            raise Unauthorized("unknown API key")
        return Principal(found.project, env, "member" if found.role == "member" else "service", key_id=found.key_id)

    def _check_key(self, key_id: str | None) -> None:
        """A token or session stands only while the key that granted it does."""
        if key_id is None:
            if not self.dev_mode:
                raise Unauthorized("this token or session was granted in development mode, which has ended "
                                   "(an API key exists); sign in or mint a new one with a key")
        elif not self.store.api_key_live(key_id):
            raise Unauthorized("the API key that granted this token or session was revoked")

    # -- dashboard sessions ----------------------------------------------------------------------
    def open_session(self, p: Principal, expires_at: float | None = None) -> str:
        """A new sign-in for ``p``: a random id (the cookie), kept server-side by its hash."""
        session = f"ks_{secrets.token_urlsafe(32)}"
        until = time.time() + self.session_seconds
        if expires_at is not None:
            until = min(until, expires_at)
        claims = {"p": p.project, "e": p.environment, "kind": p.kind, "d": p.dataset, "r": p.role}
        self.store.put_session(hash_key(session), claims, p.key_id,
                               datetime.fromtimestamp(until, timezone.utc))
        return session

    def session(self, session: str, environment: str | None = None) -> Principal:
        found = self.store.find_session(hash_key(session)) if session.startswith("ks_") else None
        if found is None:
            raise Unauthorized("signed out or the session expired; sign in again")
        claims, key_id = found
        self._check_key(key_id)
        env = claims["e"] if claims["kind"] == "user" else environment or claims["e"]
        return Principal(claims["p"], env, claims["kind"], claims["d"], claims["r"], key_id)

    def close_session(self, session: str) -> None:
        self.store.delete_session(hash_key(session))
