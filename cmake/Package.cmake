# cpack -G DEB (in the build directory): a Debian package of the `daemon` component: mavswitchd,
# mavswitch, the systemd unit, the status page, man pages and a sample configuration, under
# /usr, with its library dependencies found by dpkg-shlibdeps. The C++ library and headers are
# not in it (cmake --install gives them to developers); there is no -dev package.
set(CPACK_PACKAGE_NAME mavswitch)
set(CPACK_PACKAGE_VENDOR mavswitch)
set(CPACK_PACKAGE_CONTACT "mavswitch developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MAVLink router: serial, UDP and TCP links, a status page and a control API")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL daemon)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
include(CPack)
