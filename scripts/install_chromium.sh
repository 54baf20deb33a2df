#!/bin/sh
# Install Debian's chromium and chromium-driver when missing: the web app's browser tests
# (tests/test_web_browser.py) drive /usr/bin/chromium through Playwright, which must not download
# a browser of its own. Usage: sh scripts/install_chromium.sh   (root, or sudo available; exits 0
# when already installed). Set FIGLANG_CHROMIUM to use a browser binary elsewhere.
set -eu

CHROMIUM=${FIGLANG_CHROMIUM:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
    echo "chromium found at $CHROMIUM"
    exit 0
fi

sh "$(dirname "$0")/apt_install.sh" chromium chromium chromium-driver

if [ ! -x /usr/bin/chromium ]; then
    echo "chromium installed but /usr/bin/chromium is missing" >&2
    exit 1
fi
echo "chromium installed at /usr/bin/chromium"
