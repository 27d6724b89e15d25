#include "astra/Support/FileIO.h"
#include "astra/Support/Hash.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <sys/stat.h>
#include <unistd.h>

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

std::string errorOf(Error E) { return E ? toString(std::move(E)) : ""; }

unsigned entries(StringRef Dir) {
  std::error_code EC;
  unsigned N = 0;
  for (sys::fs::directory_iterator It(Dir, EC), E; !EC && It != E;
       It.increment(EC))
    ++N;
  return N;
}

TEST(FileIO, SymlinkTargetIsReplacedAndTheLinkStays) {
  TempDir D;
  ASSERT_FALSE(bool(sys::fs::create_directory(D.file("real"))));
  std::string Target = D.file("real/k.cu"), Link = D.file("link.cu");
  ASSERT_FALSE(bool(writeFileAtomically(Target, "old")));
  ASSERT_FALSE(bool(sys::fs::create_link("real/k.cu", Link)));
  ASSERT_FALSE(bool(writeFileAtomically(Link, "new")));
  EXPECT_TRUE(sys::fs::is_symlink_file(Link));
  EXPECT_EQ(*readFile(Target), "new");
  EXPECT_EQ(entries(D.file("real")), 1u);
  // A dangling one is refused and nothing is created.
  ASSERT_FALSE(bool(sys::fs::create_link("nowhere.cu", D.file("dangling.cu"))));
  EXPECT_NE(errorOf(writeFileAtomically(D.file("dangling.cu"), "x"))
                .find("is a symbolic link to 'nowhere.cu', which does not "
                      "exist"),
            std::string::npos);
  EXPECT_FALSE(sys::fs::exists(D.file("nowhere.cu")));
}

TEST(FileIO, OnlyRegularFilesAreReplaced) {
  TempDir D;
  std::string Fifo = D.file("fifo");
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0644), 0);
  EXPECT_NE(errorOf(writeFileAtomically(Fifo, "x")).find("is a FIFO, not a "
                                                         "regular file"),
            std::string::npos);
  sys::fs::file_status St;
  ASSERT_FALSE(bool(sys::fs::status(Fifo, St)));
  EXPECT_EQ(St.type(), sys::fs::file_type::fifo_file);
  EXPECT_NE(errorOf(writeFileAtomically("/dev/null", "x"))
                .find("is a character device"),
            std::string::npos);
  EXPECT_NE(errorOf(writeFileAtomically(D.Path, "x")).find("is a directory"),
            std::string::npos);
}

TEST(FileIO, HardLinksAndReadOnlyFilesAreRefused) {
  TempDir D;
  std::string A = D.file("a.cu"), B = D.file("b.cu");
  ASSERT_FALSE(bool(writeFileAtomically(A, "old")));
  ASSERT_FALSE(bool(sys::fs::create_hard_link(A, B)));
  EXPECT_NE(errorOf(writeFileAtomically(A, "new")).find("has 2 hard links"),
            std::string::npos);
  EXPECT_EQ(*readFile(B), "old");
  std::string RO = D.file("ro.cu");
  ASSERT_FALSE(bool(writeFileAtomically(RO, "old")));
  ASSERT_FALSE(bool(sys::fs::setPermissions(RO, sys::fs::perms(0444))));
  EXPECT_NE(errorOf(writeFileAtomically(RO, "new"))
                .find("is read-only (mode 0444)"),
            std::string::npos);
  EXPECT_EQ(*readFile(RO), "old");
}

TEST(FileIO, OwnerAndGroupAreKept) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a file another owner";
  TempDir D;
  std::string F = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(F, "old")));
  ASSERT_EQ(::chown(F.c_str(), 4242, 4243), 0);
  ASSERT_FALSE(bool(writeFileAtomically(F, "new")));
  struct stat St;
  ASSERT_EQ(::stat(F.c_str(), &St), 0);
  EXPECT_EQ(St.st_uid, 4242u);
  EXPECT_EQ(St.st_gid, 4243u);
}

TEST(FileIO, AFileThatChangedIsLeftAlone) {
  TempDir D;
  std::string F = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(F, "parsed text")));
  std::string Parsed = sha256Hex("parsed text");
  ASSERT_FALSE(bool(writeFileAtomically(F, "the user's edit")));
  EXPECT_NE(errorOf(writeFileAtomically(F, "rewrite", Parsed))
                .find("changed on disk while clang-astra ran"),
            std::string::npos);
  EXPECT_EQ(*readFile(F), "the user's edit");
  EXPECT_EQ(entries(D.Path), 1u) << "a temporary file was left behind";
  // Unchanged: written.
  ASSERT_FALSE(bool(writeFileAtomically(F, "rewrite",
                                        sha256Hex("the user's edit"))));
  EXPECT_EQ(*readFile(F), "rewrite");
  // Removed meanwhile: not recreated.
  ASSERT_FALSE(bool(sys::fs::remove(F)));
  EXPECT_NE(errorOf(writeFileAtomically(F, "x", Parsed)).find("was removed"),
            std::string::npos);
  EXPECT_FALSE(sys::fs::exists(F));
}

TEST(FileIO, ReadsAreBounded) {
  auto Zero = readFile("/dev/zero", 1 << 20);
  ASSERT_FALSE(bool(Zero));
  EXPECT_EQ(toString(Zero.takeError()),
            "/dev/zero: holds more than 1048576 bytes, more than a file "
            "clang-astra reads may hold");
  TempDir D;
  std::string F = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(F, "12345")));
  auto Over = readFile(F, 4);
  ASSERT_FALSE(bool(Over));
  consumeError(Over.takeError());
  auto Fits = readFile(F, 5);
  ASSERT_TRUE(bool(Fits));
  EXPECT_EQ(*Fits, "12345");
}

} // namespace
