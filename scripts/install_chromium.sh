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

if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium is missing and apt-get is not available: install Chromium and set FIGLANG_CHROMIUM to its binary" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "chromium is missing; run as root: apt-get install -y chromium chromium-driver" >&2
        exit 1
    fi
fi

echo "installing chromium and chromium-driver with apt-get"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver \
    || { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver; }

if [ ! -x /usr/bin/chromium ]; then
    echo "chromium installed but /usr/bin/chromium is missing" >&2
    exit 1
fi
echo "chromium installed at /usr/bin/chromium"
