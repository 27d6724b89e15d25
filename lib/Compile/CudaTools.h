//===- CudaTools.h - Running ptxas and nvcc --------------------*- C++ -*-===//
//
// ptxas and nvcc are separate programs; both are run the same way: inputs in
// temporary files, stdout and stderr captured together into one more, every
// temporary removed however the run ends.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_COMPILE_CUDATOOLS_H
#define ASTRA_LIB_COMPILE_CUDATOOLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {

/// Temporary files and directories removed when this goes out of scope.
class TempFiles {
public:
  TempFiles() = default;
  TempFiles(const TempFiles &) = delete;
  TempFiles &operator=(const TempFiles &) = delete;
  ~TempFiles();
  /// A new empty temporary file named like "<Prefix>-XXXXXX.<Suffix>".
  llvm::Expected<std::string> file(llvm::StringRef Prefix,
                                   llvm::StringRef Suffix);
  /// A new temporary directory, removed with everything in it.
  llvm::Expected<std::string> directory(llvm::StringRef Prefix);

private:
  std::vector<std::string> Files, Dirs;
};

struct ToolRun {
  int ExitCode = 0;
  /// stdout and stderr, interleaved as the tool wrote them.
  std::string Output;
};

/// Runs \p Program with \p Args (argv[0] first). Fails only when the program
/// cannot be started; a non-zero exit is in the result.
llvm::Expected<ToolRun> runTool(llvm::StringRef Program,
                                llvm::ArrayRef<std::string> Args);

/// The first \p MaxLines lines of a tool's output, for an error message.
std::string firstLines(llvm::StringRef Output, unsigned MaxLines = 20);

} // namespace astra

#endif
