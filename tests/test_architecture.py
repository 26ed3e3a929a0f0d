"""Structure rules a reviewer would otherwise have to remember."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# rma -> validation -> provisioning -> inventory -> engine -> webhooks -> core; fleet may
# import them all. A lower app never reaches a higher one, not even by a dotted string:
# the higher app registers what the lower one runs (actions, plans, panels, hooks) from
# its ready().
# The kernel every domain app stands on (docs/architecture.md).
KERNEL = frozenset({"inventory", "engine", "webhooks", "core"})
MAY_IMPORT = {
    "core": set(),
    # Outbound webhooks: the outbox every app emits into, the deliveries and their pumps.
    "webhooks": {"core"},
    # The work engine knows no domain; the apps above register their parts with it.
    "engine": {"webhooks", "core"},
    "inventory": {"engine", "webhooks", "core"},
    "provisioning": {*KERNEL},
    # Attestation judges what provisioning booted; the gate (validation) runs it as a check.
    # Provisioning announces a phone-home by signal, so it never imports attestation.
    "attestation": {*KERNEL, "provisioning"},
    "validation": {*KERNEL, "provisioning", "attestation"},
    "rma": {*KERNEL, "provisioning", "validation", "consoles"},
    # Drift reads facts (inventory), images (provisioning); nothing imports drift back:
    # inventory announces new facts with a signal drift listens to.
    "drift": {*KERNEL, "provisioning", "attestation", "validation"},
    # Reports read every app's history (and seed_history writes a synthetic one); nothing
    # imports reports back.
    "reports": {*KERNEL, "provisioning", "validation", "rma", "trays"},
    # The day-2 loop chains the actions of every layer below (drain, deploy, gates, RMA);
    # nothing imports it back: it registers its action and its plan from its ready().
    "day2": {*KERNEL, "provisioning", "validation", "rma"},
    # Health reads the XID catalog (validation), listens to the BMC refresher's signal
    # (provisioning) and starts actions through inventory; nothing imports it back.
    "health": {*KERNEL, "provisioning", "validation"},
    # Converge brings nodes to their baseline (drift) through the BMC (provisioning) and
    # the gates, many at a time as a campaign kind (day2); nothing imports it back: it
    # registers its actions, its plan and its campaign kind.
    "converge": {*KERNEL, "provisioning", "attestation", "validation", "drift", "day2"},
    # Racks built as one unit: templates, trays, readiness (a tray's BMC health is
    # provisioning's signal); reports read readiness for rack-to-revenue.
    "trays": {*KERNEL, "provisioning"},
    "consoles": {*KERNEL, "provisioning"},
    # Single sign-on maps a provider's groups to roles and site roles; nothing imports it.
    "sso": {*KERNEL},
    # The fleet as code plans and applies files through inventory's services (drift's for
    # baselines, day2's campaigns for their roll-out); nothing imports it back.
    "fleetfile": {*KERNEL, "provisioning", "validation", "drift", "day2", "health"},
    # /metrics reads every app's tables and declares their counters; nothing imports it.
    "metrics": {*KERNEL, "attestation", "provisioning", "validation", "rma", "drift"},
    # The audit trail registers and reads every app's models; nothing imports it back (the
    # object pages load its Changes panel over HTMX).
    "audit": {*KERNEL, "attestation", "provisioning", "validation", "rma", "drift", "reports"}
    | {"day2", "health", "converge", "trays"},
}
APPS = tuple(MAY_IMPORT)
SOURCE_DIRS = ("fleet", *APPS, "devtools", "corral_cli")
MAX_LINES = 400


def python_files(*dirs: str):
    for d in dirs:
        for path in (ROOT / d).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def imported_top_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_apps_depend_one_way():
    offenders = []
    for app in APPS:
        for path in python_files(app):
            bad = (imported_top_modules(path) & {*APPS, "fleet"}) - MAY_IMPORT[app] - {app}
            if bad:
                offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, offenders


# Strings that name a higher app on purpose: the engine's operation row points at the node
# or rack it works on (a foreign key names its model; the engine imports neither).
NAMED_UPWARD = {("engine/models.py", "inventory.Node"), ("engine/models.py", "inventory.Rack")}
DOTTED = re.compile(rf"^({'|'.join([*APPS, 'fleet'])})(\.[A-Za-z_]\w*)+$")


def test_no_app_names_a_higher_one_by_string():
    """A dotted string ("provisioning.tasks.deploy_node") is an import the import test
    cannot see: the app works only with the higher one installed, and reads as if it did
    not need it."""
    offenders = []
    for app in APPS:
        for path in python_files(app):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue
                found = DOTTED.match(node.value)
                other = found and found.group(1)
                upward = other and other != app and other not in MAY_IMPORT[app]
                if upward and (where, node.value) not in NAMED_UPWARD:
                    offenders.append(f"{where}:{node.lineno} names {node.value!r}")
    assert not offenders, offenders


def test_only_the_driver_package_imports_sushy_or_pyghmi():
    drivers = ROOT / "provisioning" / "drivers"
    offenders = [
        str(p.relative_to(ROOT))
        for p in python_files(*SOURCE_DIRS)
        if drivers not in p.parents and imported_top_modules(p) & {"sushy", "pyghmi"}
    ]
    assert not offenders


def test_the_command_line_is_a_client_of_the_api_only():
    """`corral` (docs/cli.md) runs where Corral does not: no Django, no app of the server."""
    offenders = {
        str(p.relative_to(ROOT)): found
        for p in python_files("corral_cli")
        if (found := imported_top_modules(p) & {*APPS, "fleet", "django", "rest_framework"})
    }
    assert not offenders


def test_parsers_do_not_import_django():
    parsers = ROOT / "validation" / "parsers"
    assert not [p.name for p in parsers.rglob("*.py") if "django" in imported_top_modules(p)]


def test_no_source_file_over_400_lines():
    """A file past a few screens has started doing two things; split it along that seam."""
    long = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in python_files(*SOURCE_DIRS, "tests")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    assert not long


STATE_WRITES = (
    re.compile(r"Node\.objects[^\n]*\.update\([^)\n]*\bstate="),
    re.compile(r"\bnode\.state\s*=[^=]"),
)


def node_state_writers(dirs: tuple[str, ...], allowed: str) -> list[str]:
    return [
        str(path.relative_to(ROOT))
        for path in python_files(*dirs)
        if path.name != allowed and any(p.search(path.read_text()) for p in STATE_WRITES)
    ]


def test_only_lifecycle_writes_node_state():
    """`state=` in an UPDATE or assignment of .state outside lifecycle.py is a second writer."""
    assert not node_state_writers(APPS, allowed="lifecycle.py")


def test_tests_place_nodes_in_a_state_through_the_factory():
    """`NodeFactory(state=...)` / `put_in` keep state_changed and deadline consistent; a raw
    UPDATE in a test sets up a node transition() could never have produced."""
    assert not node_state_writers(("tests",), allowed="factories.py")


# --- import cycles --------------------------------------------------------------------
# A cycle means neither module can be understood, tested or moved without the other, and
# it hides behind function-level imports. So every import counts: module-level and inside
# functions, absolute and relative. Only `if TYPE_CHECKING:` blocks are left out (they
# never run).

# Cycles allowed for now (none). A listed cycle that no longer exists fails the test too,
# so the list cannot outlive its cycles.
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` bodies."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def _ours(name: str, modules: set[str]) -> str | None:
    """The longest prefix of a dotted name that is one of our modules (`a.b.Class` -> `a.b`)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:end])) in modules:
            return prefix
    return None


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Our modules that `path` imports anywhere in its body."""
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree)
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(_ours(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: `.` is this package, `..` its parent, ...
                base_parts = package[: len(package) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                found.add(_ours(f"{base}.{alias.name}", modules) or _ours(base, modules))
    return found - {None, module_name(path)}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in python_files("fleet", *APPS)}
    modules = set(paths)
    return {name: imports_of(path, modules) for name, path in paths.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm: every group of modules that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def describe(cycle: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = [f"{a} -> {b}" for a in sorted(cycle) for b in sorted(graph[a] & cycle)]
    return "{" + ", ".join(sorted(cycle)) + "}: " + "; ".join(edges)


def test_import_graph_sees_module_function_and_relative_imports():
    graph = import_graph()
    assert "inventory.models" in graph["inventory.lifecycle"]  # relative, module level
    assert "inventory.choices" in graph["inventory.lifecycle"]
    assert graph["provisioning.tasks"] & {m for m in graph if m.startswith("provisioning.")}
    groups = strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()})
    assert sorted(map(sorted, groups)) == [["a", "b", "c"], ["d"]]


def test_no_import_cycles():
    graph = import_graph()
    cycles = {frozenset(g) for g in strongly_connected(graph) if len(g) > 1}
    for cycle in sorted(cycles, key=sorted):
        print("import cycle", describe(cycle, graph))
    new = [describe(c, graph) for c in sorted(cycles - KNOWN_CYCLES, key=sorted)]
    gone = [sorted(c) for c in sorted(KNOWN_CYCLES - cycles, key=sorted)]
    assert not new, f"new import cycles (move the shared piece into a third module): {new}"
    assert not gone, f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_every_model_says_how_it_reaches_a_site():
    """Reads are scoped by site (inventory.scope): a model no app declared would be shown
    to every role, so each one says what it belongs to, and the rule must be one
    inventory.scope understands (a lookup that resolves, or a known word or function)."""
    import django.apps
    from django.core.exceptions import EmptyResultSet

    from inventory.scope import in_sites, rule_of

    problems = []
    for config in django.apps.apps.get_app_configs():
        parts = (
            Path(config.path).relative_to(ROOT).parts if config.path.startswith(str(ROOT)) else ()
        )
        if not parts or parts[0] in (".venv", "tests"):
            continue
        for model in config.get_models():
            try:
                rule_of(model)
                str(in_sites(model._default_manager.all(), {1}).query)  # builds the lookup
            except EmptyResultSet:
                pass  # "fleet-only": nothing, for a site's role
            except Exception as exc:  # noqa: BLE001 (each is a finding)
                problems.append(f"{model._meta.label}: {exc!r}")
    assert not problems, "\n".join(problems)


def test_the_app_maps_name_every_app():
    """docs/architecture.md's and the README's maps of the tree list every app (they once
    lacked attestation/, day2/, health/ and sso/)."""
    import re

    for page in (ROOT / "docs" / "architecture.md", ROOT / "README.md"):
        listed = set(re.findall(r"^([a-z0-9]+)/ ", page.read_text(), re.MULTILINE))
        assert sorted(set(APPS) - listed) == [], page.name
    # design.md's table of what each app owns.
    owned = set(
        re.findall(r"^\| `([a-z0-9]+)` \|", (ROOT / "docs" / "design.md").read_text(), re.M)
    )
    assert sorted(set(APPS) - owned) == [], "design.md"


def test_inventorys_pages_name_no_higher_app():
    """The node and rack pages draw the other apps' panels from a registry
    (inventory.panels) instead of naming their URLs."""
    import re

    higher = "|".join(a for a in APPS if a not in ("core", "engine", "inventory"))
    pattern = re.compile(rf"\{{% url ['\"]({higher}):")
    named = [
        f"{page.name}: {match.group(0)}"
        for page in (ROOT / "templates" / "inventory").rglob("*.html")
        for match in pattern.finditer(page.read_text())
    ]
    assert named == []


def test_one_pager():
    """Paging links are drawn by one template (templates/_partials/pages.html, with
    `{% querystring %}`); a list page pages through core.web.ListPage, or, where it pages
    something that is no queryset, names why here."""
    own_paging = {"inventory/activity.py": "a merged timeline", "drift/views/matrix.py": "counts"}
    drawn = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "templates").rglob("*.html")
        if p.name != "pages.html" and "previous_page_number" in p.read_text()
    ]
    paged = [
        where
        for p in python_files(*APPS)
        if "Paginator" in p.read_text()
        and (where := str(p.relative_to(ROOT))) not in {"core/web.py", *own_paging}
        and "/api/" not in where
    ]
    assert drawn == [] and paged == []


def test_each_system_check_id_is_one_checks():
    """`manage.py check` names a problem by its id (corral.E010); two checks sharing one
    send whoever looks it up to the wrong place. An id belongs to one file."""
    where: dict[str, set[str]] = {}
    for path in python_files(*APPS, "fleet"):
        for found in re.findall(r"corral\.[EW]\d{3}", path.read_text()):
            where.setdefault(found, set()).add(str(path.relative_to(ROOT)))
    assert {i: sorted(f) for i, f in where.items() if len(f) > 1} == {}
