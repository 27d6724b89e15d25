//===- SlurmBackend.cpp ---------------------------------------------------===//
#include "astra/Exec/SlurmBackend.h"
#include "astra/Support/ChildProcess.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/ShellCommand.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <thread>

using namespace llvm;

namespace astra {
namespace exec {

SlurmBackend::SlurmBackend(unsigned N, std::vector<std::string> SbatchArgs,
                           std::string TaskDir, std::string RunName)
    : SbatchArgs(std::move(SbatchArgs)), TaskDir(std::move(TaskDir)),
      RunName(std::move(RunName)), Slots(N ? N : 1) {}

SlurmBackend::~SlurmBackend() { cancelAll(); }

std::string SlurmBackend::workerName(unsigned W) const {
  if (Slots[W] && !Slots[W]->JobId.empty())
    return "slurm job " + Slots[W]->JobId;
  return "slurm slot " + std::to_string(W);
}

static std::string shellQuote(StringRef S) {
  std::string Out = "'";
  for (char C : S) {
    if (C == '\'')
      Out += "'\\''";
    else
      Out += C;
  }
  return Out + "'";
}

std::string SlurmBackend::jobScript(const Task &T, StringRef StatusPath) {
  std::string S = "#!/bin/sh\n# clang-astra task: " + T.Name + "\n";
  for (size_t I = 0; I < T.Args.size(); ++I)
    S += (I ? " " : "") + shellQuote(T.Args[I]);
  // The status goes beside the result through a temporary name: a reader
  // never sees half of it.
  S += "\nrc=$?\necho $rc > " + shellQuote((StatusPath + ".tmp").str()) +
       " && mv " + shellQuote((StatusPath + ".tmp").str()) + " " +
       shellQuote(StatusPath) + "\nexit $rc\n";
  return S;
}

Expected<std::vector<std::string>> SlurmBackend::splitArgs(StringRef Text) {
  std::vector<std::string> Out;
  std::string Cur;
  bool Have = false;
  char Quote = 0;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (Quote) {
      if (C == Quote)
        Quote = 0;
      else if (C == '\\' && Quote == '"' && I + 1 < Text.size())
        Cur += Text[++I];
      else
        Cur += C;
      continue;
    }
    if (C == '\'' || C == '"') {
      Quote = C;
      Have = true;
    } else if (C == '\\' && I + 1 < Text.size()) {
      Cur += Text[++I];
      Have = true;
    } else if (isSpace(C)) {
      if (Have)
        Out.push_back(Cur);
      Cur.clear();
      Have = false;
    } else {
      Cur += C;
      Have = true;
    }
  }
  if (Quote)
    return createStringError(inconvertibleErrorCode(),
                             "--slurm-args: unterminated %c quote", Quote);
  if (Have)
    Out.push_back(Cur);
  return Out;
}

bool SlurmBackend::activeState(StringRef State) {
  return State == "PENDING" || State == "RUNNING" || State == "CONFIGURING" ||
         State == "COMPLETING" || State == "SUSPENDED" ||
         State == "REQUEUED" || State == "REQUEUE_HOLD" ||
         State == "REQUEUE_FED" || State == "RESIZING" ||
         State == "SIGNALING" || State == "STAGE_OUT" || State == "STOPPED";
}

Expected<std::string> SlurmBackend::slurm(const std::vector<std::string> &Args,
                                          unsigned TimeoutSeconds) {
  auto Exe = sys::findProgramByName(Args[0]);
  if (!Exe)
    return createStringError(Exe.getError(),
                             "%s not found on PATH (--executor=slurm needs "
                             "the Slurm client commands)",
                             Args[0].c_str());
  SmallString<128> Out;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("astra-slurm", "txt", Out))
    return createStringError(EC, "cannot create a temporary file: %s",
                             EC.message().c_str());
  std::vector<std::string> Argv = Args;
  Argv[0] = *Exe;
  ChildProcessOptions O;
  O.OutputPath = std::string(Out);
  auto P = ChildProcess::start(Argv, O);
  if (!P) {
    sys::fs::remove(Out);
    return P.takeError();
  }
  auto Until = std::chrono::steady_clock::now() +
               std::chrono::seconds(TimeoutSeconds);
  bool TimedOut = false;
  while (!P->exited()) {
    if (std::chrono::steady_clock::now() >= Until) {
      P->terminateGroup(2);
      TimedOut = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ChildStatus S = P->finish();
  std::string Text;
  if (auto T = readFile(Out))
    Text = *T;
  else
    consumeError(T.takeError());
  sys::fs::remove(Out);
  if (TimedOut || S.ExitCode != 0)
    return createStringError(
        inconvertibleErrorCode(), "%s failed (%s): %s", Args[0].c_str(),
        TimedOut ? formatv("no answer in {0} s", TimeoutSeconds).str().c_str()
                 : formatv("exit {0}", S.ExitCode).str().c_str(),
        lastLines(Text, 3, 400).c_str());
  return Text;
}

Error SlurmBackend::start(unsigned W, const Task &T) {
  sys::fs::remove(T.ResultPath);
  std::string Status = T.ResultPath + ".status";
  sys::fs::remove(Status);
  SmallString<256> Script(TaskDir);
  sys::path::append(Script, formatv("job-{0}.sh", ++Counter).str());
  if (Error E = writeFileAtomically(Script, jobScript(T, Status)))
    return E;
  std::vector<std::string> Args = {"sbatch", "--parsable",
                                   "--job-name=" + RunName,
                                   "--output=" + T.LogPath,
                                   "--export=ALL," + std::string(WorkerEnvVar) +
                                       "=1"};
  bool HasTime = false;
  for (const std::string &A : SbatchArgs)
    HasTime |= StringRef(A).starts_with("--time") || A == "-t" ||
               (StringRef(A).starts_with("-t") && A.size() > 2);
  // Slurm's own limit backs up ours (a minute more, so ours comes first
  // and says why).
  if (T.TimeoutSeconds && !HasTime)
    Args.push_back(formatv("--time={0}", T.TimeoutSeconds / 60 + 2).str());
  Args.insert(Args.end(), SbatchArgs.begin(), SbatchArgs.end());
  Args.push_back(std::string(Script));
  auto Out = slurm(Args);
  if (!Out)
    return Out.takeError();
  // --parsable: "<id>" or "<id>;<cluster>".
  std::string Id = StringRef(*Out).trim().split(';').first.str();
  if (Id.empty() || !all_of(Id, isDigit))
    return createStringError(inconvertibleErrorCode(),
                             "sbatch answered '%s', not a job id",
                             StringRef(*Out).trim().str().c_str());
  Slots[W].emplace(Submitted{Id, T, Status, "", std::nullopt});
  return Error::success();
}

Expected<std::map<std::string, std::string>> SlurmBackend::states() {
  // -t all: finished jobs too (kept for MinJobAge), with how they ended.
  auto Out = slurm({"squeue", "-h", "-t", "all", "-n", RunName, "-o", "%i %T"});
  if (!Out)
    return Out.takeError();
  std::map<std::string, std::string> M;
  SmallVector<StringRef, 16> Lines;
  StringRef(*Out).split(Lines, '\n', -1, false);
  for (StringRef L : Lines) {
    auto [Id, State] = L.trim().split(' ');
    if (!Id.empty())
      M[Id.str()] = State.trim().str();
  }
  return M;
}

/// The exit status a job script wrote, if it got that far.
static std::optional<int> readStatus(StringRef Path) {
  auto Text = readFile(Path);
  if (!Text) {
    consumeError(Text.takeError());
    return std::nullopt;
  }
  int V;
  if (StringRef(*Text).trim().getAsInteger(10, V))
    return std::nullopt;
  return V;
}

std::vector<std::pair<unsigned, AttemptEnd>>
SlurmBackend::poll(double Seconds) {
  std::vector<std::pair<unsigned, AttemptEnd>> Ended;
  // squeue is asked at most every half second: the controller is shared.
  auto Now = std::chrono::steady_clock::now();
  auto Next = LastPoll + std::chrono::milliseconds(500);
  if (Now < Next) {
    auto Wait = std::min<std::chrono::steady_clock::duration>(
        Next - Now, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(Seconds)));
    std::this_thread::sleep_for(Wait);
    if (std::chrono::steady_clock::now() < Next)
      return Ended;
  }
  LastPoll = std::chrono::steady_clock::now();
  bool Any = false;
  for (auto &S : Slots)
    Any |= S.has_value();
  if (!Any)
    return Ended;
  auto St = states();
  if (!St) {
    // A controller that does not answer for a moment is no reason to give
    // up a job; the jobs' own limits still hold.
    consumeError(St.takeError());
    return Ended;
  }
  Now = std::chrono::steady_clock::now();
  for (unsigned W = 0; W < Slots.size(); ++W) {
    if (!Slots[W])
      continue;
    Submitted &J = *Slots[W];
    auto It = St->find(J.JobId);
    std::string State = It == St->end() ? "" : It->second;
    if (!State.empty())
      J.LastState = State;
    std::optional<int> Rc = readStatus(J.StatusPath);
    if (!Rc && activeState(State)) {
      if (State == "RUNNING" && !J.RunningSince)
        J.RunningSince = Now;
      if (J.T.TimeoutSeconds && J.RunningSince &&
          Now - *J.RunningSince >= std::chrono::seconds(J.T.TimeoutSeconds)) {
        if (auto E = slurm({"scancel", J.JobId}); !E)
          consumeError(E.takeError());
        sys::fs::remove(J.T.ResultPath);
        Ended.push_back(
            {W, {AttemptEnd::Failed,
                 formatv("job {0} timed out after {1} s (--job-timeout); "
                         "cancelled",
                         J.JobId, J.T.TimeoutSeconds)
                     .str()}});
        Slots[W].reset();
      }
      continue;
    }
    // COMPLETING: the script is done; what it wrote decides.
    AttemptEnd E;
    if (Rc && *Rc == WorkerLostExitCode) {
      E.K = AttemptEnd::WorkerLost;
      E.Why = "job " + J.JobId + ": its node cannot run jobs";
    } else if (Rc && sys::fs::exists(J.T.ResultPath)) {
      E.K = AttemptEnd::Finished;
    } else if (!Rc && State.empty() && J.LastState.empty() &&
               sys::fs::exists(J.T.ResultPath)) {
      // Gone from squeue before we saw it (MinJobAge 0) and the status
      // file not yet visible: give the shared file system a moment.
      continue;
    } else {
      E.K = AttemptEnd::Failed;
      std::string Last = J.LastState.empty() ? "ended" : J.LastState;
      E.Why = "job " + J.JobId + " " +
              (Last == "CANCELLED" ? std::string("was cancelled")
                                   : "ended (" + Last + ")") +
              " without a result";
    }
    Ended.push_back({W, E});
    Slots[W].reset();
  }
  return Ended;
}

void SlurmBackend::cancelAll() {
  std::vector<std::string> Ids;
  for (auto &S : Slots)
    if (S)
      Ids.push_back(S->JobId);
  if (Ids.empty())
    return;
  std::vector<std::string> Args = {"scancel"};
  Args.insert(Args.end(), Ids.begin(), Ids.end());
  if (auto E = slurm(Args); !E)
    consumeError(E.takeError());
  // Return only once Slurm no longer runs them (at most 30 s).
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < Until) {
    auto St = states();
    if (!St) {
      consumeError(St.takeError());
      break;
    }
    bool Left = false;
    for (const std::string &Id : Ids) {
      auto It = St->find(Id);
      Left |= It != St->end() && activeState(It->second);
    }
    if (!Left)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (auto &S : Slots)
    S.reset();
}

} // namespace exec
} // namespace astra
