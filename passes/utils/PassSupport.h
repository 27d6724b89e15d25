//===- PassSupport.h - Edits and template votes shared by passes -*- C++ -*-===//
//
// Helpers for passes that rewrite expressions inside a kernel body:
//
//  - TextEdit / EditSet: edits are collected per site (a site's edits apply
//    all together or not at all) and merged before they reach PassContext,
//    because nested sites (`a / b / c`, `__fdividef(` before `__expf`) put
//    several insertions at one offset, which tooling::Replacements refuses.
//  - kernelBodies / SiteVotes: a template kernel is edited in its pattern, but
//    only its instantiations show the types. Every instantiation votes on each
//    site (keyed by source location, which instantiations share with the
//    pattern); a site is rewritten only when every instantiation accepts it
//    with the same edits.
//  - Small AST queries several passes need (functions from system headers,
//    launch arguments, workload specs of a kernel, loop text).
// CUDA's built-ins and barriers are in CudaIdioms.h, whether code changes a
// variable in Mutation.h, where statements end and indentation in
// SourceText.h.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_PASSSUPPORT_H
#define ASTRA_PASSES_UTILS_PASSSUPPORT_H

#include "astra/Frontend/LaunchFacts.h"
#include "astra/Rewrite/Pass.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace astra {

/// One edit of file text: \p Length bytes at \p Begin (a file location)
/// become \p Text. Length 0 is an insertion.
struct TextEdit {
  clang::SourceLocation Begin;
  unsigned Length = 0;
  std::string Text;
  bool operator==(const TextEdit &O) const {
    return Begin == O.Begin && Length == O.Length && Text == O.Text;
  }
};

/// Edit of a char range; nullopt when the range is not plain, editable file
/// text (macro expansions, system headers, a range across files).
std::optional<TextEdit> makeEdit(const PassContext &PC,
                                 clang::CharSourceRange Range,
                                 llvm::StringRef Text);
std::optional<TextEdit> makeTokenEdit(const PassContext &PC,
                                      clang::SourceRange TokenRange,
                                      llvm::StringRef Text);
std::optional<TextEdit> makeInsertBefore(const PassContext &PC,
                                         clang::SourceLocation Loc,
                                         llvm::StringRef Text);
std::optional<TextEdit> makeInsertAfterToken(const PassContext &PC,
                                             clang::SourceLocation Loc,
                                             llvm::StringRef Text);

/// The edits of one pass over one kernel, merged before they are handed to
/// PassContext.
class EditSet {
public:
  /// Adds the edits of one site. Returns false, adding nothing, when one of
  /// them overlaps an edit of an earlier site. Insertions at the offset where
  /// another edit begins are kept in the order added, before that edit.
  bool addSite(const clang::SourceManager &SM,
               const std::vector<TextEdit> &Edits);
  /// Hands the merged edits to \p PC (one replacement per group of touching
  /// edits). Returns false when PassContext refused one.
  bool commit(PassContext &PC) const;
  bool empty() const { return Edits.empty(); }
  /// The edits, in the order they were added (HelperReach moves a helper's
  /// edits into its clone).
  std::vector<TextEdit> edits() const;

private:
  struct Entry {
    clang::FileID File;
    unsigned Offset, Length;
    std::string Text;
    clang::SourceLocation Loc;
  };
  std::vector<Entry> Edits;
};

/// A body that shows the kernel's types: an instantiation of a template
/// kernel (Label "scale<float>") or the kernel itself (Label empty).
struct KernelBody {
  const clang::FunctionDecl *FD = nullptr;
  std::string Label;
};

/// The bodies a rewrite of \p FD is judged on: the instantiations of a
/// function template that have bodies (explicit specializations have their
/// own text and are left out), or \p FD itself when it is not a template or
/// is never instantiated (then type-dependent code stays unresolved and
/// passes refuse it; neverInstantiated tells that case).
std::vector<KernelBody> kernelBodies(const clang::FunctionDecl *FD);

/// Whether \p Bodies (kernelBodies) is the pattern of a template never
/// instantiated: its calls and types are unresolved.
bool neverInstantiated(const std::vector<KernelBody> &Bodies);

/// `scale<float>`: how messages name one instantiation of a template.
std::string instantiationName(const clang::FunctionDecl *D,
                              const clang::LangOptions &LO);

/// The variable that a statement at the same place in \p FD declares:
/// maps a variable of an instantiation back to the template's pattern.
const clang::VarDecl *varAtSameLocation(const clang::FunctionDecl *FD,
                                        const clang::VarDecl *V);

/// Collects each body's decision per site, then rewrites the sites every body
/// accepts with identical edits.
class SiteVotes {
public:
  explicit SiteVotes(std::vector<KernelBody> Bodies)
      : Bodies(std::move(Bodies)) {}

  /// Body \p Body would rewrite the site at \p Loc with \p Edits.
  void accept(unsigned Body, clang::SourceLocation Loc, llvm::StringRef Kind,
              std::vector<TextEdit> Edits, std::string Message);
  /// Body \p Body cannot rewrite the site at \p Loc.
  void reject(unsigned Body, clang::SourceLocation Loc, llvm::StringRef Kind,
              std::string Message);
  /// Records fired/refused explanations and adds accepted sites to \p ES, in
  /// source order.
  void resolve(PassContext &PC, EditSet &ES) const;

  const std::vector<KernelBody> &bodies() const { return Bodies; }

private:
  struct Vote {
    unsigned Body;
    bool Ok;
    std::vector<TextEdit> Edits;
    std::string Message;
  };
  struct Site {
    clang::SourceLocation Loc;
    std::vector<Vote> Votes;
  };
  std::vector<KernelBody> Bodies;
  std::map<std::pair<unsigned, std::string>, Site> Sites;
};

/// True when \p FD is declared in a system header (the CUDA headers, clang's
/// CUDA wrappers, libm), i.e. it is the library function and not a user
/// function that happens to share its name.
bool isSystemFunction(const clang::SourceManager &SM,
                      const clang::FunctionDecl *FD);

/// The name of a function called through \p CE when it is a system function
/// (see isSystemFunction) at namespace scope (global or std); else empty.
llvm::StringRef systemCalleeName(const clang::SourceManager &SM,
                                 const clang::CallExpr *CE);

/// The name of the function \p CE calls when it is a library function
/// (systemCalleeName) or a compiler builtin without effects
/// (`__builtin_huge_valf()` behind INFINITY); else empty.
llvm::StringRef libraryCalleeName(const clang::SourceManager &SM,
                                  const clang::ASTContext &Ctx,
                                  const clang::CallExpr *CE);

/// The value of the integer expression \p E at a sample point: literals,
/// integer casts, unary `+`/`-` and `+ - * / % << >>` are evaluated here,
/// every other node (a variable, a CUDA built-in) by \p Leaf (given the
/// node without parentheses and the depth, to evaluate an initializer with
/// Depth + 1); nullopt when some part has no value. Passes measure an
/// index's strides with it.
std::optional<int64_t> evalIntAt(
    const clang::Expr *E,
    llvm::function_ref<std::optional<int64_t>(const clang::Expr *, unsigned)>
        Leaf,
    unsigned Depth = 0);

/// The launches of a kernel that this translation unit shows, with what
/// the code proves about each (astra/Frontend/LaunchFacts.h).
using KernelLaunches = LaunchFacts;
inline KernelLaunches findLaunches(clang::ASTContext &Ctx,
                                   const clang::FunctionDecl *Kernel) {
  return analyzeLaunches(Ctx, Kernel);
}

/// Records a refusal, and returns true, when the launches of \p KL are not
/// all this file's to change: the program may launch the kernel where the
/// file does not show it (LaunchFacts::Hidden: its address taken, a launch
/// in a template never instantiated, a declaration in a header, C linkage,
/// no launch at all), or a launch goes through a launch API (cudaLaunchKernel
/// and friends), which passes cannot edit (\p Loc: the kernel). Passes that
/// edit launch sites need every launch as a `<<<>>>`.
bool refuseUnlessAllLaunchesVisible(PassContext &PC, const KernelLaunches &KL,
                                    clang::SourceLocation Loc);

/// Records a refusal, and returns true, unless \p Specs (the kernel's
/// specs) is not empty and each marks the launch as the kernel's own
/// ("launch_tunable") with a grid: a pass that changes launch sites changes
/// the spec's launch the same way. \p Why says what the spec is needed for.
bool refuseUnlessLaunchIsOwn(PassContext &PC,
                             const std::vector<const KernelSpec *> &Specs,
                             clang::SourceLocation Loc, llvm::StringRef Why);

/// Whether launch arguments \p I and \p J may point into one buffer: they may
/// unless both are computed from known variables and share none.
bool launchArgsMayAlias(const clang::CUDAKernelCallExpr *E, unsigned I,
                        unsigned J);

/// A local of the thread itself: not __shared__, static, or a reference.
bool isOwnLocal(const clang::VarDecl *V);

/// Whether \p S changes something other than the thread's own locals (a
/// store through a pointer, an atomic, a call of a user function or of a
/// system function with an effect, a non-trivial constructor, inline asm,
/// a lambda): what code that a thread runs on behalf of another, or
/// speculatively, must not do.
bool hasNonLocalEffect(const clang::Stmt *S, const clang::SourceManager &SM);

/// Whether the system function \p Name has an effect beyond its result
/// (atomics, stores with cache hints, printf, fences, traps, ...).
bool systemCallHasEffect(llvm::StringRef Name);

/// The first statement under \p S that leaves it other than by finishing:
/// return, goto, a break of a loop or switch around \p S and, with
/// \p ContinueExits, a continue of a loop around it.
const clang::Stmt *findEarlyExit(const clang::Stmt *S, bool ContinueExits);

/// The expression as written in a launch's grid or block argument: through
/// the implicit conversion to dim3 (an integer), or the dim3 itself.
const clang::Expr *writtenDim3(const clang::Expr *G);

/// A launch argument (grid or block) as text pieces: the value of its x and
/// the whole argument.
struct LaunchDim {
  std::string X;    ///< An expression for the x size.
  std::string Rest; ///< ", y, z" of a dim3, or empty for an integer.
  bool IsInt = false;
  bool OneDim = false; ///< y and z are known to be 1.
};

/// Reads a launch argument: an integer, `dim3(x[, y[, z]])`, or a dim3 local
/// (never changed after its initialization); nullopt otherwise.
std::optional<LaunchDim> readDim(const PassContext &PC, const clang::Expr *Arg);

/// Adds to \p Out the local variables (of functions) that \p S reads,
/// and those their initializers read.
void localsRead(const clang::Stmt *S, std::set<const clang::VarDecl *> &Out);

/// A read of a local that launch argument \p Arg reads (directly or through
/// the initializers of such locals) other than by the configurations of
/// \p Launches and those initializers: a pass that edits the local's
/// declaration (block-size's `const int threads = 256;`) would change that
/// read too, another kernel's launch say. Null when there is none; \p Var
/// is then the local read elsewhere.
const clang::DeclRefExpr *
configLocalReadElsewhere(clang::ASTContext &Ctx, const clang::Expr *Arg,
                         llvm::ArrayRef<const clang::CUDAKernelCallExpr *> Launches,
                         const clang::VarDecl *&Var);

/// Whether a launch's grid or block argument \p Arg has side effects: its
/// written value, or a dim3's arguments (a dim3's constructor itself is
/// not one). Passes that write the argument into a condition read it twice.
bool launchDimHasSideEffects(const clang::Expr *Arg,
                             const clang::ASTContext &Ctx);

/// Evaluates an integer expression: a constant, or a local variable
/// initialized once and never changed whose initializer evaluates.
std::optional<int64_t> evalLaunchValue(const clang::Expr *E,
                                       const clang::ASTContext &Ctx,
                                       unsigned Depth = 0);

/// The three dimensions of a launch's block argument (a dim3 or an integer
/// converted to one), when they are compile-time constants.
std::optional<std::array<int64_t, 3>>
launchBlockDims(const clang::Expr *E, const clang::ASTContext &Ctx,
                unsigned Depth = 0);

/// The workload specs that describe \p K: PassOptions::Spec when set, else
/// every entry of PassOptions::Specs named after the kernel or one of its
/// instantiations ("scale<float>").
std::vector<const KernelSpec *> specsOf(const PassOptions &O,
                                        const KernelInfo &K);

/// The entry of \p Specs for one instantiation (Label "scale<float>"),
/// comparing names without blanks; the only entry when there is one.
const KernelSpec *specForBody(const std::vector<const KernelSpec *> &Specs,
                              llvm::StringRef Label);

/// The value of the integer constant expression \p E; nullopt when it is
/// not one (or is value-dependent).
std::optional<int64_t> constInt(const clang::ASTContext &Ctx,
                                const clang::Expr *E);

/// Whether values of type \p T move through one __shfl_*_sync: float,
/// double and the 32- and 64-bit integers.
bool isShuffleElementType(clang::QualType T);

/// The vector width vectorize wrote into \p FD (`constexpr int astra_vec =
/// 8;`; the smallest when there are several), or 0. Launch passes use it as
/// their default factor: after vectorize a thread does the work of that
/// many.
int64_t vectorWidth(const clang::FunctionDecl *FD,
                    const clang::ASTContext &Ctx);

/// The element type of the array variable \p V as written (`T` in a
/// template, so that every instantiation's edit has the same text), else as
/// printed.
std::string arrayElementTypeText(const PassContext &PC,
                                 const clang::VarDecl *V);

/// Whether \p A and \p B are the same expression (structurally, through
/// parentheses and implicit casts): the same load written twice.
bool sameExpr(const clang::ASTContext &Ctx, const clang::Expr *A,
              const clang::Expr *B);

/// Whether \p S refers to \p D anywhere.
bool mentionsDecl(const clang::Stmt *S, const clang::ValueDecl *D);

/// The combine step of an arg-max (or arg-min) reduction of (value, index)
/// pairs, keeping the larger (smaller) value and on equal values the lower
/// index:
///   if (NewVal > CurVal || (NewVal == CurVal && NewIdx < CurIdx)) {
///     CurVal = NewVal;
///     CurIdx = NewIdx;
///   }
/// Both orders of the operands of each comparison, of `||` and `&&` and of
/// the two assignments are accepted. This lexicographic combine is
/// commutative and associative over non-NaN values (a NaN compares false
/// both ways, so with one the order of the steps would matter), which lets
/// vectorize repartition the elements before it and warp-reduce reorder it.
struct ArgCombine {
  bool Max = true; ///< The larger value wins (else the smaller).
  const clang::Expr *CurVal = nullptr, *CurIdx = nullptr;
  const clang::Expr *NewVal = nullptr, *NewIdx = nullptr;
};

/// Matches \p If as an ArgCombine; nullopt otherwise, in particular when
/// ties go to the higher index, the comparison is not strict, or the new
/// pair reads the variables the step assigns.
std::optional<ArgCombine> matchArgCombine(const clang::ASTContext &Ctx,
                                          const clang::IfStmt *If);

/// How an expression uses the element an access names.
enum class Use { Read, Write, ReadWrite, Escape };

/// How \p ASE's element is used where it stands (\p PM: the parent map of
/// the enclosing body): read (a load, a copy, a const reference or const
/// method), written (`=`, copy assignment of a class element), read and
/// written (compound assignment, ++, a field assigned), or anything else
/// (address taken, bound to a non-const reference): Escape.
Use accessUse(const clang::ArraySubscriptExpr *ASE,
              const clang::ParentMap &PM);

/// Whether \p F is part of a loop vectorize or flat-vectorize wrote (the
/// chunk loop, its tail, or the original kept as the fallback): inside an
/// `if` whose block starts with `constexpr int astra_vec`. Such loops are
/// not vectorized again.
bool isVectorizedLoop(const clang::ForStmt *F, const clang::ParentMap &PM);

/// The text of a for loop that a vector pass replaces: the file buffer and
/// offsets of the `for`, the end of the `)` closing the header, the body's
/// start and the end of the loop (past its `;` or `}`), and the loop's
/// indentation and one level as its body uses it ("  " when it cannot
/// tell).
struct LoopText {
  llvm::StringRef Buf;
  unsigned Begin = 0, RParenEnd = 0, BodyBegin = 0, End = 0;
  std::string Indent, Unit;
};

/// \p L's LoopText; nullopt, with \p Why set, when the loop comes from a
/// macro expansion or its text is not in one piece in one file. (The loop
/// may end in a macro argument, `out[j] = F(in[j]);`: what must be plain
/// file text is the loop as it is written, not its last token.)
std::optional<LoopText> loopText(const PassContext &PC,
                                 const clang::ForStmt *L, std::string &Why);

/// Copies the \p Count words of type \p VT (uint4, uint2) from \p Src to
/// \p Dst: one assignment when Count is "1", else an unrolled loop over
/// \p Q. Lines start at \p Indent; the loop's body one \p Unit deeper.
std::string vectorCopyText(llvm::StringRef Indent, llvm::StringRef Unit,
                           llvm::StringRef VT, llvm::StringRef Count,
                           llvm::StringRef Q, llvm::StringRef Dst,
                           llvm::StringRef Src);

/// \p T as an operand of generated code: as is when it is a name, a number
/// or a member access, else parenthesized.
std::string operand(llvm::StringRef T);

/// "<file:line:col>" of \p Loc for messages.
std::string posText(const PassContext &PC, clang::SourceLocation Loc);

} // namespace astra

#endif
