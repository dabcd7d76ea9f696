"""The kenning service: FastAPI app, authentication, error mapping."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from ..config import Settings
from ..memory import Memory
from .app import create_app
from .auth import Auth

from .connections import uvicorn_options

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def server_secret(settings: Settings, environ=None) -> str:
    """KENNING_SECRET, or a secret kept (0600) under KENNING_HOME so tokens survive restarts."""
    env = os.environ if environ is None else environ
    if env.get("KENNING_SECRET"):
        return env["KENNING_SECRET"]
    path = Path(settings.home) / "server-secret"
    if not path.exists():
        # Made with their final modes (never 0644 then chmod-ed): no moment in which another user can read it;
        # written whole under a private name, then linked into place, so racing starts all read one secret.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = path.with_name(f".server-secret.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32))
        try:
            os.link(draft, path)
        except FileExistsError:   # another process made it first: use theirs
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


def build(db: str | None = None, host: str = "127.0.0.1", memory: Memory | None = None):
    """(app, memory, auth) for a store; development mode only on loopback, and only while no key exists."""
    mem = memory or Memory(db)
    auth = Auth(mem.store, server_secret(mem.settings), host in LOOPBACK, mem.settings.project,
                mem.settings.environment, session_seconds=mem.settings.session_seconds)
    return create_app(mem, auth), mem, auth


__all__ = ["build", "create_app", "Auth", "uvicorn_options"]
