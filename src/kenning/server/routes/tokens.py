"""User tokens and API keys: a service key mints tokens bound to a dataset and role, and lists and
revokes its project's keys (revoking a key ends the tokens and sign-ins it granted)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from ...errors import InputError, NotFound, PermissionDenied
from ...permissions import role_permissions
from ..access import Api
from ..auth import Principal
from ..bodies import KeyInfo, TokenBody, TokenResult


def routes(api: Api) -> APIRouter:
    router = APIRouter()
    settings = api.memory.settings

    @router.post("/v1/tokens", response_model=TokenResult)
    def mint_token(b: TokenBody, p: Principal = Depends(api.service)):
        if api.auth.tokens is None:
            raise PermissionDenied("this server has no secret (KENNING_SECRET), so it cannot mint tokens", "ai.admin")
        role_permissions(b.role, "r", "a")  # a known role, or InputError
        api.memory.services.scope(b.dataset, p.project, p.environment)
        expires_in = settings.token_seconds if b.expires_in is None else b.expires_in
        if expires_in > settings.token_max_seconds:
            raise InputError(f"expires_in: at most {settings.token_max_seconds:g} seconds on this server "
                             "(KENNING_TOKEN_MAX_SECONDS); mint a new token when it runs out")
        token, exp = api.auth.tokens.mint(p.project, p.environment, b.dataset, b.role, expires_in, p.key_id)
        return TokenResult(token=token, expires_at=exp, key_id=p.key_id)

    @router.get("/v1/keys", response_model=list[KeyInfo])
    def list_keys(include_revoked: bool = Query(False), p: Principal = Depends(api.service)):
        """The project's API keys (their ids, never the keys)."""
        return [KeyInfo(**vars(k)) for k in api.auth.store.list_api_keys(p.project, include_revoked)]

    @router.delete("/v1/keys/{key_id}", response_model=KeyInfo)
    def revoke_key(key_id: str, p: Principal = Depends(api.service)):
        """Revoke one of the project's keys: it, and every token and sign-in it granted, stop working."""
        if not api.auth.store.revoke_api_key(key_id[:64], p.project):
            raise NotFound(f"no live API key {key_id[:64]!r} in project {p.project!r}")
        return next(KeyInfo(**vars(k)) for k in api.auth.store.list_api_keys(p.project, True) if k.key_id == key_id)

    return router
