#!/usr/bin/env bash
# The report's browser test and the agent episodes need a headless Chromium: Debian's
# chromium, and its headless build chromium-headless-shell, which the agent episodes prefer
# (about 40 % less CPU per episode; src/acceval/agents/browser.py). Install what is missing
# when we may (root, apt-get present); otherwise say what to install and carry on: the browser
# tests then fail with the same message instead of silently skipping.
set -u
missing=()
have_browser=0
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  command -v "$b" >/dev/null 2>&1 && have_browser=1 && break
done
((have_browser)) || missing+=(chromium)
command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
((${#missing[@]})) || exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} for the browser tests and agent episodes (apt-get)..."
  apt-get update -qq >/dev/null 2>&1
  for pkg in "${missing[@]}"; do  # one at a time: a release without the headless shell
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null 2>&1 \
      || echo "warning: could not install $pkg" >&2
  done
elif ((!have_browser)); then
  echo "note: install Chromium (e.g. 'apt-get install chromium chromium-headless-shell')" \
       "for the browser tests" >&2
fi
exit 0
