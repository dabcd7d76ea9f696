"""One router per resource; ``create_app`` includes them in this order (a path that could match
two routes goes to the one registered first)."""
from __future__ import annotations

from fastapi import APIRouter

from ..access import Api
from . import core, datasets, documents, erasure, facts, health, jobs, messages, notes, recall, tokens, transfer, turns

MODULES = (health, turns, recall, facts, jobs, datasets, messages, notes, core, documents, erasure, transfer, tokens)


def routers(api: Api) -> list[APIRouter]:
    return [module.routes(api) for module in MODULES]
