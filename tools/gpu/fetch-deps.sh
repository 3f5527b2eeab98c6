#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with network), before a GPU session: downloads the Debian
# packages that the GPU machine's image lacks (yaml-cpp, HDF5 and what libhdf5 links, CLI11,
# nlohmann-json, zlib) into .gpu/debs, which git ignores and the device tool carries
# (`carry: [".gpu"]`). tools/gpu/build.sh unpacks them there into a prefix with dpkg -x.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.gpu/debs
mkdir -p "$dest"
exclude=$(git rev-parse --git-path info/exclude)  # a worktree's .git is a file
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >>"$exclude"
# The runtime closure of libhdf5 and libyaml-cpp, less what every Linux image has (libc,
# libstdc++, libgcc): libcurl and its TLS/Kerberos/LDAP stack are the bulk.
runtime=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
              --no-replaces --no-enhances --no-pre-depends libhdf5-103-1 libyaml-cpp0.7 |
          grep '^[a-z]' | sort -u |
          grep -vE '^(libc6|libgcc-s1|libstdc\+\+6|gcc-12-base|debconf|perl.*|dpkg|tar|libselinux1|libcrypt1|libpcre.*|libbz2-1.0|liblzma5|libmd0)$')
(cd "$dest" && apt-get download libyaml-cpp-dev libhdf5-dev libaec-dev libcli11-dev \
     nlohmann-json3-dev zlib1g-dev $runtime)
du -sh "$dest"
