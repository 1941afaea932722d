#include "auth/payload_decoder.h"

#include <algorithm>
#include <optional>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "common/text.h"

namespace strata::auth {

namespace {

using internal::Sha256;
using internal::TrimSpaces;

// Bounds on what the decoder ever buffers. A chunk header is ~100 bytes in practice
// ("10000;chunk-signature=<64 hex>"); the trailer section holds a few checksum lines.
constexpr std::size_t kMaxChunkHeaderLine = 4096;
constexpr std::size_t kMaxTrailerSection = 16 * 1024;
// 15 hex digits: chunks below 2^60 bytes, so sizes and totals never overflow.
constexpr std::size_t kMaxChunkSizeDigits = 15;

class PassThroughDecoder final : public PayloadDecoder {
 public:
  Result<void> Feed(std::string_view in, std::string& out) override {
    out.append(in);
    return Ok();
  }
  Result<void> Finish() override { return Ok(); }
  const std::vector<std::pair<std::string, std::string>>& Trailers() const override {
    return trailers_;
  }

 private:
  std::vector<std::pair<std::string, std::string>> trailers_;
};

class Sha256Decoder final : public PayloadDecoder {
 public:
  explicit Sha256Decoder(std::string expected) : expected_(std::move(expected)) {}

  Result<void> Feed(std::string_view in, std::string& out) override {
    hasher_.Update(in);
    out.append(in);
    return Ok();
  }

  Result<void> Finish() override {
    if (!finished_) {
      finished_ = true;
      matched_ = internal::ConstantTimeEquals(internal::HexLower(hasher_.Final()), expected_);
    }
    if (!matched_) {
      return Error(ErrorCode::kXAmzContentSha256Mismatch,
                   "The provided 'x-amz-content-sha256' header does not match what was "
                   "computed.");
    }
    return Ok();
  }

  const std::vector<std::pair<std::string, std::string>>& Trailers() const override {
    return trailers_;
  }

 private:
  std::string expected_;
  Sha256 hasher_;
  bool finished_ = false;
  bool matched_ = false;
  std::vector<std::pair<std::string, std::string>> trailers_;
};

// aws-chunked: "<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n" ... "0[;...]\r\n", then
// for the trailer modes "name:value\r\n" lines (and "x-amz-trailer-signature:<sig>\r\n" when
// signed), then "\r\n". Data is emitted as it arrives; each chunk's signature is checked
// when its last byte has been seen.
class ChunkedDecoder final : public PayloadDecoder {
 public:
  ChunkedDecoder(PayloadMode mode, const ChunkSigningContext& ctx, std::int64_t decoded_length)
      : signed_chunks_(mode != PayloadMode::kStreamingUnsignedTrailer),
        trailers_expected_(mode != PayloadMode::kStreamingSigned),
        signed_trailer_(mode == PayloadMode::kStreamingSignedTrailer),
        key_(ctx.signing_key),
        amz_date_(ctx.amz_date),
        scope_(ctx.scope),
        previous_signature_(ctx.seed_signature),
        decoded_length_(decoded_length) {
    line_.reserve(128);
  }

  Result<void> Feed(std::string_view in, std::string& out) override {
    if (error_) {
      return *error_;
    }
    Result<void> r = FeedImpl(in, out);
    if (!r.ok()) {
      error_ = r.error();
    }
    return r;
  }

  Result<void> Finish() override {
    if (error_) {
      return *error_;
    }
    Result<void> r = FinishImpl();
    if (!r.ok()) {
      error_ = r.error();
    }
    return r;
  }

  const std::vector<std::pair<std::string, std::string>>& Trailers() const override {
    return trailers_;
  }

 private:
  enum class State {
    kChunkHeader,  // reading "<hex>;chunk-signature=...\r\n"
    kData,         // inside a chunk's data
    kDataCr,       // expecting the '\r' after a chunk's data
    kDataLf,       // expecting the '\n' after a chunk's data
    kTrailer,      // reading trailer lines after the final chunk
    kFinalLine,    // after the final chunk (no trailers): expecting the closing "\r\n"
    kDone,
  };

  static Error Framing(std::string msg) {
    return Error(ErrorCode::kInvalidChunkSize, std::move(msg));
  }
  static Error BadSignature() {
    return Error(ErrorCode::kSignatureDoesNotMatch,
                 "The request signature we calculated does not match the signature you "
                 "provided. Check your key and signing method.");
  }

  bool InLineState() const {
    return state_ == State::kChunkHeader || state_ == State::kTrailer ||
           state_ == State::kFinalLine;
  }

  std::size_t LineLimit() const {
    if (state_ == State::kChunkHeader) {
      return kMaxChunkHeaderLine;
    }
    return kMaxTrailerSection > trailer_bytes_ ? kMaxTrailerSection - trailer_bytes_ : 0;
  }

  Result<void> FeedImpl(std::string_view in, std::string& out) {
    while (!in.empty()) {
      if (InLineState()) {
        std::size_t nl = in.find('\n');
        std::size_t take = nl == std::string_view::npos ? in.size() : nl;
        if (line_.size() + take > LineLimit()) {
          return state_ == State::kChunkHeader ? Framing("chunk header line too long")
                                               : Framing("trailer section too large");
        }
        line_.append(in.substr(0, take));
        if (nl == std::string_view::npos) {
          return Ok();
        }
        in.remove_prefix(nl + 1);
        STRATA_RETURN_IF_ERROR(CompleteLine());
        continue;
      }
      switch (state_) {
        case State::kData: {
          std::size_t n = static_cast<std::size_t>(
              std::min<std::uint64_t>(remaining_, static_cast<std::uint64_t>(in.size())));
          std::string_view piece = in.substr(0, n);
          if (signed_chunks_) {
            hasher_.Update(piece);
          }
          out.append(piece);
          remaining_ -= n;
          in.remove_prefix(n);
          if (remaining_ == 0) {
            if (signed_chunks_) {
              STRATA_RETURN_IF_ERROR(VerifyChunk(internal::HexLower(hasher_.Final())));
            }
            state_ = State::kDataCr;
          }
          break;
        }
        case State::kDataCr:
          if (in.front() == '\r') {
            state_ = State::kDataLf;
          } else if (in.front() == '\n') {
            state_ = State::kChunkHeader;
          } else {
            return Framing("chunk data is longer than its declared size");
          }
          in.remove_prefix(1);
          break;
        case State::kDataLf:
          if (in.front() != '\n') {
            return Framing("chunk data is not followed by CRLF");
          }
          in.remove_prefix(1);
          state_ = State::kChunkHeader;
          break;
        case State::kDone:
          if (in.front() != '\r' && in.front() != '\n') {
            return Framing("data after the end of the aws-chunked body");
          }
          in.remove_prefix(1);
          break;
        default:
          return Error(ErrorCode::kInternal, "aws-chunked decoder in an impossible state");
      }
    }
    return Ok();
  }

  // Handles the line accumulated in line_ (its '\n' consumed), then clears it.
  Result<void> CompleteLine() {
    if (!line_.empty() && line_.back() == '\r') {
      line_.pop_back();
    }
    Result<void> r = Ok();
    switch (state_) {
      case State::kChunkHeader:
        r = ChunkHeader(line_);
        break;
      case State::kTrailer:
        trailer_bytes_ += line_.size() + 2;
        r = TrailerLine(line_);
        break;
      case State::kFinalLine:
        if (!line_.empty()) {
          r = Framing("data after the final chunk");
        } else {
          state_ = State::kDone;
        }
        break;
      default:
        r = Error(ErrorCode::kInternal, "aws-chunked decoder in an impossible state");
    }
    line_.clear();
    return r;
  }

  Result<void> ChunkHeader(std::string_view line) {
    std::size_t semi = line.find(';');
    std::string_view size_text = TrimSpaces(line.substr(0, semi));
    if (size_text.empty() || size_text.size() > kMaxChunkSizeDigits) {
      return Framing("invalid chunk size");
    }
    std::uint64_t size = 0;
    for (char c : size_text) {
      int d = HexDigitValue(c);
      if (d < 0) {
        return Framing("invalid chunk size");
      }
      size = size * 16 + static_cast<std::uint64_t>(d);
    }
    if (signed_chunks_) {
      std::optional<std::string_view> sig;
      std::string_view ext =
          semi == std::string_view::npos ? std::string_view() : line.substr(semi);
      while (!ext.empty()) {
        ext.remove_prefix(1);  // ';'
        std::size_t next = ext.find(';');
        std::string_view item = TrimSpaces(ext.substr(0, next));
        ext = next == std::string_view::npos ? std::string_view() : ext.substr(next);
        std::size_t eq = item.find('=');
        if (eq != std::string_view::npos && TrimSpaces(item.substr(0, eq)) == "chunk-signature") {
          sig = TrimSpaces(item.substr(eq + 1));
        }
      }
      if (!sig || sig->size() != 64) {
        return BadSignature();
      }
      chunk_signature_ = internal::ToLower(*sig);
    }
    if (decoded_length_ >= 0 && total_ + size > static_cast<std::uint64_t>(decoded_length_)) {
      return Framing("chunks carry more data than x-amz-decoded-content-length");
    }
    total_ += size;
    if (size == 0) {
      if (signed_chunks_) {
        STRATA_RETURN_IF_ERROR(VerifyChunk(internal::kEmptySha256));
      }
      state_ = trailers_expected_ ? State::kTrailer : State::kFinalLine;
      return Ok();
    }
    remaining_ = size;
    state_ = State::kData;
    return Ok();
  }

  Result<void> VerifyChunk(std::string_view data_sha256_hex) {
    std::string sts = "AWS4-HMAC-SHA256-PAYLOAD\n";
    sts += amz_date_;
    sts.push_back('\n');
    sts += scope_;
    sts.push_back('\n');
    sts += previous_signature_;
    sts.push_back('\n');
    sts += internal::kEmptySha256;
    sts.push_back('\n');
    sts += data_sha256_hex;
    std::string computed = internal::HexLower(
        internal::HmacSha256({reinterpret_cast<const char*>(key_.data()), key_.size()}, sts));
    if (!internal::ConstantTimeEquals(computed, chunk_signature_)) {
      return BadSignature();
    }
    previous_signature_ = std::move(computed);
    return Ok();
  }

  Result<void> TrailerLine(std::string_view line) {
    if (line.empty()) {
      // The blank line ends the body. Signed trailers end after their signature; a blank
      // line before it (some SDKs put one between the trailers and the signature) is skipped.
      if (!signed_trailer_ || trailer_signature_verified_) {
        state_ = State::kDone;
      }
      return Ok();
    }
    if (trailer_signature_verified_) {
      return Framing("data after the trailer signature");
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Framing("malformed trailing header");
    }
    std::string name = internal::ToLower(TrimSpaces(line.substr(0, colon)));
    std::string_view value = TrimSpaces(line.substr(colon + 1));
    if (name.empty()) {
      return Framing("malformed trailing header");
    }
    if (name == "x-amz-trailer-signature") {
      if (!signed_trailer_) {
        return Ok();  // Nothing to check it against in the unsigned mode.
      }
      std::string sts = "AWS4-HMAC-SHA256-TRAILER\n";
      sts += amz_date_;
      sts.push_back('\n');
      sts += scope_;
      sts.push_back('\n');
      sts += previous_signature_;
      sts.push_back('\n');
      sts += internal::HexLower(internal::Sha256Of(trailer_canonical_));
      std::string computed = internal::HexLower(
          internal::HmacSha256({reinterpret_cast<const char*>(key_.data()), key_.size()}, sts));
      if (!internal::ConstantTimeEquals(computed, internal::ToLower(value))) {
        return BadSignature();
      }
      trailer_signature_verified_ = true;
      return Ok();
    }
    trailer_canonical_ += name;
    trailer_canonical_.push_back(':');
    trailer_canonical_ += value;
    trailer_canonical_.push_back('\n');
    trailers_.emplace_back(std::move(name), std::string(value));
    return Ok();
  }

  Result<void> FinishImpl() {
    switch (state_) {
      case State::kDone:
        break;
      case State::kFinalLine:
        // Tolerate a body that stops right after the final chunk's line.
        if (!line_.empty()) {
          return Error(ErrorCode::kIncompleteBody, "incomplete aws-chunked body");
        }
        break;
      case State::kTrailer:
        if (!line_.empty()) {
          // A last trailer line without its CRLF.
          STRATA_RETURN_IF_ERROR(CompleteLine());
        }
        if (signed_trailer_ && !trailer_signature_verified_) {
          return Error(ErrorCode::kSignatureDoesNotMatch, "missing x-amz-trailer-signature");
        }
        break;
      default:
        return Error(ErrorCode::kIncompleteBody,
                     "the aws-chunked body ended before its final chunk");
    }
    if (decoded_length_ >= 0 && total_ != static_cast<std::uint64_t>(decoded_length_)) {
      return Error(ErrorCode::kIncompleteBody,
                   "You did not provide the number of bytes specified by the "
                   "x-amz-decoded-content-length header.");
    }
    return Ok();
  }

  const bool signed_chunks_;
  const bool trailers_expected_;
  const bool signed_trailer_;
  const std::array<std::uint8_t, 32> key_;
  const std::string amz_date_;
  const std::string scope_;
  std::string previous_signature_;
  const std::int64_t decoded_length_;

  State state_ = State::kChunkHeader;
  std::string line_;
  std::uint64_t remaining_ = 0;
  std::uint64_t total_ = 0;
  std::string chunk_signature_;
  Sha256 hasher_;
  std::size_t trailer_bytes_ = 0;
  std::string trailer_canonical_;
  bool trailer_signature_verified_ = false;
  std::vector<std::pair<std::string, std::string>> trailers_;
  std::optional<Error> error_;
};

}  // namespace

std::unique_ptr<PayloadDecoder> MakePayloadDecoder(const AuthResult& auth) {
  switch (auth.payload) {
    case PayloadMode::kSignedSha256:
      return std::make_unique<Sha256Decoder>(auth.expected_sha256);
    case PayloadMode::kUnsigned:
      return std::make_unique<PassThroughDecoder>();
    case PayloadMode::kStreamingSigned:
    case PayloadMode::kStreamingSignedTrailer:
    case PayloadMode::kStreamingUnsignedTrailer:
      return std::make_unique<ChunkedDecoder>(auth.payload, auth.chunk,
                                              auth.decoded_content_length);
  }
  return std::make_unique<PassThroughDecoder>();
}

}  // namespace strata::auth
