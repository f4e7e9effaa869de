#!/usr/bin/env bash
# Create .venv (if missing) and install linsvm into it, editable, pinned by constraints.txt.
# Usage: bash scripts/venv.sh [EXTRAS]   e.g. "" for the package alone, "[dev]" for tests.
# Installs once: a stamp in .venv records the extras and the hash of pyproject.toml and
# constraints.txt, and pip runs again only when one of them changes (the install is editable,
# so edits to the sources need none).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
EXTRAS="${1:-}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
hash=$(.venv/bin/python -c 'import hashlib, sys
h = hashlib.sha256()
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        h.update(f.read())
print(h.hexdigest())' pyproject.toml constraints.txt)
name="${EXTRAS//[^a-z,]/}"
name="${name:-base}"
installed() { [ "$(cat ".venv/.linsvm-installed-$1" 2>/dev/null)" = "$hash" ]; }
# the dev extras hold everything the package alone needs
if installed "$name" || { [ "$name" = base ] && installed dev; }; then
    exit 0
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".${EXTRAS}"
echo "$hash" > ".venv/.linsvm-installed-$name"
