// The one table that maps strata's Error codes to HTTP statuses and S3 <Code> strings.
#pragma once

#include <string_view>

#include "common/error.h"

namespace strata::gateway {

struct S3ErrorInfo {
  unsigned status;        // HTTP status
  std::string_view code;  // S3's <Code>
};

S3ErrorInfo LookupS3Error(ErrorCode code);

}  // namespace strata::gateway
