# Install rules for the weft package (included by the top-level CMakeLists.txt when
# WEFT_INSTALL is ON). The package is weft's libraries built, its headers and the CMake
# files, so a find_package(weft) project compiles only its own files:
#
#   <prefix>/include/weft/**                      the headers
#   <prefix>/lib/libweft_{core,llvm,topi,graph}.a  weft::weft (.so with WEFT_SHARED_LIBS)
#   <prefix>/lib/libweft_onnx.a                    weft::onnx, where the importer was built
#   <prefix>/bin/weftc                             the command-line tool, where it was built
#   <prefix>/share/weft/cmake/weftConfig.cmake     find_package(weft CONFIG) reads this,
#                             weftConfigVersion.cmake, weftTargets*.cmake (the targets)
#
# The config finds LLVM 19 and Threads (and protobuf for weft::onnx): libLLVM and
# libprotobuf are linked by the user's program, their headers never read by it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_DATADIR}/weft/cmake)

install(DIRECTORY ${WEFT_INCLUDE_DIR}/weft
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.inc" PATTERN "*.def")

set(_weft_installed_targets weft_core weft_llvm weft_topi weft_graph weft)
set(WEFT_PACKAGE_HAS_ONNX OFF)
if(TARGET weft_onnx)
  list(APPEND _weft_installed_targets weft_onnx)
  set(WEFT_PACKAGE_HAS_ONNX ON)
endif()
install(TARGETS ${_weft_installed_targets} EXPORT weftTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${WEFT_INSTALL_CMAKEDIR})
if(TARGET weftc)
  install(TARGETS weftc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/weftConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
          ${CMAKE_CURRENT_BINARY_DIR}/weftConfig.cmake
          ${CMAKE_CURRENT_BINARY_DIR}/weftConfigVersion.cmake
        DESTINATION ${WEFT_INSTALL_CMAKEDIR})
