//===- KernelJson.cpp -----------------------------------------------------===//
#include "astra/Frontend/KernelJson.h"

namespace astra {

static void writePos(JsonWriter &W, const SourcePos &P) {
  W.field("file", P.File);
  W.field("line", P.Line);
  W.field("column", P.Column);
}

void writeKernelJson(JsonWriter &W, const KernelInfo &K) {
  W.objectBegin();
  W.field("name", K.Name);
  W.field("qualified_name", K.QualifiedName);
  W.key("mangled_name");
  if (K.isTemplate())
    W.null();
  else
    W.value(K.MangledName);
  writePos(W, K.Pos);
  W.key("macro");
  if (K.Macro.empty())
    W.null();
  else
    W.value(K.Macro);
  W.field("in_main_file", K.InMainFile);
  W.key("launch_bounds");
  if (K.LaunchBounds.empty())
    W.null();
  else
    W.value(K.LaunchBounds);

  W.key("parameters");
  W.arrayBegin();
  for (const KernelParam &P : K.Params) {
    W.objectBegin();
    W.field("index", P.Index);
    W.field("name", P.Name);
    W.field("type", P.Type);
    W.field("pointer", P.IsPointer);
    if (P.IsPointer) {
      W.field("pointee_type", P.PointeeType);
      W.field("const", P.PointeeConst);
      W.field("restrict", P.Restrict);
      W.field("written", P.Written);
    }
    W.objectEnd();
  }
  W.arrayEnd();

  W.key("template_parameters");
  W.arrayBegin();
  for (const TemplateParam &T : K.TemplateParams) {
    W.objectBegin();
    W.field("kind", T.Kind);
    W.field("name", T.Name);
    W.field("text", T.Text);
    W.objectEnd();
  }
  W.arrayEnd();

  W.key("instantiations");
  W.arrayBegin();
  for (const Instantiation &I : K.Instantiations) {
    W.objectBegin();
    W.field("name", I.Name);
    W.field("mangled_name", I.MangledName);
    W.field("explicit", I.Explicit);
    W.objectEnd();
  }
  W.arrayEnd();

  W.key("calls");
  W.arrayBegin();
  for (const DeviceCallee &C : K.Callees) {
    W.objectBegin();
    W.field("name", C.Name);
    writePos(W, C.Pos);
    W.objectEnd();
  }
  W.arrayEnd();

  W.key("launch_sites");
  W.arrayBegin();
  for (const LaunchSite &L : K.LaunchSites) {
    W.objectBegin();
    writePos(W, L.Pos);
    W.field("api", L.Api);
    W.field("caller", L.Caller);
    W.field("template_args", L.TemplateArgs);
    W.field("grid", L.Grid);
    W.field("block", L.Block);
    W.field("shmem", L.Shmem);
    W.field("stream", L.Stream);
    W.key("args");
    W.arrayBegin();
    for (const std::string &A : L.Args)
      W.value(A);
    W.arrayEnd();
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();
}

} // namespace astra
