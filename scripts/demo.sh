#!/usr/bin/env bash
# Set up, then compile and run every example (the README's examples among them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for ex in examples/*.py; do
  echo "== $ex"
  .venv/bin/python "$ex"
done
# the copapy-run plugin example: extern_plugin.c serves the saved closed loop's imports
plugin=$(mktemp -d)
gcc -O2 -ffp-contract=off -shared -fPIC -o "$plugin/libplant.so" examples/extern_plugin.c
.venv/bin/python examples/extern_closed_loop.py --save "$plugin/loop.cpy" >/dev/null
echo "== copapy-run loop.cpy --plugin libplant.so -n 100 --print duty (last line)"
.venv/bin/copapy-run "$plugin/loop.cpy" --plugin "$plugin/libplant.so" -n 100 --print duty | tail -1
rm -rf "$plugin"
