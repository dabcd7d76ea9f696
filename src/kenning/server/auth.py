"""Who is calling: API keys per project (stored hashed), user tokens, local development mode.

A service or admin key acts as the service principal of its project; a member
key may only read. A user token, minted by a service key and signed with the
server secret, binds the caller to one dataset with a role (the permission
model of kenning.permissions). Without any key configured, a server on
loopback runs in single-user development mode: every request is the service
principal of the default project.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from ..errors import InputError
from .errors import Unauthorized

KEY_ROLES = ("service", "admin", "member")


@dataclass(frozen=True)
class Principal:
    project: str
    environment: str
    kind: str                 # service | member | user
    dataset: str | None = None
    role: str | None = None   # a user's role in the organization

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

    def mint(self, project: str, environment: str, dataset: str, role: str, expires_in: float) -> tuple[str, int]:
        exp = int(time.time() + expires_in)
        payload = _b64(json.dumps({"p": project, "e": environment, "d": dataset, "r": role, "exp": exp},
                                  separators=(",", ":")).encode())
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
        return Principal(claims["p"], claims["e"], "user", claims["d"], claims["r"])

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._secret, payload.encode(), hashlib.sha256).digest())


class Auth:
    def __init__(self, store, secret: str | None, dev_mode: bool, project: str, environment: str):
        self.store = store
        self.tokens = Tokens(secret) if secret else None
        self.dev_mode = dev_mode
        self.project, self.environment = project, environment
        self._form_key = hashlib.sha256(b"kenning-form:" + secret.encode()).digest() if secret \
            else secrets.token_bytes(32)

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
        if credential.startswith("ut_"):
            if self.tokens is None:
                raise Unauthorized("this server has no secret configured, so it accepts no user tokens")
            return self.tokens.verify(credential)
        found = self.store.find_api_key(hash_key(credential))
        if found is None:
            raise Unauthorized("unknown API key")
        project, role = found
        return Principal(project, env, "member" if role == "member" else "service")
