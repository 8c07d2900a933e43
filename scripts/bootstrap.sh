#!/usr/bin/env bash
# Installs the system and npm packages glassbox needs, only those missing.
# Idempotent and quiet when everything is present: `make test` and
# `make demo` call it first, so a fresh Debian 12 machine needs nothing else.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"

# Debian packages: build tools, libraries (Open MPI, so that `make test`
# builds and tests data-parallel training; PCRE2 for the regex string ops),
# the data sets (Fashion-MNIST; Debian's fortunes as a text corpus),
# scikit-learn (the reference of the precision-recall counts), sox (a second
# reader of the audio summaries' WAV files), the benchmark
# peer (GB_WITH_TORCH=1), the fuzzing compiler (GB_WITH_FUZZ=1), the browser
# used by the end-to-end tests and openssl (the HTTPS test's certificate).
packages=(
  build-essential cmake pkg-config
  libopenblas-dev libsqlite3-dev libmicrohttpd-dev check
  libpng-dev zlib1g-dev libpcre2-dev openssl
  libopenmpi-dev openmpi-bin
  dataset-fashion-mnist fortunes
  python3-numpy python3-sklearn sox
  chromium nodejs npm
)
if [ "${GB_WITH_TORCH:-0}" = 1 ]; then packages+=(python3-torch); fi
# `make fuzz`: clang with libFuzzer and the sanitizer runtimes (not a
# dependency of clang when recommends are skipped, as below).
if [ "${GB_WITH_FUZZ:-0}" = 1 ]; then packages+=(clang libclang-rt-14-dev libfuzzer-14-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from elsewhere on the machine: accept any working ones.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages (chart libraries bundled into the dashboard, the browser
# driver for the end-to-end tests), pinned by static/package-lock.json.
if [ -f "$here/static/package.json" ]; then
  stamp="$here/static/node_modules/.gb-installed"
  if [ ! -f "$stamp" ] || [ "$here/static/package-lock.json" -nt "$stamp" ]; then
    echo "bootstrap: installing npm packages"
    (cd "$here/static" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$stamp"
  fi
fi
