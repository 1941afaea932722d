// Mutation fuzzing of auth's parsers of outside input with fixed seeds, run under ASan
// and UBSan: the Authorization header, presigned query strings and aws-chunked bodies.
// Properties: no crash or sanitizer report, nothing that was altered is accepted as
// authentic (a mutated request verifies only if its signed parts are unchanged; a
// mutated body decodes only to the original bytes), and what is refused is refused with
// one of S3's codes for that input (never kInternal); each loop also requires that the
// mutations reached the checks it is about, so that it cannot pass by refusing early.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "auth/payload_decoder.h"
#include "auth/signer.h"
#include "auth/verifier.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleCredential;
using testing::ExampleStore;
using testing::ExampleTime;
using testing::OwnedRequest;

constexpr int kIterations = 4000;

// How many refusals had each code; fails for a code outside `allowed`.
class Refusals {
 public:
  explicit Refusals(std::set<ErrorCode> allowed) : allowed_(std::move(allowed)) {}
  void Add(const Error& e, const std::string& input) {
    ++count_[e.code];
    EXPECT_TRUE(allowed_.count(e.code))
        << "code " << static_cast<int>(e.code) << " (" << e.message << ") for " << input;
  }
  int operator[](ErrorCode code) const {
    auto it = count_.find(code);
    return it == count_.end() ? 0 : it->second;
  }

 private:
  std::set<ErrorCode> allowed_;
  std::map<ErrorCode, int> count_;
};

// One to three random edits: replace, insert or delete a byte, or cut the tail.
std::string Mutate(std::string s, std::mt19937& rng) {
  std::uniform_int_distribution<int> edits(1, 3);
  static constexpr char kInteresting[] = "=,;/ \r\n\t%&0fF-:";
  for (int n = edits(rng); n > 0; --n) {
    if (s.empty()) {
      s.push_back(static_cast<char>(rng()));
      continue;
    }
    std::size_t at = rng() % s.size();
    char c = rng() % 2 ? static_cast<char>(rng()) : kInteresting[rng() % (sizeof kInteresting - 1)];
    switch (rng() % 4) {
      case 0:
        s[at] = c;
        break;
      case 1:
        s.insert(s.begin() + static_cast<long>(at), c);
        break;
      case 2:
        s.erase(at, 1);
        break;
      default:
        s.resize(at);
        break;
    }
  }
  return s;
}

SignRequest SignedExample() {
  SignRequest s;
  s.method = "PUT";
  s.raw_path = "/examplebucket/photos/a%20b.jpg";
  s.raw_query = "x-id=PutObject&tagging";
  s.headers = {{"host", "examplebucket.s3.amazonaws.com"}, {"content-type", "image/jpeg"}};
  s.payload_sha256 = testing::kEmptySha;
  SignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime());
  return s;
}

TEST(AuthFuzz, MutatedAuthorizationHeaderNeverVerifiesWithAnotherSignature) {
  auto store = ExampleStore();
  FakeClock clock(ExampleTime());
  Verifier verifier(store, clock, VerifierOptions{});
  SignRequest signed_request = SignedExample();
  OwnedRequest base = OwnedRequest::FromSigned(signed_request);
  std::string authorization;
  for (const auto& [n, v] : base.headers) {
    if (n == "Authorization" || n == "authorization") {
      authorization = v;
    }
  }
  ASSERT_FALSE(authorization.empty());
  ASSERT_TRUE(verifier.Verify(base.View()).ok());
  std::string signature = authorization.substr(authorization.rfind('=') + 1);

  std::mt19937 rng(1);
  int accepted = 0;
  Refusals refused({ErrorCode::kAccessDenied, ErrorCode::kAuthorizationHeaderMalformed,
                    ErrorCode::kInvalidAccessKeyId, ErrorCode::kInvalidArgument,
                    ErrorCode::kInvalidRequest, ErrorCode::kSignatureDoesNotMatch});
  for (int i = 0; i < kIterations; ++i) {
    OwnedRequest r = base;
    std::string mutated = Mutate(authorization, rng);
    r.Set("Authorization", mutated);
    r.Remove("authorization");
    auto result = verifier.Verify(r.View());
    if (!result.ok()) {
      refused.Add(result.error(), mutated);
    } else {
      ++accepted;
      // Only harmless edits (spacing, case of hex digits) may still verify.
      std::string lower = mutated;
      for (char& c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      EXPECT_NE(lower.find(signature), std::string::npos) << mutated;
    }
  }
  EXPECT_LT(accepted, kIterations / 10);
  // Both the header's parser and the signature comparison saw mutations (180 of the 4000
  // reach the comparison with these seeds).
  EXPECT_GT(refused[ErrorCode::kAuthorizationHeaderMalformed], kIterations / 20);
  EXPECT_GT(refused[ErrorCode::kSignatureDoesNotMatch], 90);
}

TEST(AuthFuzz, MutatedPresignedQueryVerifiesOnlyWhenEquivalent) {
  auto store = ExampleStore();
  FakeClock clock(ExampleTime());
  Verifier verifier(store, clock, VerifierOptions{});
  SignRequest s;
  s.method = "GET";
  s.raw_path = "/examplebucket/test.txt";
  s.headers = {{"host", "examplebucket.s3.amazonaws.com"}};
  std::string query =
      PresignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime(), std::chrono::hours(24));
  OwnedRequest base = OwnedRequest::FromSigned(s);
  base.raw_query = query;
  ASSERT_TRUE(verifier.Verify(base.View()).ok());
  std::mt19937 rng(2);
  Refusals refused({ErrorCode::kAccessDenied, ErrorCode::kAuthorizationQueryParametersError,
                    ErrorCode::kExpiredPresignedRequest, ErrorCode::kInvalidAccessKeyId,
                    ErrorCode::kInvalidArgument, ErrorCode::kInvalidRequest,
                    ErrorCode::kSignatureDoesNotMatch});
  for (int i = 0; i < kIterations; ++i) {
    OwnedRequest r = base;
    r.raw_query = Mutate(query, rng);
    auto result = verifier.Verify(r.View());
    if (!result.ok()) {
      refused.Add(result.error(), r.raw_query);
    } else if (result->anonymous) {
      // The edit left no signature parameter at all: an anonymous request, with no one's
      // rights.
      auto params = internal::ParseQuery(r.raw_query);
      for (const char* name : {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature",
                               "AWSAccessKeyId", "Signature"}) {
        EXPECT_EQ(internal::FindParam(params, name), nullptr) << r.raw_query;
      }
      EXPECT_TRUE(result->principal.access_key.empty());
    } else {
      // Only an equivalent encoding of the same parameters may still verify.
      auto params = internal::ParseQuery(r.raw_query);
      auto original = internal::ParseQuery(query);
      auto key = [](const internal::QueryParam& p) { return std::pair(p.name, p.value); };
      std::vector<std::pair<std::string, std::string>> a, b;
      for (const auto& p : params) {
        a.push_back(key(p));
      }
      for (const auto& p : original) {
        b.push_back(key(p));
      }
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b) << r.raw_query;
    }
  }
  // Both the query's parser and the signature comparison saw mutations (most edits break
  // a parameter; 21 of the 4000 reach the comparison with these seeds).
  EXPECT_GT(refused[ErrorCode::kAuthorizationQueryParametersError], kIterations / 20);
  EXPECT_GT(refused[ErrorCode::kSignatureDoesNotMatch], 10);
}

TEST(AuthFuzz, MutatedAwsChunkedBodyDecodesToOriginalOrFails) {
  // A real streaming upload, signed as botocore does, then damaged.
  SignRequest s;
  s.method = "PUT";
  s.raw_path = "/examplebucket/chunked";
  s.headers = {{"host", "examplebucket.s3.amazonaws.com"},
               {"content-encoding", "aws-chunked"},
               {"x-amz-decoded-content-length", "300"}};
  s.payload_sha256 = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
  SignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime());
  auto store = ExampleStore();
  FakeClock clock(ExampleTime());
  Verifier verifier(store, clock, VerifierOptions{});
  auto auth = verifier.Verify(OwnedRequest::FromSigned(s).View());
  ASSERT_TRUE(auth.ok());
  ASSERT_EQ(auth->payload, PayloadMode::kStreamingSigned);

  // 300 random bytes in chunks of 128, each signed as a client signs it.
  std::string payload(300, '\0');
  std::mt19937 data_rng(3);
  for (char& c : payload) {
    c = static_cast<char>(data_rng());
  }
  const ChunkSigningContext& ctx = auth->chunk;
  auto chunk_signature = [&](const std::string& previous, std::string_view data) {
    std::string key(reinterpret_cast<const char*>(ctx.signing_key.data()), ctx.signing_key.size());
    return internal::HexLower(internal::HmacSha256(
        key, "AWS4-HMAC-SHA256-PAYLOAD\n" + ctx.amz_date + "\n" + ctx.scope + "\n" + previous +
                 "\n" + std::string(testing::kEmptySha) + "\n" + Sha256Hex(data)));
  };
  std::string body;
  std::string previous = ctx.seed_signature;
  for (std::size_t pos = 0;;) {
    std::string_view data =
        std::string_view(payload).substr(pos, std::min<std::size_t>(128, payload.size() - pos));
    previous = chunk_signature(previous, data);
    char hex[16];
    std::snprintf(hex, sizeof hex, "%zx", data.size());
    body += std::string(hex) + ";chunk-signature=" + previous + "\r\n";
    if (data.empty()) {
      break;
    }
    body += std::string(data) + "\r\n";
    pos += data.size();
  }
  body += "\r\n";
  {
    auto d = MakePayloadDecoder(*auth);
    std::string out;
    ASSERT_TRUE(d->Feed(body, out).ok());
    ASSERT_TRUE(d->Finish().ok());
    ASSERT_EQ(out, payload);
  }
  std::mt19937 rng(4);
  Refusals refused({ErrorCode::kIncompleteBody, ErrorCode::kInvalidChunkSize,
                    ErrorCode::kSignatureDoesNotMatch, ErrorCode::kXAmzContentSha256Mismatch});
  for (int i = 0; i < kIterations; ++i) {
    std::string damaged = Mutate(body, rng);
    auto d = MakePayloadDecoder(*auth);
    std::string out;
    std::size_t cut = damaged.empty() ? 0 : rng() % damaged.size();
    auto fed = d->Feed(std::string_view(damaged).substr(0, cut), out);
    if (fed.ok()) {
      fed = d->Feed(std::string_view(damaged).substr(cut), out);
    }
    if (fed.ok()) {
      fed = d->Finish();
    }
    if (!fed.ok()) {
      refused.Add(fed.error(), damaged);
    } else {
      EXPECT_EQ(out, payload) << "a damaged body was accepted with other content";
    }
  }
  // The framing checks and the chunk signatures both saw damage (most edits land in the
  // data, whose signature then fails; 64 of the 4000 break the framing with these seeds).
  EXPECT_GT(refused[ErrorCode::kInvalidChunkSize], 30);
  EXPECT_GT(refused[ErrorCode::kSignatureDoesNotMatch], kIterations / 20);
}

}  // namespace
}  // namespace strata::auth
