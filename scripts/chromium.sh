#!/usr/bin/env bash
# Prints the path of the chromium the browser tests drive, installing Debian's
# chromium and the fonts the page needs (CJK: fonts-wqy-microhei; emoji:
# fonts-noto-color-emoji) with apt when they are missing. Needs root (or sudo)
# only when something has to be installed. Usage:
#   export HERMES_TEST_CHROMIUM="$(bash scripts/chromium.sh)"
set -euo pipefail
want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium)
dpkg -s fonts-wqy-microhei >/dev/null 2>&1 || want+=(fonts-wqy-microhei)
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || want+=(fonts-noto-color-emoji)
if [ "${#want[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "chromium.sh: installing ${want[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >&2
fi
command -v chromium
