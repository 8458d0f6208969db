# cmake --install: the programs, the library (static archives + headers + generated messages),
# a CMake package (find_package(mavswitch) -> mavswitch::mavswitch), a pkg-config file, the
# systemd unit, the status page, man pages and a sample configuration. The `daemon` component
# (programs, unit, page, man pages, sample) is what the Debian package holds (Package.cmake).
include(CMakePackageConfigHelpers)

install(TARGETS mavswitchd mavswitch_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT daemon)
# The unit is written at install time, so that it names the program where this install puts it
# (`cmake --install build --prefix X` decides that, not the configure step), and it goes under
# that prefix too (DESTDIR, for packagers, is added by file(INSTALL) as for every other file).
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/packaging/mavswitchd.service.in\" _unit)
  string(REPLACE \"@BINDIR@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\" _unit \"\${_unit}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/packaging/mavswitchd.service\" \"\${_unit}\")
  file(INSTALL \"${PROJECT_BINARY_DIR}/packaging/mavswitchd.service\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
" COMPONENT daemon)

set(_libraries mavswitch mavswitch_library mavswitch_router mavswitch_transport mavswitch_routing
    mavswitch_messages mavswitch_dialect mavswitch_protocol mavswitch_base mavswitch_warnings)
install(TARGETS ${_libraries} EXPORT mavswitchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mavswitch)
install(DIRECTORY src/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mavswitch
        FILES_MATCHING PATTERN "*.hpp"
        PATTERN "daemon" EXCLUDE PATTERN "tools" EXCLUDE PATTERN "codegen" EXCLUDE)
install(DIRECTORY ${MAVSWITCH_GENERATED_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mavswitch)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mavswitch)
install(EXPORT mavswitchTargets NAMESPACE mavswitch:: DESTINATION ${_cmake_dir})
configure_package_config_file(cmake/mavswitchConfig.cmake.in ${PROJECT_BINARY_DIR}/mavswitchConfig.cmake
                              INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mavswitchConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mavswitchConfig.cmake ${PROJECT_BINARY_DIR}/mavswitchConfigVersion.cmake
        DESTINATION ${_cmake_dir})

configure_file(cmake/mavswitch.pc.in ${PROJECT_BINARY_DIR}/mavswitch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mavswitch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Man pages gzipped (-n: no name or time in the header, the same bytes each build), as Debian
# installs them.
set(_man_pages)
foreach(_page mavswitchd.1 mavswitch.1)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/${_page}.gz
                     COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/packaging/man/${_page} > ${PROJECT_BINARY_DIR}/packaging/${_page}.gz
                     DEPENDS ${PROJECT_SOURCE_DIR}/packaging/man/${_page} VERBATIM)
  list(APPEND _man_pages ${PROJECT_BINARY_DIR}/packaging/${_page}.gz)
endforeach()
# Debian's changelog of a native package: one entry for this version.
string(TIMESTAMP _changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${PROJECT_BINARY_DIR}/packaging/changelog
     "mavswitch (${PROJECT_VERSION}) unstable; urgency=medium\n\n  * mavswitch ${PROJECT_VERSION}; its history is in the "
     "project's repository.\n\n -- mavswitch developers <developers@mavswitch.invalid>  ${_changelog_date}\n")
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/changelog.gz
                   COMMAND gzip -9n -c ${PROJECT_BINARY_DIR}/packaging/changelog > ${PROJECT_BINARY_DIR}/packaging/changelog.gz
                   DEPENDS ${PROJECT_BINARY_DIR}/packaging/changelog VERBATIM)
add_custom_target(mavswitch_package_files ALL DEPENDS ${_man_pages} ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT daemon)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz packaging/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT daemon)
install(FILES packaging/main.conf DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT daemon)
# The package's own /etc/mavswitch/main.conf (a conffile): the sample, with the TokenFile its
# postinst makes. Only the package installs it (a cmake --install into a prefix leaves /etc alone).
file(READ packaging/main.conf _conf)
string(REPLACE "#TokenFile = /etc/mavswitch/http.token" "TokenFile = /etc/mavswitch/http.token" _conf "${_conf}")
string(REPLACE "# it nothing can be changed over HTTP." "# it nothing can be changed over HTTP. The package made this one (mode 600, its user's)." _conf "${_conf}")
file(WRITE ${PROJECT_BINARY_DIR}/packaging/etc/main.conf "${_conf}")
install(FILES ${PROJECT_BINARY_DIR}/packaging/etc/main.conf DESTINATION /etc/mavswitch COMPONENT config EXCLUDE_FROM_ALL)
