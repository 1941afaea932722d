// S3's XML: a small writer for responses and parsers for the request bodies the
// gateway accepts. Pure logic; thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "metadata/records.h"
#include "storage/multipart.h"

namespace strata::gateway {

// Builds an XML document in one string. Element names are trusted literals; text is
// escaped.
class XmlWriter {
 public:
  // Starts the document with the XML declaration and the root element; `xmlns` adds
  // S3's namespace attribute.
  explicit XmlWriter(std::string_view root, bool xmlns = true);
  XmlWriter& Open(std::string_view name);
  // Opens `name` with attributes (name, value); values are escaped.
  XmlWriter& Open(std::string_view name,
                  std::initializer_list<std::pair<std::string_view, std::string_view>> attributes);
  XmlWriter& Close();  // closes the innermost open element
  XmlWriter& Element(std::string_view name, std::string_view text);
  // Closes every open element and returns the document.
  std::string Finish();

 private:
  std::string out_;
  std::string stack_;  // open element names, '\0'-separated
};

std::string XmlEscape(std::string_view text);

// CreateBucketConfiguration: the LocationConstraint, empty when absent or when the body
// is empty. kMalformedXml for anything that is not that document.
Result<std::string> ParseCreateBucketConfiguration(std::string_view body);

// DeleteObjects' request body: <Delete><Quiet/>?<Object><Key/><VersionId/>?</Object>+</Delete>.
struct DeleteRequest {
  struct Entry {
    std::string key;
    std::string version_id;  // empty when absent
  };
  bool quiet = false;
  std::vector<Entry> objects;
};
// kMalformedXml for anything else, no objects, more than 1000, or an object without a key.
Result<DeleteRequest> ParseDeleteRequest(std::string_view body);

// PutBucketVersioning's body: <VersioningConfiguration><Status>Enabled|Suspended</Status>
// <MfaDelete>Disabled</MfaDelete>?</VersioningConfiguration>; returns the status.
// kMalformedXml for anything else (including a missing Status); kNotImplemented for
// MfaDelete Enabled.
Result<std::string> ParseVersioningConfiguration(std::string_view body);

// PutObjectTagging's and PutBucketTagging's body: <Tagging><TagSet><Tag><Key/><Value/>
// </Tag>*</TagSet></Tagging>, tags in document order. kMalformedXml for anything else (no
// TagSet or two, a Tag without Key or Value or with either twice, unknown elements);
// S3's tag rules are checked separately (gateway/tags.h).
Result<metadata::Tags> ParseTagging(std::string_view body);

// CompleteMultipartUpload's request body: <CompleteMultipartUpload><Part><PartNumber/>
// <ETag/><ChecksumCRC32/>...</Part>*</CompleteMultipartUpload>, ETags unquoted. Order is
// kept as sent (the rules are checked later). kMalformedXml for anything else, a part
// without number or ETag, a number outside 1..10000, or more than 10000 parts; kInvalidPart
// for an unknown checksum element.
Result<std::vector<storage::CompletedPart>> ParseCompleteMultipartUpload(std::string_view body);

// RestoreObject's body: <RestoreRequest><Days>N</Days><GlacierJobParameters><Tier>
// Standard|Bulk|Expedited</Tier></GlacierJobParameters>?<Description/>?</RestoreRequest>.
// kMalformedXml for anything else, a missing Days, or Days outside 1..2^31-1;
// kNotImplemented for a SELECT request (Type, SelectParameters, OutputLocation).
struct RestoreRequest {
  std::int64_t days = 0;
  std::string tier = "Standard";  // how fast S3 would restore; strata fetches at once
};
Result<RestoreRequest> ParseRestoreRequest(std::string_view body);

}  // namespace strata::gateway
