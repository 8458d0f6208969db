# 32-bit ARM with hardware floating point: Raspberry Pi OS and BlueOS on a Pi 3/4/CM4.
set(MAVSWITCH_TRIPLE arm-linux-gnueabihf)
set(MAVSWITCH_QEMU_ARCH arm)
set(MAVSWITCH_DEB_ARCH armhf)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
include(${CMAKE_CURRENT_LIST_DIR}/linux.cmake)
