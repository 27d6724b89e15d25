//===- KernelSource.cpp ---------------------------------------------------===//
#include "astra/Agents/KernelSource.h"
#include "astra/Support/FileIO.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace llvm;

namespace astra {

static bool sameName(const KernelInfo &K, StringRef Name) {
  if (K.QualifiedName == Name || K.Name == Name)
    return true;
  // A spec names template instantiations: "silu<__nv_bfloat16>".
  StringRef Base = Name.split('<').first;
  return K.QualifiedName == Base || K.Name == Base;
}

/// File offsets of a declaration's full text, template header included.
static std::pair<unsigned, unsigned> declRange(ASTContext &Ctx,
                                               const FunctionDecl *FD) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceRange R = FD->getSourceRange();
  if (const FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate())
    R = FTD->getSourceRange();
  CharSourceRange CR = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(R), SM, Ctx.getLangOpts());
  if (CR.isInvalid())
    return {0, 0};
  return {SM.getFileOffset(CR.getBegin()), SM.getFileOffset(CR.getEnd())};
}

Expected<KernelText> findKernelText(const std::vector<std::string> &Command,
                                    const FileOverlay &Overlay, StringRef Name) {
  ParseOptions PO;
  PO.Overlay = Overlay;
  PO.DiagOS = nullptr;
  auto PF = parseCuda(Command, PO);
  if (!PF)
    return PF.takeError();
  ASTContext &Ctx = (*PF)->context();
  const SourceManager &SM = Ctx.getSourceManager();
  for (const KernelInfo &K : collectKernels(Ctx)) {
    if (!sameName(K, Name))
      continue;
    if (!K.Macro.empty())
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s' comes from macro '%s'; its text "
                               "cannot be replaced",
                               K.QualifiedName.c_str(), K.Macro.c_str());
    KernelText T;
    auto [B, E] = declRange(Ctx, K.Decl);
    if (B == E)
      return createStringError(inconvertibleErrorCode(),
                               "kernel '%s': cannot find its text",
                               K.QualifiedName.c_str());
    FileID FID = SM.getFileID(SM.getExpansionLoc(K.Decl->getLocation()));
    OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID);
    T.File = FE ? std::string(FE->getName()) : Command.back();
    T.Begin = B;
    T.End = E;
    T.Definition = SM.getBufferData(FID).substr(B, E - B).str();
    for (const DeviceCallee &C : K.Callees) {
      auto [HB, HE] = declRange(Ctx, C.Decl);
      FileID HF = SM.getFileID(SM.getExpansionLoc(C.Decl->getLocation()));
      if (HB != HE)
        T.Helpers.push_back(SM.getBufferData(HF).substr(HB, HE - HB).str());
    }
    std::vector<std::string> Ps;
    for (const KernelParam &P : K.Params)
      Ps.push_back(P.Type + " " + P.Name);
    T.Signature = K.QualifiedName + "(" + join(Ps, ", ") + ")";
    return T;
  }
  return createStringError(inconvertibleErrorCode(), "%s: no kernel named '%s'",
                           Command.back().c_str(), Name.str().c_str());
}

Expected<FileOverlay> spliceKernel(const KernelText &Where,
                                   const FileOverlay &ParentFiles,
                                   StringRef NewCode) {
  FileOverlay Files = ParentFiles;
  std::string Text;
  auto It = Files.find(Where.File);
  if (It != Files.end()) {
    Text = It->second;
  } else {
    auto Disk = readFile(Where.File);
    if (!Disk)
      return Disk.takeError();
    Text = std::move(*Disk);
  }
  if (Where.End > Text.size() || Where.Begin > Where.End)
    return createStringError(inconvertibleErrorCode(),
                             "%s: the kernel's text moved; cannot splice",
                             Where.File.c_str());
  std::string Code = NewCode.rtrim().str();
  Files[Where.File] =
      Text.substr(0, Where.Begin) + Code + Text.substr(Where.End);
  return Files;
}

std::string contractOf(const KernelInfo &K) {
  std::string S;
  raw_string_ostream OS(S);
  for (const TemplateParam &T : K.TemplateParams)
    OS << "template " << T.Kind << " " << T.Name << "; ";
  for (const KernelParam &P : K.Params) {
    OS << P.Index << ":";
    if (P.IsPointer) {
      StringRef Pointee = P.PointeeType;
      Pointee.consume_front("const ");
      OS << "pointer to " << Pointee;
    } else {
      StringRef T = P.Type;
      T.consume_front("const ");
      OS << T;
    }
    OS << "; ";
  }
  return S;
}

Error checkKernelContract(const std::vector<std::string> &Command,
                          const FileOverlay &Files, StringRef Name,
                          const KernelInfo &Original) {
  std::string Diags;
  raw_string_ostream DOS(Diags);
  ParseOptions PO;
  PO.Overlay = Files;
  PO.DiagOS = &DOS;
  auto PF = parseCuda(Command, PO);
  if (!PF) {
    consumeError(PF.takeError());
    return createStringError(inconvertibleErrorCode(),
                             "the rewritten code does not compile:\n%s",
                             Diags.c_str());
  }
  for (const KernelInfo &K : collectKernels((*PF)->context())) {
    if (!sameName(K, Name))
      continue;
    if (K.Params.size() != Original.Params.size())
      return createStringError(
          inconvertibleErrorCode(),
          "the kernel's signature changed: it had %zu parameters, now %zu",
          Original.Params.size(), K.Params.size());
    for (size_t I = 0; I < K.Params.size(); ++I) {
      const KernelParam &A = Original.Params[I], &B = K.Params[I];
      KernelInfo KA, KB;
      KA.Params = {A};
      KB.Params = {B};
      if (contractOf(KA) != contractOf(KB))
        return createStringError(
            inconvertibleErrorCode(),
            "the kernel's signature changed: parameter %zu '%s' was '%s', "
            "is '%s'",
            I, A.Name.c_str(), A.Type.c_str(), B.Type.c_str());
    }
    KernelInfo TA, TB;
    TA.TemplateParams = Original.TemplateParams;
    TB.TemplateParams = K.TemplateParams;
    if (contractOf(TA) != contractOf(TB))
      return createStringError(inconvertibleErrorCode(),
                               "the kernel's template parameters changed");
    return Error::success();
  }
  return createStringError(inconvertibleErrorCode(),
                           "the rewritten code has no kernel named '%s'",
                           Name.str().c_str());
}

} // namespace astra
