#!/usr/bin/env bash
# Create .venv-copapy-ref with the public Copapy release, for side-by-side benchmarks
# (benches/bench_core.py runs the same measurements under it and under our .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-copapy-ref/bin/python ]; then
  python3 -m venv .venv-copapy-ref
fi
.venv-copapy-ref/bin/python -m pip install -q --upgrade pip
.venv-copapy-ref/bin/python -m pip install -q "copapy==0.0.7.post0" numpy
.venv-copapy-ref/bin/python -c "import copapy; print('Copapy reference ready:', copapy.__file__)"
