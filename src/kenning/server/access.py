"""The library as one caller may use it: the single permission gate of the API and the dashboard.

``Api`` carries what every router needs: the ``Memory``, the ``Auth`` that resolves a request's
principal, and the two dependencies routes declare: ``principal`` (who is asking) and ``service``
(the same, refused unless it is a service key).
"""
from __future__ import annotations

from fastapi import Depends, Request

from ..errors import PermissionDenied
from ..memory import Memory
from .auth import Auth, Principal
from .schema import environment_header


def memory_for(memory: Memory, p: Principal, write: bool = False):
    """(memory API, tenant keywords to pass): a user principal gets its ``UserMemory``."""
    if write and not p.can_write:
        raise PermissionDenied("this API key may only read; use a service key", "ai.write")
    if p.kind == "user":
        return memory.as_user(p.dataset, p.role, project=p.project, environment=p.environment), {}
    return memory, {"project": p.project, "environment": p.environment}


class Api:
    def __init__(self, memory: Memory, auth: Auth):
        self.memory, self.auth = memory, auth

        def principal(request: Request, x_kenning_environment: str | None = environment_header()) -> Principal:
            """The credential is the bearer scheme of the OpenAPI document (server/openapi.py), not a
            parameter of each operation."""
            found = getattr(request.state, "principal", None)   # the guard resolved it before the body was read
            return found if found is not None else auth.principal(request.headers.get("authorization"),
                                                                  x_kenning_environment)

        def service(request: Request, p: Principal = Depends(principal)) -> Principal:
            if p.kind != "service":
                raise PermissionDenied(f"{request.method} {request.url.path} is for the service principal "
                                       "(a service API key)", "ai.admin")
            return p

        self.principal, self.service = principal, service

    def memory_for(self, p: Principal, write: bool = False):
        return memory_for(self.memory, p, write)
