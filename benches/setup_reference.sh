#!/usr/bin/env bash
# Create .venv-copapy-ref with the public Copapy release: the reference that the
# compatibility tests (tests/copapy_reference.py) and the side-by-side benchmarks
# (benches/bench_*.py) run the same programs under. Installs only when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-copapy-ref/bin/python ]; then
  python3 -m venv .venv-copapy-ref
fi
if ! .venv-copapy-ref/bin/python -c \
    "import importlib.metadata as m, numpy; assert m.version('copapy') == '0.0.7.post0'" 2>/dev/null; then
  .venv-copapy-ref/bin/python -m pip install -q --upgrade pip
  .venv-copapy-ref/bin/python -m pip install -q "copapy==0.0.7.post0" numpy
fi
.venv-copapy-ref/bin/python -c "import copapy; print('Copapy reference ready:', copapy.__file__)"
# the benchmarks' own peers (numba) go into the project's .venv
if [ -x .venv/bin/python ]; then
  .venv/bin/python -m pip install -q -r benches/requirements.txt
fi
