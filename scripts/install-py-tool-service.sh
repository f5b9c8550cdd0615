#!/usr/bin/env bash
# Installs the Python side of the service-tool tests, pinned, into the git-ignored
# .tools/py-tool-service-temporalio-<version>/: a venv with the Temporal Python SDK from PyPI,
# in which test/e2e/python-tool-service.test.ts runs a tool service written against
# forkflow's documented contract (test/kit/py/tool_service.py) with no forkflow code.
# Prints the venv's python on stdout; safe to run concurrently and again (a lock makes later
# callers wait for the first install; a finished venv is reused).
set -euo pipefail
VERSION=1.35.0
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/py-tool-service-temporalio-$VERSION"
mkdir -p "$root/.tools"
exec 9>"$root/.tools/.py-tool-service-temporalio-$VERSION.lock"
flock 9
# The import runs the SDK, so a half-finished install does not count as installed.
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import temporalio.worker" >/dev/null 2>&1; then
  echo "$dir/bin/python"
  exit 0
fi
command -v python3 >/dev/null || { echo "install-py-tool-service: python3 is needed" >&2; exit 1; }
echo "install-py-tool-service: creating a venv with temporalio==$VERSION from PyPI (first run only)..." >&2
rm -rf "$dir"
python3 -m venv "$dir"
"$dir/bin/python" -m pip install --disable-pip-version-check --no-input -q "temporalio==$VERSION" >&2
"$dir/bin/python" -c "import temporalio.worker" >/dev/null
echo "$dir/bin/python"
