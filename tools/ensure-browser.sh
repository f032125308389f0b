#!/usr/bin/env bash
# The report's browser test needs a headless Chromium. Install Debian's package when it is
# missing and we may (root, apt-get present); otherwise say what to install and carry on:
# the browser test then fails with the same message instead of silently skipping.
set -u
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  command -v "$b" >/dev/null 2>&1 && exit 0
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for the report's browser test (apt-get)..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    || echo "warning: could not install chromium; the browser test will fail" >&2
else
  echo "note: install Chromium (e.g. 'apt-get install chromium') for the report's browser test" >&2
fi
exit 0
