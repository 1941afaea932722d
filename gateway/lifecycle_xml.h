// S3's lifecycle configuration XML (PutBucketLifecycleConfiguration's body and
// GetBucketLifecycleConfiguration's answer) and the rules S3 checks it against. Pure
// logic; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::gateway {

inline constexpr std::size_t kMaxLifecycleRules = 1000;

// Parses and validates a <LifecycleConfiguration>: Rule+ each with ID?, Status, one of
// Filter (Prefix | Tag | ObjectSizeGreaterThan | ObjectSizeLessThan | And, or empty) or
// the old rule-level Prefix, and at least one of Transition*, NoncurrentVersionTransition*,
// Expiration, NoncurrentVersionExpiration, AbortIncompleteMultipartUpload.
// Errors as S3 answers them: kMalformedXml for a document off the schema (unknown or
// repeated elements, a missing Status, two filters, a non-numeric number, a storage class
// S3 does not know); kInvalidArgument for values S3 refuses (days that must be positive,
// a Date not at midnight UTC, a duplicate rule ID, an ID over 255 characters, Expiration
// days not after a Transition's, one class twice in a rule, an IA class before 30 days);
// kInvalidRequest for a rule without an action, or AbortIncompleteMultipartUpload or
// ExpiredObjectDeleteMarker with a tag or size filter. A rule without an ID gets a
// random one, as in S3. `new_id` makes those.
Result<std::vector<metadata::LifecycleRule>> ParseLifecycleConfiguration(
    std::string_view body, const std::function<std::string()>& new_id);

// The <LifecycleConfiguration> document of `rules`, each filter in the form it was given.
std::string LifecycleConfigurationXml(const std::vector<metadata::LifecycleRule>& rules);

}  // namespace strata::gateway
