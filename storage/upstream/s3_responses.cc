#include "storage/upstream/s3_responses.h"

#include <charconv>
#include <pugixml.hpp>

namespace strata::storage::upstream {
namespace {

Error Nonsense(std::string_view what) {
  return Error(ErrorCode::kCorruption,
               "the upstream answered with a body that is not " + std::string(what), true);
}

// The document's root element when it is named `root` (namespaces are ignored: S3 puts
// its xmlns on the root, moto and RGW sometimes not).
Result<pugi::xml_node> Root(pugi::xml_document& doc, std::string_view xml, std::string_view root) {
  if (!doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8)) {
    return Nonsense(root);
  }
  auto element = doc.document_element();
  if (!element || std::string_view(element.name()) != root) {
    return Nonsense(root);
  }
  return element;
}

std::string Text(pugi::xml_node node, const char* child) { return node.child(child).child_value(); }

bool ParseSize(std::string_view text, std::uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::string EscapeText(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::pair<std::string, std::string> ParseErrorBody(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "Error");
  if (!root.ok()) {
    return {};
  }
  return {Text(*root, "Code"), Text(*root, "Message")};
}

Error UpstreamError(unsigned status, const std::string& code, const std::string& message) {
  const std::string detail = "upstream: " + std::to_string(status) + (code.empty() ? "" : " ") +
                             code + (message.empty() ? "" : ": ") + message;
  const bool retryable = status == 500 || status == 502 || status == 503 || status == 504 ||
                         code == "SlowDown" || code == "RequestTimeout" || code == "InternalError";
  if (retryable) {
    return Error(ErrorCode::kUnavailable, detail, true);
  }
  if (code == "NoSuchKey" || (status == 404 && code.empty())) {
    return Error(ErrorCode::kNoSuchKey, detail);
  }
  if (code == "NoSuchBucket") {
    return Error(ErrorCode::kNoSuchBucket, detail);
  }
  if (code == "NoSuchVersion") {
    return Error(ErrorCode::kNoSuchVersion, detail);
  }
  if (code == "NoSuchUpload") {
    return Error(ErrorCode::kNoSuchUpload, detail);
  }
  if (code == "BucketAlreadyOwnedByYou") {
    return Error(ErrorCode::kBucketAlreadyOwnedByYou, detail);
  }
  if (code == "BucketAlreadyExists") {
    return Error(ErrorCode::kBucketAlreadyExists, detail);
  }
  if (code == "BucketNotEmpty") {
    return Error(ErrorCode::kBucketNotEmpty, detail);
  }
  if (status == 412) {
    return Error(ErrorCode::kPreconditionFailed, detail);
  }
  if (status == 416) {
    return Error(ErrorCode::kInvalidRange, detail);
  }
  if (status == 403) {
    // The upstream refused strata's own credentials: no client request of strata's is
    // at fault, so this is strata's access that is denied.
    return Error(ErrorCode::kAccessDenied, detail);
  }
  if (status == 404) {
    return Error(ErrorCode::kNotFound, detail);
  }
  return Error(ErrorCode::kInvalidRequest, detail);
}

Result<std::vector<BucketInfo>> ParseListBuckets(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "ListAllMyBucketsResult");
  if (!root.ok()) {
    return std::move(root).error();
  }
  std::vector<BucketInfo> out;
  for (auto bucket : root->child("Buckets").children("Bucket")) {
    BucketInfo info{Text(bucket, "Name"), Text(bucket, "CreationDate")};
    if (info.name.empty()) {
      return Nonsense("a bucket list (a bucket without a name)");
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "ListBucketResult");
  if (!root.ok()) {
    return std::move(root).error();
  }
  ListPage page;
  for (auto contents : root->children("Contents")) {
    ListedObject object;
    object.key = Text(contents, "Key");
    if (object.key.empty() || !ParseSize(Text(contents, "Size"), object.size)) {
      return Nonsense("a listing (an entry without key or size)");
    }
    object.etag = Text(contents, "ETag");
    object.last_modified = Text(contents, "LastModified");
    object.storage_class = Text(contents, "StorageClass");
    page.objects.push_back(std::move(object));
  }
  for (auto prefix : root->children("CommonPrefixes")) {
    page.common_prefixes.push_back(Text(prefix, "Prefix"));
  }
  page.truncated = Text(*root, "IsTruncated") == "true";
  page.next_continuation_token = Text(*root, "NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty()) {
    return Nonsense("a listing (truncated without a continuation token)");
  }
  return page;
}

Result<std::string> ParseUploadId(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "InitiateMultipartUploadResult");
  if (!root.ok()) {
    return std::move(root).error();
  }
  std::string id = Text(*root, "UploadId");
  if (id.empty()) {
    return Nonsense("an upload (no UploadId)");
  }
  return id;
}

Result<std::string> ParseCompleteResult(std::string_view xml) {
  auto [code, message] = ParseErrorBody(xml);
  if (!code.empty()) {
    return UpstreamError(200, code, message);
  }
  pugi::xml_document doc;
  auto root = Root(doc, xml, "CompleteMultipartUploadResult");
  if (!root.ok()) {
    // moto names the root ...Response.
    root = Root(doc, xml, "CompleteMultipartUploadResponse");
  }
  if (!root.ok()) {
    return std::move(root).error();
  }
  std::string etag = Text(*root, "ETag");
  if (etag.empty()) {
    return Nonsense("a completed upload (no ETag)");
  }
  return etag;
}

Result<std::string> ParseVersioningStatus(std::string_view xml) {
  pugi::xml_document doc;
  auto root = Root(doc, xml, "VersioningConfiguration");
  if (!root.ok()) {
    // moto answers a bucket that never had versioning with an empty ...Response.
    root = Root(doc, xml, "GetBucketVersioningResponse");
  }
  if (!root.ok()) {
    return std::move(root).error();
  }
  std::string status = Text(*root, "Status");
  if (!status.empty() && status != "Enabled" && status != "Suspended") {
    return Nonsense("a versioning status (" + status + ")");
  }
  return status;
}

std::string VersioningBody(const std::string& status) {
  return "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>" +
         EscapeText(status) + "</Status></VersioningConfiguration>";
}

std::string CompleteMultipartBody(const std::vector<std::string>& etags) {
  std::string out = "<CompleteMultipartUpload>";
  for (std::size_t i = 0; i < etags.size(); ++i) {
    out += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
           EscapeText(etags[i]) + "</ETag></Part>";
  }
  out += "</CompleteMultipartUpload>";
  return out;
}

}  // namespace strata::storage::upstream
