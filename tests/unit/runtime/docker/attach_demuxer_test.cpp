#include "runtime/docker/attach_demuxer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace relay::runtime::docker {
namespace {

std::string frame(StreamKind kind, std::string_view payload) {
  std::string header(8, '\0');
  header[0] = static_cast<char>(kind);
  const auto size = static_cast<std::uint32_t>(payload.size());
  header[4] = static_cast<char>(size >> 24);
  header[5] = static_cast<char>(size >> 16);
  header[6] = static_cast<char>(size >> 8);
  header[7] = static_cast<char>(size);
  return header + std::string(payload);
}

struct Collected {
  std::string out;
  std::string err;
  std::size_t pieces = 0;
};

AttachDemuxer::Sink collectInto(Collected& collected) {
  return [&collected](StreamKind kind, std::string_view bytes) {
    ++collected.pieces;
    (kind == StreamKind::kStderr ? collected.err : collected.out).append(bytes);
  };
}

TEST(AttachDemuxer, SeparatesStdoutAndStderrSplitAtEveryByte) {
  const std::string wire =
      frame(StreamKind::kStdout, "line 1\n") + frame(StreamKind::kStderr, "oops\n") +
      frame(StreamKind::kStdout, std::string("bin\0\xff", 5)) + frame(StreamKind::kStdout, "");
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    Collected collected;
    AttachDemuxer demuxer(collectInto(collected));
    for (std::size_t at = 0; at < wire.size(); at += step) {
      ASSERT_TRUE(demuxer.feed(std::string_view(wire).substr(at, step)).ok());
    }
    EXPECT_TRUE(demuxer.finish().ok());
    EXPECT_EQ(collected.out, std::string("line 1\nbin\0\xff", 12)) << "step " << step;
    EXPECT_EQ(collected.err, "oops\n") << "step " << step;
  }
}

TEST(AttachDemuxer, PassesALargeFrameOnInPiecesWithoutBufferingIt) {
  const std::string payload(1 << 20, 'x');
  const std::string wire = frame(StreamKind::kStdout, payload);
  Collected collected;
  AttachDemuxer demuxer(collectInto(collected));
  for (std::size_t at = 0; at < wire.size(); at += 4096) {
    ASSERT_TRUE(demuxer.feed(std::string_view(wire).substr(at, 4096)).ok());
  }
  EXPECT_TRUE(demuxer.finish().ok());
  EXPECT_EQ(collected.out.size(), payload.size());
  EXPECT_GT(collected.pieces, 200u);  // delivered as it arrived, not as one frame
}

TEST(AttachDemuxer, RejectsAnUnknownStreamByte) {
  Collected collected;
  AttachDemuxer demuxer(collectInto(collected));
  const auto status = demuxer.feed(std::string("\x07\0\0\0\0\0\0\x01x", 9));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kInternal);
  EXPECT_NE(status.error().message.find("malformed attach stream frame header"), std::string::npos);
  EXPECT_FALSE(demuxer.feed("more").ok());
}

TEST(AttachDemuxer, RejectsNonZeroReservedBytes) {
  Collected collected;
  AttachDemuxer demuxer(collectInto(collected));
  // A TTY stream is raw text: its first bytes never form a valid header.
  EXPECT_FALSE(demuxer.feed("hello world\n").ok());
}

TEST(AttachDemuxer, AStreamEndingInsideAFrameIsAnError) {
  Collected collected;
  AttachDemuxer demuxer(collectInto(collected));
  const std::string wire = frame(StreamKind::kStdout, "truncated");
  ASSERT_TRUE(demuxer.feed(std::string_view(wire).substr(0, 12)).ok());
  EXPECT_FALSE(demuxer.finish().ok());

  AttachDemuxer header_only(collectInto(collected));
  ASSERT_TRUE(header_only.feed(std::string_view(wire).substr(0, 3)).ok());
  EXPECT_FALSE(header_only.finish().ok());
}

}  // namespace
}  // namespace relay::runtime::docker
