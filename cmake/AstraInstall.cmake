# Install layout: bin/clang-astra, lib/clang/<major>/include (the resource
# headers the tool needs to parse CUDA; found relative to the binary).
install(DIRECTORY "${ASTRA_CLANG_RESOURCE_DIR}/include"
  DESTINATION "lib/clang/${LLVM_VERSION_MAJOR}"
  PATTERN "ppc_wrappers" EXCLUDE
  PATTERN "llvm_libc_wrappers" EXCLUDE)
