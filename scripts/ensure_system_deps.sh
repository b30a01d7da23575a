#!/usr/bin/env bash
# Browser tests drive Debian's chromium. Install it when missing (needs root and apt); otherwise say how.
set -u
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
    && exit 0
fi
echo "chromium is missing: install Debian's 'chromium' package (apt-get install chromium); the browser tests will fail until then." >&2
exit 0
