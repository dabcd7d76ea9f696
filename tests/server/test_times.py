"""One rule for times over HTTP, as in the library (kenning.timeutil.to_utc): wherever the API takes a
time, a query parameter or a body field, it takes an ISO 8601 date and time or a bare date, and a bare
date is midnight UTC. The OpenAPI document says so (a date-time or a date)."""
from __future__ import annotations

import json

from test_openapi import document, operations

BERLIN = {"text": "I live in Berlin.", "dataset": "sam", "at": "2026-07-01"}
LISBON = {"text": "I moved to Lisbon.", "dataset": "sam", "at": "2026-09-03T10:00:00Z"}


def lives_in(c, as_of: str) -> list[str]:
    r = c.get("/v1/datasets/sam/facts", params={"as_of": as_of})
    assert r.status_code == 200, r.text
    return [f["object"] for f in r.json()["facts"]]


def test_a_bare_date_is_midnight_utc_in_bodies_and_query_parameters(dev_server):
    with dev_server.client() as c:
        added = c.post("/v1/memory/add", json=BERLIN)
        assert added.status_code == 200, added.text
        assert added.json()["memory"]["valid_at"].startswith("2026-07-01T00:00:00")
        assert c.post("/v1/memory/add", json=LISBON).status_code == 200
        assert lives_in(c, "2026-07-15") == ["berlin"]
        assert lives_in(c, "2026-09-03") == ["berlin"]             # midnight, before the move at 10:00 UTC
        assert lives_in(c, "2026-09-04") == ["lisbon"]
        assert lives_in(c, "2026-06-30") == []                      # before Berlin's midnight
        recalled = c.post("/v1/recall", json={"query": "Where does the user live?", "dataset": "sam",
                                              "as_of": "2026-08-01"})
        assert recalled.status_code == 200, recalled.text
        assert [f["object"] for f in recalled.json()["facts"]] == ["berlin"]
        turn = c.post("/v1/memory/add_turn", json={"dataset": "sam", "content": "I play the cello.", "at": "2026-08-02"})
        assert turn.status_code == 200, turn.text
        kept = c.post("/v1/datasets/sam/messages", json={"content": "Booked the Kyoto trip.", "role": "assistant",
                                                         "message_id": "a1", "at": "2026-08-03"})
        assert kept.status_code == 200, kept.text
        assert c.get("/v1/datasets/sam/messages/a1").json()["at"].startswith("2026-08-03T00:00:00")


def test_what_is_neither_a_date_nor_a_time_is_still_refused(dev_server):
    with dev_server.client() as c:
        for bad in ("2026-7-1", "20260701", "2026-02-30", "2026-07-01T", "0.5", "yesterday"):
            r = c.get("/v1/datasets/sam/facts", params={"as_of": bad})
            assert r.status_code == 422 and r.json()["error"]["code"] == "INVALID_TIME", (bad, r.text)
            r = c.post("/v1/memory/add", json={**BERLIN, "at": bad})
            assert r.status_code == 422 and r.json()["error"]["code"] == "INVALID_TIME", (bad, r.text)
            assert "2026-03-02" in r.json()["error"]["message"]        # says what it takes


def test_the_document_says_every_time_is_a_date_time_or_a_date():
    doc = document()
    schemas = doc["components"]["schemas"]
    inputs = [(f"{name}.{field}", prop) for name, schema in schemas.items() if name.endswith("Body")
              for field, prop in schema.get("properties", {}).items()]
    inputs += [(f"{path} {p['name']}", p["schema"]) for _, path, op in operations(doc) for p in op.get("parameters", [])]
    times = [(where, schema) for where, schema in inputs if "date-time" in json.dumps(schema)]
    assert {where for where, _ in times} >= {"AddBody.at", "AddTurnBody.at", "MessageBody.at", "RecallBody.as_of",
                                            "/v1/datasets/{dataset}/facts as_of"}
    for where, schema in times:
        formats = json.dumps(schema)
        assert '"format": "date"' in formats and "midnight UTC" in formats, (where, schema)
