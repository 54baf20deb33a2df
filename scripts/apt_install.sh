#!/bin/sh
# Install Debian packages with apt-get (as root, or through sudo), updating the package lists once if the
# first try fails. The one apt helper of scripts/install_wordnet.sh and scripts/install_chromium.sh.
# Usage: sh scripts/apt_install.sh WHAT PACKAGE...   (WHAT names the need in messages: "WordNet", "chromium")
set -eu

WHAT=$1
shift

if ! command -v apt-get >/dev/null 2>&1; then
    echo "$WHAT is missing and apt-get is not available: install the Debian packages $* (or their equivalent) yourself" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "$WHAT is missing; run as root: apt-get install -y $*" >&2
        exit 1
    fi
fi

echo "installing $* with apt-get"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" \
    || { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"; }
