"""Import layering (docs/DESIGN.md "Layers"): one direction between the packages, no import cycles, one
`python -m` entry point per `ledgerlm` command.

    python -m pytest tests/test_layering.py -q

AST only (nothing is imported): every .py under ledgerlm/, synth/, train/, evaluate/ is parsed and every
import of a ledgerlm module is collected — module-level, inside functions, under `if TYPE_CHECKING:`, and
`importlib.import_module("literal")` — resolved to the module it loads. A forbidden edge fails naming
file:line and the edge. The cycle tests build the graph twice: module-level imports (what Python runs at
import time) and all imports (a function-level import that closes a cycle only hides it).
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"ledgerlm": "ledgerlm", "ledgerlm.synth": "synth", "ledgerlm.train": "train", "ledgerlm.evaluate": "evaluate"}

# ------------------------------------------------------------------------------------------------ the rules
# Core: below everything, imports nothing from synth/train/evaluate.
CORE = ("ledgerlm.errors", "ledgerlm.atomic", "ledgerlm.contracts", "ledgerlm.configcheck", "ledgerlm.model", "ledgerlm.inference",
        "ledgerlm.cli")
# The public API evaluate/ may use from synth/: statements (load facts, the store, periods, rendering),
# the index registry and engine, and the MacroLens T3 task definition (fields + prompt shared by training data
# and the benchmark, so the eval prompt is the training prompt).
SYNTH_PUBLIC = (
    "ledgerlm.synth.statements.sources", "ledgerlm.synth.statements.store", "ledgerlm.synth.statements.periods",
    "ledgerlm.synth.statements.render", "ledgerlm.synth.statements.facts", "ledgerlm.synth.statements.taxonomy",
    "ledgerlm.synth.indices.registry", "ledgerlm.synth.indices.compute", "ledgerlm.synth.macrolens_t3",
)
# The public FinIndices scorer: distillation verifies teacher answers with it, and the training callback
# scores dev samples with it (so "verified" and "accuracy" mean what `ledgerlm eval` means).
SCORER = ("ledgerlm.evaluate.finindices.scoring",)


@dataclasses.dataclass(frozen=True)
class Rule:
    importer: tuple[str, ...]  # module prefixes this rule applies to
    forbidden: tuple[str, ...]  # module prefixes they must not import ...
    unless: tuple[str, ...] = ()  # ... except these modules
    only_from: tuple[str, ...] = ()  # the `unless` exception holds only for importers under these prefixes
    why: str = ""


RULES = (
    Rule(("ledgerlm.errors",), ("ledgerlm",), why="errors is the bottom: it imports no ledgerlm module"),
    Rule(CORE, ("ledgerlm.synth", "ledgerlm.train", "ledgerlm.evaluate"),
         why="core (errors, atomic, contracts, configcheck, model, inference, cli) never imports synth/train/evaluate; "
             "ledgerlm.cli dispatches commands by name"),
    Rule(("ledgerlm.synth",), ("ledgerlm.train",), why="synth never imports train"),
    Rule(("ledgerlm.synth",), ("ledgerlm.evaluate",), unless=SCORER, only_from=("ledgerlm.synth.distill",),
         why="synth never imports evaluate; only synth.distill may use the public FinIndices scorer"),
    Rule(("ledgerlm.evaluate",), ("ledgerlm.train",), why="evaluate never imports train"),
    Rule(("ledgerlm.evaluate",), ("ledgerlm.synth",), unless=SYNTH_PUBLIC,
         why="evaluate imports from synth only the public statement/indices API (SYNTH_PUBLIC)"),
    Rule(("ledgerlm.train",), ("ledgerlm.synth",), why="train reads contract rows through ledgerlm.contracts, not synth"),
    Rule(("ledgerlm.train",), ("ledgerlm.evaluate",), unless=SCORER,
         why="train uses only the public FinIndices scorer (eval callback), no other evaluate module"),
    Rule(("ledgerlm.synth.statements",), ("ledgerlm.synth.finindices", "ledgerlm.synth.distill", "ledgerlm.synth.macrolens_t3"),
         why="statements sit below the dataset generators"),
    Rule(("ledgerlm.synth.indices",), ("ledgerlm.synth.finindices", "ledgerlm.synth.distill", "ledgerlm.synth.macrolens_t3"),
         why="indices sit below the dataset generators"),
    Rule(("ledgerlm.synth.finindices",), ("ledgerlm.synth.distill",), why="distill reads datasets, not the reverse"),
)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def violation(importer: str, target: str) -> Rule | None:
    """The rule that forbids `importer` importing `target`, or None."""
    for rule in RULES:
        if not _under(importer, rule.importer) or not _under(target, rule.forbidden) or _under(target, (importer,)):
            continue
        if _under(target, rule.unless) and (not rule.only_from or _under(importer, rule.only_from)):
            continue
        return rule
    return None


# ------------------------------------------------------------------------------------------------ the scanner
@dataclasses.dataclass(frozen=True)
class Edge:
    importer: str
    target: str
    path: str  # relative to the repository
    line: int
    top: bool  # runs at import time (module level, outside `if TYPE_CHECKING:`)
    script: bool = False  # inside the module's own command-line main (only run as `python -m`, where it is __main__)
    typing_only: bool = False  # under `if TYPE_CHECKING:` (never executed)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} -> {self.target}"


def module_files(repo: Path = REPO, roots: dict[str, str] = ROOTS) -> dict[str, Path]:
    """module name -> file, for every .py under the package folders."""
    out = {}
    for package, folder in roots.items():
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if any(p.startswith((".", "__")) for p in rel.parts[:-1]):
                continue
            out[".".join([package, *parts])] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest known module that `name` (a module or module.attribute) loads."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, modules: dict[str, Path], script_functions: set[str] = frozenset()):
        self.module, self.is_package, self.modules = module, is_package, modules
        self.script_functions = script_functions  # top-level functions only the `__main__` block calls
        self.found: list[tuple[str, int, bool, bool, bool]] = []
        self.third_party: set[str] = set()  # top-level packages this module imports at import time
        self.depth = 0  # > 0 inside a function or a TYPE_CHECKING block
        self.in_script = False
        self.in_typing = False

    def _add(self, name: str | None, line: int) -> None:
        target = _resolve(name, self.modules) if name else None
        if target and target != self.module:
            self.found.append((target, line, self.depth == 0, self.in_script, self.in_typing))
        elif name and not target and self.depth == 0 and not name.startswith("ledgerlm"):
            self.third_party.add(name.split(".")[0])

    def _nested(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_Lambda = _nested

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        script = self.depth == 0 and node.name in self.script_functions
        self.in_script = self.in_script or script
        self._nested(node)
        if script:
            self.in_script = False

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
            self.in_typing = True
            self._nested(node)
            self.in_typing = False
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if not node.level and not base.startswith("ledgerlm"):
            self._add(base, node.lineno)
            return
        if node.level:
            parts = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
            parts = parts[:len(parts) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        for alias in node.names:  # `from pkg import submodule` loads the submodule
            self._add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in self.modules else base, node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            self._add(node.args[0].value, node.lineno)
        self.generic_visit(node)


def import_edges(repo: Path = REPO, roots: dict[str, str] = ROOTS) -> list[Edge]:
    modules = module_files(repo, roots)
    edges = []
    trees = {module: ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for module, path in modules.items()}
    used = _used_elsewhere(trees)
    for module, path in modules.items():
        tree = trees[module]
        script = {f for f in _script_functions(tree) if (module, f) not in used}
        collector = _Collector(module, path.name == "__init__.py", modules, script)
        collector.visit(tree)
        rel = str(path.relative_to(repo))
        edges += [Edge(module, target, rel, *flags) for target, *flags in collector.found]
        THIRD_PARTY[(str(repo), module)] = collector.third_party
    return edges


THIRD_PARTY: dict[tuple[str, str], set[str]] = {}  # (repo, module) -> packages imported at import time (filled by import_edges)


def _used_elsewhere(trees: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """(module, function) pairs another module imports by name or names as "module:function" (the
    ledgerlm.cli command table): those functions run inside the imported module, never as `__main__`."""
    used = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                used |= {(node.module, alias.name) for alias in node.names}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("ledgerlm.") \
                    and ":" in node.value:
                used.add(tuple(node.value.split(":", 1)))
    return used


def _script_functions(tree: ast.Module) -> set[str]:
    """Top-level functions called by the `if __name__ == "__main__":` block and by nothing else in the module.
    Their imports run only when the module is the program (`python -m`, module name `__main__`): a tool's
    main() in a low-level module may load the high-level loader without forming an import cycle."""
    guard_calls, other_refs = set(), set()
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        is_guard = isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        (guard_calls if is_guard else other_refs).update(names)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return (guard_calls & defined) - other_refs


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative), each as a sorted list."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.importer, set()).add(e.target)
        graph.setdefault(e.target, set())
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def describe(component: list[str], edges: list[Edge]) -> str:
    """One shortest cycle inside the component, each step with its file:line (a function-level step first)."""
    members = set(component)
    inside = sorted((e for e in edges if e.importer in members and e.target in members), key=lambda e: (e.top, str(e)))
    first = inside[0]
    paths: dict[str, list[Edge]] = {first.target: [first]}
    queue = [first.target]
    while queue and first.importer not in paths:
        node = queue.pop(0)
        for e in inside:
            if e.importer == node and e.target not in paths:
                paths[e.target] = paths[node] + [e]
                queue.append(e.target)
    steps = paths.get(first.importer, [first])
    tail = "" if len(component) == len(steps) else f" ({len(component)} modules in this tangle)"
    return "cycle" + tail + ":\n    " + "\n    ".join(f"{e}{'' if e.top else '  (function-level)'}" for e in steps)


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return import_edges()


# ------------------------------------------------------------------------------------------------ the tests
def test_every_import_follows_the_layer_directions(edges):
    bad = [f"{e}  [{rule.why}]" for e in edges if (rule := violation(e.importer, e.target))]
    assert not bad, "forbidden imports (docs/DESIGN.md, Layers):\n" + "\n".join(bad)


def test_no_import_cycle_at_import_time(edges):
    found = cycles([e for e in edges if e.top and not e.script])
    assert not found, "import cycles (module-level imports):\n" + "\n".join(describe(c, edges) for c in found)


def test_no_cycle_hidden_in_function_level_imports(edges):
    """A function-level import that closes a cycle only hides it: with every import counted there is none
    (except the imports of a module's own command-line main, which run only when the module is `__main__`)."""
    edges = [e for e in edges if not e.script]
    found = cycles(edges)
    assert not found, "cycles through function-level imports:\n" + "\n".join(describe(c, edges) for c in found)


def test_the_scanner_sees_function_level_relative_and_importlib_imports(tmp_path):
    """The checker itself can fail: a small tree with each kind of forbidden import is caught, file:line named."""
    (tmp_path / "ledgerlm" / "inference").mkdir(parents=True)
    (tmp_path / "synth" / "statements").mkdir(parents=True)
    (tmp_path / "evaluate" / "finindices").mkdir(parents=True)
    (tmp_path / "train").mkdir()
    for init in ("ledgerlm", "ledgerlm/inference", "synth", "synth/statements", "evaluate", "evaluate/finindices", "train"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "evaluate/finindices/extract.py").write_text("X = 1\n")
    (tmp_path / "evaluate/finindices/scoring.py").write_text("from . import extract\n")
    (tmp_path / "train/data.py").write_text("import json\n")
    (tmp_path / "ledgerlm/inference/oracle.py").write_text("def f():\n    from ledgerlm.evaluate.finindices import extract\n")
    (tmp_path / "synth/statements/store.py").write_text(
        "import importlib\nfrom ledgerlm.evaluate.finindices.scoring import score\n"
        "def g():\n    return importlib.import_module('ledgerlm.train.data')\n")
    (tmp_path / "train/callbacks.py").write_text("from ledgerlm.evaluate.finindices import scoring, extract\n")
    found = {(str(e), bool(violation(e.importer, e.target))) for e in import_edges(tmp_path)}
    assert ("ledgerlm/inference/oracle.py:2: ledgerlm.inference.oracle -> ledgerlm.evaluate.finindices.extract", True) in found
    assert ("synth/statements/store.py:2: ledgerlm.synth.statements.store -> ledgerlm.evaluate.finindices.scoring", True) in found
    assert ("synth/statements/store.py:4: ledgerlm.synth.statements.store -> ledgerlm.train.data", True) in found
    assert ("train/callbacks.py:1: ledgerlm.train.callbacks -> ledgerlm.evaluate.finindices.scoring", False) in found
    assert ("train/callbacks.py:1: ledgerlm.train.callbacks -> ledgerlm.evaluate.finindices.extract", True) in found
    assert ("evaluate/finindices/scoring.py:1: ledgerlm.evaluate.finindices.scoring -> ledgerlm.evaluate.finindices.extract",
            False) in found


def test_cycle_finder_names_a_hidden_cycle():
    a_b = Edge("ledgerlm.x.a", "ledgerlm.x.b", "x/a.py", 3, True)
    b_a = Edge("ledgerlm.x.b", "ledgerlm.x.a", "x/b.py", 9, False)
    assert cycles([a_b]) == []
    assert cycles([a_b, b_a]) == [["ledgerlm.x.a", "ledgerlm.x.b"]]
    assert "x/b.py:9" in describe(["ledgerlm.x.a", "ledgerlm.x.b"], [a_b, b_a])


# ------------------------------------------------------------------------------------------------ entry points
def _main_guard_calls(path: Path) -> list[str]:
    """Names of the functions the module's `if __name__ == "__main__":` block calls."""
    calls = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
            calls += [c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    return calls


def _imported_names(path: Path, modules: dict[str, Path]) -> dict[str, tuple[str, str]]:
    """name bound by a module-level `from X import Y [as name]` -> (module X, Y)."""
    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


def test_one_python_m_entry_point_per_command():
    """`ledgerlm NAME` and `python -m MODULE` run the same function; no module serves two commands, and no
    other module's __main__ runs a command's function (a second entry point for the same command)."""
    from ledgerlm.cli import COMMANDS

    modules = module_files()
    targets = {name: spec.split(":") for name, (spec, _) in COMMANDS.items()}
    problems = []
    by_module: dict[str, list[str]] = {}
    for name, (module, func) in targets.items():
        by_module.setdefault(module, []).append(name)
        if module not in modules:
            problems.append(f"`ledgerlm {name}`: module {module} not found")
        elif func not in _main_guard_calls(modules[module]):
            problems.append(f"`ledgerlm {name}`: `python -m {module}` does not run {func}() "
                            f"(its __main__ calls {_main_guard_calls(modules[module]) or 'nothing'})")
    problems += [f"{module} serves several commands {names}: `python -m {module}` can run only one"
                 for module, names in by_module.items() if len(names) > 1]
    command_funcs = {(module, func): name for name, (module, func) in targets.items()}
    for module, path in modules.items():
        imported = _imported_names(path, modules)
        for call in _main_guard_calls(path):
            source = imported.get(call)
            if source in command_funcs and source[0] != module:
                problems.append(f"{path.relative_to(REPO)}: a second entry point for `ledgerlm {command_funcs[source]}`")
    assert not problems, "\n".join(problems)


DATASET = "ledgerlm.synth.finindices.dataset"  # the dataset builder behind `ledgerlm synth`


def dataset_builders_with_main(repo: Path = REPO, roots: dict[str, str] = ROOTS) -> list[str]:
    """Modules with a `__main__` block that call the dataset builder (`dataset.generate` / `dataset.merge`):
    each is a way to run `ledgerlm synth`'s job from the command line."""
    found = []
    for module, path in module_files(repo, roots).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if module == DATASET or not any(isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and isinstance(
                n.test.left, ast.Name) and n.test.left.id == "__name__" for n in tree.body):
            continue
        aliases, funcs = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    if f"{node.module}.{a.name}" == DATASET:
                        aliases.add(a.asname or a.name)
                    elif node.module == DATASET and a.name in ("generate", "merge"):
                        funcs.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                aliases |= {a.asname for a in node.names if a.name == DATASET and a.asname}
        calls = [c.func for c in ast.walk(tree) if isinstance(c, ast.Call)]
        if any(isinstance(f, ast.Attribute) and f.attr in ("generate", "merge") and isinstance(f.value, ast.Name)
               and f.value.id in aliases or isinstance(f, ast.Name) and f.id in funcs for f in calls):
            found.append(module)
    return sorted(found)


def test_synth_has_exactly_one_entry_point():
    """Shard jobs on SLURM (`--shard i/n`) or Ray (`--ray-tasks N`) all start from `ledgerlm synth`: no other
    module both builds datasets and runs as `python -m` (ray_runner keeps only its run() API)."""
    from ledgerlm.cli import COMMANDS

    assert dataset_builders_with_main() == [COMMANDS["synth"][0].split(":")[0]]


def test_the_entry_point_scan_sees_a_second_synth_main(tmp_path):
    (tmp_path / "synth" / "finindices").mkdir(parents=True)
    for init in ("synth", "synth/finindices"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "synth/finindices/dataset.py").write_text("def generate():\n    pass\n")
    (tmp_path / "synth/finindices/runner.py").write_text(
        "from ledgerlm.synth.finindices import dataset as ds\ndef run():\n    ds.generate()\n")
    roots = {"ledgerlm.synth": "synth"}
    assert dataset_builders_with_main(tmp_path, roots) == []  # an API, no __main__
    (tmp_path / "synth/finindices/runner.py").write_text(
        "from ledgerlm.synth.finindices.dataset import merge\ndef main():\n    merge()\n"
        "if __name__ == '__main__':\n    main()\n")
    assert dataset_builders_with_main(tmp_path, roots) == ["ledgerlm.synth.finindices.runner"]


def test_python_m_runs_the_command(tmp_path):
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ledgerlm.synth.indices.listing", "--family", "liquidity", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert {row["family"] for row in json.loads(out.stdout)} == {"liquidity"}


@pytest.mark.slow
def test_every_command_module_answers_help_under_python_m(tmp_path):
    import subprocess
    import sys

    from ledgerlm.cli import COMMANDS

    for name, (spec, _) in COMMANDS.items():
        out = subprocess.run([sys.executable, "-m", spec.split(":")[0], "--help"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300)
        assert out.returncode == 0 and "usage" in out.stdout.lower(), (name, out.stderr[-500:])


HEAVY = ("torch", "transformers", "vllm", "trl", "peft", "datasets", "matplotlib", "ray", "deepspeed", "accelerate")


def test_command_modules_import_no_heavy_optional_package(tmp_path):
    """Importing every command's module (what `ledgerlm NAME --help` does) loads none of the heavy optional
    packages: they are imported inside the function that needs them."""
    import json
    import subprocess
    import sys

    from ledgerlm.cli import COMMANDS

    modules = sorted({spec.split(":")[0] for spec, _ in COMMANDS.values()})
    code = ("import importlib, json, sys\nfound = {}\n"
            f"for m in {modules!r}:\n    before = set(sys.modules)\n    importlib.import_module(m)\n"
            f"    new = {{k.split('.')[0] for k in set(sys.modules) - before}} & set({HEAVY!r})\n"
            "    if new: found[m] = sorted(new)\nprint(json.dumps(found))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {}, f"command modules importing heavy packages at import time: {out.stdout}"


def test_a_tools_main_is_exempt_from_cycles_only_when_nothing_else_calls_it(tmp_path):
    (tmp_path / "synth" / "statements").mkdir(parents=True)
    for init in ("synth", "synth/statements"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "synth/statements/low.py").write_text(
        "def main():\n    from ledgerlm.synth.statements.high import load\n    return load()\n\n\n"
        "if __name__ == '__main__':\n    main()\n")
    (tmp_path / "synth/statements/high.py").write_text("from ledgerlm.synth.statements.low import main as _unused\n"
                                                       "def load():\n    return 1\n")
    roots = {"ledgerlm.synth": "synth"}
    assert cycles([e for e in import_edges(tmp_path, roots) if not e.script]) != []  # high imports main: not script-only
    (tmp_path / "synth/statements/high.py").write_text("from ledgerlm.synth.statements import low\ndef load():\n    return 1\n")
    edges = import_edges(tmp_path, roots)
    assert [e.script for e in edges if e.importer.endswith("low")] == [True]
    assert cycles([e for e in edges if not e.script]) == [] and cycles(edges) != []
    (tmp_path / "synth/statements/other.py").write_text("COMMANDS = {'x': 'ledgerlm.synth.statements.low:main'}\n")
    assert cycles([e for e in import_edges(tmp_path, roots) if not e.script]) != []  # a command: runs imported


# Heavy optional packages, and what a warm `ledgerlm synth` keeps out of its serial start-up (issue 17,
# tests/test_synth_startup.py): a function-level import that keeps one of them out has a reason to be there.
LAZY_OK = HEAVY + ("pandas", "numpy", "pyarrow", "lxml", "scipy", "pydantic")


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def lazy_imports_that_could_be_at_top(edges: list[Edge], repo: Path = REPO) -> list[str]:
    """Function-level imports of ledgerlm modules that need not be there: moving them to the module top
    creates no import cycle (with every such import moved) and loads no heavy optional package (the
    target's import-time imports, as they are now)."""
    now, end = {}, {}
    for e in edges:
        if e.top and not e.script and not e.typing_only:
            now.setdefault(e.importer, set()).add(e.target)
        if not e.script and not e.typing_only:
            end.setdefault(e.importer, set()).add(e.target)
    heavy = {m for (r, m), pkgs in THIRD_PARTY.items() if r == str(repo) and pkgs & set(LAZY_OK)}
    out = []
    for e in edges:
        if e.top or e.typing_only or _reach(now, e.target) & heavy:
            continue
        if e.script and e.importer in _reach(end, e.target):
            continue  # a tool main() that must stay lazy: at the top it would close a cycle
        out.append(f"{e}  (move to the module top: no cycle, nothing heavy)")
    return list(dict.fromkeys(out))


def test_internal_imports_sit_at_module_top(edges):
    found = lazy_imports_that_could_be_at_top(edges)
    assert not found, f"{len(found)} function-level ledgerlm imports could be at module top:\n" + "\n".join(found)


def test_the_lazy_import_check_keeps_heavy_and_cycle_breaking_imports(tmp_path):
    (tmp_path / "synth" / "x").mkdir(parents=True)
    for init in ("synth", "synth/x"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "synth/x/gpu.py").write_text("import torch\n")
    (tmp_path / "synth/x/low.py").write_text(
        "def f():\n    from ledgerlm.synth.x import gpu\n\n\ndef g():\n    from ledgerlm.synth.x.plain import h\n\n\n"
        "def main():\n    from ledgerlm.synth.x.high import load\n\n\nif __name__ == '__main__':\n    main()\n")
    (tmp_path / "synth/x/plain.py").write_text("def h():\n    return 1\n")
    (tmp_path / "synth/x/high.py").write_text("from ledgerlm.synth.x import low\ndef load():\n    return 1\n")
    found = lazy_imports_that_could_be_at_top(import_edges(tmp_path, {"ledgerlm.synth": "synth"}), tmp_path)
    assert found == ["synth/x/low.py:6: ledgerlm.synth.x.low -> ledgerlm.synth.x.plain  (move to the module top: no cycle, "
                     "nothing heavy)"]
