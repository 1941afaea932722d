#include "gateway/lifecycle_xml.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace strata::gateway {
namespace {

using metadata::LifecycleFilter;
using metadata::LifecycleRule;
using Rules = std::vector<LifecycleRule>;

constexpr std::int64_t k2026 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr std::int64_t k2027 = 1'798'761'600'000;  // 2027-01-01T00:00:00Z

// Parses with ids "generated-1", "generated-2", ... for rules without one; `generated`
// gets how many were made.
Result<Rules> Parse(std::string_view body, int* generated = nullptr) {
  int made = 0;
  auto rules =
      ParseLifecycleConfiguration(body, [&made] { return "generated-" + std::to_string(++made); });
  if (generated != nullptr) {
    *generated = made;
  }
  return rules;
}

ErrorCode CodeOf(const Result<Rules>& r) { return r.ok() ? ErrorCode::kInternal : r.error().code; }

std::string Doc(const std::string& rules) {
  return "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" + rules +
         "</LifecycleConfiguration>";
}

// A rule with `actions`, named `id`, selecting by `filter`, enabled.
std::string RuleWith(const std::string& actions, const std::string& filter = "<Filter/>",
                     const std::string& id = "r") {
  return "<Rule><ID>" + id + "</ID>" + filter + "<Status>Enabled</Status>" + actions + "</Rule>";
}

std::string Tag(const std::string& key, const std::string& value) {
  return "<Tag><Key>" + key + "</Key><Value>" + value + "</Value></Tag>";
}

std::string Transition(const std::string& when, const std::string& storage_class) {
  return "<Transition>" + when + "<StorageClass>" + storage_class + "</StorageClass></Transition>";
}

std::string NoncurrentTransition(const std::string& days, const std::string& storage_class,
                                 const std::string& extra = "") {
  return "<NoncurrentVersionTransition><NoncurrentDays>" + days +
         "</NoncurrentDays><StorageClass>" + storage_class + "</StorageClass>" + extra +
         "</NoncurrentVersionTransition>";
}

const std::string kExpireAfterOneDay = "<Expiration><Days>1</Days></Expiration>";

void ExpectSameRules(const Rules& got, const Rules& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t r = 0; r < want.size(); ++r) {
    const LifecycleRule& g = got[r];
    const LifecycleRule& w = want[r];
    SCOPED_TRACE("rule " + w.id);
    EXPECT_EQ(g.id, w.id);
    EXPECT_EQ(g.enabled, w.enabled);
    EXPECT_EQ(g.filter.form, w.filter.form);
    EXPECT_EQ(g.filter.prefix, w.filter.prefix);
    EXPECT_EQ(g.filter.tags, w.filter.tags);
    EXPECT_EQ(g.filter.size_greater_than, w.filter.size_greater_than);
    EXPECT_EQ(g.filter.size_less_than, w.filter.size_less_than);
    ASSERT_EQ(g.transitions.size(), w.transitions.size());
    for (std::size_t i = 0; i < w.transitions.size(); ++i) {
      EXPECT_EQ(g.transitions[i].days, w.transitions[i].days) << i;
      EXPECT_EQ(g.transitions[i].date_ms, w.transitions[i].date_ms) << i;
      EXPECT_EQ(g.transitions[i].storage_class, w.transitions[i].storage_class) << i;
    }
    ASSERT_EQ(g.noncurrent_transitions.size(), w.noncurrent_transitions.size());
    for (std::size_t i = 0; i < w.noncurrent_transitions.size(); ++i) {
      EXPECT_EQ(g.noncurrent_transitions[i].noncurrent_days,
                w.noncurrent_transitions[i].noncurrent_days)
          << i;
      EXPECT_EQ(g.noncurrent_transitions[i].newer_noncurrent_versions,
                w.noncurrent_transitions[i].newer_noncurrent_versions)
          << i;
      EXPECT_EQ(g.noncurrent_transitions[i].storage_class,
                w.noncurrent_transitions[i].storage_class)
          << i;
    }
    EXPECT_EQ(g.expiration_days, w.expiration_days);
    EXPECT_EQ(g.expiration_date_ms, w.expiration_date_ms);
    EXPECT_EQ(g.expired_object_delete_marker, w.expired_object_delete_marker);
    EXPECT_EQ(g.noncurrent_expiration_days, w.noncurrent_expiration_days);
    EXPECT_EQ(g.noncurrent_newer_versions, w.noncurrent_newer_versions);
    EXPECT_EQ(g.abort_incomplete_days, w.abort_incomplete_days);
  }
}

// Every part of the language: each filter form, both kinds of transition, every
// expiration, an abort, a disabled rule and rules without an ID.
constexpr std::string_view kFullDocument = R"(<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Rule>
    <ID>archive-logs</ID>
    <Filter>
      <And>
        <Prefix>logs/</Prefix>
        <Tag><Key>tier</Key><Value>cold</Value></Tag>
        <Tag><Key>team</Key><Value>ml &amp; data</Value></Tag>
        <ObjectSizeGreaterThan>1024</ObjectSizeGreaterThan>
        <ObjectSizeLessThan>1048576</ObjectSizeLessThan>
      </And>
    </Filter>
    <Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>
    <Transition><Days>90</Days><StorageClass>GLACIER</StorageClass></Transition>
    <NoncurrentVersionTransition>
      <NoncurrentDays>30</NoncurrentDays>
      <StorageClass>STANDARD_IA</StorageClass>
      <NewerNoncurrentVersions>3</NewerNoncurrentVersions>
    </NoncurrentVersionTransition>
    <NoncurrentVersionTransition>
      <NoncurrentDays>60</NoncurrentDays>
      <StorageClass>DEEP_ARCHIVE</StorageClass>
    </NoncurrentVersionTransition>
    <Expiration><Days>365</Days></Expiration>
    <NoncurrentVersionExpiration>
      <NoncurrentDays>400</NoncurrentDays>
      <NewerNoncurrentVersions>5</NewerNoncurrentVersions>
    </NoncurrentVersionExpiration>
  </Rule>
  <Rule>
    <Prefix>tmp/</Prefix>
    <Status>Disabled</Status>
    <Transition><Date>2026-01-01T00:00:00Z</Date><StorageClass>GLACIER</StorageClass></Transition>
    <Expiration><Date>2027-01-01T00:00:00.000Z</Date></Expiration>
    <AbortIncompleteMultipartUpload>
      <DaysAfterInitiation>7</DaysAfterInitiation>
    </AbortIncompleteMultipartUpload>
  </Rule>
  <Rule>
    <ID>tagged</ID>
    <Filter><Tag><Key>expire</Key><Value>yes</Value></Tag></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration>
  </Rule>
  <Rule>
    <ID>big</ID>
    <Filter><ObjectSizeGreaterThan>1000000</ObjectSizeGreaterThan></Filter>
    <Status>Enabled</Status>
    <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
  <Rule>
    <ID>small</ID>
    <Filter><ObjectSizeLessThan>100</ObjectSizeLessThan></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>2</Days></Expiration>
  </Rule>
  <Rule>
    <ID></ID>
    <Filter><Prefix>docs/</Prefix></Filter>
    <Status>Enabled</Status>
    <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>
    <AbortIncompleteMultipartUpload>
      <DaysAfterInitiation>1</DaysAfterInitiation>
    </AbortIncompleteMultipartUpload>
  </Rule>
  <Rule>
    <ID>everything</ID>
    <Filter/>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>GLACIER_IR</StorageClass></Transition>
    <Expiration><Days>10</Days></Expiration>
  </Rule>
</LifecycleConfiguration>
)";

TEST(LifecycleXml, ParsesTheFullLanguage) {
  int generated = 0;
  auto parsed = Parse(kFullDocument, &generated);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Rules& rules = *parsed;
  ASSERT_EQ(rules.size(), 7u);
  EXPECT_EQ(generated, 2);

  const LifecycleRule& archive = rules[0];
  EXPECT_EQ(archive.id, "archive-logs");
  EXPECT_TRUE(archive.enabled);
  EXPECT_EQ(archive.filter.form, LifecycleFilter::Form::kAnd);
  EXPECT_EQ(archive.filter.prefix, std::optional<std::string>("logs/"));
  const metadata::Tags tags = {{"tier", "cold"}, {"team", "ml & data"}};
  EXPECT_EQ(archive.filter.tags, tags);
  EXPECT_EQ(archive.filter.size_greater_than, std::optional<std::uint64_t>(1024));
  EXPECT_EQ(archive.filter.size_less_than, std::optional<std::uint64_t>(1048576));
  ASSERT_EQ(archive.transitions.size(), 2u);
  EXPECT_EQ(archive.transitions[0].days, std::optional<std::int64_t>(30));
  EXPECT_FALSE(archive.transitions[0].date_ms.has_value());
  EXPECT_EQ(archive.transitions[0].storage_class, "STANDARD_IA");
  EXPECT_EQ(archive.transitions[1].days, std::optional<std::int64_t>(90));
  EXPECT_EQ(archive.transitions[1].storage_class, "GLACIER");
  ASSERT_EQ(archive.noncurrent_transitions.size(), 2u);
  EXPECT_EQ(archive.noncurrent_transitions[0].noncurrent_days, 30);
  EXPECT_EQ(archive.noncurrent_transitions[0].newer_noncurrent_versions,
            std::optional<std::int64_t>(3));
  EXPECT_EQ(archive.noncurrent_transitions[0].storage_class, "STANDARD_IA");
  EXPECT_EQ(archive.noncurrent_transitions[1].noncurrent_days, 60);
  EXPECT_FALSE(archive.noncurrent_transitions[1].newer_noncurrent_versions.has_value());
  EXPECT_EQ(archive.noncurrent_transitions[1].storage_class, "DEEP_ARCHIVE");
  EXPECT_EQ(archive.expiration_days, std::optional<std::int64_t>(365));
  EXPECT_FALSE(archive.expiration_date_ms.has_value());
  EXPECT_FALSE(archive.expired_object_delete_marker);
  EXPECT_EQ(archive.noncurrent_expiration_days, std::optional<std::int64_t>(400));
  EXPECT_EQ(archive.noncurrent_newer_versions, std::optional<std::int64_t>(5));
  EXPECT_FALSE(archive.abort_incomplete_days.has_value());

  const LifecycleRule& tmp = rules[1];
  EXPECT_EQ(tmp.id, "generated-1");
  EXPECT_FALSE(tmp.enabled);
  EXPECT_EQ(tmp.filter.form, LifecycleFilter::Form::kRulePrefix);
  EXPECT_EQ(tmp.filter.prefix, std::optional<std::string>("tmp/"));
  ASSERT_EQ(tmp.transitions.size(), 1u);
  EXPECT_FALSE(tmp.transitions[0].days.has_value());
  EXPECT_EQ(tmp.transitions[0].date_ms, std::optional<std::int64_t>(k2026));
  EXPECT_EQ(tmp.expiration_date_ms, std::optional<std::int64_t>(k2027));
  EXPECT_FALSE(tmp.expiration_days.has_value());
  EXPECT_EQ(tmp.abort_incomplete_days, std::optional<std::int64_t>(7));

  const LifecycleRule& tagged = rules[2];
  EXPECT_EQ(tagged.filter.form, LifecycleFilter::Form::kFilter);
  EXPECT_FALSE(tagged.filter.prefix.has_value());
  const metadata::Tags expire_tag = {{"expire", "yes"}};
  EXPECT_EQ(tagged.filter.tags, expire_tag);
  EXPECT_EQ(tagged.expiration_days, std::optional<std::int64_t>(1));

  EXPECT_EQ(rules[3].filter.size_greater_than, std::optional<std::uint64_t>(1000000));
  EXPECT_FALSE(rules[3].filter.size_less_than.has_value());
  EXPECT_EQ(rules[3].noncurrent_expiration_days, std::optional<std::int64_t>(1));
  EXPECT_EQ(rules[4].filter.size_less_than, std::optional<std::uint64_t>(100));
  EXPECT_FALSE(rules[4].filter.size_greater_than.has_value());

  const LifecycleRule& docs = rules[5];
  EXPECT_EQ(docs.id, "generated-2");  // an empty ID is no ID
  EXPECT_EQ(docs.filter.form, LifecycleFilter::Form::kFilter);
  EXPECT_EQ(docs.filter.prefix, std::optional<std::string>("docs/"));
  EXPECT_TRUE(docs.expired_object_delete_marker);
  EXPECT_FALSE(docs.expiration_days.has_value());
  EXPECT_EQ(docs.abort_incomplete_days, std::optional<std::int64_t>(1));

  const LifecycleRule& everything = rules[6];
  EXPECT_EQ(everything.filter.form, LifecycleFilter::Form::kFilter);
  EXPECT_FALSE(everything.filter.prefix.has_value());
  EXPECT_TRUE(everything.filter.tags.empty());
  ASSERT_EQ(everything.transitions.size(), 1u);
  EXPECT_EQ(everything.transitions[0].days, std::optional<std::int64_t>(0));
  EXPECT_EQ(everything.transitions[0].storage_class, "GLACIER_IR");
}

TEST(LifecycleXml, RoundTripsThroughTheResponseDocument) {
  auto parsed = Parse(kFullDocument);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const std::string xml = LifecycleConfigurationXml(*parsed);
  int generated = 0;
  auto again = Parse(xml, &generated);
  ASSERT_TRUE(again.ok()) << again.error().message << "\n" << xml;
  EXPECT_EQ(generated, 0) << "every rule has its ID by now";
  ExpectSameRules(*again, *parsed);
  // And it is a fixed point.
  EXPECT_EQ(LifecycleConfigurationXml(*again), xml);

  // Each filter is answered in the form it was given.
  EXPECT_NE(xml.find("<ID>generated-1</ID><Prefix>tmp/</Prefix><Status>"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<Filter><And><Prefix>logs/</Prefix>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<Filter><Prefix>docs/</Prefix></Filter>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<Date>2026-01-01T00:00:00.000Z</Date>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("ml &amp; data"), std::string::npos) << xml;
}

TEST(LifecycleXml, AcceptsTheLimits) {
  // 255 characters of ID, 100 newer versions, 30 days before an IA class, Days 0.
  const std::string body = RuleWith(
      NoncurrentTransition("30", "STANDARD_IA",
                           "<NewerNoncurrentVersions>100</NewerNoncurrentVersions>") +
          Transition("<Days>30</Days>", "ONEZONE_IA") + Transition("<Days>31</Days>", "GLACIER") +
          "<NoncurrentVersionExpiration><NoncurrentDays>31</NoncurrentDays>"
          "<NewerNoncurrentVersions>100</NewerNoncurrentVersions>"
          "</NoncurrentVersionExpiration>",
      "<Filter/>", std::string(255, 'i'));
  auto parsed = Parse(Doc(body));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].id.size(), 255u);
  EXPECT_EQ((*parsed)[0].noncurrent_newer_versions, std::optional<std::int64_t>(100));

  // Strata's tier names are classes too; the old API's empty Prefix selects everything.
  parsed = Parse(Doc("<Rule><Prefix></Prefix><Status>Enabled</Status>" +
                     Transition("<Days>1</Days>", "COLD") + "</Rule>"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)[0].filter.prefix, std::optional<std::string>(""));
  EXPECT_EQ((*parsed)[0].transitions.at(0).storage_class, "COLD");
}

TEST(LifecycleXml, AtMostAThousandRules) {
  std::string rules;
  for (int i = 0; i < 1000; ++i) {
    rules += RuleWith(kExpireAfterOneDay, "<Filter/>", "r" + std::to_string(i));
  }
  auto parsed = Parse(Doc(rules));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->size(), 1000u);
  rules += RuleWith(kExpireAfterOneDay, "<Filter/>", "r1000");
  EXPECT_EQ(CodeOf(Parse(Doc(rules))), ErrorCode::kMalformedXml);
}

struct BadCase {
  std::string name;
  std::string body;
  ErrorCode code;
};

void ExpectAll(const std::vector<BadCase>& cases) {
  for (const auto& c : cases) {
    auto r = Parse(c.body);
    EXPECT_EQ(CodeOf(r), c.code) << c.name << ": " << (r.ok() ? "parsed" : r.error().message)
                                 << "\n"
                                 << c.body;
  }
}

// Documents off S3's schema: MalformedXML.
TEST(LifecycleXml, RejectsDocumentsOffTheSchema) {
  const std::string e = kExpireAfterOneDay;
  const ErrorCode malformed = ErrorCode::kMalformedXml;
  ExpectAll({
      {"empty body", "", malformed},
      {"not XML", "this is not xml", malformed},
      {"unclosed", "<LifecycleConfiguration><Rule>", malformed},
      {"wrong root", "<Lifecycle>" + RuleWith(e) + "</Lifecycle>", malformed},
      {"no Rule", Doc(""), malformed},
      {"unknown element beside the rules", Doc(RuleWith(e) + "<Foo/>"), malformed},
      {"unknown element in a rule", Doc(RuleWith(e + "<Foo>1</Foo>")), malformed},
      {"unknown element in Expiration",
       Doc(RuleWith("<Expiration><Days>1</Days><Months>1</Months></Expiration>")), malformed},
      {"text in a rule", Doc(RuleWith(e + "stray")), malformed},
      {"repeated Expiration", Doc(RuleWith(e + e)), malformed},
      {"repeated ID",
       Doc("<Rule><ID>a</ID><ID>b</ID><Filter/><Status>Enabled</Status>" + e + "</Rule>"),
       malformed},
      {"missing Status", Doc("<Rule><ID>r</ID><Filter/>" + e + "</Rule>"), malformed},
      {"bad Status", Doc("<Rule><ID>r</ID><Filter/><Status>enabled</Status>" + e + "</Rule>"),
       malformed},
      {"both Filter and Prefix",
       Doc("<Rule><ID>r</ID><Prefix>a</Prefix><Filter/><Status>Enabled</Status>" + e + "</Rule>"),
       malformed},
      {"neither Filter nor Prefix", Doc("<Rule><ID>r</ID><Status>Enabled</Status>" + e + "</Rule>"),
       malformed},
      {"two predicates without And",
       Doc(RuleWith(e, "<Filter><Prefix>a</Prefix>" + Tag("k", "v") + "</Filter>")), malformed},
      {"two tags without And",
       Doc(RuleWith(e, "<Filter>" + Tag("a", "1") + Tag("b", "2") + "</Filter>")), malformed},
      {"And beside a predicate",
       Doc(RuleWith(e, "<Filter><Prefix>a</Prefix><And>" + Tag("k", "v") + "</And></Filter>")),
       malformed},
      {"empty And", Doc(RuleWith(e, "<Filter><And></And></Filter>")), malformed},
      {"Tag without Value", Doc(RuleWith(e, "<Filter><Tag><Key>k</Key></Tag></Filter>")),
       malformed},
      {"Tag without Key", Doc(RuleWith(e, "<Filter><Tag><Value>v</Value></Tag></Filter>")),
       malformed},
      {"non-numeric Days", Doc(RuleWith("<Expiration><Days>ten</Days></Expiration>")), malformed},
      {"fractional Days", Doc(RuleWith("<Expiration><Days>1.5</Days></Expiration>")), malformed},
      {"empty Days", Doc(RuleWith("<Expiration><Days></Days></Expiration>")), malformed},
      {"Days beyond int64",
       Doc(RuleWith("<Expiration><Days>99999999999999999999</Days></Expiration>")), malformed},
      {"non-numeric size",
       Doc(RuleWith(e, "<Filter><ObjectSizeGreaterThan>big</ObjectSizeGreaterThan></Filter>")),
       malformed},
      {"Expiration with Days and Date",
       Doc(RuleWith("<Expiration><Days>1</Days><Date>2026-01-01T00:00:00Z</Date></Expiration>")),
       malformed},
      {"Expiration with Days and ExpiredObjectDeleteMarker",
       Doc(RuleWith("<Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true"
                    "</ExpiredObjectDeleteMarker></Expiration>")),
       malformed},
      {"empty Expiration", Doc(RuleWith("<Expiration></Expiration>")), malformed},
      {"ExpiredObjectDeleteMarker not a boolean",
       Doc(RuleWith("<Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker>"
                    "</Expiration>")),
       malformed},
      {"Transition with Days and Date",
       Doc(RuleWith(Transition("<Days>1</Days><Date>2026-01-01T00:00:00Z</Date>", "GLACIER"))),
       malformed},
      {"Transition with neither Days nor Date", Doc(RuleWith(Transition("", "GLACIER"))),
       malformed},
      {"Transition without StorageClass", Doc(RuleWith("<Transition><Days>1</Days></Transition>")),
       malformed},
      {"unknown StorageClass", Doc(RuleWith(Transition("<Days>1</Days>", "FROZEN"))), malformed},
      {"NoncurrentVersionTransition without NoncurrentDays",
       Doc(RuleWith("<NoncurrentVersionTransition><StorageClass>GLACIER</StorageClass>"
                    "</NoncurrentVersionTransition>")),
       malformed},
      {"NoncurrentVersionExpiration without NoncurrentDays",
       Doc(RuleWith("<NoncurrentVersionExpiration></NoncurrentVersionExpiration>")), malformed},
      {"AbortIncompleteMultipartUpload without DaysAfterInitiation",
       Doc(RuleWith("<AbortIncompleteMultipartUpload></AbortIncompleteMultipartUpload>")),
       malformed},
  });
}

// Values S3 refuses: InvalidArgument.
TEST(LifecycleXml, RejectsValuesS3Refuses) {
  const std::string e = kExpireAfterOneDay;
  const ErrorCode invalid = ErrorCode::kInvalidArgument;
  ExpectAll({
      {"Expiration Days 0", Doc(RuleWith("<Expiration><Days>0</Days></Expiration>")), invalid},
      {"negative Expiration Days", Doc(RuleWith("<Expiration><Days>-1</Days></Expiration>")),
       invalid},
      {"negative Transition Days", Doc(RuleWith(Transition("<Days>-1</Days>", "GLACIER"))),
       invalid},
      {"NoncurrentVersionExpiration NoncurrentDays 0",
       Doc(RuleWith("<NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays>"
                    "</NoncurrentVersionExpiration>")),
       invalid},
      {"DaysAfterInitiation 0",
       Doc(RuleWith("<AbortIncompleteMultipartUpload><DaysAfterInitiation>0"
                    "</DaysAfterInitiation></AbortIncompleteMultipartUpload>")),
       invalid},
      {"Expiration Date not at midnight",
       Doc(RuleWith("<Expiration><Date>2026-01-01T12:00:00Z</Date></Expiration>")), invalid},
      {"Transition Date not at midnight",
       Doc(RuleWith(Transition("<Date>2026-01-01T00:00:01Z</Date>", "GLACIER"))), invalid},
      {"STANDARD_IA after 10 days", Doc(RuleWith(Transition("<Days>10</Days>", "STANDARD_IA"))),
       invalid},
      {"ONEZONE_IA after 29 days", Doc(RuleWith(Transition("<Days>29</Days>", "ONEZONE_IA"))),
       invalid},
      {"noncurrent STANDARD_IA after 10 days",
       Doc(RuleWith(NoncurrentTransition("10", "STANDARD_IA"))), invalid},
      {"STANDARD as a target", Doc(RuleWith(Transition("<Days>1</Days>", "STANDARD"))), invalid},
      {"HOT as a target", Doc(RuleWith(Transition("<Days>1</Days>", "HOT"))), invalid},
      {"noncurrent STANDARD as a target", Doc(RuleWith(NoncurrentTransition("1", "STANDARD"))),
       invalid},
      {"duplicate rule IDs", Doc(RuleWith(e) + RuleWith(e)), invalid},
      {"ID of 256 characters", Doc(RuleWith(e, "<Filter/>", std::string(256, 'i'))), invalid},
      {"duplicate Tag keys in And",
       Doc(RuleWith(e, "<Filter><And>" + Tag("k", "1") + Tag("k", "2") + "</And></Filter>")),
       invalid},
      {"ObjectSizeGreaterThan equal to ObjectSizeLessThan",
       Doc(RuleWith(e,
                    "<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>"
                    "<ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter>")),
       invalid},
      {"ObjectSizeGreaterThan above ObjectSizeLessThan",
       Doc(RuleWith(e,
                    "<Filter><And><ObjectSizeGreaterThan>20</ObjectSizeGreaterThan>"
                    "<ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter>")),
       invalid},
      {"negative ObjectSizeGreaterThan",
       Doc(RuleWith(e, "<Filter><ObjectSizeGreaterThan>-1</ObjectSizeGreaterThan></Filter>")),
       invalid},
      {"mixed Days and Date transitions",
       Doc(RuleWith(Transition("<Days>30</Days>", "GLACIER") +
                    Transition("<Date>2026-01-01T00:00:00Z</Date>", "DEEP_ARCHIVE"))),
       invalid},
      {"Expiration days equal to a Transition's",
       Doc(RuleWith(Transition("<Days>30</Days>", "GLACIER") +
                    "<Expiration><Days>30</Days></Expiration>")),
       invalid},
      {"Expiration days before a Transition's",
       Doc(RuleWith(Transition("<Days>30</Days>", "GLACIER") +
                    "<Expiration><Days>10</Days></Expiration>")),
       invalid},
      {"same StorageClass twice",
       Doc(RuleWith(Transition("<Days>30</Days>", "GLACIER") +
                    Transition("<Days>60</Days>", "GLACIER"))),
       invalid},
      {"same noncurrent StorageClass twice",
       Doc(RuleWith(NoncurrentTransition("30", "GLACIER") + NoncurrentTransition("60", "GLACIER"))),
       invalid},
      {"NoncurrentVersionExpiration not after a NoncurrentVersionTransition",
       Doc(RuleWith(NoncurrentTransition("30", "GLACIER") +
                    "<NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays>"
                    "</NoncurrentVersionExpiration>")),
       invalid},
      {"NewerNoncurrentVersions 0",
       Doc(RuleWith("<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
                    "<NewerNoncurrentVersions>0</NewerNoncurrentVersions>"
                    "</NoncurrentVersionExpiration>")),
       invalid},
      {"NewerNoncurrentVersions 101",
       Doc(RuleWith("<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
                    "<NewerNoncurrentVersions>101</NewerNoncurrentVersions>"
                    "</NoncurrentVersionExpiration>")),
       invalid},
      {"transition NewerNoncurrentVersions 0",
       Doc(RuleWith(NoncurrentTransition("1", "GLACIER",
                                         "<NewerNoncurrentVersions>0</NewerNoncurrentVersions>"))),
       invalid},
      {"transition NewerNoncurrentVersions 101",
       Doc(RuleWith(NoncurrentTransition(
           "1", "GLACIER", "<NewerNoncurrentVersions>101</NewerNoncurrentVersions>"))),
       invalid},
  });
}

// Rules that make no sense as a whole: InvalidRequest.
TEST(LifecycleXml, RejectsRulesWithoutSense) {
  const ErrorCode invalid_request = ErrorCode::kInvalidRequest;
  const std::string abort =
      "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
      "</AbortIncompleteMultipartUpload>";
  const std::string marker =
      "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>";
  ExpectAll({
      {"no action", Doc(RuleWith("")), invalid_request},
      {"only a false ExpiredObjectDeleteMarker",
       Doc(RuleWith("<Expiration><ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker>"
                    "</Expiration>")),
       invalid_request},
      {"abort with a Tag filter", Doc(RuleWith(abort, "<Filter>" + Tag("k", "v") + "</Filter>")),
       invalid_request},
      {"abort with a size filter",
       Doc(RuleWith(abort, "<Filter><ObjectSizeLessThan>10</ObjectSizeLessThan></Filter>")),
       invalid_request},
      {"ExpiredObjectDeleteMarker with tags",
       Doc(RuleWith(marker,
                    "<Filter><And><Prefix>p/</Prefix>" + Tag("k", "v") + "</And></Filter>")),
       invalid_request},
      {"ExpiredObjectDeleteMarker with a size filter",
       Doc(RuleWith(marker, "<Filter><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></Filter>")),
       invalid_request},
  });
}

// Number() reads a leading '-' itself and then lets std::from_chars parse the rest, which
// accepts a '-' of its own: "--5" reads as 5 (and "--9223372036854775808" negates
// INT64_MIN, which overflows). S3 answers MalformedXML for such a number.
TEST(LifecycleXml, DoubleMinusIsNotANumber) {
  EXPECT_EQ(CodeOf(Parse(Doc(RuleWith("<Expiration><Days>--5</Days></Expiration>")))),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOf(Parse(Doc(RuleWith(Transition("<Days>--30</Days>", "GLACIER"))))),
            ErrorCode::kMalformedXml);
}

// The other body parsers (gateway/xml.cc's SingleRoot) refuse a second top-level element;
// pugixml accepts one, and ParseLifecycleConfiguration reads only the first.
TEST(LifecycleXml, SecondRootElementIsMalformed) {
  EXPECT_EQ(CodeOf(Parse(Doc(RuleWith(kExpireAfterOneDay)) + "<Other/>")),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOf(Parse(Doc(RuleWith(kExpireAfterOneDay)) + Doc(RuleWith(kExpireAfterOneDay)))),
            ErrorCode::kMalformedXml);
}

// What a damaged document gives: S3's codes for a refusal, and for a success rules that
// survive the response document (the round trip above, for whatever the damage left).
void ExpectRefusedOrRoundTrips(const std::string& body, int& accepted, int& refused) {
  auto parsed = Parse(body);
  if (!parsed.ok()) {
    ++refused;
    const ErrorCode code = parsed.error().code;
    EXPECT_TRUE(code == ErrorCode::kMalformedXml || code == ErrorCode::kInvalidArgument ||
                code == ErrorCode::kInvalidRequest)
        << static_cast<int>(code) << " (" << parsed.error().message << ") for " << body;
    return;
  }
  ++accepted;
  EXPECT_FALSE(parsed->empty()) << body;  // a success has rules, never an empty list
  const std::string xml = LifecycleConfigurationXml(*parsed);
  int generated = 0;
  auto again = Parse(xml, &generated);
  ASSERT_TRUE(again.ok()) << again.error().message << "\nfrom " << body << "\nas " << xml;
  EXPECT_EQ(generated, 0) << xml;
  SCOPED_TRACE(body);
  ExpectSameRules(*again, *parsed);
  EXPECT_EQ(LifecycleConfigurationXml(*again), xml);
}

TEST(LifecycleXml, TruncatedAndMangledDocumentsNeverCrash) {
  const std::string full(kFullDocument);
  int accepted = 0;
  int refused = 0;
  for (std::size_t n = 0; n <= full.size(); ++n) {
    ExpectRefusedOrRoundTrips(full.substr(0, n), accepted, refused);
  }
  // Only the whole document (and its cuts in the trailing whitespace) parses.
  EXPECT_GE(accepted, 1);
  EXPECT_GT(refused, static_cast<int>(full.size()) - 5);

  accepted = refused = 0;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string buf = full;
    // One to four bytes replaced; in every other document by printable ASCII only: an
    // arbitrary byte is seldom UTF-8 and a document with several edits seldom valid, which
    // would leave the success path (the round trip) unexercised.
    const bool printable = i % 2 == 0;
    for (int j = 0; j <= i % 4; ++j) {
      buf[rng() % buf.size()] =
          static_cast<char>(printable ? ' ' + static_cast<int>(rng() % 95) : rng());
    }
    ExpectRefusedOrRoundTrips(buf, accepted, refused);
  }
  // Both paths run: a share of the documents stays valid (the bytes land in an ID, a
  // prefix or a tag: 44 of the 2000 with this seed) and most are refused.
  EXPECT_GT(accepted, 20);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace strata::gateway
