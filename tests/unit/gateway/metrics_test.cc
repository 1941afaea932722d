#include "gateway/metrics.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace strata::gateway {
namespace {

using boost::beast::http::verb;
using std::chrono::microseconds;
using std::chrono::milliseconds;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const auto& l : Lines(text)) {
    if (l == line) {
      return true;
    }
  }
  return false;
}

TEST(Exposition, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\"b"), "a\\\"b");
  EXPECT_EQ(EscapeLabelValue("a\\b"), "a\\\\b");
  EXPECT_EQ(EscapeLabelValue("a\nb"), "a\\nb");
  EXPECT_EQ(EscapeLabelValue("\\\"\n"), "\\\\\\\"\\n");
  EXPECT_EQ(EscapeLabelValue("ünï"), "ünï");  // UTF-8 passes through

  ExpositionWriter w;
  w.Sample("m", {{"a", "x\"y"}, {"b", "p\\q\nr"}}, std::uint64_t{7});
  EXPECT_EQ(w.text(), "m{a=\"x\\\"y\",b=\"p\\\\q\\nr\"} 7\n");
}

TEST(Exposition, HelpAndTypeLines) {
  ExpositionWriter w;
  w.Family("strata_x_total", "counter", "Things.\nBack\\slash");
  w.Sample("strata_x_total", {}, std::uint64_t{3});
  EXPECT_EQ(w.text(),
            "# HELP strata_x_total Things.\\nBack\\\\slash\n"
            "# TYPE strata_x_total counter\n"
            "strata_x_total 3\n");
}

TEST(Exposition, SampleValues) {
  EXPECT_EQ(FormatSampleValue(0.0), "0");
  EXPECT_EQ(FormatSampleValue(0.0005), "0.0005");
  EXPECT_EQ(FormatSampleValue(2.5), "2.5");
  EXPECT_EQ(FormatSampleValue(10), "10");
  EXPECT_EQ(FormatSampleValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatSampleValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
  EXPECT_EQ(std::stod(FormatSampleValue(0.1 + 0.2)), 0.1 + 0.2);  // round-trips
}

TEST(Exposition, HistogramIsCumulativeWithSumAndCount) {
  ExpositionWriter w;
  const double bounds[] = {0.5, 1, 2.5};
  const std::uint64_t counts[] = {2, 0, 3, 1};  // the last: above 2.5
  w.Histogram("h_seconds", {{"op", "Get"}}, bounds, counts, 7.25);
  EXPECT_EQ(w.text(),
            "h_seconds_bucket{op=\"Get\",le=\"0.5\"} 2\n"
            "h_seconds_bucket{op=\"Get\",le=\"1\"} 2\n"
            "h_seconds_bucket{op=\"Get\",le=\"2.5\"} 5\n"
            "h_seconds_bucket{op=\"Get\",le=\"+Inf\"} 6\n"
            "h_seconds_sum{op=\"Get\"} 7.25\n"
            "h_seconds_count{op=\"Get\"} 6\n");
}

TEST(GatewayMetrics, SumsShardsByOperationAndStatus) {
  GatewayMetrics metrics;
  auto& a = metrics.AddShard();
  auto& b = metrics.AddShard();
  a.RecordRequest(S3Operation::kGetObject, 200, microseconds(300), 0, 100);
  a.RecordRequest(S3Operation::kGetObject, 200, milliseconds(3), 0, 50);
  b.RecordRequest(S3Operation::kGetObject, 200, milliseconds(20), 0, 25);
  b.RecordRequest(S3Operation::kGetObject, 404, std::chrono::seconds(11), 0, 0);
  b.RecordRequest(S3Operation::kPutObject, 200, milliseconds(1), 4096, 0);
  a.AddBytesReceived(10);
  auto text = metrics.Render(ScrapeSample{});

  EXPECT_TRUE(HasLine(text, "# TYPE strata_requests_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"GetObject\",code=\"200\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"GetObject\",code=\"404\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"PutObject\",code=\"200\"} 1")) << text;
  // Operations never seen are left out.
  EXPECT_EQ(text.find("DeleteObject"), std::string::npos) << text;

  EXPECT_TRUE(HasLine(text, "# TYPE strata_request_duration_seconds histogram")) << text;
  const std::string get = "strata_request_duration_seconds_bucket{op=\"GetObject\",le=";
  EXPECT_TRUE(HasLine(text, get + "\"0.0005\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, get + "\"0.0025\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, get + "\"0.005\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, get + "\"0.025\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, get + "\"10\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, get + "\"+Inf\"} 4")) << text;
  EXPECT_TRUE(HasLine(text, "strata_request_duration_seconds_count{op=\"GetObject\"} 4")) << text;
  EXPECT_TRUE(HasLine(text, "strata_request_duration_seconds_sum{op=\"GetObject\"} 11.0233"))
      << text;
  // A boundary value falls in its own bucket (le is "less or equal").
  EXPECT_TRUE(
      HasLine(text, "strata_request_duration_seconds_bucket{op=\"PutObject\",le=\"0.001\"} 1"))
      << text;

  EXPECT_TRUE(HasLine(text, "strata_bytes_received_total 4106")) << text;
  EXPECT_TRUE(HasLine(text, "strata_bytes_sent_total 175")) << text;
}

TEST(GatewayMetrics, ConnectionsAndSample) {
  GatewayMetrics metrics;
  auto& a = metrics.AddShard();
  auto& b = metrics.AddShard();
  a.ConnectionOpened();
  a.ConnectionOpened();
  b.ConnectionOpened();
  a.ConnectionClosed();
  a.ConnectionRefused();
  b.ConnectionRefused();
  b.IdleConnectionEvicted();
  ScrapeSample sample;
  sample.uptime_seconds = 1.5;
  sample.checksum_mismatches = 2;
  sample.send_block_bytes = 524288;
  sample.resident_bytes = 1 << 20;
  sample.open_fds = 12;
  sample.index_cache = metadata::IndexCacheStats{.capacity = 64 << 20, .used = 4096};
  sample.index_reads = metadata::InlineReadCounts{.memory = 9, .pool = 2};
  auto text = metrics.Render(sample);
  EXPECT_TRUE(HasLine(text, "# TYPE strata_connections_open gauge")) << text;
  EXPECT_TRUE(HasLine(text, "strata_connections_open 2")) << text;
  EXPECT_TRUE(HasLine(text, "strata_connections_total 3")) << text;
  EXPECT_TRUE(HasLine(text, "strata_connections_refused_total 2")) << text;
  EXPECT_TRUE(HasLine(text, "strata_connections_evicted_total 1")) << text;
  EXPECT_TRUE(HasLine(text, "strata_checksum_mismatches_total 2")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE strata_get_send_block_bytes gauge")) << text;
  EXPECT_TRUE(HasLine(text, "strata_get_send_block_bytes 524288")) << text;
  EXPECT_TRUE(HasLine(text, "strata_uptime_seconds 1.5")) << text;
  EXPECT_TRUE(HasLine(text, "process_resident_memory_bytes 1048576")) << text;
  EXPECT_TRUE(HasLine(text, "process_open_fds 12")) << text;
  EXPECT_TRUE(HasLine(text, "strata_index_cache_capacity_bytes 67108864")) << text;
  EXPECT_TRUE(HasLine(text, "strata_index_cache_bytes 4096")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE strata_index_reads_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "strata_index_reads_total{path=\"memory\"} 9")) << text;
  EXPECT_TRUE(HasLine(text, "strata_index_reads_total{path=\"pool\"} 2")) << text;
  // What could not be read is left out rather than reported as 0.
  EXPECT_EQ(text.find("process_cpu_seconds_total"), std::string::npos) << text;
  EXPECT_EQ(metrics.Render(ScrapeSample{}).find("strata_index_cache"), std::string::npos);
  bool build_info = false;
  for (const auto& line : Lines(text)) {
    build_info |= line.starts_with("strata_build_info{version=\"") && line.ends_with("\"} 1");
  }
  EXPECT_TRUE(build_info) << text;
}

TEST(GatewayMetrics, TheReadCacheAndWhereForwardedGetsBytesCameFrom) {
  GatewayMetrics metrics;
  ScrapeSample sample;
  EXPECT_EQ(metrics.Render(sample).find("strata_read_cache"), std::string::npos);
  EXPECT_EQ(metrics.Render(sample).find("strata_forwarded_gets"), std::string::npos);
  sample.read_cache = storage::ReadCacheStats{.capacity = 4096,
                                              .bytes = 1000,
                                              .entries = 3,
                                              .hits = 7,
                                              .fills = 4,
                                              .refused = 2,
                                              .evictions = 1,
                                              .errors = 5};
  sample.forwarded_gets =
      ForwardedGetCounts{.from_owner = 11, .from_replica = 12, .from_cache = 13};
  auto text = metrics.Render(sample);
  EXPECT_TRUE(HasLine(text, "strata_read_cache_bytes 1000")) << text;
  EXPECT_TRUE(HasLine(text, "strata_read_cache_capacity_bytes 4096")) << text;
  EXPECT_TRUE(HasLine(text, "strata_read_cache_entries 3")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE strata_read_cache_events_total counter")) << text;
  for (const auto& [event, count] :
       {std::pair{"hit", 7}, std::pair{"fill", 4}, std::pair{"refused", 2},
        std::pair{"eviction", 1}, std::pair{"error", 5}}) {
    EXPECT_TRUE(HasLine(text, "strata_read_cache_events_total{event=\"" + std::string(event) +
                                  "\"} " + std::to_string(count)))
        << event << text;
  }
  EXPECT_TRUE(HasLine(text, "strata_forwarded_gets_total{bytes_from=\"owner\"} 11")) << text;
  EXPECT_TRUE(HasLine(text, "strata_forwarded_gets_total{bytes_from=\"replica\"} 12")) << text;
  EXPECT_TRUE(HasLine(text, "strata_forwarded_gets_total{bytes_from=\"cache\"} 13")) << text;
}

TEST(GatewayMetrics, EveryLineIsACommentOrASample) {
  GatewayMetrics metrics;
  auto& a = metrics.AddShard();
  for (std::size_t op = 0; op < kS3OperationCount; ++op) {
    a.RecordRequest(static_cast<S3Operation>(op), 200, milliseconds(1), 1, 1);
  }
  a.RecordRequest(S3Operation::kGetObject, 0, milliseconds(1), 0, 0);  // no response sent
  auto text = metrics.Scrape();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  for (const auto& line : Lines(text)) {
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      continue;
    }
    auto space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::string name = line.substr(0, line.find_first_of("{ "));
    ASSERT_FALSE(name.empty()) << line;
    for (char c : name) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':') << line;
    }
    std::string value = line.substr(space + 1);
    std::size_t used = 0;
    (void)std::stod(value, &used);
    EXPECT_EQ(used, value.size()) << line;
  }
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"GetObject\",code=\"0\"} 1")) << text;
  // A live process can read its own /proc entries.
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_open_fds "), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_cpu_seconds_total "), std::string::npos) << text;
}

TEST(GatewayMetrics, StatusesBeyondTheSlotsCountAsOther) {
  GatewayMetrics metrics;
  auto& a = metrics.AddShard();
  for (unsigned status = 400; status < 420; ++status) {
    a.RecordRequest(S3Operation::kPutObject, status, milliseconds(1), 0, 0);
  }
  auto text = metrics.Render(ScrapeSample{});
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"PutObject\",code=\"400\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "strata_requests_total{op=\"PutObject\",code=\"other\"} 8")) << text;
  EXPECT_TRUE(HasLine(text, "strata_request_duration_seconds_count{op=\"PutObject\"} 20")) << text;
}

TEST(MetricsScrape, PathStyleGetsWithoutSignatureOrWithBearer) {
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/metrics", "h:1", "", ""));
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/_strata/metrics", "h:1", "", ""));
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/metrics?x=1", "h:1", "", ""));
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/metrics", "s3.example.com", "", "s3.example.com"));
  // A scraper's bearer token, on either path (AuthorizeScrape checks it).
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/metrics", "h:1", "Bearer abc", ""));
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/_strata/metrics", "h:1", "bearer abc", ""));
  // Signed: an S3 request on the bucket "metrics".
  const char* v4 = "AWS4-HMAC-SHA256 Credential=a/20130524/us-east-1/s3/aws4_request, ...";
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics", "h:1", v4, ""));
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics", "h:1", "AWS a:b", ""));
  EXPECT_FALSE(IsMetricsScrape(
      verb::get, "/metrics?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab", "h", "", ""));
  EXPECT_FALSE(
      IsMetricsScrape(verb::get, "/metrics?AWSAccessKeyId=a&Signature=b&Expires=1", "h", "", ""));
  // ... but signed to /_strata/metrics, which no bucket shadows: an admin's scrape.
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/_strata/metrics", "h:1", v4, ""));
  EXPECT_TRUE(IsMetricsScrape(verb::get, "/_strata/metrics", "h:1", "AWS a:b", ""));
  EXPECT_TRUE(IsMetricsScrape(
      verb::get, "/_strata/metrics?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab", "h", "",
      ""));
  // Other methods and paths.
  EXPECT_FALSE(IsMetricsScrape(verb::head, "/metrics", "h", "", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::put, "/metrics", "h", "", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::put, "/metrics", "h", "Bearer abc", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics/", "h", "", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics/key", "h", "", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metricsx", "h", "", ""));
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/_strata/admin/metrics", "h", "", ""));
  // Virtual-hosted: the key "metrics" of the bucket the Host names.
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics", "b.s3.example.com", "", "s3.example.com"));
  EXPECT_FALSE(
      IsMetricsScrape(verb::get, "/_strata/metrics", "b.s3.example.com", "", "s3.example.com"));
  EXPECT_FALSE(
      IsMetricsScrape(verb::get, "/metrics", "b.s3.example.com", "Bearer abc", "s3.example.com"));
  // Unparsable query.
  EXPECT_FALSE(IsMetricsScrape(verb::get, "/metrics?a=%zz", "h", "", ""));
}

TEST(GatewayMetrics, BucketNamesOnlyInTheFullScope) {
  GatewayMetrics metrics;
  ScrapeSample sample;
  UsageReport usage;
  usage.buckets.push_back(UsageLine{"secret-bucket", "hot", 3, 3000, 0.5});
  TierUsage hot;
  hot.total = UsageLine{"", "hot", 3, 3000, 0.5};
  hot.capacity = 1 << 30;
  usage.tiers.push_back(hot);
  sample.usage = usage;
  const std::string full = metrics.Render(sample, MetricsScope::kFull);
  EXPECT_TRUE(HasLine(full, "strata_usage_bytes{bucket=\"secret-bucket\",tier=\"hot\"} 3000"))
      << full;
  EXPECT_TRUE(HasLine(full, "strata_usage_objects{bucket=\"secret-bucket\",tier=\"hot\"} 3"))
      << full;
  EXPECT_TRUE(HasLine(full, "strata_tier_bytes{tier=\"hot\"} 3000")) << full;
  for (const std::string& aggregate :
       {metrics.Render(sample, MetricsScope::kAggregate), metrics.Render(sample)}) {
    EXPECT_EQ(aggregate.find("secret-bucket"), std::string::npos) << aggregate;
    EXPECT_EQ(aggregate.find("strata_usage_"), std::string::npos) << aggregate;
    EXPECT_TRUE(HasLine(aggregate, "strata_tier_bytes{tier=\"hot\"} 3000")) << aggregate;
    EXPECT_TRUE(HasLine(aggregate, "strata_tier_capacity_bytes{tier=\"hot\"} 1073741824"))
        << aggregate;
  }
}

}  // namespace
}  // namespace strata::gateway
