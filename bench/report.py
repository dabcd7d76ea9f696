"""Turn bench/results/*.json into docs/benchmarks.md and its plots (PNG, matplotlib).

The page is generated so that its numbers are always the ones the scripts
measured; the prose around them lives here. Run after the benchmarks:

    .venv/bin/python bench/report.py

Needs matplotlib (bench/requirements.txt). Every figure on the page comes from
one named result file, and every section names its files and their dates: a
goal row cites the one file its figures come from, two sections that show the
same measure from different runs say so, and where the newest run of a script
lacks an extractor or a system the page says that rather than fill the gap from
an older run. Reads latency*.json, peers.json, locomo*.json, life_questions.json,
filler.json, write_throughput.json, bulk_load.json, replicas.json and the
extractor benchmarks (extract_compare*.json, extract_heldout_*.json,
extract_dev_suites.json, life_checks*.json, vocabulary_examples*.json); a section
whose result is missing is left out, with a note. Writes docs/benchmarks.md,
docs/img/latency.png and docs/img/locomo.png.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RESULTS, ROOT  # noqa: E402

DOCS = ROOT / "docs"
IMG = DOCS / "img"
DATA = ROOT / "bench" / "data"
WEIGHTS = "src/kenning/extract/learned/model"
CATEGORIES = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial", "overall"]
EXTRACTORS = ("parse", "learned", "combined")
GOAL_P95_MS, GOAL_SPEEDUP, GOAL_TURNS = 10.0, 10.0, 80.0   # issue 14: >= 80 turns/s with the parser
GOAL_PG_P95_MS = 20.0   # issue 19: PostgreSQL, 10k rows per dataset, 1M-row store
DEFAULT_STORIES = {"life-stories-dev.jsonl", "life-stories-dev-paraphrased.jsonl"}   # bench/life_checks.py's
REBUILT = ("A command marked (rebuilt) is put together from the result's fields: its script does not record"
           " the command it ran (an option such as `--model` would not show).")
HEADLINE = ("latency", "peers", "locomo", "write_throughput")   # named when missing


class Results:
    """The result files of one report: read on demand, and those the page quotes remembered in order
    (the machine section lists them with their dates and commands)."""

    def __init__(self, folder: Path = RESULTS, data: Path = DATA, weights: Path = ROOT / WEIGHTS):
        self.folder, self.data, self.weights, self.used = folder, data, weights, {}

    def peek(self, name: str) -> dict | None:
        path = self.folder / f"{name}.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def get(self, name: str) -> dict | None:
        """The result, remembered as quoted."""
        if name not in self.used and (r := self.peek(name)) is not None:
            self.used[name] = r
        return self.used.get(name)

    def names(self, *patterns: str) -> list[str]:
        return sorted({p.stem for pattern in patterns for p in self.folder.glob(f"{pattern}.json")})

    def training(self) -> dict | None:
        """The shipped learned extractor's training record (its splits, and its own test-split score)."""
        path = self.weights / "training.json"
        return json.loads(path.read_text()) if path.is_file() else None


def load(name: str) -> dict | None:
    return Results().peek(name)


def verdict(ok: bool, missed: str) -> str:
    return "**met**" if ok else f"**missed** ({missed})"


def fmt(x, digits=2) -> str:
    return "–" if x is None else (f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}")


def when(r: dict) -> str:
    """A result's date as the page prints it: to the minute, UTC."""
    date = r.get("date") or ""
    return f"{date[:16].replace('T', ' ')} UTC" if date else "undated"


def source(name: str, r: dict) -> str:
    return f"`{name}.json` of {when(r)}"


def stamp(r: dict) -> datetime | None:
    try:
        return datetime.fromisoformat(r["date"])
    except (KeyError, TypeError, ValueError):
        return None


def newest(results: dict[str, dict]) -> str:
    return max(results, key=lambda n: (results[n].get("date") or "", n))


def command_of(name: str, r: dict) -> str:
    """The command that wrote a result: its own record, or rebuilt from its fields where the script keeps none."""
    if r.get("command"):
        return f"`{r['command']}`"
    rebuilt = rebuild_command(name, r)
    return f"`{rebuilt}` (rebuilt)" if rebuilt else "not recorded"


def rebuild_command(name: str, r: dict) -> str | None:
    results = r.get("results") or {}
    if "data" in r and "messages" in r and results:      # bench/extract_compare.py
        split = re.fullmatch(r"data/corpus \((\w+) split\)", r["data"])
        data = f"--corpus-split {split.group(1)}" if split else f"--data {r['data']}"
        return f"python bench/extract_compare.py {data} --extractors {','.join(results)} --name {name}"
    if name.startswith("vocabulary_examples") and results:
        return f"python bench/vocabulary_examples.py --extractors {','.join(results)} --name {name}"
    if name.startswith("life_checks") and results:
        extractors = ",".join(dict.fromkeys(e for by in results.values() for e in by))
        stories = "" if set(results) == DEFAULT_STORIES else " " + " ".join(results)
        return f"python bench/life_checks.py{stories} --extractors {extractors} --name {name}"
    if name == "extract_dev_suites" and r.get("extractors"):
        return f"python bench/extract_dev_suites.py --extractors {','.join(r['extractors'])}"
    return None


def weights_date() -> datetime | None:
    """When the shipped learned-extractor weights were last committed (None outside a git checkout)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cI", "--", WEIGHTS], cwd=ROOT, capture_output=True,
                             text=True, timeout=10, check=False).stdout.strip()
        return datetime.fromisoformat(out) if out else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


# -- plots -------------------------------------------------------------------------------------
def plot_latency(runs: dict[str, dict], path: Path) -> None:
    """``runs``: a label ("" for the default run, "--full") → a latency result."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6))
    styles = {("sqlite", ""): "-", ("postgresql", ""): "--", ("sqlite", "--full"): ":",
              ("postgresql", "--full"): "-."}
    for label, latency in runs.items():
        suffix = f" ({label} run)" if label else ""
        for backend in sorted({p["backend"] for p in latency["points"]}):
            style = styles.get((backend, label), "-")
            points = [p for p in latency["points"] if p["backend"] == backend]
            for probe in sorted({r["rows_in_dataset"] for p in points for r in p["recall"]}):
                xs = [p["store_rows"] for p in points for r in p["recall"] if r["rows_in_dataset"] == probe]
                ys = [r["p95_ms"] for p in points for r in p["recall"] if r["rows_in_dataset"] == probe]
                left.plot(xs, ys, style, marker="o", label=f"{backend}, {probe:,} rows/dataset{suffix}")
            right.plot([p["store_rows"] for p in points], [p["add"]["turns_per_s"] for p in points], style,
                       marker="o", label=f"{backend}{suffix}")
    left.axhline(GOAL_P95_MS, color="grey", linewidth=0.8, linestyle=":", label="goal (SQLite, 10k rows)")
    left.set(xscale="log", xlabel="rows in the store", ylabel="recall p95 (ms)", title="recall latency vs. store size")
    right.axhline(GOAL_TURNS, color="grey", linewidth=0.8, linestyle=":", label="goal")
    right.set(xscale="log", xlabel="rows in the store", ylabel="turns/s", title="Memory.add throughput",
              ylim=(0, None))
    left.legend(fontsize=6)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_locomo(systems: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cats = [c for c in CATEGORIES if all(c in r for r in systems.values())]
    fig, ax = plt.subplots(figsize=(11, 4.2))
    width = 0.8 / len(systems)
    x = np.arange(len(cats))
    for i, (name, report) in enumerate(systems.items()):
        loo = "leave-one-out" in name   # the figure that predicts an unseen conversation: hatched
        ax.bar(x + i * width - 0.4 + width / 2, [report[c] for c in cats], width, label=name,
               hatch="//" if loo else None, edgecolor="black" if loo else None)
    ax.set_xticks(x, cats)
    ax.set(ylabel="evidence recall@10", ylim=(0, 1.2), title="LoCoMo dev: evidence recall@10 by question category")
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.legend(fontsize=7, ncol=min(3, len(systems)), loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- goals -------------------------------------------------------------------------------------
def goals_section(res: Results) -> list[str]:
    rows = ["## Goals", "",
            "Each row's figures come from the one result file it names; a goal measured by two runs has a row"
            " for each.", "", "| goal | measured | result | |", "|---|---|---|---|"]
    after: list[str] = []
    for name in ("latency", "latency_full"):
        if run := res.get(name):
            rows += latency_goal_rows(name, run)
    if (peers := res.get("peers")) and "mem0" in peers.get("medians", {}):
        row, more = mem0_goal(peers, res.peek("write_throughput"))
        rows.append(row)
        after += more
    if write := res.get("write_throughput"):
        t = max(write["turns_per_s"], write.get("queued_turns_per_s") or 0)
        rows.append(f"| write path ≥ {GOAL_TURNS:g} turns/s with the offline extractor "
                    f"(`{write.get('extractor', 'parse')}`), one core | {t} turns/s "
                    f"(add {write['turns_per_s']}, queued {write.get('queued_turns_per_s', '–')}) | "
                    f"{source('write_throughput', write)} | "
                    f"{verdict(t >= GOAL_TURNS, f'by {GOAL_TURNS - t:.1f} turns/s')} |")
        if write.get("floor_no_extractor_turns_per_s"):
            after += [f"In `write_throughput.json`, without any extractor the same turns run at"
                      f" {write['floor_no_extractor_turns_per_s']} turns/s (the message's own embedding and its"
                      " transaction): that is the ceiling any extractor works under here, and the extractor takes"
                      f" {write['parse_share_of_add_time']:.0%} of the add time.", ""]
    return rows + [""] + after


def latency_goal_rows(name: str, run: dict) -> list[str]:
    out = []
    sqlite = [(p["store_rows"], r["p95_ms"]) for p in run["points"] if p["backend"] == "sqlite"
              for r in p["recall"] if r["rows_in_dataset"] == 10_000]
    if sqlite:
        worst = max(p95 for _, p95 in sqlite)
        out.append(f"| recall p95 ≤ {GOAL_P95_MS:g} ms at 10k rows per dataset, SQLite, query embedding included"
                   f" | {worst} ms (the worst of its store sizes, up to {max(n for n, _ in sqlite):,} rows) |"
                   f" {source(name, run)} | {verdict(worst <= GOAL_P95_MS, f'by {worst - GOAL_P95_MS:.1f} ms')} |")
    pg = [r["p95_ms"] for p in run["points"] if p["backend"] == "postgresql" and p["store_rows"] >= 1_000_000
          for r in p["recall"] if r["rows_in_dataset"] == 10_000]
    if pg:
        out.append(f"| recall p95 ≤ {GOAL_PG_P95_MS:g} ms at 10k rows per dataset in a 1M-row store, PostgreSQL"
                   f" (embedded server, default settings), query embedding included | {pg[0]} ms |"
                   f" {source(name, run)} |"
                   f" {verdict(pg[0] <= GOAL_PG_P95_MS, f'by {pg[0] - GOAL_PG_P95_MS:.1f} ms')} |")
    return out


def mem0_goal(peers: dict, write: dict | None = None) -> tuple[str, list[str]]:
    """The mem0 row, judged on kenning-plain (the inputs mem0 gets) where the run has it, and what follows it."""
    med, m = peers["medians"], peers["medians"]["mem0"]
    plain = "kenning-plain" in med
    judged = "kenning-plain" if plain else "kenning"
    speed = {v: m["search_p50_ms"] / med[v]["search_p50_ms"] for v in ("kenning-plain", "kenning") if v in med}
    parts = []
    if plain:
        parts.append(f"like for like (`kenning-plain`: the text and dia_id, as mem0): {speed['kenning-plain']:.1f}×"
                     f" faster (p50), recall@10 {med['kenning-plain']['recall_at_10']:.3f} vs {m['recall_at_10']:.3f}")
    if "kenning" in med:
        parts.append(f"{'with' if plain else '`kenning`, given'} the session times and chats mem0 does not get:"
                     f" {speed['kenning']:.1f}× faster, recall@10 {med['kenning']['recall_at_10']:.3f}"
                     + ("" if plain else f" vs {m['recall_at_10']:.3f}"))
    if not plain:
        parts.append("no like-for-like figure: this run predates `kenning-plain`")
    ok = speed[judged] >= GOAL_SPEEDUP and med[judged]["recall_at_10"] >= m["recall_at_10"]
    missed = (f"{speed[judged]:.1f}× of the {GOAL_SPEEDUP:g}× wanted" if speed[judged] < GOAL_SPEEDUP
              else "recall below mem0's")
    mark = verdict(ok, missed) if plain else ("**not established** (no like-for-like run)" if ok else
                                              f"**missed** ({missed}, and not like for like)")
    row = (f"| search ≥ {GOAL_SPEEDUP:g}× faster than mem0 at equal or better LoCoMo recall@10 | "
           + "; ".join(parts) + ". kenning's recall is in-sample (its weights were tuned on these conversations)"
           f" | {source('peers', peers)} | {mark} |")
    qe = peers.get("query_embedding")
    if not qe:
        other = (f" (Another run, {source('write_throughput', write)}, times one query embedding at"
                 f" {write['embed_query_ms_p50']} ms p50 on this machine.)" if write and write.get("embed_query_ms_p50")
                 else "")
        return row, ["This peers run did not time the query embedding on its own (`bench/peers.py` records it"
                     " since it gained `kenning-plain`), so how much of each search is the embedding model every"
                     " system shares is not shown from it." + other, ""]
    k, embed = med[judged], qe["p50_ms"]
    ken_own, mem_own = k["search_p50_ms"] - embed, m["search_p50_ms"] - embed
    return row, [f"In the same peers run, embedding a question alone with the model every system shares takes"
                 f" {embed} ms (p50). mem0's search takes {m['search_p50_ms']} ms at p50, so even a kenning whose"
                 f" search cost nothing but that embedding would be at most {m['search_p50_ms'] / embed:.1f}× faster."
                 f" Without the embedding, `{judged}`'s own search work ({ken_own:.1f} ms) is"
                 f" {mem_own / max(0.01, ken_own):.1f}× less than mem0's ({mem_own:.1f} ms).", ""]


# -- what was tuned on what ------------------------------------------------------------------
def tuned_section(res: Results) -> list[str]:
    """Each tuned part, the data it was tuned or trained on, and where a figure from outside that data exists."""
    tune, life, filler, peers = (res.get(n) for n in ("locomo_tune", "life_questions", "filler", "peers"))
    heldout, corpus = newest_on(res, "bench/data/heldout-2026-12-04.jsonl"), newest_on(res, "data/corpus (test split)")
    training = res.training()
    loo = "none"
    if tune:
        loo = (f"recall@{tune['k']} {tune['leave_one_out']['overall']:.3f} leave-one-conversation-out against"
               f" {tune['in_sample']['overall']:.3f} in-sample ({source('locomo_tune', tune)}; only the knobs of"
               " its grid are held out)")
    corpus_words = "the labelled corpus (`data/corpus/`)"
    if training:
        s = training["splits"]
        corpus_words = (f"`data/corpus/` train split ({s['train']:,} of {training['corpus_messages']:,} messages,"
                        f" writers {', '.join(sorted(training['writers'], key=lambda w: int(w[1:])))}), with the"
                        f" vocabulary's example sentences; the calibration split ({s['calibration']:,}) calibrates"
                        f" its confidence")
    out_learned = []
    if training:
        t = training["scores"]["test"]["overall"]
        out_learned.append(f"test split ({training['splits']['test']:,} messages, never seen in training): P"
                           f" {t['precision']} / R {t['recall']} with class and status matched too"
                           f" (`{WEIGHTS}/training.json`)")
    if corpus:
        out_learned.append(f"the same split by object, {source(*corpus)}")
    if heldout:
        out_learned.append(f"held-out set of 2026-12-04, scored once, {source(*heldout)}; a development set since"
                           " (`bench/data/README.md`)")
    rows = [
        ("recall preset weights (fusion weights, `rrf_k`, neighbours, the when / session / question boosts,"
         " feedback)", "the five LoCoMo dev conversations, every question (`locomo-dev.json`)",
         "the LoCoMo section and every kenning figure of the peer comparison", loo),
        ("`recency`, `own_name` (recall)", "the life-story questions (`bench/data/life_questions.jsonl`"
         + (f", {life['report']['all']['n']} questions" if life else "") + ")",
         "Questions over life stories", "none"),
        ("the other-voice share (0.7, recall)", "the filler conversations (`bench/data/filler_conversations.jsonl`)"
         + (f", {filler['report']['n']} questions" if filler else ""), "Recall with filler replies", "none"),
        ("the learned extractor", corpus_words,
         "the vocabulary examples (they are training data)", "; ".join(out_learned) or "none"),
        ("the rule extractor", "`bench/data/extract_dev/` (about 400 sentences), the 222 messages"
         " (`extract_messages_222.jsonl`), `scenarios-dev.jsonl`, `life-stories-dev.jsonl`, and samples of facts"
         " mined from the LoCoMo dev conversations (`bench/data/locomo_fact_judgements/`)",
         "the development suites, the 222 messages, the dev life stories",
         "the corpus test split (the rules were not written against it); the held-out set of 2026-12-04,"
         " scored once on 2026-12-05"),
        ("`combined`, the default extractor (the rules, then the learned extractor's facts where they add one)",
         "its two parts'", "wherever either part is", "the corpus test split; the held-out set of 2026-12-04"),
    ]
    out = ["## What was tuned on what", "",
           "A figure measured on the data a part was tuned on is in-sample: it says how well the part fits that"
           " data, not what to expect elsewhere. Where a part was tuned, on what, and where a figure from outside"
           " that data exists:", "",
           "| tuned part | tuned or trained on | in-sample figures on this page | out-of-sample figure |",
           "|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    out += ["", "**The LoCoMo conversations of the peer comparison are the ones kenning's recall weights were tuned"
            " on**, so kenning's recall there is in-sample; mem0 and LangGraph run with their library defaults,"
            " tuned on none of it."
            + (f" The out-of-sample estimate: {loo}." if tune else
               " No leave-one-out run (`bench/locomo_tune.py`) is in `bench/results/`.")
            + (f" The peer comparison's own kenning figures are from a different run, {source('peers', peers)}."
               if peers and tune else ""), ""]
    return out


# -- sections ----------------------------------------------------------------------------------
def latency_table(latency: dict) -> list[str]:
    probes = sorted({r["rows_in_dataset"] for p in latency["points"] for r in p["recall"]})
    out = ["| backend | rows | load rows/s | " + " | ".join(f"recall p50 / p95 / p99 ms @ {n:,}" for n in probes)
           + " | add turns/s | add p95 ms | cross-dataset p95 ms |",
           "|---|---:|---:|" + "---:|" * len(probes) + "---:|---:|---:|"]
    for p in latency["points"]:
        by = {r["rows_in_dataset"]: r for r in p["recall"]}
        cells = " | ".join(f"{by[n]['p50_ms']} / {by[n]['p95_ms']} / {by[n]['p99_ms']}" if n in by else "–"
                           for n in probes)
        cross = p["cross_dataset"]["p95_ms"] if p.get("cross_dataset") else "–"
        out.append(f"| {p['backend']} | {p['store_rows']:,} | {p['load_rows_per_s']:,} | {cells} | "
                   f"{p['add']['turns_per_s']} | {p['add']['p95_ms']} | {cross} |")
    return out


def latency_section(latency: dict, full: dict | None = None) -> list[str]:
    out = ["## Latency and add throughput vs. store size", "",
           f"Run: {source('latency', latency)}, `{latency.get('command', 'python bench/latency.py')}`"
           " (`kenning bench latency`). It grows one store per backend in steps "
           f"({', '.join(f'{s:,}' for s in latency['steps'])} rows), each step bringing a probe dataset of a tenth of"
           " its size and 100-row datasets for the rest (synthetic rows: Zipf-distributed words, random unit vectors;"
           " `bench/synthetic.py`). At each step it times `recall` on every probe dataset with a new query each call"
           f" ({latency['queries']} per dataset; the real query embedding included) and `Memory.add` of"
           f" {latency['adds']} LoCoMo turns not seen before (offline extractor, message and fact embeddings, one"
           " commit each). PostgreSQL is an embedded server on the same machine; its cross-dataset column is the"
           " HNSW search over every dataset's facts.", "",
           "![recall p95 and add throughput vs. store size](img/latency.png)", ""]
    out += latency_table(latency)
    if full:
        out += ["", f"The same with `--full` ({source('latency_full', full)}, `{full['command']}`): the store grows"
                " on to 1,000,000 rows in 10,000 datasets.", ""] + latency_table(full)
    out += reads_section(full, "latency_full") if full else reads_section(latency, "latency")
    return out + [""]


def reads_section(run: dict, result: str) -> list[str]:
    """Where a recall's time goes at the run's largest store: each read timed, and PostgreSQL's plans, as
    bench/reads.py captured them in the run (not typed in)."""
    points = [p for p in run["points"] if p.get("reads")]
    if not points:
        return []
    out = ["", f"### Where the time goes ({points[0]['store_rows']:,}-row store, "
           f"{points[0]['reads']['dataset']}, {points[0]['reads']['recalls']} recalls)", "",
           f"Every store read one recall makes, timed by `bench/reads.py` in the same run, {source(result, run)}"
           " (calls per recall,"
           " p50 and p95 of one call, and the milliseconds per recall they add up to; reads that run side by"
           " side overlap). The query embedding is timed on its own.", "",
           "| read | " + " | ".join(f"{p['backend']} calls | p50 ms | p95 ms | ms / recall" for p in points) + " |",
           "|---|" + "---:|---:|---:|---:|" * len(points)]
    names = list(dict.fromkeys(n for p in points for n in p["reads"]["reads"]))
    for name in names:
        cells = []
        for p in points:
            r = p["reads"]["reads"].get(name)
            cells.append("– | – | – | –" if r is None else
                         f"{r['calls_per_recall']} | {r['p50_ms']} | {r['p95_ms']} | {r['total_ms_per_recall']}")
        out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    out.append("| query embedding | " + " | ".join(
        f"1 | {p['reads']['query_embedding']['p50_ms']} | {p['reads']['query_embedding']['p95_ms']} | –"
        for p in points) + " |")
    out.append("| **recall** | " + " | ".join(
        f"1 | {p['reads']['recall']['p50_ms']} | {p['reads']['recall']['p95_ms']} | –" for p in points) + " |")
    for p in points:
        if not p.get("plans"):
            continue
        out += ["", f"The {p['backend']} statements of one recall there, slowest first, with their plans from"
                " `EXPLAIN (ANALYZE, BUFFERS)` run on the same statement and parameters right after (the query"
                " vector elided):", ""]
        for plan in p["plans"][:4]:
            out += [f"- {plan['ms_as_sent']} ms as sent, {plan['execution_ms']} ms executing: `{plan['sql'][:140]}…`",
                    "", "  ```", *[f"  {line}" for line in plan["plan"][:40]], "  ```", ""]
    return out


def bulk_section(bulk: dict) -> list[str]:
    out = ["## Bulk import (PostgreSQL, COPY)", "",
           f"Run: {source('bulk_load', bulk)}, `{bulk['command']}`: `Memory.import_` of a synthetic export of"
           f" {bulk['rows_per_import']:,} rows"
           " (facts, messages and notes with their vectors: nothing embedded), first into an empty store, then"
           " a second such export into the same store (live: its rows and indexes in place). The time covers"
           " reading and checking the JSON lines, the binary COPY into a staging table, the insert and index upkeep.",
           "", "| into | HNSW index | rows | seconds | rows/s |", "|---|---|---:|---:|---:|"]
    for r in bulk["imports"]:
        hnsw = ("built after the load" if r["into"] == "empty store" else "kept up row by row") if r["hnsw_index"] \
            else "none (the default)"
        out.append(f"| {r['into']} | {hnsw} | {r['rows']:,} | {r['seconds']} | {r['rows_per_s']:,} |")
    return out + [""]


def replicas_section(rep: dict) -> list[str]:
    st, cr, lag = rep["steady"], rep["crash"], rep["lag"]
    wait = st["replay_wait"]
    return ["## Read replicas (PostgreSQL primary + streaming replica, one machine)", "",
            f"Run: {source('replicas', rep)}, `{rep['command']}`: a primary and a `pg_basebackup` streaming replica"
            " from the embedded PostgreSQL on"
            " Unix sockets; one process writes through `Memory(primary, replicas=[replica])`.", "",
            f"- Steady load, {st['rounds']} rounds of `add` then `recall` of that write at once (read-your-writes),"
            f" then a recall of a dataset the process never writes: the replica served"
            f" {st['own_write_recalls_on_replica']} of {st['rounds']} recalls of the caller's own fresh write and"
            f" {st['other_recalls_on_replica']} of {st['rounds']} of the others; {st['reads_that_waited_for_replay']}"
            " reads waited for the replica to replay the caller's write"
            + (f" (p50 {wait['p50_ms']} ms, p95 {wait['p95_ms']} ms)" if wait else "")
            + f"; {st['fallbacks']} fell back to the primary. Recall p50 / p95: own write"
            f" {st['recall_own_write']['p50_ms']} / {st['recall_own_write']['p95_ms']} ms, other"
            f" {st['recall_other']['p50_ms']} / {st['recall_other']['p95_ms']} ms.",
            f"- Crash: the replica was killed (SIGKILL) at turn {cr['killed_at_turn']} of {cr['turns']}:"
            f" {len(cr['errors'])} errors reached the caller, {cr['writes']} writes made and {cr['messages_kept']} messages"
            f" kept, {cr['fallbacks_while_down']} reads fell back to the primary. Restarted"
            f" ({cr['replica_restart_s']} s), it served reads again {cr['used_again_after_s']} s later.",
            f"- Lag bound {lag['max_lag_s']} s (monitor every {lag['monitor_interval_s']} s): with replay paused and"
            f" the primary writing, the replica was skipped after {lag['skipped_after_s']} s and the next read went to"
            f" the primary ({'yes' if lag['read_went_to_primary'] else 'no'}); resumed, it was used again after"
            f" {lag['caught_up_after_resume_s']} s.", ""]


# -- the peer comparison -------------------------------------------------------------------------
INPUTS = ("text", "dia_id", "time", "chat")
CONDITIONS = (("extraction", "extraction"), ("search", "search"), ("storage", "storage"),
              ("embedding", "embedding model"), ("llm_calls", "LLM calls"), ("threshold", "threshold"),
              ("tuned_on_these_conversations", "tuned on these conversations"))


def conditions_table(conditions: dict[str, dict]) -> list[str]:
    """Rows: systems; columns: each input given or not, then each recorded condition (as the run wrote it)."""
    out = ["| system | " + " | ".join(f"gets {i}" for i in INPUTS) + " | "
           + " | ".join(label for _, label in CONDITIONS) + " |",
           "|---|" + ":---:|" * len(INPUTS) + "---|" * len(CONDITIONS)]
    for name, c in conditions.items():
        given = set(c.get("inputs", ()))
        cells = ["yes" if i in given else "**no**" for i in INPUTS]
        cells += [fmt(c.get(key)) if isinstance(c.get(key), (int, float)) else str(c.get(key, "–"))
                  for key, _ in CONDITIONS]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def peers_section(peers: dict, tune: dict | None = None) -> list[str]:
    systems = peers["medians"]
    revision = f", kenning revision `{peers['kenning_revision']}`" if peers.get("kenning_revision") else ""
    out = ["## kenning vs. mem0 and LangGraph, same workload, same run", "",
           f"Run: {source('peers', peers)}{revision}, `{peers.get('command', 'python bench/peers.py')}`. "
           + peers.get("description", ""), ""]
    missing = []
    if "kenning-plain" not in systems:
        missing.append("`kenning-plain` (kenning given exactly what the peers get: the text and dia_id, no session"
                       " time, no chat)")
    if not peers.get("conditions"):
        missing.append("the conditions of each system")
    if missing:
        out += [f"**This run predates {' and '.join(missing)}.** Its kenning was given each turn's session time"
                " and chat, which the peers never get, so its figures are not like for like. Both come with the"
                " next run of `python bench/peers.py --full`.", ""]
    if peers.get("conditions"):
        out += ["What each system was given and did in this run (recorded by the run itself):", ""]
        out += conditions_table(peers["conditions"]) + [""]
    out += ["| system | add memories/s | add p95 ms | search p50 ms | search p95 ms | search p99 ms | recall@10 |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name, m in systems.items():
        out.append(f"| {name} | {fmt(m.get('add_per_s'), 1)} | {fmt(m.get('add_p95_ms'))} | {fmt(m.get('search_p50_ms'))}"
                   f" | {fmt(m.get('search_p95_ms'))} | {fmt(m.get('search_p99_ms'))} | {fmt(m.get('recall_at_10'), 3)} |")
    insample = ("kenning's recall@10 here, every variant's, is in-sample: its recall weights were tuned on these"
                " conversations (see What was tuned on what).")
    if tune:
        insample += (f" Out of sample, leave-one-conversation-out, the tuning run gives"
                     f" {tune['leave_one_out']['overall']:.3f} against {tune['in_sample']['overall']:.3f}"
                     f" in-sample ({source('locomo_tune', tune)}, a different run, kenning given times and chats).")
    out += ["", insample]
    if qe := peers.get("query_embedding"):
        out += ["", f"Embedding a question alone, with the model all systems share, takes {qe['p50_ms']} ms at p50"
                f" and {qe['p95_ms']} ms at p95 here (each of the {qe['n']} questions once, after the runs): part of"
                " every search time above."]
    out += ["", "Ratios (kenning / peer; a speed-up is peer time / kenning time):", ""]
    for variant, key in (("kenning", "ratios"), ("kenning-plain", "ratios_plain")):
        for peer, r in peers.get(key, {}).items():
            out.append(f"- **{variant} vs {peer}**: search {r['search_speedup_p50']:.1f}× faster at p50, "
                       f"{r['search_speedup_p95']:.1f}× at p95; add throughput ×{r['add_throughput_ratio']:.2f}; "
                       f"recall@10 {r['kenning_recall_at_10']:.3f} vs {r['peer_recall_at_10']:.3f}.")
    out += ["", "Notes recorded by the run:", ""] + [f"- {note}" for note in peers.get("notes", [])]
    return out + [""]


# -- LoCoMo, life stories, filler ------------------------------------------------------------------
def tune_section(tune: dict) -> list[str]:
    """In-sample and leave-one-conversation-out recall@k of the weights chosen on these conversations."""
    k, ins, loo = tune["k"], tune["in_sample"], tune["leave_one_out"]
    cats = [c for c in CATEGORIES if c in ins]
    out = ["", f"### Weights chosen honestly: in-sample and leave-one-out recall@{k}", "",
           f"Run: {source('locomo_tune', tune)}, `python bench/locomo_tune.py --grid '{tune['grid']}'`: it scores"
           " every setting of that grid on each conversation. In-sample is the best setting chosen and scored on"
           " all five (what the table above shows, up to the differences between two runs); leave-one-out scores"
           " each conversation with the setting that was best on the other four: that is the number to expect on"
           " a conversation kenning has not seen.", "",
           "| | " + " | ".join(cats) + " |", "|---|" + "---:|" * len(cats),
           "| in-sample | " + " | ".join(f"{ins[c]:.3f}" for c in cats) + " |",
           "| leave-one-out | " + " | ".join(f"{loo[c]:.3f}" for c in cats) + " |", "",
           f"In-sample best: `{json.dumps(ins['setting'])}`. Chosen per held-out conversation: "
           + "; ".join(f"{conv} `{json.dumps(s)}`" for conv, s in loo["chosen"].items()) + ".", "",
           "Only the knobs of this grid are left out here. The rest of the preset (fusion weights, the"
           " neighbour share, the other boosts) was picked earlier on all five conversations, so even the"
           " leave-one-out figure is somewhat optimistic; the gap it shows is a floor on the real one.", ""]
    return out


def locomo_section(locomo: dict, peers: dict | None, tune: dict | None = None) -> list[str]:
    report = locomo["report"]
    names = list(report)
    out = ["## LoCoMo evidence recall", "",
           f"Run: {source('locomo', locomo)}, `{locomo.get('command', 'python bench/locomo.py')}`. Every turn of"
           " the five LoCoMo dev conversations goes through `Memory.add` (one dataset per conversation, the turn's"
           " dia_id as its message id, its session time and chat given); every question with gold evidence is"
           " asked through `recall`, and recall@k is the share of its evidence turns among the first k items (a fact"
           " counts as the turn it was mined from). Baselines in the same run: BM25 over the raw turns, and kenning's"
           " dense-only preset (message vectors alone). In-sample: kenning's weights were tuned on these"
           " conversations.", "",
           "![LoCoMo recall@10 by category](img/locomo.png)", "",
           "| category | n | " + " | ".join(f"{n} @5 / @10 / @25" for n in names) + " |",
           "|---|---:|" + "---:|" * len(names)]
    for cat in CATEGORIES:
        if cat not in report[names[0]]:
            continue
        cells = " | ".join(" / ".join(f"{report[n][cat][k]:.3f}" for k in ("5", "10", "25")) for n in names)
        out.append(f"| {cat} | {report[names[0]][cat]['n']} | {cells} |")
    out += ["", f"kenning answers a question in {locomo.get('recall_ms_per_question', '–')} ms on average here."]
    if peers:
        out += ["", plot_sources(locomo, peers, tune), ""] + two_runs(locomo, peers)
    if tune:
        out += tune_section(tune)
    return out + [""]


def plot_sources(locomo: dict, peers: dict, tune: dict | None) -> str:
    others = [n for n in peers.get("recall_by_category", {}) if n != "kenning"]
    return (f"The plot draws on {'three' if tune else 'two'} runs: kenning and the baselines from"
            f" {source('locomo', locomo)}"
            + (f", kenning's leave-one-out figure from {source('locomo_tune', tune)}" if tune else "")
            + f", and {', '.join(others)} from the peers run, {source('peers', peers)}.")


def two_runs(locomo: dict, peers: dict) -> list[str]:
    """The same measure (kenning's LoCoMo recall@10, times and chats given) from two runs: said, not hidden."""
    here = locomo["report"].get("kenning", {}).get("overall")
    there = peers.get("medians", {}).get("kenning", {}).get("recall_at_10")
    if not here or there is None:
        return []
    asked = peers.get("workload", {}).get("questions")
    if abs(here["10"] - there) < 0.0005 and asked == here["n"]:
        return [f"kenning's recall@10 here ({here['10']:.3f}) and in the peer comparison"
                f" ({source('peers', peers)}) agree."]
    why = (f"the peers run asked {asked} of the questions, this one {here['n']}" if asked != here["n"] else
           f"both ask the same {asked} questions, but they are different runs, on different days and code")
    return [f"Two runs, two figures for one measure: kenning's LoCoMo recall@10 is {here['10']:.3f} here"
            f" ({source('locomo', locomo)}) and {there:.3f} in the peer comparison ({source('peers', peers)});"
            f" {why}. Compare figures within one section, not across."]


def life_section(life: dict) -> list[str]:
    rows = ["## Questions over life stories", "",
            f"Run: {source('life_questions', life)}, `python bench/life_questions.py --at-end`: each dev life story"
            " (`life-stories-dev.jsonl`) goes into its own dataset turn by turn (one chat per day); "
            f"{life['report']['all']['n']} plain questions about the person, written by a helper who had not read"
            " the code, are asked with `recall(as_of=` the story's last turn `)`, as they were written. Right: the"
            " item is the turn holding the answer (or a fact mined from it, or a fact naming the answer); the"
            " context line holds the answer. In-sample: recency and own-name reading were set on these questions.",
            "", "| kind | n | first item | any of the first 5 | first line of the context |", "|---|---:|---:|---:|---:|"]
    for kind in ("now", "when", "fact", "all"):
        r = life["report"].get(kind)
        if r:
            rows.append(f"| {kind} | {r['n']} | {r['first_item']:.3f} | {r['top5']:.3f} | {r['context_first_line']:.3f} |")
    return rows + [""]


def filler_section(filler: dict) -> list[str]:
    out = ["## Recall with filler replies", "",
           f"Run: {source('filler', filler)}, `{filler.get('command', 'python bench/filler.py')}`. Three invented"
           " people over a year (`bench/data/filler_conversations.jsonl`, written by a helper who had not read the"
           " code), each user turn followed by an assistant reply: one stock reply repeated, four rotated, or stock"
           " replies mixed with real advice. Turns go in through `add_turn` as an assistant SDK sends them; each"
           " question is recalled (limit 10). evidence@1 / @3: an item among the first 1 / 3 is a turn holding the"
           " answer (or a fact mined from one); other voice@3: an assistant turn is among the first three (lower"
           " is better); repeats: a context block shows one text twice (lower is better). In-sample: the share"
           " an assistant's words lose (0.7) was chosen on these conversations.", "",
           "| conversation | evidence@1 | evidence@3 | other voice@3 | repeats |", "|---|---:|---:|---:|---:|"]
    rows = [*filler.get("by_conversation", {}).items(), (f"all ({filler['report']['n']} questions)", filler["report"])]
    for name, r in rows:
        out.append(f"| {name} | {r['evidence@1']:.3f} | {r['evidence@3']:.3f} | {r['other_voice@3']:.3f} |"
                   f" {r['repeats']:.3f} |")
    return out + [""]


# -- extraction quality ------------------------------------------------------------------------
EXTRACT_SETS = {   # the data field of an extract_compare result -> (what it is, what it is in-sample for)
    "data/corpus (test split)": (
        "the labelled corpus's test split (`data/corpus/`)",
        "none: the learned extractor never saw it in training, the rules were not written against it"),
    "bench/data/heldout-2026-12-04.jsonl": (
        "held-out set of 2026-12-04: messages by a helper who saw neither the corpus nor the code",
        "none when scored, once, on 2026-12-05; a development set since"),
    "bench/data/extract_messages_222.jsonl": (
        "222 realistic messages (a development set)",
        "the rules (written against it); the learned extractor was checked on it during its development"),
}
HAND_SCORED = {"bench/data/heldout-2026-12-04.jsonl": "heldout-2026-12-04.scored-2026-12-05.jsonl"}
STORY_SETS = {
    "life-stories-dev.jsonl": ("the eight dev life stories", "the rules (written against them)"),
    "life-stories-dev-paraphrased.jsonl": ("the same stories reworded by a helper (`data/paraphrases/`)",
                                           "the rules know their facts, not their wording"),
}


def extraction_section(res: Results, weights: datetime | None = None) -> list[str]:
    groups = compare_groups(res)
    tables = (compare_table(res, groups, weights) if groups else []) + suites_table(res, weights) \
        + life_checks_table(res, weights) + vocabulary_table(res, weights)
    if not tables:
        return []
    out = ["## Extraction quality", "",
           "Each offline extractor alone, and `combined` (the default: the rules' facts, then the learned"
           " extractor's where they add one), on each labelled set. Each row is the newest run of its script on"
           " that set, with its date and command; an extractor that run did not include is marked *not in this"
           " run*, never filled in from an older run. The sets are described in `bench/data/README.md` and"
           " `data/corpus/DATASHEET.md`; what each extractor was developed or trained on is in What was tuned on"
           " what. " + REBUILT]
    if weights:
        out += ["", f"The shipped learned weights were last committed on {weights:%Y-%m-%d %H:%M} UTC; a run marked †"
                " is older, so its learned and combined figures may be from earlier weights."]
    return out + tables + [""]


def compare_groups(res: Results) -> dict[str, dict[str, dict]]:
    """bench/extract_compare.py's results by the set they scored: data -> {name: result}."""
    groups: dict[str, dict[str, dict]] = {}
    for name in res.names("extract_compare*", "extract_heldout_*"):
        r = res.peek(name)
        if r and "data" in r and isinstance(r.get("results"), dict):
            groups.setdefault(r["data"], {})[name] = r
    return groups


def newest_on(res: Results, data: str) -> tuple[str, dict] | None:
    runs = compare_groups(res).get(data)
    return (name := newest(runs), res.get(name)) if runs else None


def mark(r: dict, weights: datetime | None, extractors) -> str:
    old = weights and (at := stamp(r)) and at < weights and {"learned", "combined"} & set(extractors)
    return " †" if old else ""


def absent(by: dict, older: dict[str, dict], key) -> str:
    """Which extractors the newest run lacks, and which older runs have them (named, not mixed in); "" if none."""
    lacking = [e for e in EXTRACTORS if e not in by]
    if not lacking:
        return ""
    holders = [f"{source(n, r)} ({', '.join(e for e in lacking if e in key(r))})" for n, r in older.items()
               if any(e in key(r) for e in lacking)]
    return (f"{', '.join(lacking)} not in the newest run"
            + (f"; older runs that have {'it' if len(lacking) == 1 else 'them'}, not mixed in: " + "; ".join(holders)
               if holders else "; no older result has " + ("it" if len(lacking) == 1 else "them")) + ".")


def pr(r: dict | None) -> str:
    return "*not in this run*" if r is None else f"{fmt(r.get('precision'), 3)} / {fmt(r.get('recall'), 3)}"


def compare_table(res: Results, groups: dict[str, dict[str, dict]], weights) -> list[str]:
    out = ["", "### Precision and recall of stored facts", "",
           "`bench/extract_compare.py`: a stored fact is right when its object names an expected fact's object"
           " (equal after lower-casing and dropping articles, or one inside the other as whole words) and agrees"
           " on whether it ends; predicates are not compared (automatic and lenient). P / R = precision / recall;"
           " n = messages / expected facts.", "",
           "| set | n | parse P / R | learned P / R | combined P / R | run | in-sample for |",
           "|---|---:|---:|---:|---:|---|---|"]
    notes, commands = [], []
    order = [d for d in EXTRACT_SETS if d in groups] + sorted(set(groups) - set(EXTRACT_SETS))
    for data in order:
        runs = groups[data]
        name = newest(runs)
        r = res.get(name)
        what, insample = EXTRACT_SETS.get(data, (f"`{data}`", "–"))
        expected = next(iter(r["results"].values()))["expected"]
        out.append(f"| {what} | {r['messages']:,} / {expected:,} | "
                   + " | ".join(pr(r["results"].get(e)) for e in EXTRACTORS)
                   + f" | {source(name, r)}{mark(r, weights, r['results'])} | {insample} |")
        if data in HAND_SCORED and (hand := hand_scores(res.data / HAND_SCORED[data])):
            out.append(f"| the same set, judged by hand (blind to the extractor) | {hand['messages']:,} /"
                       f" {hand['expected']:,} | " + " | ".join(pr(hand.get(e)) for e in EXTRACTORS)
                       + f" | `bench/data/{HAND_SCORED[data]}` | as above |")
        commands.append(f"- {what}: {command_of(name, r)}")
        if lacking := absent(r["results"], {n: x for n, x in runs.items() if n != name}, lambda x: x["results"]):
            notes.append(f"- {what}: {lacking}")
    out += ["", "Commands:", ""] + commands
    if notes:
        out += ["", "Missing from a newest run:", ""] + notes
    older = [f"{source(n, r)} ({', '.join(r['results'])})" for d in order for n, r in groups[d].items()
             if n != newest(groups[d])]
    if older:
        out += ["", "Older runs on these sets, not shown: " + "; ".join(older) + "."]
    if training := res.training():
        t = training["scores"]["test"]["overall"]
        out += ["", f"The training's own score on the corpus test split (`{WEIGHTS}/training.json`: the learned"
                f" extractor alone, class and status must match too, threshold {training.get('threshold')}):"
                f" precision {t['precision']}, recall {t['recall']} over {t['facts']:,} facts."]
    return out


def hand_scores(path: Path) -> dict | None:
    """Precision and recall per extractor from a hand-scored file: each stored fact judged, each expected one
    found or missed."""
    if not path.is_file():
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out: dict = {"messages": len(rows), "expected": sum(len(r["expected"]) for r in rows)}
    for e in EXTRACTORS:
        judged = [f["verdict"] for r in rows if e in r["systems"] for f in r["systems"][e]["stored"]]
        found = [x for r in rows if e in r["systems"] for x in r["systems"][e]["expected_found"]]
        if judged or found:
            out[e] = {"precision": round(judged.count("correct") / len(judged), 3) if judged else None,
                      "recall": round(sum(found) / len(found), 3) if found else None}
    return out


def newest_of(res: Results, pattern: str, key) -> tuple[str, dict, dict[str, dict]] | None:
    """The newest result matching ``pattern`` that has ``key`` (a function of the result, None if it lacks
    it), and the older ones that have it."""
    runs = {n: r for n in res.names(pattern) if (r := res.peek(n)) and key(r)}
    if not runs:
        return None
    name = newest(runs)
    return name, res.get(name), {n: r for n, r in runs.items() if n != name}


def suites_table(res: Results, weights) -> list[str]:
    found = newest_of(res, "extract_dev_suites*", lambda r: r.get("extractors"))
    if not found:
        return []
    name, r, older = found
    by = r["extractors"]
    suites = list(dict.fromkeys(s for v in by.values() for s in v))
    out = ["", "### Development suites", "",
           f"Run: {source(name, r)}{mark(r, weights, by)}, {command_of(name, r)}. About 400 everyday and casual"
           " messages with what a demanding user expects of each, and pairs that must land in one one-value slot"
           " (`bench/data/extract_dev/`); a case passes when every expectation holds. In-sample for the rules,"
           " which were written against them; the learned extractor never saw them.", "",
           "| suite | n | " + " | ".join(f"{e} passed" for e in EXTRACTORS) + " |", "|---|---:|" + "---:|" * 3]
    for suite in suites:
        total = next(v[suite]["total"] for v in by.values() if suite in v)
        cells = [f"{by[e][suite]['passed']} ({by[e][suite]['passed'] / total:.3f})" if suite in by.get(e, {})
                 else "*not in this run*" for e in EXTRACTORS]
        out.append(f"| {suite} | {total} | " + " | ".join(cells) + " |")
    lacking = absent(by, older, lambda x: x.get("extractors", {}))
    return out + (["", lacking] if lacking else [])


def life_checks_table(res: Results, weights) -> list[str]:
    runs = {n: r for n in res.names("life_checks*") if (r := res.peek(n)) and isinstance(r.get("results"), dict)}
    stories = list(dict.fromkeys(s for r in runs.values() for s in r["results"]))
    if not stories:
        return []
    out = ["", "### Life stories, check by check", "",
           "`bench/life_checks.py`: each story's turns through `Memory.add` once per extractor, then every check"
           " of the story (a fact live now or not, as of a date, dated near a time) counted on its own: the share"
           " that holds, and the stories with every check holding.", "",
           "| stories | checks | " + " | ".join(f"{e}: share held (stories whole)" for e in EXTRACTORS)
           + " | run | in-sample for |", "|---|---:|" + "---:|" * 3 + "---|---|"]
    notes = []
    for story in stories:
        having = {n: r for n, r in runs.items() if story in r["results"]}
        name = newest(having)
        r = res.get(name)
        by = r["results"][story]
        what, insample = STORY_SETS.get(story, (f"`{story}`", "–"))
        checks = next(iter(by.values()))["checks"]
        cells = [f"{by[e]['hold']:.3f} ({by[e]['stories_whole']})" if e in by else "*not in this run*"
                 for e in EXTRACTORS]
        out.append(f"| {what} | {checks} | " + " | ".join(cells) + f" | {source(name, r)}{mark(r, weights, by)} |"
                   f" {insample} |")
        lacking = absent(by, {n: x for n, x in having.items() if n != name}, lambda x, s=story: x["results"][s])
        notes.append(f"- {what}: {command_of(name, r)}" + (f". {lacking}" if lacking else ""))
    return out + ["", "Commands, and what a newest run lacks:", ""] + notes


def vocabulary_table(res: Results, weights) -> list[str]:
    found = newest_of(res, "vocabulary_examples*", lambda r: r.get("results"))
    if not found:
        return []
    name, r, older = found
    by = r["results"]
    n = next(iter(by.values()))["examples"]
    cells = [f"{by[e]['pass']} / {by[e]['examples']}" if e in by else "*not in this run*" for e in EXTRACTORS]
    return ["", "### The vocabulary's example sentences", "",
            f"Run: {source(name, r)}{mark(r, weights, by)}, {command_of(name, r)}. Each row of the fact vocabulary"
            " carries example sentences with the fact they state; an example passes when a candidate has the"
            " row's predicate (or an alias), the object and the status. In-sample for the learned extractor: the"
            " examples are part of its training split.", "",
            "| examples | " + " | ".join(f"{e} passed" for e in EXTRACTORS) + " |", "|---:|" + "---:|" * 3,
            f"| {n} | " + " | ".join(cells) + " |"] + (["", lacking] if (lacking := absent(
                by, older, lambda x: x.get("results", {}))) else [])


def write_section(write: dict) -> list[str]:
    return ["## Write path", "",
            f"Run: {source('write_throughput', write)}, `{write.get('command', 'python bench/write_throughput.py')}`"
            " (`kenning bench write`): every turn of the LoCoMo dev conversations through `Memory.add` on a real SQLite"
            f" file (offline extractor `{write.get('extractor', 'parse')}`, one embedding per message and per stored"
            " fact, one transaction per turn).",
            "", "| turns | facts written | turns/s | facts/s | add p50 ms | add p95 ms | add p99 ms | embedder load s |"
            " query embedding p50 ms |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {write['turns']:,} | {write['facts_written']:,} | {write['turns_per_s']} | {write['facts_per_s']} | "
            f"{write['add_ms_p50']} | {write['add_ms_p95']} | {write['add_ms_p99']} | {write['embedder_load_s']} | "
            f"{write['embed_query_ms_p50']} |", ""] + ([
            "The same turns queued with `add_turn` and drained by one worker claiming "
            f"{write['queued_batch']} jobs at a time (one parser batch, one embedding batch per claim): "
            f"{write['queued_turns_per_s']} turns/s ({write['queued_vs_add']}× add). With no extractor at all: "
            f"{write['floor_no_extractor_turns_per_s']} turns/s. All three runs start from a cold vector cache, "
            "side by side in one process.", ""] if write.get("queued_turns_per_s") else []) + ([
            "Queued, per extractor, in the same run: " + ", ".join(
                f"`{k.removeprefix('queued_ms_per_turn_')}` {v} ms a turn" for k, v in write.items()
                if k.startswith("queued_ms_per_turn_")) + f" (no extractor: {write['floor_ms_per_turn']} ms).", ""]
            if write.get("floor_ms_per_turn") else [])


# -- the page ------------------------------------------------------------------------------------
def machine_section(results: dict[str, dict]) -> list[str]:
    first = next(iter(results.values()))
    m, v = first["machine"], {}
    for r in results.values():
        v.update({k: x for k, x in r.get("versions", {}).items() if x})
    out = ["## Machine, versions and every result quoted", "",
           f"- {m['system']}, {m['cpu']}, {m['cores']} cores, {m.get('memory_gib')} GiB, Python {m['python']};"
           " shared and noisy, so every comparison within a section was measured side by side in one run.",
           "- " + ", ".join(f"{k} {x}" for k, x in sorted(v.items())), "",
           REBUILT, "", "| result | date | command |", "|---|---|---|"]
    for name, r in results.items():
        out.append(f"| `bench/results/{name}.json` | {when(r)} | {command_of(name, r)} |")
    return out + [""]


def render(res: Results, img: Path | None = IMG, weights: datetime | None = None) -> list[str]:
    """The page's lines; the plots go under ``img`` (None: no plots)."""
    lines = ["# Benchmarks", "",
             "Generated by `bench/report.py` from `bench/results/*.json`; do not edit by hand. Each section says"
             " how its numbers were measured, from which result file and when; run them yourself with the commands"
             " given (`kenning bench <name>` runs `bench/<script>.py`). Figures in different sections can come from"
             " different runs, on different days and code: compare within a section. The benchmarks are never part"
             " of the test suite.", ""]
    lines += goals_section(res) + tuned_section(res)
    latency, full = res.get("latency"), res.get("latency_full")
    if latency:
        if img:
            plot_latency({"": latency, **({"--full": full} if full else {})}, img / "latency.png")
        lines += latency_section(latency, full)
    for name, section in (("bulk_load", bulk_section), ("replicas", replicas_section)):
        if r := res.get(name):
            lines += section(r)
    peers, locomo, tune = res.get("peers"), res.get("locomo"), res.get("locomo_tune")
    if peers:
        lines += peers_section(peers, tune)
    if locomo:
        if img:
            plot_locomo(locomo_bars(locomo, peers, tune), img / "locomo.png")
        lines += locomo_section(locomo, peers, tune)
    if life := res.get("life_questions"):
        lines += life_section(life)
    if filler := res.get("filler"):
        lines += filler_section(filler)
    lines += extraction_section(res, weights)
    if write := res.get("write_throughput"):
        lines += write_section(write)
    if res.used:
        lines += machine_section(res.used)
    if missing := [n for n in HEADLINE if n not in res.used]:
        lines += [f"Not measured in this report: {', '.join(missing)}.", ""]
    return [line for i, line in enumerate(lines) if line or i == 0 or lines[i - 1]]   # one blank line at most


def locomo_bars(locomo: dict, peers: dict | None, tune: dict | None) -> dict[str, dict]:
    """The plot's bars, each labelled with the run it comes from where that is not locomo.json."""
    systems = {n: {c: v["10"] for c, v in r.items()} for n, r in locomo["report"].items()}
    if tune and tune["k"] == 10:
        systems = {"kenning": systems.pop("kenning"),
                   f"kenning (leave-one-out, {tune['date'][:10]})": tune["leave_one_out"], **systems}
    for name, per_cat in (peers or {}).get("recall_by_category", {}).items():
        if name != "kenning":
            systems[f"{name} (peers run, {peers['date'][:10]})"] = per_cat
    return systems


def main() -> int:
    res = Results()
    if not res.names("*"):
        print("no results under bench/results/: run the benchmarks first", file=sys.stderr)
        return 1
    IMG.mkdir(parents=True, exist_ok=True)
    lines = render(res, IMG, weights_date())
    (DOCS / "benchmarks.md").write_text("\n".join(lines))
    print(f"written to {(DOCS / 'benchmarks.md').relative_to(ROOT)} and {IMG.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
