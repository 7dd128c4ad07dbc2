"""
The type checker is clean: mypy over the modules setup.cfg's [mypy] section names.

core/config and core/world under --strict's per-module flags, and the modules of the other
[mypy-...] sections. The cache (build/.mypy_cache) keeps a rerun to a few seconds; a cold run
spends most of its time on numpy's stubs.
"""

import os
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_checked_modules():
    cwd = os.getcwd()
    os.chdir(ROOT)      # setup.cfg's files and cache_dir are relative to the repository
    try:
        out, err, status = api.run(['--config-file', str(ROOT / 'setup.cfg')])
    finally:
        os.chdir(cwd)
    assert status == 0, out + err
    assert out.startswith('Success: no issues found'), out
