#include "http/response_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace relay::http {
namespace {

// Feeds `bytes` in pieces of `step` bytes, then signals the end of the connection.
Result<Response> parseInPieces(std::string_view bytes, std::size_t step,
                               ResponseParser::Mode mode = ResponseParser::Mode::kFull,
                               ResponseLimits limits = {}) {
  ResponseParser parser(mode, limits);
  while (!bytes.empty() && !parser.complete()) {
    const std::string_view piece = bytes.substr(0, step);
    auto used = parser.feed(piece);
    if (!used) return used.error();
    bytes.remove_prefix(*used);
  }
  if (auto status = parser.finish(); !status) return status.error();
  return parser.takeResponse();
}

TEST(ResponseParser, ReadsAContentLengthBody) {
  const auto response = parseInPieces(
      "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
      "{\"Id\":\"ab\"}",
      1000);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->reason, "Created");
  EXPECT_EQ(response->header("content-type"), "application/json");
  EXPECT_EQ(response->body, "{\"Id\":\"ab\"}");
}

TEST(ResponseParser, DecodesChunkedBodiesSplitAtEveryByte) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    const auto response = parseInPieces(wire, step);
    ASSERT_TRUE(response.ok()) << "step " << step << ": " << response.error().message;
    EXPECT_EQ(response->body, "hello, world") << "step " << step;
  }
}

TEST(ResponseParser, ReadsABodyDelimitedByTheEndOfTheConnection) {
  const auto response = parseInPieces("HTTP/1.0 200 OK\r\nServer: x\r\n\r\nuntil close", 3);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->body, "until close");
}

TEST(ResponseParser, AStreamedBodyGoesToTheSinkWithoutTheSizeCap) {
  // A Docker image export: larger than the cap, chunked; only 2xx bodies are streamed.
  const std::string chunk(1000, 'x');
  std::string wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 5; ++i) wire += "3e8\r\n" + chunk + "\r\n";
  wire += "0\r\n\r\n";
  ResponseParser parser(ResponseParser::Mode::kFull, {64 * 1024, 2000});
  std::string streamed;
  parser.streamBodyTo([&streamed](std::string_view bytes) {
    streamed.append(bytes);
    return Status{};
  });
  for (std::size_t at = 0; at < wire.size(); at += 7)
    ASSERT_TRUE(parser.feed(wire.substr(at, 7)).ok());
  ASSERT_TRUE(parser.complete());
  EXPECT_EQ(streamed.size(), 5000u);
  EXPECT_TRUE(parser.response().body.empty());

  ResponseParser failing;
  failing.streamBodyTo([](std::string_view) { return Status{}; });
  ASSERT_TRUE(failing.feed("HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!").ok());
  EXPECT_EQ(failing.response().body, "nope!");

  ResponseParser refusing;
  refusing.streamBodyTo([](std::string_view) { return Status(Error::internal("disk full")); });
  auto used = refusing.feed("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
  ASSERT_FALSE(used.ok());
  EXPECT_EQ(used.error().message, "disk full");
}

TEST(ResponseParser, NoContentHasNoBody) {
  ResponseParser parser;
  const std::string wire = "HTTP/1.1 204 No Content\r\nApi-Version: 1.41\r\n\r\n";
  auto used = parser.feed(wire);
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(parser.complete());
  EXPECT_EQ(*used, wire.size());
  EXPECT_EQ(parser.response().status, 204);
}

TEST(ResponseParser, StopsAtTheEndOfTheMessageAndLeavesTheRest) {
  ResponseParser parser;
  auto used = parser.feed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOKextra");
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(parser.complete());
  EXPECT_EQ(parser.response().body, "OK");
  EXPECT_EQ(*used, std::string_view("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK").size());
}

TEST(ResponseParser, HeadersOnlyModeHandsBackTheHijackedStream) {
  ResponseParser parser(ResponseParser::Mode::kHeadersOnly);
  const std::string head =
      "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
      "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";
  const std::string frames("\x01\0\0\0\0\0\0\x02hi", 10);
  auto used = parser.feed(head + frames);
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(parser.complete());
  EXPECT_EQ(parser.response().status, 101);
  EXPECT_EQ(*used, head.size());
}

TEST(ResponseParser, RejectsAGarbageStatusLine) {
  const auto response = parseInPieces("SSH-2.0-OpenSSH\r\n\r\n", 100);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kInternal);
  EXPECT_NE(response.error().message.find("bad status line 'SSH-2.0-OpenSSH'"), std::string::npos)
      << response.error().message;
}

TEST(ResponseParser, RejectsABadChunkSize) {
  const auto response =
      parseInPieces("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 100);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("bad chunk size 'zz'"), std::string::npos);
}

TEST(ResponseParser, RejectsChunkDataWithoutCrlf) {
  const auto response =
      parseInPieces("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY", 100);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("not followed by CRLF"), std::string::npos);
}

TEST(ResponseParser, RejectsConflictingContentLengths) {
  const auto response =
      parseInPieces("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", 100);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("conflicting Content-Length"), std::string::npos);
}

TEST(ResponseParser, CapsTheHeaderSize) {
  ResponseLimits limits;
  limits.max_header_bytes = 64;
  const auto response =
      parseInPieces("HTTP/1.1 200 OK\r\nX-Long: " + std::string(200, 'a') + "\r\n\r\n", 7,
                    ResponseParser::Mode::kFull, limits);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("headers exceed 64 bytes"), std::string::npos);
}

TEST(ResponseParser, CapsTheBodySizeForEveryFraming) {
  ResponseLimits limits;
  limits.max_body_bytes = 4;
  for (const char* wire : {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n12345",
                           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n",
                           "HTTP/1.1 200 OK\r\n\r\n12345"}) {
    const auto response = parseInPieces(wire, 2, ResponseParser::Mode::kFull, limits);
    ASSERT_FALSE(response.ok()) << wire;
    EXPECT_NE(response.error().message.find("exceeds"), std::string::npos) << wire;
  }
}

TEST(ResponseParser, ATruncatedResponseIsAnError) {
  const auto response = parseInPieces("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 100);
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("closed before the end of the response body"),
            std::string::npos);
}

TEST(ResponseParser, AConnectionClosedBeforeAnyByteIsAnError) {
  ResponseParser parser;
  const auto status = parser.finish();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("closed before any response"), std::string::npos);
}

}  // namespace
}  // namespace relay::http
