//===- LLMClient.cpp - OpenAI-compatible chat-completions client ----------===//
#include "astra/LLM/LLMClient.h"

#include "astra/LLM/Http.h"
#include "astra/LLM/ReplyCache.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

using namespace llvm;

namespace astra {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point T0) {
  return std::chrono::duration<double>(Clock::now() - T0).count();
}

template <typename... Ts>
std::string formatString(const char *Fmt, Ts... Vals) {
  std::string Out;
  raw_string_ostream(Out) << format(Fmt, Vals...);
  return Out;
}

std::string fmtSeconds(double S) {
  return formatString(S < 10 ? "%.2f s" : "%.0f s", S);
}

/// The host part of a URL ("api.openai.com" of "https://api.openai.com/v1").
StringRef urlHost(StringRef Url) {
  size_t Scheme = Url.find("://");
  StringRef Rest = Scheme == StringRef::npos ? Url : Url.drop_front(Scheme + 3);
  Rest = Rest.take_until([](char C) { return C == '/' || C == '?'; });
  if (size_t At = Rest.rfind('@'); At != StringRef::npos)
    Rest = Rest.drop_front(At + 1);
  if (Rest.starts_with("["))
    return Rest.take_until([](char C) { return C == ']'; }).drop_front();
  return Rest.take_until([](char C) { return C == ':'; });
}

/// The message a server put in an error reply: OpenAI's error.message,
/// vLLM's message, FastAPI's detail, else an excerpt of the body.
std::string serverMessage(StringRef Body) {
  rapidjson::Document Doc;
  std::string Copy = Body.str();
  if (Error E = checkJsonNesting(Body))
    consumeError(std::move(E)); // Not JSON to read: the excerpt below.
  else
    Doc.Parse(Copy.c_str());
  if (!Doc.HasParseError() && Doc.IsObject()) {
    for (const char *Key : {"error", "message", "detail"}) {
      if (!Doc.HasMember(Key))
        continue;
      const rapidjson::Value &V = Doc[Key];
      if (V.IsString() && V.GetStringLength())
        return excerpt(V.GetString(), 500);
      if (V.IsObject() && V.HasMember("message") && V["message"].IsString())
        return excerpt(V["message"].GetString(), 500);
    }
  }
  return excerpt(Body, 300);
}

/// OpenAI answers 429 both for "slow down" and for "your quota is spent";
/// only the first is worth waiting for.
bool isQuotaExhausted(StringRef Body) {
  rapidjson::Document Doc;
  if (Error E = checkJsonNesting(Body)) {
    consumeError(std::move(E));
    return false;
  }
  std::string Copy = Body.str();
  Doc.Parse(Copy.c_str());
  if (Doc.HasParseError() || !Doc.IsObject() || !Doc.HasMember("error") ||
      !Doc["error"].IsObject())
    return false;
  const rapidjson::Value &E = Doc["error"];
  for (const char *Key : {"code", "type"})
    if (E.HasMember(Key) && E[Key].IsString() &&
        StringRef(E[Key].GetString()) == "insufficient_quota")
      return true;
  return false;
}

/// One HTTP attempt as the transcript records it.
struct AttemptRecord {
  std::optional<long> Status;
  std::string Error;
  double Seconds = 0;
  double WaitSeconds = 0;
};

/// What one attempt came to.
struct Outcome {
  std::optional<ChatReply> Reply;
  std::string Error;
  bool Retryable = false;
  std::optional<double> RetryAfter;
  std::optional<long> Status;
  std::string Body;
};

std::string sanitizeLabel(StringRef Label) {
  std::string Out;
  for (char C : Label.take_front(60))
    Out += (isAlnum(C) || C == '-' || C == '_') ? C : '_';
  return Out;
}

/// Transcript file numbers are taken under one lock so that clients sharing
/// a directory never pick the same name.
std::mutex TranscriptMutex;

} // namespace

std::string chatCompletionsUrl(StringRef BaseUrl) {
  StringRef B = BaseUrl.trim().rtrim('/');
  if (B.ends_with("/chat/completions"))
    return B.str();
  return (B + "/chat/completions").str();
}

std::optional<double>
parseRetryAfter(const std::map<std::string, std::string> &Headers,
                std::time_t Now) {
  if (auto It = Headers.find("retry-after-ms"); It != Headers.end()) {
    double Ms;
    if (!StringRef(It->second).trim().getAsDouble(Ms) && Ms >= 0)
      return Ms / 1000.0;
  }
  auto It = Headers.find("retry-after");
  if (It == Headers.end())
    return std::nullopt;
  StringRef V = StringRef(It->second).trim();
  double Secs;
  if (!V.getAsDouble(Secs))
    return Secs >= 0 ? std::optional<double>(Secs) : std::nullopt;
  // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
  struct tm Tm = {};
  std::string Copy = V.str();
  const char *End = strptime(Copy.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &Tm);
  if (!End)
    return std::nullopt;
  double Delta = std::difftime(timegm(&Tm), Now);
  return std::max(0.0, Delta);
}

struct LLMClient::State {
  mutable std::mutex M;
  LLMStats Stats;
  std::mt19937_64 Rng{std::random_device{}()};
  bool WarnedCache = false, WarnedTranscript = false;
  unsigned NextTranscript = 1;
  std::string TokensFieldName;
  ReplyCache Cache;
  explicit State(std::string CacheDir) : Cache(std::move(CacheDir)) {}
};

LLMClient::LLMClient(LLMConfig C, std::string Key, std::string Url)
    : Config(std::move(C)), ApiKey(std::move(Key)), Endpoint(std::move(Url)),
      S(std::make_unique<State>(Config.CacheDir.empty() ? defaultLLMCacheDir()
                                                        : Config.CacheDir)) {
  bool OpenAI = urlHost(Endpoint).equals_insensitive("api.openai.com");
  switch (Config.TokensField) {
  case MaxTokensField::Auto:
    S->TokensFieldName = OpenAI ? "max_completion_tokens" : "max_tokens";
    break;
  case MaxTokensField::MaxTokens:
    S->TokensFieldName = "max_tokens";
    break;
  case MaxTokensField::MaxCompletionTokens:
    S->TokensFieldName = "max_completion_tokens";
    break;
  }
}

LLMClient::~LLMClient() = default;

Expected<std::unique_ptr<LLMClient>> LLMClient::create(LLMConfig Config) {
  auto Bad = [](const Twine &Msg) {
    return createStringError(inconvertibleErrorCode(), Msg.str());
  };
  StringRef Base = StringRef(Config.BaseUrl).trim();
  if (!Base.starts_with_insensitive("http://") &&
      !Base.starts_with_insensitive("https://"))
    return Bad("LLM base URL '" + Base +
               "' is not an http:// or https:// URL: pass e.g. "
               "--llm-base-url=https://api.openai.com/v1 or "
               "http://localhost:8000/v1");
  if (urlHost(Base).empty())
    return Bad("LLM base URL '" + Base + "' names no host");
  if (StringRef(Config.Model).trim().empty())
    return Bad("no LLM model is set for the " + Config.Name +
               ": name one with --llm-model (e.g. gpt-4.1, or the model your "
               "local server serves)");
  if (!(Config.TimeoutSeconds > 0) || !(Config.ConnectTimeoutSeconds > 0) ||
      !(Config.MaxTotalSeconds > 0))
    return Bad("LLM timeouts must be positive numbers of seconds");
  if (Config.InitialBackoffSeconds < 0 ||
      Config.MaxBackoffSeconds < Config.InitialBackoffSeconds)
    return Bad("LLM backoff: need 0 <= initial backoff <= maximum backoff");
  if (Config.Temperature &&
      !(*Config.Temperature >= 0 && *Config.Temperature <= 2))
    return Bad("LLM temperature " + std::to_string(*Config.Temperature) +
               " is out of range: use a number from 0 to 2");
  if (Config.MaxTokens && *Config.MaxTokens == 0)
    return Bad("LLM max tokens must be at least 1");
  if (!Config.ExtraBodyJson.empty()) {
    // Checked now, so a typo fails before any request is made.
    ChatParams Probe;
    Probe.Model = Config.Model;
    Probe.ExtraBodyJson = Config.ExtraBodyJson;
    ChatRequest R;
    R.Messages.push_back(ChatMessage::user("x"));
    if (Expected<std::string> B = buildChatRequestBody(Probe, R); !B)
      return B.takeError();
  }

  std::string Key = Config.ApiKey;
  if (Key.empty())
    for (const char *Var : {"ASTRA_LLM_API_KEY", "OPENAI_API_KEY"})
      if (const char *V = std::getenv(Var); V && *V) {
        Key = V;
        break;
      }
  Key = StringRef(Key).trim().str();
  Config.ApiKey.clear();

  if (Error E = ensureCurlLoaded())
    return E;
  std::string Url = chatCompletionsUrl(Base);
  return std::unique_ptr<LLMClient>(
      new LLMClient(std::move(Config), std::move(Key), std::move(Url)));
}

LLMStats LLMClient::stats() const {
  std::lock_guard<std::mutex> L(S->M);
  return S->Stats;
}

std::string LLMClient::redact(StringRef Text) const {
  if (ApiKey.size() < 8)
    return Text.str();
  std::string Out;
  Out.reserve(Text.size());
  while (true) {
    size_t Pos = Text.find(ApiKey);
    if (Pos == StringRef::npos)
      break;
    Out += Text.take_front(Pos);
    Out += "[REDACTED]";
    Text = Text.drop_front(Pos + ApiKey.size());
  }
  Out += Text;
  return Out;
}

namespace {

/// Everything a transcript file holds about one chat() call.
struct Transcript {
  std::string Label;
  unsigned Sample = 0;
  std::string CacheKey;
  bool FromCache = false;
  std::string Request;
  std::vector<AttemptRecord> Attempts;
  std::string Reply;
  std::optional<TokenUsage> Usage;
  std::string Error;
  double Seconds = 0;
};

bool isJson(StringRef Text) {
  if (Error E = checkJsonNesting(Text)) {
    consumeError(std::move(E));
    return false;
  }
  rapidjson::Document Doc;
  std::string Copy = Text.str();
  Doc.Parse(Copy.c_str());
  return !Doc.HasParseError();
}

} // namespace

/// Saves \p T as <dir>/<name>-<NNNN>[-<label>].json. The key is never in
/// what is written: only whether one was sent, and the whole text is
/// redacted once more in case a server echoed the key back.
static Error writeTranscript(const LLMConfig &Config, StringRef Endpoint,
                             bool HasKey, const Transcript &T,
                             unsigned &NextNumber,
                             function_ref<std::string(StringRef)> Redact) {
  JsonWriter W;
  W.objectBegin();
  W.field("client", Config.Name);
  W.field("endpoint", Endpoint);
  W.field("model", Config.Model);
  W.field("authorization", HasKey ? "Bearer [REDACTED]" : "none");
  W.field("label", T.Label);
  W.field("sample", T.Sample);
  W.field("cache_key", T.CacheKey);
  W.field("from_cache", T.FromCache);
  W.field("seconds", T.Seconds);
  W.key("request");
  if (isJson(T.Request))
    W.raw(T.Request);
  else
    W.value(T.Request);
  W.key("attempts");
  W.arrayBegin();
  for (const AttemptRecord &A : T.Attempts) {
    W.objectBegin();
    W.field("status", A.Status);
    W.field("error", A.Error);
    W.field("seconds", A.Seconds);
    W.field("wait_seconds", A.WaitSeconds);
    W.objectEnd();
  }
  W.arrayEnd();
  W.key("reply");
  if (T.Reply.empty())
    W.null();
  else if (isJson(T.Reply))
    W.raw(T.Reply);
  else
    W.value(T.Reply);
  W.key("usage");
  if (T.Usage) {
    W.objectBegin();
    W.field("prompt_tokens", T.Usage->Prompt);
    W.field("completion_tokens", T.Usage->Completion);
    W.field("total_tokens", T.Usage->Total);
    W.objectEnd();
  } else {
    W.null();
  }
  W.key("error");
  if (T.Error.empty())
    W.null();
  else
    W.value(T.Error);
  W.objectEnd();

  std::lock_guard<std::mutex> L(TranscriptMutex);
  if (std::error_code EC = sys::fs::create_directories(Config.TranscriptDir))
    return createStringError(
        EC, "%s: cannot create the transcript directory: %s",
        Config.TranscriptDir.c_str(), EC.message().c_str());
  std::string Suffix = T.Label.empty() ? "" : "-" + sanitizeLabel(T.Label);
  for (;; ++NextNumber) {
    SmallString<256> Path(Config.TranscriptDir);
    sys::path::append(Path, sanitizeLabel(Config.Name) + "-" +
                                formatString("%04u", NextNumber) + Suffix +
                                ".json");
    if (sys::fs::exists(Path))
      continue;
    ++NextNumber;
    return writeFileAtomically(Path, Redact(W.str()));
  }
}

/// Sends \p H once and says what came of it: a reply, or an error with
/// whether it is worth retrying. Messages name the endpoint and the setting
/// to check.
static Outcome sendOnce(const HttpRequest &H, const LLMConfig &Config,
                        const std::string &Endpoint, bool HasKey) {
  std::string KeyHint =
      HasKey ? "check ASTRA_LLM_API_KEY / OPENAI_API_KEY"
             : "no key was sent: set ASTRA_LLM_API_KEY or OPENAI_API_KEY";
  Outcome O;
  Clock::time_point A0 = Clock::now();
  Expected<HttpResponse> Resp = httpSend(H);
  if (!Resp) {
    std::string Msg;
    bool Retry = false;
    handleAllErrors(
        Resp.takeError(),
        [&](const HttpError &E) {
          switch (E.kind()) {
          case HttpFailure::Timeout:
            Msg = "the request to " + Endpoint + " timed out after " +
                  fmtSeconds(secondsSince(A0)) + " (request timeout " +
                  fmtSeconds(H.TimeoutSeconds) + ", connect timeout " +
                  fmtSeconds(Config.ConnectTimeoutSeconds) +
                  "; raise --llm-timeout for slow models): " + E.detail();
            Retry = true;
            break;
          case HttpFailure::Connect:
            Msg = "cannot reach the LLM server at " + Endpoint + ": " +
                  E.detail() + " (is the server running?)";
            Retry = true;
            break;
          case HttpFailure::Resolve:
            Msg = "cannot resolve the host of " + Endpoint + ": " + E.detail() +
                  "; check --llm-base-url";
            break;
          case HttpFailure::BadUrl:
            Msg = "the LLM URL " + Endpoint + " is not usable: " + E.detail() +
                  "; check --llm-base-url";
            break;
          case HttpFailure::Tls:
            Msg = "TLS failure talking to " + Endpoint + ": " + E.detail();
            break;
          case HttpFailure::Other:
            Msg = "request to " + Endpoint + " failed: " + E.detail();
            break;
          }
        },
        [&](const ErrorInfoBase &E) { Msg = E.message(); });
    O.Error = Msg;
    O.Retryable = Retry;
    return O;
  }
  O.Status = Resp->Status;
  O.Body = std::move(Resp->Body);
  long St = Resp->Status;
  std::string Where =
      " (HTTP " + std::to_string(St) + " from " + Endpoint + ")";
  if (St >= 200 && St < 300) {
    Expected<ChatReply> R = parseChatReply(O.Body);
    if (!R)
      O.Error = toString(R.takeError()) + Where;
    else
      O.Reply = std::move(*R);
    return O;
  }
  std::string Msg = serverMessage(O.Body);
  O.RetryAfter = parseRetryAfter(Resp->Headers, std::time(nullptr));
  if (St == 401) {
    O.Error = "the API key was rejected" + Where + ": " + Msg + "; " + KeyHint;
  } else if (St == 403) {
    O.Error = "access denied" + Where + ": " + Msg +
              "; the API key may lack access to model '" + Config.Model +
              "' or to this endpoint";
  } else if (St == 404) {
    O.Error = "model or endpoint not found: check --llm-base-url and "
              "--llm-model (model '" +
              Config.Model + "')" + Where + ": " + Msg;
  } else if (St == 400 || St == 422) {
    O.Error = "the LLM server rejected the request" + Where + ": " + Msg;
  } else if (St == 429 && isQuotaExhausted(O.Body)) {
    O.Error = "the API quota is exhausted" + Where + ": " + Msg +
              "; check the account's plan and billing";
  } else if (St == 429) {
    O.Error = "rate limited" + Where + ": " + Msg;
    O.Retryable = true;
  } else if (St >= 500 || St == 408) {
    O.Error = "the LLM server failed" + Where + ": " + Msg;
    O.Retryable = true;
  } else if (St >= 300 && St < 400) {
    auto Loc = Resp->Headers.find("location");
    O.Error =
        "the LLM server redirects" + Where +
        (Loc == Resp->Headers.end() ? std::string() : " to " + Loc->second) +
        "; set --llm-base-url to where it points";
  } else {
    O.Error = "unexpected reply" + Where + ": " + Msg;
  }
  return O;
}

Expected<ChatReply> LLMClient::chat(const ChatRequest &Req) {
  Clock::time_point T0 = Clock::now();
  {
    std::lock_guard<std::mutex> L(S->M);
    ++S->Stats.Calls;
  }
  Transcript T;
  T.Label = Req.Label;
  T.Sample = Req.Sample;

  // Records the call, warning once per client when a file cannot be written:
  // a missing transcript or cache entry must not fail the optimization.
  auto Finish = [&](bool Failed) {
    T.Seconds = secondsSince(T0);
    std::lock_guard<std::mutex> L(S->M);
    if (Failed)
      ++S->Stats.Failures;
    if (Config.TranscriptDir.empty())
      return;
    if (Error E =
            writeTranscript(Config, Endpoint, hasApiKey(), T, S->NextTranscript,
                            [&](StringRef X) { return redact(X); })) {
      if (!S->WarnedTranscript)
        errs() << "clang-astra: warning: cannot save the LLM transcript: "
               << redact(toString(std::move(E))) << "\n";
      else
        consumeError(std::move(E));
      S->WarnedTranscript = true;
    }
  };
  auto Fail = [&](const Twine &Msg) -> Error {
    T.Error = redact(Msg.str());
    Finish(/*Failed=*/true);
    return createStringError(inconvertibleErrorCode(), T.Error);
  };

  ChatParams P;
  P.Model = Config.Model;
  P.Temperature = Config.Temperature;
  P.MaxTokens = Config.MaxTokens;
  P.TokensFieldName = S->TokensFieldName;
  P.ExtraBodyJson = Config.ExtraBodyJson;
  Expected<std::string> Body = buildChatRequestBody(P, Req);
  if (!Body)
    return Fail(toString(Body.takeError()));
  T.Request = *Body;
  T.CacheKey = ReplyCache::key(Endpoint, *Body, Req.Sample);

  if (Config.UseCache) {
    if (std::optional<std::string> Hit = S->Cache.lookup(T.CacheKey)) {
      Expected<ChatReply> R = parseChatReply(*Hit);
      if (R) {
        R->FromCache = true;
        R->Seconds = secondsSince(T0);
        T.FromCache = true;
        T.Reply = *Hit;
        T.Usage = R->Usage;
        {
          std::lock_guard<std::mutex> L(S->M);
          ++S->Stats.CacheHits;
          S->Stats.CachedUsage += R->Usage;
        }
        Finish(/*Failed=*/false);
        return std::move(*R);
      }
      consumeError(R.takeError()); // A damaged entry: ask again, overwrite it.
    }
  }

  HttpRequest H;
  H.Url = Endpoint;
  H.Body = *Body;
  H.Headers = {"Content-Type: application/json", "Accept: application/json"};
  if (hasApiKey())
    H.Headers.push_back("Authorization: Bearer " + ApiKey);
  H.ConnectTimeoutSeconds = Config.ConnectTimeoutSeconds;

  for (unsigned N = 1;; ++N) {
    Clock::time_point A0 = Clock::now();
    // No attempt may run past the limit per call (a tenth of a second at
    // least: curl reads a zero timeout as none).
    H.TimeoutSeconds =
        std::max(0.1, std::min(Config.TimeoutSeconds,
                               Config.MaxTotalSeconds - secondsSince(T0)));
    {
      std::lock_guard<std::mutex> L(S->M);
      ++S->Stats.Requests;
      if (N > 1)
        ++S->Stats.Retries;
    }
    Outcome O = sendOnce(H, Config, Endpoint, hasApiKey());
    AttemptRecord Rec{O.Status, O.Reply ? "" : O.Error, secondsSince(A0), 0};

    if (O.Reply) {
      T.Attempts.push_back(Rec);
      ChatReply R = std::move(*O.Reply);
      R.Attempts = N;
      R.Seconds = secondsSince(T0);
      T.Reply = O.Body;
      T.Usage = R.Usage;
      {
        std::lock_guard<std::mutex> L(S->M);
        S->Stats.Usage += R.Usage;
      }
      if (Config.UseCache)
        if (Error E = S->Cache.store(T.CacheKey, redact(O.Body))) {
          std::lock_guard<std::mutex> L(S->M);
          if (!S->WarnedCache)
            errs() << "clang-astra: warning: cannot cache the LLM reply: "
                   << toString(std::move(E)) << "\n";
          else
            consumeError(std::move(E));
          S->WarnedCache = true;
        }
      Finish(/*Failed=*/false);
      return R;
    }

    if (!O.Body.empty())
      T.Reply = O.Body;
    auto MarkFatal = [&](const std::string &Msg) {
      std::lock_guard<std::mutex> L(S->M);
      if (S->Stats.FatalError.empty())
        S->Stats.FatalError = redact(Msg);
    };
    if (!O.Retryable) {
      T.Attempts.push_back(Rec);
      long St = O.Status.value_or(0);
      if ((St >= 300 && St < 400) || St == 400 || St == 401 || St == 403 ||
          St == 404 || St == 422 || St == 429)
        MarkFatal(O.Error);
      return Fail(O.Error);
    }
    double Elapsed = secondsSince(T0);
    if (N > Config.MaxRetries) {
      T.Attempts.push_back(Rec);
      std::string Msg = O.Error + " (gave up after " + std::to_string(N) +
                        " attempts in " + fmtSeconds(Elapsed) +
                        "; see --llm-retries)";
      if (!O.Status) // Never answered: later calls will not fare better.
        MarkFatal(Msg);
      return Fail(Msg);
    }
    double Wait;
    if (O.RetryAfter) {
      Wait = std::min(*O.RetryAfter, Config.MaxBackoffSeconds);
    } else {
      double Base = std::min(Config.MaxBackoffSeconds,
                             Config.InitialBackoffSeconds *
                                 std::ldexp(1.0, static_cast<int>(N) - 1));
      std::lock_guard<std::mutex> L(S->M);
      Wait = std::uniform_real_distribution<double>(Base / 2, Base)(S->Rng);
    }
    Rec.WaitSeconds = Wait;
    T.Attempts.push_back(Rec);
    if (Elapsed + Wait > Config.MaxTotalSeconds)
      return Fail(O.Error + " (gave up after " + Twine(N) +
                  " attempts: waiting " + fmtSeconds(Wait) +
                  " more would pass the limit of " +
                  fmtSeconds(Config.MaxTotalSeconds) + " per LLM call)");
    std::this_thread::sleep_for(std::chrono::duration<double>(Wait));
  }
}

} // namespace astra
