"""`ledgerlm synth` as a program leaves right after the summary without freeing its caches (`ledgerlm.cli.exit_early`,
issue #17): the same files, the same output and exit code as the library call, which returns instead of exiting.

    python -m pytest tests/test_synth_program_exit.py -q
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ledgerlm import cli

FILES = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md")


def _digest(folder: Path) -> dict:
    return {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in FILES}


def test_program_exits_early_with_every_file_and_line_written_like_the_library_call(tmp_path, capsys):
    args = ["synth", "--num", "12", "--seed", "3", "--no-progress"]
    assert cli.main([*args, "--out", str(tmp_path / "lib")]) == 0  # a library call returns (the test goes on)
    library_out = capsys.readouterr()
    proc = subprocess.run([sys.executable, "-m", "ledgerlm", *args, "--out", str(tmp_path / "prog")],
                          capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})  # buffered, as usual
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == f"{tmp_path / 'prog'}\n" and library_out.out == f"{tmp_path / 'lib'}\n"
    assert proc.stderr.splitlines()[-1] == library_out.err.splitlines()[-1]  # the kept line, flushed before leaving
    assert "kept" in proc.stderr.splitlines()[-1]
    assert _digest(tmp_path / "prog") == _digest(tmp_path / "lib")


@pytest.mark.parametrize("module", ["ledgerlm", "ledgerlm.cli"])
def test_every_program_entry_leaves_early(module, tmp_path):
    """`python -m ledgerlm` and `python -m ledgerlm.cli` both leave through `os._exit` (no atexit handler runs). Run as
    `__main__`, cli.py is a second copy of the module whose flag the commands' `exit_early` never saw: benchmarks
    that used `-m ledgerlm.cli` timed the interpreter freeing every cache (100 companies: 4-9 s CPU of ~40)."""
    code = ("import atexit, runpy, sys; atexit.register(lambda: print('ATEXIT', flush=True)); "
            f"sys.argv = ['ledgerlm', 'synth', '--num', '4', '--no-progress', '--out', {str(tmp_path / 'out')!r}]; "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out" / "train.jsonl").is_file()
    assert "ATEXIT" not in proc.stdout
