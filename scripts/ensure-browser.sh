#!/usr/bin/env bash
# Make sure a headless Chromium exists for the leaderboard's browser tests: Debian's `chromium`
# package (installed with apt-get as root when missing), driven by Playwright from the venv.
set -euo pipefail
if command -v chromium >/dev/null || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "evalkit: no chromium found; install it (Debian: apt-get install chromium) for the browser tests" >&2
  exit 0  # the browser tests then skip locally and fail under CI=true, saying why
fi
echo "installing chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium >/dev/null
