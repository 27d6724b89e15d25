//===- SpecText.h - Finding values in spec text ---------------*- C++ -*-===//
//
// Edits of a spec file keep its comments and formatting, so they are made on
// the text at the places the parser recorded (KernelSpec::FieldLocations).
// Internal to lib/Spec.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_SPEC_SPECTEXT_H
#define ASTRA_LIB_SPEC_SPECTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace astra {

/// The end (one past the closing bracket) of the object or array that opens
/// at \p B in \p T, skipping strings and comments; npos when it does not
/// close.
size_t endOfObject(llvm::StringRef T, size_t B);

/// The offset of 1-based \p Line and \p Col in \p T; npos past the end.
size_t offsetOf(llvm::StringRef T, unsigned Line, unsigned Col);

} // namespace astra

#endif
