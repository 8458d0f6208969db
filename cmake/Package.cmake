# cpack -G DEB (in the build directory): a Debian package of the `daemon` component: mavswitchd,
# mavswitch, the systemd unit, the status page, man pages and a sample configuration, under
# /usr, with its library dependencies found by dpkg-shlibdeps. The C++ library and headers are
# not in it (cmake --install gives them to developers); there is no -dev package.
set(CPACK_PACKAGE_NAME mavswitch)
set(CPACK_PACKAGE_VENDOR mavswitch)
set(CPACK_PACKAGE_CONTACT "mavswitch developers <developers@mavswitch.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MAVLink router: serial, UDP and TCP links, a status page and a control API")
set(CPACK_PACKAGE_DESCRIPTION
    "mavswitchd routes MAVLink between flight controllers, companion computers,
ground stations and cloud services over serial ports, UDP, TCP, WebSocket and a
NATS cluster, by the MAVLink routing rules, with signing, rate limits and
redundant links. It reads mavlink-router's configuration files as they are,
writes telemetry and flight logs, and serves a status page, Prometheus metrics
and a JSON API on 127.0.0.1:8080. The service runs as the system user
mavswitch; its configuration is /etc/mavswitch/main.conf.")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")  # procps: /bin/kill, the unit's ExecReload
set(CPACK_STRIP_FILES ON)
# The maintainer scripts (the user, the token, the unit enabled and restarted the Debian way) and
# the conffile.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL daemon config)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(CMAKE_CROSSCOMPILING)
  # A cross build (scripts/cross.sh): the target's architecture, and its library dependencies
  # named by cross.sh (cpack -D CPACK_DEBIAN_PACKAGE_DEPENDS=...) from what the binaries link,
  # since dpkg-shlibdeps reads installed packages and the target's are only unpacked.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${MAVSWITCH_DEB_ARCH})
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION net)
include(CPack)
