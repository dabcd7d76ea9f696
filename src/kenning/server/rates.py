"""Per-tenant request rates, counted with the ``limits`` library (moving windows).

A user token is counted per dataset, an API key per project, development mode as one caller; the
environment a request names is not part of the count, so naming a fresh one each time gets no fresh
allowance. The
counters live where ``rate_limit_storage`` says: this process's memory by default (each API server
counts on its own), or a shared store such as ``async+redis://host:6379`` so stateless servers
behind one balancer count together.
"""
from __future__ import annotations

import math
import time

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from ..config import Settings
from ..errors import ConfigError
from .auth import Principal


class Rates:
    def __init__(self, settings: Settings):
        try:
            self.user, self.key = parse(settings.rate_limit_user), parse(settings.rate_limit_key)
            self.limiter = MovingWindowRateLimiter(storage_from_string(settings.rate_limit_storage))
        except ValueError as exc:
            raise ConfigError(f"invalid rate limit setting: {exc}; write limits like '1200/minute' and storage "
                              "like 'async+memory://'") from exc

    async def wait(self, p: Principal) -> float:
        """0 when the request may go ahead (and is counted), else the seconds until it may."""
        if p.kind == "user":
            item, who = self.user, ("user", p.project, p.dataset or "")
        else:
            item, who = self.key, ("key", p.project)
        if await self.limiter.hit(item, *who):
            return 0.0
        stats = await self.limiter.get_window_stats(item, *who)
        return max(1.0, math.ceil(stats.reset_time - time.time()))
