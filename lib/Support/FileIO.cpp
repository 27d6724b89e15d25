//===- FileIO.cpp ---------------------------------------------------------===//
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;

namespace astra {

Error checkReadableFile(StringRef Path) {
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(Path, St))
    return createStringError(EC, "%s: cannot open: %s", Path.str().c_str(),
                             EC.message().c_str());
  if (sys::fs::is_directory(St))
    return createStringError(inconvertibleErrorCode(),
                             "%s: is a directory, not a source file",
                             Path.str().c_str());
  if (std::error_code EC = sys::fs::access(Path, sys::fs::AccessMode::Exist))
    return createStringError(EC, "%s: cannot open: %s", Path.str().c_str(),
                             EC.message().c_str());
  int FD;
  if (std::error_code EC = sys::fs::openFileForRead(Path, FD))
    return createStringError(EC, "%s: cannot read: %s", Path.str().c_str(),
                             EC.message().c_str());
  sys::Process::SafelyCloseFileDescriptor(FD);
  return Error::success();
}

Expected<std::string> readFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(), "%s: cannot read: %s",
                             Path.str().c_str(),
                             Buf.getError().message().c_str());
  return (*Buf)->getBuffer().str();
}

Error writeFileAtomically(StringRef Path, StringRef Contents) {
  SmallString<256> Dir(Path);
  sys::path::remove_filename(Dir);
  if (Dir.empty())
    Dir = ".";
  SmallString<256> Model(Dir);
  sys::path::append(Model, "." + sys::path::filename(Path) + ".astra-%%%%%%");
  int FD;
  SmallString<256> Tmp;
  if (std::error_code EC = sys::fs::createUniqueFile(Model, FD, Tmp))
    return createStringError(EC, "%s: cannot create a temporary file in '%s': %s",
                             Path.str().c_str(), Dir.c_str(),
                             EC.message().c_str());
  {
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.flush();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      sys::fs::remove(Tmp);
      return createStringError(EC, "%s: write failed: %s", Tmp.c_str(),
                               EC.message().c_str());
    }
  }
  sys::fs::file_status St;
  if (!sys::fs::status(Path, St))
    sys::fs::setPermissions(Tmp, St.permissions());
  if (std::error_code EC = sys::fs::rename(Tmp, Path)) {
    sys::fs::remove(Tmp);
    return createStringError(EC, "%s: cannot replace the file: %s",
                             Path.str().c_str(), EC.message().c_str());
  }
  return Error::success();
}

std::string cacheRootDirectory() {
  if (const char *E = std::getenv("ASTRA_CACHE_DIR"); E && *E)
    return E;
  // The XDG spec says a relative $XDG_CACHE_HOME is to be ignored.
  if (const char *E = std::getenv("XDG_CACHE_HOME");
      E && *E && sys::path::is_absolute(E))
    return (Twine(E) + "/clang-astra").str();
  SmallString<256> Home;
  if (sys::path::home_directory(Home)) {
    sys::path::append(Home, ".cache", "clang-astra");
    return std::string(Home);
  }
  return "";
}

} // namespace astra
