//===- Capture.h - A program's launches, as `capture` recorded them -*- C++ -*-===//
//
// `clang-astra capture` writes a folder (astra/Capture/CaptureFormat.h,
// docs/capture.md): one manifest per process of the program, buffer contents
// as blobs, and a summary of the run. readCapture loads it into one view:
// the kernels, each with its distinct configurations (the launches of every
// process merged), ordered by how often the program made them. init-spec
// turns that into a spec (astra/Spec/CaptureSpec.h).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_CAPTURE_CAPTURE_H
#define ASTRA_CAPTURE_CAPTURE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// The allocation a pointer argument points into.
struct CapturedAllocation {
  uint64_t Base = 0, Size = 0, Offset = 0;
  std::string Memory; ///< "device", "managed" or "host".
  /// Bytes from the pointer to the allocation's end: all the kernel can
  /// reach through it without going before it.
  uint64_t extent() const { return Size - Offset; }
};

struct CapturedArg {
  /// The parameter's bytes as the kernel received them (little-endian).
  std::vector<uint8_t> Bytes;
  /// Set when the value is an address inside an allocation CUDA knows.
  std::optional<CapturedAllocation> Pointer;
  /// The contents from the pointer to the allocation's end, taken before
  /// the launch: a path relative to the capture folder; empty when not
  /// recorded (ContentsMissing says why).
  std::string Blob;
  uint64_t BlobSize = 0;
  std::string BlobHash; ///< contentHash as 16 hex digits.
  std::string ContentsMissing;

  /// The bytes as an integer of their width, sign-extended when \p Signed;
  /// nullopt for widths other than 1, 2, 4 and 8.
  std::optional<int64_t> asInt(bool Signed) const;
  /// The bytes as a float (4 bytes) or double (8 bytes).
  std::optional<double> asReal() const;
};

/// One distinct launch: configuration, scalars and buffer extents.
struct CapturedConfig {
  uint64_t Launches = 0;       ///< Every process's launches of it.
  uint64_t FailedLaunches = 0; ///< Launches the driver refused.
  uint64_t FirstLaunch = 0;    ///< Order of first appearance (its process's).
  std::string Api;             ///< "cuLaunchKernel", ...
  int64_t Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1};
  int64_t Shmem = 0;
  int64_t Cluster[3] = {0, 0, 0}; ///< Zero: no cluster.
  bool Cooperative = false;
  /// Launched into a CUDA graph being captured: its contents were not
  /// taken, and the count is the capture's, not the graph's replays.
  bool GraphCapture = false;
  std::vector<uint64_t> Streams;
  std::vector<CapturedArg> Args;

  /// Launches that ran (not refused by the driver).
  uint64_t goodLaunches() const {
    return Launches > FailedLaunches ? Launches - FailedLaunches : 0;
  }
};

struct CapturedKernel {
  std::string Symbol;    ///< The mangled name.
  std::string Demangled; ///< As the demangler prints the symbol.
  std::string Name;      ///< As a person writes it ("ns::k<float>").
  uint64_t Launches = 0, NotRecorded = 0;
  /// Launches the CUDA runtime made, when more than the driver's callbacks
  /// saw (some configurations may be missing).
  uint64_t RuntimeLaunches = 0;
  /// (offset, size) of each parameter, from the driver.
  std::vector<std::pair<uint64_t, uint64_t>> Params;
  std::string Error; ///< Why the parameters could not be read.
  /// Most launched first (ties: first launched first).
  std::vector<CapturedConfig> Configs;
};

/// capture.json: how the program ended, when `capture` saw it end.
struct CaptureRun {
  std::vector<std::string> Command;
  std::optional<int> ExitCode, Signal;
  double Seconds = 0;
};

struct Capture {
  std::string Dir;
  std::vector<CapturedKernel> Kernels; ///< By symbol.
  std::vector<std::string> Program;    ///< The first process's command line.
  std::vector<std::string> Devices;
  unsigned Processes = 0;
  /// Processes whose manifest was last written while they ran (killed, or
  /// still running): their counts may lag by up to a second.
  unsigned Unfinished = 0;
  uint64_t MaxBytes = 0, ContentsBytes = 0, ContentsSkipped = 0;
  std::optional<CaptureRun> Run; ///< Absent when capture.json is missing.
  /// What a reader should know: errors of the injection in a process, more
  /// runtime launches than recorded ones, parameters that could not be read.
  std::vector<std::string> Notes;
  /// Why the library could not record in a process ("libcupti could not be
  /// loaded ..."), one per such process, prefixed with its manifest.
  std::vector<std::string> InjectionErrors;

  const CapturedKernel *find(llvm::StringRef Symbol) const;
  /// The blob's path on disk.
  std::string blobPath(const CapturedArg &A) const;
};

/// Reads the capture folder \p Dir. Errors name the file and what is wrong:
/// a folder that holds no manifest, invalid or truncated JSON, another
/// format or version, a field of the wrong type.
llvm::Expected<Capture> readCapture(llvm::StringRef Dir);

/// Checks that \p A's blob is there and whole: its size and content hash
/// are the manifest's. The error names the file.
llvm::Error checkBlob(const Capture &C, const CapturedArg &A);

} // namespace astra

#endif
