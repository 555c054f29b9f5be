#!/usr/bin/env bash
# Chromium and chromedriver for the console's browser tests: the Debian packages `chromium`
# and `chromium-driver`, installed with apt-get when missing (as root, or through sudo). Never
# a browser download.
#   tests/browser/chromium.sh install   # installs if needed, prints the chromedriver path
set -euo pipefail

fail() { echo "chromium.sh: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }
have_binaries() { command -v chromedriver >/dev/null && { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; }

as_admin() {
  if is_root; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else fail "Chromium is not installed and installing it needs root: run \`apt-get install -y chromium chromium-driver\` as root (or install sudo)"
  fi
}

install() {
  if ! have_binaries; then
    command -v apt-get >/dev/null || fail "no chromium and chromedriver found, and no apt-get to install them: install Chromium and its WebDriver"
    echo "chromium.sh: installing the Debian packages chromium and chromium-driver" >&2
    # Fonts too, so that screenshots show text (a bare container may have none).
    local packages=(chromium chromium-driver fonts-dejavu-core)
    as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" >&2 || {
      as_admin env DEBIAN_FRONTEND=noninteractive apt-get update >&2
      as_admin env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" >&2
    }
    have_binaries || fail "apt-get installed chromium and chromium-driver, but chromedriver or chromium is still missing"
  fi
  command -v chromedriver
}

case "${1:-}" in
  install) install ;;
  *) fail "usage: $0 install" ;;
esac
