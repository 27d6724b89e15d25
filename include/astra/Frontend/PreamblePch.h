//===- PreamblePch.h - Precompiled preambles of CUDA files -----*- C++ -*-===//
//
// A file's preamble is its leading block of `#include` lines (with the
// comments, blank lines, #define, #undef, #pragma and #if...#endif blocks
// of them among them). Real
// CUDA files spend most of a parse there (thrust, CUB, PyTorch); the code
// after it is what the tool works on. A preamble PCH holds the preamble
// parsed once, chained on the runtime PCH (ParseOptions::RuntimePch), so a
// parse reads only the rest of the file.
//
// Contract (docs/compile.md, "The preamble PCH"):
// - kept in the cache's pch/ folder as <key>.pch with <key>.pch.deps beside
//   it; the key is the compile command without its file, the working
//   directory, the file's folder, the runtime PCH and the preamble's text;
//   the .deps file lists every file the PCH read with a hash of its
//   contents, and a PCH is used only while each of them (as the parse sees
//   it: an in-memory overlay counts) still has that hash.
// - written to a temporary file and renamed, so concurrent runs share it;
// - a PCH that is missing, stale, corrupt or does not load only costs time:
//   the parse falls back to the runtime PCH (CudaParser.cpp), and a PCH
//   that failed to load is deleted so that the next parse builds it again.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_PREAMBLEPCH_H
#define ASTRA_FRONTEND_PREAMBLEPCH_H

#include "astra/Frontend/CudaParser.h"

#include <string>
#include <vector>

namespace astra {

/// The length in bytes of \p Text's preamble: its leading lines that are
/// comments, blank, or #include, #define, #undef, #pragma and whole
/// #if/#ifdef/#ifndef...#endif blocks of them, up to the end of the last
/// such line outside a block (at least one #include before it; else 0).
unsigned preambleSize(llvm::StringRef Text);

/// \p Text with its first \p Size bytes blanked (spaces, line ends kept):
/// what a parse with the preamble PCH reads, at the same offsets and lines.
std::string blankPreamble(llvm::StringRef Text, unsigned Size);

/// A preamble PCH ready to load.
struct Preamble {
  std::string Pch;
  /// The in-memory file the PCH was built from (the preamble's text, in the
  /// main file's folder so that `#include "x.h"` finds the same file); it
  /// must be in the overlay of every parse that loads the PCH.
  std::string Stub, StubText;
  unsigned Size = 0; ///< Bytes of the main file it covers.
  /// The main file (absolute) and its text with the preamble blanked.
  std::string MainFile, Blanked;
};

/// The preamble PCH for parsing \p Command (the file named last, as
/// \p Overlay or the disk has it) on top of \p RuntimePch: the cached one
/// when its files are unchanged, else built when \p Build is set (in
/// RuntimePch's folder). None when the file has no preamble, or the PCH is
/// missing and not to be built, or cannot be built (a ".failed" file beside
/// it says why; not retried). What happened goes to \p Notes.
/// \p Variant names text other than the files' own ("repaired") and is
/// part of the key. With \p Learn, a build that fails on errors nvcc-compat
/// repairs adds those repairs to *Learn as one more round (made to the
/// headers; a repair of the preamble's own lines is not learned): the
/// caller builds again from the repaired text instead of finding the same
/// repairs with full parses.
std::optional<Preamble> findPreamble(const std::vector<std::string> &Command,
                                     const FileOverlay &Overlay,
                                     llvm::StringRef RuntimePch, bool Build,
                                     std::vector<std::string> &Notes,
                                     llvm::StringRef Variant = "",
                                     DeviceView *Learn = nullptr);

/// The repairs a parse of \p Command needed (DeviceView's ExtraFlags,
/// Repairs, RepairEdits and Given), recorded beside the preamble PCHs as
/// <key>.repairs, so that later parses can use a preamble PCH built from
/// the repaired text: without it every parse of a file whose headers need
/// a repair would parse everything, twice.
void saveRepairs(const std::vector<std::string> &Command,
                 llvm::StringRef RuntimePch, const DeviceView &View);

/// The view saveRepairs recorded for \p Command, with Files being
/// \p Overlay plus the repaired text of each repaired file; none when there
/// is no record or a repaired file's text (as \p Overlay or the disk has
/// it) changed since.
std::optional<DeviceView> loadRepairs(const std::vector<std::string> &Command,
                                      const FileOverlay &Overlay,
                                      llvm::StringRef RuntimePch,
                                      std::vector<std::string> &Notes);

/// \p Overlay plus \p View's repaired files, with their repairs only (not
/// the host stubs): what a preamble PCH with repairs is built from.
FileOverlay repairedOverlay(const FileOverlay &Overlay, const DeviceView &View);

/// Deletes a preamble PCH that a parse could not use. One that did not load
/// (\p LoadFailed: corrupt, or built from other files) is built again by
/// the next parse; one whose parse failed where the parse without it
/// succeeds is not, while the file and the PCH's files stay unchanged.
void rejectPreamble(const Preamble &P, bool LoadFailed);

} // namespace astra

#endif
