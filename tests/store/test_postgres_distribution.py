"""Ready to distribute by dataset: the migrated catalog holds nothing a distributed PostgreSQL (Citus,
distribution column ``dataset``) would refuse.

Read from the catalog of a real migrated database: every table is classified in ``DISTRIBUTION``;
every primary key and unique index of a distributed table leads with (project, environment, its
distribution column), partial and expression indexes included; no foreign key at all (one would cross
datasets or need the referenced table on every node). The checker is shown to catch each breach, so
the test can fail.
"""
from __future__ import annotations

import psycopg
import pytest

from kenning.store.postgres import DISTRIBUTION, TENANT_COLUMNS, PostgresStore, distribution_statements

pytestmark = pytest.mark.postgres


def breaches(conn) -> list[str]:
    """What in the database's public schema would block distribution as ``DISTRIBUTION`` says."""
    found = []
    tables = [r[0] for r in conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1")]
    for table in tables:
        if table not in DISTRIBUTION:
            found.append(f"{table}: not classified (distributed by a column, or a reference table)")
    keys = conn.execute("""
        SELECT t.relname, i.relname, ix.indisprimary,
               array(SELECT CASE WHEN k = 0 THEN '(expression)' ELSE a.attname END
                     FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS u(k, o)
                     LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = u.k ORDER BY u.o) AS columns
        FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public' AND ix.indisunique ORDER BY 1, 2""").fetchall()
    for table, index, primary, columns in keys:
        column = DISTRIBUTION.get(table)
        if column is None:
            continue   # a reference table is whole on every node: any key works
        lead = [*TENANT_COLUMNS, column]
        if list(columns[:len(lead)]) != lead:
            kind = "primary key" if primary else "unique index"
            found.append(f"{table}.{index}: {kind} on ({', '.join(columns)}) does not lead with ({', '.join(lead)})")
    for table, name, target in conn.execute(
            "SELECT c.conrelid::regclass::text, c.conname, c.confrelid::regclass::text FROM pg_constraint c"
            " JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' AND c.contype = 'f'"):
        found.append(f"{table}.{name}: foreign key to {target}")
    return found


def test_a_migrated_database_can_be_distributed_by_dataset(pg_url):
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        assert breaches(conn) == []


def test_the_check_finds_a_global_unique_index_a_foreign_key_and_an_unclassified_table(pg_url):
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE UNIQUE INDEX facts_text_unique ON facts (text)")
        conn.execute("CREATE UNIQUE INDEX notes_live_text ON notes (project, environment, text) WHERE forgotten_at IS NULL")
        conn.execute("CREATE TABLE scratch (id text PRIMARY KEY, fact text)")
        conn.execute("ALTER TABLE jobs ADD COLUMN owner_key text REFERENCES api_keys (key_hash)")
        found = breaches(conn)
        conn.rollback()
    assert any(b.startswith("facts.facts_text_unique: unique index on (text)") for b in found)
    assert any(b.startswith("notes.notes_live_text") for b in found)
    assert any(b.startswith("scratch: not classified") for b in found)
    assert any("foreign key to api_keys" in b for b in found)


def test_every_distributed_table_is_colocated_with_facts_and_the_docs_print_the_statements():
    statements = distribution_statements()
    assert "SELECT create_distributed_table('facts', 'dataset');" in statements
    assert "SELECT create_distributed_table('notes', 'dataset', colocate_with => 'facts');" in statements
    assert "SELECT create_reference_table('api_keys');" in statements
    assert len(statements) == len(DISTRIBUTION)
    from pathlib import Path

    scaling = (Path(__file__).resolve().parents[2] / "docs" / "scaling.md").read_text()
    missing = [s for s in statements if s not in scaling]
    assert not missing, f"docs/scaling.md lacks {missing}"
