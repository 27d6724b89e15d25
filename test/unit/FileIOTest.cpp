#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace astra;
using namespace llvm;

namespace {

class TempDir {
public:
  TempDir() { sys::fs::createUniqueDirectory("astra-fileio", Path); }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string file(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  SmallString<128> Path;
};

TEST(FileIO, AtomicWriteReplacesContentsAndLeavesNoTemporary) {
  TempDir D;
  std::string F = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(F, "old")));
  ASSERT_FALSE(bool(writeFileAtomically(F, "new contents")));
  auto Text = readFile(F);
  ASSERT_TRUE(bool(Text));
  EXPECT_EQ(*Text, "new contents");
  std::error_code EC;
  unsigned N = 0;
  for (sys::fs::directory_iterator It(D.Path, EC), E; !EC && It != E;
       It.increment(EC))
    ++N;
  EXPECT_EQ(N, 1u) << "a temporary file was left behind";
}

TEST(FileIO, AtomicWriteKeepsPermissions) {
  TempDir D;
  std::string F = D.file("script.sh");
  ASSERT_FALSE(bool(writeFileAtomically(F, "a")));
  ASSERT_FALSE(bool(sys::fs::setPermissions(F, sys::fs::perms(0750))));
  ASSERT_FALSE(bool(writeFileAtomically(F, "b")));
  sys::fs::file_status St;
  ASSERT_FALSE(bool(sys::fs::status(F, St)));
  EXPECT_EQ(St.permissions(), sys::fs::perms(0750));
}

TEST(FileIO, WriteIntoMissingDirectoryFailsWithPath) {
  TempDir D;
  std::string F = D.file("no/such/dir/k.cu");
  Error E = writeFileAtomically(F, "x");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("k.cu"), std::string::npos);
}

TEST(FileIO, ReadableFileChecks) {
  TempDir D;
  Error Missing = checkReadableFile(D.file("missing.cu"));
  ASSERT_TRUE(bool(Missing));
  EXPECT_NE(toString(std::move(Missing)).find("missing.cu"), std::string::npos);
  Error Dir = checkReadableFile(D.Path);
  ASSERT_TRUE(bool(Dir));
  EXPECT_NE(toString(std::move(Dir)).find("is a directory"), std::string::npos);
}

} // namespace
