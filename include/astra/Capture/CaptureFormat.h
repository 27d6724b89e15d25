//===- CaptureFormat.h - What a capture folder holds -----------*- C++ -*-===//
//
// `clang-astra capture` runs a user's program with an injection library of
// ours (lib/CaptureInject, loaded by the CUDA driver through
// CUDA_INJECTION64_PATH) that records the launches of the selected kernels.
// This header is what the library (plain C++, no LLVM) and the readers in
// clang-astra (lib/Capture) share: the file names, the environment the
// library reads its settings from, the format's version, the content hash
// that names the blobs, and how a kernel is selected by name.
//
// A capture folder (docs/capture.md has the field-by-field description):
//
//   DIR/capture.json         written by `clang-astra capture` once the program
//                            ended: the command, its exit status, a summary
//   DIR/launches-<pid>.json  one per process that initialized CUDA: every
//                            recorded kernel, each distinct configuration
//                            with its launch count, scalars and buffers;
//                            rewritten atomically (temporary file + rename)
//                            after every new configuration, at most a second
//                            after a count changed, and at exit, so it is
//                            valid whenever the program stops
//   DIR/blobs/<hash>.bin     buffer contents, named by their content hash;
//                            written before a manifest refers to them
//
// Every file is created with mode 0600 and the folders with 0700: captures
// are the user's data.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_CAPTURE_CAPTUREFORMAT_H
#define ASTRA_CAPTURE_CAPTUREFORMAT_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace astra {
namespace capture {

/// The "format" field of every file of a capture.
constexpr const char *FormatName = "clang-astra-capture";
/// The "version" this build writes and reads. A reader refuses others.
constexpr int FormatVersion = 1;

constexpr const char *SummaryFile = "capture.json";
constexpr const char *ManifestPrefix = "launches-";
constexpr const char *BlobDir = "blobs";
/// A cross-process budget counter (bytes of blobs written), locked with
/// flock, so that --max-bytes holds for a program of several processes.
constexpr const char *BudgetFile = ".budget";
/// The injection library's file name; clang-astra looks for it in
/// ../lib beside its own binary.
constexpr const char *LibraryName = "libastra-capture.so";

// The library's settings, set by `clang-astra capture` for the program.
constexpr const char *EnvDir = "ASTRA_CAPTURE_DIR";
/// Kernel selectors separated by newlines; unset or empty: every kernel.
constexpr const char *EnvKernels = "ASTRA_CAPTURE_KERNELS";
/// Bytes of buffer contents the capture may write (0: shapes only).
constexpr const char *EnvMaxBytes = "ASTRA_CAPTURE_MAX_BYTES";
/// Launches recorded per kernel (0: all); later ones are only counted.
constexpr const char *EnvMaxLaunches = "ASTRA_CAPTURE_MAX_LAUNCHES";
/// The libcupti to load (a path); unset: the loader's search.
constexpr const char *EnvCupti = "ASTRA_CAPTURE_CUPTI";

/// A 64-bit hash of \p Size bytes at \p Data that names a blob: eight
/// bytes at a time (a multiply-xorshift mix per word, as in wyhash and
/// xxhash), so hashing a buffer costs less than copying it off the GPU.
/// Not cryptographic: it tells contents apart, it does not authenticate them.
inline uint64_t contentHash(const void *Data, size_t Size) {
  const unsigned char *P = static_cast<const unsigned char *>(Data);
  const uint64_t K = 0x9e3779b97f4a7c15ULL;
  uint64_t H = 0x243f6a8885a308d3ULL ^ (uint64_t(Size) * K);
  auto Mix = [](uint64_t X) {
    X ^= X >> 33;
    X *= 0xff51afd7ed558ccdULL;
    X ^= X >> 33;
    X *= 0xc4ceb9fe1a85ec53ULL;
    X ^= X >> 33;
    return X;
  };
  size_t I = 0;
  for (; I + 8 <= Size; I += 8) {
    uint64_t W;
    std::memcpy(&W, P + I, 8);
    H = (H ^ Mix(W + K)) * 0x100000001b3ULL;
    H = (H << 27) | (H >> 37);
  }
  uint64_t Tail = 0;
  for (size_t J = 0; I + J < Size; ++J)
    Tail |= uint64_t(P[I + J]) << (8 * J);
  H = (H ^ Mix(Tail + K + Size)) * 0x100000001b3ULL;
  return Mix(H);
}

/// "0123456789abcdef": a hash as 16 lower-case hex digits.
inline std::string hashHex(uint64_t H) {
  static const char Digits[] = "0123456789abcdef";
  std::string S(16, '0');
  for (int I = 15; I >= 0; --I, H >>= 4)
    S[I] = Digits[H & 15];
  return S;
}

/// The blob of contents with hash \p H, relative to the capture folder.
inline std::string blobPath(uint64_t H) {
  return std::string(BlobDir) + "/" + hashHex(H) + ".bin";
}

/// The kernel's name as a person writes it, from the demangler's text of
/// its symbol: the parameter list and, for a template, the return type that
/// the Itanium mangling carries are dropped ("void ns::k<float>(float*,
/// int)" -> "ns::k<float>"). A name that is not a demangled function
/// (an extern "C" kernel's symbol) comes back unchanged.
inline std::string kernelNameOf(const std::string &Demangled) {
  // The parameter list: the last '(' at template depth 0.
  int Depth = 0;
  size_t Open = std::string::npos;
  for (size_t I = 0; I < Demangled.size(); ++I) {
    char C = Demangled[I];
    if (C == '<')
      ++Depth;
    else if (C == '>' && Depth > 0)
      --Depth;
    else if (C == '(' && Depth == 0) {
      Open = I;
      break;
    }
  }
  std::string Name = Demangled.substr(0, Open);
  // A return type before the name: the last space at depth 0.
  Depth = 0;
  size_t Space = std::string::npos;
  for (size_t I = 0; I < Name.size(); ++I) {
    char C = Name[I];
    if (C == '<')
      ++Depth;
    else if (C == '>' && Depth > 0)
      --Depth;
    else if (C == ' ' && Depth == 0)
      Space = I;
  }
  if (Space != std::string::npos)
    Name = Name.substr(Space + 1);
  return Name;
}

/// \p S without whitespace: template arguments compare as the spec's names
/// do ("scale<float,2>" is "scale<float, 2>").
inline std::string withoutSpaces(const std::string &S) {
  std::string Out;
  for (char C : S)
    if (C != ' ' && C != '\t' && C != '\n')
      Out += C;
  return Out;
}

/// Whether \p Selector (what --kernel gives) selects the kernel whose
/// symbol is \p Mangled and whose kernelNameOf is \p Name: the symbol
/// itself; the name, qualified or not, template arguments and all
/// ("ns::scale<float, 2>", "scale<float,2>"); or the name without template
/// arguments, which selects every instantiation ("scale", "ns::scale").
inline bool kernelSelected(const std::string &Selector,
                           const std::string &Mangled,
                           const std::string &Name) {
  if (Selector == Mangled)
    return true;
  std::string Sel = withoutSpaces(Selector), Full = withoutSpaces(Name);
  std::string Bare = Full.substr(0, Full.find('<'));
  auto Matches = [&](const std::string &Candidate) {
    if (Candidate == Sel)
      return true;
    // An unqualified selector matches the last component of a qualified
    // name ("k" selects "ns::k").
    return Candidate.size() > Sel.size() + 2 &&
           Candidate.compare(Candidate.size() - Sel.size(), Sel.size(),
                             Sel) == 0 &&
           Candidate.compare(Candidate.size() - Sel.size() - 2, 2, "::") == 0;
  };
  return Matches(Full) || Matches(Bare);
}

} // namespace capture
} // namespace astra

#endif
