"""Structure rules a reviewer would otherwise have to remember."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("inventory", "provisioning", "validation")
# validation -> provisioning -> inventory; fleet may import all three.
MAY_IMPORT = {
    "inventory": set(),
    "provisioning": {"inventory"},
    "validation": {"inventory", "provisioning"},
}
SOURCE_DIRS = ("fleet", *APPS, "devtools")


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


def test_only_the_driver_package_imports_sushy_or_pyghmi():
    drivers = ROOT / "provisioning" / "drivers"
    offenders = [
        str(p.relative_to(ROOT))
        for p in python_files(*SOURCE_DIRS)
        if drivers not in p.parents and imported_top_modules(p) & {"sushy", "pyghmi"}
    ]
    assert not offenders


def test_parsers_do_not_import_django():
    parsers = ROOT / "validation" / "parsers"
    assert not [p.name for p in parsers.rglob("*.py") if "django" in imported_top_modules(p)]


def test_no_source_file_over_600_lines():
    long = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in python_files(*SOURCE_DIRS, "tests")
        if (n := len(p.read_text().splitlines())) > 600
    ]
    assert not long


def test_only_lifecycle_writes_node_state():
    """`state=` in an UPDATE or assignment of .state outside lifecycle.py is a second writer."""
    offenders = []
    for path in python_files(*APPS):
        if path.name == "lifecycle.py":
            continue
        text = path.read_text()
        if re.search(r"Node\.objects[^\n]*\.update\([^)\n]*\bstate=", text) or re.search(
            r"\bnode\.state\s*=[^=]", text
        ):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders
