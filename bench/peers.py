"""kenning vs. mem0 vs. LangGraph's InMemoryStore on one LoCoMo workload: write speed, search latency, recall@10.

The same workload goes through every system, side by side in one process: each
LoCoMo dev conversation is one user (kenning dataset, mem0 user_id, LangGraph
namespace) and each of its turns is added as one memory; then every question
with gold evidence is searched with limit 10, the hits map to dia_ids, and
evidence recall@10 is scored with bench/locomo.py's helpers.

* kenning: ``Memory("sqlite:///<tmp file>")``; ``add(text, dataset, at, chat,
  message_id=dia_id)`` (the configured offline extractor mines facts on every
  add) and ``recall(question, dataset, limit=10)``.
* kenning-plain: the same, given exactly what the peers get: ``add(text,
  dataset, message_id=dia_id)``, no session time (``at`` defaults to the
  moment of the add) and no chat. It is the like-for-like figure; kenning
  above shows what the session times and chats add.
* mem0 (open-source ``mem0ai``, fully local): ``add(text, user_id,
  infer=False, metadata={"dia_id"})`` and ``search(q, top_k=10,
  filters={"user_id"})``; vector store Qdrant in local on-disk mode
  (qdrant-client, no server), history SQLite file, telemetry off, and an LLM
  that raises if called (it never is: infer=False).
* LangGraph ``InMemoryStore(index={"dims": 384, "embed": ..., "fields":
  ["text"]})``: ``put(("conv", id), dia_id, {"text"})`` and ``search(ns,
  query=q, limit=10)``.

All three embed with kenning's bundled model (all-MiniLM-L6-v2 int8 ONNX, one
ONNX thread), one loaded session shared by all; the peers get it through a
LangChain ``Embeddings`` wrapper. Timings use ``time.perf_counter`` around each
call, so they include embedding the text or the query. Runs alternate systems
(kenning, kenning-plain, mem0, langgraph, kenning, ...), each on a fresh store
after a short untimed warm-up; figures are the median over runs, ratios are
kenning/peer (for each kenning variant). After the runs, embedding each question
alone is timed once with the same model (``query_embedding``), so a reader can
take it out of the search times. Each system's conditions (inputs given,
extraction, search, storage, embedding model, LLM calls, threshold, tuning) are
recorded beside its figures (``conditions``). Network access is blocked
in-process for the whole run and attempts are counted.

Default: a deterministic subset (the first 3 of the 5 conversations, 1,451
turns, and 300 of their questions evenly spread); ``--full`` runs every
conversation and question. kenning's add time is set by its extractor: with the
default (rules + learned, about 21 turns/s on 2 cores) one kenning run of
``--full`` takes about 2.5 minutes, so 3 runs of all four systems take about
20 minutes (the default subset about half that). Store sizes matter: mem0's
search cost grows with the memories of all users in its collection (see the
notes in the JSON).

    .venv-bench/bin/python bench/peers.py [--runs 3] [--conversations N] [--questions N] [--full]
        [--systems kenning,kenning-plain,mem0,langgraph] [--data PATH] [--json NAME]
    .venv-bench/bin/kenning bench peers [same options]

Peers install into their own venv (the project does not depend on them):

    python3 -m venv .venv-bench && .venv-bench/bin/pip install -e . -r bench/requirements.txt

Writes bench/results/peers.json (``--json NAME``: bench/results/NAME.json).
Data: LoCoMo (CC BY-NC 4.0), see ../shared/data/README.md.
"""
from __future__ import annotations

import os

# Before any peer is imported: mem0 reads these at import time.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"
os.environ["HF_HUB_OFFLINE"] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections import defaultdict  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import pct, write  # noqa: E402
from locomo import CATEGORIES, DEFAULT_DATA, clean_evidence, item_ids, score, turns_of  # noqa: E402

K = 10
SYSTEMS = ("kenning", "kenning-plain", "mem0", "langgraph")
KENNINGS = ("kenning", "kenning-plain")   # the variants; the rest are peers
EMBEDDING = "all-MiniLM-L6-v2 int8 ONNX (kenning's bundled model), 1 thread, one session shared by all"
DEFAULT_CONVERSATIONS = 3
DEFAULT_QUESTIONS = 300
PEER_MODULES = {"mem0": ("mem0", "qdrant_client", "langchain", "langchain_core"),
                "langgraph": ("langgraph", "langchain_core")}
PEER_PACKAGES = ("mem0ai", "qdrant-client", "langgraph", "langgraph-checkpoint", "langchain", "langchain-core",
                 "tokenizers")  # common.versions adds kenning, onnxruntime, numpy
WARMUP_TEXTS = ["Warm-up: the weather was mild today.", "Warm-up: I had pasta for lunch.",
                "Warm-up: my sister visited last weekend.", "Warm-up: we talked about books.",
                "Warm-up: the train was late again."]
WARMUP_QUERIES = ["What did they eat?", "Who visited?", "How was the weather?", "What about books?",
                  "Was the train on time?"]
LLM_CALLS = []  # one entry per (forbidden) mem0 LLM call


# -- no network, counted ------------------------------------------------------------------------------
class NetworkGuard:
    """Refuses every IP connection and name lookup in this process while active, and records them."""

    def __init__(self):
        self.attempts: list[str] = []
        self._saved = None

    def _refuse(self, what):
        where = "".join(traceback.format_stack(limit=6)[:-2]).strip().splitlines()[-1:]
        self.attempts.append(f"{what} at {' '.join(where).strip()}")
        raise OSError(f"bench/peers.py blocks network access ({what})")

    def __enter__(self):
        guard, orig_connect, orig_connect_ex = self, socket.socket.connect, socket.socket.connect_ex
        self._saved = (orig_connect, orig_connect_ex, socket.getaddrinfo)

        def connect(sock, address):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse(f"connect {address!r}")
            return orig_connect(sock, address)

        def connect_ex(sock, address):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse(f"connect_ex {address!r}")
            return orig_connect_ex(sock, address)

        def getaddrinfo(host, *args, **kwargs):
            guard._refuse(f"getaddrinfo {host!r}")

        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
        return self

    def __exit__(self, *exc):
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = self._saved


# -- workload --------------------------------------------------------------------------------------------
def load_workload(path: Path, conversations: int | None, questions: int | None):
    """(users, questions, description): users = [(user, [(dia_id, chat, when, text)])], questions spread evenly."""
    samples = json.loads(path.read_text())
    chosen = samples[:conversations] if conversations else samples
    users, asked = [], []
    for sample in chosen:
        turns = list(turns_of(sample))
        users.append((sample["sample_id"], turns))
        valid = {t[0] for t in turns}
        for qa in sample["qa"]:
            gold = clean_evidence(qa.get("evidence", []), valid)
            if gold:
                asked.append((sample["sample_id"], qa["question"], gold, qa["category"]))
    total = len(asked)
    if questions and questions < total:
        asked = [asked[i * total // questions] for i in range(questions)]
    n_turns = sum(len(t) for _, t in users)
    desc = (f"{len(users)} of {len(samples)} conversations ({', '.join(u for u, _ in users)}), {n_turns} turns, "
            f"{len(asked)} of their {total} questions with evidence")
    return users, asked, desc


# -- the shared embedder -----------------------------------------------------------------------------------
def shared_embedder():
    """kenning's bundled model, one ONNX thread, loaded once for every system (kenning's default threads)."""
    from kenning.embed.local import LocalEmbedder

    embedder = LocalEmbedder(threads=1)
    embedder.load()
    return embedder


def langchain_adapters(embedder):
    """A LangChain Embeddings over kenning's embedder, and a chat model that fails if anyone calls it."""
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.chat_models import BaseChatModel

    class KenningEmbeddings(Embeddings):
        def embed_documents(self, texts):
            return embedder.embed_batch(texts).tolist()

        def embed_query(self, text):
            return embedder.embed(text).tolist()

    class ForbiddenLLM(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "forbidden"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            LLM_CALLS.append(str(messages)[:200])
            raise RuntimeError("bench/peers.py: mem0 called its LLM; this benchmark never allows that")

    return KenningEmbeddings(), ForbiddenLLM()


# -- the systems: add(user, dia_id, chat, when, text), search(user, query) -> [[dia_id, ...], ...], close() --
class KenningSystem:
    name = "kenning"
    timed = True    # given each turn's session time (at=) and session (chat=), which the peers never get

    def __init__(self, folder: Path, embedder):
        from kenning import Memory
        from kenning.embed.base import CachedEmbedder

        # Memory()'s default embedder is a process-wide CachedEmbedder; a fresh cache per run keeps
        # earlier runs' texts from turning this run's embeddings into cache hits.
        self.mem = Memory(f"sqlite:///{folder / 'kenning.db'}", embedder=CachedEmbedder(embedder))

    @classmethod
    def config(cls):
        given = "at=session time, role='user', chat=session" if cls.timed else "role='user' (no at, no chat)"
        return {"api": "kenning.Memory('sqlite:///<tmp>/kenning.db')", "store": "SQLite file (kenning's own)",
                "add": f"mem.add(text, dataset=f'locomo-{{id}}', {given}, message_id=dia_id) (the configured "
                       "extractor mines facts on each add; see conditions)",
                "search": "mem.recall(question, dataset=..., limit=10); items map to dia_ids by episode_id/message_id",
                "embedder": "all-MiniLM-L6-v2-int8 (kenning bundled ONNX), 1 thread, kenning's CachedEmbedder "
                            "(fresh per run)"}

    def conditions(self):
        """What this run's kenning was given and did, read from the Memory it ran (not typed in)."""
        extractor = getattr(self.mem.extractor, "name", type(self.mem.extractor).__name__)
        preset = self.mem.services.reader.preset
        signals = sorted({signal for (_, signal), w in preset.weights.items() if w})
        return {"inputs": ["text", "dia_id"] + (["time", "chat"] if self.timed else []),
                "extraction": EXTRACTION_WORDS.get(extractor, extractor) + f" (`{extractor}`), offline",
                "search": f"hybrid, preset `{preset.name}`: {' + '.join(signals)} signals fused by "
                          f"{preset.fusion.upper()}",
                "storage": "SQLite file (kenning's own store)", "embedding": EMBEDDING,
                "llm_calls": 0,
                "threshold": f"facts below confidence {self.mem.settings.retrieval_floor} left out; "
                             "messages: none",
                "tuned_on_these_conversations": "yes: the recall preset's weights were chosen on the LoCoMo dev "
                                                "conversations (in-sample; see bench/results/locomo_tune.json)"}

    def add(self, user, dia_id, chat, when, text):
        if self.timed:
            self.mem.add(text, dataset=f"locomo-{user}", at=when, role="user", chat=chat, message_id=dia_id)
        else:
            self.mem.add(text, dataset=f"locomo-{user}", role="user", message_id=dia_id)

    def search(self, user, query):
        return [item_ids(i) for i in self.mem.recall(query, dataset=f"locomo-{user}", limit=K).items]

    def close(self):
        self.mem.close()


class KenningPlainSystem(KenningSystem):
    """kenning given exactly what the peers get: the text and its dia_id, no session time, no chat."""

    name = "kenning-plain"
    timed = False


EXTRACTION_WORDS = {"combined:parse+learned": "rules + learned extractor", "parse": "rules",
                    "learned": "learned extractor"}


class Mem0System:
    name = "mem0"

    def __init__(self, folder: Path, embedder):
        from mem0 import Memory

        embeddings, llm = langchain_adapters(embedder)
        self.mem = Memory.from_config(self.config_dict(folder, embeddings, llm))
        self.store_ms = []  # per search(): ms spent inside the vector store's search (Qdrant local mode)
        self._in_store = 0.0
        inner = self.mem.vector_store.search

        def timed_search(*args, **kwargs):
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self._in_store += time.perf_counter() - t
        self.mem.vector_store.search = timed_search

    @staticmethod
    def config_dict(folder, embeddings, llm):
        return {"embedder": {"provider": "langchain", "config": {"model": embeddings, "embedding_dims": 384}},
                "vector_store": {"provider": "qdrant", "config": {"collection_name": "locomo",
                                                                  "embedding_model_dims": 384,
                                                                  "path": str(folder / "qdrant")}},
                "llm": {"provider": "langchain", "config": {"model": llm}},
                "history_db_path": str(folder / "history.db")}

    @staticmethod
    def config():
        return {"api": "mem0.Memory.from_config(...)",
                "embedder": "provider 'langchain': kenning's all-MiniLM-L6-v2-int8 ONNX (1 thread) wrapped as a "
                            "LangChain Embeddings",
                "vector_store": "qdrant, local on-disk mode (QdrantClient(path=<tmp>/qdrant)), collection 'locomo', "
                                "384 dims, cosine (mem0's default provider)",
                "history_db": "<tmp>/history.db (SQLite)",
                "llm": "provider 'langchain' with a chat model that raises on any call (never called)",
                "reranker": None, "telemetry": "MEM0_TELEMETRY=False",
                "add": "m.add(text, user_id=id, infer=False, metadata={'dia_id': dia_id})",
                "search": "m.search(question, top_k=10, filters={'user_id': id}) (defaults: threshold=0.1, "
                          "rerank=False)"}

    def add(self, user, dia_id, chat, when, text):
        self.mem.add(text, user_id=user, infer=False, metadata={"dia_id": dia_id})

    def search(self, user, query):
        before = self._in_store
        hits = self.mem.search(query, top_k=K, filters={"user_id": user})["results"]
        self.store_ms.append((self._in_store - before) * 1000)
        return [[h["metadata"]["dia_id"]] for h in hits]

    def conditions(self):
        feat = self.features()
        extras = [name for name, used in (("BM25", feat["bm25_keyword_search"]),
                                          ("entity boost", feat["spacy_entity_boost"])) if used]
        return {"inputs": ["text", "dia_id"], "extraction": "none (add(infer=False): no LLM, the turn is stored as is)",
                "search": "dense + " + " + ".join(extras) if extras else
                          "dense only (its BM25 and entity extras need models fetched at run time; none here)",
                "storage": "Qdrant local mode (on-disk, in process) + history SQLite file", "embedding": EMBEDDING,
                "llm_calls": len(LLM_CALLS), "threshold": "cosine < 0.1 dropped (mem0's default)",
                "tuned_on_these_conversations": "no (library defaults)"}

    def features(self):
        """What mem0's hybrid search actually used here (its extra signals need run-time model downloads)."""
        from mem0.utils.spacy_models import _nlp_full, _nlp_lemma

        return {"bm25_keyword_search": self.mem.vector_store._get_bm25_encoder() is not None,
                "spacy_lemmatizer": _nlp_lemma is not None, "spacy_entity_boost": _nlp_full is not None}

    def close(self):
        self.mem.close()
        self.mem.vector_store.client.close()
        if self.mem._entity_store is not None:
            self.mem._entity_store.client.close()


class LangGraphSystem:
    name = "langgraph"

    def __init__(self, folder: Path, embedder):
        from langgraph.store.memory import InMemoryStore

        embeddings, _ = langchain_adapters(embedder)
        self.store = InMemoryStore(index={"dims": 384, "embed": embeddings, "fields": ["text"]})

    @staticmethod
    def config():
        return {"api": "langgraph.store.memory.InMemoryStore(index={'dims': 384, 'embed': <Embeddings>, "
                       "'fields': ['text']})",
                "embedder": "kenning's all-MiniLM-L6-v2-int8 ONNX (1 thread) wrapped as a LangChain Embeddings",
                "vector_store": "in process memory (Python dicts; brute-force cosine with numpy per search)",
                "add": "store.put(('conv', id), dia_id, {'text': text})",
                "search": "store.search(('conv', id), query=question, limit=10)"}

    def add(self, user, dia_id, chat, when, text):
        self.store.put(("conv", user), dia_id, {"text": text})

    def search(self, user, query):
        return [[item.key] for item in self.store.search(("conv", user), query=query, limit=K)]

    @staticmethod
    def conditions():
        return {"inputs": ["text", "dia_id"], "extraction": "none (the turn is stored as is)",
                "search": "dense only (brute-force cosine over the namespace)",
                "storage": "in process memory (Python dicts, nothing on disk)", "embedding": EMBEDDING,
                "llm_calls": 0, "threshold": "none", "tuned_on_these_conversations": "no (library defaults)"}

    def close(self):
        self.store = None


SYSTEM_CLASSES = {"kenning": KenningSystem, "kenning-plain": KenningPlainSystem, "mem0": Mem0System,
                  "langgraph": LangGraphSystem}


# -- one run -------------------------------------------------------------------------------------------------
def warm_up(system):
    when = datetime(2023, 1, 1, tzinfo=timezone.utc)
    for i, text in enumerate(WARMUP_TEXTS):
        system.add("warmup", f"W:{i}", "warmup", when, text)
    for query in WARMUP_QUERIES:
        system.search("warmup", query)


def run_once(cls, folder: Path, embedder, users, questions):
    """A fresh store: untimed warm-up, every turn added (each timed), every question searched (each timed)."""
    system = cls(folder, embedder)
    try:
        warm_up(system)
        add_ms = []
        t0 = time.perf_counter()
        for user, turns in users:
            for dia_id, chat, when, text in turns:
                t = time.perf_counter()
                system.add(user, dia_id, chat, when, text)
                add_ms.append((time.perf_counter() - t) * 1000)
        add_wall = time.perf_counter() - t0
        search_ms, recalls, short = [], defaultdict(list), 0
        for user, question, gold, category in questions:
            t = time.perf_counter()
            ranked = system.search(user, question)
            search_ms.append((time.perf_counter() - t) * 1000)
            short += len(ranked) < K
            recalls[category].append(score(ranked, gold, K))
        features = system.features() if hasattr(system, "features") else None
        conditions = system.conditions()
        store_ms = getattr(system, "store_ms", None)
        if store_ms is not None:
            store_ms = store_ms[len(WARMUP_QUERIES):]
    finally:
        system.close()
    raw = {"adds": len(add_ms), "add_wall_s": round(add_wall, 3), "add_per_s": round(len(add_ms) / add_wall, 2),
           "add_p50_ms": round(pct(add_ms, 50), 2), "add_p95_ms": round(pct(add_ms, 95), 2),
           "add_p99_ms": round(pct(add_ms, 99), 2), "searches": len(search_ms),
           "search_mean_ms": round(statistics.fmean(search_ms), 2), "search_p50_ms": round(pct(search_ms, 50), 2),
           "search_p95_ms": round(pct(search_ms, 95), 2), "search_p99_ms": round(pct(search_ms, 99), 2),
           "searches_with_fewer_than_k_hits": short}
    if store_ms:
        raw["vector_store_search_p50_ms"] = round(pct(store_ms, 50), 2)
        raw["vector_store_search_share"] = round(sum(store_ms) / sum(search_ms), 3)
    return raw, recall_report(recalls), features, conditions


def time_query_embedding(embedder, questions) -> dict:
    """Each question embedded once, alone, with the shared model: the part of every search time that no
    system's own work can remove (the same model and thread count for all)."""
    ms = []
    for _, question, _, _ in questions:
        t = time.perf_counter()
        embedder.embed(question)
        ms.append((time.perf_counter() - t) * 1000)
    return {"n": len(ms), "p50_ms": round(pct(ms, 50), 2), "p95_ms": round(pct(ms, 95), 2)}


def recall_report(recalls):
    report = {CATEGORIES[c]: {"recall@10": sum(v) / len(v), "n": len(v)} for c, v in sorted(recalls.items())}
    every = [x for v in recalls.values() for x in v]
    report["overall"] = {"recall@10": sum(every) / len(every), "n": len(every)}
    return report


# -- summary ------------------------------------------------------------------------------------------------
FIGURES = ("add_per_s", "add_p50_ms", "add_p95_ms", "add_p99_ms", "search_mean_ms", "search_p50_ms",
           "search_p95_ms", "search_p99_ms")


def medians(raw_runs, quality):
    med = {f: round(statistics.median(r[f] for r in raw_runs), 2) for f in FIGURES}
    med["recall_at_10"] = round(quality["overall"]["recall@10"], 4)
    return med


def ratios(ken, peer):
    """kenning/peer for every figure, plus the headline speed-ups (peer time / kenning time)."""
    per_figure = {f: round(ken[f] / peer[f], 3) for f in FIGURES if peer[f]}
    return {"search_speedup_p50": round(peer["search_p50_ms"] / ken["search_p50_ms"], 2),
            "search_speedup_p95": round(peer["search_p95_ms"] / ken["search_p95_ms"], 2),
            "search_speedup_p99": round(peer["search_p99_ms"] / ken["search_p99_ms"], 2),
            "add_throughput_ratio": round(ken["add_per_s"] / peer["add_per_s"], 2),
            "add_p95_speedup": round(peer["add_p95_ms"] / ken["add_p95_ms"], 2),
            "kenning_recall_at_10": ken["recall_at_10"], "peer_recall_at_10": peer["recall_at_10"],
            "kenning_over_peer": per_figure}


def speed_words(ratio, latency=True):
    """ratio = kenning/peer; for a latency below 1 means kenning is faster, for a throughput above 1."""
    faster = 1 / ratio if latency else ratio
    return f"{faster:.2f}x faster" if faster >= 1 else f"{1 / faster:.2f}x slower"


def print_tables(med, quality, rat):
    """``rat``: kenning variant -> peer -> ratios."""
    names = list(med)
    print(f"\n{'system':<15}{'add/s':>9}{'add p50':>9}{'add p95':>9}{'search p50':>12}{'p95':>8}{'p99':>8}"
          f"{'recall@10':>11}   (ms; medians over runs)")
    for n in names:
        m = med[n]
        print(f"{n:<15}{m['add_per_s']:>9.1f}{m['add_p50_ms']:>9.2f}{m['add_p95_ms']:>9.2f}{m['search_p50_ms']:>12.2f}"
              f"{m['search_p95_ms']:>8.2f}{m['search_p99_ms']:>8.2f}{m['recall_at_10']:>11.3f}")
    for variant, peer, r in ((v, p, r) for v, by_peer in rat.items() for p, r in by_peer.items()):
        k = r["kenning_over_peer"]
        print(f"\n{variant} vs {peer}: search p50 ratio {k['search_p50_ms']:.2f} (kenning is "
              f"{speed_words(k['search_p50_ms'])}), p95 ratio {k['search_p95_ms']:.2f} "
              f"({speed_words(k['search_p95_ms'])}), p99 ratio {k['search_p99_ms']:.2f} "
              f"({speed_words(k['search_p99_ms'])}); add/s ratio {k['add_per_s']:.2f} "
              f"({speed_words(k['add_per_s'], latency=False)}), add p95 ratio {k['add_p95_ms']:.2f} "
              f"({speed_words(k['add_p95_ms'])}); recall@10 {r['kenning_recall_at_10']:.3f} vs "
              f"{r['peer_recall_at_10']:.3f}")
    print(f"\n{'recall@10':<13}{'n':>5}" + "".join(f"{n:>15}" for n in names))
    for cat in list(CATEGORIES.values()) + ["overall"]:
        if cat in quality[names[0]]:
            print(f"{cat:<13}{quality[names[0]][cat]['n']:>5}"
                  + "".join(f"{quality[n][cat]['recall@10']:>15.3f}" for n in names))


def kenning_revision():
    """The checkout's commit, and whether src/ differs from it (the code kenning's numbers come from)."""
    def git(*cmd):
        return subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD")
        return head + (" + uncommitted changes in src/" if git("status", "--porcelain", "--", "src") else "")
    except (OSError, subprocess.SubprocessError):
        return None


def available(systems):
    ok = []
    for name in systems:
        missing = [m for m in PEER_MODULES.get(name, ()) if importlib.util.find_spec(m) is None]
        if missing:
            print(f"{name}: not installed (missing {', '.join(missing)}); skipping it. Install the peers into a "
                  f"separate venv: python3 -m venv .venv-bench && .venv-bench/bin/pip install -e . "
                  f"-r bench/requirements.txt", file=sys.stderr)
        else:
            ok.append(name)
    return ok


NOTES = [
    "All systems embed with the same model and session: kenning's bundled all-MiniLM-L6-v2 int8 ONNX, one "
    "ONNX thread; add and search timings include embedding.",
    "kenning's add does more than store a vector: its offline extractor (see conditions) mines facts and entities "
    "from every turn and they are embedded and indexed too (and a background job worker polls the queue); mem0 "
    "with infer=False and LangGraph only embed and store the turn.",
    "kenning's recall is hybrid (dense + BM25 + entity/slot signals, fused) and renders a context block. "
    "'kenning' is given each turn's session time (at=) and chat; mem0 OSS rejects add(timestamp=...) and LangGraph "
    "has no time field, so the peers only get the text and dia_id. 'kenning-plain' gets exactly what the peers "
    "get (text and dia_id; its at is the moment of the add, and there is no chat): it is the like-for-like "
    "figure. Each system's inputs are in conditions.",
    "kenning's recall preset was tuned on these very LoCoMo dev conversations, so both kenning figures are "
    "in-sample; bench/locomo_tune.py's leave-one-conversation-out figure is the out-of-sample one. The peers run "
    "with their library defaults.",
    "mem0 add(infer=False): no LLM call, no dedup and no update/delete decision (those need the LLM); each turn is "
    "embedded once and inserted into Qdrant and the history SQLite table. Read from mem0/memory/main.py "
    "(_add_to_vector_store's `if not infer` branch, _create_memory).",
    "mem0 search: no LLM and no reranker (rerank=False, no reranker configured). Its hybrid extras need models "
    "fetched at run time: BM25 keyword search needs fastembed's Qdrant/bm25 (HuggingFace hub) and lemmatization / "
    "entity boosts need spaCy's en_core_web_sm; neither is reachable offline, so neither is installed and mem0 "
    "falls back to semantic search only (see config.mem0.features_used). That makes mem0's search cheaper and its "
    "recall likely lower than a fully-online mem0 install.",
    "mem0 search keeps its default threshold=0.1 (hits with cosine < 0.1 are dropped); see "
    "searches_with_fewer_than_k_hits in the raw runs.",
    "mem0 uses Qdrant's local mode (qdrant-client, no server; mem0's default provider, which qdrant-client "
    "describes as meant for development and testing): it persists to a local SQLite file and answers a search by "
    "checking the user_id filter on every point of the collection in Python, then brute-force cosine. So mem0's "
    "search time grows with the memories of ALL users, not just the one searched, and a small subset understates "
    "it. raw[mem0][*].vector_store_search_share is the measured share of mem0's search time spent inside that "
    "vector-store call. A Qdrant server (Rust, HNSW, payload index) would be much faster per search, at the cost "
    "of running a separate service; mem0's faiss store was not used because it filters after a global top-2k "
    "fetch, which drops hits when several users share an index.",
    "LangGraph's InMemoryStore keeps everything in Python dicts (nothing on disk) and embeds only the 'text' field; "
    "each search embeds the query in a thread pool and scores the namespace by brute force.",
    "kenning runs on a real SQLite file; each run gets a fresh store and, for kenning, a fresh embedding cache "
    "(Memory()'s default CachedEmbedder is per process, so later runs would otherwise hit texts from earlier ones).",
]


# -- main -----------------------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--conversations", type=int, default=None,
                    help=f"first N conversations (default {DEFAULT_CONVERSATIONS}; all with --full)")
    ap.add_argument("--questions", type=int, default=None,
                    help=f"N of their questions, evenly spread (default {DEFAULT_QUESTIONS}; all with --full)")
    ap.add_argument("--full", action="store_true", help="every conversation and question of the dev set")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--json", type=Path, default=Path("peers.json"), help="result name under bench/results/")
    args = ap.parse_args(argv)
    if args.full:
        n_conv, n_q = args.conversations, args.questions
    else:
        n_conv = args.conversations or DEFAULT_CONVERSATIONS
        n_q = args.questions or DEFAULT_QUESTIONS
    subset = not args.full and (args.conversations is None or args.questions is None)

    names = [s for s in args.systems.split(",") if s]
    unknown = set(names) - set(SYSTEMS)
    if unknown or not set(KENNINGS) & set(names):
        ap.error(f"--systems takes kenning and/or kenning-plain, plus any of mem0, langgraph (got {args.systems!r})")
    names = available(names)
    users, questions, desc = load_workload(args.data, n_conv, n_q)
    print(f"workload: {desc}" + (" (default subset; --full for everything)" if subset else ""))
    print(f"systems: {', '.join(names)}; {args.runs} runs, alternating; recall@{K}")

    start = time.perf_counter()
    raw, quality, features, conditions = defaultdict(list), {}, {}, {}
    varies = set()
    with tempfile.TemporaryDirectory(prefix="kenning-peers-") as tmp, NetworkGuard() as guard:
        os.environ["MEM0_DIR"] = str(Path(tmp) / "mem0-home")  # mem0 writes its config/user id here, not ~/.mem0
        logging.getLogger("mem0").setLevel(logging.ERROR)      # its "fastembed not installed" warning is in notes
        embedder = shared_embedder()
        for run in range(args.runs):
            for name in names:
                folder = Path(tmp) / f"{name}-{run}"
                folder.mkdir()
                gc.collect()
                r, q, feat, conditions[name] = run_once(SYSTEM_CLASSES[name], folder, embedder, users, questions)
                shutil.rmtree(folder, ignore_errors=True)
                raw[name].append(r)
                if name not in quality:
                    quality[name] = q
                elif q != quality[name]:
                    varies.add(name)
                if feat is not None:
                    features[name] = feat
                print(f"  run {run + 1} {name:<14} add {r['add_per_s']:7.1f}/s (p95 {r['add_p95_ms']:.2f} ms)  "
                      f"search p50 {r['search_p50_ms']:.2f} p95 {r['search_p95_ms']:.2f} ms  "
                      f"recall@{K} {q['overall']['recall@10']:.3f}", flush=True)
        embedding_began = time.perf_counter()
        query_embedding = time_query_embedding(embedder, questions)   # after the runs: their timings unchanged
        embedding_s = time.perf_counter() - embedding_began
    wall = time.perf_counter() - start - embedding_s
    if "mem0" in conditions:
        conditions["mem0"]["llm_calls"] = len(LLM_CALLS)

    med = {n: medians(raw[n], quality[n]) for n in names}
    peers = [n for n in names if n not in KENNINGS]
    rat = {v: {p: ratios(med[v], med[p]) for p in peers} for v in KENNINGS if v in med}
    print_tables(med, quality, rat)
    print(f"\nquery embedding alone (each question once, same model): p50 {query_embedding['p50_ms']} ms, "
          f"p95 {query_embedding['p95_ms']} ms")
    if "mem0" in raw and "vector_store_search_share" in raw["mem0"][0]:
        share = statistics.median(r["vector_store_search_share"] for r in raw["mem0"])
        print(f"\nmem0: {100 * share:.0f}% of its search time is inside Qdrant local mode's search "
              f"(Python-side user_id filter over every point of the collection, then brute-force cosine)")
    print(f"\nwall time {wall:.0f}s; network attempts blocked: {len(guard.attempts)}; mem0 LLM calls: {len(LLM_CALLS)}")
    if guard.attempts:
        print("  network attempts:\n    " + "\n    ".join(guard.attempts[:10]), file=sys.stderr)
    for name in sorted(varies):
        print(f"  note: {name}'s recall differed between runs; the first run's is reported", file=sys.stderr)

    notes = list(NOTES) + [f"{n}: recall differed between runs (first run reported)" for n in sorted(varies)]
    if {"mem0", "langgraph"} <= set(quality) and quality["mem0"] == quality["langgraph"]:
        notes.append("mem0 and langgraph returned the same recall on every question: as configured here both are "
                     "dense-only top-10 over the same embeddings.")
    configs = {n: SYSTEM_CLASSES[n].config() for n in names}
    for n, feat in features.items():
        configs[n]["features_used"] = feat
    command = " ".join(["python bench/peers.py", *(sys.argv[1:] if argv is None else argv)])
    description = (f"{desc}; each conversation is one user, each turn one memory; every question searched with "
                   f"limit {K}; evidence recall@{K}. {args.runs} runs alternating {', '.join(names)}, each on a "
                   f"fresh store after an untimed warm-up; figures are medians over runs, timings include "
                   f"embedding (same ONNX model and thread count for all)."
                   + (" Default subset; --full runs every conversation and question." if subset else ""))
    write(args.json.stem, {
        "command": command, "description": description, "platform": platform.platform(),
        "kenning_revision": kenning_revision(),
        "workload": {"data": args.data.name, "default_subset": subset, "conversations": [u for u, _ in users],
                     "turns": sum(len(t) for _, t in users), "questions": len(questions), "k": K},
        "config": configs, "runs": args.runs, "order": names, "wall_s": round(wall, 1),
        "medians": med, "ratios": rat.get("kenning", {}), "ratios_plain": rat.get("kenning-plain", {}),
        "query_embedding": query_embedding, "conditions": conditions,
        "recall_by_category": {n: {c: round(v["recall@10"], 4) for c, v in quality[n].items()} for n in names},
        "recall": quality, "raw": dict(raw),
        "network_attempts_blocked": guard.attempts, "mem0_llm_calls": len(LLM_CALLS), "notes": notes,
    }, *PEER_PACKAGES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
