"""User tokens: a service key mints one bound to a dataset and role."""
from __future__ import annotations

from fastapi import APIRouter, Depends

from ...errors import PermissionDenied
from ...permissions import role_permissions
from ..access import Api
from ..auth import Principal
from ..bodies import TokenBody, TokenResult


def routes(api: Api) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/tokens", response_model=TokenResult)
    def mint_token(b: TokenBody, p: Principal = Depends(api.service)):
        if api.auth.tokens is None:
            raise PermissionDenied("this server has no secret (KENNING_SECRET), so it cannot mint tokens", "ai.admin")
        role_permissions(b.role, "r", "a")  # a known role, or InputError
        api.memory.services.scope(b.dataset, p.project, p.environment)
        token, exp = api.auth.tokens.mint(p.project, p.environment, b.dataset, b.role, b.expires_in)
        return TokenResult(token=token, expires_at=exp)

    return router
