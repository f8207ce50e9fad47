#!/usr/bin/env bash
# Install what transformer-steps needs on Debian 12, then fetch the BERT vocabulary.
# Idempotent and quiet: when everything is present it prints nothing and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  g++ cmake make pkg-config
  libxtensor-dev libxsimd-dev libopenblas-dev libsleef-dev
  libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev
  python3-torch python3-numpy
  clang libclang-rt-14-dev
  gettext
  tmux
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$here/scripts/fetch_vocab.sh"
