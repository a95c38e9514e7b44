#!/usr/bin/env bash
# One prepared run on a machine with an NVIDIA GPU (docs/hil.md): gputwin from this checkout, the NV driver's
# hardware tests, the conformance recordings, and their replay on the emulator; everything lands in $OUT.
#
#   OUT=/some/dir bash tools/hil_device_run.sh                # from the repository root
#   WHEELS=.hil-wheels OUT=... bash tools/hil_device_run.sh   # offline machine: missing packages from wheels
#   PYTHON=/path/to/python3 ...                               # default: python3
#
# gputwin runs from the checkout (PYTHONPATH), on the machine's own Python and packages: device machines are
# often offline images that already hold numpy, llvmlite, ml-dtypes, msgpack, pytest, hypothesis, nvJitLink and
# cuda-bindings. Whatever of gputwin[test,nv,cuda]'s needs is missing is installed from $WHEELS (pip download
# them here) into a scratch directory, or from the package index when the machine is online.
#
# $OUT receives: env.txt (GPU, driver, Python, imports), install.log, pytest.log + pytest.xml, record.log
# (and record-cuda.log when gputwin's RM driver cannot open the GPU and the CUDA driver API records instead),
# hw-<arch>.tar.gz (the recordings: unpack into fixtures/hw/), replay.log, status.txt (each step's exit
# status and seconds). No step stops the script.
set -u
OUT=${OUT:?set OUT to the directory for results}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
VENDOR=${VENDOR:-/tmp/gputwin-hil-site}
export PYTHONPATH="$ROOT:$VENDOR${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
step() { local name=$1; shift; local t0=$SECONDS; "$@"; local rc=$?; echo "$name rc=$rc $((SECONDS - t0))s" >>"$OUT/status.txt"; return $rc; }

missing() {   # pip names of the modules this run needs that do not import
  for pair in numpy:numpy llvmlite:llvmlite ml_dtypes:ml-dtypes msgpack:msgpack pytest:pytest \
              hypothesis:hypothesis nvidia.cu13:nvidia-nvjitlink cuda.bindings:cuda-bindings; do
    "$PY" -c "import ${pair%%:*}" 2>/dev/null || echo "${pair#*:}"
  done
}
install() {
  local need; need=$(missing)
  [ -z "$need" ] && { echo "all present"; return 0; }
  echo "installing: $need"
  # shellcheck disable=SC2086
  "$PY" -m pip install -q --target "$VENDOR" ${WHEELS:+--no-index --find-links "$WHEELS"} $need
}
step install install >"$OUT/install.log" 2>&1
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
  cat /proc/driver/nvidia/version 2>&1; ls -l /dev/nvidia* 2>&1; "$PY" --version
  echo "missing after install: $(missing | tr '\n' ' ')"
  "$PY" -c "from gputwin.drivers.nv import sass; print('PTX compiler:', sass.tool())" 2>&1; } >"$OUT/env.txt" 2>&1

# 1. the NV driver on the GPU (the hw-marked tests; they say why when the GPU cannot be opened). The plugin
#    (--dev) is named unless an installed gputwin already registers it as an entry point.
PLUGIN="-p gputwin.pytest_plugin"
"$PY" -c "import importlib.metadata as m, sys; sys.exit(not any(e.name == 'gputwin' for e in m.entry_points(group='pytest11')))" \
  2>/dev/null && PLUGIN=""
# shellcheck disable=SC2086
step pytest timeout 240 "$PY" -m pytest $PLUGIN --dev NV -m hw -q tests/drivers/nv \
  --junitxml="$OUT/pytest.xml" >"$OUT/pytest.log" 2>&1

# 2. recordings through gputwin's own driver; if it cannot open the GPU, through the CUDA driver API
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ' | sed 's/^/sm_/')
ARCH=${ARCH:-sm_unknown}
REC=/tmp/gputwin-hil-rec
rm -rf "$REC"; mkdir -p "$REC"
if step record timeout 300 "$PY" -m gputwin.cli hil record --dev NV --out "$REC/$ARCH" >"$OUT/record.log" 2>&1; then
  tar -C "$REC" -czf "$OUT/hw-$ARCH.tar.gz" "$ARCH"
elif step record-cuda timeout 300 "$PY" -m gputwin.cli hil record --dev NV --backend cuda --out "$REC/$ARCH" \
    >"$OUT/record-cuda.log" 2>&1; then
  tar -C "$REC" -czf "$OUT/hw-$ARCH.tar.gz" "$ARCH"
fi

# 3. what the emulator makes of them (the comparison tests/hil makes once they are committed)
step replay "$PY" -m gputwin.cli hil replay "$REC" >"$OUT/replay.log" 2>&1
cat "$OUT/status.txt"
tail -3 "$OUT/replay.log"
