#!/usr/bin/env bash
# Install the Debian packages the test suite needs (PostgreSQL, Redis, Chromium) when they
# are missing and we may (root). Prints what it found; never downloads anything else.
set -euo pipefail

missing=()
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
# Fonts so that charts and PDFs render text in the browser tests: DejaVu, and Liberation
# (metric-compatible Arial/Helvetica/Times, which chromium only recommends and
# --no-install-recommends below would leave out; the 390 px layout checks were made with it).
[ -d /usr/share/fonts/truetype/dejavu ] || missing+=(fonts-dejavu-core)
[ -d /usr/share/fonts/truetype/liberation ] || missing+=(fonts-liberation)

if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: postgresql, redis-server, chromium and fonts present"
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "system packages missing: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
