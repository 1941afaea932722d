// Helpers shared by the auth tests: a request that owns its strings, the AWS example
// credentials and times.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "auth/credential_store.h"
#include "auth/request.h"
#include "auth/signer.h"
#include "common/clock.h"

namespace strata::auth::testing {

inline constexpr const char* kExampleAccessKey = "AKIAIOSFODNN7EXAMPLE";
inline constexpr const char* kExampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
inline constexpr const char* kEmptySha =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

inline WallTime FromUnix(long long secs) { return WallTime(std::chrono::seconds(secs)); }
// 20130524T000000Z, the time of every SigV4 example in the S3 docs.
inline WallTime ExampleTime() { return FromUnix(1369353600); }

inline Credential ExampleCredential() {
  return Credential{kExampleAccessKey, kExampleSecret, false};
}

inline MemCredentialStore ExampleStore() {
  MemCredentialStore store;
  store.Add(ExampleCredential());
  return store;
}

// A request that owns its strings; View() borrows them.
struct OwnedRequest {
  std::string method = "GET";
  std::string raw_path = "/";
  std::string raw_query;
  std::string virtual_host_bucket;
  std::vector<std::pair<std::string, std::string>> headers;

  RequestView View() const {
    RequestView v;
    v.method = method;
    v.raw_path = raw_path;
    v.raw_query = raw_query;
    v.virtual_host_bucket = virtual_host_bucket;
    for (const auto& [n, value] : headers) {
      v.headers.emplace_back(n, value);
    }
    return v;
  }

  void Set(const std::string& name, const std::string& value) {
    for (auto& [n, v] : headers) {
      if (n == name) {
        v = value;
        return;
      }
    }
    headers.emplace_back(name, value);
  }

  void Remove(const std::string& name) {
    std::erase_if(headers, [&](const auto& h) { return h.first == name; });
  }

  static OwnedRequest FromSigned(const SignRequest& s) {
    OwnedRequest r;
    r.method = s.method;
    r.raw_path = s.raw_path;
    r.raw_query = s.raw_query;
    r.headers = s.headers;
    return r;
  }
};

// The S3 API reference's aws-chunked upload example request (seed signature 4f232c43...).
inline OwnedRequest StreamingExample() {
  OwnedRequest r;
  r.method = "PUT";
  r.raw_path = "/examplebucket/chunkObject.txt";
  r.headers = {
      {"Host", "s3.amazonaws.com"},
      {"x-amz-date", "20130524T000000Z"},
      {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
      {"Authorization",
       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
       "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-"
       "amz-decoded-content-length;x-amz-storage-class,"
       "Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"},
      {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
      {"Content-Encoding", "aws-chunked"},
      {"x-amz-decoded-content-length", "66560"},
      {"Content-Length", "66824"},
  };
  return r;
}

}  // namespace strata::auth::testing
