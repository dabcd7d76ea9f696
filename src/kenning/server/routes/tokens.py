"""User tokens and API keys: a service key mints tokens bound to a dataset and role, and lists and
revokes its project's keys (revoking a key ends the tokens and sign-ins it granted)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query

from ...errors import InputError, NotFound, PermissionDenied
from ...permissions import role_permissions
from ..access import Api
from ..auth import Principal
from ..bodies import KeyInfo, TokenBody, TokenResult


def routes(api: Api) -> APIRouter:
    router = APIRouter(tags=["access"])
    settings = api.memory.settings

    @router.post("/v1/tokens", response_model=TokenResult, operation_id="tokens_mint",
                 summary="Mint a user token")
    def mint_token(b: TokenBody, p: Principal = Depends(api.service)):
        """A short-lived bearer token bound to one dataset and role, for an end user's own client (a
        browser, a phone); it can read and write that dataset only. Service keys only."""
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

    @router.get("/v1/keys", response_model=list[KeyInfo], operation_id="keys_list", summary="List API keys")
    def list_keys(include_revoked: bool = Query(False, description="revoked keys too"),
                  p: Principal = Depends(api.service)):
        """The project's API keys (their ids, never the keys)."""
        return [KeyInfo(**vars(k)) for k in api.auth.store.list_api_keys(p.project, include_revoked)]

    @router.delete("/v1/keys/{key_id}", response_model=KeyInfo, operation_id="keys_revoke", summary="Revoke an API key")
    def revoke_key(key_id: str = Path(min_length=1, max_length=64, description="the key's id (never the key)"),
                   p: Principal = Depends(api.service)):
        """Revoke one of the project's keys: it, and every token and sign-in it granted, stop working."""
        if not api.auth.store.revoke_api_key(key_id, p.project):
            raise NotFound(f"no live API key {key_id!r} in project {p.project!r}")
        return next(KeyInfo(**vars(k)) for k in api.auth.store.list_api_keys(p.project, True) if k.key_id == key_id)

    return router
