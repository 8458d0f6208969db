# Cross-compiling for a Debian ARM target (scripts/cross.sh). The caller's toolchain file sets
# MAVSWITCH_TRIPLE and CMAKE_SYSTEM_PROCESSOR; MAVSWITCH_SYSROOT holds the target's -dev packages,
# unpacked from Debian's archive rather than installed: a foreign architecture's -dev package
# must match the host's version exactly to be installed beside it, and the two indexes are
# not always in step.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${MAVSWITCH_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${MAVSWITCH_TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${MAVSWITCH_TRIPLE})
# GCC notes on ARM that an ABI changed in GCC 10 for some arguments: nothing to act on here
# (everything is built by the one compiler), and noise in every cross build's log.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

if(NOT MAVSWITCH_SYSROOT)
  set(MAVSWITCH_SYSROOT "$ENV{MAVSWITCH_SYSROOT}")
endif()
if(NOT IS_DIRECTORY "${MAVSWITCH_SYSROOT}/usr/include")
  message(FATAL_ERROR "MAVSWITCH_SYSROOT ('${MAVSWITCH_SYSROOT}') holds no unpacked packages: run scripts/cross.sh")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MAVSWITCH_SYSROOT MAVSWITCH_TRIPLE)

# The compiler's own C library first (/usr/TRIPLE), then the unpacked packages; never the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${MAVSWITCH_TRIPLE} ${MAVSWITCH_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} "${MAVSWITCH_SYSROOT}/usr/lib/${MAVSWITCH_TRIPLE}/pkgconfig:${MAVSWITCH_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${MAVSWITCH_SYSROOT}")

# Headers of the unpacked packages, arch-specific ones first, as the host compiler would look.
set(_inc ${MAVSWITCH_SYSROOT}/usr/include/${MAVSWITCH_TRIPLE} ${MAVSWITCH_SYSROOT}/usr/include)
foreach(_lang C CXX)
  set(CMAKE_${_lang}_STANDARD_INCLUDE_DIRECTORIES ${_inc})
endforeach()
# Shared libraries reach theirs (libwebsockets -> libev, libuv, libcap ...) through -rpath-link at
# link time and through the run path under emulation, so no LD_LIBRARY_PATH is needed.
set(_libs ${MAVSWITCH_SYSROOT}/usr/lib/${MAVSWITCH_TRIPLE} ${MAVSWITCH_SYSROOT}/lib/${MAVSWITCH_TRIPLE})
foreach(_dir ${_libs})
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -L${_dir} -Wl,-rpath-link,${_dir}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -L${_dir} -Wl,-rpath-link,${_dir}")
endforeach()
set(CMAKE_BUILD_RPATH ${_libs})
# DT_RPATH, not DT_RUNPATH: it serves the libraries' own dependencies too (libssl for libwebsockets).
string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,--disable-new-dtags")

# Programs built here and run at build time (the dialect generator, test discovery) run under
# qemu-user; QEMU_LD_PREFIX (scripts/cross.sh) points it at the target's dynamic loader.
find_program(MAVSWITCH_QEMU qemu-${MAVSWITCH_QEMU_ARCH}-static REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${MAVSWITCH_QEMU} -L /usr/${MAVSWITCH_TRIPLE})
