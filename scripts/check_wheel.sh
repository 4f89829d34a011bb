#!/usr/bin/env bash
# Installs the wheel from dist/ into a fresh venv with no cargo, rustc or C compiler on
# PATH, and runs examples and copapy-run from the installed package (not the source tree).
# Removes its venv and work directory afterwards, also when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
wheel=$(ls dist/copapy_rs-*.whl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/venv
python3 -m venv "$venv"
# a PATH holding only the venv and the base system: no ~/.cargo/bin
clean_path="$venv/bin:/usr/bin:/bin"
if PATH=$clean_path command -v cargo >/dev/null; then
  echo "cargo is on the clean PATH; the check would prove nothing" >&2
  exit 1
fi
PATH=$clean_path "$venv/bin/python" -m pip install -q --no-index "$wheel"
mkdir "$tmp/work"
cd "$tmp/work"
for ex in basic.py state_space_filter.py neural_layer.py jit_example.py; do
  PATH=$clean_path "$venv/bin/python" "$root/examples/$ex" > /dev/null
done
PATH=$clean_path "$venv/bin/python" -c "import copapy, sys; assert copapy.__file__.startswith('$venv'), copapy.__file__"
PATH=$clean_path "$venv/bin/python" "$root/examples/pid_state_loop.py" pid.cpy > /dev/null
PATH=$clean_path copapy-run pid.cpy -n 300 --print y | tail -1
echo "wheel ok: $(basename "$wheel")"
