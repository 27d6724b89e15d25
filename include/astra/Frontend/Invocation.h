//===- Invocation.h - A compiler invocation from a command line -*- C++ -*-===//
#ifndef ASTRA_FRONTEND_INVOCATION_H
#define ASTRA_FRONTEND_INVOCATION_H

#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <memory>
#include <string>
#include <vector>

namespace astra {

/// The cc1 invocation clang's driver makes of \p Command (a clang command
/// line, argv[0] first) over \p VFS; null when the driver cannot make one,
/// with the reason in \p Diags.
std::shared_ptr<clang::CompilerInvocation>
makeInvocation(const std::vector<std::string> &Command,
               llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> Diags,
               llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> VFS);

} // namespace astra

#endif
