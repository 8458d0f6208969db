# 64-bit ARM: Raspberry Pi 3/4/5 on a 64-bit OS, Jetson, VOXL.
set(MAVSWITCH_TRIPLE aarch64-linux-gnu)
set(MAVSWITCH_QEMU_ARCH aarch64)
set(MAVSWITCH_DEB_ARCH arm64)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux.cmake)
