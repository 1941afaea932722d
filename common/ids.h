// Strong string ids for the names that cross module boundaries, so a bucket name can
// never be passed where an object key is expected.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <utility>

namespace strata {

template <typename Tag>
class StrongId {
 public:
  StrongId() = default;
  explicit StrongId(std::string value) : value_(std::move(value)) {}
  explicit StrongId(std::string_view value) : value_(value) {}
  explicit StrongId(const char* value) : value_(value) {}

  const std::string& str() const { return value_; }
  std::string_view view() const { return value_; }
  bool empty() const { return value_.empty(); }

  auto operator<=>(const StrongId&) const = default;
  bool operator==(const StrongId&) const = default;

 private:
  std::string value_;
};

using BucketName = StrongId<struct BucketNameTag>;
using ObjectKey = StrongId<struct ObjectKeyTag>;
using VersionId = StrongId<struct VersionIdTag>;
using UploadId = StrongId<struct UploadIdTag>;
using AccessKeyId = StrongId<struct AccessKeyIdTag>;

}  // namespace strata
