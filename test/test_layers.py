"""The layer rules of ../shared/DESIGN.md, checked from the imports (every import, lazy ones included).

    nodes/ commands/ cli.py  >  scenarios/  >  hardware/ sim/  >  control/ identification/ excitation/
    >  io/  >  dynamics/  >  robots/

A module imports only from its own layer or below; sim/ never imports control/ or identification/.
No module is over 600 lines (DESIGN.md: modules of a few hundred lines), and no module imports itself through
others (no import circles).
KNOWN_VIOLATIONS lists imports allowed to break the rules (empty since issue 19 moved the last ones); the test
fails on any new one, and on a listed one that is gone (then delete it from the list: the layout only improves).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "robot_dynamics_id"

RANK = {"robots": 0, "dynamics": 1, "io": 2, "control": 3, "identification": 3, "excitation": 3,
        "hardware": 4, "sim": 4, "scenarios": 5, "nodes": 6, "commands": 6, "cli": 6}
#: layers a layer must not import although they are not above it
FORBIDDEN_SIDEWAYS = {"sim": {"control", "identification"}}

#: (importing module, imported module) pairs allowed to break the rules (none since issue 19; keep it that way)
KNOWN_VIOLATIONS: set[tuple[str, str]] = set()


def _layer(module: str) -> str | None:
    """'scenarios.polishing' -> 'scenarios'; 'cli' -> 'cli'; the package itself -> None."""
    return module.split(".")[0] if module else None


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Package-relative names of the robot_dynamics_id modules ``source`` (module ``module``) imports."""
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                prefix = ".".join(base)
                if node.module:
                    out.add(f"{prefix}.{node.module}" if prefix else node.module)
                else:
                    out.update(f"{prefix}.{a.name}" if prefix else a.name for a in node.names)
            elif node.module and node.module.split(".")[0] == "robot_dynamics_id":
                out.add(node.module.partition(".")[2])
        elif isinstance(node, ast.Import):
            out.update(a.name.partition(".")[2] for a in node.names if a.name.split(".")[0] == "robot_dynamics_id")
    return {m for m in out if m}


def violations(module: str, imports: set[str]) -> set[tuple[str, str]]:
    src = _layer(module)
    bad = set()
    for target in imports:
        dst = _layer(target)
        if src not in RANK or dst not in RANK:
            continue
        if RANK[dst] > RANK[src] or dst in FORBIDDEN_SIDEWAYS.get(src, ()):
            bad.add((module, target))
    return bad


def package_violations() -> set[tuple[str, str]]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        is_package = rel.name == "__init__"
        module = ".".join(rel.parts[:-1] if is_package else rel.parts)
        found |= violations(module, imported_modules(path.read_text(), module, is_package))
    return found


def test_no_import_breaks_the_layer_rules_beyond_the_known_list():
    found = package_violations()
    new = found - KNOWN_VIOLATIONS
    assert not new, ("imports against the layers of ../shared/DESIGN.md (move the code to the right layer, or "
                     f"pass what it needs in from above): {sorted(new)}")
    gone = KNOWN_VIOLATIONS - found
    assert not gone, f"fixed, remove from KNOWN_VIOLATIONS: {sorted(gone)}"


def test_the_checker_sees_a_forbidden_import():
    # an upward import from the core, a relative one from sim/ into control/, and a lazy one inside a function
    assert violations("dynamics.friction", imported_modules("from ..sim.plant import P\n", "dynamics.friction")) \
        == {("dynamics.friction", "sim.plant")}
    assert violations("robots.ur", imported_modules("from .. import scenarios\n", "robots.ur")) \
        == {("robots.ur", "scenarios")}
    assert violations("sim.plant", imported_modules("from ..control.controller import X\n", "sim.plant")) \
        == {("sim.plant", "control.controller")}
    lazy = "def f():\n    import robot_dynamics_id.nodes.ur_interface\n"
    assert violations("io.bag_reader", imported_modules(lazy, "io.bag_reader")) == {("io.bag_reader", "nodes.ur_interface")}
    # downward and same-layer imports are fine
    assert not violations("nodes.excitation", imported_modules("from ..excitation.fourier import F\n", "nodes.excitation"))
    assert not violations("sim.experiment", imported_modules("from ..hardware.safety import S\n", "sim.experiment"))


#: ../shared/DESIGN.md: modules of a few hundred lines, never over 600
MAX_MODULE_LINES = 600


def modules_over(limit: int, root: Path = PACKAGE) -> dict[str, int]:
    """Package-relative paths of the ``.py`` files under ``root`` longer than ``limit`` lines, with their lengths."""
    counts = {str(path.relative_to(root)): len(path.read_text().splitlines()) for path in root.rglob("*.py")}
    return {name: n for name, n in sorted(counts.items()) if n > limit}


def test_no_module_is_over_600_lines():
    long = modules_over(MAX_MODULE_LINES)
    assert not long, (f"modules over {MAX_MODULE_LINES} lines (split them along their concepts, "
                      f"../shared/DESIGN.md): {long}")


def test_the_length_check_sees_a_long_module(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert modules_over(MAX_MODULE_LINES, tmp_path) == {"sub/long.py": MAX_MODULE_LINES + 1}


#: issue 19: no function over 80 lines on the real-time path (what one robot cycle runs)
MAX_REALTIME_FUNCTION_LINES = 80
REALTIME_MODULES = (
    "control/controller.py", "control/controller_stages.py", "control/operational_space.py",
    "control/singularity.py", "control/contact.py", "control/force_estimation.py",
    "control/friction_compensation.py", "control/projected.py", "control/flexible/ur.py", "control/collision.py",
    "hardware/robot_loop.py", "hardware/trajectory_tracking.py", "hardware/safety.py",
)


def functions_over(limit: int, modules: tuple[str, ...], root: Path = PACKAGE) -> dict[str, int]:
    """'module.py:Class.function' -> length in lines (decorators excluded) of the functions in ``modules``
    (paths under ``root``) longer than ``limit`` lines; nested functions count on their own and in their parent."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef) and child.end_lineno - child.lineno + 1 > limit:
                    found[f"{module}:{name}"] = child.end_lineno - child.lineno + 1
                visit(child, module, name + ".")

    for module in modules:
        path = root / module
        if not path.is_file():
            raise FileNotFoundError(f"{module} is listed as a real-time module but is not in {root}: update the list")
        visit(ast.parse(path.read_text()), module, "")
    return found


def test_no_function_on_the_real_time_path_is_over_80_lines():
    long = functions_over(MAX_REALTIME_FUNCTION_LINES, REALTIME_MODULES)
    assert not long, (f"functions over {MAX_REALTIME_FUNCTION_LINES} lines on the real-time path (split them into "
                      f"stages, control/controller_stages.py): {long}")


def test_the_function_length_check_sees_a_long_function(tmp_path):
    (tmp_path / "loop.py").write_text(
        "def short():\n" + "    x = 1\n" * (MAX_REALTIME_FUNCTION_LINES - 1)  # exactly the limit: fine
        + "class Loop:\n    def tick(self):\n" + "        x = 1\n" * MAX_REALTIME_FUNCTION_LINES)  # one over
    assert functions_over(MAX_REALTIME_FUNCTION_LINES, ("loop.py",), tmp_path) == {
        "loop.py:Loop.tick": MAX_REALTIME_FUNCTION_LINES + 1}
    with pytest.raises(FileNotFoundError, match="gone.py"):  # a renamed module must not drop out of the check
        functions_over(MAX_REALTIME_FUNCTION_LINES, ("gone.py",), tmp_path)


#: import circles allowed (none since issue 19 moved the trajectory files to excitation/trajectory_file.py); the
#: test fails on any other, and on a listed one that is gone
KNOWN_CYCLES: set[frozenset[str]] = set()


def _import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (a name imported from a module counts as that module)."""
    sources = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).with_suffix("")
        is_package = rel.name == "__init__"
        sources[".".join(rel.parts[:-1] if is_package else rel.parts)] = (path, is_package)

    def resolve(name: str) -> str:
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name

    return {module: {resolve(t) for t in imported_modules(path.read_text(), module, is_package)} - {"", module}
            for module, (path, is_package) in sources.items()}


def import_cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), each a frozenset of module names."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_circle_beyond_the_known_ones():
    found = import_cycles(_import_graph())
    new = found - KNOWN_CYCLES
    assert not new, f"import circles (move the shared part into a module both import): {[sorted(c) for c in new]}"
    gone = KNOWN_CYCLES - found
    assert not gone, f"fixed, remove from KNOWN_CYCLES: {[sorted(c) for c in gone]}"


def test_the_cycle_check_sees_a_circle(tmp_path):
    (tmp_path / "io").mkdir()
    (tmp_path / "io" / "a.py").write_text("from .b import B\n")
    (tmp_path / "io" / "b.py").write_text("def f():\n    from .c import C\n")  # a lazy import closes it too
    (tmp_path / "io" / "c.py").write_text("from robot_dynamics_id.io.a import A\n")
    (tmp_path / "io" / "d.py").write_text("from .a import A\n")  # imports the circle, not in it
    assert import_cycles(_import_graph(tmp_path)) == {frozenset({"io.a", "io.b", "io.c"})}
