# astra_optimize(<target> [MODE check|fix] [KERNELS <name>...]
#                [SPECS <spec.json>...] [WITHOUT_GPU error|static|skip]
#                [TEST <command> [TEST_DIR <dir>] [TEST_TIMEOUT <seconds>]]
#                [ARGS <clang-astra optimize args>...])
#
# Adds the custom target <target>-astra, which runs `clang-astra optimize`
# over the CUDA sources (.cu, .cuh) of <target> with <target>'s compile
# flags. It is not part of `all`: run it with
# `cmake --build <dir> --target <target>-astra`.
#
#   MODE check   (default) write nothing; print the diff of every verified
#                faster rewrite; the target fails (exit 3) when there is one
#   MODE fix     write verified faster rewrites into the sources (-i)
#   KERNELS      only these kernels (--kernel, once per name)
#   SPECS        workload specs (--spec): one, or one per CUDA source in the
#                order of the target's sources (default <source>.astra.json)
#   WITHOUT_GPU  what to do where no GPU is usable (--without-gpu; default
#                error)
#   TEST         your own test (--test): a shell command run with each
#                file's winner in place; a winner is kept (fix) or reported
#                (check) only when it exits 0. $ASTRA_TEST_FILE names the
#                file. It is written to <binary dir>/<target>-astra-test.sh,
#                which --test runs with sh
#   TEST_DIR     where TEST runs (--test-dir; default: the current binary
#                directory, where the target runs)
#   TEST_TIMEOUT seconds TEST may take (--test-timeout; default 600)
#   ARGS         further arguments to clang-astra optimize
#
# Flags come from the build's compile_commands.json (-p): astra_optimize sets
# EXPORT_COMPILE_COMMANDS on <target>, so CMake writes it for the Ninja and
# Makefile generators. Other generators write no database; then the target's
# include directories and definitions are passed after `--`.
function(astra_optimize target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG ""
    "MODE;WITHOUT_GPU;TEST;TEST_DIR;TEST_TIMEOUT" "KERNELS;SPECS;ARGS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "astra_optimize(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "astra_optimize: '${target}' is not a target")
  endif()
  if(NOT ARG_MODE)
    set(ARG_MODE check)
  endif()
  if(ARG_MODE STREQUAL "check")
    set(mode_flag --check)
  elseif(ARG_MODE STREQUAL "fix")
    set(mode_flag -i)
  else()
    message(FATAL_ERROR
      "astra_optimize(${target}): MODE must be check or fix, not '${ARG_MODE}'")
  endif()
  set(gpu_flag)
  if(ARG_WITHOUT_GPU)
    if(NOT ARG_WITHOUT_GPU MATCHES "^(error|static|skip)$")
      message(FATAL_ERROR "astra_optimize(${target}): WITHOUT_GPU must be "
        "error, static or skip, not '${ARG_WITHOUT_GPU}'")
    endif()
    set(gpu_flag "--without-gpu=${ARG_WITHOUT_GPU}")
  endif()

  # Before CMake 3.31 an empty value (TEST "") leaves ARG_TEST undefined, as
  # if TEST had not been given: look at the arguments themselves.
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 1 ${last})
    if("${ARGV${i}}" MATCHES "^(TEST|TEST_DIR|TEST_TIMEOUT)$")
      math(EXPR next "${i} + 1")
      if(next GREATER last OR "${ARGV${next}}" STREQUAL "")
        message(FATAL_ERROR
          "astra_optimize(${target}): ${ARGV${i}} needs a value")
      endif()
    endif()
  endforeach()
  set(test_flags)
  if(DEFINED ARG_TEST)
    # The command goes into a script as it was written: no CMake list or
    # shell quoting can then take its semicolons, quotes or dollars apart.
    set(test_script "${CMAKE_CURRENT_BINARY_DIR}/${target}-astra-test.sh")
    if(test_script MATCHES "'")
      message(FATAL_ERROR "astra_optimize(${target}): TEST needs a binary "
        "directory without a single quote in its path (${test_script})")
    endif()
    file(WRITE "${test_script}" "${ARG_TEST}\n")
    list(APPEND test_flags "--test=sh '${test_script}'")
    if(DEFINED ARG_TEST_DIR)
      get_filename_component(test_dir "${ARG_TEST_DIR}" ABSOLUTE
        BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
      list(APPEND test_flags "--test-dir=${test_dir}")
    endif()
    if(DEFINED ARG_TEST_TIMEOUT)
      if(NOT ARG_TEST_TIMEOUT MATCHES "^[0-9]+$")
        message(FATAL_ERROR "astra_optimize(${target}): TEST_TIMEOUT must be "
          "a number of seconds, not '${ARG_TEST_TIMEOUT}'")
      endif()
      list(APPEND test_flags "--test-timeout=${ARG_TEST_TIMEOUT}")
    endif()
  elseif(DEFINED ARG_TEST_DIR OR DEFINED ARG_TEST_TIMEOUT)
    message(FATAL_ERROR
      "astra_optimize(${target}): TEST_DIR and TEST_TIMEOUT need TEST")
  endif()

  # The CUDA sources, as absolute paths. Generator expressions in SOURCES
  # cannot be evaluated here and are skipped.
  get_target_property(srcs ${target} SOURCES)
  get_target_property(src_dir ${target} SOURCE_DIR)
  set(cuda_srcs)
  foreach(src IN LISTS srcs)
    if(src MATCHES "\\$<")
      continue()
    endif()
    if(src MATCHES "\\.(cu|cuh)$")
      get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${src_dir}")
      list(APPEND cuda_srcs "${abs}")
    endif()
  endforeach()
  if(NOT cuda_srcs)
    message(FATAL_ERROR
      "astra_optimize(${target}): the target has no .cu or .cuh sources")
  endif()

  set(kernel_flags)
  foreach(k IN LISTS ARG_KERNELS)
    list(APPEND kernel_flags "--kernel=${k}")
  endforeach()

  set(flags_before)
  set(flags_after)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
    set_property(TARGET ${target} PROPERTY EXPORT_COMPILE_COMMANDS ON)
    set(flags_before -p "${CMAKE_BINARY_DIR}")
  else()
    # Empty lists give no flag at all (a lone -I would take the next
    # argument).
    set(incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
    set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
    set(flags_after --
      "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>"
      "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>")
  endif()

  # One command, or one per source when each has its own spec.
  list(LENGTH ARG_SPECS nspecs)
  list(LENGTH cuda_srcs nsrcs)
  set(commands)
  set(base ClangAstra::clang-astra optimize ${mode_flag} ${gpu_flag}
    ${flags_before} ${kernel_flags} ${test_flags} ${ARG_ARGS})
  if(nspecs EQUAL 0)
    list(APPEND commands COMMAND ${base} ${cuda_srcs} ${flags_after})
  elseif(nspecs EQUAL 1 AND nsrcs EQUAL 1)
    get_filename_component(spec "${ARG_SPECS}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND commands COMMAND ${base} "--spec=${spec}" ${cuda_srcs}
      ${flags_after})
  elseif(nspecs EQUAL nsrcs)
    foreach(i RANGE 1 ${nsrcs})
      math(EXPR j "${i} - 1")
      list(GET cuda_srcs ${j} src)
      list(GET ARG_SPECS ${j} spec)
      get_filename_component(spec "${spec}" ABSOLUTE
        BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND commands COMMAND ${base} "--spec=${spec}" "${src}"
        ${flags_after})
    endforeach()
  else()
    message(FATAL_ERROR "astra_optimize(${target}): SPECS names ${nspecs} "
      "specs for ${nsrcs} CUDA sources; give one per source, in the order of "
      "the target's sources (or none: <source>.astra.json)")
  endif()

  add_custom_target(${target}-astra
    ${commands}
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "clang-astra optimize (${ARG_MODE}) over the CUDA sources of ${target}"
    VERBATIM COMMAND_EXPAND_LISTS USES_TERMINAL)
endfunction()
