// PutBucketLifecycleConfiguration's body (gateway/lifecycle_xml): S3's rule language and
// the checks S3 makes on it.
//
// Properties: a refusal carries one of the codes S3 answers (MalformedXML,
// InvalidArgument, InvalidRequest); an accepted configuration has 1..1000 rules with
// distinct IDs of at most 255 characters, and the document GetBucketLifecycleConfiguration
// renders from it is accepted again and renders to the same bytes (what a client reads
// back, it can put back).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "gateway/lifecycle_xml.h"
#include "tests/fuzz/fuzz_check.h"

using namespace strata;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  int ids = 0;
  auto new_id = [&ids] { return "generated-" + std::to_string(++ids); };
  auto rules = gateway::ParseLifecycleConfiguration(body, new_id);
  if (!rules.ok()) {
    auto code = rules.error().code;
    FUZZ_CHECK(code == ErrorCode::kMalformedXml || code == ErrorCode::kInvalidArgument ||
                   code == ErrorCode::kInvalidRequest,
               body);
    FUZZ_CHECK(!rules.error().message.empty(), body);
    return 0;
  }
  FUZZ_CHECK(!rules->empty() && rules->size() <= gateway::kMaxLifecycleRules, body);
  std::set<std::string> seen;
  for (const auto& rule : *rules) {
    FUZZ_CHECK(!rule.id.empty() && rule.id.size() <= 255, body);
    FUZZ_CHECK(seen.insert(rule.id).second, body);
  }
  std::string xml = gateway::LifecycleConfigurationXml(*rules);
  auto again = gateway::ParseLifecycleConfiguration(xml, new_id);
  FUZZ_CHECK(again.ok(), xml);
  FUZZ_CHECK(gateway::LifecycleConfigurationXml(*again) == xml, xml);
  return 0;
}
