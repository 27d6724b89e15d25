//===- CompileCommand.cpp - clang-astra compile ---------------------------===//
//
// The compile gate on the command line: what every candidate goes through,
// run on a user's file so they can see the PTX, the resource use per kernel,
// and (with --timing-compiler=nvcc) what nvcc makes of the same file.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Compile/PtxCompiler.h"
#include "astra/Frontend/KernelModel.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace llvm;

namespace astra {
namespace tool {

static cl::SubCommand CompileCmd(
    "compile", "Compile a CUDA file's device side to PTX (the compile gate)");
static cl::list<std::string> Files(cl::Positional, cl::desc("<file>"),
                                   cl::sub(CompileCmd), cl::cat(AstraCategory));
static cl::opt<std::string>
    KernelName("kernel",
               cl::desc("Check that this kernel is in the PTX (name, "
                        "qualified name or mangled name); with "
                        "--emit=resources, report only it"),
               cl::sub(CompileCmd), cl::cat(AstraCategory));
enum class Emit { Ptx, Resources };
static cl::opt<Emit> EmitOpt(
    "emit", cl::desc("What to print"),
    cl::values(clEnumValN(Emit::Ptx, "ptx", "the PTX module (default)"),
               clEnumValN(Emit::Resources, "resources",
                          "registers, spills, stack and shared memory per "
                          "kernel, as ptxas reports them")),
    cl::init(Emit::Ptx), cl::sub(CompileCmd), cl::cat(AstraCategory));
enum class Format { Text, Json };
static cl::opt<Format> OutFormat(
    "format", cl::desc("Output format of --emit=resources"),
    cl::values(clEnumValN(Format::Text, "text", "a table (default)"),
               clEnumValN(Format::Json, "json", "JSON")),
    cl::init(Format::Text), cl::sub(CompileCmd), cl::cat(AstraCategory));
static cl::opt<std::string> OutputFile("o",
                                       cl::desc("Write the output here"),
                                       cl::value_desc("file"),
                                       cl::sub(CompileCmd),
                                       cl::cat(AstraCategory));
static cl::opt<bool> NoCache("no-cache",
                             cl::desc("Neither read nor write the PTX cache"),
                             cl::sub(CompileCmd), cl::cat(AstraCategory));
static cl::opt<bool>
    NoPch("no-pch",
          cl::desc("Parse the CUDA runtime headers instead of using the "
                   "precompiled header in the cache"),
          cl::sub(CompileCmd), cl::cat(AstraCategory));
enum class TimingCompiler { Clang, Nvcc };
static cl::opt<TimingCompiler> Timing(
    "timing-compiler",
    cl::desc("Which compiler makes the code that is printed (and timed by the "
             "profiler); the clang compile always runs first as the gate"),
    cl::values(clEnumValN(TimingCompiler::Clang, "clang",
                          "clang's NVPTX backend (default)"),
               clEnumValN(TimingCompiler::Nvcc, "nvcc",
                          "nvcc from the CUDA toolkit")),
    cl::init(TimingCompiler::Clang), cl::sub(CompileCmd),
    cl::cat(AstraCategory));

/// The names a user may give for a kernel: its mangled entry, its qualified
/// name ("ops::relu"), and for templates that name with ("scale<float>") and
/// without its arguments.
static bool kernelMatches(StringRef Entry, StringRef Name) {
  if (Entry == Name)
    return true;
  // The demangler's names point into the mangled string: keep it alive.
  std::string Mangled = Entry.str();
  ItaniumPartialDemangler D;
  if (D.partialDemangle(Mangled.c_str()) || !D.isFunction())
    return false;
  auto Take = [](char *S) {
    std::string R = S ? S : "";
    std::free(S);
    return R;
  };
  std::string Qualified = Take(D.getFunctionName(nullptr, nullptr));
  std::string Context = Take(D.getFunctionDeclContextName(nullptr, nullptr));
  std::string Base = Take(D.getFunctionBaseName(nullptr, nullptr));
  std::string NoArgs = Context.empty() ? Base : Context + "::" + Base;
  return Name == Qualified || Name == NoArgs;
}

static std::string demangled(StringRef Entry) {
  return llvm::demangle(Entry);
}

static void printResourcesText(raw_ostream &OS,
                               const std::vector<KernelResources> &Rs,
                               StringRef Arch) {
  std::vector<std::string> Names;
  size_t Width = strlen("kernel");
  for (const KernelResources &R : Rs) {
    Names.push_back(demangled(R.Entry));
    Width = std::max(Width, Names.back().size());
  }
  OS << left_justify("kernel", Width)
     << "  regs spill-st spill-ld  stack   smem   cmem  bar\n";
  for (size_t I = 0; I < Rs.size(); ++I) {
    const KernelResources &R = Rs[I];
    OS << left_justify(Names[I], Width)
       << format("  %4u %8u %8u %6u %6u %6u %4u\n", R.Registers,
                 R.SpillStoreBytes, R.SpillLoadBytes, R.StackFrameBytes,
                 R.SharedBytes, R.ConstantBytes, R.Barriers);
  }
  OS << "(" << Arch << "; spills, stack, smem and cmem in bytes; smem is "
     << "static shared memory only)\n";
}

static std::string resourcesJson(const std::vector<KernelResources> &Rs,
                                 StringRef File, StringRef Arch,
                                 StringRef Compiler,
                                 ArrayRef<std::string> CompilerFlags) {
  JsonWriter W;
  W.objectBegin();
  W.field("file", displayPath(File));
  W.field("arch", Arch);
  W.field("compiler", Compiler);
  if (Compiler == "nvcc") {
    W.key("nvcc_flags");
    W.arrayBegin();
    for (const std::string &F : CompilerFlags)
      W.value(F);
    W.arrayEnd();
  }
  W.key("kernels");
  W.arrayBegin();
  for (const KernelResources &R : Rs) {
    W.objectBegin();
    W.field("entry", R.Entry);
    W.field("name", demangled(R.Entry));
    W.field("registers", R.Registers);
    W.field("spill_store_bytes", R.SpillStoreBytes);
    W.field("spill_load_bytes", R.SpillLoadBytes);
    W.field("stack_frame_bytes", R.StackFrameBytes);
    W.field("shared_bytes", R.SharedBytes);
    W.field("constant_bytes", R.ConstantBytes);
    W.field("barriers", R.Barriers);
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();
  return W.str();
}

static int runCompile(const Session &S) {
  if (Files.size() != 1)
    return reportError("compile: expected exactly one input file (see --help)");
  if (OutFormat == Format::Json && EmitOpt != Emit::Resources)
    return reportError("compile: --format=json applies to --emit=resources");
  const std::string &File = Files.front();
  auto TC = makeToolchain(S);
  if (!TC)
    return reportError(TC.takeError());
  auto CC = makeCompileCommands(S);
  if (!CC)
    return reportError(CC.takeError());
  if (Error E = checkReadableFile(File))
    return reportError(std::move(E));
  auto Cmd = CC->deviceCommand(File, *TC);
  if (!Cmd)
    return reportError(Cmd.takeError());
  if (Verbose) {
    std::string Line;
    for (const std::string &A : *Cmd)
      Line += (Line.empty() ? "" : " ") + A;
    note("device command: " + Line);
  }

  CompileOptions Opts;
  Opts.UseCache = !NoCache;
  Opts.UsePch = !NoPch;
  Opts.ShowWarnings = Verbose;
  auto R = compileToPtx(*TC, *Cmd, Opts);
  if (!R)
    return reportError("device compile failed: " + toString(R.takeError()));
  for (const std::string &W : R->Warnings)
    warning(W);
  if (Verbose) {
    for (const std::string &N : R->Notes)
      note(N);
    if (R->FromCache)
      note("PTX from cache (" + R->CacheEntry + ")");
    else
      note("compiled with clang in " + formatv("{0:f2}", R->Seconds).str() +
           " s" + (R->UsedPch ? " (runtime headers from the PCH)" : ""));
  }

  std::vector<std::string> Kernels = R->Entries;
  if (!KernelName.empty()) {
    Kernels.clear();
    for (const std::string &E : R->Entries)
      if (kernelMatches(E, KernelName))
        Kernels.push_back(E);
    if (Kernels.empty()) {
      std::string Have;
      for (const std::string &E : R->Entries)
        Have += (Have.empty() ? "" : ", ") + demangled(E);
      return reportError(displayPath(File) + ": no kernel '" + KernelName +
                         "' in the PTX (kernels: " +
                         (Have.empty() ? "none" : Have) + ")");
    }
  }

  std::string Ptx = R->Ptx;
  std::string Compiler = "clang";
  std::vector<std::string> NvccFlags;
  if (Timing == TimingCompiler::Nvcc) {
    // An nvcc build's own device flags go to nvcc as they are.
    auto Flags = CC->nvccFlags(File);
    if (!Flags)
      return reportError(Flags.takeError());
    if (*Flags)
      NvccFlags = std::move(**Flags);
    if (Verbose)
      note("nvcc flags from the build: " +
           (NvccFlags.empty() ? std::string("none") : join(NvccFlags, " ")));
    auto Start = std::chrono::steady_clock::now();
    auto NvccOut = compileWithNvcc(*TC, *Cmd, {}, /*Cubin=*/false, NvccFlags);
    if (!NvccOut)
      return reportError(NvccOut.takeError());
    if (Verbose)
      note("compiled with nvcc in " +
           formatv("{0:f2}", std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - Start)
                                 .count())
               .str() +
           " s");
    Ptx = std::move(*NvccOut);
    Compiler = "nvcc";
    // nvcc may keep or drop kernels differently; the named one must be there.
    if (!KernelName.empty() &&
        llvm::none_of(parsePtxEntries(Ptx), [&](const std::string &E) {
          return kernelMatches(E, KernelName);
        }))
      return reportError(displayPath(File) + ": nvcc's PTX has no kernel '" +
                         KernelName + "'");
  }

  std::string Text;
  if (EmitOpt == Emit::Ptx) {
    Text = std::move(Ptx);
  } else {
    auto Res = ptxasResources(*TC, Ptx);
    if (!Res)
      return reportError(Res.takeError());
    std::vector<KernelResources> Shown;
    for (KernelResources &K : *Res)
      if (KernelName.empty() || kernelMatches(K.Entry, KernelName))
        Shown.push_back(std::move(K));
    raw_string_ostream OS(Text);
    if (OutFormat == Format::Json)
      OS << resourcesJson(Shown, File, ptxTargetArch(Ptx, TC->gpuArch()),
                          Compiler, NvccFlags);
    else
      printResourcesText(OS, Shown, ptxTargetArch(Ptx, TC->gpuArch()));
  }
  if (!OutputFile.empty()) {
    if (Error E = writeFileAtomically(OutputFile, Text))
      return reportError(std::move(E));
    return 0;
  }
  outs() << Text;
  return 0;
}

static SubcommandRegistration Reg(CompileCmd, runCompile);

} // namespace tool
} // namespace astra
