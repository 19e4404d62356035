"""The README's commands work as written: Quickstart and First hour run verbatim on a clean clone.

    python -m pytest -q tests/test_readme_commands.py            # fast checks (flags exist, CI = Quickstart)
    python -m pytest -q -m slow tests/test_readme_commands.py    # clean clone, every command run verbatim

The slow tests `git clone` this repository (committed state) into a temp folder with no ../shared
beside it, install it offline into a venv that sees this environment's packages (`pip install
--no-deps --no-build-isolation -e .` stands in for the README's `pip install` lines, which would
need PyPI), and run each README line with bash in the clone, `set -e`.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ledgerlm import cli

REPO = Path(__file__).resolve().parents[1]


def section_blocks(title: str) -> list[list[str]]:
    """The ```bash blocks of README section `## title`, as lists of command lines (comments dropped)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", body, re.S)
    return [[ln.split("  #")[0].strip() for ln in b.splitlines() if ln.strip() and not ln.lstrip().startswith("#")] for b in blocks]


def test_readme_sections_have_their_blocks():
    quick, ci_block = section_blocks("Quickstart")
    assert quick == ["pip install -e . && ledgerlm synth --out runs/finindices"], "Quickstart: one install-and-run command"
    ci = (REPO / ".ci" / "run").read_text()
    assert ci_block == [ci.split("# --- README test command (keep identical to the Quickstart) ---\n", 1)[1].strip()]
    (hour,) = section_blocks("First hour")
    assert "accelerate launch train/sft.py --config configs/sft/tiny-cpu.yaml" in hour
    order = [next(i for i, ln in enumerate(hour) if ln.startswith(p)) for p in
             ("ledgerlm synth", "ledgerlm compute", "accelerate launch", "ledgerlm eval", "ledgerlm report")]
    assert order == sorted(order), "First hour walks synth -> compute -> train -> eval -> report"


@pytest.mark.parametrize("section", ["Quickstart", "First hour", "Commands"])
def test_every_ledgerlm_flag_in_the_readme_exists(section, capsys):
    for block in section_blocks(section):
        for line in block:
            if not line.startswith("ledgerlm "):
                continue
            argv = shlex.split(line)[1:]
            help_argv = argv[:1] + (["--benchmark", argv[argv.index("--benchmark") + 1]] if "--benchmark" in argv else [])
            assert cli.main([*help_argv, "--help"]) == 0
            documented = set(re.findall(r"--[a-z][a-z0-9_-]*", capsys.readouterr().out))
            used = {a.split("=")[0] for a in argv if a.startswith("--")}
            assert used <= documented, f"{line}: {sorted(used - documented)} not in `ledgerlm {' '.join(help_argv)} --help`"


# ---- slow: a clean clone, each README line verbatim ------------------------------------------------

OFFLINE_INSTALL = ".venv/bin/python -m pip install -q --no-deps --no-build-isolation -e ."


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("clone") / "ledgerlm"
    subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root / ".venv")], check=True)
    subprocess.run(shlex.split(OFFLINE_INSTALL), cwd=root, check=True)
    # console scripts of packages installed outside the venv would run this environment's python (and its
    # ledgerlm): give the venv its own `accelerate`, as `pip install accelerate` would
    shim = root / ".venv" / "bin" / "accelerate"
    shim.write_text(f"#!{root / '.venv' / 'bin' / 'python'}\nimport sys\nfrom accelerate.commands.accelerate_cli import main\nsys.exit(main())\n")
    shim.chmod(0o755)
    assert not (root.parent / "shared").exists()
    return root


def run_block(clone: Path, lines: list[str], timeout: int) -> None:
    # a README `pip install …` (alone or before `&&`) becomes the offline install; the rest of the line runs verbatim
    script = "\n".join(re.sub(r"^pip install [^&]*", OFFLINE_INSTALL + " ", ln) for ln in lines)
    env = {**os.environ, "PATH": f"{clone / '.venv' / 'bin'}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LEDGERLM_CACHE_DIR": str(clone / ".ledgerlm-cache")}
    done = subprocess.run(["bash", "-euxo", "pipefail", "-c", script], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]


@pytest.mark.slow
def test_quickstart_block_runs_verbatim_on_a_clean_clone(clone):
    quick = section_blocks("Quickstart")[0]
    run_block(clone, quick, timeout=1800)
    assert (clone / "runs" / "finindices" / "manifest.json").is_file()


@pytest.mark.slow
def test_first_hour_block_runs_verbatim_on_a_clean_clone(clone):
    (hour,) = section_blocks("First hour")
    run_block(clone, hour, timeout=3600)
    assert (clone / "runs" / "sft-tiny" / "adapter_config.json").is_file()
    assert (clone / "runs" / "report" / "report.md").is_file()
