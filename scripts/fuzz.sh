#!/usr/bin/env bash
# Builds and runs the cargo-fuzz targets in fuzz/ (libFuzzer) for N seconds each.
#
#   scripts/fuzz.sh [--ci] [--seconds N] [--sanitizer none|address] [target...]
#
# Targets: framer envelope config rewriters (default: all). --ci runs each for 20 s (the
# whole run, build included, stays within ~4 minutes on 2 cores); without it, 60 s each.
# Exits non-zero if any target crashes, after printing the input that crashed it and how
# to reproduce and minimise it. Works on stable Rust: cargo-fuzz's nightly flags are
# enabled with RUSTC_BOOTSTRAP=1. See docs/FUZZING.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

ALL=(framer envelope config rewriters)
seconds=""
ci=0
sanitizer=none
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ci) ci=1 ;;
    --seconds) seconds="${2:?--seconds needs a number}"; shift ;;
    --sanitizer) sanitizer="${2:?--sanitizer needs none or address}"; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if [[ ! -f "fuzz_targets/$1.rs" ]]; then
        echo "fuzz.sh: no target '$1'; targets: ${ALL[*]}" >&2; exit 2
      fi
      targets+=("$1") ;;
  esac
  shift
done
[[ ${#targets[@]} -eq 0 ]] && targets=("${ALL[@]}")
[[ -z "$seconds" ]] && seconds=$(( ci ? 20 : 60 ))
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -lt 1 ]]; then
  echo "fuzz.sh: --seconds wants a whole number of seconds, got '$seconds'" >&2; exit 2
fi

export RUSTC_BOOTSTRAP=1 # cargo-fuzz passes -Z flags; this lets stable rustc take them
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo install cargo-fuzz --locked
fi
if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1; then
  echo "fuzz.sh: libFuzzer needs a C++ compiler; install g++ (apt-get install g++)" >&2; exit 1
fi

started=$SECONDS
echo "== building fuzz targets (release + debug assertions, sanitizer: $sanitizer)"
mkdir -p artifacts
build_log=artifacts/build.log
build=(cargo fuzz build --sanitizer "$sanitizer")
if [[ ${#targets[@]} -eq ${#ALL[@]} ]]; then
  "${build[@]}" >"$build_log" 2>&1 || { tail -40 "$build_log" >&2; echo "fuzz.sh: build failed (fuzz/$build_log)" >&2; exit 1; }
else
  for t in "${targets[@]}"; do
    "${build[@]}" "$t" >"$build_log" 2>&1 || { tail -40 "$build_log" >&2; echo "fuzz.sh: build of $t failed (fuzz/$build_log)" >&2; exit 1; }
  done
fi
echo "   built in $(( SECONDS - started )) s"

max_len() {
  case "$1" in
    framer) echo 16384 ;;   # lines across HEAD_KEEP/TAIL_KEEP (4 KiB)
    envelope) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

failed=()
for t in "${targets[@]}"; do
  corpus="corpus/$t"
  mkdir -p "$corpus" "artifacts/$t"
  args=(-max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048
        -print_final_stats=1)
  [[ -f "dict/$t.dict" ]] && args+=(-dict="dict/$t.dict")
  dirs=("$corpus")
  [[ -d "seeds/$t" ]] && dirs+=("seeds/$t")
  log="artifacts/$t/last-run.log"
  echo "== fuzzing $t for $seconds s (corpus fuzz/$corpus, log fuzz/$log)"
  if cargo fuzz run --sanitizer "$sanitizer" "$t" "${dirs[@]}" -- "${args[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
    echo "   ok: ${execs:-?} runs, ${rate:-?} runs/s, ${cov:-no coverage line}"
  else
    failed+=("$t")
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    artifact=${artifact#"$PWD/"}
    echo "!! $t FAILED. The panic:" >&2
    grep -m1 -A15 -E "panicked at|ERROR: libFuzzer|==[0-9]+== ?ERROR" "$log" | sed 's/^/   /' >&2 || tail -30 "$log" >&2
    if [[ -n "$artifact" ]]; then
      echo "   crashing input: fuzz/$artifact" >&2
      echo "   show it:       (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz fmt --sanitizer $sanitizer $t $artifact)" >&2
      echo "   reproduce:     (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer $sanitizer $t $artifact)" >&2
      echo "   minimise:      (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz tmin --sanitizer $sanitizer $t $artifact)" >&2
      echo "   then add the minimised case to src-tauri/clients/tests/integration/fuzz_regressions.rs" >&2
    fi
    echo "   full log: fuzz/$log" >&2
  fi
done

echo "== fuzzing took $(( SECONDS - started )) s in all"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
