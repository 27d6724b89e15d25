//===- KernelJson.h - Kernel model as JSON ---------------------*- C++ -*-===//
#ifndef ASTRA_FRONTEND_KERNELJSON_H
#define ASTRA_FRONTEND_KERNELJSON_H

#include "astra/Frontend/KernelModel.h"
#include "astra/Support/Json.h"

namespace astra {

/// Writes \p K as one JSON object (the schema is in docs/list-json.md).
void writeKernelJson(JsonWriter &W, const KernelInfo &K);

} // namespace astra

#endif
