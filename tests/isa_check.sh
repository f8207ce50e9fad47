#!/usr/bin/env bash
# isa_check.sh CHAPTER_BINARY ROUTE_OBJECT_DIR
# 1) TS_ISA (src/fast/isa.hpp): every route this CPU can run is accepted; a route it cannot run,
#    or an unknown name, is bad input: exit 2 and exactly one line on stderr naming what the
#    CPU supports.
# 2) The SIMD route objects of this architecture (src/fast/simd/route_*.o) are compiled with their own ISA's flags.
#    A weak (inline or template) symbol a wide route exported could be picked by the linker for the
#    whole program, running AVX-512 code on an AVX2 CPU: they must export none, only their
#    route function (the baseline routes may: their code runs on every CPU of the architecture).
set -u
bin=$1 objdir=$2
fail=0
say() { echo "$@"; }
bad() { echo "NOT OK $*"; fail=1; }

arch=$(uname -m)
runs=(scalar)
if [ "$arch" = aarch64 ]; then
  runs+=(neon)  # every arm64 CPU has Advanced SIMD
  routes=(route_neon route_scalar)
else
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  if [[ $flags == *" avx2 "* && $flags == *" fma "* ]]; then runs+=(avx2); fi
  if [[ $flags == *avx512f* && $flags == *avx512cd* && $flags == *avx512bw* && $flags == *avx512dq* && $flags == *avx512vl* ]]; then
    runs+=(avx512)
  fi
  routes=(route_avx2 route_avx512 route_scalar)
fi
say "this CPU runs: ${runs[*]}"
for isa in scalar avx2 avx512 neon AVX2 sse4 ""; do
  err=$(TS_ISA=$isa "$bin" --plain 2>&1 >/dev/null); rc=$?
  expect=2
  for r in "${runs[@]}" ""; do [ "$isa" = "$r" ] && expect=0; done
  lines=$(printf '%s' "$err" | grep -c '')
  if [ "$rc" != "$expect" ]; then bad "TS_ISA='$isa': exit $rc, want $expect ($err)"; continue; fi
  if [ "$expect" = 2 ] && { [ "$lines" != 1 ] || [[ $err != *"supports"* ]]; }; then
    bad "TS_ISA='$isa': want one line naming what the CPU supports, got: $err"; continue
  fi
  say "OK     TS_ISA='$isa' -> exit $rc ${err:+($err)}"
done

for route in "${routes[@]}"; do
  obj=$objdir/$route.cpp.o
  [ -f "$obj" ] || { bad "missing $obj"; continue; }
  # weak symbols other than the personality reference every C++ object carries
  weak=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVuvw]$/' | grep -v 'DW.ref.__gxx_personality_v0')
  globals=$(nm -C --defined-only --extern-only "$obj" | awk '$2 == "T" {$1=$2=""; print}' | sed 's/^ *//')
  # The baseline routes (scalar; neon, in armv8-a's baseline) are compiled for the architecture's
  # baseline: a weak symbol they export (libc++ leaves std::string's in them) is baseline code too,
  # as safe for the linker to pick as any. Only a wider route's weak symbol could run an
  # instruction the CPU lacks.
  case $(basename "$obj") in
    route_scalar.cpp.o|route_neon.cpp.o)
      [ -n "$weak" ] && say "note   $(basename "$obj"): weak symbols of baseline code (harmless): $(echo "$weak" | wc -l)"
      weak="" ;;
  esac
  if [ -n "$weak" ]; then bad "$(basename "$obj") exports weak symbols: $weak"; continue; fi
  case $(basename "$obj") in
    route_avx2.cpp.o) want="ts::simd::route_avx2()" ;;
    route_avx512.cpp.o) want="ts::simd::route_avx512()" ;;
    route_neon.cpp.o) want="ts::simd::route_neon()" ;;
    *) want="" ;;
  esac
  if [ -n "$want" ] && [ "$globals" != "$want" ]; then bad "$(basename "$obj") exports: $globals (want only $want)"; continue; fi
  say "OK     $(basename "$obj"): no weak symbols${want:+, exports only $want}"
done
[ $fail = 0 ] && echo "isa_check: 1 passed, 0 failed" || echo "isa_check: 0 passed, 1 failed"
exit $fail
