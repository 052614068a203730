#!/usr/bin/env bash
# Install the system programs the project needs (Debian packages) when they are missing.
# Usage: scripts/ensure-system.sh COMMAND:PACKAGE ...   e.g. dot:graphviz chromium:chromium
# Installs with apt-get when running as root (or with passwordless sudo); otherwise prints the
# exact command to run and fails, so nobody is left guessing.
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing system packages: ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt=(sudo apt-get)
else
  echo "error: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: missing ${missing[*]} and apt-get is not available; install them with your" \
       "system's package manager (macOS: brew install graphviz chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
