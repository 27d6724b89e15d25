//===- Chat.h - Chat-completions messages, tools and replies ----*- C++ -*-===//
//
// The data of the OpenAI chat-completions protocol as the optimizer uses it:
// messages (system, user, assistant, tool), tools offered to the model
// (function name, description, JSON schema of the parameters), the calls the
// model makes, and token usage. Building the request body and parsing the
// reply are pure functions here, so the client (LLMClient.h) only adds
// transport, retries, the cache and transcripts.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LLM_CHAT_H
#define ASTRA_LLM_CHAT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

enum class ChatRole { System, User, Assistant, Tool };

/// "system", "user", "assistant" or "tool".
llvm::StringRef chatRoleName(ChatRole R);

/// One function call the model asked for.
struct ToolCall {
  /// The id the reply gave the call; the caller's "tool" message must name
  /// it. Servers that give none get "call_<index>" so a conversation can
  /// always continue.
  std::string Id;
  std::string Name;
  /// The arguments as JSON text, as the model wrote them (it may be invalid:
  /// models make mistakes, and the caller should say so back to the model).
  std::string Arguments;

  /// Parses Arguments into \p Doc; the error names the tool and the JSON
  /// error, in words the caller can send back to the model.
  llvm::Error parseArguments(rapidjson::Document &Doc) const;
};

struct ChatMessage {
  ChatRole Role = ChatRole::User;
  std::string Content;
  /// Assistant messages: the calls the model made (sent back verbatim when
  /// the conversation continues).
  std::vector<ToolCall> ToolCalls;
  /// Tool messages: the id of the call this message answers.
  std::string ToolCallId;

  static ChatMessage system(llvm::StringRef Text);
  static ChatMessage user(llvm::StringRef Text);
  static ChatMessage assistant(llvm::StringRef Text,
                               std::vector<ToolCall> Calls = {});
  /// The result of running the tool call \p CallId.
  static ChatMessage toolResult(llvm::StringRef CallId, llvm::StringRef Text);
};

/// A function the model may call: OpenAI's {"type": "function", "function":
/// {name, description, parameters}}.
struct ToolSpec {
  std::string Name;
  std::string Description;
  /// JSON schema of the arguments object, as JSON text, e.g.
  /// {"type":"object","properties":{"passes":{"type":"array",...}},
  ///  "required":["passes"]}.
  std::string ParametersJson;
};

struct TokenUsage {
  uint64_t Prompt = 0, Completion = 0, Total = 0;
  TokenUsage &operator+=(const TokenUsage &O) {
    Prompt += O.Prompt;
    Completion += O.Completion;
    Total += O.Total;
    return *this;
  }
};

/// One chat-completions call.
struct ChatRequest {
  std::vector<ChatMessage> Messages;
  std::vector<ToolSpec> Tools;
  /// "auto", "none", "required", or the name of one tool the model must
  /// call. Empty: not sent (the server's default, "auto" when tools exist).
  std::string ToolChoice;
  /// Asking the same question again gives the same cached reply; a caller
  /// that wants another, independent sample for identical messages asks with
  /// another Sample number (part of the cache key, never sent).
  unsigned Sample = 0;
  /// Names this call in transcript file names ("plan", "rewrite-k3");
  /// letters, digits, '-' and '_' are kept, the rest become '_'.
  std::string Label;
};

/// What the request body says beyond the messages: the client fills it from
/// its configuration.
struct ChatParams {
  std::string Model;
  std::optional<double> Temperature;
  std::optional<unsigned> MaxTokens;
  /// "max_tokens" (most servers) or "max_completion_tokens" (OpenAI's newer
  /// models reject max_tokens).
  std::string TokensFieldName = "max_tokens";
  /// A JSON object whose members are added to the body as they are, for
  /// server-specific settings ({"reasoning_effort": "high"}, {"top_k": 20}).
  std::string ExtraBodyJson;
};

struct ChatReply {
  /// The assistant's text; empty when it only called tools.
  std::string Content;
  std::vector<ToolCall> ToolCalls;
  /// "stop", "length" (cut off at max tokens), "tool_calls", ...
  std::string FinishReason;
  /// The model the server says answered.
  std::string Model;
  /// Zero where the server reports none (some local servers).
  TokenUsage Usage;
  /// The reply body as the server sent it.
  std::string RawJson;
  /// Answered from the on-disk cache: no request was made.
  bool FromCache = false;
  /// HTTP requests made for this reply (0 from the cache; 1 + retries).
  unsigned Attempts = 0;
  /// Wall time of the call, waits included.
  double Seconds = 0;

  /// The assistant message to append when the conversation continues.
  ChatMessage asMessage() const {
    return ChatMessage::assistant(Content, ToolCalls);
  }
};

/// The JSON body of a chat-completions request. Deterministic (same input,
/// same bytes), since the reply cache key is a hash of it. Fails when a
/// tool's parameters or ExtraBodyJson are not JSON objects, naming which.
llvm::Expected<std::string> buildChatRequestBody(const ChatParams &Params,
                                                 const ChatRequest &Req);

/// Parses a chat-completions reply body (the first choice). Malformed
/// replies (not JSON, an "error" object, no choices, no message) are errors
/// that say which and quote a short excerpt of the body.
llvm::Expected<ChatReply> parseChatReply(llvm::StringRef Body);

/// At most \p Max characters of \p Text on one line, for error messages.
std::string excerpt(llvm::StringRef Text, size_t Max = 200);

} // namespace astra

#endif
