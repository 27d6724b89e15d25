//===- ClangDeviceCompile.h - One in-process NVPTX compile -----*- C++ -*-===//
//
// The part of compileToPtx that runs clang: a driver command turned into a
// cc1 invocation, then CodeGen and the NVPTX backend writing PTX into memory.
// Private to lib/Compile; the cache and the PCH sit around it.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_COMPILE_CLANGDEVICECOMPILE_H
#define ASTRA_LIB_COMPILE_CLANGDEVICECOMPILE_H

#include "PtxCache.h"
#include "astra/Frontend/CudaParser.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace astra {

/// What one clang run should do besides compiling.
struct DeviceCompileRequest {
  /// Driver command line, argv[0] first and the main file last, with the
  /// optimization level already in it.
  std::vector<std::string> Command;
  FileOverlay Overlay;
  llvm::raw_ostream *DiagOS = nullptr;
  bool ShowWarnings = false;
  /// Use this PCH of clang's CUDA runtime wrapper in place of the implicit
  /// `-include __clang_cuda_runtime_wrapper.h`; empty: parse the headers.
  std::string UsePch;
  /// Instead of compiling the main file, write a PCH of the runtime wrapper
  /// here (the main file is then only used for its flags).
  std::string BuildPch;
  /// Collect the non-system files the compile read (DeviceCompileOutput::Deps).
  bool CollectDeps = false;
};

struct DeviceCompileOutput {
  std::string Ptx;
  /// The non-system files read (absolute paths, the main file first), each
  /// with the hash of the bytes the compile saw.
  std::vector<CacheDep> Deps;
  /// A file the compile read could not be hashed: do not cache this result.
  bool DepsIncomplete = false;
};

/// A failed compile: Message is the first error diagnostic,
/// "file:line:col: error: message", and File the file it points into (empty
/// when it points nowhere), so the caller can tell an error in the user's
/// code from a PCH that cannot be used.
class DeviceCompileError : public llvm::ErrorInfo<DeviceCompileError> {
public:
  static char ID;
  DeviceCompileError(std::string Message, std::string File)
      : Message(std::move(Message)), File(std::move(File)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string Message;
  std::string File;
};

/// Runs clang once. A compile error returns a DeviceCompileError; every
/// shown diagnostic also goes to DiagOS.
llvm::Expected<DeviceCompileOutput>
runDeviceCompile(const DeviceCompileRequest &Req);

} // namespace astra

#endif
