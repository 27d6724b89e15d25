//===- CompatRepair.h - Repairs and host-error triage for parseCuda -*- C++ -*-===//
//
// Private to lib/Frontend. parseCuda parses with a DiagnosticRecorder, which
// holds the diagnostics back (they are printed only if the parse fails) and
// turns the errors nvcc would not have made into source edits; after the last
// parse, triageHostErrors decides whether the remaining errors all lie in
// host-only function bodies and, if so, which bodies to stub.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_FRONTEND_COMPATREPAIR_H
#define ASTRA_LIB_FRONTEND_COMPATREPAIR_H

#include "astra/Frontend/CudaParser.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
} // namespace clang

namespace astra {

/// One error diagnostic, kept for the triage of the AST it belongs to.
struct ErrorRecord {
  clang::SourceLocation Loc;
  std::string Message;
  /// "file:line:col: message" (just the message without a location).
  std::string Formatted;
};

/// A replacement in the text of one file, as clang saw it in this parse.
struct SourceEdit {
  std::string Path; ///< Absolute, as an overlay key.
  unsigned Offset = 0, Length = 0;
  std::string Text;
  bool operator<(const SourceEdit &O) const {
    return std::tie(Path, Offset, Length, Text) <
           std::tie(O.Path, O.Offset, O.Length, O.Text);
  }
  bool operator==(const SourceEdit &O) const {
    return !(*this < O) && !(O < *this);
  }
};

/// Prints what parseCuda would print (errors, the notes after them, and
/// warnings on request) into a buffer, counts, records every error, and,
/// when repairing, turns the errors nvcc accepts into edits and flags.
class DiagnosticRecorder : public clang::DiagnosticConsumer {
public:
  DiagnosticRecorder(bool Colors, clang::DiagnosticOptions &Opts,
                     bool Warnings, bool Repair);
  void BeginSourceFile(const clang::LangOptions &LO,
                       const clang::Preprocessor *PP) override;
  void EndSourceFile() override;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level L,
                        const clang::Diagnostic &Info) override;

  /// The diagnostics as clang would have printed them.
  const std::string &text() const { return Text; }
  const std::vector<ErrorRecord> &errors() const { return Errors; }
  const std::vector<SourceEdit> &edits() const { return Edits; }
  const std::vector<CompatRepair> &repairs() const { return Repairs; }
  /// The text clang read of each file an edit is for.
  const FileOverlay &texts() const { return Texts; }
  /// A kernel is launched from device code and the command lacks -fgpu-rdc.
  bool needsRdc() const { return NeedsRdc; }
  /// Repairs cannot fix every error: some error has no repair.
  bool hasUnrepairable() const { return Unrepairable; }

private:
  bool repair(const clang::Diagnostic &Info);
  bool repairWithoutFixIt(const clang::Diagnostic &Info);
  bool repairTargetRedeclaration(const clang::Diagnostic &Info);
  bool repairAsmOperandComma(const clang::Diagnostic &Info);
  bool repairEmptyBracesAssignment(const clang::Diagnostic &Info);
  bool repairRestrictArrayCopy(const clang::Diagnostic &Info);
  bool isTargetAttributeSpelling(llvm::StringRef Name, unsigned Depth) const;
  void addEdit(const clang::SourceManager &SM, clang::SourceLocation At,
               unsigned Length, std::string NewText, std::string What);

  std::string Text;
  clang::LangOptions LangOpts;
  const clang::Preprocessor *PP = nullptr;
  std::unique_ptr<llvm::raw_string_ostream> OS;
  std::unique_ptr<clang::TextDiagnosticPrinter> Printer;
  bool Warnings, DoRepair;
  bool LastPrinted = false;
  unsigned PrintedErrors = 0;
  std::vector<ErrorRecord> Errors;
  std::vector<SourceEdit> Edits;
  std::vector<CompatRepair> Repairs;
  FileOverlay Texts;
  bool NeedsRdc = false;
  bool Unrepairable = false;
};

/// The edits that stub every host-only function body holding one of
/// \p Errors, with a description of each; nullopt when some error lies
/// elsewhere (a device or global function, file scope, no location, a body
/// spelled inside a macro).
struct HostTriage {
  std::vector<SourceEdit> Stubs;
  std::vector<SkippedHostCode> Skipped;
  FileOverlay Texts; ///< The text clang read of each stubbed file.
};
std::optional<HostTriage> triageHostErrors(clang::ASTContext &Ctx,
                                           const std::vector<ErrorRecord> &Errors);

/// Applies \p Edits (offsets into \p Texts, the text clang read of each
/// file) and puts the results in \p Files. Overlapping edits of one place
/// keep the first. Returns the edits applied to each file, ascending.
std::map<std::string, std::vector<TextEdit>>
applyEdits(FileOverlay &Files, std::vector<SourceEdit> Edits,
           const FileOverlay &Texts);

/// Adds what \p Rec repaired to \p View as one more round (the edits applied
/// to View.Files, the given texts and rounds, the repairs, -fgpu-rdc);
/// false when it repaired nothing new.
bool absorbRepairs(DeviceView &View, const DiagnosticRecorder &Rec);

} // namespace astra

#endif
