//===- LLMClientTest.cpp - The LLM client against a real HTTP server ------===//
//
// The client talks to test/llm/fake_openai_server.py, a real HTTP server on
// loopback that plays scripted chat-completions replies and reports what it
// received (GET /stats). Nothing is mocked: requests go through the libcurl
// the client loads at run time.
//
//===----------------------------------------------------------------------===//
#include "astra/LLM/LLMClient.h"
#include "astra/LLM/Chat.h"
#include "astra/LLM/CodeExtract.h"
#include "astra/LLM/Http.h"
#include "astra/LLM/ReplyCache.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "gtest/gtest.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

using namespace astra;
using namespace llvm;

namespace {

class TempDir {
public:
  TempDir() { sys::fs::createUniqueDirectory("astra-llm", Path); }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string file(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  /// The contents of every regular file below this directory.
  std::vector<std::string> readAll(StringRef Sub = "") const {
    std::vector<std::string> Out;
    std::error_code EC;
    std::string Root = Sub.empty() ? std::string(Path) : file(Sub);
    for (sys::fs::recursive_directory_iterator It(Root, EC), E; !EC && It != E;
         It.increment(EC))
      if (sys::fs::is_regular_file(It->path())) {
        if (Expected<std::string> T = readFile(It->path()))
          Out.push_back(*T);
        else
          consumeError(T.takeError());
      }
    return Out;
  }
  SmallString<128> Path;
};

double secondsSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
      .count();
}

/// test/llm/fake_openai_server.py as a child process, on a port it picked.
/// Its stdin is a pipe we hold: when this process dies, the server exits.
class FakeServer {
public:
  explicit FakeServer(StringRef ScriptJson) {
    std::string ScriptPath = Dir.file("script.json");
    if (Error E = writeFileAtomically(ScriptPath, ScriptJson)) {
      StartError = toString(std::move(E));
      return;
    }
    ErrorOr<std::string> Python = sys::findProgramByName("python3");
    if (!Python) {
      StartError = "python3 is not on PATH; the LLM tests need it";
      return;
    }
    std::string Server = ASTRA_SOURCE_DIR "/test/llm/fake_openai_server.py";
    int In[2], Out[2];
    if (pipe(In) || pipe(Out)) {
      StartError = "pipe failed";
      return;
    }
    Pid = fork();
    if (Pid == 0) {
      dup2(In[0], 0);
      dup2(Out[1], 1);
      close(In[0]);
      close(In[1]);
      close(Out[0]);
      close(Out[1]);
      const char *Argv[] = {Python->c_str(), Server.c_str(), "--script",
                            ScriptPath.c_str(), nullptr};
      execv(Python->c_str(), const_cast<char *const *>(Argv));
      _exit(127);
    }
    close(In[0]);
    close(Out[1]);
    StdinFd = In[1];
    StdoutFd = Out[0];
    // The first line is "PORT <n>"; a loaded machine may take a while to
    // start Python.
    std::string Line;
    auto T0 = std::chrono::steady_clock::now();
    while (Line.find('\n') == std::string::npos && secondsSince(T0) < 60) {
      pollfd P{StdoutFd, POLLIN, 0};
      if (poll(&P, 1, 500) <= 0)
        continue;
      char Buf[64];
      ssize_t N = read(StdoutFd, Buf, sizeof(Buf));
      if (N <= 0)
        break;
      Line.append(Buf, N);
    }
    unsigned long long N = 0;
    if (!StringRef(Line).starts_with("PORT ") ||
        getAsUnsignedInteger(StringRef(Line).drop_front(5).trim(), 10, N)) {
      StartError = "the fake server did not report its port (got '" + Line +
                   "'); run " + Server + " by hand to see why";
      return;
    }
    Port = static_cast<unsigned>(N);
  }

  ~FakeServer() {
    if (StdinFd >= 0)
      close(StdinFd);
    if (Pid > 0) {
      kill(Pid, SIGTERM);
      waitpid(Pid, nullptr, 0);
    }
    if (StdoutFd >= 0)
      close(StdoutFd);
  }

  bool ok() const { return StartError.empty(); }
  std::string baseUrl() const {
    return "http://127.0.0.1:" + std::to_string(Port) + "/v1";
  }

  /// What the server has seen: {"requests": n, "log": [...]}.
  void stats(rapidjson::Document &Doc) const {
    HttpRequest R;
    R.Url = "http://127.0.0.1:" + std::to_string(Port) + "/stats";
    R.Post = false;
    R.TimeoutSeconds = 10;
    Expected<HttpResponse> Resp = httpSend(R);
    ASSERT_TRUE(bool(Resp)) << toString(Resp.takeError());
    Doc.Parse(Resp->Body.c_str());
    ASSERT_FALSE(Doc.HasParseError()) << Resp->Body;
  }
  unsigned requests() const {
    rapidjson::Document Doc;
    stats(Doc);
    return Doc.IsObject() ? Doc["requests"].GetUint() : ~0u;
  }

  std::string StartError;
  unsigned Port = 0;

private:
  TempDir Dir;
  pid_t Pid = -1;
  int StdinFd = -1, StdoutFd = -1;
};

/// Clears the key variables so a developer's own key never reaches the fake
/// server, and restores them afterwards.
class LLMClientTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *Var : {"ASTRA_LLM_API_KEY", "OPENAI_API_KEY"}) {
      if (const char *V = std::getenv(Var))
        Saved.emplace_back(Var, V);
      unsetenv(Var);
    }
  }
  void TearDown() override {
    unsetenv("ASTRA_LLM_API_KEY");
    unsetenv("OPENAI_API_KEY");
    for (auto &[Var, Val] : Saved)
      setenv(Var.c_str(), Val.c_str(), 1);
  }

  LLMConfig config(const FakeServer &S) const {
    LLMConfig C;
    C.Name = "coder";
    C.BaseUrl = S.baseUrl();
    C.Model = "fake-model";
    C.UseCache = false;
    C.TimeoutSeconds = 20;
    C.ConnectTimeoutSeconds = 5;
    C.InitialBackoffSeconds = 0.05;
    C.MaxBackoffSeconds = 5;
    C.MaxRetries = 3;
    return C;
  }

  std::unique_ptr<LLMClient> client(LLMConfig C) {
    Expected<std::unique_ptr<LLMClient>> Client = LLMClient::create(C);
    EXPECT_TRUE(bool(Client)) << toString(Client.takeError());
    return Client ? std::move(*Client) : nullptr;
  }

  static ChatRequest ask(StringRef Text) {
    ChatRequest R;
    R.Messages = {ChatMessage::system("You optimize CUDA kernels."),
                  ChatMessage::user(Text)};
    return R;
  }

  std::vector<std::pair<std::string, std::string>> Saved;
};

#define START_SERVER(Name, Script)                                             \
  FakeServer Name(Script);                                                     \
  ASSERT_TRUE(Name.ok()) << Name.StartError

std::string errorText(Error E) { return toString(std::move(E)); }

/// The extracted code, or the error text marked so a comparison fails
/// readably instead of dereferencing an error.
std::string codeOf(StringRef Reply, const CodeExtractOptions &Opts = {}) {
  Expected<std::string> Code = extractCode(Reply, Opts);
  return Code ? *Code : "<error: " + toString(Code.takeError()) + ">";
}

//===----------------------------------------------------------------------===//
// Talking to the server
//===----------------------------------------------------------------------===//

TEST_F(LLMClientTest, GoodReplyHasContentAndUsageSummedPerClient) {
  START_SERVER(S, R"({"replies": [
    {"content": "```cuda\n__global__ void k() {}\n```",
     "usage": {"prompt_tokens": 11, "completion_tokens": 7}},
    {"content": "second", "usage": {"prompt_tokens": 5, "completion_tokens": 2,
                                    "total_tokens": 7}}]})");
  LLMConfig C = config(S);
  C.Temperature = 0.25;
  C.MaxTokens = 512;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  Expected<ChatReply> R = Client->chat(ask("make it fast"));
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Content, "```cuda\n__global__ void k() {}\n```");
  EXPECT_EQ(R->FinishReason, "stop");
  EXPECT_EQ(R->Model, "fake-model");
  EXPECT_EQ(R->Usage.Prompt, 11u);
  EXPECT_EQ(R->Usage.Completion, 7u);
  EXPECT_EQ(R->Usage.Total, 18u);
  EXPECT_EQ(R->Attempts, 1u);
  EXPECT_FALSE(R->FromCache);

  Expected<ChatReply> R2 = Client->chat(ask("again"));
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_EQ(R2->Content, "second");
  LLMStats St = Client->stats();
  EXPECT_EQ(St.Calls, 2u);
  EXPECT_EQ(St.Requests, 2u);
  EXPECT_EQ(St.Retries, 0u);
  EXPECT_EQ(St.Usage.Prompt, 16u);
  EXPECT_EQ(St.Usage.Completion, 9u);
  EXPECT_EQ(St.Usage.Total, 25u);

  // What went over the wire: the model, the messages, the settings, and no
  // Authorization header since no key was configured.
  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 2u);
  const rapidjson::Value &First = Doc["log"][0];
  EXPECT_EQ(std::string(First["path"].GetString()), "/v1/chat/completions");
  EXPECT_TRUE(First["authorization"].IsNull());
  const rapidjson::Value &Body = First["body"];
  EXPECT_EQ(std::string(Body["model"].GetString()), "fake-model");
  EXPECT_DOUBLE_EQ(Body["temperature"].GetDouble(), 0.25);
  EXPECT_EQ(Body["max_tokens"].GetUint(), 512u);
  ASSERT_EQ(Body["messages"].Size(), 2u);
  EXPECT_EQ(std::string(Body["messages"][0]["role"].GetString()), "system");
  EXPECT_EQ(std::string(Body["messages"][1]["content"].GetString()),
            "make it fast");
  EXPECT_FALSE(Body.HasMember("tools"));
}

TEST_F(LLMClientTest, ToolCallIsParsedAndTheConversationContinues) {
  START_SERVER(S, R"({"replies": [
    {"tool_calls": [{"id": "call_7", "name": "apply_passes",
      "arguments": {"passes": ["restrict-const", "fast-math"],
                    "params": {"unroll": 4}}}]},
    {"content": "done"}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  ToolSpec Apply{"apply_passes", "Applies passes from the pass library.",
                 R"({"type":"object","properties":{"passes":{"type":"array",
                    "items":{"type":"string"}},"params":{"type":"object"}},
                    "required":["passes"]})"};
  ChatRequest Req = ask("optimize k");
  Req.Tools = {Apply};
  Req.ToolChoice = "auto";
  Expected<ChatReply> R = Client->chat(Req);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->FinishReason, "tool_calls");
  EXPECT_TRUE(R->Content.empty());
  ASSERT_EQ(R->ToolCalls.size(), 1u);
  const ToolCall &Call = R->ToolCalls[0];
  EXPECT_EQ(Call.Id, "call_7");
  EXPECT_EQ(Call.Name, "apply_passes");
  rapidjson::Document Args;
  ASSERT_FALSE(bool(Call.parseArguments(Args)));
  ASSERT_TRUE(Args["passes"].IsArray());
  EXPECT_EQ(std::string(Args["passes"][1].GetString()), "fast-math");
  EXPECT_EQ(Args["params"]["unroll"].GetInt(), 4);

  // The caller runs the tool and answers with a "tool" message.
  Req.Messages.push_back(R->asMessage());
  Req.Messages.push_back(
      ChatMessage::toolResult(Call.Id, "applied; 1.4x faster"));
  Expected<ChatReply> R2 = Client->chat(Req);
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_EQ(R2->Content, "done");

  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 2u);
  const rapidjson::Value &B1 = Doc["log"][0]["body"];
  ASSERT_TRUE(B1["tools"].IsArray());
  const rapidjson::Value &Fn = B1["tools"][0]["function"];
  EXPECT_EQ(std::string(B1["tools"][0]["type"].GetString()), "function");
  EXPECT_EQ(std::string(Fn["name"].GetString()), "apply_passes");
  EXPECT_EQ(std::string(Fn["parameters"]["required"][0].GetString()), "passes");
  EXPECT_EQ(std::string(B1["tool_choice"].GetString()), "auto");
  const rapidjson::Value &Msgs = Doc["log"][1]["body"]["messages"];
  ASSERT_EQ(Msgs.Size(), 4u);
  EXPECT_EQ(std::string(Msgs[2]["role"].GetString()), "assistant");
  EXPECT_TRUE(Msgs[2]["content"].IsNull());
  EXPECT_EQ(std::string(Msgs[2]["tool_calls"][0]["id"].GetString()), "call_7");
  EXPECT_EQ(std::string(
                Msgs[2]["tool_calls"][0]["function"]["arguments"].GetString()),
            Call.Arguments);
  EXPECT_EQ(std::string(Msgs[3]["role"].GetString()), "tool");
  EXPECT_EQ(std::string(Msgs[3]["tool_call_id"].GetString()), "call_7");
  EXPECT_EQ(std::string(Msgs[3]["content"].GetString()),
            "applied; 1.4x faster");
}

TEST_F(LLMClientTest, ReplyWithoutCodeBlockIsReportedByExtraction) {
  START_SERVER(S, R"({"replies": [
    {"content": "I would unroll the loop and use shared memory."}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  Expected<ChatReply> R = Client->chat(ask("rewrite k"));
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  Expected<std::string> Code = extractCode(R->Content);
  ASSERT_FALSE(bool(Code));
  std::string Msg = errorText(Code.takeError());
  EXPECT_NE(Msg.find("the reply has no code block"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("unroll the loop"), std::string::npos) << Msg;
}

TEST_F(LLMClientTest, MalformedReplyIsAnErrorWithAnExcerpt) {
  START_SERVER(S, R"({"replies": [
    {"malformed": "<html><body>502 proxy hiccup</body></html>"},
    {"body": {"object": "chat.completion", "choices": []}},
    {"body": {"choices": [{"index": 0, "finish_reason": "stop"}]}}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);

  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("malformed reply"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("not JSON"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("502 proxy hiccup"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("HTTP 200"), std::string::npos) << Msg;

  Msg = errorText(Client->chat(ask("b")).takeError());
  EXPECT_NE(Msg.find("\"choices\" is empty"), std::string::npos) << Msg;

  Msg = errorText(Client->chat(ask("c")).takeError());
  EXPECT_NE(Msg.find("no \"message\""), std::string::npos) << Msg;

  // Malformed replies are not retried: one request each.
  EXPECT_EQ(S.requests(), 3u);
  EXPECT_EQ(Client->stats().Failures, 3u);
}

TEST_F(LLMClientTest, RateLimitIsRetriedAfterTheServersDelay) {
  START_SERVER(S, R"({"replies": [
    {"status": 429, "headers": {"retry-after-ms": "400"},
     "body": {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}},
    {"content": "ok"}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  auto T0 = std::chrono::steady_clock::now();
  Expected<ChatReply> R = Client->chat(ask("a"));
  double Took = secondsSince(T0);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Content, "ok");
  EXPECT_EQ(R->Attempts, 2u);
  EXPECT_EQ(Client->stats().Retries, 1u);
  EXPECT_EQ(Client->stats().Requests, 2u);
  EXPECT_GE(Took, 0.4);

  // The server saw the second request at least the asked 400 ms later.
  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 2u);
  double Gap =
      Doc["log"][1]["time"].GetDouble() - Doc["log"][0]["time"].GetDouble();
  EXPECT_GE(Gap, 0.38);
}

TEST_F(LLMClientTest, ServerErrorIsRetriedWithBackoff) {
  START_SERVER(S, R"({"replies": [
    {"status": 500, "body": {"error": {"message": "internal"}}},
    {"content": "ok"}]})");
  LLMConfig C = config(S);
  C.InitialBackoffSeconds = 0.3;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  Expected<ChatReply> R = Client->chat(ask("a"));
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Attempts, 2u);
  EXPECT_EQ(Client->stats().Retries, 1u);
  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 2u);
  // The first backoff is a random time between half the initial one and all.
  double Gap =
      Doc["log"][1]["time"].GetDouble() - Doc["log"][0]["time"].GetDouble();
  EXPECT_GE(Gap, 0.14);
}

TEST_F(LLMClientTest, RepeatedServerErrorsGiveUpAfterMaxRetries) {
  START_SERVER(S, R"({"replies": [
    {"status": 503, "body": {"error": {"message": "overloaded"}}, "times": 10}]})");
  LLMConfig C = config(S);
  C.MaxRetries = 2;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  Expected<ChatReply> R = Client->chat(ask("a"));
  ASSERT_FALSE(bool(R));
  std::string Msg = errorText(R.takeError());
  EXPECT_NE(Msg.find("HTTP 503"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("overloaded"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("gave up after 3 attempts"), std::string::npos) << Msg;
  EXPECT_EQ(S.requests(), 3u);
  LLMStats St = Client->stats();
  EXPECT_EQ(St.Requests, 3u);
  EXPECT_EQ(St.Retries, 2u);
  EXPECT_EQ(St.Failures, 1u);
}

TEST_F(LLMClientTest, RetryThatWouldPassTheTimeLimitIsNotStarted) {
  START_SERVER(S, R"({"replies": [
    {"status": 429, "headers": {"retry-after": "30"},
     "body": {"error": {"message": "slow down"}}, "times": 5}]})");
  LLMConfig C = config(S);
  C.MaxBackoffSeconds = 20; // Caps the asked 30 s at 20 s: still too long.
  C.MaxTotalSeconds = 2;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  auto T0 = std::chrono::steady_clock::now();
  Expected<ChatReply> R = Client->chat(ask("a"));
  ASSERT_FALSE(bool(R));
  std::string Msg = errorText(R.takeError());
  EXPECT_NE(Msg.find("rate limited"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("pass the limit"), std::string::npos) << Msg;
  EXPECT_LT(secondsSince(T0), 10.0);
  EXPECT_EQ(S.requests(), 1u);
}

TEST_F(LLMClientTest, ExhaustedQuotaIsNotRetried) {
  START_SERVER(S, R"({"replies": [
    {"status": 429, "body": {"error": {"message": "You exceeded your current quota",
      "type": "insufficient_quota", "code": "insufficient_quota"}}, "times": 3}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("quota is exhausted"), std::string::npos) << Msg;
  EXPECT_EQ(S.requests(), 1u);
}

TEST_F(LLMClientTest, TimeoutSaysSo) {
  START_SERVER(S, R"({"replies": [{"delay": 4, "content": "too late"},
                                   {"delay": 4, "content": "too late"}]})");
  LLMConfig C = config(S);
  C.TimeoutSeconds = 0.5;
  C.MaxRetries = 0;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  auto T0 = std::chrono::steady_clock::now();
  Expected<ChatReply> R = Client->chat(ask("a"));
  double Took = secondsSince(T0);
  ASSERT_FALSE(bool(R));
  std::string Msg = errorText(R.takeError());
  EXPECT_NE(Msg.find("timed out"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("request timeout 0.50 s"), std::string::npos) << Msg;
  EXPECT_GE(Took, 0.45);
  EXPECT_LT(Took, 3.5);

  // The limit per call also bounds a single attempt.
  C.TimeoutSeconds = 30;
  C.MaxTotalSeconds = 0.8;
  auto Bounded = client(C);
  ASSERT_TRUE(Bounded);
  T0 = std::chrono::steady_clock::now();
  Msg = errorText(Bounded->chat(ask("b")).takeError());
  EXPECT_NE(Msg.find("timed out"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("request timeout 0.80 s"), std::string::npos) << Msg;
  EXPECT_LT(secondsSince(T0), 3.5);
}

TEST_F(LLMClientTest, RejectedKeyIsNotRetriedAndNotShown) {
  START_SERVER(
      S,
      R"({"api_key": "sk-the-right-key-000", "replies": [{"content": "x"}]})");
  LLMConfig C = config(S);
  C.ApiKey = "sk-a-wrong-key-123456789";
  auto Client = client(C);
  ASSERT_TRUE(Client);
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("the API key was rejected"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("HTTP 401"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("Incorrect API key"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("sk-a-wrong-key"), std::string::npos) << Msg;
  EXPECT_EQ(S.requests(), 1u);
}

TEST_F(LLMClientTest, MissingKeySaysHowToSetOne) {
  START_SERVER(
      S,
      R"({"api_key": "sk-the-right-key-000", "replies": [{"content": "x"}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  EXPECT_FALSE(Client->hasApiKey());
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("no key was sent"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("OPENAI_API_KEY"), std::string::npos) << Msg;
}

TEST_F(LLMClientTest, NotFoundNamesTheSettingsToCheck) {
  START_SERVER(S, R"({"replies": [
    {"status": 404, "body": {"error": {"message": "The model `nope` does not exist"}}}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("model or endpoint not found: check --llm-base-url and "
                     "--llm-model"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("does not exist"), std::string::npos) << Msg;
  EXPECT_EQ(S.requests(), 1u);
}

TEST_F(LLMClientTest, BadRequestShowsTheServersMessage) {
  START_SERVER(S, R"({"replies": [
    {"status": 400, "body": {"object": "error",
      "message": "This model's maximum context length is 4096 tokens"}},
    {"status": 403, "body": {"error": {"message": "Project does not have access"}}},
    {"status": 308, "headers": {"Location": "https://llm.example.com/v1/chat/completions"}}]})");
  auto Client = client(config(S));
  ASSERT_TRUE(Client);
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("rejected the request (HTTP 400"), std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("maximum context length is 4096"), std::string::npos)
      << Msg;
  Msg = errorText(Client->chat(ask("b")).takeError());
  EXPECT_NE(Msg.find("access denied (HTTP 403"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("Project does not have access"), std::string::npos) << Msg;
  Msg = errorText(Client->chat(ask("c")).takeError());
  EXPECT_NE(Msg.find("redirects (HTTP 308"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("to https://llm.example.com/v1/chat/completions"),
            std::string::npos)
      << Msg;
  EXPECT_EQ(S.requests(), 3u);
}

TEST_F(LLMClientTest, ConnectionRefusedIsRetriedThenReported) {
  unsigned DeadPort;
  {
    START_SERVER(Gone, R"({"replies": []})");
    DeadPort = Gone.Port;
  }
  LLMConfig C;
  C.BaseUrl = "http://127.0.0.1:" + std::to_string(DeadPort) + "/v1";
  C.Model = "m";
  C.UseCache = false;
  C.MaxRetries = 1;
  C.InitialBackoffSeconds = 0.01;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  std::string Msg = errorText(Client->chat(ask("a")).takeError());
  EXPECT_NE(Msg.find("cannot reach the LLM server"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("gave up after 2 attempts"), std::string::npos) << Msg;
}

TEST_F(LLMClientTest, KeyIsSentButNeverWrittenOrShown) {
  const std::string Key = "sk-test-SECRET-0123456789abcdef";
  START_SERVER(S, R"({"api_key": ")" + Key + R"(", "replies": [
    {"content": "```cuda\n__global__ void k() {}\n```"},
    {"status": 400, "body": {"error": {"message":
      "Invalid request for key sk-test-SECRET-0123456789abcdef"}}}]})");
  TempDir D;
  LLMConfig C = config(S);
  C.ApiKey = Key;
  C.UseCache = true;
  C.CacheDir = D.file("cache");
  C.TranscriptDir = D.file("report");
  auto Client = client(C);
  ASSERT_TRUE(Client);
  ChatRequest Req = ask("a");
  Req.Label = "rewrite k";
  ASSERT_TRUE(bool(Client->chat(Req)));
  std::string Msg = errorText(Client->chat(ask("b")).takeError());
  EXPECT_EQ(Msg.find(Key), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("Invalid request for key [REDACTED]"), std::string::npos)
      << Msg;

  // The server got the key in the Authorization header.
  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 2u);
  EXPECT_EQ(std::string(Doc["log"][0]["authorization"].GetString()),
            "Bearer " + Key);

  // One transcript per call, none holding the key.
  std::vector<std::string> Transcripts = D.readAll("report");
  ASSERT_EQ(Transcripts.size(), 2u);
  EXPECT_TRUE(sys::fs::exists(D.file("report/coder-0001-rewrite_k.json")));
  EXPECT_TRUE(sys::fs::exists(D.file("report/coder-0002.json")));
  for (const std::string &T : Transcripts) {
    EXPECT_EQ(T.find(Key), std::string::npos) << T;
    EXPECT_EQ(T.find("SECRET"), std::string::npos) << T;
    EXPECT_NE(T.find("\"authorization\": \"Bearer [REDACTED]\""),
              std::string::npos)
        << T;
    rapidjson::Document TD;
    TD.Parse(T.c_str());
    ASSERT_FALSE(TD.HasParseError()) << T;
    EXPECT_EQ(std::string(TD["request"]["model"].GetString()), "fake-model");
  }
  // Nor does the cache.
  std::vector<std::string> Cached = D.readAll("cache");
  ASSERT_EQ(Cached.size(), 1u);
  EXPECT_EQ(Cached[0].find(Key), std::string::npos);
}

TEST_F(LLMClientTest, KeyComesFromTheEnvironmentUnlessSetExplicitly) {
  START_SERVER(
      S,
      R"({"replies": [{"content": "1"}, {"content": "2"}, {"content": "3"}]})");
  setenv("OPENAI_API_KEY", "sk-from-openai-env-1", 1);
  auto A = client(config(S));
  setenv("ASTRA_LLM_API_KEY", "sk-from-astra-env-22", 1);
  auto B = client(config(S));
  LLMConfig C = config(S);
  C.ApiKey = "sk-explicit-key-333";
  auto Explicit = client(C);
  ASSERT_TRUE(A && B && Explicit);
  ASSERT_TRUE(bool(A->chat(ask("a"))));
  ASSERT_TRUE(bool(B->chat(ask("b"))));
  ASSERT_TRUE(bool(Explicit->chat(ask("c"))));
  rapidjson::Document Doc;
  S.stats(Doc);
  ASSERT_EQ(Doc["requests"].GetUint(), 3u);
  EXPECT_EQ(std::string(Doc["log"][0]["authorization"].GetString()),
            "Bearer sk-from-openai-env-1");
  EXPECT_EQ(std::string(Doc["log"][1]["authorization"].GetString()),
            "Bearer sk-from-astra-env-22");
  EXPECT_EQ(std::string(Doc["log"][2]["authorization"].GetString()),
            "Bearer sk-explicit-key-333");
}

TEST_F(LLMClientTest, CacheAnswersARepeatedRequestFromDisk) {
  START_SERVER(S, R"({"replies": [
    {"content": "first", "usage": {"prompt_tokens": 100, "completion_tokens": 50}},
    {"content": "second"}, {"content": "third"}, {"content": "fourth"}]})");
  TempDir D;
  LLMConfig C = config(S);
  C.UseCache = true;
  C.CacheDir = D.file("cache");
  C.Temperature = 0.7;
  auto Client = client(C);
  ASSERT_TRUE(Client);
  Expected<ChatReply> R1 = Client->chat(ask("same question"));
  ASSERT_TRUE(bool(R1)) << toString(R1.takeError());
  EXPECT_FALSE(R1->FromCache);
  Expected<ChatReply> R2 = Client->chat(ask("same question"));
  ASSERT_TRUE(bool(R2)) << toString(R2.takeError());
  EXPECT_TRUE(R2->FromCache);
  EXPECT_EQ(R2->Attempts, 0u);
  EXPECT_EQ(R2->Content, "first");
  EXPECT_EQ(S.requests(), 1u);
  LLMStats St = Client->stats();
  EXPECT_EQ(St.CacheHits, 1u);
  EXPECT_EQ(St.Requests, 1u);
  EXPECT_EQ(St.Usage.Total, 150u);
  EXPECT_EQ(St.CachedUsage.Total, 150u);

  // A new client (a rerun) reads the same entry.
  auto Rerun = client(C);
  ASSERT_TRUE(Rerun);
  Expected<ChatReply> R3 = Rerun->chat(ask("same question"));
  ASSERT_TRUE(bool(R3));
  EXPECT_TRUE(R3->FromCache);
  EXPECT_EQ(S.requests(), 1u);

  // Another sample, another temperature, or no cache: new requests.
  ChatRequest Other = ask("same question");
  Other.Sample = 1;
  Expected<ChatReply> R4 = Client->chat(Other);
  ASSERT_TRUE(bool(R4));
  EXPECT_EQ(R4->Content, "second");
  LLMConfig Warmer = C;
  Warmer.Temperature = 0.9;
  auto W = client(Warmer);
  ASSERT_TRUE(W);
  Expected<ChatReply> R5 = W->chat(ask("same question"));
  ASSERT_TRUE(bool(R5));
  EXPECT_EQ(R5->Content, "third");
  LLMConfig Bypass = C;
  Bypass.UseCache = false;
  auto B = client(Bypass);
  ASSERT_TRUE(B);
  Expected<ChatReply> R6 = B->chat(ask("same question"));
  ASSERT_TRUE(bool(R6));
  EXPECT_FALSE(R6->FromCache);
  EXPECT_EQ(R6->Content, "fourth");
  EXPECT_EQ(S.requests(), 4u);
}

TEST_F(LLMClientTest, FailedRepliesAreNotCached) {
  START_SERVER(S, R"({"replies": [
    {"status": 400, "body": {"error": {"message": "bad"}}}, {"content": "good"}]})");
  TempDir D;
  LLMConfig C = config(S);
  C.UseCache = true;
  C.CacheDir = D.file("cache");
  auto Client = client(C);
  ASSERT_TRUE(Client);
  EXPECT_NE(errorText(Client->chat(ask("q")).takeError()).find("HTTP 400"),
            std::string::npos);
  Expected<ChatReply> R = Client->chat(ask("q"));
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Content, "good");
  EXPECT_FALSE(R->FromCache);
  EXPECT_EQ(S.requests(), 2u);
}

TEST_F(LLMClientTest, TranscriptRecordsEveryAttempt) {
  START_SERVER(S, R"({"replies": [
    {"status": 502, "body": "Bad Gateway"}, {"content": "ok"}]})");
  TempDir D;
  LLMConfig C = config(S);
  C.Name = "planner";
  C.TranscriptDir = D.file("report");
  auto Client = client(C);
  ASSERT_TRUE(Client);
  ASSERT_TRUE(bool(Client->chat(ask("plan"))));
  Expected<std::string> Text = readFile(D.file("report/planner-0001.json"));
  ASSERT_TRUE(bool(Text)) << toString(Text.takeError());
  rapidjson::Document T;
  T.Parse(Text->c_str());
  ASSERT_FALSE(T.HasParseError()) << *Text;
  EXPECT_EQ(std::string(T["client"].GetString()), "planner");
  EXPECT_EQ(std::string(T["authorization"].GetString()), "none");
  ASSERT_EQ(T["attempts"].Size(), 2u);
  EXPECT_EQ(T["attempts"][0]["status"].GetInt(), 502);
  EXPECT_NE(
      std::string(T["attempts"][0]["error"].GetString()).find("Bad Gateway"),
      std::string::npos);
  EXPECT_GT(T["attempts"][0]["wait_seconds"].GetDouble(), 0.0);
  EXPECT_EQ(T["attempts"][1]["status"].GetInt(), 200);
  EXPECT_EQ(
      std::string(T["reply"]["choices"][0]["message"]["content"].GetString()),
      "ok");
  EXPECT_EQ(T["usage"]["total_tokens"].GetUint(), 30u);
  EXPECT_TRUE(T["error"].IsNull());
  EXPECT_EQ(std::string(T["request"]["messages"][1]["content"].GetString()),
            "plan");
}

TEST_F(LLMClientTest, MaxTokensFieldCanBeChosen) {
  START_SERVER(S, R"({"replies": [{"content": "a"}]})");
  LLMConfig C = config(S);
  C.MaxTokens = 64;
  C.TokensField = MaxTokensField::MaxCompletionTokens;
  C.ExtraBodyJson = R"({"reasoning_effort": "high"})";
  auto Client = client(C);
  ASSERT_TRUE(Client);
  ASSERT_TRUE(bool(Client->chat(ask("a"))));
  rapidjson::Document Doc;
  S.stats(Doc);
  const rapidjson::Value &Body = Doc["log"][0]["body"];
  EXPECT_EQ(Body["max_completion_tokens"].GetUint(), 64u);
  EXPECT_FALSE(Body.HasMember("max_tokens"));
  EXPECT_EQ(std::string(Body["reasoning_effort"].GetString()), "high");
}

//===----------------------------------------------------------------------===//
// Configuration, protocol and helpers (no server)
//===----------------------------------------------------------------------===//

TEST_F(LLMClientTest, BadConfigurationIsRejectedUpFront) {
  auto Err = [](LLMConfig C) {
    Expected<std::unique_ptr<LLMClient>> Cl = LLMClient::create(C);
    return Cl ? std::string("(created)") : toString(Cl.takeError());
  };
  LLMConfig C;
  C.Model = "m";
  LLMConfig NoModel;
  EXPECT_NE(Err(NoModel).find("--llm-model"), std::string::npos);
  LLMConfig BadUrl = C;
  BadUrl.BaseUrl = "localhost:8000/v1";
  EXPECT_NE(Err(BadUrl).find("not an http:// or https:// URL"),
            std::string::npos);
  LLMConfig Hot = C;
  Hot.Temperature = 3;
  EXPECT_NE(Err(Hot).find("temperature"), std::string::npos);
  LLMConfig Extra = C;
  Extra.ExtraBodyJson = "[1]";
  EXPECT_NE(Err(Extra).find("not a JSON object"), std::string::npos);
  LLMConfig Timeout = C;
  Timeout.TimeoutSeconds = 0;
  EXPECT_NE(Err(Timeout).find("timeouts must be positive"), std::string::npos);
  EXPECT_EQ(Err(C), "(created)");
}

TEST(LLMHttp, MissingLibcurlIsAClearError) {
  Error E = probeCurlLibrary({"libastra-no-such-curl.so.4"});
  ASSERT_TRUE(bool(E));
  std::string Msg = toString(std::move(E));
  EXPECT_EQ(Msg.rfind("LLM mode needs libcurl.so.4: ", 0), 0u) << Msg;
  EXPECT_NE(Msg.find("libastra-no-such-curl.so.4"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("ASTRA_LIBCURL"), std::string::npos) << Msg;
  // A library that is not libcurl is refused too.
  Error E2 = probeCurlLibrary({"libm.so.6"});
  ASSERT_TRUE(bool(E2));
  EXPECT_NE(toString(std::move(E2)).find("not a usable libcurl"),
            std::string::npos);
  EXPECT_FALSE(bool(ensureCurlLoaded()));
}

TEST(LLMChat, RequestBodyIsDeterministicAndChecksTools) {
  ChatParams P;
  P.Model = "m";
  ChatRequest R;
  R.Messages = {ChatMessage::user("hi")};
  R.Tools = {{"apply_passes", "d", R"({"type":"object"})"}};
  Expected<std::string> A = buildChatRequestBody(P, R);
  Expected<std::string> B = buildChatRequestBody(P, R);
  ASSERT_TRUE(A && B);
  EXPECT_EQ(*A, *B);
  EXPECT_EQ(*A,
            R"({"model":"m","messages":[{"role":"user","content":"hi"}],)"
            R"("tools":[{"type":"function","function":{"name":"apply_passes",)"
            R"("description":"d","parameters":{"type":"object"}}}]})");

  ChatRequest BadSchema = R;
  BadSchema.Tools[0].ParametersJson = "{not json";
  std::string Msg = errorText(buildChatRequestBody(P, BadSchema).takeError());
  EXPECT_NE(Msg.find("parameters schema of tool 'apply_passes'"),
            std::string::npos)
      << Msg;
  ChatRequest BadName = R;
  BadName.Tools[0].Name = "apply passes";
  EXPECT_NE(errorText(buildChatRequestBody(P, BadName).takeError())
                .find("tool name 'apply passes' is invalid"),
            std::string::npos);
  ChatRequest Named = R;
  Named.ToolChoice = "apply_passes";
  Expected<std::string> N = buildChatRequestBody(P, Named);
  ASSERT_TRUE(bool(N));
  EXPECT_NE(
      N->find(
          R"("tool_choice":{"type":"function","function":{"name":"apply_passes"}})"),
      std::string::npos);
  Named.ToolChoice = "other_tool";
  EXPECT_NE(errorText(buildChatRequestBody(P, Named).takeError())
                .find("not one of the offered tools"),
            std::string::npos);
  ChatRequest Orphan = R;
  Orphan.Messages.push_back(ChatMessage::toolResult("", "x"));
  EXPECT_NE(errorText(buildChatRequestBody(P, Orphan).takeError())
                .find("ToolCallId is empty"),
            std::string::npos);
}

TEST(LLMChat, ReplyParsingCoversServerVariants) {
  // Tool arguments sent as an object; a call without id; content parts.
  Expected<ChatReply> R = parseChatReply(R"({"choices":[{"message":{
      "content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
      "tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]},
      "finish_reason":"tool_calls"}]})");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Content, "ab");
  ASSERT_EQ(R->ToolCalls.size(), 1u);
  EXPECT_EQ(R->ToolCalls[0].Id, "call_0");
  EXPECT_EQ(R->ToolCalls[0].Arguments, R"({"x":1})");
  EXPECT_EQ(R->Usage.Total, 0u);

  std::string Msg =
      errorText(parseChatReply(R"({"error":{"message":"context too long"}})")
                    .takeError());
  EXPECT_NE(Msg.find("context too long"), std::string::npos) << Msg;
  Msg = errorText(parseChatReply("[1,2]").takeError());
  EXPECT_NE(Msg.find("not a JSON object"), std::string::npos) << Msg;
  Msg = errorText(parseChatReply(R"({"id":"x"})").takeError());
  EXPECT_NE(Msg.find("no \"choices\""), std::string::npos) << Msg;
  Msg = errorText(
      parseChatReply(
          R"({"choices":[{"message":{"tool_calls":[{"function":{}}]}}]})")
          .takeError());
  EXPECT_NE(Msg.find("no function name"), std::string::npos) << Msg;

  ToolCall Bad{"c", "apply_passes", "{\"passes\": [\"a\""};
  rapidjson::Document D;
  Msg = errorText(Bad.parseArguments(D));
  EXPECT_NE(
      Msg.find("the arguments of tool call 'apply_passes': not valid JSON"),
      std::string::npos)
      << Msg;
}

TEST(LLMChat, RetryAfterHeaderForms) {
  std::time_t Now = 1700000000; // Tue, 14 Nov 2023 22:13:20 GMT
  EXPECT_EQ(parseRetryAfter({{"retry-after", "7"}}, Now), 7.0);
  EXPECT_EQ(
      parseRetryAfter({{"retry-after-ms", "250"}, {"retry-after", "1"}}, Now),
      0.25);
  EXPECT_EQ(
      parseRetryAfter({{"retry-after", "Tue, 14 Nov 2023 22:13:50 GMT"}}, Now),
      30.0);
  EXPECT_EQ(
      parseRetryAfter({{"retry-after", "Tue, 14 Nov 2023 22:00:00 GMT"}}, Now),
      0.0);
  EXPECT_FALSE(parseRetryAfter({{"retry-after", "soon"}}, Now));
  EXPECT_FALSE(parseRetryAfter({}, Now));
}

TEST(LLMChat, EndpointFromBaseUrl) {
  EXPECT_EQ(chatCompletionsUrl("https://api.openai.com/v1"),
            "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(chatCompletionsUrl("http://localhost:11434/v1/"),
            "http://localhost:11434/v1/chat/completions");
  EXPECT_EQ(chatCompletionsUrl("http://h:8000/v1/chat/completions"),
            "http://h:8000/v1/chat/completions");
}

TEST(LLMChat, CacheKeyCoversEndpointBodyAndSample) {
  std::string K = ReplyCache::key("http://a/v1/chat/completions", "{}", 0);
  EXPECT_EQ(K.size(), 64u);
  EXPECT_EQ(K, ReplyCache::key("http://a/v1/chat/completions", "{}", 0));
  EXPECT_NE(K, ReplyCache::key("http://b/v1/chat/completions", "{}", 0));
  EXPECT_NE(K, ReplyCache::key("http://a/v1/chat/completions", "{ }", 0));
  EXPECT_NE(K, ReplyCache::key("http://a/v1/chat/completions", "{}", 1));
}

//===----------------------------------------------------------------------===//
// Code extraction
//===----------------------------------------------------------------------===//

TEST(LLMCodeExtract, LastCodeBlockWins) {
  const char *Reply = "Original:\n```cuda\n__global__ void k(float *a) { /* "
                      "long original */ }\n```\nOptimized:\n```cuda\n"
                      "__global__ void k(float *__restrict__ a) {}\n```\n"
                      "Build with:\n```bash\nnvcc -O3 k.cu\n```\n";
  Expected<std::string> Code = extractCode(Reply);
  ASSERT_TRUE(bool(Code)) << toString(Code.takeError());
  EXPECT_EQ(*Code, "__global__ void k(float *__restrict__ a) {}\n");
}

TEST(LLMCodeExtract, MustContainSkipsLaunchSnippets) {
  const char *Reply = "```cpp\n__global__ void k() {}\n```\nLaunch it:\n"
                      "```cpp\nk<<<1, 1>>>();\n```\n";
  EXPECT_EQ(codeOf(Reply), "k<<<1, 1>>>();\n");
  CodeExtractOptions O;
  O.MustContain = "__global__";
  Expected<std::string> Code = extractCode(Reply, O);
  ASSERT_TRUE(bool(Code));
  EXPECT_EQ(*Code, "__global__ void k() {}\n");
  std::string Msg =
      errorText(extractCode("```cpp\nint x;\n```\n", O).takeError());
  EXPECT_NE(Msg.find("the reply has no code block containing '__global__'"),
            std::string::npos)
      << Msg;
}

TEST(LLMCodeExtract, FenceForms) {
  // Bare fence, upper-case tag, tag with a file name, tildes, a longer fence
  // holding a shorter one, indentation and CRLF line ends.
  EXPECT_EQ(codeOf("```\nint a;\n```"), "int a;\n");
  EXPECT_EQ(codeOf("```CUDA\nint b;\n```"), "int b;\n");
  EXPECT_EQ(codeOf("```c++ title=k.cu\nint c;\n```"), "int c;\n");
  EXPECT_EQ(codeOf("```cpp:k.cu\nint d;\n```"), "int d;\n");
  EXPECT_EQ(codeOf("~~~cu\nint e;\n~~~\n"), "int e;\n");
  EXPECT_EQ(codeOf("````cuda\n```\nint f;\n````\n"), "```\nint f;\n");
  EXPECT_EQ(codeOf("  ```cuda\n  int g;\n    int h;\n  ```\n"),
            "int g;\n  int h;\n");
  EXPECT_EQ(codeOf("```cuda\r\nint i;\r\n```\r\n"), "int i;\n");
  // An inline span is not a fence.
  std::string Msg = errorText(extractCode("use ```x``` here").takeError());
  EXPECT_NE(Msg.find("the reply has no code block"), std::string::npos);
}

TEST(LLMCodeExtract, ThinkingIsIgnored) {
  EXPECT_EQ(codeOf("<think>\n```cuda\ndraft\n```\n</think>\n"
                   "```cuda\nfinal\n```\n"),
            "final\n");
  EXPECT_EQ(codeOf("draft ```cuda\n``` </think>\n```cuda\nfinal\n```"),
            "final\n");
  std::string Msg =
      errorText(extractCode("<think>```cuda\nonly a draft\n```").takeError());
  EXPECT_NE(Msg.find("the reply has no code block"), std::string::npos);
}

TEST(LLMCodeExtract, ErrorsSayWhy) {
  std::string Msg = errorText(extractCode("Just prose.").takeError());
  EXPECT_NE(Msg.find("the reply has no code block"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("Just prose."), std::string::npos) << Msg;
  Msg = errorText(extractCode("```python\nprint(1)\n```").takeError());
  EXPECT_NE(Msg.find("found only ```python blocks"), std::string::npos) << Msg;
  Msg = errorText(extractCode("Here:\n```cuda\n__global__ void k() {\n  int x")
                      .takeError());
  EXPECT_NE(Msg.find("never closed"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("max tokens"), std::string::npos) << Msg;
  std::vector<CodeBlock> Blocks = findCodeBlocks("```cuda\na\n```\n```py\nb\n");
  ASSERT_EQ(Blocks.size(), 2u);
  EXPECT_TRUE(Blocks[0].Closed);
  EXPECT_EQ(Blocks[1].Language, "py");
  EXPECT_FALSE(Blocks[1].Closed);
}

} // namespace
