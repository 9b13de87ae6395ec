#!/usr/bin/env bash
# The report test renders report.html in headless Chromium. Debian's package is the only browser
# this machine can install (browser downloads by test tools are blocked), so install it if missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then command -v chromium; exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "[chromium] not installed; install Debian's chromium package (apt-get install chromium) to run the report test" >&2
  exit 1
fi
echo "[chromium] installing Debian's chromium package (first run only)" >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2
command -v chromium
