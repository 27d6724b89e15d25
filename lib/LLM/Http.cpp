//===- Http.cpp - HTTP through a libcurl loaded at run time ---------------===//
#include "astra/LLM/Http.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

// Types and constants only: every function is called through a pointer that
// dlsym found, so nothing here links against libcurl. The type-checking
// macros of curl.h would wrap the real curl_easy_setopt, which we never call.
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace llvm;

namespace astra {

char HttpError::ID;

namespace {

/// The libcurl functions this file uses, found with dlsym.
struct CurlApi {
  void *Handle = nullptr;
  CURLcode (*GlobalInit)(long) = nullptr;
  CURL *(*EasyInit)() = nullptr;
  CURLcode (*EasySetopt)(CURL *, CURLoption, ...) = nullptr;
  CURLcode (*EasyPerform)(CURL *) = nullptr;
  CURLcode (*EasyGetinfo)(CURL *, CURLINFO, ...) = nullptr;
  void (*EasyCleanup)(CURL *) = nullptr;
  const char *(*EasyStrerror)(CURLcode) = nullptr;
  curl_slist *(*SlistAppend)(curl_slist *, const char *) = nullptr;
  void (*SlistFreeAll)(curl_slist *) = nullptr;
};

const char *const MissingCurl = "LLM mode needs libcurl.so.4: ";

/// The library names tried when $ASTRA_LIBCURL is not set. Debian and Ubuntu
/// ship the OpenSSL build as libcurl.so.4 (package libcurl4) and the GnuTLS
/// build as libcurl-gnutls.so.4 (libcurl3-gnutls, which git pulls in), so
/// either is enough.
std::vector<std::string> defaultCurlNames() {
  if (const char *Env = std::getenv("ASTRA_LIBCURL"); Env && *Env)
    return {Env};
  return {"libcurl.so.4", "libcurl-gnutls.so.4"};
}

template <typename Fn>
bool lookup(void *Handle, const char *Name, Fn &Out, std::string &Missing) {
  Out = reinterpret_cast<Fn>(dlsym(Handle, Name));
  if (!Out)
    Missing += (Missing.empty() ? "" : ", ") + std::string(Name);
  return Out != nullptr;
}

/// Opens the first of \p Names that has every function we need.
Expected<CurlApi> openCurl(ArrayRef<std::string> Names) {
  std::string Reasons;
  for (const std::string &Name : Names) {
    void *H = dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!H) {
      const char *E = dlerror();
      Reasons += "\n  " + (E ? std::string(E) : Name + ": cannot be opened");
      continue;
    }
    CurlApi Api;
    Api.Handle = H;
    std::string Missing;
    lookup(H, "curl_global_init", Api.GlobalInit, Missing);
    lookup(H, "curl_easy_init", Api.EasyInit, Missing);
    lookup(H, "curl_easy_setopt", Api.EasySetopt, Missing);
    lookup(H, "curl_easy_perform", Api.EasyPerform, Missing);
    lookup(H, "curl_easy_getinfo", Api.EasyGetinfo, Missing);
    lookup(H, "curl_easy_cleanup", Api.EasyCleanup, Missing);
    lookup(H, "curl_easy_strerror", Api.EasyStrerror, Missing);
    lookup(H, "curl_slist_append", Api.SlistAppend, Missing);
    lookup(H, "curl_slist_free_all", Api.SlistFreeAll, Missing);
    if (Missing.empty())
      return Api;
    Reasons += "\n  " + Name + ": not a usable libcurl (no " + Missing + ")";
    dlclose(H);
  }
  return createStringError(
      inconvertibleErrorCode(),
      "%scannot load it (tried %s):%s\n"
      "install libcurl (Debian/Ubuntu: apt-get install libcurl4), or set "
      "ASTRA_LIBCURL to the path of a libcurl.so.4",
      MissingCurl, join(Names, ", ").c_str(), Reasons.c_str());
}

/// The process-wide libcurl, loaded and initialised once.
struct LoadedCurl {
  CurlApi Api;
  std::string Error; // empty when Api is usable
};

const LoadedCurl &loadedCurl() {
  static LoadedCurl L;
  static std::once_flag Once;
  std::call_once(Once, [] {
    Expected<CurlApi> Api = openCurl(defaultCurlNames());
    if (!Api) {
      L.Error = toString(Api.takeError());
      return;
    }
    L.Api = *Api;
    // Not thread safe in older libcurls, hence inside call_once.
    if (CURLcode C = L.Api.GlobalInit(CURL_GLOBAL_DEFAULT))
      L.Error = std::string(MissingCurl) +
                "curl_global_init failed: " + L.Api.EasyStrerror(C);
  });
  return L;
}

size_t appendBody(char *Data, size_t Size, size_t N, void *User) {
  static_cast<std::string *>(User)->append(Data, Size * N);
  return Size * N;
}

/// Keeps the headers of the final response: a new status line (after a
/// "100 Continue" or a redirect) starts over.
size_t appendHeader(char *Data, size_t Size, size_t N, void *User) {
  auto &Headers = *static_cast<std::map<std::string, std::string> *>(User);
  StringRef Line(Data, Size * N);
  if (Line.starts_with("HTTP/")) {
    Headers.clear();
  } else if (size_t Colon = Line.find(':'); Colon != StringRef::npos) {
    Headers[Line.take_front(Colon).trim().lower()] =
        Line.drop_front(Colon + 1).trim().str();
  }
  return Size * N;
}

HttpFailure classify(CURLcode C) {
  switch (C) {
  case CURLE_OPERATION_TIMEDOUT:
    return HttpFailure::Timeout;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return HttpFailure::Resolve;
  case CURLE_UNSUPPORTED_PROTOCOL:
  case CURLE_URL_MALFORMAT:
    return HttpFailure::BadUrl;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CIPHER:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_SSL_ISSUER_ERROR:
  case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
  case CURLE_SSL_INVALIDCERTSTATUS:
    return HttpFailure::Tls;
  case CURLE_COULDNT_CONNECT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    return HttpFailure::Connect;
  default:
    return HttpFailure::Other;
  }
}

/// Frees the easy handle and the header list on every path.
struct EasyHandle {
  const CurlApi &Api;
  CURL *H;
  curl_slist *Headers = nullptr;
  ~EasyHandle() {
    if (Headers)
      Api.SlistFreeAll(Headers);
    if (H)
      Api.EasyCleanup(H);
  }
};

} // namespace

Error probeCurlLibrary(ArrayRef<std::string> Names) {
  Expected<CurlApi> Api = openCurl(Names);
  if (!Api)
    return Api.takeError();
  dlclose(Api->Handle);
  return Error::success();
}

Error ensureCurlLoaded() {
  const LoadedCurl &L = loadedCurl();
  if (!L.Error.empty())
    return createStringError(inconvertibleErrorCode(), L.Error);
  return Error::success();
}

Expected<HttpResponse> httpSend(const HttpRequest &Req) {
  if (Error E = ensureCurlLoaded())
    return E;
  const CurlApi &Api = loadedCurl().Api;
  EasyHandle E{Api, Api.EasyInit()};
  if (!E.H)
    return make_error<HttpError>(HttpFailure::Other,
                                 "curl_easy_init failed (out of memory?)");

  for (const std::string &H : Req.Headers)
    E.Headers = Api.SlistAppend(E.Headers, H.c_str());
  // curl would otherwise send "Expect: 100-continue" with large bodies and
  // wait up to a second for a server that never answers it.
  E.Headers = Api.SlistAppend(E.Headers, "Expect:");

  HttpResponse Resp;
  char ErrBuf[CURL_ERROR_SIZE] = {0};
  auto Ms = [](double S) { return static_cast<long>(S * 1000.0 + 0.5); };
  Api.EasySetopt(E.H, CURLOPT_URL, Req.Url.c_str());
  Api.EasySetopt(E.H, CURLOPT_HTTPHEADER, E.Headers);
  if (Req.Post) {
    Api.EasySetopt(E.H, CURLOPT_POST, 1L);
    Api.EasySetopt(E.H, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(Req.Body.size()));
    Api.EasySetopt(E.H, CURLOPT_POSTFIELDS, Req.Body.data());
  } else {
    Api.EasySetopt(E.H, CURLOPT_HTTPGET, 1L);
  }
  Api.EasySetopt(E.H, CURLOPT_WRITEFUNCTION, &appendBody);
  Api.EasySetopt(E.H, CURLOPT_WRITEDATA, &Resp.Body);
  Api.EasySetopt(E.H, CURLOPT_HEADERFUNCTION, &appendHeader);
  Api.EasySetopt(E.H, CURLOPT_HEADERDATA, &Resp.Headers);
  Api.EasySetopt(E.H, CURLOPT_TIMEOUT_MS, Ms(Req.TimeoutSeconds));
  Api.EasySetopt(E.H, CURLOPT_CONNECTTIMEOUT_MS, Ms(Req.ConnectTimeoutSeconds));
  // Timeouts must not use signals: clients may run on several threads.
  Api.EasySetopt(E.H, CURLOPT_NOSIGNAL, 1L);
  Api.EasySetopt(E.H, CURLOPT_ERRORBUFFER, ErrBuf);
  Api.EasySetopt(E.H, CURLOPT_USERAGENT, "clang-astra");
  // Empty: every encoding this libcurl can decode.
  Api.EasySetopt(E.H, CURLOPT_ACCEPT_ENCODING, "");

  if (CURLcode C = Api.EasyPerform(E.H)) {
    std::string Detail = ErrBuf[0] ? std::string(ErrBuf) : Api.EasyStrerror(C);
    return make_error<HttpError>(classify(C), Detail);
  }
  Api.EasyGetinfo(E.H, CURLINFO_RESPONSE_CODE, &Resp.Status);
  return Resp;
}

} // namespace astra
