//===- CompatRepair.cpp ---------------------------------------------------===//
#include "CompatRepair.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticAST.h"
#include "clang/Basic/DiagnosticParse.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>

using namespace clang;
using namespace llvm;

namespace astra {

/// Clang shows this many errors before it gives up (its -ferror-limit
/// default); the parse itself goes on, so that every repairable error and
/// every host error is seen.
static constexpr unsigned ShownErrorLimit = 20;

/// The absolute path a later parse looks the file up by: an overlay key.
static std::string pathOf(const SourceManager &SM, FileID FID) {
  OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID);
  if (!FE)
    return "";
  SmallString<256> P(FE->getName());
  SM.getFileManager().makeAbsolutePath(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

static std::string where(const SourceManager &SM, SourceLocation L,
                         bool Column = true) {
  PresumedLoc P = SM.getPresumedLoc(L);
  if (P.isInvalid())
    return "";
  std::string S = (Twine(P.getFilename()) + ":" + Twine(P.getLine())).str();
  if (Column)
    S += ":" + std::to_string(P.getColumn());
  return S;
}

DiagnosticRecorder::DiagnosticRecorder(bool Colors, DiagnosticOptions &Opts,
                                       bool Warnings, bool Repair)
    : OS(std::make_unique<raw_string_ostream>(Text)), Warnings(Warnings),
      DoRepair(Repair) {
  OS->enable_colors(Colors);
  Printer = std::make_unique<TextDiagnosticPrinter>(*OS, Opts);
}

void DiagnosticRecorder::BeginSourceFile(const LangOptions &LO,
                                         const Preprocessor *PP) {
  LangOpts = LO;
  this->PP = PP;
  Printer->BeginSourceFile(LO, PP);
}

void DiagnosticRecorder::EndSourceFile() {
  Printer->EndSourceFile();
  PP = nullptr;
}

void DiagnosticRecorder::HandleDiagnostic(DiagnosticsEngine::Level L,
                                          const Diagnostic &Info) {
  DiagnosticConsumer::HandleDiagnostic(L, Info);
  bool IsError = L >= DiagnosticsEngine::Error;
  bool Show = (IsError && PrintedErrors < ShownErrorLimit) || Warnings ||
              (L == DiagnosticsEngine::Note && LastPrinted);
  if (L != DiagnosticsEngine::Note)
    LastPrinted = Show;
  if (Show) {
    Printer->HandleDiagnostic(L, Info);
    PrintedErrors += IsError;
  }
  if (!IsError)
    return;
  ErrorRecord R;
  R.Loc = Info.getLocation();
  SmallString<256> Msg;
  Info.FormatDiagnostic(Msg);
  R.Message = std::string(Msg);
  R.Formatted = R.Message;
  if (R.Loc.isValid() && Info.hasSourceManager()) {
    std::string W = where(Info.getSourceManager(), R.Loc);
    if (!W.empty())
      R.Formatted = W + ": " + R.Message;
  }
  Errors.push_back(std::move(R));
  if (!DoRepair || !Info.hasSourceManager() || !repair(Info))
    Unrepairable = true;
}

void DiagnosticRecorder::addEdit(const SourceManager &SM, SourceLocation At,
                                 unsigned Length, std::string NewText,
                                 std::string What) {
  FileID FID = SM.getFileID(At);
  std::string Path = pathOf(SM, FID);
  SourceEdit E{Path, SM.getFileOffset(At), Length, std::move(NewText)};
  if (std::find(Edits.begin(), Edits.end(), E) != Edits.end())
    return;
  Texts.emplace(Path, SM.getBufferData(FID).str());
  Edits.push_back(std::move(E));
  Repairs.push_back({where(SM, At), std::move(What)});
}

/// The name a "missing 'template' keyword prior to dependent template name
/// 'X'" diagnostic is about: its last quoted word.
static StringRef quotedName(StringRef Message) {
  size_t E = Message.rfind('\'');
  if (E == StringRef::npos || E == 0)
    return "";
  size_t B = Message.rfind('\'', E - 1);
  if (B == StringRef::npos)
    return "";
  StringRef N = Message.slice(B + 1, E);
  // "vec_cast<float, half>::cast": the member is the last component.
  size_t Colons = N.rfind("::");
  return Colons == StringRef::npos ? N : N.drop_front(Colons + 2);
}

/// Where `template` goes in \p Text, which starts with a qualified name
/// `A<...>::B<...>::name<...>(`: before the last component, when it is
/// followed by `<` and the scope is dependent: some component before it has
/// template arguments, or the first is a name \p IsTypeParameter says is a
/// template's type parameter (`POLICY::name<N>(...)`). None for anything
/// else.
static std::optional<size_t>
memberTemplateNameOffset(StringRef Text,
                         function_ref<bool(StringRef)> IsTypeParameter) {
  size_t I = 0;
  auto SkipSpace = [&] {
    while (I < Text.size() && isWhitespace(Text[I]))
      ++I;
  };
  // The end of the balanced <...> starting at I, or npos.
  auto SkipAngles = [&]() -> bool {
    unsigned Depth = 0;
    for (; I < Text.size(); ++I) {
      char C = Text[I];
      if (C == '<' || C == '(')
        ++Depth;
      else if ((C == '>' || C == ')') && --Depth == 0) {
        ++I;
        return true;
      }
    }
    return false;
  };
  bool DependentScope = false;
  for (unsigned Component = 0; Component < 16; ++Component) {
    SkipSpace();
    size_t Name = I;
    while (I < Text.size() && (isAlnum(Text[I]) || Text[I] == '_'))
      ++I;
    if (I == Name || isDigit(Text[Name]))
      return std::nullopt;
    SkipSpace();
    bool Args = I < Text.size() && Text[I] == '<';
    if (Args && !SkipAngles())
      return std::nullopt;
    SkipSpace();
    if (Text.substr(I).starts_with("::")) {
      DependentScope |= Args || (Component == 0 &&
                                 IsTypeParameter(Text.slice(Name, I).rtrim()));
      I += 2;
      continue;
    }
    if (Args && DependentScope && Component > 0)
      return Name;
    return std::nullopt;
  }
  return std::nullopt;
}

bool DiagnosticRecorder::repairWithoutFixIt(const Diagnostic &Info) {
  // Clang reports a missing `template` found while instantiating (Sema's
  // err_template_kw_missing) at the start of the qualified name, without a
  // fix-it: the keyword goes before the member, after the last `::` that
  // precedes `NAME <` within the statement.
  const SourceManager &SM = Info.getSourceManager();
  // Clang can also take `X<T>::name < N > (args)` for comparisons and then
  // fail on `X<T>::name` naming a member template, at the start of the
  // qualified name, without saying which name.
  if (Info.getID() == diag::err_ovl_unresolvable) {
    SourceLocation L = Info.getLocation();
    if (L.isInvalid() || L.isMacroID() || pathOf(SM, SM.getFileID(L)).empty())
      return false;
    StringRef Buf = SM.getBufferData(SM.getFileID(L));
    unsigned Off = SM.getFileOffset(L);
    StringRef Rest = Buf.substr(Off, 512);
    Rest = Rest.take_until([](char C) { return C == ';' || C == '{'; });
    // The diagnostic comes from an instantiation, where the parameter is
    // already a type: whether the name was one of the enclosing template's
    // type parameters is read from the text, in the template heads of the
    // 16 KB before it (`typename NAME` or `class NAME` followed by `,`, `>`
    // or `=`).
    auto IsTypeParameter = [&](StringRef Name) {
      StringRef Before = Buf.substr(0, Off);
      Before = Before.drop_front(Before.size() - std::min<size_t>(Before.size(), 16384));
      for (StringRef Kw : {"typename", "class"})
        for (size_t At = Before.find(Kw); At != StringRef::npos;
             At = Before.find(Kw, At + 1)) {
          StringRef After = Before.drop_front(At + Kw.size());
          if (After.empty() || !isWhitespace(After.front()) ||
              (At > 0 && (isAlnum(Before[At - 1]) || Before[At - 1] == '_')))
            continue;
          After = After.ltrim();
          if (!After.consume_front(Name))
            continue;
          After = After.ltrim();
          if (!After.empty() && (After.front() == ',' || After.front() == '>' ||
                                 After.front() == '='))
            return true;
        }
      return false;
    };
    std::optional<size_t> At = memberTemplateNameOffset(Rest, IsTypeParameter);
    if (!At)
      return false;
    addEdit(SM, L.getLocWithOffset(*At), 0, "template ",
            "added 'template' (nvcc accepts the code without it)");
    return true;
  }
  if (Info.getID() != diag::err_template_kw_missing)
    return false;
  SmallString<128> Msg;
  Info.FormatDiagnostic(Msg);
  StringRef Name = quotedName(Msg);
  SourceLocation L = SM.getSpellingLoc(Info.getLocation());
  FileID FID = SM.getFileID(L);
  if (Name.empty() || pathOf(SM, FID).empty())
    return false;
  StringRef Buf = SM.getBufferData(FID);
  unsigned Off = SM.getFileOffset(L);
  StringRef Rest = Buf.substr(Off, 512);
  Rest = Rest.take_until([](char C) { return C == ';' || C == '{'; });
  if (Rest.starts_with(Name) &&
      Rest.drop_front(Name.size()).ltrim().starts_with("<")) {
    addEdit(SM, L, 0, "template ",
            "added 'template' (nvcc accepts the code without it)");
    return true;
  }
  for (size_t At = Rest.find("::"); At != StringRef::npos;
       At = Rest.find("::", At + 2)) {
    StringRef After = Rest.drop_front(At + 2);
    size_t Spaces = After.size() - After.ltrim().size();
    After = After.ltrim();
    if (!After.consume_front(Name) || !After.ltrim().starts_with("<") ||
        (!After.empty() && isAlnum(After.front())))
      continue;
    unsigned Insert = Off + At + 2 + Spaces;
    addEdit(SM, L.getLocWithOffset(Insert - Off), 0, "template ",
            "added 'template' (nvcc accepts the code without it)");
    return true;
  }
  return false;
}

/// Where a diagnostic points in a file's text: none for a macro location or
/// a buffer that is no file (a repair edits files only).
struct FileSpot {
  FileID FID;
  StringRef Buf;
  unsigned Off;
};
static std::optional<FileSpot> fileSpot(const SourceManager &SM,
                                        SourceLocation L) {
  if (L.isInvalid() || L.isMacroID())
    return std::nullopt;
  FileID FID = SM.getFileID(L);
  if (pathOf(SM, FID).empty())
    return std::nullopt;
  return FileSpot{FID, SM.getBufferData(FID), SM.getFileOffset(L)};
}

/// `__host__`, `__device__`, or an object-like macro that expands to
/// nothing but those (CCCL's `_CCCL_HOST_DEVICE`).
bool DiagnosticRecorder::isTargetAttributeSpelling(StringRef Name,
                                                   unsigned Depth) const {
  if (Name == "__host__" || Name == "__device__")
    return true;
  if (!PP || Depth > 4)
    return false;
  auto It = PP->getIdentifierTable().find(Name);
  const IdentifierInfo *II =
      It == PP->getIdentifierTable().end() ? nullptr : It->getValue();
  const MacroInfo *MI = II ? PP->getMacroInfo(II) : nullptr;
  if (!MI || !MI->isObjectLike() || MI->getNumTokens() == 0)
    return false;
  for (const Token &T : MI->tokens())
    if (!T.getIdentifierInfo() ||
        !isTargetAttributeSpelling(T.getIdentifierInfo()->getName(),
                                   Depth + 1))
      return false;
  return true;
}

bool DiagnosticRecorder::repairTargetRedeclaration(const Diagnostic &Info) {
  // err_cuda_ovl_target: %0 the new declaration's target, %3 the earlier
  // declaration (Device 0, Global 1, Host 2, HostDevice 3).
  constexpr uint64_t Device = 0, Host = 2, HostDevice = 3;
  if (Info.getNumArgs() < 4 ||
      Info.getArgKind(3) != DiagnosticsEngine::ak_nameddecl ||
      Info.getRawArg(0) != HostDevice ||
      (Info.getRawArg(2) != Host && Info.getRawArg(2) != Device))
    return false;
  const auto *Old = dyn_cast_or_null<FunctionDecl>(
      reinterpret_cast<const NamedDecl *>(Info.getRawArg(3)));
  if (!Old)
    return false;
  auto IsDeviceOnly = [](const FunctionDecl *F) {
    return F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAHostAttr>();
  };
  // nvcc makes the function __host__ __device__. Clang gets the same from
  // a host declaration together with a __device__ one of the same name
  // (its CUDA headers define __assert_fail, malloc, free, vprintf for the
  // device, in extern "C"), so the later declaration's target is dropped:
  // it becomes the host one. The earlier declaration is either the host
  // one (PyTorch's or glibc's came first), with such a twin in scope, or
  // that twin itself (nothing declared the host function before). Without
  // a twin the device side would lose the function: no repair.
  bool DeviceTwin = false;
  if (Info.getRawArg(2) == Device) {
    DeviceTwin = IsDeviceOnly(Old) && Old->isInExternCContext();
  } else if (Old->isExternC()) {
    for (const NamedDecl *ND :
         Old->getDeclContext()->getRedeclContext()->lookup(Old->getDeclName()))
      if (const FunctionDecl *F = ND->getAsFunction())
        DeviceTwin |= IsDeviceOnly(F);
  }
  if (!DeviceTwin)
    return false;
  const SourceManager &SM = Info.getSourceManager();
  SourceLocation L = Info.getLocation();
  std::optional<FileSpot> Spot = fileSpot(SM, L);
  if (!Spot)
    return false;
  auto [FID, Buf, Off] = *Spot;
  // The declaration starts after the last `;`, `{` or `}` before its name.
  size_t Start = Buf.substr(0, Off).find_last_of(";{}");
  Start = Start == StringRef::npos ? 0 : Start + 1;
  Lexer Raw(SM.getLocForStartOfFile(FID), LangOpts, Buf.begin(),
            Buf.begin() + Start, Buf.end());
  std::vector<std::pair<unsigned, unsigned>> Targets;
  Token Tok;
  bool InDirective = false;
  while (!Raw.LexFromRawLexer(Tok)) {
    unsigned At = SM.getFileOffset(Tok.getLocation());
    if (At >= Off)
      break;
    if (Tok.isAtStartOfLine())
      InDirective = Tok.is(tok::hash);
    if (InDirective || Tok.isNot(tok::raw_identifier))
      continue;
    if (isTargetAttributeSpelling(Tok.getRawIdentifier(), 0))
      Targets.push_back({At, Tok.getLength()});
  }
  if (Targets.empty())
    return false;
  std::string Spelled;
  for (auto [At, Len] : Targets)
    Spelled += (Spelled.empty() ? "" : " ") + Buf.substr(At, Len).str();
  std::string Name = Old->getNameAsString();
  for (auto [At, Len] : Targets) {
    SourceLocation TL = L.getLocWithOffset(int(At) - int(Off));
    if (At == Targets.front().first)
      addEdit(SM, TL, Len, "",
              "removed '" + Spelled + "' from a redeclaration of '" + Name +
                  "' (nvcc merges a __host__ __device__ redeclaration with "
                  "the function's earlier declaration; clang's __device__ '" +
                  Name + "' is its device side)");
    else
      Edits.push_back({pathOf(SM, FID), At, Len, ""});
  }
  return true;
}

bool DiagnosticRecorder::repairAsmOperandComma(const Diagnostic &Info) {
  const SourceManager &SM = Info.getSourceManager();
  SourceLocation L = Info.getLocation();
  std::optional<FileSpot> Spot = fileSpot(SM, L);
  if (!Spot)
    return false;
  auto [FID, Buf, Off] = *Spot;
  // At a constraint string, right after an operand's `)`, inside an asm
  // statement's operand lists (a `:` since the `asm`, no `;` between).
  if (Off >= Buf.size() || Buf[Off] != '"')
    return false;
  StringRef Before = Buf.substr(0, Off).rtrim();
  if (!Before.ends_with(")"))
    return false;
  // The nearest `asm` before it whose parentheses are still open here at
  // depth 1, with a `:` at that depth (strings lexed as strings: PTX
  // holds `;` and braces).
  size_t Asm = Before.size();
  bool InOperands = false;
  for (unsigned Tries = 0; Tries < 4 && !InOperands; ++Tries) {
    Asm = Before.substr(0, Asm).rfind("asm");
    if (Asm == StringRef::npos || Off - Asm > 4096)
      return false;
    Lexer Raw(SM.getLocForStartOfFile(FID), LangOpts, Buf.begin(),
              Buf.begin() + Asm, Buf.end());
    Token Tok;
    int Depth = 0;
    bool Colon = false;
    while (!Raw.LexFromRawLexer(Tok) &&
           SM.getFileOffset(Tok.getLocation()) < Off) {
      if (Tok.is(tok::l_paren))
        ++Depth;
      else if (Tok.is(tok::r_paren) && --Depth <= 0)
        break;
      else if ((Tok.is(tok::colon) || Tok.is(tok::coloncolon)) && Depth == 1)
        Colon = true;
      else if (Tok.is(tok::semi) && Depth == 0)
        break;
    }
    InOperands = Depth == 1 && Colon &&
                 SM.getFileOffset(Tok.getLocation()) >= Off;
  }
  if (!InOperands)
    return false;
  addEdit(SM, L, 0, ", ",
          "added ',' between asm operands (nvcc accepts the operands "
          "without it)");
  return true;
}

/// `h = {};` for a CUDA 16-bit float type: clang finds its copy, move and
/// `__half2_raw` assignments equally good for `{}` (the headers declare
/// several), EDG picks one. Every candidate assigns zero, so the braces get
/// the type's name (`h = __half2{};`). Only for these toolkit types, where
/// that is known: for a class of its own an assignment from `{}` may mean
/// different things depending on the overload.
bool DiagnosticRecorder::repairEmptyBracesAssignment(const Diagnostic &Info) {
  if (Info.getNumArgs() < 3 ||
      Info.getArgKind(1) != DiagnosticsEngine::ak_qualtype)
    return false;
  StringRef Op;
  if (Info.getArgKind(0) == DiagnosticsEngine::ak_std_string)
    Op = Info.getArgStdStr(0);
  else if (Info.getArgKind(0) == DiagnosticsEngine::ak_c_string)
    Op = Info.getArgCStr(0);
  if (Op != "=")
    return false;
  QualType T = QualType::getFromOpaquePtr(
      reinterpret_cast<void *>(Info.getRawArg(1)));
  if (T.isNull())
    return false;
  const auto *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!RD || !RD->getIdentifier() ||
      !RD->getDeclContext()->getRedeclContext()->isTranslationUnit())
    return false;
  StringRef Name = RD->getName();
  if (Name != "__half" && Name != "__half2" && Name != "__nv_bfloat16" &&
      Name != "__nv_bfloat162")
    return false;
  const SourceManager &SM = Info.getSourceManager();
  std::optional<FileSpot> Spot = fileSpot(SM, Info.getLocation());
  if (!Spot)
    return false;
  auto [FID, Buf, Off] = *Spot;
  StringRef Rest = Buf.drop_front(Off);
  if (!Rest.consume_front("="))
    return false;
  StringRef Braces = Rest.ltrim();
  unsigned BraceOff = Off + 1 + (Rest.size() - Braces.size());
  if (!Braces.consume_front("{") || !Braces.ltrim().starts_with("}"))
    return false;
  addEdit(SM, Info.getLocation().getLocWithOffset(BraceOff - Off), 0,
          Name.str(),
          "named the type of '= {}' (" + Name.str() +
              "{}: clang finds the assignment ambiguous, nvcc's choice "
              "assigns zero as this does)");
  return true;
}

/// A struct with an array of restrict-qualified pointers
/// (`const void *__restrict__ ptrs[8];`, SGLang's custom all-reduce
/// RankData) cannot be copied in clang: its implicit copy assignment copies
/// the array with a memcpy whose `void *` parameter will not take the
/// array's address, and the error points at the struct's name. nvcc copies
/// it. Clang gives `restrict` no meaning on a member (only a parameter's
/// becomes `noalias`), so the member's `__restrict__` is dropped in memory.
bool DiagnosticRecorder::repairRestrictArrayCopy(const Diagnostic &Info) {
  if (Info.getNumArgs() < 4 ||
      Info.getArgKind(3) != DiagnosticsEngine::ak_qualtype)
    return false;
  QualType From = QualType::getFromOpaquePtr(
      reinterpret_cast<void *>(Info.getRawArg(3)));
  const auto *PT = From.isNull() ? nullptr : From->getAs<PointerType>();
  const ArrayType *AT =
      PT ? PT->getPointeeType()->getAsArrayTypeUnsafe() : nullptr;
  if (!AT || !AT->getElementType().isRestrictQualified())
    return false;
  const SourceManager &SM = Info.getSourceManager();
  std::optional<FileSpot> Spot = fileSpot(SM, Info.getLocation());
  if (!Spot)
    return false;
  auto [FID, Buf, Off] = *Spot;
  // At the struct's name: its body is the next `{`, with no `;` before it.
  Lexer Raw(SM.getLocForStartOfFile(FID), LangOpts, Buf.begin(),
            Buf.begin() + Off, Buf.end());
  Token Tok;
  unsigned Depth = 0;
  bool InBody = false;
  // Per member declaration: the restrict keywords followed by a name and
  // `[`.
  std::vector<std::pair<unsigned, unsigned>> Restricts;
  std::vector<Token> Decl;
  while (!Raw.LexFromRawLexer(Tok)) {
    if (!InBody) {
      if (Tok.is(tok::semi))
        return false;
      if (Tok.is(tok::l_brace)) {
        InBody = true;
        Depth = 1;
      }
      continue;
    }
    if (Tok.isOneOf(tok::l_brace, tok::l_paren))
      ++Depth;
    else if (Tok.isOneOf(tok::r_brace, tok::r_paren) && --Depth == 0)
      break;
    if (Depth != 1)
      continue;
    if (!Tok.is(tok::semi)) {
      Decl.push_back(Tok);
      continue;
    }
    for (size_t I = 0; I + 2 < Decl.size(); ++I)
      if (Decl[I].is(tok::raw_identifier) &&
          (Decl[I].getRawIdentifier() == "__restrict__" ||
           Decl[I].getRawIdentifier() == "__restrict") &&
          Decl[I + 1].is(tok::raw_identifier) && Decl[I + 2].is(tok::l_square))
        Restricts.push_back({SM.getFileOffset(Decl[I].getLocation()),
                             Decl[I].getLength()});
    Decl.clear();
  }
  if (Restricts.empty())
    return false;
  for (auto [At, Len] : Restricts) {
    if (At == Restricts.front().first)
      addEdit(SM, Info.getLocation().getLocWithOffset(int(At) - int(Off)),
              Len, "",
              "removed '" + Buf.substr(At, Len).str() +
                  "' from an array member (clang cannot copy a struct with "
                  "an array of restrict pointers, nvcc can; clang gives a "
                  "member's restrict no meaning)");
    else
      Edits.push_back({pathOf(SM, FID), At, Len, ""});
  }
  return true;
}

bool DiagnosticRecorder::repair(const Diagnostic &Info) {
  const SourceManager &SM = Info.getSourceManager();
  unsigned ID = Info.getID();
  // Its fix-it ("did you mean to call it?") is not what nvcc does.
  if (ID == diag::err_ovl_unresolvable)
    return repairWithoutFixIt(Info);
  // EDG takes a dependent member template or type without the keyword the
  // standard asks for; clang says where the keyword goes.
  if (ID == diag::err_template_kw_missing ||
      ID == diag::err_missing_dependent_template_keyword ||
      ID == diag::err_typename_missing ||
      ID == diag::err_typename_missing_template) {
    ArrayRef<FixItHint> Hints = Info.getFixItHints();
    if (Hints.empty())
      return repairWithoutFixIt(Info);
    for (const FixItHint &H : Hints) {
      CharSourceRange R = H.RemoveRange;
      if (R.isInvalid() || R.getBegin().isMacroID() ||
          R.getEnd().isMacroID() ||
          SM.getFileID(R.getBegin()) != SM.getFileID(R.getEnd()) ||
          pathOf(SM, SM.getFileID(R.getBegin())).empty())
        return false;
    }
    for (const FixItHint &H : Hints) {
      CharSourceRange R = H.RemoveRange;
      unsigned B = SM.getFileOffset(R.getBegin());
      unsigned E = SM.getFileOffset(R.getEnd());
      if (R.isTokenRange())
        E += Lexer::MeasureTokenLength(R.getEnd(), SM, LangOpts);
      std::string What =
          H.CodeToInsert.empty()
              ? "removed '" +
                    SM.getBufferData(SM.getFileID(R.getBegin()))
                        .substr(B, E - B)
                        .str() +
                    "'"
              : "added '" + StringRef(H.CodeToInsert).trim().str() + "'";
      addEdit(SM, R.getBegin(), E - B, H.CodeToInsert,
              What + " (nvcc accepts the code without it)");
    }
    return true;
  }
  // nvcc passes `%name` (a PTX special register such as %globaltimer)
  // through inline asm as it is; clang wants `%%` where an asm has operands.
  if (ID == diag::err_asm_invalid_escape) {
    SourceLocation L = SM.getSpellingLoc(Info.getLocation());
    FileID FID = SM.getFileID(L);
    if (pathOf(SM, FID).empty())
      return false;
    StringRef Buf = SM.getBufferData(FID);
    unsigned Off = SM.getFileOffset(L);
    for (unsigned Back = 0; Back <= 2 && Back <= Off; ++Back) {
      unsigned At = Off - Back;
      if (At < Buf.size() && Buf[At] == '%' &&
          (At + 1 >= Buf.size() || isAlpha(Buf[At + 1]))) {
        addEdit(SM, L.getLocWithOffset(-int(Back)), 0, "%",
                "wrote '%" +
                    Buf.substr(At + 1).take_while(isAlnum).str() +
                    "' as '%%" +
                    Buf.substr(At + 1).take_while(isAlnum).str() +
                    "' in inline asm (nvcc reads '%' before a name as it "
                    "is)");
        return true;
      }
    }
    return false;
  }
  if (ID == diag::err_cuda_ovl_target)
    return repairTargetRedeclaration(Info);
  // EDG takes asm operands without the comma between them
  // (`::"r"(v) "l"(p)`, cuda-samples' conjugateGradientMultiDeviceCG);
  // clang stops at the second constraint string, expecting `)`.
  if (ID == diag::err_expected)
    return repairAsmOperandComma(Info);
  if (ID == diag::err_ovl_ambiguous_oper_binary)
    return repairEmptyBracesAssignment(Info);
  if (ID == diag::err_init_conversion_failed)
    return repairRestrictArrayCopy(Info);
  // A kernel launched from device code: nvcc builds that do it pass
  // -rdc=true, which the flags given may not say.
  if (ID == diag::err_cuda_device_kernel_launch_require_rdc) {
    if (!NeedsRdc && Info.getLocation().isValid())
      Repairs.push_back({where(SM, Info.getLocation()),
                         "added -fgpu-rdc (a kernel is launched from device "
                         "code: dynamic parallelism)"});
    NeedsRdc = true;
    return true;
  }
  return false;
}

namespace {
/// Every function body in the translation unit, template patterns and
/// lambdas included (an error in a template's instantiation points into its
/// pattern).
class BodyCollector : public RecursiveASTVisitor<BodyCollector> {
public:
  explicit BodyCollector(const SourceManager &SM) : SM(SM) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }
  bool VisitFunctionDecl(FunctionDecl *FD) {
    add(FD);
    return true;
  }
  bool VisitLambdaExpr(LambdaExpr *LE) {
    add(LE->getCallOperator());
    return true;
  }
  struct Body {
    const FunctionDecl *FD;
    SourceLocation Begin, End; ///< Expansion locations of { and }.
  };
  std::vector<Body> Bodies;

private:
  void add(const FunctionDecl *FD) {
    if (!FD || !FD->doesThisDeclarationHaveABody())
      return;
    const Stmt *B = FD->getBody();
    if (!B || B->getBeginLoc().isInvalid() || B->getEndLoc().isInvalid())
      return;
    Bodies.push_back({FD, SM.getExpansionLoc(B->getBeginLoc()),
                      SM.getExpansionLoc(B->getEndLoc())});
  }
  const SourceManager &SM;
};
} // namespace

static bool isDeviceSide(const FunctionDecl *FD) {
  return FD->hasAttr<CUDADeviceAttr>() || FD->hasAttr<CUDAGlobalAttr>();
}

static std::string functionName(const FunctionDecl *FD,
                                const SourceManager &SM) {
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD))
    if (MD->getParent()->isLambda())
      return "lambda at " + where(SM, FD->getLocation(), false);
  return FD->getQualifiedNameAsString();
}

std::optional<HostTriage>
triageHostErrors(ASTContext &Ctx, const std::vector<ErrorRecord> &Errors) {
  const SourceManager &SM = Ctx.getSourceManager();
  BodyCollector BC(SM);
  BC.TraverseDecl(Ctx.getTranslationUnitDecl());

  // Each error's outermost enclosing function, which must be host-only, as
  // must every function between it and the error.
  std::map<const FunctionDecl *, std::vector<const ErrorRecord *>> ByFunction;
  std::vector<const FunctionDecl *> Order;
  for (const ErrorRecord &E : Errors) {
    if (E.Loc.isInvalid())
      return std::nullopt;
    SourceLocation L = SM.getExpansionLoc(E.Loc);
    const BodyCollector::Body *Outer = nullptr;
    for (const BodyCollector::Body &B : BC.Bodies) {
      if (!SM.isPointWithin(L, B.Begin, B.End))
        continue;
      if (isDeviceSide(B.FD))
        return std::nullopt;
      if (!Outer || SM.isBeforeInTranslationUnit(B.Begin, Outer->Begin))
        Outer = &B;
    }
    if (!Outer)
      return std::nullopt;
    if (!ByFunction.count(Outer->FD))
      Order.push_back(Outer->FD);
    ByFunction[Outer->FD].push_back(&E);
  }

  HostTriage T;
  for (const FunctionDecl *FD : Order) {
    const Stmt *Body = FD->getBody();
    SourceLocation B = Body->getBeginLoc(), E = Body->getEndLoc();
    // A body written by a macro cannot be stubbed in the text.
    if (B.isMacroID() || E.isMacroID() || SM.getFileID(B) != SM.getFileID(E))
      return std::nullopt;
    FileID FID = SM.getFileID(B);
    std::string Path = pathOf(SM, FID);
    if (Path.empty())
      return std::nullopt;
    unsigned BO = SM.getFileOffset(B), EO = SM.getFileOffset(E) + 1;
    StringRef Buf = SM.getBufferData(FID);
    // Host bodies are never compiled for the device; this only has to
    // parse. The line count stays, so later diagnostics keep their lines.
    std::string Stub = "{ __builtin_unreachable(); }" +
                       std::string(Buf.substr(BO, EO - BO).count('\n'), '\n');
    T.Stubs.push_back({Path, BO, EO - BO, Stub});
    T.Texts.emplace(Path, Buf.str());
    const std::vector<const ErrorRecord *> &Errs = ByFunction[FD];
    SkippedHostCode S;
    S.Function = functionName(FD, SM);
    S.Where = where(SM, FD->getLocation(), false);
    S.FirstError = Errs.front()->Formatted;
    S.Message = Errs.front()->Message;
    S.Errors = Errs.size();
    T.Skipped.push_back(std::move(S));
  }
  return T;
}

std::map<std::string, std::vector<TextEdit>>
applyEdits(FileOverlay &Files, std::vector<SourceEdit> Edits,
           const FileOverlay &Texts) {
  std::map<std::string, std::vector<TextEdit>> Applied;
  std::sort(Edits.begin(), Edits.end());
  std::map<std::string, std::vector<const SourceEdit *>> ByFile;
  for (const SourceEdit &E : Edits)
    ByFile[E.Path].push_back(&E);
  for (auto &[Path, Es] : ByFile) {
    auto It = Texts.find(Path);
    if (It == Texts.end())
      continue;
    std::string Text = It->second;
    // From the end, so earlier offsets stay valid; an edit that overlaps
    // the one after it is left out.
    unsigned Limit = Text.size() + 1;
    for (auto R = Es.rbegin(); R != Es.rend(); ++R) {
      const SourceEdit &E = **R;
      if (E.Offset + E.Length > Text.size() ||
          E.Offset + E.Length > Limit)
        continue;
      Text.replace(E.Offset, E.Length, E.Text);
      Limit = E.Offset;
      Applied[Path].push_back({E.Offset, E.Length, E.Text});
    }
    std::reverse(Applied[Path].begin(), Applied[Path].end());
    Files[Path] = std::move(Text);
  }
  return Applied;
}

bool absorbRepairs(DeviceView &View, const DiagnosticRecorder &Rec) {
  bool Progress = false;
  if (!Rec.edits().empty()) {
    for (auto &[Path, Es] : applyEdits(View.Files, Rec.edits(), Rec.texts())) {
      View.Given.try_emplace(Path, Rec.texts().at(Path));
      View.RepairEdits[Path].push_back(std::move(Es));
    }
    Progress = true;
  }
  if (Rec.needsRdc() && !llvm::is_contained(View.ExtraFlags, "-fgpu-rdc")) {
    View.ExtraFlags.push_back("-fgpu-rdc");
    Progress = true;
  }
  if (Progress)
    View.Repairs.insert(View.Repairs.end(), Rec.repairs().begin(),
                        Rec.repairs().end());
  return Progress;
}

} // namespace astra
