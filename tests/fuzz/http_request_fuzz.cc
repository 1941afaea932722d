// One HTTP request as it arrives on a socket, through every parser the gateway runs on it
// before a handler: Beast's request parser configured as gateway/session.cc configures it,
// the S3 target (gateway/s3_target), the operation, SigV4 / SigV2 verification of header
// and query (auth/verifier), the body through the payload decoder the verifier chose
// (auth/payload_decoder), and the headers handlers parse (Range, If-*, x-amz-tagging).
//
// Seeds are real requests (capture_seeds.py: boto3, presigned URLs, SigV2, signed
// aws-chunked), signed for strata / strata-secret-key. The clock is set from the request's
// own date so that their signatures verify and mutations reach the body decoder.
//
// Properties: the target splits back into what was received; a bucket never holds '/';
// a verified request names the one known user; a verified body decodes to no more bytes
// than arrived, to the declared decoded length, and to the signed SHA-256; a parsed Range
// lies within the object; an accepted x-amz-tagging passes the tag rules.
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "auth/payload_decoder.h"
#include "auth/verifier.h"
#include "common/clock.h"
#include "common/http_time.h"
#include "gateway/conditions.h"
#include "gateway/http_framing.h"
#include "gateway/operation.h"
#include "gateway/s3_target.h"
#include "gateway/tags.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace http = boost::beast::http;
using namespace strata;

// As gateway/session.cc: the default server.max_header_bytes and the body limit.
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 6ull << 30;

// When the request says it was signed: x-amz-date (header or query), else Date (SigV2),
// else a SigV2 presigned URL's Expires; the epoch otherwise.
WallTime RequestTime(const auth::RequestView& view) {
  auto params = auth::internal::ParseQuery(view.raw_query);
  if (const auto* p = auth::internal::FindParam(params, "X-Amz-Date")) {
    if (auto t = auth::internal::ParseAmzDate(p->value)) {
      return *t;
    }
  }
  if (auto t = auth::internal::ParseAmzDate(view.Header("x-amz-date"))) {
    return *t;
  }
  if (auto t = auth::internal::ParseHttpDate(view.Header("date"))) {
    return *t;
  }
  if (const auto* p = auth::internal::FindParam(params, "Expires")) {
    std::int64_t expires = 0;
    if (auth::internal::ParseDecimal(p->value, expires) && expires < (std::int64_t{1} << 33)) {
      return WallTime(std::chrono::seconds(expires - 60));
    }
  }
  return WallTime{};
}

void CheckHeaders(const auth::RequestView& view) {
  if (view.HasHeader("range")) {
    for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1000}}) {
      auto range = gateway::ParseRange(view.Header("range"), size);
      if (range.ok() && range->has_value()) {
        FUZZ_CHECK((*range)->first <= (*range)->last, view.Header("range"));
        FUZZ_CHECK((*range)->last < size, view.Header("range"));
      }
    }
  }
  gateway::Preconditions conditions{view.Header("if-match"), view.Header("if-none-match"),
                                    view.Header("if-modified-since"),
                                    view.Header("if-unmodified-since")};
  auto verdict = gateway::EvaluatePreconditions(conditions, "0123456789abcdef", 1'700'000'000'000);
  FUZZ_CHECK(!verdict || *verdict == 304 || *verdict == 412, view.Header("if-match"));
  if (view.HasHeader("x-amz-tagging")) {
    auto tags = gateway::ParseTaggingHeader(view.Header("x-amz-tagging"));
    if (tags.ok()) {
      FUZZ_CHECK(gateway::ValidateTags(*tags, gateway::TagOwner::kObject).ok(),
                 view.Header("x-amz-tagging"));
    }
  }
}

// The body as the session hands it over, through the decoder the verifier chose.
void DecodeBody(const auth::AuthResult& auth, std::string_view body, bool complete) {
  auto decoder = auth::MakePayloadDecoder(auth);
  std::string out;
  // Two reads, as a socket delivers them: the split must not matter.
  std::size_t cut = body.size() / 3;
  auto fed = decoder->Feed(body.substr(0, cut), out);
  if (fed.ok()) {
    fed = decoder->Feed(body.substr(cut), out);
  }
  FUZZ_CHECK(out.size() <= body.size(), body);
  if (!fed.ok() || !complete || !decoder->Finish().ok()) {
    return;
  }
  if (auth.decoded_content_length >= 0) {
    FUZZ_CHECK(out.size() == static_cast<std::uint64_t>(auth.decoded_content_length), body);
  }
  if (auth.payload == auth::PayloadMode::kSignedSha256) {
    FUZZ_CHECK(auth::internal::HexLower(auth::internal::Sha256Of(out)) == auth.expected_sha256,
               body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static auth::MemCredentialStore* store = [] {
    auto* s = new auth::MemCredentialStore;
    s->Add({"strata", "strata-secret-key", true});
    return s;
  }();

  http::request_parser<http::buffer_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  boost::beast::error_code ec;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // session.cc refuses folded header lines from the raw bytes before Beast joins them,
  // then RFC 9112's framing rules on the parsed head: what passes both reaches the body.
  if (gateway::ScanRequestHead(in).obs_fold) {
    return 0;
  }
  std::size_t used = parser.put(boost::asio::buffer(in.data(), in.size()), ec);
  if (ec || !parser.is_header_done()) {
    return 0;
  }
  if (gateway::CheckFraming(parser.get().base())) {
    return 0;
  }
  in.remove_prefix(used);
  // The body, read the way session.cc reads it: into a buffer_body window.
  std::string body;
  char window[4096];
  while (!parser.is_done() && !in.empty()) {
    parser.get().body().data = window;
    parser.get().body().size = sizeof window;
    used = parser.put(boost::asio::buffer(in.data(), in.size()), ec);
    in.remove_prefix(used);
    body.append(window, sizeof window - parser.get().body().size);
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec || used == 0) {
      break;
    }
  }
  if (!parser.is_done() && !ec && in.empty()) {
    // Tell a body that ended early from one that ended where it said.
    parser.put_eof(ec);
  }
  const bool complete = parser.is_done() && !ec;

  const auto& req = parser.get();
  auto host_it = req.find(http::field::host);
  std::string_view host =
      host_it == req.end() ? std::string_view() : std::string_view(host_it->value());
  std::string_view target_text = req.target();
  auto target = gateway::ParseS3Target(target_text, host, "localhost");
  if (!target.ok()) {
    return 0;
  }
  std::string rejoined = target->raw_path;
  if (target_text.find('?') != std::string_view::npos) {
    rejoined += "?" + target->raw_query;
  }
  FUZZ_CHECK(rejoined == target_text, target_text);
  FUZZ_CHECK(target->bucket.find('/') == std::string::npos, target_text);
  (void)gateway::ClassifyOperation(*target, req.method(),
                                   req.find("x-amz-copy-source") != req.end());
  (void)gateway::HasUnsupportedSubresource(*target);

  auth::RequestView view;
  view.method = req.method_string();
  view.raw_path = target->raw_path;
  view.raw_query = target->raw_query;
  if (target->virtual_hosted) {
    view.virtual_host_bucket = target->bucket;
  }
  for (const auto& field : req) {
    view.headers.emplace_back(field.name_string(), field.value());
  }
  CheckHeaders(view);

  FakeClock clock(RequestTime(view));
  auth::Verifier verifier(*store, clock, auth::VerifierOptions{});
  auto auth = verifier.Verify(view);
  if (!auth.ok()) {
    FUZZ_CHECK(!auth.error().message.empty(), target_text);
    return 0;
  }
  if (auth->anonymous) {
    // Only a request that carries no signature of any kind is anonymous.
    FUZZ_CHECK(auth->principal.access_key.empty() && !view.HasHeader("authorization"), target_text);
    FUZZ_CHECK(auth->payload == auth::PayloadMode::kUnsigned, target_text);
  } else {
    FUZZ_CHECK(auth->principal.access_key == "strata", target_text);
  }
  DecodeBody(*auth, body, complete);
  return 0;
}
