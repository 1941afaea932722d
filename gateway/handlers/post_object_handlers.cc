// POST Object: a browser's upload through an HTML form (S3's "browser-based uploads
// using POST"). The body is multipart/form-data: fields (key, policy and its signature,
// the object's description), then the file. The fields are read first (at most 20 KiB,
// gateway/post_form.h); they say who signed the form (auth/post_form_auth.h), and the
// policy they carry must allow them (auth/post_policy.h). Only then is the caller, the
// form's signer or anonymous, authorized for s3:PutObject on the key, and the file
// streams into a PendingWrite in bounded blocks, committed as PutObject commits: the same
// record, ETag, checksums, owner, ACL, object lock, write-back and versioning.
//
// In a cluster the key is known only once the fields are read, after Dispatch would have
// sent a request on a key to its owner (gateway/forward.h): a gateway that does not own
// the key forwards the form then, the bytes it read first, and the owner serves it,
// acknowledging once the key's other owners hold the new version, as PutObject's primary.
#include <algorithm>
#include <charconv>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "auth/payload_decoder.h"
#include "auth/post_form_auth.h"
#include "auth/post_policy.h"
#include "auth/signer.h"
#include "common/offload.h"
#include "common/utf8.h"
#include "gateway/bucket_access.h"
#include "gateway/forward.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/post_form.h"
#include "gateway/tags.h"
#include "gateway/xml.h"
#include "gateway/xml_budget.h"
#include "storage/checksum.h"
#include "storage/cluster.h"
#include "storage/replication.h"

namespace strata::gateway {
namespace {

using auth::PostFormField;
using Kind = PostFormReader::Kind;

constexpr std::string_view kFileNameVariable = "${filename}";

// The form's value of field `lower_name` (case-insensitive), or nullptr.
template <class Fields>
auto FieldValue(Fields& fields, std::string_view lower_name) -> decltype(&fields[0].value) {
  for (auto& f : fields) {
    if (f.name.size() == lower_name.size() && Lower(f.name) == lower_name) {
      return &f.value;
    }
  }
  return nullptr;
}

std::optional<std::string> OptionalField(const std::vector<PostFormField>& fields,
                                         std::string_view lower_name) {
  const std::string* value = FieldValue(fields, lower_name);
  return value ? std::optional<std::string>(*value) : std::nullopt;
}

// A value that becomes a response header on GET (Content-Type, x-amz-meta-*): a form
// field may hold any byte, and CR or LF there would split the header.
bool HeaderSafe(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// RFC 9110's token: what a metadata name must be to be a header name.
bool Token(std::string_view name) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kSpecials.find(c) != std::string_view::npos;
  });
}

Error BadField(std::string_view name) {
  return Error(ErrorCode::kInvalidArgument,
               "The POST form field " + std::string(name) + " has a character S3 does not allow.");
}

// The body as the form reader sees it: read in blocks through the request's payload
// decoder (which still verifies a signed or aws-chunked body), the bytes the reader has
// not consumed kept in one buffer of at most a block plus the reader's lookahead.
class FormInput {
 public:
  // `record`: keep the raw bytes read until TakeRead, for a gateway that may forward the
  // form to its key's owner.
  FormInput(RequestContext& ctx, std::string boundary, bool record)
      : ctx_(ctx),
        decoder_(auth::MakePayloadDecoder(ctx.auth)),
        signed_body_(ctx.auth.payload != auth::PayloadMode::kUnsigned),
        reader_(std::move(boundary)),
        recording_(record) {
    // A small body gets a small block, as PutObject's does.
    std::uint64_t declared = 0;
    auto length = ctx.Header("content-length");
    auto [p, ec] = std::from_chars(length.data(), length.data() + length.size(), declared);
    (void)p;
    block_size_ = ec == std::errc() && !length.empty()
                      ? static_cast<std::size_t>(std::min<std::uint64_t>(kIoBlock, declared + 1))
                      : kIoBlock;
    raw_ = std::make_unique<char[]>(block_size_);
    buffer_.reserve(block_size_ + PostFormReader::kMaxLookahead);
  }

  // The reader's next event (not kNeedMore). A kFileData's data stays valid until the
  // next call.
  asio::awaitable<Result<PostFormReader::Event>> Next() {
    start_ += std::exchange(last_consumed_, 0);
    for (;;) {
      auto event = reader_.Next(std::string_view(buffer_).substr(start_), at_end_);
      if (!event.ok()) {
        co_return std::move(event).error();
      }
      if (event->kind != Kind::kNeedMore) {
        last_consumed_ = event->consumed;
        co_return std::move(*event);
      }
      start_ += event->consumed;
      if (event->consumed == 0) {
        if (at_end_) {  // not reached: at the end the reader decides
          co_return Error(ErrorCode::kIncompleteBody, "the form ends early");
        }
        STRATA_CO_RETURN_IF_ERROR(co_await Fill());
      }
    }
  }

  // The body's bytes read so far, as the client sent them (before the payload decoder),
  // and the end of recording them. At most the fields (kMaxPreData), the reader's
  // lookahead and a block: TakeRead comes once the file starts.
  std::string TakeRead() {
    recording_ = false;
    return std::move(read_);
  }

  // After the file: what follows it is not read by S3, but a signed payload (SHA-256,
  // aws-chunked) is verified only once all of it went through the decoder. An unsigned
  // one is left to the session, which drains a little and otherwise closes.
  asio::awaitable<Result<void>> Finish() {
    if (!signed_body_) {
      co_return Ok();
    }
    while (!at_end_) {
      buffer_.clear();
      start_ = 0;
      STRATA_CO_RETURN_IF_ERROR(co_await Fill());
    }
    co_return Ok();
  }

 private:
  // Reads the next block into the buffer, behind what the reader has not consumed.
  asio::awaitable<Result<void>> Fill() {
    buffer_.erase(0, start_);
    start_ = 0;
    STRATA_CO_TRY(auto got,
                  co_await ctx_.exchange.ReadBody(std::span<char>(raw_.get(), block_size_)));
    if (got == 0) {
      at_end_ = true;
      co_return decoder_->Finish();
    }
    if (recording_) {
      read_.append(raw_.get(), got);
    }
    co_return decoder_->Feed(std::string_view(raw_.get(), got), buffer_);
  }

  RequestContext& ctx_;
  std::unique_ptr<auth::PayloadDecoder> decoder_;
  // The request's own signature covers its body (not the form's: that is a policy's): the
  // decoder must see all of it. Decided before ctx.auth becomes the form's signer.
  bool signed_body_;
  PostFormReader reader_;
  std::size_t block_size_ = kIoBlock;
  std::unique_ptr<char[]> raw_;
  std::string buffer_;
  std::size_t start_ = 0;          // buffer_'s first byte the reader has not consumed
  std::size_t last_consumed_ = 0;  // the last event's, dropped at the next call
  bool at_end_ = false;
  bool recording_;
  std::string read_;  // while recording_
};

// What the fields say the upload is.
struct PostUpload {
  metadata::ObjectRecord record;
  std::uint64_t min_size = 0;
  std::uint64_t max_size = kMaxSinglePut;
  std::vector<ChecksumExpectation> checksums;
  std::optional<std::string> md5;  // Content-MD5, base64
  unsigned status = 204;
  std::string redirect;  // success_action_redirect (or redirect), when usable
};

// The form's fields as PutObject's headers would carry a new version's ACL and lock
// (AccessFields): `acl` is x-amz-acl; the x-amz-grant-* and x-amz-object-lock-* fields
// have the headers' names. The policy's conditions have covered every one of them.
AccessFields FormAccessFields(const std::vector<PostFormField>& fields) {
  return [&fields](std::string_view header) -> std::string_view {
    const std::string* value = FieldValue(fields, header == "x-amz-acl" ? "acl" : header);
    return value != nullptr ? std::string_view(*value) : std::string_view();
  };
}

// The object's description from the form, as PutObject's comes from headers
// (DescribeFromHeaders): Content-Type (else binary/octet-stream: S3 ignores the file
// part's own type), the stored headers, x-amz-meta-*, x-amz-storage-class, and `tagging`,
// a Tagging XML document.
Result<void> DescribeFromForm(const RequestContext& ctx, const std::vector<PostFormField>& fields,
                              metadata::ObjectRecord& record) {
  const std::string* content_type = FieldValue(fields, "content-type");
  record.content_type = content_type ? *content_type : "binary/octet-stream";
  std::size_t meta_bytes = 0;
  for (const auto& f : fields) {
    const std::string name = Lower(f.name);
    const bool stored =
        std::find(kStoredHeaders.begin(), kStoredHeaders.end(), name) != kStoredHeaders.end();
    const bool meta = name.starts_with(kMetaPrefix);
    if ((stored || meta || name == "content-type") && !HeaderSafe(f.value)) {
      return BadField(f.name);
    }
    if (stored && !f.value.empty()) {
      record.system_metadata.emplace_back(name, f.value);
    }
    if (meta) {
      std::string key = name.substr(kMetaPrefix.size());
      if (!Token(key)) {
        return BadField(f.name);
      }
      meta_bytes += key.size() + f.value.size();
      record.user_metadata.emplace_back(std::move(key), f.value);
    }
  }
  if (meta_bytes > kMaxUserMetadataBytes) {
    return Error(ErrorCode::kMetadataTooLarge,
                 "Your metadata headers exceed the maximum allowed metadata size.");
  }
  if (const std::string* storage_class = FieldValue(fields, "x-amz-storage-class")) {
    if (!KnownStorageClass(ctx, *storage_class)) {
      return Error(ErrorCode::kInvalidStorageClass, "The storage class you specified is not valid");
    }
    record.storage_class = *storage_class;
  }
  if (const std::string* tagging = FieldValue(fields, "tagging")) {
    // The form's fields are small (kMaxPreData), but pugixml's nodes still count against
    // the process's XML budget, as every XML body's do.
    XmlLease lease(kXmlLeaseFactor * kMaxPreData + (64 << 10));
    if (!lease.Reserve(kXmlReserveFactor * tagging->size())) {
      return lease.Refusal();
    }
    auto tags = lease.Run([&] { return ParseTagging(*tagging); });
    if (!tags.ok()) {
      return std::move(tags).error();
    }
    STRATA_RETURN_IF_ERROR(ValidateTags(*tags, TagOwner::kObject));
    record.tags = std::move(*tags);
  }
  return Ok();
}

// Content-MD5 and x-amz-checksum-* fields: what the file must hash to.
Result<void> ExpectDigests(const std::vector<PostFormField>& fields, PostUpload& upload) {
  if (const std::string* md5 = FieldValue(fields, "content-md5")) {
    auto raw = storage::Base64Decode(*md5);
    if (!raw || raw->size() != 16) {
      return Error(ErrorCode::kInvalidDigest, "The Content-MD5 you specified is not valid.");
    }
    upload.md5 = *md5;
  }
  for (auto algorithm : kAllChecksums) {
    if (const std::string* value = FieldValue(fields, storage::ChecksumHeaderName(algorithm))) {
      upload.checksums.push_back({algorithm, *value, false});
    }
  }
  if (upload.checksums.size() > 1) {
    return Error(
        ErrorCode::kInvalidRequest,
        "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
  }
  return Ok();
}

// success_action_redirect (or the older `redirect`), when it is a URL a Location header
// can carry; S3 ignores one it cannot interpret. Then success_action_status: 200, 201 or
// 204, the default and what any other value means.
void ChooseAnswer(const std::vector<PostFormField>& fields, PostUpload& upload) {
  const std::string* redirect = FieldValue(fields, "success_action_redirect");
  if (redirect == nullptr) {
    redirect = FieldValue(fields, "redirect");
  }
  if (redirect != nullptr && HeaderSafe(*redirect) &&
      (redirect->starts_with("http://") || redirect->starts_with("https://"))) {
    upload.redirect = *redirect;
  }
  const std::string* status = FieldValue(fields, "success_action_status");
  if (status != nullptr && (*status == "200" || *status == "201")) {
    upload.status = *status == "200" ? 200 : 201;
  }
}

// Everything the fields decide before a byte of the file is stored: the key, who signed
// the form and whether its policy allows it, whether that caller may put the key, and
// the object's description. Sets ctx.auth to the form's signer and ctx.target.key.
Result<PostUpload> PrepareUpload(RequestContext& ctx, std::vector<PostFormField>& fields,
                                 std::string_view file_name) {
  std::string* key_field = FieldValue(fields, "key");
  if (key_field == nullptr) {
    return Error(ErrorCode::kInvalidArgument,
                 "Bucket POST must contain a field named 'key'.  If it is specified, please "
                 "check the order of the fields.");
  }
  // ${filename}: the name of the file the user chose, as the browser sent it.
  for (auto at = key_field->find(kFileNameVariable); at != std::string::npos;
       at = key_field->find(kFileNameVariable, at + file_name.size())) {
    key_field->replace(at, kFileNameVariable.size(), file_name);
  }
  if (key_field->empty()) {
    return Error(ErrorCode::kInvalidArgument, "User key must have a length greater than 0.");
  }
  if (!IsValidUtf8(*key_field)) {
    return Error(ErrorCode::kInvalidArgument, "The key is not valid UTF-8.");
  }

  auth::PostFormSignature signature{
      OptionalField(fields, "policy"),           OptionalField(fields, "x-amz-algorithm"),
      OptionalField(fields, "x-amz-credential"), OptionalField(fields, "x-amz-date"),
      OptionalField(fields, "x-amz-signature"),  OptionalField(fields, "awsaccesskeyid"),
      OptionalField(fields, "signature")};
  auto signer = ctx.services.verifier.VerifyPostForm(signature);
  if (!signer.ok()) {
    return std::move(signer).error();
  }
  PostUpload upload;
  if (signature.policy) {
    auto policy = auth::PostPolicy::Decode(*signature.policy);
    if (!policy.ok()) {
      return std::move(policy).error();
    }
    STRATA_RETURN_IF_ERROR(policy->Check(fields, ctx.target.bucket, ctx.NowMs()));
    if (auto range = policy->length_range()) {
      upload.min_size = range->min;
      upload.max_size = std::min(range->max, kMaxSinglePut);
    }
  }
  ctx.target.key = *key_field;
  STRATA_RETURN_IF_ERROR(CheckKeyLength(ctx));

  // The caller is whom the form proves, whatever the request's own headers claimed.
  ctx.auth = std::move(*signer);
  STRATA_RETURN_IF_ERROR(AuthorizeBucketAccess(
      ctx, *ctx.bucket, AccessRequest{.action = "s3:PutObject", .key = ctx.target.key}));

  upload.record.bucket = BucketName(ctx.target.bucket);
  upload.record.key = ObjectKey(ctx.target.key);
  STRATA_RETURN_IF_ERROR(DescribeFromForm(ctx, fields, upload.record));
  STRATA_RETURN_IF_ERROR(ExpectDigests(fields, upload));
  ChooseAnswer(fields, upload);
  return upload;
}

Error TooLarge(std::uint64_t max) {
  return Error(ErrorCode::kEntityTooLarge, "Your proposed upload exceeds the maximum allowed size")
      .WithDetail("MaxSizeAllowed", std::to_string(max));
}

// Checks the stored file against the policy's minimum and the form's digests; returns
// the headers echoing the verified checksums.
Result<ResponseHeader> VerifyFile(const PostUpload& upload, storage::PendingWrite& write) {
  if (write.size() < upload.min_size) {
    return Error(ErrorCode::kEntityTooSmall,
                 "Your proposed upload is smaller than the minimum allowed size")
        .WithDetail("ProposedSize", std::to_string(write.size()))
        .WithDetail("MinSizeAllowed", std::to_string(upload.min_size));
  }
  if (upload.md5 && write.Md5Base64() != *upload.md5) {
    return Error(ErrorCode::kBadDigest,
                 "The Content-MD5 you specified did not match what we received.");
  }
  ResponseHeader header;
  for (const auto& expected : upload.checksums) {
    auto actual = write.Checksum(expected.algorithm);
    if (!actual || *actual != expected.value) {
      return Error(ErrorCode::kBadDigest,
                   "The " + std::string(storage::ChecksumName(expected.algorithm)) +
                       " you specified did not match the calculated checksum.");
    }
    header.set(storage::ChecksumHeaderName(expected.algorithm), expected.value);
  }
  return header;
}

// Where the object is, as S3's Location says it: this endpoint, path-style or virtual-hosted
// as the request came.
std::string ObjectUrl(const RequestContext& ctx) {
  std::string url = ctx.exchange.secure() ? "https://" : "http://";
  url += ctx.Header("host");
  url += '/';
  if (!ctx.target.virtual_hosted) {
    url += ctx.target.bucket + '/';
  }
  url += auth::UriEncode(ctx.target.key, /*encode_slash=*/false);
  return url;
}

HandlerResult Answer(RequestContext& ctx, const PostUpload& upload,
                     const metadata::ObjectRecord& committed, ResponseHeader header) {
  const std::string etag = "\"" + committed.etag + "\"";
  header.set(http::field::etag, etag);
  SetVersionHeader(ctx, committed.version_id, header);
  if (!upload.redirect.empty()) {
    std::string location = upload.redirect;
    location += location.find('?') == std::string::npos ? '?' : '&';
    location += "bucket=" + auth::UriEncode(ctx.target.bucket, true) +
                "&key=" + auth::UriEncode(ctx.target.key, true) +
                "&etag=" + auth::UriEncode(etag, true);
    header.set(http::field::location, location);
    co_return co_await SendEmpty(ctx, 303, std::move(header));
  }
  const std::string url = ObjectUrl(ctx);
  header.set(http::field::location, url);
  if (upload.status != 201) {
    co_return co_await SendEmpty(ctx, upload.status, std::move(header));
  }
  XmlWriter xml("PostResponse", false);
  xml.Element("Location", url)
      .Element("Bucket", ctx.target.bucket)
      .Element("Key", ctx.target.key)
      .Element("ETag", etag);
  co_return co_await SendXml(ctx, 201, xml.Finish(), std::move(header));
}

}  // namespace

HandlerResult PostObject(RequestContext& ctx) {
  storage::Cluster* cluster = ctx.services.cluster;
  auto boundary = FormBoundary(ctx.Header("content-type"));
  if (!boundary) {
    co_return Error(ErrorCode::kPreconditionFailed,
                    "At least one of the pre-conditions you specified did not hold")
        .WithDetail("Condition", "Bucket POST must be of the enclosure-type multipart/form-data");
  }
  FormInput input(ctx, std::move(*boundary), cluster != nullptr && !ctx.exchange.forwarded());
  std::vector<PostFormField> fields;
  std::string file_name;
  for (bool file = false; !file;) {
    STRATA_CO_TRY(auto event, co_await input.Next());
    if (event.kind == Kind::kField) {
      if (FieldValue(fields, Lower(event.name)) != nullptr) {
        co_return Error(ErrorCode::kInvalidArgument,
                        "POST form field " + event.name + " appears more than once.");
      }
      fields.push_back({std::move(event.name), std::move(event.value)});
    } else {
      file = true;  // kFileStart: the reader yields nothing else before it
      file_name = std::move(event.file_name);
    }
  }
  STRATA_CO_TRY(auto upload, PrepareUpload(ctx, fields, file_name));
  if (cluster != nullptr) {
    std::string read_so_far = input.TakeRead();
    STRATA_CO_TRY(const bool forwarded, co_await ForwardFormToOwner(ctx, std::move(read_so_far)));
    if (forwarded) {
      co_return Ok();
    }
    // As Dispatch's Route for a PutObject its primary serves (storage/membership.h's fence).
    if (!cluster->MayAcceptWrites()) {
      co_return Error(ErrorCode::kUnavailable,
                      "this gateway is not sure of its cluster membership now; try again", true);
    }
  }
  const AccessFields access = FormAccessFields(fields);
  STRATA_CO_RETURN_IF_ERROR(co_await DescribeAccess(ctx, upload.record, access));

  auto& store = ctx.services.store;
  std::vector<storage::ChecksumAlgorithm> algorithms;
  for (const auto& c : upload.checksums) {
    algorithms.push_back(c.algorithm);
  }
  STRATA_CO_TRY(auto pending, store.BeginWrite(upload.record.bucket, algorithms));
  for (;;) {
    STRATA_CO_TRY(auto event, co_await input.Next());
    if (event.kind != Kind::kFileData) {
      break;  // kFileEnd
    }
    if (pending->size() + event.data.size() > upload.max_size) {
      // Stops here: the rest is never read, the temporary file goes with `pending`.
      co_return TooLarge(upload.max_size);
    }
    STRATA_CO_RETURN_IF_ERROR(co_await pending->AppendAsync(event.data));
  }
  STRATA_CO_RETURN_IF_ERROR(co_await input.Finish());
  STRATA_CO_TRY(auto header, VerifyFile(upload, *pending));

  metadata::ObjectRecord record = std::move(upload.record);
  STRATA_CO_TRY(auto committed, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.CommitWrite(std::move(pending), std::move(record));
                }));
  if (ctx.services.replication != nullptr) {
    // Acknowledged only once the key's other owners hold the new version (its bytes too).
    STRATA_CO_RETURN_IF_ERROR(
        co_await ctx.services.replication->SyncKey(committed.bucket, committed.key, true));
  }
  co_return co_await Answer(ctx, upload, committed, std::move(header));
}

}  // namespace strata::gateway
