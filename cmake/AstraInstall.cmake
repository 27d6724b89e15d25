# Install layout:
#   bin/clang-astra
#   lib/clang/<major>/include   the resource headers the tool needs to parse
#                               CUDA; CudaToolchain finds them beside the
#                               binary (../lib/clang/<major>)
#   share/clang-astra/include  the nvcc compat header (docs/nvcc-compat.md),
#                               found beside the binary the same way
#   lib/cmake/ClangAstra/       the package: find_package(ClangAstra CONFIG)
#                               and astra_optimize() (docs/cmake.md)
#   share/man/man1/clang-astra.1
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY "${ASTRA_CLANG_RESOURCE_DIR}/include"
  DESTINATION "lib/clang/${LLVM_VERSION_MAJOR}"
  PATTERN "ppc_wrappers" EXCLUDE
  PATTERN "llvm_libc_wrappers" EXCLUDE)

install(FILES "${CMAKE_SOURCE_DIR}/lib/Frontend/nvcc-compat/__astra_nvcc_compat.h"
  DESTINATION "share/clang-astra/include")

set(ASTRA_PACKAGE_DIR "lib/cmake/ClangAstra")
configure_package_config_file(
  "${CMAKE_SOURCE_DIR}/cmake/package/ClangAstraConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/package/ClangAstraConfig.cmake"
  INSTALL_DESTINATION "${ASTRA_PACKAGE_DIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x releases promise nothing across minor versions.
write_basic_package_version_file(
  "${CMAKE_BINARY_DIR}/package/ClangAstraConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${CMAKE_BINARY_DIR}/package/ClangAstraConfig.cmake"
  "${CMAKE_BINARY_DIR}/package/ClangAstraConfigVersion.cmake"
  "${CMAKE_SOURCE_DIR}/cmake/package/ClangAstraFunctions.cmake"
  DESTINATION "${ASTRA_PACKAGE_DIR}")
install(FILES "${CMAKE_SOURCE_DIR}/docs/man/clang-astra.1"
  DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
