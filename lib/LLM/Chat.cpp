//===- Chat.cpp - Chat-completions request bodies and reply parsing -------===//
#include "astra/LLM/Chat.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/StringExtras.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

using namespace llvm;

namespace astra {

StringRef chatRoleName(ChatRole R) {
  switch (R) {
  case ChatRole::System:
    return "system";
  case ChatRole::User:
    return "user";
  case ChatRole::Assistant:
    return "assistant";
  case ChatRole::Tool:
    return "tool";
  }
  return "user";
}

ChatMessage ChatMessage::system(StringRef Text) {
  ChatMessage M;
  M.Role = ChatRole::System;
  M.Content = Text.str();
  return M;
}

ChatMessage ChatMessage::user(StringRef Text) {
  ChatMessage M;
  M.Role = ChatRole::User;
  M.Content = Text.str();
  return M;
}

ChatMessage ChatMessage::assistant(StringRef Text,
                                   std::vector<ToolCall> Calls) {
  ChatMessage M;
  M.Role = ChatRole::Assistant;
  M.Content = Text.str();
  M.ToolCalls = std::move(Calls);
  return M;
}

ChatMessage ChatMessage::toolResult(StringRef CallId, StringRef Text) {
  ChatMessage M;
  M.Role = ChatRole::Tool;
  M.ToolCallId = CallId.str();
  M.Content = Text.str();
  return M;
}

std::string excerpt(StringRef Text, size_t Max) {
  std::string Out;
  for (char C : Text.trim()) {
    if (Out.size() >= Max) {
      Out += "...";
      break;
    }
    Out += (C == '\n' || C == '\r' || C == '\t') ? ' ' : C;
  }
  return Out.empty() ? "(empty)" : Out;
}

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void writeString(Writer &W, StringRef S) {
  W.String(S.data(), static_cast<rapidjson::SizeType>(S.size()));
}

void writeKey(Writer &W, StringRef S) {
  W.Key(S.data(), static_cast<rapidjson::SizeType>(S.size()));
}

/// Parses \p Text as a JSON object; \p What names it in the error.
Error parseObject(StringRef Text, rapidjson::Document &Doc, const Twine &What) {
  if (Error E = checkJsonNesting(Text))
    return createStringError(inconvertibleErrorCode(), "%s: %s",
                             What.str().c_str(),
                             toString(std::move(E)).c_str());
  std::string Copy = Text.str();
  Doc.Parse(Copy.c_str());
  if (Doc.HasParseError())
    return createStringError(
        inconvertibleErrorCode(), "%s: not valid JSON (%s at offset %zu): %s",
        What.str().c_str(), rapidjson::GetParseError_En(Doc.GetParseError()),
        Doc.GetErrorOffset(), excerpt(Text).c_str());
  if (!Doc.IsObject())
    return createStringError(inconvertibleErrorCode(),
                             "%s: not a JSON object: %s", What.str().c_str(),
                             excerpt(Text).c_str());
  return Error::success();
}

/// OpenAI accepts tool names of 1 to 64 letters, digits, '_' and '-'.
bool isValidToolName(StringRef Name) {
  return !Name.empty() && Name.size() <= 64 && all_of(Name, [](char C) {
    return isAlnum(C) || C == '_' || C == '-';
  });
}

} // namespace

Error ToolCall::parseArguments(rapidjson::Document &Doc) const {
  StringRef Text = StringRef(Arguments).trim();
  // Some servers send "" for a call without arguments.
  return parseObject(Text.empty() ? "{}" : Text, Doc,
                     "the arguments of tool call '" + Name + "'");
}

namespace {

void writeMessage(Writer &W, const ChatMessage &M) {
  W.StartObject();
  writeKey(W, "role");
  writeString(W, chatRoleName(M.Role));
  writeKey(W, "content");
  // An assistant turn that only called tools has null content.
  if (M.Role == ChatRole::Assistant && M.Content.empty() &&
      !M.ToolCalls.empty())
    W.Null();
  else
    writeString(W, M.Content);
  if (M.Role == ChatRole::Assistant && !M.ToolCalls.empty()) {
    writeKey(W, "tool_calls");
    W.StartArray();
    for (const ToolCall &C : M.ToolCalls) {
      W.StartObject();
      writeKey(W, "id");
      writeString(W, C.Id);
      writeKey(W, "type");
      writeString(W, "function");
      writeKey(W, "function");
      W.StartObject();
      writeKey(W, "name");
      writeString(W, C.Name);
      writeKey(W, "arguments");
      writeString(W, C.Arguments);
      W.EndObject();
      W.EndObject();
    }
    W.EndArray();
  }
  if (M.Role == ChatRole::Tool) {
    writeKey(W, "tool_call_id");
    writeString(W, M.ToolCallId);
  }
  W.EndObject();
}

} // namespace

Expected<std::string> buildChatRequestBody(const ChatParams &Params,
                                           const ChatRequest &Req) {
  if (Params.Model.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no model is set: name one with --llm-model");
  if (Req.Messages.empty())
    return createStringError(inconvertibleErrorCode(),
                             "a chat request needs at least one message");
  for (const ChatMessage &M : Req.Messages)
    if (M.Role == ChatRole::Tool && M.ToolCallId.empty())
      return createStringError(inconvertibleErrorCode(),
                               "a tool message must name the tool call it "
                               "answers (ToolCallId is empty)");

  // Parse every embedded JSON text first, so a bad one fails before writing.
  std::vector<rapidjson::Document> Schemas(Req.Tools.size());
  for (size_t I = 0; I < Req.Tools.size(); ++I) {
    const ToolSpec &T = Req.Tools[I];
    if (!isValidToolName(T.Name))
      return createStringError(inconvertibleErrorCode(),
                               "tool name '%s' is invalid: use 1 to 64 "
                               "letters, digits, '_' or '-'",
                               T.Name.c_str());
    if (Error E = parseObject(T.ParametersJson.empty() ? "{\"type\":\"object\"}"
                                                       : T.ParametersJson,
                              Schemas[I],
                              "the parameters schema of tool '" + T.Name + "'"))
      return E;
  }
  rapidjson::Document Extra;
  if (!Params.ExtraBodyJson.empty())
    if (Error E = parseObject(Params.ExtraBodyJson, Extra,
                              "the extra request body"))
      return E;
  StringRef Choice = Req.ToolChoice;
  bool NamedChoice = !Choice.empty() && Choice != "auto" && Choice != "none" &&
                     Choice != "required";
  if (NamedChoice &&
      none_of(Req.Tools, [&](const ToolSpec &T) { return T.Name == Choice; }))
    return createStringError(inconvertibleErrorCode(),
                             "tool_choice names '%s', which is not one of the "
                             "offered tools",
                             Req.ToolChoice.c_str());

  rapidjson::StringBuffer Buf;
  Writer W(Buf);
  W.StartObject();
  writeKey(W, "model");
  writeString(W, Params.Model);
  writeKey(W, "messages");
  W.StartArray();
  for (const ChatMessage &M : Req.Messages)
    writeMessage(W, M);
  W.EndArray();
  if (!Req.Tools.empty()) {
    writeKey(W, "tools");
    W.StartArray();
    for (size_t I = 0; I < Req.Tools.size(); ++I) {
      W.StartObject();
      writeKey(W, "type");
      writeString(W, "function");
      writeKey(W, "function");
      W.StartObject();
      writeKey(W, "name");
      writeString(W, Req.Tools[I].Name);
      writeKey(W, "description");
      writeString(W, Req.Tools[I].Description);
      writeKey(W, "parameters");
      Schemas[I].Accept(W);
      W.EndObject();
      W.EndObject();
    }
    W.EndArray();
  }
  if (!Choice.empty()) {
    writeKey(W, "tool_choice");
    if (NamedChoice) {
      W.StartObject();
      writeKey(W, "type");
      writeString(W, "function");
      writeKey(W, "function");
      W.StartObject();
      writeKey(W, "name");
      writeString(W, Choice);
      W.EndObject();
      W.EndObject();
    } else {
      writeString(W, Choice);
    }
  }
  if (Params.Temperature) {
    writeKey(W, "temperature");
    W.Double(*Params.Temperature);
  }
  if (Params.MaxTokens) {
    writeKey(W, Params.TokensFieldName);
    W.Uint(*Params.MaxTokens);
  }
  if (Extra.IsObject())
    for (auto &M : Extra.GetObject()) {
      W.Key(M.name.GetString(), M.name.GetStringLength());
      M.value.Accept(W);
    }
  W.EndObject();
  return std::string(Buf.GetString(), Buf.GetSize());
}

namespace {

Error malformed(StringRef Why, StringRef Body) {
  return createStringError(inconvertibleErrorCode(),
                           "malformed reply from the LLM server: %s: %s",
                           Why.str().c_str(), excerpt(Body).c_str());
}

/// Content is a string, null, or (some servers) an array of parts of which
/// the "text" ones count.
std::string contentText(const rapidjson::Value &V) {
  if (V.IsString())
    return std::string(V.GetString(), V.GetStringLength());
  std::string Out;
  if (V.IsArray())
    for (const auto &Part : V.GetArray())
      if (Part.IsObject() && Part.HasMember("text") && Part["text"].IsString())
        Out.append(Part["text"].GetString(), Part["text"].GetStringLength());
  return Out;
}

uint64_t count(const rapidjson::Value &Obj, const char *Key) {
  if (!Obj.HasMember(Key))
    return 0;
  const rapidjson::Value &V = Obj[Key];
  if (V.IsUint64())
    return V.GetUint64();
  if (V.IsNumber() && V.GetDouble() > 0)
    return static_cast<uint64_t>(V.GetDouble());
  return 0;
}

std::string stringMember(const rapidjson::Value &Obj, const char *Key) {
  if (Obj.IsObject() && Obj.HasMember(Key) && Obj[Key].IsString())
    return std::string(Obj[Key].GetString(), Obj[Key].GetStringLength());
  return "";
}

} // namespace

Expected<ChatReply> parseChatReply(StringRef Body) {
  rapidjson::Document Doc;
  if (Error E = checkJsonNesting(Body))
    return malformed(toString(std::move(E)), Body);
  std::string Copy = Body.str();
  Doc.Parse(Copy.c_str());
  if (Doc.HasParseError())
    return malformed(std::string("not JSON (") +
                         rapidjson::GetParseError_En(Doc.GetParseError()) +
                         " at offset " + std::to_string(Doc.GetErrorOffset()) +
                         ")",
                     Body);
  if (!Doc.IsObject())
    return malformed("not a JSON object", Body);
  if (Doc.HasMember("error") && !Doc["error"].IsNull()) {
    const rapidjson::Value &Err = Doc["error"];
    std::string Msg =
        Err.IsString() ? Err.GetString() : stringMember(Err, "message");
    return createStringError(
        inconvertibleErrorCode(), "the LLM server returned an error: %s",
        excerpt(Msg.empty() ? Body : StringRef(Msg), 500).c_str());
  }
  if (!Doc.HasMember("choices") || !Doc["choices"].IsArray())
    return malformed("no \"choices\" array", Body);
  if (Doc["choices"].Empty())
    return malformed("\"choices\" is empty", Body);
  const rapidjson::Value &Choice = Doc["choices"][0];
  if (!Choice.IsObject() || !Choice.HasMember("message") ||
      !Choice["message"].IsObject())
    return malformed("the first choice has no \"message\" object", Body);
  const rapidjson::Value &Msg = Choice["message"];

  ChatReply R;
  R.RawJson = Body.str();
  R.Model = stringMember(Doc, "model");
  R.FinishReason = stringMember(Choice, "finish_reason");
  if (Msg.HasMember("content"))
    R.Content = contentText(Msg["content"]);
  if (Msg.HasMember("tool_calls") && Msg["tool_calls"].IsArray()) {
    for (const auto &C : Msg["tool_calls"].GetArray()) {
      const rapidjson::Value *Fn =
          C.IsObject() && C.HasMember("function") ? &C["function"] : nullptr;
      if (!Fn || !Fn->IsObject() || stringMember(*Fn, "name").empty())
        return malformed("a tool call has no function name", Body);
      ToolCall TC;
      TC.Id = stringMember(C, "id");
      if (TC.Id.empty())
        TC.Id = "call_" + std::to_string(R.ToolCalls.size());
      TC.Name = stringMember(*Fn, "name");
      if (Fn->HasMember("arguments")) {
        const rapidjson::Value &A = (*Fn)["arguments"];
        if (A.IsString()) {
          TC.Arguments.assign(A.GetString(), A.GetStringLength());
        } else if (!A.IsNull()) {
          // Some servers send the arguments as an object, not as text.
          rapidjson::StringBuffer Buf;
          Writer W(Buf);
          A.Accept(W);
          TC.Arguments.assign(Buf.GetString(), Buf.GetSize());
        }
      }
      R.ToolCalls.push_back(std::move(TC));
    }
  }
  if (Doc.HasMember("usage") && Doc["usage"].IsObject()) {
    const rapidjson::Value &U = Doc["usage"];
    R.Usage.Prompt = count(U, "prompt_tokens");
    R.Usage.Completion = count(U, "completion_tokens");
    R.Usage.Total = count(U, "total_tokens");
    if (R.Usage.Total == 0)
      R.Usage.Total = R.Usage.Prompt + R.Usage.Completion;
  }
  return R;
}

} // namespace astra
