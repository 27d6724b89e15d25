//===- Http.h - HTTP through a libcurl loaded at run time -------*- C++ -*-===//
//
// The portable binary must start on machines without libcurl's development
// files (and without libcurl at all, as long as LLM mode is not used), so
// libcurl is never linked: libcurl.so.4 is opened with dlopen the first time
// LLM mode needs it, and only the handful of functions used here are looked
// up. curl/curl.h is used at compile time for types and constants only.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LLM_HTTP_H
#define ASTRA_LLM_HTTP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace astra {

/// Checks that libcurl can be loaded (once per process; later calls return
/// the first answer). $ASTRA_LIBCURL names a library to use instead of the
/// system's libcurl.so.4 (or libcurl-gnutls.so.4). The error starts with
/// "LLM mode needs libcurl.so.4: ".
llvm::Error ensureCurlLoaded();

/// Tries to open each of \p Names in turn with dlopen and to find every
/// function this file uses, without touching the process-wide library
/// (exposed so tests can check the message for a missing library).
llvm::Error probeCurlLibrary(llvm::ArrayRef<std::string> Names);

struct HttpRequest {
  std::string Url;
  /// POST with Body when true, else GET.
  bool Post = true;
  std::string Body;
  /// Complete header lines ("Content-Type: application/json").
  std::vector<std::string> Headers;
  double TimeoutSeconds = 300;
  double ConnectTimeoutSeconds = 20;
};

struct HttpResponse {
  long Status = 0;
  std::string Body;
  /// Header names in lower case; the last value wins.
  std::map<std::string, std::string> Headers;
};

/// Why a request got no HTTP response at all.
enum class HttpFailure {
  Timeout, ///< The connect or the whole request took too long.
  Connect, ///< Refused, reset, closed early: worth retrying.
  Resolve, ///< The host name does not resolve: probably a typo.
  BadUrl,  ///< Malformed URL or unsupported scheme.
  Tls,     ///< Certificate or TLS failure.
  Other,
};

/// A request that got no response; carries the kind so callers can decide
/// whether to retry.
class HttpError : public llvm::ErrorInfo<HttpError> {
public:
  static char ID;
  HttpError(HttpFailure Kind, std::string Msg)
      : Kind(Kind), Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  HttpFailure kind() const { return Kind; }
  const std::string &detail() const { return Msg; }

private:
  HttpFailure Kind;
  std::string Msg;
};

/// Sends one request (no retries). Any HTTP status is a response; only a
/// request that got none is an HttpError (or the libcurl load error).
llvm::Expected<HttpResponse> httpSend(const HttpRequest &Req);

} // namespace astra

#endif
