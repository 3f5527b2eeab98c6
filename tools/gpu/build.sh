#!/usr/bin/env bash
# Run ON THE GPU MACHINE (its python3 holds a CUDA PyTorch; no network): builds `lengen` and
# bench_step against that PyTorch's LibTorch, with the Debian packages that
# tools/gpu/fetch-deps.sh put in .gpu/debs unpacked into a prefix. Prints the build folder.
#   tools/gpu/build.sh [BUILD_DIR=build-gpu]
# Environment: PYTHON (default python3), LENGEN_GPU_PREFIX (default /tmp/lengen-deps),
# TORCH_CUDA_ARCH_LIST (default 9.0: H100/H200).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
prefix=${LENGEN_GPU_PREFIX:-/tmp/lengen-deps}
python=${PYTHON:-python3}
debs=$root/.gpu/debs
ls "$debs"/*.deb >/dev/null 2>&1 || { echo "build.sh: no packages in $debs (run tools/gpu/fetch-deps.sh here first)" >&2; exit 2; }
mkdir -p "$prefix"
for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
lib=$prefix/usr/lib/x86_64-linux-gnu
# zlib1g unpacks to /lib (its -dev symlink points there by absolute path): name the library.
zlib=$(ls "$prefix"/lib/x86_64-linux-gnu/libz.so.1 "$lib"/libz.so.1 2>/dev/null | head -1 || true)
torch_root=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
torch_cmake=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
echo "build.sh: torch $("$python" -c 'import torch; print(torch.__version__, torch.version.cuda)') at $torch_root" >&2
gen=(-G Ninja); command -v ninja >/dev/null || gen=()
# HDF5 without its h5cc wrapper (FindHDF5 then takes these cache entries); libhdf5's own
# needs (libcurl, libcrypto, libsz) resolve in the prefix at link time and at run time.
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DLENGEN_BUILD_GUI=OFF -DBUILD_TESTING=OFF -DLENGEN_BUILD_BENCH=ON \
    -DCMAKE_PREFIX_PATH="$torch_root;$torch_cmake;$prefix/usr;$lib/cmake" \
    -DHDF5_C_COMPILER_EXECUTABLE=/nonexistent/h5cc -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON \
    -DHDF5_C_INCLUDE_DIR="$prefix/usr/include/hdf5/serial" \
    -DHDF5_hdf5_LIBRARY_RELEASE="$lib/libhdf5_serial.so" \
    -DZLIB_INCLUDE_DIR="$prefix/usr/include" -DZLIB_LIBRARY="$zlib" \
    -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" \
    -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$lib:$prefix/lib/x86_64-linux-gnu -Wl,-rpath,$lib:$prefix/lib/x86_64-linux-gnu" >&2
cmake --build "$build" --target lengen bench_step bench_scan bench_kernels -j "$(nproc)" >&2
echo "$build"
