"""The platform is kind-blind (docs/architecture.md): no shared module imports a kind, and no kind imports another.

A kind is reached only through the registry (`simulations.kinds.get_kind` / `kind_of`), which imports
`simulations.kinds.<name>.platform` by name; a shared module that imports a kind itself fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ROOT / "simulations" / "kinds"


def _kind_names() -> set[str]:
    return {p.name for p in KINDS.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _imported_kinds(path: Path) -> set[str]:
    """The kinds a module imports (absolute imports of simulations.kinds.<name>, anywhere in the module)."""
    names = _kind_names()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
            if node.module == "simulations.kinds":
                modules += [f"simulations.kinds.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["simulations", "kinds"] and len(parts) > 2 and parts[2] in names:
                found.add(parts[2])
    return found


def _shared_modules() -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "simulations").rglob("*.py")
        if KINDS not in p.parents and "migrations" not in p.parts
    ) + sorted((ROOT / "mercury").rglob("*.py"))


def test_no_shared_module_imports_a_kind() -> None:
    shared = _shared_modules()
    assert len(shared) > 30  # the scan sees the platform (services, views, consumers, settings...)
    coupled = {str(p.relative_to(ROOT)) for p in shared if _imported_kinds(p)}
    assert coupled == set(), "shared modules must reach kinds through the registry"


def test_no_kind_imports_another() -> None:
    for name in _kind_names():
        for path in (KINDS / name).rglob("*.py"):
            assert _imported_kinds(path) <= {name}, f"{path.relative_to(ROOT)} imports another kind"


def test_the_check_sees_an_import(tmp_path: Path) -> None:
    """The scanner itself finds a kind imported in each way a module can (so the assertions above can fail)."""
    forms = [
        "import simulations.kinds.deliberation.machine",
        "from simulations.kinds.negotiation import machine",
        "from simulations.kinds import negotiation",
        "def f():\n    from simulations.kinds.deliberation.state import State",
    ]
    for n, form in enumerate(forms):
        module = tmp_path / f"m{n}.py"
        module.write_text(form + "\n")
        assert _imported_kinds(module), form
    clean = tmp_path / "clean.py"
    clean.write_text("from simulations.kinds import Actor, kind_of\nfrom . import machine\n")
    assert _imported_kinds(clean) == set()  # the registry and relative imports are not a kind


SHELLS_AND_DRIVING = ("simulations.views", "simulations.consumers", "simulations.driving", "simulations.management",
                      "simulations.admin", "mercury.urls", "mercury.asgi")  # fmt: skip


def _imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def test_no_kind_imports_a_shell_or_the_driving_package() -> None:
    """A kind is its rules, prompts, bots and pages: it reaches share links, move checks and drive queueing through
    the platform's services, never the views, the consumer or the task queue above it (import-linter's layers say
    the same in `make lint`; this names the file)."""
    above = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _imported_modules(path) if m.startswith(SHELLS_AND_DRIVING)
        )
        for path in KINDS.rglob("*.py")
    }
    assert {path: modules for path, modules in above.items() if modules} == {}
