#include "common/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/log.h"

namespace strata {
namespace {

using std::chrono::milliseconds;

// A minimal valid configuration that negative tests extend with one bad line.
constexpr std::string_view kMinimal = R"toml(
[server]
listen = "127.0.0.1:9000"

[[users]]
access_key = "ak"
secret_key = "sk"

[[tiers]]
name = "hot"
kind = "local"
path = "/tmp/hot"
)toml";

// Parses and expects failure; returns the message.
std::string ParseError(std::string_view text) {
  auto r = ParseConfig(text, "test.toml");
  EXPECT_FALSE(r.ok()) << "expected a parse error for:\n" << text;
  if (r.ok()) {
    return "";
  }
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  return r.error().message;
}

// Expects `text` to fail with a message containing every one of `needles`.
#define EXPECT_CONFIG_ERROR(text, ...)                                 \
  do {                                                                 \
    const std::string msg_ = ParseError(text);                         \
    for (std::string_view needle_ : {__VA_ARGS__}) {                   \
      EXPECT_NE(msg_.find(needle_), std::string::npos)                 \
          << "message \"" << msg_ << "\" lacks \"" << needle_ << "\""; \
    }                                                                  \
  } while (0)

std::string With(std::string_view extra) { return std::string(kMinimal) + std::string(extra); }

// Replaces the [server] table of kMinimal with `server_body`.
std::string Server(std::string_view server_body) {
  std::string s(kMinimal);
  const std::string from = "listen = \"127.0.0.1:9000\"\n";
  s.replace(s.find(from), from.size(), std::string(server_body) + "\n");
  return s;
}

TEST(ConfigTest, EmbeddedDefaultParses) {
  auto r = ParseConfig(EmbeddedDefaultConfig(), "<embedded>");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Config& c = *r;
  ASSERT_EQ(c.server.listen.size(), 1u);
  EXPECT_EQ(c.server.listen[0], "127.0.0.1:9000");
  EXPECT_EQ(c.server.region, "us-east-1");
  EXPECT_EQ(c.server.data_dir, "./var/strata");
  EXPECT_EQ(c.server.threads, 0);
  EXPECT_TRUE(c.server.fsync);
  EXPECT_TRUE(c.server.io_uring);
  EXPECT_EQ(c.server.max_header_bytes, 16u * 1024);
  EXPECT_EQ(c.server.index_cache_bytes, std::size_t{64} << 20);
  EXPECT_EQ(c.server.xml_memory_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(c.server.header_timeout, milliseconds(10'000));
  EXPECT_EQ(c.server.idle_timeout, milliseconds(60'000));
  EXPECT_EQ(c.server.shutdown_grace, milliseconds(10'000));
  EXPECT_EQ(c.server.body_min_rate_bytes_per_s, 500u);
  EXPECT_EQ(c.server.body_rate_grace, milliseconds(20'000));
  EXPECT_EQ(c.server.max_connections, 0u);
  EXPECT_EQ(c.server.log_level, "info");
  EXPECT_TRUE(c.server.metrics);
  EXPECT_FALSE(c.server.tls_enabled());
  EXPECT_TRUE(c.server.domain.empty());

  ASSERT_EQ(c.users.size(), 1u);
  EXPECT_EQ(c.users[0].access_key, "strata");
  EXPECT_EQ(c.users[0].secret_key, "strata-secret-key");
  EXPECT_TRUE(c.users[0].admin);

  ASSERT_EQ(c.tiers.size(), 2u);
  EXPECT_EQ(c.tiers[0].name, "hot");
  EXPECT_EQ(c.tiers[0].kind, TierKind::kLocal);
  EXPECT_EQ(c.tiers[0].path, "./var/strata/hot");
  EXPECT_EQ(c.tiers[0].capacity, 20ull << 30);
  EXPECT_DOUBLE_EQ(c.tiers[0].price_per_gb_month, 0.8);
  EXPECT_EQ(c.tiers[1].name, "warm");
  EXPECT_EQ(c.tiers[1].capacity, 200ull << 30);
  EXPECT_DOUBLE_EQ(c.tiers[1].price_per_gb_month, 0.25);

  EXPECT_EQ(c.storage_classes.at("STANDARD"), "hot");
  EXPECT_EQ(c.storage_classes.at("STANDARD_IA"), "warm");
  EXPECT_EQ(c.storage_classes.at("HOT"), "hot");
  EXPECT_EQ(c.storage_classes.at("WARM"), "warm");
  EXPECT_EQ(c.storage_classes.count("GLACIER"), 0u);  // no cold tier in the default
  ASSERT_NE(c.HotTier(), nullptr);
  EXPECT_EQ(c.HotTier()->name, "hot");

  EXPECT_EQ(c.writeback.delay, milliseconds(5'000));
  EXPECT_EQ(c.lifecycle.day, milliseconds(86'400'000));
  EXPECT_EQ(c.lifecycle.interval, milliseconds(60'000));
}

TEST(ConfigTest, EmptyTextGivesDefaults) {
  auto r = ParseConfig("", "empty.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Config defaults;
  EXPECT_EQ(r->server.listen, defaults.server.listen);
  EXPECT_EQ(r->server.data_dir, defaults.server.data_dir);
  EXPECT_TRUE(r->users.empty());
  // No [[tiers]]: one local tier "hot" under data_dir, and STANDARD maps to it.
  ASSERT_EQ(r->tiers.size(), 1u);
  EXPECT_EQ(r->tiers[0].name, "hot");
  EXPECT_EQ(r->tiers[0].path, "./var/strata/hot");
  ASSERT_NE(r->HotTier(), nullptr);
  EXPECT_EQ(r->HotTier()->name, "hot");
}

TEST(ConfigTest, FullContractParses) {
  auto r = ParseConfig(R"toml(
[server]
listen = ["0.0.0.0:9000", "[::1]:9001", "localhost:80"]
region = "eu-west-1"
data_dir = "/data/strata"
threads = 8
tls_cert = "c.pem"
tls_key = "k.pem"
domain = "s3.example.com"
fsync = false
io_uring = false
max_header_bytes = 65536
index_cache = "1GiB"
header_timeout = "250ms"
idle_timeout = "2m"
shutdown_grace = "0s"
body_min_rate_bytes_per_s = "1KiB"
body_rate_grace = "0s"
max_connections = 100
log_level = "debug"
metrics = false

[[users]]
access_key = "a"
secret_key = "b"

[[users]]
access_key = "c"
secret_key = "d"
admin = true

[[tiers]]
name = "nvme"
kind = "local"
path = "/nvme"
capacity = 1000

[[tiers]]
name = "pool"
kind = "peer"

[[tiers]]
name = "cold"
kind = "s3"
endpoint = "https://s3.amazonaws.com"
access_key = "x"
secret_key = "y"
region = "us-west-2"
price_per_gb_month = 1

[storage_classes]
STANDARD = "nvme"
STANDARD_IA = "pool"

[writeback]
delay = "1h"

[lifecycle]
day = "10s"
interval = "1h30m"
)toml",
                       "full.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server.listen.size(), 3u);
  EXPECT_EQ(r->server.threads, 8);
  EXPECT_TRUE(r->server.tls_enabled());
  EXPECT_EQ(r->server.domain, "s3.example.com");
  EXPECT_FALSE(r->server.fsync);
  EXPECT_FALSE(r->server.metrics);
  EXPECT_FALSE(r->server.io_uring);
  EXPECT_EQ(r->server.max_header_bytes, 65536u);
  EXPECT_EQ(r->server.index_cache_bytes, std::size_t{1} << 30);
  EXPECT_EQ(r->server.header_timeout, milliseconds(250));
  EXPECT_EQ(r->server.idle_timeout, milliseconds(120'000));
  EXPECT_EQ(r->server.shutdown_grace, milliseconds(0));
  EXPECT_EQ(r->server.body_min_rate_bytes_per_s, 1024u);
  EXPECT_EQ(r->server.body_rate_grace, milliseconds(0));
  EXPECT_EQ(r->server.max_connections, 100u);
  EXPECT_EQ(r->users.size(), 2u);
  EXPECT_FALSE(r->users[0].admin);
  EXPECT_TRUE(r->users[1].admin);
  ASSERT_EQ(r->tiers.size(), 3u);
  EXPECT_EQ(r->tiers[0].capacity, 1000u);
  EXPECT_EQ(r->tiers[1].kind, TierKind::kPeer);
  EXPECT_EQ(r->tiers[2].kind, TierKind::kS3);
  EXPECT_EQ(r->tiers[2].region, "us-west-2");
  EXPECT_DOUBLE_EQ(r->tiers[2].price_per_gb_month, 1.0);
  EXPECT_EQ(r->HotTier()->name, "nvme");
  EXPECT_EQ(r->storage_classes.at("GLACIER"), "cold");  // defaults to a tier named cold
  EXPECT_EQ(r->storage_classes.at("COLD"), "cold");
  EXPECT_EQ(r->writeback.delay, milliseconds(3'600'000));
  EXPECT_EQ(r->lifecycle.day, milliseconds(10'000));
  EXPECT_EQ(r->lifecycle.interval, milliseconds(5'400'000));
}

TEST(ConfigTest, TomlSyntaxErrorHasPosition) {
  EXPECT_CONFIG_ERROR("[server]\nlisten = \n", "test.toml:2:");
  EXPECT_CONFIG_ERROR("[server\n", "test.toml:1:");
}

TEST(ConfigTest, UnknownKeysNameTheFullKey) {
  EXPECT_CONFIG_ERROR(Server("listn = \"127.0.0.1:1\""), "server.listn: unknown key");
  EXPECT_CONFIG_ERROR(With("[bogus]\nx = 1\n"), "bogus: unknown key");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"b\"\nsecret_key = \"c\"\nadmn = true\n"),
                      "users[1].admn: unknown key");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"w\"\nkind = \"local\"\npath = \"/w\"\nsize = 1\n"),
                      "tiers[1].size: unknown key");
  EXPECT_CONFIG_ERROR(With("[writeback]\ndelai = \"5s\"\n"), "writeback.delai: unknown key");
  EXPECT_CONFIG_ERROR(With("[lifecycle]\ndays = \"5s\"\n"), "lifecycle.days: unknown key");
  EXPECT_CONFIG_ERROR(With("[storage_classes]\nSTANDART = \"hot\"\n"),
                      "storage_classes.STANDART: unknown key");
  // The position of the key is given too.
  EXPECT_CONFIG_ERROR(Server("listn = \"127.0.0.1:1\""), "test.toml:3:1: server.listn");
}

TEST(ConfigTest, WrongTablesShapes) {
  EXPECT_CONFIG_ERROR("server = 5\n", "server: expected a table");
  EXPECT_CONFIG_ERROR("[users]\naccess_key = \"a\"\nsecret_key = \"b\"\n",
                      "users: expected an array of tables");
  EXPECT_CONFIG_ERROR("users = [1]\n", "users[0]: expected a table");
  EXPECT_CONFIG_ERROR(With("[[storage_classes]]\n"), "storage_classes: expected a table");
}

TEST(ConfigTest, Listen) {
  EXPECT_TRUE(ParseConfig(Server("listen = \"[::]:9000\""), "t").ok());
  EXPECT_TRUE(ParseConfig(Server("listen = \"my-host.local:1\""), "t").ok());
  EXPECT_TRUE(ParseConfig(Server("listen = \"0.0.0.0:65535\""), "t").ok());
  EXPECT_CONFIG_ERROR(Server("listen = 9000"), "server.listen:", "expected");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1\""), "server.listen:", "port");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1:0\""), "server.listen:", "1..65535");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1:65536\""), "server.listen:", "1..65535");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1:99999999999999999999999\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1:80x\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = \"127.0.0.1:\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = \":9000\""), "server.listen:", "host");
  EXPECT_CONFIG_ERROR(Server("listen = \"::1:9000\""), "server.listen:", "brackets");
  EXPECT_CONFIG_ERROR(Server("listen = \"[::1]9000\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = \"[zz]:9000\""), "server.listen:", "IPv6");
  EXPECT_CONFIG_ERROR(Server("listen = \"[]:9000\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = \"\""), "server.listen:");
  EXPECT_CONFIG_ERROR(Server("listen = []"), "server.listen:", "at least one");
  EXPECT_CONFIG_ERROR(Server("listen = [\"127.0.0.1:1\", 2]"), "server.listen[1]:");
  EXPECT_CONFIG_ERROR(Server("listen = [\"127.0.0.1:1\", \"a b:2\"]"), "server.listen[1]:");
  EXPECT_CONFIG_ERROR(Server("listen = [\"127.0.0.1:1\", \"127.0.0.1:1\"]"),
                      "server.listen[1]:", "twice");
}

TEST(ConfigTest, ServerScalars) {
  EXPECT_CONFIG_ERROR(Server("threads = -1"), "server.threads:");
  EXPECT_CONFIG_ERROR(Server("threads = \"4\""), "server.threads:", "integer");
  EXPECT_CONFIG_ERROR(Server("threads = 1.5"), "server.threads:");
  EXPECT_CONFIG_ERROR(Server("region = 1"), "server.region:", "string");
  EXPECT_CONFIG_ERROR(Server("region = \"\""), "server.region:", "empty");
  EXPECT_CONFIG_ERROR(Server("data_dir = \"\""), "server.data_dir:");
  EXPECT_CONFIG_ERROR(Server("fsync = \"yes\""), "server.fsync:");
  EXPECT_CONFIG_ERROR(Server("metrics = 1"), "server.metrics:");
  EXPECT_CONFIG_ERROR(Server("metrics = \"true\""), "server.metrics:");
  EXPECT_CONFIG_ERROR(Server("io_uring = 1"), "server.io_uring:");
  EXPECT_CONFIG_ERROR(Server("io_uring = \"false\""), "server.io_uring:");
  EXPECT_CONFIG_ERROR(Server("domain = \"http://x.com\""), "server.domain:");
  EXPECT_CONFIG_ERROR(Server("log_level = \"loud\""), "server.log_level:", "loud");
  EXPECT_CONFIG_ERROR(Server("max_header_bytes = \"16 furlongs\""), "server.max_header_bytes:");
  EXPECT_CONFIG_ERROR(Server("max_header_bytes = -1"), "server.max_header_bytes:", "negative");
  EXPECT_CONFIG_ERROR(Server("max_header_bytes = 10"), "server.max_header_bytes:");
  EXPECT_CONFIG_ERROR(Server("max_header_bytes = true"), "server.max_header_bytes:");
  EXPECT_CONFIG_ERROR(Server("index_cache = \"lots\""), "server.index_cache:");
  EXPECT_CONFIG_ERROR(Server("index_cache = -1"), "server.index_cache:", "negative");
  EXPECT_CONFIG_ERROR(Server("index_cache = \"512KiB\""), "server.index_cache:", "1MiB");
  EXPECT_CONFIG_ERROR(Server("index_cache = \"2TiB\""), "server.index_cache:", "1TiB");
  EXPECT_CONFIG_ERROR(Server("index_cache = false"), "server.index_cache:");
  EXPECT_CONFIG_ERROR(Server("xml_memory = \"512KiB\""), "server.xml_memory:", "1MiB");
  EXPECT_CONFIG_ERROR(Server("xml_memory = \"lots\""), "server.xml_memory:");
  EXPECT_CONFIG_ERROR(Server("header_timeout = 10"), "server.header_timeout:", "duration");
  EXPECT_CONFIG_ERROR(Server("header_timeout = \"0s\""), "server.header_timeout:", "zero");
  EXPECT_CONFIG_ERROR(Server("idle_timeout = \"10 parsecs\""), "server.idle_timeout:");
  EXPECT_CONFIG_ERROR(Server("shutdown_grace = \"-1s\""), "server.shutdown_grace:", "negative");
  EXPECT_CONFIG_ERROR(Server("body_min_rate_bytes_per_s = -1"),
                      "server.body_min_rate_bytes_per_s:");
  EXPECT_CONFIG_ERROR(Server("body_min_rate_bytes_per_s = \"2GiB\""),
                      "server.body_min_rate_bytes_per_s:", "1GiB");
  EXPECT_CONFIG_ERROR(Server("body_rate_grace = 5"), "server.body_rate_grace:", "duration");
  EXPECT_CONFIG_ERROR(Server("max_connections = -1"), "server.max_connections:");
  EXPECT_CONFIG_ERROR(Server("max_connections = \"many\""), "server.max_connections:");
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    auto r = ParseConfig(Server(std::string("log_level = \"") + level + "\""), "t");
    EXPECT_TRUE(r.ok()) << level;
  }
}

TEST(ConfigTest, NewBucketAccessDefaults) {
  auto d = ParseConfig(kMinimal, "t");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->server.default_object_ownership, "ObjectWriter");
  EXPECT_FALSE(d->server.default_public_access_block);
  for (const char* mode : {"ObjectWriter", "BucketOwnerPreferred", "BucketOwnerEnforced"}) {
    auto r = ParseConfig(Server(std::string("default_object_ownership = \"") + mode +
                                "\"\ndefault_public_access_block = true"),
                         "t");
    ASSERT_TRUE(r.ok()) << mode << ": " << r.error().message;
    EXPECT_EQ(r->server.default_object_ownership, mode);
    EXPECT_TRUE(r->server.default_public_access_block);
  }
  EXPECT_CONFIG_ERROR(Server("default_object_ownership = \"bucketownerenforced\""),
                      "server.default_object_ownership:", "BucketOwnerEnforced");
  EXPECT_CONFIG_ERROR(Server("default_object_ownership = 1"), "server.default_object_ownership:");
  EXPECT_CONFIG_ERROR(Server("default_public_access_block = \"yes\""),
                      "server.default_public_access_block:");
}

TEST(ConfigTest, MetricsAccess) {
  // Defaults: the aggregate page is public, no bearer token is accepted.
  auto d = ParseConfig(kMinimal, "t");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->server.metrics_public);
  EXPECT_TRUE(d->server.metrics_token.empty());

  auto r = ParseConfig(
      Server("metrics_public = false\nmetrics_token = \"0123456789abcdefABCDEF-._~+/=\""), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->server.metrics_public);
  EXPECT_EQ(r->server.metrics_token, "0123456789abcdefABCDEF-._~+/=");

  EXPECT_CONFIG_ERROR(Server("metrics_public = 1"), "server.metrics_public:");
  EXPECT_CONFIG_ERROR(Server("metrics_public = \"no\""), "server.metrics_public:");
  EXPECT_CONFIG_ERROR(Server("metrics_token = 1234567890123456"),
                      "server.metrics_token:", "string");
  EXPECT_CONFIG_ERROR(Server("metrics_token = \"\""), "server.metrics_token:", "16");
  EXPECT_CONFIG_ERROR(Server("metrics_token = \"short-secret\""), "server.metrics_token:", "16");
  // A token must fit an Authorization header as it is (RFC 6750's token68).
  for (const char* bad : {"0123456789abcdef ghij", "0123456789abcdef\\tghij",
                          "0123456789abcdef\\\"ghij", "0123456789abcdef\\u00e9"}) {
    EXPECT_CONFIG_ERROR(Server(std::string("metrics_token = \"") + bad + "\""),
                        "server.metrics_token:", "letters");
  }
  // The message never repeats the secret.
  const std::string msg = ParseError(Server("metrics_token = \"hunter2-short\""));
  EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
}

TEST(ConfigTest, TlsBothOrNeither) {
  EXPECT_CONFIG_ERROR(Server("tls_cert = \"c.pem\""), "server.tls_key", "together");
  EXPECT_CONFIG_ERROR(Server("tls_key = \"k.pem\""), "server.tls_cert", "together");
  EXPECT_CONFIG_ERROR(Server("tls_key = \"\""), "server.tls_key:");
  auto r = ParseConfig(Server("tls_cert = \"c.pem\"\ntls_key = \"k.pem\""), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->server.tls_enabled());
}

TEST(ConfigTest, Users) {
  EXPECT_CONFIG_ERROR(With("[[users]]\nsecret_key = \"x\"\n"), "users[1].access_key", "missing");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"x\"\n"), "users[1].secret_key", "missing");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"\"\nsecret_key = \"x\"\n"),
                      "users[1].access_key:", "empty");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"x\"\nsecret_key = \"\"\n"),
                      "users[1].secret_key:", "empty");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"ak\"\nsecret_key = \"other\"\n"),
                      "users[1].access_key:", "another user");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = \"x\"\nsecret_key = \"y\"\nadmin = 1\n"),
                      "users[1].admin:");
  EXPECT_CONFIG_ERROR(With("[[users]]\naccess_key = 5\nsecret_key = \"y\"\n"),
                      "users[1].access_key:", "string");
}

TEST(ConfigTest, SecretsNeverInMessages) {
  const std::string msg =
      ParseError(With("[[users]]\naccess_key = \"x\"\nsecret_key = \"hunter2-secret\"\nbad = 1\n"));
  EXPECT_EQ(msg.find("hunter2-secret"), std::string::npos) << msg;
}

TEST(ConfigTest, Tiers) {
  const std::string local = "[[tiers]]\nname = \"w\"\nkind = \"local\"\npath = \"/w\"\n";
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nkind = \"local\"\npath = \"/w\"\n"), "tiers[1].name",
                      "missing");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"w\"\npath = \"/w\"\n"), "tiers[1].kind", "missing");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"w\"\nkind = \"tape\"\n"), "tiers[1].kind:", "tape");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"w\"\nkind = \"local\"\n"), "tiers[1].path",
                      "local");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"c\"\nkind = \"s3\"\n"), "tiers[1].endpoint", "s3");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"c\"\nkind = \"s3\"\nendpoint = \"ftp://x\"\n"),
                      "tiers[1].endpoint:");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"hot\"\nkind = \"local\"\npath = \"/x\"\n"),
                      "tiers[1].name:", "twice");
  EXPECT_CONFIG_ERROR(With("[[tiers]]\nname = \"\"\nkind = \"local\"\npath = \"/x\"\n"),
                      "tiers[1].name:");
  EXPECT_CONFIG_ERROR(With(local + "capacity = \"lots\"\n"), "tiers[1].capacity:");
  EXPECT_CONFIG_ERROR(With(local + "capacity = -5\n"), "tiers[1].capacity:");
  EXPECT_CONFIG_ERROR(With(local + "high_watermark = 0\n"), "tiers[1].high_watermark:");
  EXPECT_CONFIG_ERROR(With(local + "high_watermark = 1.5\n"), "tiers[1].high_watermark:");
  EXPECT_CONFIG_ERROR(With(local + "low_watermark = \"half\"\n"), "tiers[1].low_watermark:");
  EXPECT_CONFIG_ERROR(With(local + "low_watermark = 0.9\nhigh_watermark = 0.9\n"),
                      "tiers[1].low_watermark", "below");
  EXPECT_CONFIG_ERROR(With(local + "low_watermark = 0.97\n"), "tiers[1].low_watermark", "below");
  EXPECT_CONFIG_ERROR(
      With("[[tiers]]\nname = \"c\"\nkind = \"s3\"\nendpoint = \"http://x\"\ncapacity = 5\n"),
      "tiers[1].capacity:", "local");
  {
    auto r = ParseConfig(With(local + "high_watermark = 0.8\nlow_watermark = 0.5\n"), "t");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_DOUBLE_EQ(r->tiers[1].high_watermark, 0.8);
    EXPECT_DOUBLE_EQ(r->tiers[1].low_watermark, 0.5);
    EXPECT_DOUBLE_EQ(r->tiers[0].high_watermark, 0.95);  // the defaults
    EXPECT_DOUBLE_EQ(r->tiers[0].low_watermark, 0.85);
  }
  EXPECT_CONFIG_ERROR(With(local + "price_per_gb_month = -0.1\n"), "tiers[1].price_per_gb_month:");
  EXPECT_CONFIG_ERROR(With(local + "price_per_gb_month = \"1\"\n"), "tiers[1].price_per_gb_month:");
  EXPECT_CONFIG_ERROR(With(local + "endpoint = \"http://x\"\n"), "tiers[1].endpoint:", "s3");
  EXPECT_CONFIG_ERROR(
      With("[[tiers]]\nname = \"c\"\nkind = \"s3\"\nendpoint = \"http://x\"\npath = \"/p\"\n"),
      "tiers[1].path:");
  EXPECT_CONFIG_ERROR(
      With("[[tiers]]\nname = \"c\"\nkind = \"s3\"\nendpoint = \"http://x\"\naccess_key = \"a\"\n"),
      "tiers[1].secret_key");
  EXPECT_CONFIG_ERROR("tiers = []\n", "tiers:", "at least one");
}

TEST(ConfigTest, StorageClasses) {
  EXPECT_CONFIG_ERROR(With("[storage_classes]\nSTANDARD = \"nope\"\n"),
                      "storage_classes.STANDARD:", "nope");
  EXPECT_CONFIG_ERROR(With("[storage_classes]\nSTANDARD_IA = 3\n"), "storage_classes.STANDARD_IA:");
  EXPECT_CONFIG_ERROR(With("[storage_classes]\nHOT = \"hot\"\n"), "storage_classes.HOT:");
  // STANDARD absent: the tier named "hot" if any, else the first local tier.
  {
    auto r = ParseConfig(
        "[[tiers]]\nname = \"up\"\nkind = \"s3\"\nendpoint = \"http://x\"\n"
        "[[tiers]]\nname = \"nvme\"\nkind = \"local\"\npath = \"/n\"\n"
        "[storage_classes]\nGLACIER = \"up\"\n",
        "t");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_NE(r->HotTier(), nullptr);
    EXPECT_EQ(r->HotTier()->name, "nvme");
    EXPECT_EQ(r->storage_classes.at("GLACIER"), "up");
  }
  // The cold classes default to the upstream when no tier is named "cold".
  {
    auto r = ParseConfig(
        "[[tiers]]\nname = \"up\"\nkind = \"s3\"\nendpoint = \"http://x\"\n"
        "[[tiers]]\nname = \"hot\"\nkind = \"local\"\npath = \"/n\"\n",
        "t");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->storage_classes.at("GLACIER"), "up");
    EXPECT_EQ(r->storage_classes.at("GLACIER_IR"), "up");
    ASSERT_NE(r->TierOfClass("COLD"), nullptr);
    EXPECT_EQ(r->TierOfClass("COLD")->name, "up");
    EXPECT_EQ(r->TierOfClass("HOT")->name, "hot");
    EXPECT_EQ(r->TierOfClass("WARM"), nullptr);         // no warm tier declared
    EXPECT_EQ(r->TierOfClass("STANDARD_IA"), nullptr);  // nor a default for it
    EXPECT_EQ(r->TierOfClass("ONEZONE_IA"), nullptr);
  }
  // No local tier to default to.
  EXPECT_CONFIG_ERROR(
      "[[tiers]]\nname = \"up\"\nkind = \"s3\"\nendpoint = \"http://x\"\n"
      "[storage_classes]\nGLACIER = \"up\"\n",
      "storage_classes.STANDARD");
  EXPECT_CONFIG_ERROR("[[tiers]]\nname = \"up\"\nkind = \"s3\"\nendpoint = \"http://x\"\n",
                      "storage_classes.STANDARD");
  // STANDARD may map to any declared tier, even an upstream one.
  auto r = ParseConfig(
      "[[tiers]]\nname = \"up\"\nkind = \"s3\"\nendpoint = \"http://x\"\n"
      "[storage_classes]\nSTANDARD = \"up\"\n",
      "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->HotTier()->name, "up");
}

TEST(ConfigTest, WritebackAndLifecycle) {
  EXPECT_CONFIG_ERROR(With("[writeback]\ndelay = 5\n"), "writeback.delay:");
  EXPECT_CONFIG_ERROR(With("[writeback]\ndelay = \"5\"\n"), "writeback.delay:", "unit");
  EXPECT_CONFIG_ERROR(With("[lifecycle]\nday = \"0s\"\n"), "lifecycle.day:");
  EXPECT_CONFIG_ERROR(With("[lifecycle]\ninterval = \"1y\"\n"), "lifecycle.interval:", "unit");
  auto r = ParseConfig(With("[writeback]\ndelay = \"0s\"\n"), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->writeback.delay, milliseconds(0));
  EXPECT_EQ(r->writeback.dirty_limit, 10ull << 30);
  EXPECT_EQ(r->UpstreamTier(), nullptr);
  EXPECT_CONFIG_ERROR(With("[writeback]\ndirty_limit = \"lots\"\n"), "writeback.dirty_limit:");
  EXPECT_CONFIG_ERROR(With("[writeback]\ndirty_limit = -1\n"), "writeback.dirty_limit:");
  r = ParseConfig(With("[writeback]\ndirty_limit = \"1MiB\"\n"), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->writeback.dirty_limit, 1u << 20);
}

TEST(ConfigTest, Prefetch) {
  auto r = ParseConfig(With(""), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->prefetch.learned);
  EXPECT_EQ(r->prefetch.scan_threshold, 8);
  EXPECT_EQ(r->prefetch.scan_window, milliseconds(30'000));
  EXPECT_EQ(r->prefetch.budget, 4ull << 30);
  EXPECT_EQ(r->prefetch.concurrency, 4);
  r = ParseConfig(With("[prefetch]\nlearned = false\nscan_threshold = 3\nscan_window = "
                       "\"5s\"\nbudget = \"256MiB\"\nconcurrency = 16\n"),
                  "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->prefetch.learned);
  EXPECT_EQ(r->prefetch.scan_threshold, 3);
  EXPECT_EQ(r->prefetch.scan_window, milliseconds(5'000));
  EXPECT_EQ(r->prefetch.budget, 256u << 20);
  EXPECT_EQ(r->prefetch.concurrency, 16);
  EXPECT_CONFIG_ERROR(With("[prefetch]\nlearned = 1\n"), "prefetch.learned:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nscan_threshold = 1\n"),
                      "prefetch.scan_threshold:", "from 2");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nscan_threshold = \"8\"\n"), "prefetch.scan_threshold:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nconcurrency = 0\n"), "prefetch.concurrency:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nconcurrency = 100000\n"), "prefetch.concurrency:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nscan_window = \"0s\"\n"), "prefetch.scan_window:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nbudget = \"lots\"\n"), "prefetch.budget:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nbudget = -5\n"), "prefetch.budget:");
  EXPECT_CONFIG_ERROR(With("[prefetch]\nscan = 3\n"), "prefetch.scan: unknown key");
  EXPECT_CONFIG_ERROR(With("prefetch = 3\n"), "prefetch");
}

TEST(ConfigTest, UpstreamTierAndRevalidation) {
  const std::string cold = "[[tiers]]\nname = \"cold\"\nkind = \"s3\"\nendpoint = \"http://x\"\n";
  auto r = ParseConfig(With(cold + "revalidate_after = \"2s\"\n"), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_NE(r->UpstreamTier(), nullptr);
  EXPECT_EQ(r->UpstreamTier()->name, "cold");
  EXPECT_EQ(r->UpstreamTier()->revalidate_after, milliseconds(2'000));
  EXPECT_CONFIG_ERROR(With(cold + "revalidate_after = 2\n"), "tiers[1].revalidate_after:");
  auto with_ca = ParseConfig(With(cold + "ca_file = \"/etc/upstream-ca.pem\"\n"), "t");
  ASSERT_TRUE(with_ca.ok()) << with_ca.error().message;
  EXPECT_EQ(with_ca->UpstreamTier()->ca_file, "/etc/upstream-ca.pem");
  EXPECT_CONFIG_ERROR(With(cold + "ca_file = \"\"\n"), "tiers[1].ca_file:");
  EXPECT_CONFIG_ERROR(
      With("[[tiers]]\nname = \"w\"\nkind = \"local\"\npath = \"/p\"\nca_file = \"/c\"\n"),
      "tiers[1].ca_file:", "s3");
  EXPECT_CONFIG_ERROR(With(cold + "revalidate_after = \"2 fortnights\"\n"),
                      "tiers[1].revalidate_after:");
  EXPECT_CONFIG_ERROR(
      With("[[tiers]]\nname = \"w\"\nkind = \"local\"\npath = \"/p\"\nrevalidate_after = \"2s\"\n"),
      "tiers[1].revalidate_after:", "s3");
}

// A [cluster] section with every required key; tests replace or add one line.
constexpr std::string_view kCluster = R"toml(
[cluster]
node = "gw-a"
peer_listen = "127.0.0.1:9100"
etcd = ["http://127.0.0.1:2379"]
secret = "0123456789abcdef"
)toml";

std::string Cluster(std::string_view extra) {
  return With(std::string(kCluster) + std::string(extra));
}

// kCluster without the line that starts with `key`.
std::string ClusterWithout(std::string_view key) {
  std::string s(kCluster);
  const auto at = s.find("\n" + std::string(key) + " =");
  s.erase(at + 1, s.find('\n', at + 1) - at);
  return With(s);
}

TEST(ConfigTest, NoClusterSection) {
  auto r = ParseConfig(With(""), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->cluster.has_value());
  auto embedded = ParseConfig(EmbeddedDefaultConfig(), "<embedded>");
  ASSERT_TRUE(embedded.ok()) << embedded.error().message;
  EXPECT_FALSE(embedded->cluster.has_value());
}

TEST(ConfigTest, ClusterDefaults) {
  auto r = ParseConfig(Cluster(""), "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->cluster.has_value());
  const ClusterConfig& c = *r->cluster;
  EXPECT_EQ(c.node, "gw-a");
  EXPECT_EQ(c.zone, "default");
  EXPECT_EQ(c.peer_listen, "127.0.0.1:9100");
  EXPECT_EQ(c.etcd, std::vector<std::string>{"http://127.0.0.1:2379"});
  EXPECT_EQ(c.replicas, 3);
  EXPECT_EQ(c.secret, "0123456789abcdef");
  EXPECT_EQ(c.lease_ttl, milliseconds(5'000));
  EXPECT_EQ(c.name, "strata");
  EXPECT_EQ(c.transport, ClusterTransport::kAuto);
  EXPECT_EQ(c.move_rate, std::uint64_t{256} << 20);
  EXPECT_EQ(c.read_cache, std::uint64_t{4} << 30);
}

TEST(ConfigTest, ClusterTransport) {
  for (const auto& [text, kind] :
       {std::pair{"auto", ClusterTransport::kAuto}, std::pair{"tcp", ClusterTransport::kTcp},
        std::pair{"rdma", ClusterTransport::kRdma}}) {
    auto r = ParseConfig(Cluster("transport = \"" + std::string(text) + "\"\n"), "t");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->cluster->transport, kind) << text;
  }
  EXPECT_CONFIG_ERROR(Cluster("transport = \"infiniband\"\n"),
                      "cluster.transport:", "\"auto\", \"tcp\" or \"rdma\"");
  EXPECT_CONFIG_ERROR(Cluster("transport = \"RDMA\"\n"), "cluster.transport:", "auto");
  EXPECT_CONFIG_ERROR(Cluster("transport = 1\n"), "cluster.transport:", "string");
}

TEST(ConfigTest, ClusterEveryKey) {
  auto r = ParseConfig(Cluster("zone = \"rack-1\"\nreplicas = 1\nlease_ttl = \"2s\"\n"
                               "name = \"prod.eu-1\"\nmove_rate = \"40MiB\"\nread_cache = \"0\"\n"),
                       "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->cluster->read_cache, 0u);
  EXPECT_EQ(r->cluster->move_rate, std::uint64_t{40} << 20);
  EXPECT_EQ(r->cluster->zone, "rack-1");
  EXPECT_EQ(r->cluster->replicas, 1);
  EXPECT_EQ(r->cluster->lease_ttl, milliseconds(2'000));
  EXPECT_EQ(r->cluster->name, "prod.eu-1");
  auto several =
      ParseConfig(With("[cluster]\nnode = \"n_1\"\npeer_listen = \"[::1]:9100\"\nsecret = "
                       "\"abcdefghijklmnopqrstuvwxyz\"\netcd = [\"http://10.0.0.1:2379\", "
                       "\"http://etcd-b:2379/\"]\nlease_ttl = \"1m\"\nreplicas = 16\n"),
                  "t");
  ASSERT_TRUE(several.ok()) << several.error().message;
  EXPECT_EQ(several->cluster->etcd.size(), 2u);
  EXPECT_EQ(several->cluster->peer_listen, "[::1]:9100");
  EXPECT_EQ(several->cluster->lease_ttl, milliseconds(60'000));
}

TEST(ConfigTest, ClusterRequiredKeys) {
  for (std::string_view key : {"node", "peer_listen", "etcd", "secret"}) {
    const std::string name = "cluster." + std::string(key);
    EXPECT_CONFIG_ERROR(ClusterWithout(key), std::string_view(name), std::string_view("missing"));
  }
  EXPECT_CONFIG_ERROR(With("[cluster]\n"), "cluster.", "missing");
  EXPECT_CONFIG_ERROR("cluster = 1\n" + std::string(kMinimal), "cluster", "table");
}

TEST(ConfigTest, ClusterBadValues) {
  EXPECT_CONFIG_ERROR(Cluster("other = 1\n"), "cluster.other", "unknown key");
  EXPECT_CONFIG_ERROR(Cluster("").replace(Cluster("").find("node = \"gw-a\""), 13, "node = \"\""),
                      "cluster.node:", "empty");
  EXPECT_CONFIG_ERROR(
      Cluster("").replace(Cluster("").find("node = \"gw-a\""), 13, "node = \"gw/a\""),
      "cluster.node:", "letters");
  EXPECT_CONFIG_ERROR(Cluster("name = \"a b\"\n"), "cluster.name:", "letters");
  EXPECT_CONFIG_ERROR(Cluster("name = \"" + std::string(65, 'x') + "\"\n"), "cluster.name:", "64");
  EXPECT_CONFIG_ERROR(Cluster("zone = \"\"\n"), "cluster.zone:", "empty");
  EXPECT_CONFIG_ERROR(Cluster("zone = 3\n"), "cluster.zone:", "string");
  EXPECT_CONFIG_ERROR(Cluster("replicas = 0\n"), "cluster.replicas:", "1 to 16");
  EXPECT_CONFIG_ERROR(Cluster("replicas = -2\n"), "cluster.replicas:");
  EXPECT_CONFIG_ERROR(Cluster("replicas = \"3\"\n"), "cluster.replicas:", "integer");
  EXPECT_CONFIG_ERROR(Cluster("lease_ttl = \"1s\"\n"), "cluster.lease_ttl:", "at least 2s");
  EXPECT_CONFIG_ERROR(Cluster("lease_ttl = \"1999ms\"\n"), "cluster.lease_ttl:", "at least 2s");
  EXPECT_CONFIG_ERROR(Cluster("lease_ttl = \"2500ms\"\n"), "cluster.lease_ttl:", "whole");
  EXPECT_CONFIG_ERROR(Cluster("lease_ttl = 5\n"), "cluster.lease_ttl:", "duration");
  EXPECT_CONFIG_ERROR(Cluster("lease_ttl = \"0s\"\n"), "cluster.lease_ttl:");
  EXPECT_CONFIG_ERROR(Cluster("move_rate = 0\n"), "cluster.move_rate:", "more than 0");
  EXPECT_CONFIG_ERROR(Cluster("move_rate = \"fast\"\n"), "cluster.move_rate:");
  EXPECT_CONFIG_ERROR(Cluster("read_cache = \"lots\"\n"), "cluster.read_cache:");
  EXPECT_CONFIG_ERROR(Cluster("read_cache = -1\n"), "cluster.read_cache:");
  const auto replace = [](std::string_view from, std::string_view to) {
    std::string s = Cluster("");
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_CONFIG_ERROR(replace("\"127.0.0.1:9100\"", "\"127.0.0.1\""),
                      "cluster.peer_listen:", "port");
  EXPECT_CONFIG_ERROR(replace("\"127.0.0.1:9100\"", "9100"), "cluster.peer_listen:", "string");
  EXPECT_CONFIG_ERROR(replace("[\"http://127.0.0.1:2379\"]", "[]"),
                      "cluster.etcd:", "at least one");
  EXPECT_CONFIG_ERROR(replace("[\"http://127.0.0.1:2379\"]", "\"http://127.0.0.1:2379\""),
                      "cluster.etcd:", "list");
  EXPECT_CONFIG_ERROR(replace("\"http://127.0.0.1:2379\"", "\"127.0.0.1:2379\""),
                      "cluster.etcd[0]:", "http://");
  EXPECT_CONFIG_ERROR(replace("\"http://127.0.0.1:2379\"", "\"https://127.0.0.1:2379\""),
                      "cluster.etcd[0]:", "https");
  EXPECT_CONFIG_ERROR(replace("\"http://127.0.0.1:2379\"", "\"http://127.0.0.1\""),
                      "cluster.etcd[0]:", "port");
  EXPECT_CONFIG_ERROR(replace("\"http://127.0.0.1:2379\"", "\"http://h:1\", 5"),
                      "cluster.etcd[1]:", "string");
  EXPECT_CONFIG_ERROR(replace("\"http://127.0.0.1:2379\"", "\"http://h:1\", \"http://h:1\""),
                      "cluster.etcd[1]:", "twice");
  EXPECT_CONFIG_ERROR(replace("\"0123456789abcdef\"", "\"short\""),
                      "cluster.secret:", "at least 16");
  EXPECT_CONFIG_ERROR(replace("\"0123456789abcdef\"", "16"), "cluster.secret:", "string");
}

TEST(ConfigTest, ClusterSecretNeverInMessages) {
  std::string s = Cluster("");
  s.replace(s.find("\"0123456789abcdef\""), 18, "\"hunter2\"");
  const std::string msg = ParseError(s);
  EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
}

TEST(ConfigTest, LoadConfigFile) {
  auto missing = LoadConfigFile("/nonexistent/dir/strata.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/dir/strata.toml"), std::string::npos);

  char path[] = "/tmp/strata_config_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "[server]\nthreads = -2\n";
  }
  auto bad = LoadConfigFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(std::string(path) + ":2:"), std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("server.threads"), std::string::npos);
  {
    std::ofstream out(path);
    out << EmbeddedDefaultConfig();
  }
  auto good = LoadConfigFile(path);
  EXPECT_TRUE(good.ok()) << good.error().message;
  std::remove(path);
}

TEST(ParseByteSizeTest, Units) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("1000"), 1000u);
  EXPECT_EQ(*ParseByteSize("4B"), 4u);
  EXPECT_EQ(*ParseByteSize("16KiB"), 16u * 1024);
  EXPECT_EQ(*ParseByteSize("4KB"), 4000u);
  EXPECT_EQ(*ParseByteSize("512MB"), 512'000'000u);
  EXPECT_EQ(*ParseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseByteSize("20GiB"), 20ull << 30);
  EXPECT_EQ(*ParseByteSize("20gib"), 20ull << 30);
  EXPECT_EQ(*ParseByteSize("3TiB"), 3ull << 40);
  EXPECT_EQ(*ParseByteSize("2PiB"), 2ull << 50);
  EXPECT_EQ(*ParseByteSize(" 7 GB "), 7'000'000'000u);
  EXPECT_EQ(*ParseByteSize("18446744073709551615"), 18446744073709551615ull);
}

TEST(ParseByteSizeTest, Errors) {
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("   ").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("-1GiB").ok());
  EXPECT_FALSE(ParseByteSize("GiB").ok());
  EXPECT_FALSE(ParseByteSize("10XB").ok());
  EXPECT_FALSE(ParseByteSize("10 GiBs").ok());
  EXPECT_FALSE(ParseByteSize("1.5GiB").ok());
  EXPECT_FALSE(ParseByteSize("0x10").ok());
  EXPECT_FALSE(ParseByteSize("18446744073709551616").ok());  // 2^64
  EXPECT_FALSE(ParseByteSize("99999999999999999999999").ok());
  EXPECT_FALSE(ParseByteSize("16384PiB").ok());  // 2^64: overflows in the multiplication
  EXPECT_TRUE(ParseByteSize("16383PiB").ok());
  EXPECT_NE(ParseByteSize("10XB").error().message.find("unknown unit"), std::string::npos);
  EXPECT_NE(ParseByteSize("-1").error().message.find("negative"), std::string::npos);
  EXPECT_NE(ParseByteSize("16384PiB").error().message.find("too large"), std::string::npos);
}

TEST(ParseDurationTest, Units) {
  EXPECT_EQ(*ParseDuration("5s"), milliseconds(5'000));
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("2m"), milliseconds(120'000));
  EXPECT_EQ(*ParseDuration("1h"), milliseconds(3'600'000));
  EXPECT_EQ(*ParseDuration("86400s"), milliseconds(86'400'000));
  EXPECT_EQ(*ParseDuration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(*ParseDuration("0s"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1s500ms"), milliseconds(1'500));
}

TEST(ParseDurationTest, Errors) {
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("5").ok());  // a unit is required
  EXPECT_FALSE(ParseDuration("-5s").ok());
  EXPECT_FALSE(ParseDuration("s").ok());
  EXPECT_FALSE(ParseDuration("5 s").ok());
  EXPECT_FALSE(ParseDuration("5sec").ok());
  EXPECT_FALSE(ParseDuration("5S").ok());
  EXPECT_FALSE(ParseDuration("1.5s").ok());
  EXPECT_FALSE(ParseDuration("5y").ok());
  EXPECT_FALSE(ParseDuration("1s-").ok());
  EXPECT_FALSE(ParseDuration("99999999999999999999s").ok());     // overflows the integer
  EXPECT_FALSE(ParseDuration("9223372036854775807s").ok());      // overflows the ms multiply
  EXPECT_FALSE(ParseDuration("9223372036854775807ms1ms").ok());  // overflows the sum
  EXPECT_TRUE(ParseDuration("9223372036854775807ms").ok());
  EXPECT_NE(ParseDuration("5y").error().message.find("unknown unit"), std::string::npos);
  EXPECT_NE(ParseDuration("-5s").error().message.find("negative"), std::string::npos);
  EXPECT_NE(ParseDuration("9223372036854775807s").error().message.find("too large"),
            std::string::npos);
}

TEST(LogTest, SetLogLevel) {
  EXPECT_TRUE(SetLogLevel("debug"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  EXPECT_TRUE(SetLogLevel("warn"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
  EXPECT_TRUE(SetLogLevel("off"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::off);
  EXPECT_FALSE(SetLogLevel("loud"));
  EXPECT_FALSE(SetLogLevel(""));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::off);  // unchanged by a bad name
  EXPECT_TRUE(SetLogLevel("INFO"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::info);
}

}  // namespace
}  // namespace strata
