#!/usr/bin/env bash
# Cross-builds mavswitch for ARM with Debian's cross compilers and runs its tests under
# qemu-user: the unit tests whole (the lock-free structures' stress variants among them) and
# the end-to-end tests named by MAVSWITCH_CROSS_E2E (a filter; CI's default is below).
#   bash scripts/cross.sh arm64|armhf [build|test|package]    (default: all three)
# The target's libraries are Debian's own -dev packages for that architecture, unpacked into
# build-ARCH/sysroot (see cmake/cross/linux.cmake for why they are not installed).
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:?usage: scripts/cross.sh arm64|armhf [build|test|package]}"
what="${2:-all}"
case "$arch" in
  arm64) triple=aarch64-linux-gnu; qemu=aarch64 ;;
  armhf) triple=arm-linux-gnueabihf; qemu=arm ;;
  *) echo "cross.sh: unknown architecture '$arch' (arm64 or armhf)" >&2; exit 2 ;;
esac
out="build-$arch"
sysroot="$PWD/$out/sysroot"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# The cross compiler and the emulator.
bash scripts/setup.sh
tools=("g++-$triple" qemu-user-static)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cross.sh: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The target's -dev packages and everything they need, unpacked once. The compiler's own C and
# C++ runtime (/usr/TRIPLE) is left out: it must match the compiler.
dev=(libexpat1-dev libfmt-dev libssl-dev libwebsockets-dev libcurl4-openssl-dev libnats-dev libre2-dev libgtest-dev libgmock-dev)
stamp="$sysroot/.packages"
if [ ! -f "$stamp" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    $sudo dpkg --add-architecture "$arch"
  fi
  apt-cache show "libfmt-dev:$arch" >/dev/null 2>&1 || $sudo apt-get update -qq || true
  closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
              --no-enhances "${dev[@]/%/:$arch}" | grep -E "^[a-z0-9].*:$arch\$" |
            grep -vE "^(libc6|libc6-dev|libc-dev-bin|linux-libc-dev|libgcc-s1|libstdc\+\+6|gcc-12-base|libcrypt-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto):" | sort -u)
  debs="$PWD/$out/debs"
  rm -rf "$debs" "$sysroot"
  mkdir -p "$debs" "$sysroot"
  # Header-only libraries are the same for every architecture.
  (cd "$debs" && apt-get download -qq $closure libcli11-dev nlohmann-json3-dev)
  # Each shared library's package and version, for the .deb's Depends (package step below).
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$sysroot"
    pkg=$(dpkg-deb -f "$deb" Package)
    version=$(dpkg-deb -f "$deb" Version | sed -E 's/^[0-9]+://; s/-[^-]*$//')
    dpkg-deb -c "$deb" | awk '{print $6}' | grep -oE '[^/]+\.so\.[0-9.]+$' | sed "s|\$| $pkg $version|" >> "$sysroot/.sonames" || true
  done
  # Absolute links in -dev packages (libfoo.so -> /lib/...) would point at the host's files.
  find "$sysroot" -type l -lname '/*' | while read -r link; do
    ln -sf "$sysroot$(readlink "$link")" "$link"
  done
  printf '%s\n' $closure > "$stamp"
  rm -rf "$debs"
fi

# Running the target's programs: test discovery and the tests themselves start the daemon and
# the tool as child processes, so the kernel must hand ARM binaries to qemu (binfmt_misc).
# Debian's qemu-user-static ships the registrations; they need root and the binfmt_misc mount.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-$qemu" ]; then
  [ -e "$binfmt/register" ] || $sudo mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  if [ -e "$binfmt/register" ] && [ -f "/usr/lib/binfmt.d/qemu-$qemu.conf" ]; then
    $sudo sh -c "cat /usr/lib/binfmt.d/qemu-$qemu.conf > $binfmt/register" || true
  fi
fi
export QEMU_LD_PREFIX="/usr/$triple"
export MAVSWITCH_SYSROOT="$sysroot"

if [ "$what" != test ]; then
  start=$(date +%s)
  # As scripts/build.sh: an existing build keeps its warning flags unless MAVSWITCH_WERROR is set.
  flags=()
  if [ -n "${MAVSWITCH_WERROR:-}" ] || [ ! -f "$out/CMakeCache.txt" ]; then
    flags+=("-DMAVSWITCH_WERROR=${MAVSWITCH_WERROR:-OFF}")
  fi
  # -O2, as Debian builds its packages.
  cmake -S . -B "$out" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/cross/$arch.cmake" -DMAVSWITCH_SYSROOT="$sysroot" \
        "${flags[@]}" -DCMAKE_UNITY_BUILD="${MAVSWITCH_UNITY:-ON}" -DMAVSWITCH_BUILD_BENCH=OFF -DMAVSWITCH_BUILD_EXAMPLES=OFF \
        -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
  cmake --build "$out" --target mavswitchd mavswitch_cli mavswitch_library mavswitch_package_files mavswitch_unit_tests \
                                mavswitch_lockfree_tests \
                                mavswitch_e2e_tests
  echo "cross.sh: $arch built in $(( $(date +%s) - start )) s"
fi
[ "$what" = build ] && exit 0

# The package: Debian's name for each library the binaries link, at least the version built
# against; the C and C++ runtimes at the cross compiler's versions.
package() {
  local needed depends=("adduser" "procps") lib line
  needed=$(for b in "$out/src/daemon/mavswitchd" "$out/src/tools/mavswitch"; do
             LC_ALL=C readelf -d "$b" | sed -nE 's/.*Shared library: \[(.*)\]/\1/p'; done | sort -u)
  for lib in $needed; do
    case "$lib" in
      libc.so.*|libm.so.*|ld-linux*) line="libc6 (>= 2.36)" ;;
      libstdc++.so.*) line="libstdc++6 (>= 12)" ;;
      libgcc_s.so.*) line="libgcc-s1 (>= 3.0)" ;;
      *) line=$(awk -v l="$lib" '$1 == l {print $2 " (>= " $3 ")"; exit}' "$sysroot/.sonames") ;;
    esac
    [ -n "$line" ] || { echo "cross.sh: no package is known to hold $lib" >&2; exit 1; }
    depends+=("$line")
  done
  local list
  list=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')
  (cd "$out" && cpack -G DEB -D CPACK_DEBIAN_PACKAGE_DEPENDS="$list" >/dev/null)
  local deb
  deb=$(ls "$out"/mavswitch_*_"$arch".deb)
  echo "cross.sh: $deb: $(dpkg-deb -f "$deb" Architecture), Depends: $(dpkg-deb -f "$deb" Depends)"
  if command -v lintian >/dev/null; then
    lintian --tag-display-limit 0 "$deb" >"$out/lintian.txt" 2>&1 || true
    cat "$out/lintian.txt"
    if grep -q "^E:" "$out/lintian.txt"; then echo "cross.sh: lintian found errors in $deb" >&2; exit 1; fi
    echo "cross.sh: lintian: $(grep -c "^E:" "$out/lintian.txt" || true) errors, $(grep -c "^W:" "$out/lintian.txt" || true) warnings"
  fi
}
if [ "$what" = package ] || [ "$what" = all ]; then package; fi
[ "$what" = package ] && exit 0

if [ ! -e "$binfmt/qemu-$qemu" ]; then
  echo "cross.sh: SKIPPED running the $arch tests: binfmt_misc has no qemu-$qemu entry (needs root)" >&2
  exit 0
fi
start=$(date +%s)
echo "cross.sh: $(LC_ALL=C readelf -h "$out/src/daemon/mavswitchd" | sed -n "s/.*Machine: *//p") binaries under $(qemu-$qemu-static --version | head -1)"
ctest --test-dir "$out" -L unit --output-on-failure --timeout 600 -j2
# End-to-end under emulation: the router against real sockets and pseudo-terminals, every link
# kind but the fabric (its cluster's timing is the native pass's), workers, the window, the
# daemon's life. MAVSWITCH_CROSS_E2E=. runs all; left out then are what qemu-user cannot show: the
# kernel's drop count (qemu passes no SO_RXQ_OVFL), RSS bounds (qemu's own memory is counted).
e2e="${MAVSWITCH_CROSS_E2E:-^(UdpServer|UdpClient|TcpServer|TcpClient|Serial|DaemonTest|Workers|Http|Backpressure|Concurrency|Api|RedundantLinks)[.]}"
ctest --test-dir "$out" -L e2e -R "$e2e" -E 'TheKernelsDropsAtTheRoutersSocketAreCounted|HugeMessageIsCutOff' \
      --output-on-failure --timeout 300 -j2
echo "cross.sh: $arch tests ran in $(( $(date +%s) - start )) s"
