#!/usr/bin/env bash
# One prepared run on a machine with an NVIDIA GPU (docs/hil.md): install gputwin[test,nv] in a fresh venv,
# run the NV driver tests on the GPU, record the conformance programs, and leave everything under $OUT.
#
#   OUT=/some/dir bash tools/hil_device_run.sh              # from the repository root
#   WHEELS=.hil-wheels OUT=... bash tools/hil_device_run.sh  # offline: install from a carried wheel directory
#
# $OUT receives: env.txt (GPU, driver, python), pytest.log + pytest.xml, record.log, hw-<arch>.tar.gz (the
# recordings, to unpack into fixtures/hw/<arch>/), and, when --dev NV cannot open the GPU, record-cuda.log with
# the CUDA-driver-API recordings in hw-cuda-<arch>.tar.gz. The script never stops at the first failure: each
# step's exit status is in status.txt.
set -u
OUT=${OUT:?set OUT to the directory for results}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV=${VENV:-/tmp/gputwin-hil-venv}
step() { local name=$1; shift; local t0=$SECONDS; "$@"; local rc=$?; echo "$name rc=$rc $((SECONDS - t0))s" >>"$OUT/status.txt"; return $rc; }

{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
  cat /proc/driver/nvidia/version 2>&1; ls -l /dev/nvidia* 2>&1; python3 --version; } >"$OUT/env.txt" 2>&1

install() {
  python3 -m venv --system-site-packages "$VENV" || return 1
  if [ -n "${WHEELS:-}" ]; then
    "$VENV/bin/pip" install -q --no-index --find-links "$WHEELS" -e ".[test,nv]"
  else
    "$VENV/bin/pip" install -q -e ".[test,nv]"
  fi
}
step install install >"$OUT/install.log" 2>&1 || { echo "install failed: see install.log"; exit 1; }
"$VENV/bin/pip" list >>"$OUT/install.log" 2>&1

# 1. the NV driver on the GPU (hw tests) and the NV driver suite itself
step pytest timeout 240 "$VENV/bin/python" -m pytest --dev NV -m hw -q tests/drivers/nv \
  --junitxml="$OUT/pytest.xml" >"$OUT/pytest.log" 2>&1

# 2. recordings through gputwin's own driver; if it cannot open the GPU, through the CUDA driver API
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' | sed 's/^/sm_/')
ARCH=${ARCH:-sm_unknown}
REC=/tmp/gputwin-hil-rec
rm -rf "$REC"; mkdir -p "$REC"
if step record timeout 300 "$VENV/bin/gputwin" hil record --dev NV --out "$REC/$ARCH" >"$OUT/record.log" 2>&1; then
  tar -C "$REC" -czf "$OUT/hw-$ARCH.tar.gz" "$ARCH"
else
  step pip-cuda "$VENV/bin/pip" install -q ${WHEELS:+--no-index --find-links "$WHEELS"} "cuda-bindings" >>"$OUT/install.log" 2>&1
  step record-cuda timeout 300 "$VENV/bin/gputwin" hil record --dev NV --backend cuda --out "$REC/$ARCH" \
    >"$OUT/record-cuda.log" 2>&1 && tar -C "$REC" -czf "$OUT/hw-cuda-$ARCH.tar.gz" "$ARCH"
fi

# 3. what the emulator makes of them (the same comparison the tests do here)
step replay "$VENV/bin/gputwin" hil replay "$REC" >"$OUT/replay.log" 2>&1
cat "$OUT/status.txt"
tail -3 "$OUT/replay.log"
