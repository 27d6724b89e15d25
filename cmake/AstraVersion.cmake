# Tool version string, part of every cache key, so a rebuilt tool never reads
# results an older tool wrote.
find_package(Git QUIET)
set(ASTRA_GIT_REVISION "unknown")
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE ASTRA_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  if(NOT ASTRA_GIT_REVISION)
    set(ASTRA_GIT_REVISION "unknown")
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/include/astra/Config.h.in
  ${CMAKE_BINARY_DIR}/include/astra/Config.h @ONLY)
