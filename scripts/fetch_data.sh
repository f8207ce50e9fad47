#!/usr/bin/env bash
# Fetch the course's real text from Debian's (or Ubuntu's) own archive into data/ (gitignored):
#   data/fortunes/min/*     the fortune files of `fortunes-min` (3 files: fortunes, literature, riddles)
#   data/fortunes/full/*    the fortune files of `fortunes` (40 more; min + full = all of fortunes)
#   data/mo/fr/<domain>.mo  the French message catalogs of ten common packages (EN->FR pairs)
#   data/MANIFEST.tsv       one row per extracted file: package, version, .deb name, the .deb's sha256,
#                           the file (relative to data/), its sha256 and its size in bytes
# Only `apt-get download` (the system's own apt sources) is used, never another host, and never at run
# time: the chapters and tests read data/ only. Each .deb is unpacked with dpkg-deb | tar, only the files
# named above are kept, and the .deb is deleted. The catalogs come from the downloaded .deb, never from
# the installed system (its locales may be purged).
#
# Usage: scripts/fetch_data.sh            fetch what is missing or damaged; quiet when all is intact
#        scripts/fetch_data.sh --check    exit 0 when every file is present and matches the manifest, else 1
# A package the apt sources do not offer: one line naming it on stderr, exit 2. A failed download or
# unpacking: one line, exit 1. Anything (re)fetched: the data's sizes are printed.
#
# Ubuntu strips translations out of its main packages into language packs: where a package's .deb has no
# usr/share/locale/fr/LC_MESSAGES/*.mo, its catalog (<package>.mo) is taken from language-pack-fr-base's
# usr/share/locale-langpack/fr/LC_MESSAGES/ instead (the manifest names that package and version).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${TS_DATA_DIR:-$here/data}
check=0; [ "${1:-}" = --check ] && { check=1; shift; }
[ $# -eq 0 ] || { echo "fetch_data: unknown argument '$1': use 'scripts/fetch_data.sh' or 'scripts/fetch_data.sh --check'" >&2; exit 2; }

fortune_pkgs=(fortunes-min fortunes)
mo_pkgs=(coreutils bash apt dpkg git tar grep sed findutils diffutils)
manifest=$data/MANIFEST.tsv
header=$'package\tversion\tdeb\tdeb_sha256\tfile\tsha256\tbytes'

# intact PKG: the manifest has rows for PKG and each of its files is present with its recorded sha256
intact() {
  [ -f "$manifest" ] || return 1
  local rows
  rows=$(awk -F'\t' -v p="$1" 'NR > 1 && $1 == p {print $6 "  " $5}' "$manifest")
  [ -n "$rows" ] || return 1
  (cd "$data" && sha256sum --check --status --strict <<<"$rows") 2>/dev/null
}

todo=()
for p in "${fortune_pkgs[@]}" "${mo_pkgs[@]}"; do intact "$p" || todo+=("$p"); done
[ ${#todo[@]} -gt 0 ] || exit 0
[ $check = 0 ] || exit 1

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
  || { echo "fetch_data: apt-get and dpkg-deb are needed (the data come from the Debian/Ubuntu archive)" >&2; exit 1; }
mkdir -p "$data"
exec 9>"$data/.fetch_data.lock"
command -v flock >/dev/null && flock 9   # two fetches at once (parallel deps runs) take turns

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=0
# offered PKG...: those of the packages the apt sources offer (a candidate version), one a line;
# one apt-cache call for all (it takes seconds on a busy machine)
offered() {
  apt-cache policy "$@" 2>/dev/null \
    | awk '/^[^ ]/ {p = $1; sub(/:$/, "", p)} /Candidate:/ && $2 != "(none)" {print p}'
}
# a fresh system has no package lists yet: update once, where we may (root, or sudo without a password)
update() {
  [ $updated = 0 ] || return 0
  updated=1
  if [ -z "$sudo" ] || sudo -n true 2>/dev/null; then $sudo apt-get update -qq >/dev/null 2>&1 || true; fi
}
# require PKG...: every one offered, else one line naming the first missing, exit 2
require() {
  local have p
  have=" $(offered "$@" | tr '\n' ' ') "
  for p in "$@"; do
    case $have in *" $p "*) continue ;; esac
    [ $updated = 1 ] || { update; require "$@"; return; }
    local hint="" what="its French message catalog"
    case $p in fortunes*) what="fortune texts" ;; language-pack-*) what="the French catalogs Ubuntu strips from its packages" ;; esac
    grep -qi '^ID=ubuntu' /etc/os-release 2>/dev/null && hint=" (enable the universe component)"
    echo "fetch_data: package $p ($what) is not in this system's apt sources$hint" >&2
    exit 2
  done
}
require "${todo[@]}"

tmp=$(mktemp -d "$data/.fetch.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt's _apt user writes the download here when run as root
sandbox=(); [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
# download PKG...: the candidate .debs into $tmp/debs/, all in one apt-get call
download() {
  mkdir -p "$tmp/debs"
  if ! (cd "$tmp/debs" && apt-get download "${sandbox[@]}" -q=2 "$@" >"$tmp/download.log" 2>&1); then
    echo "fetch_data: 'apt-get download $*' failed: $(grep -v '^W:' "$tmp/download.log" | tail -1)" >&2; exit 1
  fi
}
# deb_of PKG: the downloaded .deb of PKG
deb_of() {
  local d
  for d in "$tmp"/debs/*.deb; do
    [ "$(dpkg-deb -f "$d" Package 2>/dev/null)" = "$1" ] && { echo "$d"; return; }
  done
  echo "fetch_data: 'apt-get download $1' left no .deb" >&2; exit 1
}
# unpack DEB DIR PATTERN...: the members matching the patterns (regular files only) into DIR
unpack() {
  local deb=$1 dir=$2; shift 2
  mkdir -p "$dir"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards "$@" 2>/dev/null \
    || { echo "fetch_data: cannot unpack $(basename "$deb") (the members wanted: $*)" >&2; exit 1; }
}
rows=()   # new manifest rows
# record PKG DEB FILE...: manifest rows for the files (paths relative to data/)
record() {
  local p=$1 deb=$2; shift 2
  local v sha f
  v=$(dpkg-deb -f "$deb" Version); sha=$(sha256sum "$deb" | cut -d' ' -f1)
  for f in "$@"; do
    rows+=("$p"$'\t'"$v"$'\t'"$(basename "$deb")"$'\t'"$sha"$'\t'"$f"$'\t'"$(sha256sum "$data/$f" | cut -d' ' -f1)"$'\t'"$(stat -c %s "$data/$f")")
  done
}
langpack=""
download "${todo[@]}"
for p in "${todo[@]}"; do
  deb=$(deb_of "$p")
  x=$tmp/x.$p
  case $p in
    fortunes-min|fortunes)
      dest=fortunes/min; [ "$p" = fortunes ] && dest=fortunes/full
      unpack "$deb" "$x" './usr/share/games/fortunes/*'
      rm -rf "${data:?}/$dest"; mkdir -p "$data/$dest"
      files=()
      for f in "$x"/usr/share/games/fortunes/*; do
        b=$(basename "$f")
        # the .dat index files are strfile's (we read the text), the .u8 are symlinks
        [ -f "$f" ] && [ ! -L "$f" ] && [ "${b%.dat}" = "$b" ] && [ "${b%.u8}" = "$b" ] || continue
        cp "$f" "$data/$dest/$b"; files+=("$dest/$b")
      done
      [ ${#files[@]} -gt 0 ] || { echo "fetch_data: $(basename "$deb") holds no fortune files in usr/share/games/fortunes/" >&2; exit 1; }
      record "$p" "$deb" "${files[@]}" ;;
    *)
      mkdir -p "$data/mo/fr"
      if dpkg-deb --fsys-tarfile "$deb" | tar -t --wildcards './usr/share/locale/fr/LC_MESSAGES/*.mo' >/dev/null 2>&1; then
        unpack "$deb" "$x" './usr/share/locale/fr/LC_MESSAGES/*.mo'
        files=()
        for f in "$x"/usr/share/locale/fr/LC_MESSAGES/*.mo; do
          cp "$f" "$data/mo/fr/$(basename "$f")"; files+=("mo/fr/$(basename "$f")")
        done
        record "$p" "$deb" "${files[@]}"
      else
        # Ubuntu: the catalog lives in the language pack
        if [ -z "$langpack" ]; then
          require language-pack-fr-base
          download language-pack-fr-base
          langpack=$(deb_of language-pack-fr-base)
        fi
        unpack "$langpack" "$x" "./usr/share/locale-langpack/fr/LC_MESSAGES/$p.mo"
        cp "$x/usr/share/locale-langpack/fr/LC_MESSAGES/$p.mo" "$data/mo/fr/$p.mo"
        record "$p" "$langpack" "mo/fr/$p.mo"
        # the manifest names the package the file was wanted for; the deb column says where it came from
      fi ;;
  esac
  rm -rf "$x"
done

# the manifest: the intact packages' rows kept, the fetched ones' replaced
{
  echo "$header"
  if [ -f "$manifest" ]; then
    awk -F'\t' -v todo=" ${todo[*]} " 'NR > 1 && index(todo, " " $1 " ") == 0' "$manifest"
  fi
  printf '%s\n' "${rows[@]}"
} >"$manifest.tmp"
mv "$manifest.tmp" "$manifest"

# the sizes, read from what is on disk now
# records: a fortune file's records are separated by lines holding only '%'
awk -F'\t' 'NR > 1 {print $5}' "$manifest" | grep '^fortunes/' | {
  n=0; bytes=0; recs=0
  while read -r f; do
    n=$((n + 1)); bytes=$((bytes + $(stat -c %s "$data/$f")))
    recs=$((recs + $(awk 'BEGIN {r = 0; open = 0} /^%$/ {if (open) r++; open = 0; next} NF || open {open = 1} END {if (open) r++; print r}' "$data/$f")))
  done
  echo "fetch_data: fortunes: $n files, $bytes bytes, $recs records in $data/fortunes/"
}
# messages: a .mo's count N is the third 32-bit word, in the byte order its magic number gives
awk -F'\t' 'NR > 1 {print $5}' "$manifest" | grep '^mo/' | {
  n=0; bytes=0; msgs=0
  while read -r f; do
    n=$((n + 1)); bytes=$((bytes + $(stat -c %s "$data/$f")))
    # shellcheck disable=SC2046
    set -- $(od -An -tu1 -N12 "$data/$f")
    [ $# -eq 12 ] || continue
    if [ "$1" = 222 ]; then msgs=$((msgs + $9 + (${10} << 8) + (${11} << 16) + (${12} << 24)))
    else msgs=$((msgs + ($9 << 24) + (${10} << 16) + (${11} << 8) + ${12})); fi
  done
  echo "fetch_data: catalogs: $n files, $bytes bytes, $msgs messages (French, header entries included) in $data/mo/fr/"
}
echo "fetch_data: versions and sha256 of each .deb and file in $manifest"
