//===- LLMClient.h - OpenAI-compatible chat-completions client --*- C++ -*-===//
//
// One client per role (planner, coder): each has its own model and settings
// and sums its own token usage. The client posts to {base}/chat/completions,
// so OpenAI, vLLM, llama.cpp's server and Ollama's /v1 all work through the
// base URL. It retries what is worth retrying (429, 5xx, dropped
// connections, timeouts) with exponential backoff and jitter, answers
// repeated questions from an on-disk cache, and can save every exchange as a
// JSON transcript. The API key is sent only in the Authorization header: it
// is never written to a transcript, the cache or an error message.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LLM_LLMCLIENT_H
#define ASTRA_LLM_LLMCLIENT_H

#include "astra/LLM/Chat.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace astra {

/// Which request field carries the max tokens setting.
enum class MaxTokensField {
  /// "max_completion_tokens" for api.openai.com (its newer models reject
  /// "max_tokens"), "max_tokens" for every other server.
  Auto,
  MaxTokens,
  MaxCompletionTokens,
};

struct LLMConfig {
  /// Names the client in transcripts and messages ("planner", "coder").
  std::string Name = "llm";
  /// Up to the version part: https://api.openai.com/v1,
  /// http://localhost:8000/v1 (vLLM), http://localhost:8080/v1 (llama.cpp),
  /// http://localhost:11434/v1 (Ollama). A URL that already ends in
  /// /chat/completions is used as it is.
  std::string BaseUrl = "https://api.openai.com/v1";
  std::string Model;
  /// Wins when set; else $ASTRA_LLM_API_KEY, else $OPENAI_API_KEY; with none
  /// no Authorization header is sent (local servers).
  std::string ApiKey;
  /// Limit on one HTTP request, from connect to the last byte of the reply.
  double TimeoutSeconds = 300;
  double ConnectTimeoutSeconds = 20;
  /// Retries after the first attempt (so MaxRetries + 1 requests at most).
  unsigned MaxRetries = 4;
  /// Limit on one chat() call, every attempt and wait included: no retry
  /// starts that could not finish its wait within it.
  double MaxTotalSeconds = 900;
  /// The first backoff; each retry doubles it, up to MaxBackoffSeconds, and
  /// waits a random time between half of it and all of it. A Retry-After
  /// the server sends replaces it, capped at MaxBackoffSeconds too.
  double InitialBackoffSeconds = 1;
  double MaxBackoffSeconds = 60;
  /// Not sent when unset: the server's default (some models accept no other).
  std::optional<double> Temperature;
  std::optional<unsigned> MaxTokens;
  MaxTokensField TokensField = MaxTokensField::Auto;
  /// JSON object merged into every request body ({"reasoning_effort":"high"}).
  std::string ExtraBodyJson;
  /// Read and write the reply cache; false bypasses it both ways.
  bool UseCache = true;
  /// Empty: defaultLLMCacheDir().
  std::string CacheDir;
  /// Where to save one JSON file per chat() call; empty: none.
  std::string TranscriptDir;
};

/// What a client did since it was created.
struct LLMStats {
  unsigned Calls = 0;     ///< chat() calls.
  unsigned CacheHits = 0; ///< Calls answered from the cache.
  unsigned Requests = 0;  ///< HTTP requests sent.
  unsigned Retries = 0;   ///< Requests that repeated a failed one.
  unsigned Failures = 0;  ///< Calls that returned an error.
  /// Tokens the server reported for the requests made now (what was paid).
  TokenUsage Usage;
  /// Tokens of the replies taken from the cache (not paid again).
  TokenUsage CachedUsage;
  /// Set when a call failed in a way every later call will too (a rejected
  /// key, no such model or endpoint, an exhausted quota, an endpoint that
  /// never answers): the optimizer stops and says so instead of carrying on
  /// with fallbacks.
  std::string FatalError;
};

class LLMClient {
public:
  /// Checks the configuration, resolves the API key and loads libcurl; the
  /// errors say which setting is wrong and how to fix it.
  static llvm::Expected<std::unique_ptr<LLMClient>> create(LLMConfig Config);

  /// One chat-completions call: from the cache when possible, else over
  /// HTTP with retries.
  llvm::Expected<ChatReply> chat(const ChatRequest &Req);

  LLMStats stats() const;
  const std::string &name() const { return Config.Name; }
  const std::string &model() const { return Config.Model; }
  /// The URL requests go to.
  const std::string &endpoint() const { return Endpoint; }
  bool hasApiKey() const { return !ApiKey.empty(); }
  /// \p Text with the API key replaced by "[REDACTED]". Keys shorter than 8
  /// characters are left alone: those are placeholders local servers take
  /// ("EMPTY", "ollama"), and replacing them would corrupt replies.
  std::string redact(llvm::StringRef Text) const;

  ~LLMClient();

private:
  struct State;
  LLMClient(LLMConfig Config, std::string ApiKey, std::string Endpoint);

  LLMConfig Config; ///< With ApiKey cleared.
  std::string ApiKey;
  std::string Endpoint;
  std::unique_ptr<State> S;
};

/// Seconds to wait that a 429 or 503 reply asks for: "retry-after-ms"
/// (milliseconds, as OpenAI sends) or "retry-after" (seconds or an HTTP
/// date, relative to \p Now). Header names are lower case. None when absent
/// or unreadable.
std::optional<double>
parseRetryAfter(const std::map<std::string, std::string> &Headers,
                std::time_t Now);

/// The OpenAI-style chat-completions URL of a base URL.
std::string chatCompletionsUrl(llvm::StringRef BaseUrl);

} // namespace astra

#endif
