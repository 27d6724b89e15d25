//===- SourceText.h - Statement ends, indentation, new names ---*- C++ -*-===//
//
// Passes write source text: they insert before and after statements, copy
// lines at a new depth and declare new variables. These helpers find the
// places and shape the text so that the output reads like the input.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_SOURCETEXT_H
#define ASTRA_PASSES_UTILS_SOURCETEXT_H

#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>

namespace clang {
class ASTContext;
class LangOptions;
} // namespace clang

namespace astra {

/// Just past the last character of \p S: past the `;` that ends an
/// expression, return, declaration or do-while statement (which is not part
/// of the Stmt's source range), or past its `}`. The body of an if (its
/// else), a loop, a switch, a label or an attribute (`#pragma unroll`) is
/// looked into. A statement that ends in a macro expansion ends where the
/// expansion does. Invalid when no `;` follows where one must.
clang::SourceLocation endOfStatement(const clang::Stmt *S,
                                     const clang::SourceManager &SM,
                                     const clang::LangOptions &LO);

/// The indentation (leading blanks) of the line holding \p Loc's expansion
/// location.
std::string lineIndent(clang::SourceLocation Loc,
                       const clang::SourceManager &SM);

/// Whether only blanks precede \p Loc's expansion location on its line (it
/// begins the line's text, so lineIndent is its own indentation).
bool startsLine(clang::SourceLocation Loc, const clang::SourceManager &SM);

/// \p Text with \p Indent added after every newline (except before blank
/// lines). Text with line continuations or raw strings is returned as is,
/// since new spaces could land inside a literal.
std::string reindent(llvm::StringRef Text, llvm::StringRef Indent);

/// An identifier that occurs nowhere in the translation unit (Ctx.Idents
/// holds every identifier the lexer saw, macros and system headers
/// included) and is not in \p Taken: Base, Base1, Base2, ... A declaration
/// with such a name can neither shadow nor be shadowed by a user's name.
std::string freshIdentifier(const clang::ASTContext &Ctx, llvm::StringRef Base,
                            const std::set<std::string> &Taken = {});

} // namespace astra

#endif
