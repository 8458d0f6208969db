// Whether this translation unit is built with a sanitizer: GCC says so by macros, clang by
// __has_feature. Each of these is 0 or 1.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define MAVSWITCH_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAVSWITCH_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef MAVSWITCH_ADDRESS_SANITIZER
#define MAVSWITCH_ADDRESS_SANITIZER 0
#endif

#if defined(__SANITIZE_THREAD__)
#define MAVSWITCH_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MAVSWITCH_THREAD_SANITIZER 1
#endif
#endif
#ifndef MAVSWITCH_THREAD_SANITIZER
#define MAVSWITCH_THREAD_SANITIZER 0
#endif

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define MAVSWITCH_MEMORY_SANITIZER 1
#endif
#endif
#ifndef MAVSWITCH_MEMORY_SANITIZER
#define MAVSWITCH_MEMORY_SANITIZER 0
#endif

#define MAVSWITCH_SANITIZED (MAVSWITCH_ADDRESS_SANITIZER || MAVSWITCH_THREAD_SANITIZER || MAVSWITCH_MEMORY_SANITIZER)
