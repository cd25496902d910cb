# Install rules for the weft package (included by the top-level CMakeLists.txt when
# WEFT_INSTALL is ON). weft is header-only, so nothing built is installed: the package is
# the headers, the one-line implementation translation units and the CMake files.
#
#   <prefix>/include/weft/**                    the headers
#   <prefix>/share/weft/src/*.cpp               compiled once, in the user's build
#   <prefix>/share/weft/src/rpc/weft_rpc.proto  weft::rpc's services (built where gRPC is)
#   <prefix>/share/weft/cmake/weftConfig.cmake  find_package(weft CONFIG) reads this,
#                             weftConfigVersion.cmake, weft_targets.cmake
#
# The config finds LLVM 19 and Threads, points WEFT_INCLUDE_DIR / WEFT_SOURCE_DIR at the
# installed files and includes the same weft_targets.cmake the source tree uses, so the
# user's project gets the targets weft_core, weft_llvm and weft::weft.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(WEFT_INSTALL_SRCDIR ${CMAKE_INSTALL_DATADIR}/weft/src)
set(WEFT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_DATADIR}/weft/cmake)

install(DIRECTORY ${WEFT_INCLUDE_DIR}/weft
        DESTINATION ${WEFT_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.inc" PATTERN "*.def")
install(DIRECTORY ${WEFT_SOURCE_DIR}/
        DESTINATION ${WEFT_INSTALL_SRCDIR}
        FILES_MATCHING PATTERN "*.cpp" PATTERN "*.proto")

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/weftConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR}
  PATH_VARS WEFT_INSTALL_INCLUDEDIR WEFT_INSTALL_SRCDIR)
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion
  ARCH_INDEPENDENT)
install(FILES
          ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
          ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
          ${CMAKE_CURRENT_LIST_DIR}/weft_targets.cmake
        DESTINATION ${WEFT_INSTALL_CMAKEDIR})
