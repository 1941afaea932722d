// The documents and headers of S3's object lock (issue 20): ObjectLockConfiguration,
// Retention, LegalHold, and the x-amz-object-lock-* headers of a write. Pure logic;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::gateway {

// PutObjectLockConfiguration's body: ObjectLockEnabled (Enabled) and an optional
// Rule/DefaultRetention (Mode, and Days or Years, positive). kMalformedXml for another
// document; kInvalidArgument for a period that is not positive or too long (100 years).
Result<metadata::ObjectLockConfig> ParseObjectLockConfiguration(std::string_view body);
std::string ObjectLockConfigurationXml(const metadata::ObjectLockConfig& config);

// A version's retention: mode "" (none) or GOVERNANCE / COMPLIANCE until `until_ms`.
struct Retention {
  std::string mode;
  std::int64_t until_ms = 0;
};
// PutObjectRetention's body: Mode and RetainUntilDate together, or neither (the
// retention removed). kMalformedXml otherwise; kInvalidArgument for an unknown mode or
// a date that does not parse.
Result<Retention> ParseRetention(std::string_view body);
std::string RetentionXml(const Retention& retention);

// PutObjectLegalHold's body: Status ON or OFF. kMalformedXml otherwise.
Result<bool> ParseLegalHold(std::string_view body);
std::string LegalHoldXml(bool on);

// The lock a write asks for in x-amz-object-lock-mode, -retain-until-date and
// -legal-hold (empty views when absent). kInvalidArgument when only one of mode and date
// is given, for an unknown mode or hold status, or a date that does not parse or is not
// in the future (after `now_ms`).
struct RequestedLock {
  std::optional<Retention> retention;
  std::optional<bool> legal_hold;
  bool any() const { return retention.has_value() || legal_hold.has_value(); }
};
Result<RequestedLock> ParseLockHeaders(std::string_view mode, std::string_view until,
                                       std::string_view legal_hold, std::int64_t now_ms);

// The retention a bucket's default gives a version written at `now_ms` (none when the
// bucket has no default).
Retention DefaultRetention(const metadata::ObjectLockConfig& config, std::int64_t now_ms);

}  // namespace strata::gateway
