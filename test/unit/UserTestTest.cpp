// The pieces of `optimize --test`: the user's command in a process group of
// its own (ShellCommand), files changed so that they can be put back byte for
// byte whatever happens to the process (ReversibleWrite), and the test of a
// rewrite that joins them (UserTest).
#include "astra/Agents/UserTest.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/ReversibleWrite.h"
#include "astra/Support/ShellCommand.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <csignal>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace astra;
using namespace llvm;

namespace {

class TempDir {
public:
  TempDir() { sys::fs::createUniqueDirectory("astra-usertest", Path); }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string file(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  /// Every name in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> Out;
    std::error_code EC;
    for (sys::fs::directory_iterator It(Path, EC), E; !EC && It != E;
         It.increment(EC))
      Out.push_back(sys::path::filename(It->path()).str());
    std::sort(Out.begin(), Out.end());
    return Out;
  }
  SmallString<128> Path;
};

std::string read(StringRef P) {
  auto T = readFile(P);
  if (!T) {
    consumeError(T.takeError());
    return "<unreadable>";
  }
  return *T;
}

ShellCommandResult run(StringRef Cmd, ShellCommandOptions O, std::string &Out) {
  TempDir D;
  O.OutputPath = D.file("out.log");
  auto R = runShellCommand(Cmd, O);
  EXPECT_TRUE(bool(R)) << (R ? "" : toString(R.takeError()));
  Out = read(O.OutputPath);
  return R ? *R : ShellCommandResult();
}

/// Whether \p Pid runs: exists and is not a zombie (an orphan waits for
/// whatever reaps orphans here to collect it).
bool alive(pid_t Pid) {
  // Not readFile: /proc files say they are empty, and LLVM believes it.
  std::ifstream In("/proc/" + std::to_string(Pid) + "/stat");
  std::string Stat((std::istreambuf_iterator<char>(In)),
                   std::istreambuf_iterator<char>());
  size_t Paren = Stat.rfind(')');
  return Paren != std::string::npos && Paren + 2 < Stat.size() &&
         Stat[Paren + 2] != 'Z';
}

/// Whether \p Pid stops running within 2 s (a SIGKILL is delivered, not
/// waited for).
bool ends(pid_t Pid) {
  for (int I = 0; I < 200 && alive(Pid); ++I)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !alive(Pid);
}

// A CUDA file as editors on Windows leave it: CRLF line ends, no newline at
// the end, and a byte that is not UTF-8.
const char *const Crlf =
    "#include <cuda_runtime.h>\r\n__global__ void k(float *x) {\r\n"
    "  x[threadIdx.x] *= 2.0f; // \xb5s\r\n}";

} // namespace

TEST(ShellCommand, ExitCodeOutputEnvironmentAndDirectory) {
  TempDir D;
  ShellCommandOptions O;
  O.Directory = std::string(D.Path);
  O.Environment = {{"ASTRA_TEST_FILE", "/x/k.cu"}};
  std::string Out;
  ShellCommandResult R =
      run("echo \"$ASTRA_TEST_FILE\"; pwd; echo err >&2; exit 3", O, Out);
  EXPECT_EQ(R.ExitCode, 3);
  EXPECT_FALSE(R.passed());
  EXPECT_EQ(R.describe(), "exit 3");
  SmallString<128> Real;
  sys::fs::real_path(D.Path, Real);
  EXPECT_EQ(Out, "/x/k.cu\n" + std::string(Real) + "\nerr\n");
  EXPECT_TRUE(run("true", {}, Out).passed());
}

TEST(ShellCommand, StdinIsEmpty) {
  std::string Out;
  EXPECT_TRUE(run("cat; echo done", {}, Out).passed());
  EXPECT_EQ(Out, "done\n");
}

TEST(ShellCommand, MissingDirectoryIsExit127WithTheReason) {
  ShellCommandOptions O;
  O.Directory = "/nonexistent/astra-dir";
  std::string Out;
  ShellCommandResult R = run("true", O, Out);
  EXPECT_EQ(R.ExitCode, 127);
  EXPECT_NE(Out.find("cannot enter the test directory '/nonexistent/astra-dir'"),
            std::string::npos)
      << Out;
}

TEST(ShellCommand, SignalIsReported) {
  std::string Out;
  ShellCommandResult R = run("kill -SEGV $$", {}, Out);
  EXPECT_EQ(R.Signal, SIGSEGV);
  EXPECT_FALSE(R.passed());
  EXPECT_EQ(R.describe().rfind("killed by signal 11", 0), 0u) << R.describe();
}

// A hang is a failure, and the whole process group goes: the shell and a
// grandchild it started in the background.
TEST(ShellCommand, TimeoutKillsTheProcessGroup) {
  TempDir D;
  std::string Pids = D.file("pids");
  ShellCommandOptions O;
  O.TimeoutSeconds = 1;
  std::string Out;
  auto Start = std::chrono::steady_clock::now();
  ShellCommandResult R = run(
      "sleep 100 & echo $! > '" + Pids + "'; echo started; wait", O, Out);
  double Took = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              Start)
                    .count();
  EXPECT_TRUE(R.TimedOut);
  EXPECT_FALSE(R.passed());
  EXPECT_EQ(R.describe(),
            "timed out after 1 s (its process group was killed)");
  EXPECT_LT(Took, 10);
  EXPECT_EQ(Out, "started\n");
  ASSERT_TRUE(alive(getpid())); // The check itself works.
  pid_t Grandchild = std::stoi(read(Pids));
  EXPECT_TRUE(ends(Grandchild)) << "the background sleep outlived the test";
}

// A command that ignores SIGTERM is killed 2 s later.
TEST(ShellCommand, TimeoutEscalatesToSigkill) {
  ShellCommandOptions O;
  O.TimeoutSeconds = 1;
  std::string Out;
  auto Start = std::chrono::steady_clock::now();
  ShellCommandResult R =
      run("trap '' TERM; while :; do sleep 0.1; done", O, Out);
  double Took = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              Start)
                    .count();
  EXPECT_TRUE(R.TimedOut);
  EXPECT_EQ(R.Signal, SIGKILL);
  EXPECT_GE(Took, 2.5);
  EXPECT_LT(Took, 10);
}

// What a passing command leaves running in its group is ended with it.
TEST(ShellCommand, NothingOutlivesThePassingCommand) {
  TempDir D;
  std::string Pids = D.file("pids");
  std::string Out;
  ShellCommandResult R =
      run("sleep 100 & echo $! > '" + Pids + "'", {}, Out);
  EXPECT_TRUE(R.passed());
  EXPECT_TRUE(ends(std::stoi(read(Pids))));
}

TEST(ShellCommand, StopFlagEndsTheCommand) {
  volatile std::sig_atomic_t Stop = 1;
  ShellCommandOptions O;
  O.Stop = &Stop;
  std::string Out;
  ShellCommandResult R = run("sleep 100", O, Out);
  EXPECT_TRUE(R.Stopped);
  EXPECT_EQ(R.describe(), "interrupted");
}

TEST(ShellCommand, LastLines) {
  EXPECT_EQ(lastLines("a\nb\nc\n\n", 2), "b\nc");
  EXPECT_EQ(lastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(lastLines("", 3), "");
  EXPECT_EQ(lastLines("first\n0123456789\nxy", 3, 6), "xy");
}

TEST(ReversibleWrite, RevertIsByteForByteWithPermissionsAndANewTime) {
  TempDir D;
  std::string K = D.file("k.cu"), Spec = D.file("k.cu.astra.json");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  ASSERT_FALSE(bool(writeFileAtomically(Spec, "{\"version\": 1}\n")));
  ASSERT_FALSE(bool(sys::fs::setPermissions(K, sys::fs::perms(0640))));
  // An old time, as a source file has before a build.
  sys::TimePoint<> Old = std::chrono::system_clock::now() - std::chrono::hours(1);
  {
    int FD;
    ASSERT_FALSE(bool(sys::fs::openFileForWrite(K, FD, sys::fs::CD_OpenExisting,
                                                sys::fs::OF_Append)));
    sys::fs::setLastAccessAndModificationTime(FD, Old);
    ::close(FD);
  }
  std::string Journal = reversibleWriteJournalFor(K);
  auto W = ReversibleWrite::apply(Journal, {{K, "new kernel\n"}, {Spec, "{}"}});
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  EXPECT_EQ(read(K), "new kernel\n");
  EXPECT_EQ(read(Spec), "{}");
  EXPECT_TRUE(sys::fs::exists(Journal));
  // What the test builds from the rewrite is newer than the backup.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto Before = std::chrono::system_clock::now();
  ASSERT_FALSE(bool((*W)->revert()));
  EXPECT_EQ(read(K), Crlf);
  EXPECT_EQ(read(Spec), "{\"version\": 1}\n");
  sys::fs::file_status St;
  ASSERT_FALSE(bool(sys::fs::status(K, St)));
  EXPECT_EQ(St.permissions(), sys::fs::perms(0640));
  // Newer than anything built from the new text, so a build redoes it
  // (the file system's clock may be a tick behind).
  EXPECT_GE(St.getLastModificationTime(),
            Before - std::chrono::milliseconds(50));
  EXPECT_EQ(D.names(), (std::vector<std::string>{"k.cu", "k.cu.astra.json"}))
      << "a backup or the journal was left behind";
}

// A source that is a symlink stays one: the file it names is changed and
// put back.
TEST(ReversibleWrite, SymlinkStaysASymlink) {
  TempDir D;
  std::string Real = D.file("real.cu"), Link = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(Real, Crlf)));
  ASSERT_FALSE(bool(sys::fs::create_link("real.cu", Link)));
  auto W = ReversibleWrite::apply(reversibleWriteJournalFor(Link), {{Link, "new"}});
  ASSERT_TRUE(bool(W));
  EXPECT_EQ(read(Real), "new");
  ASSERT_FALSE(bool((*W)->revert()));
  EXPECT_EQ(read(Real), Crlf);
  sys::fs::file_status St;
  ASSERT_FALSE(bool(sys::fs::status(Link, St, /*Follow=*/false)));
  EXPECT_EQ(St.type(), sys::fs::file_type::symlink_file);
  EXPECT_EQ(D.names(), (std::vector<std::string>{"k.cu", "real.cu"}));
}

TEST(ReversibleWrite, CommitKeepsTheNewTextAndLeavesNothingBehind) {
  TempDir D;
  std::string K = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  auto W = ReversibleWrite::apply(reversibleWriteJournalFor(K), {{K, "new"}});
  ASSERT_TRUE(bool(W));
  ASSERT_FALSE(bool((*W)->commit()));
  EXPECT_EQ(read(K), "new");
  EXPECT_EQ(D.names(), std::vector<std::string>{"k.cu"});
}

TEST(ReversibleWrite, DestructorReverts) {
  TempDir D;
  std::string K = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  {
    auto W = ReversibleWrite::apply(reversibleWriteJournalFor(K), {{K, "new"}});
    ASSERT_TRUE(bool(W));
  }
  EXPECT_EQ(read(K), Crlf);
  EXPECT_EQ(D.names(), std::vector<std::string>{"k.cu"});
}

TEST(ReversibleWrite, AFileThatCannotBeReadChangesNothing) {
  TempDir D;
  std::string K = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  auto W = ReversibleWrite::apply(reversibleWriteJournalFor(K),
                                  {{K, "new"}, {D.file("missing.cuh"), "x"}});
  ASSERT_FALSE(bool(W));
  EXPECT_NE(toString(W.takeError()).find("missing.cuh"), std::string::npos);
  EXPECT_EQ(read(K), Crlf);
  EXPECT_EQ(D.names(), std::vector<std::string>{"k.cu"});
}

/// Runs \p Body in a child process, which then ends without cleaning up
/// (as a SIGKILL would leave it); returns its wait status.
template <typename F> int inChild(F Body) {
  pid_t Pid = fork();
  if (Pid == 0) {
    Body();
    _exit(0);
  }
  int Status = 0;
  waitpid(Pid, &Status, 0);
  return Status;
}

// A run killed while the rewrite was in place: the next run finds the journal
// and puts the originals back.
TEST(ReversibleWrite, RecoveryAfterAKilledRun) {
  TempDir D;
  std::string K = D.file("k.cu"), H = D.file("reduce.cuh");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  ASSERT_FALSE(bool(writeFileAtomically(H, "helper")));
  std::string Journal = reversibleWriteJournalFor(K);
  inChild([&] {
    auto W = ReversibleWrite::apply(Journal, {{K, "new"}, {H, "new helper"}});
    if (W)
      W->release(); // Never reverted: the process "dies" here.
  });
  EXPECT_EQ(read(K), "new");
  EXPECT_TRUE(sys::fs::exists(Journal));
  auto Notes = recoverInterruptedWrite(Journal);
  ASSERT_TRUE(bool(Notes)) << toString(Notes.takeError());
  ASSERT_EQ(Notes->size(), 2u);
  EXPECT_EQ((*Notes)[0].rfind("restored ", 0), 0u) << (*Notes)[0];
  EXPECT_EQ(read(K), Crlf);
  EXPECT_EQ(read(H), "helper");
  EXPECT_EQ(D.names(), (std::vector<std::string>{"k.cu", "reduce.cuh"}));
  // Nothing left to do the second time.
  Notes = recoverInterruptedWrite(Journal);
  ASSERT_TRUE(bool(Notes));
  EXPECT_TRUE(Notes->empty());
}

// A file edited after the interrupted run is not overwritten: its backup is
// kept and named, and no new test of the file starts until that is settled.
TEST(ReversibleWrite, RecoveryKeepsAFileChangedSince) {
  TempDir D;
  std::string K = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  std::string Journal = reversibleWriteJournalFor(K);
  inChild([&] {
    auto W = ReversibleWrite::apply(Journal, {{K, "new"}});
    if (W)
      W->release();
  });
  ASSERT_FALSE(bool(writeFileAtomically(K, "the user's edit")));
  auto Notes = recoverInterruptedWrite(Journal);
  ASSERT_TRUE(bool(Notes));
  ASSERT_EQ(Notes->size(), 1u);
  EXPECT_EQ((*Notes)[0].rfind("kept " + K + " as it is", 0), 0u) << (*Notes)[0];
  EXPECT_EQ(read(K), "the user's edit");
  std::vector<std::string> Names = D.names();
  ASSERT_EQ(Names.size(), 3u);
  std::string Backup = D.file(Names[0]);
  EXPECT_NE((*Notes)[0].find(Backup), std::string::npos);
  EXPECT_EQ(read(Backup), Crlf);
  auto W = ReversibleWrite::apply(Journal, {{K, "x"}});
  ASSERT_FALSE(bool(W));
  EXPECT_NE(toString(W.takeError()).find("journal is still there"),
            std::string::npos);
  // Once the user removed the backup, the journal goes too.
  sys::fs::remove(Backup);
  Notes = recoverInterruptedWrite(Journal);
  ASSERT_TRUE(bool(Notes));
  EXPECT_EQ(D.names(), std::vector<std::string>{"k.cu"});
}

// A crash of the process itself (here an abort) puts the originals back
// from the signal handler.
TEST(ReversibleWrite, CrashPutsTheOriginalsBack) {
  TempDir D;
  std::string K = D.file("k.cu");
  ASSERT_FALSE(bool(writeFileAtomically(K, Crlf)));
  std::string Journal = reversibleWriteJournalFor(K);
  int Status = inChild([&] {
    auto W = ReversibleWrite::apply(Journal, {{K, "new"}});
    if (W)
      std::abort();
  });
  ASSERT_TRUE(WIFSIGNALED(Status));
  EXPECT_EQ(read(K), Crlf);
  EXPECT_EQ(D.names(), std::vector<std::string>{"k.cu"});
}

namespace {
struct Project {
  TempDir D;
  std::string K = D.file("k.cu"), Spec = D.file("k.cu.astra.json");
  Project() {
    EXPECT_FALSE(bool(writeFileAtomically(K, Crlf)));
    EXPECT_FALSE(bool(writeFileAtomically(Spec, "{\"launch\": 256}")));
  }
  std::map<std::string, std::string> rewrite() const {
    return {{K, "rewritten\n"}, {Spec, "{\"launch\": 512}"}};
  }
  UserTestOptions opts(StringRef Cmd) const {
    UserTestOptions O;
    O.Command = Cmd.str();
    O.Directory = std::string(D.Path);
    O.TimeoutSeconds = 5;
    return O;
  }
};
} // namespace

TEST(UserTest, PassingCommandKeepsTheRewrite) {
  Project P;
  // The command sees the rewrite, through $ASTRA_TEST_FILE.
  auto R = UserTest(P.opts("grep -q rewritten \"$ASTRA_TEST_FILE\""))
               .run(P.K, P.rewrite(), /*KeepOnPass=*/true);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_TRUE(R->passed());
  EXPECT_TRUE(R->Kept);
  EXPECT_FALSE(R->Original);
  EXPECT_EQ(read(P.K), "rewritten\n");
  EXPECT_EQ(read(P.Spec), "{\"launch\": 512}");
  EXPECT_EQ(P.D.names(),
            (std::vector<std::string>{"k.cu", "k.cu.astra.json"}));
}

TEST(UserTest, PassingCommandWithoutKeepPutsTheFilesBack) {
  Project P;
  auto R = UserTest(P.opts("true")).run(P.K, P.rewrite(), /*KeepOnPass=*/false);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->passed());
  EXPECT_FALSE(R->Kept);
  EXPECT_EQ(read(P.K), Crlf);
}

// The rewrite breaks the program: the files come back byte for byte, and
// the same command on the original code passes, which the record says.
TEST(UserTest, FailingCommandRestoresAndRunsTheOriginal) {
  Project P;
  std::string Full;
  auto R = UserTest(P.opts("echo checking; if grep -q rewritten k.cu; then "
                           "echo 'block 512: invalid argument'; exit 1; fi"))
               .run(P.K, P.rewrite(), /*KeepOnPass=*/true, &Full);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_FALSE(R->passed());
  EXPECT_FALSE(R->Kept);
  EXPECT_EQ(R->Run.ExitCode, 1);
  EXPECT_EQ(R->OutputTail, "checking\nblock 512: invalid argument");
  EXPECT_EQ(Full, "checking\nblock 512: invalid argument\n");
  ASSERT_TRUE(R->Original);
  EXPECT_TRUE(R->Original->passed());
  EXPECT_FALSE(R->failsWithoutRewrite());
  EXPECT_EQ(R->summary().rfind("failed (exit 1, ", 0), 0u) << R->summary();
  EXPECT_NE(R->summary().find("; the original code passes it (exit 0, "),
            std::string::npos)
      << R->summary();
  EXPECT_EQ(read(P.K), Crlf);
  EXPECT_EQ(read(P.Spec), "{\"launch\": 256}");
  EXPECT_EQ(P.D.names(),
            (std::vector<std::string>{"k.cu", "k.cu.astra.json"}));
}

TEST(UserTest, CommandThatAlwaysFailsIsTold) {
  Project P;
  auto R = UserTest(P.opts("exit 2")).run(P.K, P.rewrite(), true);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->failsWithoutRewrite());
  EXPECT_NE(R->summary().find("fails on the original code too (exit 2"),
            std::string::npos);
  EXPECT_EQ(read(P.K), Crlf);
}

TEST(UserTest, HangIsAFailure) {
  Project P;
  UserTestOptions O = P.opts("if grep -q rewritten k.cu; then sleep 100; fi");
  O.TimeoutSeconds = 1;
  auto R = UserTest(O).run(P.K, P.rewrite(), true);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->Run.TimedOut);
  EXPECT_FALSE(R->Kept);
  ASSERT_TRUE(R->Original);
  EXPECT_TRUE(R->Original->passed());
  EXPECT_EQ(read(P.K), Crlf);
}

TEST(UserTest, RecordInJson) {
  Project P;
  auto R = UserTest(P.opts("echo boom; exit 4")).run(P.K, P.rewrite(), true);
  ASSERT_TRUE(bool(R));
  JsonWriter W;
  writeUserTestJson(W, *R);
  std::string J = W.str();
  EXPECT_NE(J.find("\"command\": \"echo boom; exit 4\""), std::string::npos) << J;
  EXPECT_NE(J.find("\"exit_code\": 4"), std::string::npos) << J;
  EXPECT_NE(J.find("\"output_tail\": \"boom\""), std::string::npos) << J;
  EXPECT_NE(J.find("\"kept\": false"), std::string::npos) << J;
  EXPECT_NE(J.find("\"original_code_run\""), std::string::npos) << J;
}

// Ctrl-C while the rewrite is in place (the command interrupts its parent
// here): the command's group is ended, the files come back, and then the
// process ends with SIGINT as the user asked.
TEST(UserTest, InterruptPutsTheFilesBackThenEndsTheProcess) {
  Project P;
  int Status = inChild([&] {
    // As at a terminal (test runners may start us with SIGINT ignored).
    signal(SIGINT, SIG_DFL);
    auto R = UserTest(P.opts("kill -INT $PPID; sleep 100"))
                 .run(P.K, P.rewrite(), true);
    consumeError(R.takeError());
  });
  ASSERT_TRUE(WIFSIGNALED(Status)) << "status " << Status;
  EXPECT_EQ(WTERMSIG(Status), SIGINT);
  EXPECT_EQ(read(P.K), Crlf);
  EXPECT_EQ(read(P.Spec), "{\"launch\": 256}");
  EXPECT_EQ(P.D.names(),
            (std::vector<std::string>{"k.cu", "k.cu.astra.json"}));
}
