#include "tools/bench/micro.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "auth/signer.h"
#include "auth/verifier.h"
#include "storage/crc64nvme.h"

namespace strata::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

// The result of a computation the optimiser must not drop.
volatile std::uint64_t g_sink = 0;

template <typename Fn>
double BestGbps(std::uint64_t bytes, int rounds, Fn&& fn) {
  double best = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = SteadyClock::now();
    fn();
    double s = Seconds(t0);
    if (s > 0) {
      best = std::max(best, static_cast<double>(bytes) / s / 1e9);
    }
  }
  return best;
}

struct SignedGet {
  std::string method = "GET";
  std::string path = "/bench/k000000042";
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;

  auth::RequestView View() const {
    auth::RequestView v;
    v.method = method;
    v.raw_path = path;
    v.raw_query = query;
    for (const auto& [n, val] : headers) {
      v.headers.emplace_back(n, val);
    }
    return v;
  }
};

template <typename Fn>
double PerSecond(double seconds, Fn&& fn) {
  std::uint64_t n = 0;
  auto t0 = SteadyClock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < 256; ++i) {
      fn();
    }
    n += 256;
    elapsed = Seconds(t0);
  } while (elapsed < seconds);
  return static_cast<double>(n) / elapsed;
}

}  // namespace

CrcResult RunCrc(std::uint64_t mib, int rounds) {
  CrcResult r;
  r.buffer_bytes = mib << 20;
  std::vector<std::uint64_t> src(r.buffer_bytes / 8);
  std::mt19937_64 rng(7);
  for (auto& w : src) {
    w = rng();
  }
  // Touched before timing, so page faults are not charged to memcpy.
  std::vector<std::uint64_t> dst(src.size(), 1);
  r.clmul = storage::Crc64NvmeHasClmul();
  r.crc_gbps = BestGbps(r.buffer_bytes, rounds, [&] {
    g_sink = g_sink + storage::Crc64Nvme(0, src.data(), r.buffer_bytes);
  });
  r.portable_gbps = BestGbps(r.buffer_bytes, std::max(1, rounds / 2), [&] {
    g_sink = g_sink + storage::Crc64NvmePortable(0, src.data(), r.buffer_bytes);
  });
  r.memcpy_gbps = BestGbps(r.buffer_bytes, rounds, [&] {
    std::memcpy(dst.data(), src.data(), r.buffer_bytes);
    g_sink = g_sink + dst[dst.size() / 2];
  });
  return r;
}

SigV4Result RunSigV4(double seconds) {
  SigV4Result r;
  auth::MemCredentialStore store;
  auth::Credential cred{"strata", "strata-secret-key", false};
  store.Add(cred);
  SystemClock clock;
  auth::Verifier verifier(store, clock, auth::VerifierOptions{});
  const std::string host = "127.0.0.1:9000";

  SignedGet header_signed;
  {
    auth::SignRequest req;
    req.method = header_signed.method;
    req.raw_path = header_signed.path;
    req.headers.emplace_back("host", host);
    req.headers.emplace_back("user-agent",
                             "Boto3/1.26.27 Python/3.11.2 Linux/6.1.0 Botocore/1.29.27");
    req.headers.emplace_back("accept-encoding", "identity");
    auth::SignV4(req, cred, "us-east-1", "s3", clock.Now());
    header_signed.headers = req.headers;
  }
  SignedGet presigned;
  {
    auth::SignRequest req;
    req.method = presigned.method;
    req.raw_path = presigned.path;
    req.headers.emplace_back("host", host);
    presigned.query =
        auth::PresignV4(req, cred, "us-east-1", "s3", clock.Now(), std::chrono::seconds(3600));
    presigned.headers = {{"host", host}};
  }
  auto header_view = header_signed.View();
  auto presigned_view = presigned.View();
  if (!verifier.Verify(header_view).ok() || !verifier.Verify(presigned_view).ok()) {
    return r;  // zeros: the caller reports the failure
  }
  std::uint64_t failures = 0;
  r.header_per_s =
      PerSecond(seconds, [&] { failures += verifier.Verify(header_view).ok() ? 0 : 1; });
  r.presign_per_s =
      PerSecond(seconds, [&] { failures += verifier.Verify(presigned_view).ok() ? 0 : 1; });
  r.sign_per_s = PerSecond(seconds, [&] {
    auth::SignRequest req;
    req.method = "GET";
    req.raw_path = header_signed.path;
    req.headers.emplace_back("host", host);
    auth::SignV4(req, cred, "us-east-1", "s3", clock.Now());
    g_sink = g_sink + req.headers.size();
  });
  if (failures > 0) {
    r.header_per_s = r.presign_per_s = 0;
  }
  return r;
}

namespace {

// The request's condition values: its address and, for listings, a prefix.
class BenchConditions final : public auth::ConditionSource {
 public:
  std::optional<std::span<const std::string>> Values(std::string_view key) const override {
    if (key == "aws:sourceip") {
      return std::span<const std::string>(&address_, 1);
    }
    if (key == "aws:securetransport") {
      return std::span<const std::string>(&secure_, 1);
    }
    return std::nullopt;
  }

 private:
  std::string address_ = "10.1.2.3";
  std::string secure_ = "false";
};

// Statement i of the bench's policy: most name other prefixes, actions or users, some deny
// from outside an address range; the last allows the GET.
std::string BenchStatement(int i, int count) {
  if (i == count - 1) {
    return R"({"Sid":"Readers","Effect":"Allow","Principal":"*","Action":["s3:GetObject",)"
           R"("s3:GetObjectVersion"],"Resource":"arn:aws:s3:::bench/datasets/*",)"
           R"("Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.168.0.0/16"]}}})";
  }
  const std::string n = std::to_string(i);
  switch (i % 4) {
    case 0:
      return R"({"Sid":"Team)" + n +
             R"(","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:user/u)" + n +
             R"("},"Action":"s3:*","Resource":"arn:aws:s3:::bench/teams/t)" + n + R"(/*"})";
    case 1:
      return R"({"Sid":"NoDelete)" + n +
             R"(","Effect":"Deny","Principal":"*","Action":["s3:DeleteObject","s3:Put*"],)"
             R"("Resource":"arn:aws:s3:::bench/archive)" +
             n + R"(/*"})";
    case 2:
      return R"({"Sid":"Tls)" + n +
             R"(","Effect":"Deny","Principal":"*","Action":"s3:PutObject",)"
             R"("Resource":"arn:aws:s3:::bench/*","Condition":{"Bool":{"aws:SecureTransport":"false"},)"
             R"("StringLike":{"s3:x-amz-storage-class":["GLACIER*"]}}})";
    default:
      return R"({"Sid":"List)" + n +
             R"(","Effect":"Allow","Principal":"*","Action":"s3:ListBucket",)"
             R"("Resource":"arn:aws:s3:::bench","Condition":{"StringLike":{"s3:prefix":["public/)" +
             n + R"(/*"]}}})";
  }
}

}  // namespace

PolicyResult RunPolicy(double seconds, int statements) {
  PolicyResult r;
  r.statements = std::max(1, statements);
  std::string json = R"({"Version":"2012-10-17","Statement":[)";
  for (int i = 0; i < r.statements; ++i) {
    json += (i == 0 ? "" : ",") + BenchStatement(i, r.statements);
  }
  json += "]}";
  auto policy = auth::BucketPolicy::Parse(json, "bench");
  if (!policy.ok()) {
    return r;  // zeros: the caller reports the failure
  }
  const std::vector<std::string> ids = {"arn:aws:iam::111122223333:user/reader"};
  const auth::PolicyPrincipal principal{ids, std::string_view()};
  const BenchConditions conditions;
  const auth::PolicyRequest request{"s3:GetObject", "arn:aws:s3:::bench/datasets/shard-00042.tar",
                                    &principal, &conditions};
  r.allowed = policy->Evaluate(request) == auth::PolicyDecision::kAllow;
  r.evaluations_per_s = PerSecond(
      seconds, [&] { g_sink = g_sink + static_cast<std::uint64_t>(policy->Evaluate(request)); });
  r.parses_per_s = PerSecond(std::min(seconds, 1.0), [&] {
    g_sink = g_sink + (auth::BucketPolicy::Parse(json, "bench").ok() ? 1 : 0);
  });
  return r;
}

}  // namespace strata::bench
