"""What every benchmark shares: percentiles, the machine and versions it ran on, where results go."""
from __future__ import annotations

import json
import os
import platform
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def pct(values, p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(pct(ms, 50), 2), "p95_ms": round(pct(ms, 95), 2), "p99_ms": round(pct(ms, 99), 2)}


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        mem_gib = None
    return {"system": f"{platform.system()} {platform.machine()}", "cpu": cpu, "cores": os.cpu_count(),
            "memory_gib": mem_gib, "python": platform.python_version()}


def versions(*packages: str) -> dict:
    out = {}
    for name in ("kenning", "onnxruntime", "numpy", *packages):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def write(name: str, result: dict, *packages: str) -> Path:
    """Write ``bench/results/<name>.json`` with the date, machine and versions around ``result``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    body = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
            "versions": versions(*packages), **result}
    path.write_text(json.dumps(body, indent=2) + "\n")
    print(f"written to {path.relative_to(ROOT)}")
    return path
