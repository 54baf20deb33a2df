#!/bin/sh
# Install WordNet 3.0 (Debian's wordnet-base: /usr/share/wordnet) when it is missing.
# figlang reads it offline through figlang.lexicon.wordnet.load_wordnet(); the package
# lacks the `lexnames` file, which figlang ships itself (src/figlang/resources/wordnet/lexnames).
# Usage: sh scripts/install_wordnet.sh   (root, or sudo available; exits 0 when already installed)
set -eu

WORDNET_DIR=${FIGLANG_WORDNET_DIR:-/usr/share/wordnet}

if [ -f "$WORDNET_DIR/data.noun" ] && [ -f "$WORDNET_DIR/index.noun" ]; then
    echo "WordNet found in $WORDNET_DIR"
    exit 0
fi

sh "$(dirname "$0")/apt_install.sh" WordNet wordnet-base

if [ ! -f /usr/share/wordnet/data.noun ]; then
    echo "wordnet-base installed but /usr/share/wordnet/data.noun is missing" >&2
    exit 1
fi
echo "WordNet installed in /usr/share/wordnet"
