// PayloadDecoder: plain SHA-256, pass-through, and the three aws-chunked modes, fed every
// possible way, plus each way a body can be broken.
#include "auth/payload_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "auth/signer.h"
#include "auth/verifier.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleStore;
using testing::ExampleTime;
using testing::OwnedRequest;

// Feeds `body` in pieces cut at `cuts` (ascending offsets), then finishes.
struct Outcome {
  Result<void> status = Ok();
  std::string out;
};

Outcome Decode(const AuthResult& auth, std::string_view body, const std::vector<std::size_t>& cuts,
               std::vector<std::pair<std::string, std::string>>* trailers = nullptr) {
  std::unique_ptr<PayloadDecoder> d = MakePayloadDecoder(auth);
  Outcome o;
  std::size_t prev = 0;
  std::vector<std::size_t> all = cuts;
  all.push_back(body.size());
  for (std::size_t cut : all) {
    std::string_view piece = body.substr(prev, cut - prev);
    std::size_t before = o.out.size();
    Result<void> r = d->Feed(piece, o.out);
    EXPECT_LE(o.out.size() - before, piece.size());
    prev = cut;
    if (!r.ok()) {
      o.status = r;
      return o;
    }
  }
  o.status = d->Finish();
  if (trailers != nullptr) {
    *trailers = d->Trailers();
  }
  return o;
}

Outcome RunWhole(const AuthResult& auth, std::string_view body) { return Decode(auth, body, {}); }

ErrorCode CodeOf(const Outcome& o) {
  return o.status.ok() ? ErrorCode::kInternal : o.status.error().code;
}

// ---------------------------------------------------------------------------------------
// A test-side encoder for aws-chunked bodies, independent of the decoder.

AuthResult StreamingAuth(PayloadMode mode, std::int64_t decoded_length = -1) {
  AuthResult a;
  a.payload = mode;
  a.chunk.signing_key =
      internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3");
  a.chunk.amz_date = "20130524T000000Z";
  a.chunk.scope = "20130524/us-east-1/s3/aws4_request";
  a.chunk.seed_signature = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
  a.decoded_content_length = decoded_length;
  return a;
}

std::string Hmac(const AuthResult& a, const std::string& sts) {
  return internal::HexLower(internal::HmacSha256(
      {reinterpret_cast<const char*>(a.chunk.signing_key.data()), a.chunk.signing_key.size()},
      sts));
}

std::string ChunkSig(const AuthResult& a, const std::string& prev, std::string_view data) {
  return Hmac(a, "AWS4-HMAC-SHA256-PAYLOAD\n" + a.chunk.amz_date + "\n" + a.chunk.scope + "\n" +
                     prev + "\n" + std::string(testing::kEmptySha) + "\n" + Sha256Hex(data));
}

struct Encoded {
  std::string body;
  std::string last_signature;  // of the final (empty) chunk
};

Encoded Encode(const AuthResult& a, std::string_view payload, std::size_t chunk_size,
               const std::vector<std::pair<std::string, std::string>>& trailers = {}) {
  const bool sign = a.payload != PayloadMode::kStreamingUnsignedTrailer;
  Encoded e;
  std::string prev = a.chunk.seed_signature;
  std::size_t pos = 0;
  char hex[32];
  while (true) {
    std::string_view data = payload.substr(pos, std::min(chunk_size, payload.size() - pos));
    std::snprintf(hex, sizeof(hex), "%zx", data.size());
    e.body += hex;
    if (sign) {
      prev = ChunkSig(a, prev, data);
      e.body += ";chunk-signature=" + prev;
    }
    e.body += "\r\n";
    if (data.empty()) {
      break;
    }
    e.body += data;
    e.body += "\r\n";
    pos += data.size();
  }
  e.last_signature = prev;
  if (a.payload != PayloadMode::kStreamingSigned) {
    std::string canonical;
    for (const auto& [n, v] : trailers) {
      e.body += n + ":" + v + "\r\n";
      canonical += internal::ToLower(n) + ":" + v + "\n";
    }
    if (a.payload == PayloadMode::kStreamingSignedTrailer) {
      e.body += "x-amz-trailer-signature:" +
                Hmac(a, "AWS4-HMAC-SHA256-TRAILER\n" + a.chunk.amz_date + "\n" + a.chunk.scope +
                            "\n" + prev + "\n" + Sha256Hex(canonical)) +
                "\r\n";
    }
  }
  e.body += "\r\n";
  return e;
}

// ---------------------------------------------------------------------------------------

// The S3 API reference's chunked upload example: 64 KiB + 1 KiB of 'a', verified end to end
// from the request header through the last chunk.
TEST(PayloadDecoder, AwsStreamingExample) {
  MemCredentialStore store = ExampleStore();
  FakeClock clock(ExampleTime());
  Verifier verifier(store, clock, {});
  OwnedRequest r = testing::StreamingExample();
  Result<AuthResult> auth = verifier.Verify(r.View());
  ASSERT_TRUE(auth.ok()) << auth.error().message;

  const std::string body =
      "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" +
      std::string(65536, 'a') +
      "\r\n400;chunk-signature="
      "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
      std::string(1024, 'a') +
      "\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n"
      "\r\n";
  ASSERT_EQ(body.size(), 66824u);
  Outcome o = RunWhole(*auth, body);
  ASSERT_TRUE(o.status.ok()) << o.status.error().message;
  EXPECT_EQ(o.out, std::string(66560, 'a'));

  // Our encoder produces the published chunk signatures too.
  EXPECT_EQ(Encode(*auth, std::string(66560, 'a'), 65536).body, body);

  // In 1000-byte slices, and with a flipped data byte.
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1000; i < body.size(); i += 1000) {
    cuts.push_back(i);
  }
  o = Decode(*auth, body, cuts);
  ASSERT_TRUE(o.status.ok()) << o.status.error().message;
  EXPECT_EQ(o.out.size(), 66560u);
  std::string flipped = body;
  flipped[5000] = 'b';
  EXPECT_EQ(CodeOf(Decode(*auth, flipped, cuts)), ErrorCode::kSignatureDoesNotMatch);
}

// The S3 API reference's chunked upload with a signed trailing checksum: the same 66560
// bytes of 'a', seed 106e2a8a..., then "x-amz-checksum-crc32c:sOO8/Q==" signed.
TEST(PayloadDecoder, AwsStreamingTrailerExample) {
  MemCredentialStore store = ExampleStore();
  FakeClock clock(ExampleTime());
  Verifier verifier(store, clock, {});
  OwnedRequest r;
  r.method = "PUT";
  r.raw_path = "/examplebucket/chunkObject.txt";
  r.headers = {
      {"Host", "s3.amazonaws.com"},
      {"x-amz-date", "20130524T000000Z"},
      {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
      {"Authorization",
       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
       "SignedHeaders=content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-"
       "content-length;x-amz-storage-class;x-amz-trailer,"
       "Signature=106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"},
      {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"},
      {"Content-Encoding", "aws-chunked"},
      {"x-amz-decoded-content-length", "66560"},
      {"x-amz-trailer", "x-amz-checksum-crc32c"},
  };
  Result<AuthResult> auth = verifier.Verify(r.View());
  ASSERT_TRUE(auth.ok()) << auth.error().message;
  ASSERT_EQ(auth->payload, PayloadMode::kStreamingSignedTrailer);

  const std::string chunks =
      "10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n" +
      std::string(65536, 'a') +
      "\r\n400;chunk-signature="
      "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n" +
      std::string(1024, 'a') +
      "\r\n0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n";
  const std::string trailer =
      "x-amz-checksum-crc32c:sOO8/Q==\r\n"
      "x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n"
      "\r\n";
  // As the wire format says, and as the documentation renders it (a blank line after the
  // final chunk).
  for (const std::string& body : {chunks + trailer, chunks + "\r\n" + trailer}) {
    std::vector<std::pair<std::string, std::string>> trailers;
    std::vector<std::size_t> cuts;
    for (std::size_t i = 777; i < body.size(); i += 777) {
      cuts.push_back(i);
    }
    Outcome o = Decode(*auth, body, cuts, &trailers);
    ASSERT_TRUE(o.status.ok()) << o.status.error().message;
    EXPECT_EQ(o.out, std::string(66560, 'a'));
    ASSERT_EQ(trailers.size(), 1u);
    EXPECT_EQ(trailers[0].first, "x-amz-checksum-crc32c");
    EXPECT_EQ(trailers[0].second, "sOO8/Q==");
    std::string other = body;
    other.replace(other.find("sOO8/Q=="), 8, "sOO8/A==");
    EXPECT_EQ(CodeOf(Decode(*auth, other, cuts)), ErrorCode::kSignatureDoesNotMatch);
  }
}

TEST(PayloadDecoder, EverySplitPointEveryMode) {
  const std::string full = "The quick brown fox jumps over the lazy dog";
  const std::vector<std::pair<std::string, std::string>> trailers = {
      {"X-Amz-Checksum-Crc32", "sOO8/Q=="}, {"x-amz-meta-extra", "yes"}};
  for (PayloadMode mode : {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                           PayloadMode::kStreamingUnsignedTrailer}) {
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{43}, std::size_t{64}}) {
      // One-byte chunks make long bodies; a shorter payload keeps them quick.
      const std::string payload = chunk == 1 ? full.substr(0, 9) : full;
      AuthResult a = StreamingAuth(mode, static_cast<std::int64_t>(payload.size()));
      const std::string body = Encode(a, payload, chunk, trailers).body;
      for (std::size_t i = 0; i <= body.size(); ++i) {
        std::vector<std::pair<std::string, std::string>> got_trailers;
        Outcome o = Decode(a, body, {i}, &got_trailers);
        ASSERT_TRUE(o.status.ok()) << "mode " << static_cast<int>(mode) << " chunk " << chunk
                                   << " split " << i << ": " << o.status.error().message;
        ASSERT_EQ(o.out, payload);
        if (mode != PayloadMode::kStreamingSigned) {
          ASSERT_EQ(got_trailers.size(), 2u);
          EXPECT_EQ(got_trailers[0].first, "x-amz-checksum-crc32");
          EXPECT_EQ(got_trailers[0].second, "sOO8/Q==");
          EXPECT_EQ(got_trailers[1].first, "x-amz-meta-extra");
        }
      }
      // Two cuts, the first every few bytes, the second everywhere after it.
      if (body.size() < 400) {
        for (std::size_t i = 0; i <= body.size(); i += 13) {
          for (std::size_t j = i; j <= body.size(); ++j) {
            Outcome o = Decode(a, body, {i, j});
            ASSERT_TRUE(o.status.ok()) << i << "," << j << ": " << o.status.error().message;
            ASSERT_EQ(o.out, payload);
          }
        }
      }
      // One byte at a time.
      std::vector<std::size_t> every;
      for (std::size_t i = 1; i < body.size(); ++i) {
        every.push_back(i);
      }
      Outcome o = Decode(a, body, every);
      ASSERT_TRUE(o.status.ok()) << o.status.error().message;
      EXPECT_EQ(o.out, payload);
    }
  }
}

TEST(PayloadDecoder, EmptyPayload) {
  for (PayloadMode mode : {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                           PayloadMode::kStreamingUnsignedTrailer}) {
    AuthResult a = StreamingAuth(mode, 0);
    std::string body = Encode(a, "", 10).body;
    for (std::size_t i = 0; i <= body.size(); ++i) {
      Outcome o = Decode(a, body, {i});
      ASSERT_TRUE(o.status.ok()) << o.status.error().message;
      EXPECT_TRUE(o.out.empty());
    }
  }
}

TEST(PayloadDecoder, StreamsDataBeforeTheChunkEnds) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSigned);
  std::string body = Encode(a, std::string(1000, 'x'), 1000).body;
  std::unique_ptr<PayloadDecoder> d = MakePayloadDecoder(a);
  std::string out;
  std::size_t header = body.find("\r\n") + 2;
  ASSERT_TRUE(d->Feed(std::string_view(body).substr(0, header + 10), out).ok());
  EXPECT_EQ(out, std::string(10, 'x'));
}

TEST(PayloadDecoder, SignedSha256) {
  AuthResult a;
  a.payload = PayloadMode::kSignedSha256;
  a.expected_sha256 = Sha256Hex("Welcome to Amazon S3.");
  const std::string body = "Welcome to Amazon S3.";
  for (std::size_t i = 0; i <= body.size(); ++i) {
    Outcome o = Decode(a, body, {i});
    ASSERT_TRUE(o.status.ok());
    EXPECT_EQ(o.out, body);
  }
  Outcome bad = RunWhole(a, "Welcome to Amazon S4.");
  EXPECT_EQ(CodeOf(bad), ErrorCode::kXAmzContentSha256Mismatch);
  Outcome empty = RunWhole(a, "");
  EXPECT_EQ(CodeOf(empty), ErrorCode::kXAmzContentSha256Mismatch);
}

TEST(PayloadDecoder, UnsignedPassesThrough) {
  AuthResult a;
  a.payload = PayloadMode::kUnsigned;
  Outcome o = Decode(a, "anything\r\n0;at all", {3, 9});
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.out, "anything\r\n0;at all");
}

TEST(PayloadDecoder, UnsignedTrailerWireFormat) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingUnsignedTrailer, 5);
  std::vector<std::pair<std::string, std::string>> trailers;
  Outcome o =
      Decode(a, "5\r\nhello\r\n0\r\nX-Amz-Checksum-CRC32 : NhCmhg==\r\n\r\n", {}, &trailers);
  ASSERT_TRUE(o.status.ok()) << o.status.error().message;
  EXPECT_EQ(o.out, "hello");
  ASSERT_EQ(trailers.size(), 1u);
  EXPECT_EQ(trailers[0].first, "x-amz-checksum-crc32");
  EXPECT_EQ(trailers[0].second, "NhCmhg==");
  // Without the closing blank line (some clients stop there).
  o = RunWhole(a, "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n");
  EXPECT_TRUE(o.status.ok());
  o = RunWhole(a, "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==");
  EXPECT_TRUE(o.status.ok());
}

TEST(PayloadDecoder, SignedTrailerToleratesBlankLineBeforeSignature) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSignedTrailer);
  std::string body = Encode(a, "hello", 5, {{"x-amz-checksum-crc32", "NhCmhg=="}}).body;
  std::size_t sig = body.find("x-amz-trailer-signature");
  body.insert(sig, "\r\n");
  Outcome o = RunWhole(a, body);
  EXPECT_TRUE(o.status.ok()) << o.status.error().message;
}

// ---------------------------------------------------------------------------------------
// Broken bodies.

TEST(PayloadDecoder, BadChunkSize) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSigned);
  std::string good = Encode(a, "hello", 5).body;
  for (const char* size : {"zz", "", " ", "-5", "0x5", "1234567890abcdef0"}) {
    std::string body = good;
    body.replace(0, 1, size);
    EXPECT_EQ(CodeOf(RunWhole(a, body)), ErrorCode::kInvalidChunkSize) << size;
  }
  AuthResult u = StreamingAuth(PayloadMode::kStreamingUnsignedTrailer);
  EXPECT_EQ(CodeOf(RunWhole(u, "g\r\nhello\r\n0\r\n\r\n")), ErrorCode::kInvalidChunkSize);
}

TEST(PayloadDecoder, OversizedChunkHeaderLine) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSigned);
  std::string line = "5;chunk-signature=" + std::string(5000, 'a');
  // Rejected while streaming, before any newline arrives.
  std::unique_ptr<PayloadDecoder> d = MakePayloadDecoder(a);
  std::string out;
  Result<void> r = Ok();
  for (std::size_t i = 0; i < line.size() && r.ok(); i += 100) {
    r = d->Feed(std::string_view(line).substr(i, 100), out);
  }
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidChunkSize);
  // Errors latch.
  r = d->Feed("\r\n", out);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(d->Finish().ok());
}

TEST(PayloadDecoder, ChunkDataLongerThanDeclared) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingUnsignedTrailer);
  EXPECT_EQ(CodeOf(RunWhole(a, "3\r\nhello\r\n0\r\n\r\n")), ErrorCode::kInvalidChunkSize);
}

TEST(PayloadDecoder, MissingFinalChunk) {
  for (PayloadMode mode : {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                           PayloadMode::kStreamingUnsignedTrailer}) {
    AuthResult a = StreamingAuth(mode);
    std::string body = Encode(a, "hello world", 4).body;
    std::size_t final_chunk = body.rfind("\r\n0");
    ASSERT_NE(final_chunk, std::string::npos);
    // Cut anywhere before the final chunk's line is complete.
    for (std::size_t cut = 0; cut <= final_chunk + 3; ++cut) {
      Outcome o = RunWhole(a, std::string_view(body).substr(0, cut));
      EXPECT_EQ(CodeOf(o), ErrorCode::kIncompleteBody) << static_cast<int>(mode) << " " << cut;
    }
  }
}

TEST(PayloadDecoder, WrongChunkSignature) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSigned);
  std::string body = Encode(a, "hello world", 4).body;
  // Flip one hex digit of each signature in turn (the data chunks and the final chunk).
  std::size_t pos = 0;
  int checked = 0;
  while ((pos = body.find("chunk-signature=", pos)) != std::string::npos) {
    std::string bad = body;
    std::size_t at = pos + 16 + 10;
    bad[at] = bad[at] == '0' ? '1' : '0';
    EXPECT_EQ(CodeOf(RunWhole(a, bad)), ErrorCode::kSignatureDoesNotMatch) << pos;
    pos += 16;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  // A different seed breaks the whole chain.
  AuthResult other = a;
  other.chunk.seed_signature[0] = other.chunk.seed_signature[0] == '4' ? '5' : '4';
  EXPECT_EQ(CodeOf(RunWhole(other, body)), ErrorCode::kSignatureDoesNotMatch);
  // Chunks reordered.
  std::string first = Encode(a, "aaaa", 4).body;
  // Missing or malformed signature extension in a signed mode.
  EXPECT_EQ(CodeOf(RunWhole(a, "5\r\nhello\r\n0\r\n\r\n")), ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(CodeOf(RunWhole(a, "5;chunk-signature=abc\r\nhello\r\n0\r\n\r\n")),
            ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(CodeOf(RunWhole(a, "5;chunk-signatur=" + std::string(64, 'a') + "\r\nhello\r\n")),
            ErrorCode::kSignatureDoesNotMatch);
}

TEST(PayloadDecoder, WrongOrMissingTrailerSignature) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSignedTrailer);
  const std::vector<std::pair<std::string, std::string>> trailers = {
      {"x-amz-checksum-crc32", "NhCmhg=="}};
  std::string body = Encode(a, "hello", 5, trailers).body;
  ASSERT_TRUE(RunWhole(a, body).status.ok());

  std::string bad = body;
  std::size_t sig = bad.find("x-amz-trailer-signature:") + 24;
  bad[sig] = bad[sig] == '0' ? '1' : '0';
  EXPECT_EQ(CodeOf(RunWhole(a, bad)), ErrorCode::kSignatureDoesNotMatch);

  // The trailer value changed after signing.
  bad = body;
  bad.replace(bad.find("NhCmhg=="), 8, "AAAAAA==");
  EXPECT_EQ(CodeOf(RunWhole(a, bad)), ErrorCode::kSignatureDoesNotMatch);

  // No signature line at all.
  bad = body;
  std::size_t line = bad.find("x-amz-trailer-signature:");
  bad.erase(line, bad.find("\r\n", line) + 2 - line);
  EXPECT_EQ(CodeOf(RunWhole(a, bad)), ErrorCode::kSignatureDoesNotMatch);

  // Anything after the signature.
  bad = body;
  bad.insert(bad.size() - 2, "x-amz-meta-late:1\r\n");
  EXPECT_EQ(CodeOf(RunWhole(a, bad)), ErrorCode::kInvalidChunkSize);
}

TEST(PayloadDecoder, DecodedLengthMismatch) {
  for (PayloadMode mode : {PayloadMode::kStreamingSigned, PayloadMode::kStreamingSignedTrailer,
                           PayloadMode::kStreamingUnsignedTrailer}) {
    AuthResult shorter = StreamingAuth(mode, 12);
    EXPECT_EQ(CodeOf(RunWhole(shorter, Encode(shorter, "hello world", 4).body)),
              ErrorCode::kIncompleteBody);
    AuthResult longer = StreamingAuth(mode, 10);
    EXPECT_EQ(CodeOf(RunWhole(longer, Encode(longer, "hello world", 4).body)),
              ErrorCode::kInvalidChunkSize);
    AuthResult exact = StreamingAuth(mode, 11);
    EXPECT_TRUE(RunWhole(exact, Encode(exact, "hello world", 4).body).status.ok());
  }
}

TEST(PayloadDecoder, TrailerSectionIsBounded) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingUnsignedTrailer);
  std::string body = "5\r\nhello\r\n0\r\n";
  for (int i = 0; i < 1000; ++i) {
    body += "x-amz-meta-" + std::to_string(i) + ":" + std::string(20, 'v') + "\r\n";
  }
  body += "\r\n";
  EXPECT_EQ(CodeOf(RunWhole(a, body)), ErrorCode::kInvalidChunkSize);
  EXPECT_EQ(CodeOf(RunWhole(a, "5\r\nhello\r\n0\r\n" + std::string(20000, 'x'))),
            ErrorCode::kInvalidChunkSize);
  EXPECT_EQ(CodeOf(RunWhole(a, "5\r\nhello\r\n0\r\nno-colon-here\r\n\r\n")),
            ErrorCode::kInvalidChunkSize);
}

TEST(PayloadDecoder, DataAfterTheEnd) {
  AuthResult a = StreamingAuth(PayloadMode::kStreamingSigned);
  std::string body = Encode(a, "hello", 5).body;
  EXPECT_TRUE(RunWhole(a, body + "\r\n").status.ok());
  EXPECT_EQ(CodeOf(RunWhole(a, body + "more")), ErrorCode::kInvalidChunkSize);
  // Something other than the closing CRLF right after the final chunk.
  std::string no_close = body.substr(0, body.size() - 2);
  EXPECT_TRUE(RunWhole(a, no_close).status.ok());
  EXPECT_EQ(CodeOf(RunWhole(a, no_close + "x-amz-checksum-crc32:AAAA\r\n\r\n")),
            ErrorCode::kInvalidChunkSize);
}

}  // namespace
}  // namespace strata::auth
