#!/usr/bin/env bash
# The Python package on the GPU machine (no network): build it with the CUDA kernels, run every Python
# test (the GPU ones included: kernel vs reference, stream order, CUDA-graph capture and replay) and
# the performance measurement (python/bench/perf.py: kparity.check and kparity.kernel host costs).
# KPARITY_PYTEST_ARGS: extra pytest arguments (e.g. "-n 8" with pytest-xdist; not PYTEST_ADDOPTS, which
# would reach the pytest runs the tests start themselves). Results under $OUT (default ./gpu-python-out): pytest.log, python_perf_cuda.md, python_perf_cpu.md,
# build.log. Exit status: pytest's, or 1 when the build failed. KPARITY_PY_BUILD_ONLY=1 stops after the build.
#
# Build tools: the carried wheels in .deps/wheels (scripts/fetch-wheels.sh, run where PyPI is
# reachable) when present, else the image's nanobind and scikit-build-core. The extension links the
# libraries of ${BUILD:-build-suite} when that folder holds a CUDA build (scripts/gpu-suite.sh build),
# else `pip install .` compiles everything with the kernels (KPARITY_CUDA=ON, all cores).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-python-out}
BUILD=${BUILD:-build-suite}
PY=${KPARITY_PYTHON:-python3}
SITE=${KPARITY_SITE:-/tmp/kparity-site}
mkdir -p "$OUT" "$SITE"
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
# The lent H200's image sets CXX=/opt/gcc/bin/g++ (CC, CUDAHOSTCXX likewise): Ubuntu's GCC 13.3 behind a
# wrapper whose library path holds libstdc++.a but no libstdc++.so (g++ -print-file-name=libstdc++.so
# finds nothing there), so everything it links carries a private static libstdc++. That is what put
# std::locale's internals into _kparity.so (issue 23 defect 1); the extension's version script now
# hides them, but kparity-fuzz-host, an executable, would still export the ones libfmt.so references.
# Build with the system compiler, which links the shared libstdc++.so.6 the rest of the process uses.
if [ -z "${KPARITY_KEEP_CXX:-}" ] && command -v /usr/bin/g++ > /dev/null; then
  export CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++
fi
"$PY" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, "cuda devices:", torch.cuda.device_count())'

tools=/tmp/kparity-build-tools
if compgen -G ".deps/wheels/*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$tools" .deps/wheels/*.whl || exit 1
  export PYTHONPATH=$tools${PYTHONPATH:+:$PYTHONPATH}
fi
settings=()
# The carried Debian libraries (libfmt) the kparity libraries were linked against, before the image's.
[ -d .deps/root/usr/lib/x86_64-linux-gnu ] && export LD_LIBRARY_PATH=$ROOT/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The kparity libraries were built against the carried Debian headers (gpu-suite.sh unpacks .deps/*.deb
# there); the extension must see the same nlohmann_json, whose ABI tag is part of kparity's symbols.
[ -d .deps/root/usr ] && settings+=(--config-settings=cmake.define.CMAKE_PREFIX_PATH="$ROOT/.deps/root/usr")
if [ -f "$BUILD/kparity-config.cmake" ] && [ -f "$BUILD/kernels/libkparity_kernels.a" ]; then
  mode="reuse of $BUILD"
  settings+=(--config-settings=cmake.source-dir=python "--config-settings=build-dir=build-python/reuse-{wheel_tag}"
             --config-settings=cmake.define.kparity_DIR="$ROOT/$BUILD")
  [ -x "$BUILD/cli/kparity" ] && export KPARITY_CLI="$ROOT/$BUILD/cli/kparity"
else
  mode="full build"
  settings+=(--config-settings=cmake.define.KPARITY_CUDA=ON)
fi
echo "kparity: building the Python package ($mode)"
if ! "$PY" -m pip install --no-build-isolation --no-deps --no-index --upgrade --target "$SITE" "${settings[@]}" . \
    > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  exit 1
fi
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c 'import kparity; assert kparity.has_kernels, "built without kernels"; print("kparity", kparity.__version__, "kernels:", kparity.has_kernels)' || exit 1
# KPARITY_PY_BUILD_ONLY=1: the package alone, for a call that runs something else with it (gpu-wave.sh pybuild).
[ -n "${KPARITY_PY_BUILD_ONLY:-}" ] && exit 0

cd "$ROOT/build-python" 2>/dev/null || { mkdir -p "$ROOT/build-python"; cd "$ROOT/build-python"; }
PYTHONUNBUFFERED=1 "$PY" -X faulthandler -m pytest -q -rs -p no:cacheprovider ${KPARITY_PYTEST_ARGS:-} "$ROOT/tests/python" 2>&1 | tee "$OUT/pytest.log"
status=${PIPESTATUS[0]}
# A crash (a signal: status > 128) gets a native backtrace where gdb exists: the Python frames above
# do not say which C++ frame faulted.
if [ "$status" -gt 128 ] && command -v gdb > /dev/null; then
  gdb -batch -ex run -ex bt --args "$PY" -m pytest -q -x -p no:cacheprovider "$ROOT/tests/python" > "$OUT/crash-backtrace.log" 2>&1
  tail -40 "$OUT/crash-backtrace.log"
fi
"$PY" "$ROOT/python/bench/perf.py" --device cuda --out "$OUT/python_perf_cuda.md" || status=1
"$PY" "$ROOT/python/bench/perf.py" --device cpu --out "$OUT/python_perf_cpu.md" || status=1
exit $status
