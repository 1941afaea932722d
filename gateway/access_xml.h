// The XML bodies of a bucket's access settings besides its policy:
// PutBucketOwnershipControls' <OwnershipControls> and PutPublicAccessBlock's
// <PublicAccessBlockConfiguration>, parsed as S3 checks them, and the documents their GETs
// answer. Pure logic; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::gateway {

// Whether `mode` is one of S3's object ownership settings: "BucketOwnerEnforced",
// "BucketOwnerPreferred", "ObjectWriter".
bool IsObjectOwnership(std::string_view mode);

// <OwnershipControls><Rule><ObjectOwnership>MODE</ObjectOwnership></Rule></OwnershipControls>
// with exactly one rule; returns MODE. kMalformedXml otherwise (not XML, other elements,
// no rule or two, an unknown mode).
Result<std::string> ParseOwnershipControls(std::string_view body);
std::string OwnershipControlsXml(std::string_view mode);

// <PublicAccessBlockConfiguration> with BlockPublicAcls, IgnorePublicAcls,
// BlockPublicPolicy and RestrictPublicBuckets, each optional (absent: false) and at most
// once, "true" or "false". kMalformedXml otherwise.
Result<metadata::PublicAccessBlock> ParsePublicAccessBlock(std::string_view body);
std::string PublicAccessBlockXml(const metadata::PublicAccessBlock& block);

}  // namespace strata::gateway
