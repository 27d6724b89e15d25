# How clang-astra links Clang and LLVM.
#
# Development builds link the shared libclang-cpp and libLLVM: links take a
# second and the binaries stay small. Portable builds (ASTRA_PORTABLE=ON) link
# every Clang and LLVM static archive instead, so the binary runs on a machine
# with no LLVM at all (the GPU machine). The two are never mixed: Debian's
# exported static clang targets name the LLVM dylib in their link interface,
# which would register every cl::opt twice, so the portable link names the
# archives by path and bypasses the exported targets.

set(ASTRA_CLANG_RESOURCE_DIR
  "${LLVM_LIBRARY_DIR}/clang/${LLVM_VERSION_MAJOR}"
  CACHE PATH "clang resource directory (builtin and CUDA wrapper headers)")

add_library(astra_llvm INTERFACE)
if(NOT ASTRA_PORTABLE)
  target_link_libraries(astra_llvm INTERFACE clang-cpp LLVM)
else()
  file(GLOB ASTRA_CLANG_ARCHIVES "${LLVM_LIBRARY_DIR}/libclang[A-Z]*.a")
  execute_process(
    COMMAND ${LLVM_TOOLS_BINARY_DIR}/llvm-config --link-static --libfiles all
    OUTPUT_VARIABLE ASTRA_LLVM_ARCHIVES OUTPUT_STRIP_TRAILING_WHITESPACE
    COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(ASTRA_LLVM_ARCHIVES UNIX_COMMAND "${ASTRA_LLVM_ARCHIVES}")
  # libclangCodeGen refers to Polly's registration hooks.
  set(ASTRA_POLLY_ARCHIVES
    "${LLVM_LIBRARY_DIR}/libPolly.a" "${LLVM_LIBRARY_DIR}/libPollyISL.a")
  list(LENGTH ASTRA_CLANG_ARCHIVES NClang)
  list(LENGTH ASTRA_LLVM_ARCHIVES NLLVM)
  message(STATUS "clang-astra: portable link with ${NClang} clang and ${NLLVM} LLVM archives")
  target_link_libraries(astra_llvm INTERFACE
    "$<LINK_GROUP:RESCAN,${ASTRA_CLANG_ARCHIVES};${ASTRA_POLLY_ARCHIVES};${ASTRA_LLVM_ARCHIVES}>"
    -Wl,--as-needed z zstd pthread dl rt m
    -static-libstdc++ -static-libgcc -Wl,--gc-sections)
endif()

# The clang resource directory as this build sees it; the tool looks beside
# its own binary first (portable tarball, cmake --install) and falls back to
# this path.
set(ASTRA_BUILD_RESOURCE_DIR "${ASTRA_CLANG_RESOURCE_DIR}")

# The nvcc compat header (docs/nvcc-compat.md) lives where an install puts
# it, share/clang-astra/include beside bin/, in the build tree too, so the
# tool finds it the same way in both; other binaries of the build (unit
# tests) use this path.
set(ASTRA_BUILD_COMPAT_DIR "${CMAKE_BINARY_DIR}/share/clang-astra/include")
configure_file("${CMAKE_SOURCE_DIR}/lib/Frontend/nvcc-compat/__astra_nvcc_compat.h"
  "${ASTRA_BUILD_COMPAT_DIR}/__astra_nvcc_compat.h" COPYONLY)

# astra_add_library(<name> <sources>... [LINK <libs>...])
# One static library per component folder under lib/.
function(astra_add_library name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK} astra_llvm)
endfunction()

# astra_add_component(<name> [LINK <libs>...])
# A component library from every .cpp in the current folder. While a
# component has no sources yet it is an interface library, so the tool and
# tests can link it unconditionally.
function(astra_add_component name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  if(srcs)
    astra_add_library(${name} ${srcs} LINK ${ARG_LINK})
  else()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARG_LINK})
  endif()
endfunction()
