#!/usr/bin/env bash
# The whole test suite on a fresh machine: a headless Chromium for the dashboard's browser tests
# (Debian packages), a virtual environment with kenning and its test extras, then pytest, then the
# TypeScript client's tests (Node 20+, npm ci from the committed lock file) against real kenning servers.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test]' 2>&1 | tee .venv/install.log
# A warning while building or installing kenning (a deprecated setting in pyproject.toml, say) fails the
# run while there is time to fix it; pip's own "WARNING:" notes about the package index are not ours.
if grep -E "[A-Za-z]+Warning\b" .venv/install.log; then
    echo "installing kenning printed the warnings above: fix them" >&2
    exit 1
fi
export KENNING_REQUIRE_BROWSER=1   # a browser test that cannot start a browser fails instead of skipping
status=0
.venv/bin/python -m pytest -n 2 "$@" || status=$?      # two workers (pytest-xdist): the suite in half the time
(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error \
    && KENNING_PYTHON="$(cd ../.. && pwd)/.venv/bin/python" npm test) || status=$?
exit $status
