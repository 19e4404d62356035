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
