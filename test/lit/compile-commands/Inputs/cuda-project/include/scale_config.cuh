// Found only through the target's include directory (-I).
#pragma once
#ifndef ASTRA_PROJECT_CONFIGURED
#error "ASTRA_PROJECT_CONFIGURED is not defined: the -D flags did not arrive"
#endif
namespace cfg {
constexpr float factor() { return float(SCALE_FACTOR); }
} // namespace cfg
