#!/usr/bin/env bash
# Fetch the bert-base-uncased WordPiece vocabulary (30522 lines) that chapter 1's
# tokenizer needs. It is not packaged by Debian; a pinned copy ships inside the npm
# package react-native-pytorch-core@0.2.4. We only `npm pack` (download the tarball),
# never install it, extract one JSON key and verify the checksum.
# Usage: scripts/fetch_vocab.sh [OUT]   (default: data/bert-base-uncased-vocab.txt)
#        scripts/fetch_vocab.sh --check  exit 0 when the default copy is present and intact, else 1
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0; [ "${1:-}" = --check ] && { check=1; shift; }
out=${1:-$here/data/bert-base-uncased-vocab.txt}
want=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$want" ]; then
  exit 0
fi
[ $check = 0 ] || exit 1
command -v npm >/dev/null || { echo "fetch_vocab: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
( cd "$tmp" && npm pack --silent react-native-pytorch-core@0.2.4 >/dev/null 2>&1 ) \
  || { echo "fetch_vocab: 'npm pack react-native-pytorch-core@0.2.4' failed (no network to the npm registry?)" >&2; exit 1; }
tar -xzf "$tmp"/react-native-pytorch-core-0.2.4.tgz -C "$tmp" package/android/src/androidTest/assets/bert_qa_spec.json
mkdir -p "$(dirname "$out")"
/usr/bin/python3 - "$tmp/package/android/src/androidTest/assets/bert_qa_spec.json" "$out.tmp" <<'PY'
import json, sys
vocab = json.load(open(sys.argv[1], encoding="utf-8"))["vocabulary_bert"]
with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as f:
    f.write(vocab.rstrip("\n") + "\n")
PY
got=$(sha256sum "$out.tmp" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  rm -f "$out.tmp"
  echo "fetch_vocab: checksum mismatch ($got, want $want)" >&2; exit 1
fi
mv "$out.tmp" "$out"
echo "fetch_vocab: wrote $out ($(wc -l < "$out") tokens)"
