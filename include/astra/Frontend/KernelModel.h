//===- KernelModel.h - What we know about each __global__ kernel -*- C++ -*-===//
//
// The kernel model is the one description of a kernel that every later stage
// reads: `list` prints it, passes use it to find their targets, the spec
// drafter reads parameter roles from it and the optimizer uses launch sites to
// decide whether the launch configuration belongs to the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_KERNELMODEL_H
#define ASTRA_FRONTEND_KERNELMODEL_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

struct SourcePos {
  std::string File; ///< Display path (relative to the working directory when under it).
  unsigned Line = 0;
  unsigned Column = 0;
  std::string str() const;
};

struct KernelParam {
  unsigned Index = 0;
  std::string Name;
  std::string Type;        ///< As declared, e.g. "const float *__restrict".
  std::string PointeeType; ///< For pointers: the pointee, e.g. "const float".
  bool IsPointer = false;
  bool PointeeConst = false; ///< `const T *`: the kernel promised not to write.
  bool Restrict = false;     ///< `T *__restrict__`.
  bool Written = false;      ///< The kernel (or a helper it passes it to) may write through it.
};

struct TemplateParam {
  std::string Kind; ///< "type", "non-type" or "template".
  std::string Name;
  std::string Text; ///< As declared: "typename T", "int N".
};

struct Instantiation {
  std::string Name;        ///< "scale<float, 2>".
  std::string MangledName; ///< The PTX .entry name.
  bool Explicit = false;   ///< Explicit instantiation or specialization.
};

struct DeviceCallee {
  std::string Name; ///< Qualified name of the called function.
  SourcePos Pos;
  /// The definition (the pattern for templates). Valid while the AST lives.
  const clang::FunctionDecl *Decl = nullptr;
};

struct LaunchSite {
  SourcePos Pos;
  /// How it launches: "<<<>>>", or the launch API's name
  /// ("cudaLaunchKernel", "cudaLaunchCooperativeKernel",
  /// "cudaLaunchKernelEx"; its configuration struct is in Grid).
  std::string Api = "<<<>>>";
  std::string Caller;       ///< Function containing the launch.
  std::string TemplateArgs; ///< "<float, 2>" as written, or empty.
  std::string Grid, Block;
  std::optional<std::string> Shmem, Stream; ///< Absent when not written.
  std::vector<std::string> Args;            ///< Kernel arguments as written.
  /// Text range of the whole launch expression in its file (offsets), valid
  /// when the launch is not inside a macro expansion.
  unsigned BeginOffset = 0, EndOffset = 0;
  bool InMacro = false;
};

struct KernelInfo {
  std::string Name;
  std::string QualifiedName;
  std::string MangledName; ///< Empty for templates: see Instantiations.
  SourcePos Pos;           ///< Where the name is (expansion site for macros).
  std::string Macro;       ///< Outermost macro the kernel comes from, if any.
  bool InMainFile = false;
  std::string LaunchBounds; ///< `__launch_bounds__` arguments as written.
  std::vector<KernelParam> Params;
  std::vector<TemplateParam> TemplateParams;
  std::vector<Instantiation> Instantiations;
  std::vector<DeviceCallee> Callees; ///< Transitively, user code only.
  std::vector<LaunchSite> LaunchSites;
  /// The definition (the pattern for a template). Valid while the AST lives.
  const clang::FunctionDecl *Decl = nullptr;

  bool isTemplate() const { return !TemplateParams.empty(); }
};

/// Collects every __global__ kernel defined in user code (not in system
/// headers) of the translation unit, in source order, with launch sites from
/// anywhere in user code.
std::vector<KernelInfo> collectKernels(clang::ASTContext &Ctx);

/// Path as shown to users: relative to the working directory when the file
/// is under it, otherwise absolute; always with `.` and `..` removed.
std::string displayPath(llvm::StringRef Path);

/// Source position of \p Loc for messages (expansion site for macros).
SourcePos makePos(const clang::SourceManager &SM, clang::SourceLocation Loc);

/// Mangled name of a (non-dependent) function as it appears in PTX.
std::string mangledName(clang::ASTContext &Ctx, const clang::FunctionDecl *FD);

/// Source text of \p R in its file, or empty when it is not plain file text.
std::string sourceText(const clang::ASTContext &Ctx, clang::SourceRange R);

} // namespace astra

#endif
