//===- PtxCache.cpp -------------------------------------------------------===//
#include "PtxCache.h"
#include "astra/Config.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace astra {

/// First line of every entry; bump the number when the format changes.
/// Version 2 adds "warn" lines: what the compile left out (host code clang
/// rejects), shown again on a hit.
static constexpr StringLiteral Magic = "clang-astra ptx cache 2";

std::string toolchainFingerprint(const CudaToolchain &TC) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "astra=" << ASTRA_VERSION << "+" << ASTRA_GIT_REVISION
     << " llvm=" << ASTRA_LLVM_VERSION << " arch=" << TC.gpuArch()
     << " cuda=" << TC.cudaPath() << " resource=" << TC.resourceDir() << "\n";
  SmallVector<std::string, 6> Files = {
      (TC.cudaPath() + "/include/cuda.h").str(),
      (TC.cudaPath() + "/version.json").str(),
      (TC.cudaPath() + "/nvvm/libdevice/libdevice.10.bc").str(),
      (TC.resourceDir() + "/include/__clang_cuda_runtime_wrapper.h").str(),
  };
  for (const std::string &F : Files) {
    sys::fs::file_status St;
    OS << F << ": ";
    if (sys::fs::status(F, St))
      OS << "missing\n";
    else
      OS << St.getSize() << " "
         << St.getLastModificationTime().time_since_epoch().count() << "\n";
  }
  return S;
}

std::string compileKey(StringRef Fingerprint, ArrayRef<std::string> Command,
                       unsigned OptLevel, StringRef MainContents) {
  KeyHasher H;
  H.add(Magic);
  H.add(Fingerprint);
  // Relative -I paths in the command mean different files from another
  // directory, and the entry's file list would not notice.
  SmallString<256> Cwd;
  if (!sys::fs::current_path(Cwd))
    H.add(Cwd);
  H.add(std::to_string(Command.size()));
  for (const std::string &A : Command)
    H.add(A);
  H.add("-O" + std::to_string(OptLevel));
  H.add(MainContents);
  return H.hex();
}

std::string PtxCache::entryPath(StringRef Key) const {
  SmallString<256> P(Dir);
  sys::path::append(P, "ptx", Key.take_front(2), Key + ".entry");
  return std::string(P);
}

std::optional<CachedPtx> PtxCache::lookup(StringRef Key, vfs::FileSystem &FS,
                                          std::vector<std::string> &Notes) const {
  std::string Path = entryPath(Key);
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return std::nullopt;
  StringRef Rest = (*Buf)->getBuffer();
  auto Corrupt = [&](StringRef Why) -> std::optional<CachedPtx> {
    Notes.push_back(("ignoring corrupt PTX cache entry " + Path + " (" + Why +
                     "); it will be rewritten")
                        .str());
    return std::nullopt;
  };
  auto NextLine = [&]() {
    auto [Line, Tail] = Rest.split('\n');
    Rest = Tail;
    return Line;
  };
  if (NextLine() != Magic)
    return Corrupt("bad header");
  StringRef KeyLine = NextLine();
  if (!KeyLine.consume_front("key ") || KeyLine != Key)
    return Corrupt("wrong key");
  std::vector<CacheDep> Deps;
  StringRef Line;
  while ((Line = NextLine()).consume_front("dep ")) {
    auto [Hash, DepPath] = Line.split(' ');
    if (Hash.size() != 64 || DepPath.empty())
      return Corrupt("bad file line");
    Deps.push_back({DepPath.str(), Hash.str()});
  }
  CachedPtx Out;
  while (Line.consume_front("warn ")) {
    Out.Warnings.push_back(Line.str());
    Line = NextLine();
  }
  if (!Line.consume_front("ptx "))
    return Corrupt("no PTX line");
  uint64_t Size;
  auto [SizeText, Sum] = Line.split(' ');
  if (SizeText.getAsInteger(10, Size) || Sum.size() != 64)
    return Corrupt("bad PTX line");
  if (Rest.size() != Size || sha256Hex(Rest) != Sum)
    return Corrupt("PTX does not match its checksum");
  for (const CacheDep &D : Deps) {
    auto Now = FS.getBufferForFile(D.Path, /*FileSize=*/-1,
                                   /*RequiresNullTerminator=*/false);
    if (!Now || sha256Hex((*Now)->getBuffer()) != D.Hash)
      return std::nullopt;
  }
  Out.Ptx = Rest.str();
  return Out;
}

Error PtxCache::store(StringRef Key, ArrayRef<CacheDep> Deps, StringRef Ptx,
                      ArrayRef<std::string> Warnings) const {
  std::string Path = entryPath(Key);
  std::string Text;
  raw_string_ostream OS(Text);
  OS << Magic << "\nkey " << Key << "\n";
  for (const CacheDep &D : Deps) {
    // One line per file; a path that cannot be written so is not cached.
    if (StringRef(D.Path).contains('\n'))
      return createStringError(inconvertibleErrorCode(),
                               "cannot cache a compile that reads '%s'",
                               D.Path.c_str());
    OS << "dep " << D.Hash << " " << D.Path << "\n";
  }
  for (const std::string &W : Warnings)
    if (!StringRef(W).contains('\n'))
      OS << "warn " << W << "\n";
  OS << "ptx " << Ptx.size() << " " << sha256Hex(Ptx) << "\n" << Ptx;
  if (std::error_code EC =
          sys::fs::create_directories(sys::path::parent_path(Path)))
    return createStringError(EC, "cannot create the PTX cache directory '%s': %s",
                             sys::path::parent_path(Path).str().c_str(),
                             EC.message().c_str());
  return writeFileAtomically(Path, Text);
}

} // namespace astra
