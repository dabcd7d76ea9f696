"""The library as one caller may use it: the single permission gate of the API and the dashboard."""
from __future__ import annotations

from ..errors import PermissionDenied
from ..memory import Memory
from .auth import Principal


def memory_for(memory: Memory, p: Principal, write: bool = False):
    """(memory API, tenant keywords to pass): a user principal gets its ``UserMemory``."""
    if write and not p.can_write:
        raise PermissionDenied("this API key may only read; use a service key", "ai.write")
    if p.kind == "user":
        return memory.as_user(p.dataset, p.role, project=p.project, environment=p.environment), {}
    return memory, {"project": p.project, "environment": p.environment}
