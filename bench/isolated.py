"""Run a Python program on the code in the current directory, not on this checkout.

bench/run.sh serves the baseline revision (BENCH_BASELINE_REV) from a git worktree
with this checkout's .venv. That environment has this checkout installed in
editable mode, through an import hook that setuptools appends to ``sys.meta_path``:
the baseline's own packages come first on ``sys.path``, but a module the baseline
does not have (an app's ``admin``, a migration, a management command) would be
found by the hook in this checkout and silently mixed in. This launcher removes
the hook, puts the current directory first on ``sys.path``, and runs the program
as ``__main__`` in this process - so the PID bench/run.sh records is the program's
(the server's launcher). ``-m MODULE`` runs a module of the current directory.

Usage (from the baseline worktree):
  python bench/isolated.py manage.py migrate --noinput
  python bench/isolated.py -m powercontext.serve
  python bench/isolated.py .venv/bin/gunicorn -c gunicorn.conf.py APP  (a revision
      before decision 0044, with gunicorn installed)
"""

from __future__ import annotations

import os
import runpy
import sys

EDITABLE = "__editable__"


def _is_editable_hook(hook: object) -> bool:
    return getattr(hook, "__module__", "").startswith(EDITABLE)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.meta_path[:] = [f for f in sys.meta_path if not _is_editable_hook(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not _is_editable_hook(h)]
    sys.path_importer_cache.clear()
    sys.path[:] = [os.getcwd()] + [
        entry for entry in sys.path[1:] if not entry.startswith(EDITABLE)
    ]
    if sys.argv[1] == "-m":
        module = sys.argv[2]
        sys.argv = [module, *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    program = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
