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
  # Configure again when HEAD moves (a checkout or a commit), so a build
  # directory that is only rebuilt never reports an old revision.
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE _astra_head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE _astra_ref OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(_astra_path ${_astra_head} ${_astra_ref})
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path ${_astra_path}
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
      OUTPUT_VARIABLE _astra_file OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_astra_file AND NOT IS_ABSOLUTE "${_astra_file}")
      set(_astra_file "${CMAKE_SOURCE_DIR}/${_astra_file}")
    endif()
    if(_astra_file AND EXISTS "${_astra_file}")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_astra_file}")
    endif()
  endforeach()
endif()
configure_file(${CMAKE_SOURCE_DIR}/include/astra/Config.h.in
  ${CMAKE_BINARY_DIR}/include/astra/Config.h @ONLY)
