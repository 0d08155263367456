#!/usr/bin/env bash
# The programs the test suite drives besides Python packages, from Debian's packages:
# kubectl (the end-to-end tests of `kubesched serve`) and chromium (the web UI's and the
# HTML reports' browser tests, driven by Playwright at /usr/bin/chromium; no browser is
# ever downloaded). Installs only what is missing; needs root (or sudo) to install.
set -euo pipefail
missing=()
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v chromium >/dev/null || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  echo "make test needs ${missing[*]} (Debian packages); install them as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]} from Debian's packages" >&2
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
