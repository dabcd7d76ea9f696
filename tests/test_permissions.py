"""Who may read and change what: the service principal (a plain ``Memory``) against user principals
(``mem.as_user(dataset, role)``) with the roles owner, admin and member.

A user principal reads and changes only its own dataset's memories (facts, messages, notes, core
files in ``user``, ``agent:*``, ``chat:*``, ``project:*``), reads organization memory, and changes it
only with the admin permission (owner, admin). Nobody reads another user's memory, admins included.
Documents are the service's alone. Refusals are ``PermissionDenied`` naming the missing permission.

Real stores (each test on SQLite and PostgreSQL), no embedder (keyword recall only), the rule
extractor for facts.
"""
from __future__ import annotations

import itertools

import pytest

from kenning import InputError, InvalidScope, MemoryToolError, NotFound, PermissionDenied, Settings

READ, ADMIN = "ai.read", "ai.admin"
PRINCIPALS = ["service", "owner", "admin", "member"]
NAMESPACES = ["user", "agent:x", "chat:y", "project:z", "organization"]
OPERATIONS = ["notes.read", "notes.write", "core.read", "core.write"]
OWN, OTHER = "sam", "alex"


@pytest.fixture
def mem(new_memory):
    m = new_memory(embedder=None, settings=Settings(worker_threads=0))
    yield m
    m.close()


def principal(mem, who: str):
    return mem if who == "service" else mem.as_user(OWN, who)


def seed(mem):
    """What the service keeps for both datasets in every namespace before a principal acts."""
    for dataset, ns in itertools.product((OWN, OTHER), NAMESPACES):
        if ns == "organization" and dataset == OTHER:
            continue  # organization memory is one shared space
        mem.notes.save(dataset, f"seed note of {dataset} in {ns} about lighthouses", namespace=ns)
        mem.core.write(dataset, "/memories/seed.md", f"seed file of {dataset} in {ns}", namespace=ns)


def expected_refusal(who: str, namespace: str, operation: str, whose: str) -> str | None:
    """The permission a refusal must name, or None when the operation is allowed."""
    if who == "service":
        return None
    if whose == "other":
        return READ
    if operation.endswith("write") and namespace == "organization" and who == "member":
        return ADMIN
    return None


def run(p, operation: str, dataset: str, ns: str):
    if operation == "notes.read":
        listed = p.notes.list(dataset, namespace=ns)
        hits = p.notes.search(dataset, "lighthouses", namespace=ns)
        return [n.text for n in listed], [h.note.text for h in hits]
    if operation == "notes.write":
        return p.notes.save(dataset, f"new note in {ns}", namespace=ns)
    if operation == "core.read":
        return (p.memory_tool(dataset, {"command": "view", "path": "/memories/seed.md"}, ns),
                p.core.read(dataset, "/memories/seed.md", namespace=ns).content,
                [f.path for f in p.core.list(dataset, namespace=ns)],
                len(p.core.history(dataset, "/memories/seed.md", namespace=ns)))
    if operation == "core.write":
        p.memory_tool(dataset, {"command": "create", "path": "/memories/tool.md", "file_text": "by tool"}, ns)
        p.core.write(dataset, "/memories/lib.md", "by library", namespace=ns)
        p.core.str_replace(dataset, "/memories/seed.md", "seed file", "edited file", namespace=ns)
        return None
    raise AssertionError(operation)


def state(mem):
    """Everything the service sees, to show a refused call changed nothing."""
    out = {}
    for dataset, ns in itertools.product((OWN, OTHER), NAMESPACES):
        out[dataset, ns] = ([n.text for n in mem.notes.list(dataset, namespace=ns)],
                            [(f.path, f.content, f.version) for f in mem.core.list(dataset, namespace=ns)])
    return out


@pytest.mark.parametrize("whose", ["own", "other"])
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("who", PRINCIPALS)
def test_permission_matrix(mem, who, namespace, operation, whose):
    seed(mem)
    dataset = OWN if whose == "own" else OTHER
    # organization memory is shared: whichever dataset names it, it is the same files and notes
    seeded_by = OWN if namespace == "organization" else dataset
    p = principal(mem, who)
    refusal = expected_refusal(who, namespace, operation, whose)
    before = state(mem)
    if refusal is not None:
        with pytest.raises(PermissionDenied) as info:
            run(p, operation, dataset, namespace)
        assert info.value.permission == refusal
        assert info.value.code == "PERMISSION_DENIED"
        assert state(mem) == before
        return
    result = run(p, operation, dataset, namespace)
    if operation == "notes.read":
        listed, hits = result
        assert f"seed note of {seeded_by} in {namespace} about lighthouses" in listed
        assert f"seed note of {seeded_by} in {namespace} about lighthouses" in hits
        assert all(f"of {OTHER if seeded_by == OWN else OWN} in" not in t for t in listed + hits)
    elif operation == "notes.write":
        assert f"new note in {namespace}" in [n.text for n in mem.notes.list(dataset, namespace=namespace)]
    elif operation == "core.read":
        view, text, paths, versions = result
        assert view.endswith(f"\t{text}") and text == f"seed file of {seeded_by} in {namespace}"
        assert paths == ["/memories/seed.md"] and versions == 1
    else:
        files = {f.path: f.content for f in mem.core.list(dataset, namespace=namespace)}
        assert files["/memories/tool.md"] == "by tool" and files["/memories/lib.md"] == "by library"
        assert files["/memories/seed.md"] == f"edited file of {seeded_by} in {namespace}"


# -- nobody reads another user's memory, admins included ------------------------------------------

@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_no_role_reads_another_users_memory(mem, role):
    seed(mem)
    mem.add("I live in Lisbon.", OTHER)
    msg = mem.messages.index(OTHER, "Remember the lighthouse trip", message_id="m-alex")
    fact_id = mem.list_facts(OTHER).facts[0].fact_id
    u = mem.as_user(OWN, role)
    attempts = {
        "notes.list": lambda: u.notes.list(OTHER),
        "notes.search": lambda: u.notes.search(OTHER, "lighthouses"),
        "notes.search org": lambda: u.notes.search(OTHER, "lighthouses", namespace="organization"),
        "core.view": lambda: u.core.view(OTHER),
        "core.read": lambda: u.core.read(OTHER, "/memories/seed.md"),
        "core.list": lambda: u.core.list(OTHER),
        "core.history": lambda: u.core.history(OTHER, "/memories/seed.md"),
        "core.render": lambda: u.core.render(OTHER),
        "memory_tool view": lambda: u.memory_tool(OTHER, {"command": "view", "path": "/memories"}),
        "recall": lambda: u.recall("where do they live", OTHER),
        "list_facts": lambda: u.list_facts(OTHER),
        "list_entities": lambda: u.list_entities(OTHER),
        "messages.search": lambda: u.messages.search(OTHER, "lighthouse"),
        "messages.get": lambda: u.messages.get(OTHER, msg.episode_id),
    }
    for name, attempt in attempts.items():
        with pytest.raises(PermissionDenied) as info:
            attempt()
        assert info.value.permission == READ, name


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_no_role_changes_another_users_memory(mem, role):
    seed(mem)
    mem.add("I live in Lisbon.", OTHER)
    fact_id = mem.list_facts(OTHER).facts[0].fact_id
    note_id = mem.notes.list(OTHER)[0].note_id
    before = state(mem)
    u = mem.as_user(OWN, role)
    attempts = [
        lambda: u.add("I live in Rome.", OTHER),
        lambda: u.add_turn(OTHER, "user", "I live in Rome."),
        lambda: u.delete_fact(OTHER, fact_id),
        lambda: u.messages.index(OTHER, "planted message"),
        lambda: u.notes.save(OTHER, "planted note"),
        lambda: u.notes.save_extracted(OTHER, ["planted note"]),
        lambda: u.notes.forget(OTHER, note_id),
        lambda: u.core.write(OTHER, "/memories/x.md", "planted"),
        lambda: u.core.remove(OTHER, "/memories/seed.md"),
        lambda: u.core.rename(OTHER, "/memories/seed.md", "/memories/moved.md"),
        lambda: u.core.insert(OTHER, "/memories/seed.md", 0, "planted"),
        lambda: u.memory_tool(OTHER, {"command": "delete", "path": "/memories/seed.md"}),
    ]
    for attempt in attempts:
        with pytest.raises(PermissionDenied) as info:
            attempt()
        assert info.value.permission == READ
    with pytest.raises(NotFound):              # their ids mean nothing inside this user's own dataset
        u.delete_fact(OWN, fact_id)
    assert state(mem) == before
    assert [f.fact_id for f in mem.list_facts(OTHER).facts] == [fact_id]
    assert mem.messages.search(OTHER, "planted") == []


# -- own memories: facts and messages ---------------------------------------------------------------

@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_every_role_uses_its_own_facts_and_messages(mem, role):
    u = mem.as_user(OWN, role)
    r = u.add("I live in Berlin.", OWN)
    assert r.status == "stored"
    assert [f.object for f in u.list_facts(OWN).facts] == ["berlin"]
    assert "berlin" in u.recall("Where does the user live?", OWN).context
    assert [e.name for e in u.list_entities(OWN)] == ["berlin"]
    assert u.status(memory_id=r.memory_ids[0]).stored
    for i, filler in enumerate(["The weather was fine", "Dinner was pasta", "The meeting moved to Tuesday",
                                "I watched a film about whales", "My sister called"]):
        u.messages.index(OWN, filler, message_id=f"filler{i}")   # keyword evidence needs a rare word
    m = u.messages.index(OWN, "We talked about the lighthouse", message_id="m1")
    assert u.messages.get(OWN, "m1").content == m.content
    assert [h.message_id for h in u.messages.search(OWN, "lighthouse")][:1] == ["m1"]
    u.delete_fact(OWN, r.memory_ids[0])
    assert u.list_facts(OWN).facts == []


def test_status_of_another_users_request_or_memory_reads_as_unknown(mem):
    """Issue 31, finding 9: a 403 for another dataset's id beside "not found" for an unknown one told a user
    which ids exist; both are answered alike now."""
    theirs = mem.add_turn(OTHER, "user", "I live in Rome.")
    mine = mem.add_turn(OWN, "user", "I live in Oslo.")
    u = mem.as_user(OWN, "admin")
    answers = []
    for request_id in (theirs.request_id, "req_" + "0" * 32):
        with pytest.raises(NotFound) as info:
            u.status(request_id)
        answers.append(str(info.value).replace(request_id, "ID"))
    assert answers[0] == answers[1]
    their_fact = mem.add("I work at Acme.", OTHER).memory_ids[0]
    assert u.status(memory_id=their_fact) == u.status(memory_id="f_" + "0" * 32).model_copy(
        update={"memory_id": their_fact})
    assert u.status(memory_id=their_fact).stored is False
    assert u.status(mine.request_id).request_id == mine.request_id
    own_turn = u.add_turn(OWN, "user", "I work at Acme.")
    assert own_turn.status == "processing"


# -- organization memory ------------------------------------------------------------------------------

def test_organization_memory_is_read_by_every_role_and_changed_by_admins_only(mem):
    mem.core.write("anyone", "/memories/policy.md", "Be kind.", namespace="organization")
    org_note = mem.notes.save("anyone", "Office closes at six", namespace="organization")
    for role in ("owner", "admin", "member"):
        u = mem.as_user(OWN, role)
        assert u.core.read(OWN, "/memories/policy.md", namespace="organization").content == "Be kind."
        assert "Be kind." in u.core.render(OWN)
        assert [n.text for n in u.notes.list(OWN, namespace="organization")] == ["Office closes at six"]
    member = mem.as_user(OWN, "member")
    for attempt in (lambda: member.core.write(OWN, "/memories/policy.md", "Be rude.", namespace="organization"),
                    lambda: member.core.remove(OWN, "/memories/policy.md", namespace="organization"),
                    lambda: member.memory_tool(OWN, {"command": "str_replace", "path": "/memories/policy.md",
                                                     "old_str": "kind", "new_str": "rude"}, "organization"),
                    lambda: member.notes.forget(OWN, org_note.note_id),
                    lambda: member.notes.save_extracted(OWN, ["x"], namespace="organization")):
        with pytest.raises(PermissionDenied) as info:
            attempt()
        assert info.value.permission == ADMIN
    assert mem.core.read("anyone", "/memories/policy.md", namespace="organization").content == "Be kind."
    admin = mem.as_user(OWN, "admin")
    admin.memory_tool(OWN, {"command": "str_replace", "path": "/memories/policy.md", "old_str": "kind",
                            "new_str": "very kind"}, "organization")
    admin.notes.forget(OWN, org_note.note_id)
    assert mem.core.read("anyone", "/memories/policy.md", namespace="organization").content == "Be very kind."
    assert mem.notes.list("anyone", namespace="organization") == []


def test_member_forgets_own_notes_but_not_another_users(mem):
    mine = mem.notes.save(OWN, "my note")
    theirs = mem.notes.save(OTHER, "their note")
    u = mem.as_user(OWN, "member")
    u.notes.forget(OWN, mine.note_id)
    with pytest.raises(NotFound):            # another user's note id is not in this user's dataset
        u.notes.forget(OWN, theirs.note_id)
    assert [n.text for n in mem.notes.list(OTHER)] == ["their note"]


def test_user_memory_tool_errors_are_still_tool_errors(mem):
    u = mem.as_user(OWN, "member")
    with pytest.raises(MemoryToolError) as info:
        u.memory_tool(OWN, {"command": "view", "path": "/memories/../etc"})
    assert info.value.text == "Path /memories/../etc would escape /memories directory"
    with pytest.raises(PermissionDenied):   # the permission check comes before the tool's own checks
        u.memory_tool(OTHER, {"command": "view", "path": "/memories/../etc"})


def test_user_core_accepts_namespace_positionally_like_core(mem):
    mem.core.write(OWN, "/memories/policy.md", "rule", None, "organization")      # Core: positional works
    with pytest.raises(PermissionDenied):
        mem.as_user(OWN, "member").core.remove(OWN, "/memories/policy.md", "organization")
    mem.as_user(OWN, "admin").core.remove(OWN, "/memories/policy.md", "organization")
    assert mem.core.list(OWN, "organization") == []


# -- documents, tenancy, roles, renamed permissions --------------------------------------------------

@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_documents_belong_to_the_service_alone(mem, role):
    mem.documents.write("shared", "plan", "secret plan")
    u = mem.as_user(OWN, role)
    for attempt in (lambda: u.documents.read("shared", "plan"), lambda: u.documents.list("shared"),
                    lambda: u.documents.write("shared", "plan", "x", expected_version=1),
                    lambda: u.documents.delete("shared", "plan"), lambda: u.documents.purge()):
        with pytest.raises(PermissionDenied) as info:
            attempt()
        assert isinstance(info.value.permission, str) and info.value.permission
    assert mem.documents.read("shared", "plan").text == "secret plan"


@pytest.mark.parametrize("kwargs", [{"project": "other"}, {"environment": "prod"}])
def test_a_user_cannot_step_into_another_project_or_environment(mem, kwargs):
    u = mem.as_user(OWN, "owner")
    with pytest.raises(PermissionDenied):
        u.notes.save(OWN, "elsewhere", **kwargs)
    with pytest.raises(PermissionDenied):
        u.core.read(OWN, "/memories/x", **kwargs)
    with pytest.raises(PermissionDenied):
        u.list_facts(OWN, **kwargs)
    assert mem.notes.list(OWN, **kwargs) == []
    u.notes.save(OWN, "here", project="default", environment="default")   # naming its own is fine


def test_roles_and_bound_dataset_are_checked(mem):
    with pytest.raises(InputError):
        mem.as_user(OWN, "superuser")
    with pytest.raises(InvalidScope):
        mem.as_user("_organization", "owner")     # nobody can bind to the shared organization scope
    with pytest.raises(InvalidScope):
        mem.as_user("", "member")
    assert mem.as_user(OWN).role == "member"
    assert mem.as_user(OWN, "owner").permissions == {READ, ADMIN}
    assert mem.as_user(OWN, "admin").permissions == {READ, ADMIN}
    assert mem.as_user(OWN, "member").permissions == {READ}


def test_permission_names_come_from_settings(new_memory):
    m = new_memory(embedder=None, settings=Settings(permission_read="memory.view",
                                                              permission_admin="memory.manage"))
    try:
        member = m.as_user(OWN, "member")
        assert member.permissions == {"memory.view"}
        with pytest.raises(PermissionDenied) as org:
            member.core.write(OWN, "/memories/p.md", "x", namespace="organization")
        assert org.value.permission == "memory.manage"
        assert "memory.manage" in str(org.value)
        with pytest.raises(PermissionDenied) as other:
            m.as_user(OWN, "admin").notes.list(OTHER)
        assert other.value.permission == "memory.view"
        m.as_user(OWN, "owner").core.write(OWN, "/memories/p.md", "x", namespace="organization")
    finally:
        m.close()


def test_permission_names_from_the_environment(monkeypatch, new_memory):
    monkeypatch.setenv("KENNING_PERMISSION_READ", "kn.read")
    monkeypatch.setenv("KENNING_PERMISSION_ADMIN", "kn.admin")
    m = new_memory(embedder=None)
    try:
        with pytest.raises(PermissionDenied) as info:
            m.as_user(OWN, "member").notes.save(OWN, "x", namespace="organization")
        assert info.value.permission == "kn.admin"
    finally:
        m.close()


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_a_user_lists_only_its_own_dataset_and_jobs(mem, role):
    mem.add("I live in Berlin.", OWN)
    mem.add("I live in Paris.", OTHER)
    mem.add("I live in Rome.", "samantha")          # a name that contains the user's
    user = mem.as_user(OWN, role)
    assert [d.dataset for d in user.datasets().datasets] == [OWN]
    assert user.datasets(q="alex").datasets == []
    mem.add_turn(OTHER, "user", "I play the oboe.")
    mine = mem.add_turn(OWN, "user", "I play the cello.")
    assert [j.request_id for j in user.jobs()] == [mine.request_id]
    for call in (lambda: user.jobs(OTHER), lambda: user.retry_failed(OTHER),
                 lambda: user.datasets(project="other")):
        with pytest.raises(PermissionDenied):
            call()
    assert user.retry_failed() == 0


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_no_user_erases_a_dataset_not_even_its_own(mem, role):
    mem.add("I live in Berlin.", OWN)
    with pytest.raises(PermissionDenied):
        mem.as_user(OWN, role).delete_dataset(OWN)
    assert mem.list_facts(OWN).total == 1
