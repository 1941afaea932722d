// strata-admin: talks to a running strata's admin API, found through the same config
// file the server reads (its listen address and an admin user).
//
//   strata-admin --config FILE user create [NAME] [--admin]   (NAME: generated when omitted)
//   strata-admin --config FILE user list
//   strata-admin --config FILE user delete NAME
//   strata-admin --config FILE user key add NAME | key remove NAME KEY
//   strata-admin --config FILE user admin NAME true|false
//   strata-admin --config FILE usage [--json]
//   strata-admin --config FILE prefetch start|list|status|cancel ...
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "auth/signer.h"
#include "common/config.h"
#include "tools/admin/cluster_table.h"
#include "tools/admin/prefetch_progress.h"
#include "tools/admin/usage_table.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using strata::Config;

int Usage() {
  std::fprintf(stderr,
               "usage: strata-admin [--config FILE] user create [NAME] [--admin]\n"
               "       strata-admin [--config FILE] user list\n"
               "       strata-admin [--config FILE] user delete NAME\n"
               "       strata-admin [--config FILE] user key add NAME | key remove NAME KEY\n"
               "       strata-admin [--config FILE] user admin NAME true|false\n"
               "       strata-admin [--config FILE] writeback\n"
               "       strata-admin [--config FILE] flush [--timeout SECONDS]\n"
               "       strata-admin [--config FILE] evict BUCKET KEY [VERSION]\n"
               "       strata-admin [--config FILE] usage [--json]\n"
               "       strata-admin [--config FILE] prefetch start BUCKET [PREFIX] "
               "[--budget SIZE] [--wait]\n"
               "       strata-admin [--config FILE] prefetch list | status ID | cancel ID\n"
               "       strata-admin [--config FILE] scrub status | start [--wait [SECONDS]]\n"
               "       strata-admin [--config FILE] cluster status [--json]\n"
               "       strata-admin [--config FILE] cluster drain NODE [--wait [SECONDS]]\n"
               "  writeback  the write-back backlog: objects, bytes, age of the oldest, failing\n"
               "  flush      pushes the backlog upstream now and waits until it is empty\n"
               "             (exit 0), or until the timeout (default 60 s; exit 1)\n"
               "  evict      frees the local copy of a key (or of one version) the upstream\n"
               "             has (the next GET reads it through again)\n"
               "  usage      objects, bytes and the month's cost per bucket and tier, as a\n"
               "             table (or the server's JSON with --json)\n"
               "  prefetch   fetches the objects under PREFIX from the upstream onto the hot\n"
               "             tier as a background job, up to SIZE bytes (\"20GiB\"); --wait\n"
               "             prints its progress until it ends (exit 0 when done)\n"
               "  scrub      the scrubber's state (copies and bytes verified, damage found,\n"
               "             repaired, unrepairable); start runs a pass now, --wait until it\n"
               "             has completed (default at most 3600 s; exit 1 past it)\n"
               "  cluster    the gateway's view of its cluster: members, zones, epoch,\n"
               "             whether it accepts writes, and a ping of each member over the\n"
               "             peer transport; drain hands NODE's keys to their next owners\n"
               "             in the background (--wait: until it owns none and may be\n"
               "             stopped, default at most 3600 s; exit 1 past it)\n");
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "strata-admin: %s\n", message.c_str());
  return 1;
}

// An AWS-shaped access key id: 20 upper-case letters and digits.
std::string NewAccessKey() {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::string key = "SK";
  while (key.size() < 20) {
    key += kAlphabet[rd() % 36];
  }
  return key;
}

struct Target {
  std::string host;
  std::string port;
};

// The first listen address, with wildcard addresses replaced by loopback.
Target ServerAddress(const Config& config) {
  std::string listen = config.server.listen.front();
  auto colon = listen.rfind(':');
  Target t{listen.substr(0, colon), listen.substr(colon + 1)};
  if (t.host == "0.0.0.0" || t.host.empty()) {
    t.host = "127.0.0.1";
  }
  if (t.host == "[::]") {
    t.host = "[::1]";
  }
  if (t.host.size() > 2 && t.host.front() == '[') {
    t.host = t.host.substr(1, t.host.size() - 2);
  }
  return t;
}

// Sends `req` and prints the answer's body, or hands it to `take_body` when given.
template <typename Stream>
int Exchange(Stream& stream, http::request<http::string_body>& req,
             const std::function<int(const std::string&)>& take_body) {
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  if (res.result_int() >= 300) {
    std::fprintf(stderr, "strata-admin: server answered %u\n%s\n", res.result_int(),
                 res.body().c_str());
    return 1;
  }
  if (take_body) {
    return take_body(res.body());
  }
  if (!res.body().empty()) {
    std::printf("%s\n", res.body().c_str());
  }
  return 0;
}

int Call(const Config& config, http::verb verb, const std::string& path, const std::string& query,
         const std::function<int(const std::string&)>& take_body = nullptr) {
  const strata::UserConfig* admin = nullptr;
  for (const auto& u : config.users) {
    if (u.admin) {
      admin = &u;
      break;
    }
  }
  if (admin == nullptr) {
    return Fail("the config has no [[users]] entry with admin = true");
  }
  Target target = ServerAddress(config);
  std::string host_header =
      (target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host) + ":" +
      target.port;

  strata::auth::SignRequest sign;
  sign.method = std::string(http::to_string(verb));
  sign.raw_path = path;
  sign.raw_query = query;
  sign.headers.emplace_back("host", host_header);
  sign.payload_sha256 = strata::auth::Sha256Hex("");
  strata::auth::SignV4(sign, {admin->access_key, admin->secret_key, true}, config.server.region,
                       "s3", std::chrono::system_clock::now());

  http::request<http::string_body> req(verb, query.empty() ? path : path + "?" + query, 11);
  for (const auto& [name, value] : sign.headers) {
    req.set(name, value);
  }
  req.prepare_payload();

  try {
    asio::io_context ioc;
    asio::ip::tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(target.host, target.port);
    if (config.server.tls_enabled()) {
      // The admin API is reached on the operator's own machine; the server's certificate
      // is often self-signed, so it is not verified here.
      asio::ssl::context tls(asio::ssl::context::tls_client);
      tls.set_verify_mode(asio::ssl::verify_none);
      beast::ssl_stream<beast::tcp_stream> stream(ioc, tls);
      beast::get_lowest_layer(stream).connect(endpoints);
      stream.handshake(asio::ssl::stream_base::client);
      return Exchange(stream, req, take_body);
    }
    beast::tcp_stream stream(ioc);
    stream.connect(endpoints);
    return Exchange(stream, req, take_body);
  } catch (const std::exception& e) {
    return Fail("cannot reach strata at " + host_header + ": " + e.what());
  }
}

// `cluster drain NODE [--wait [SECONDS]]`: starts the drain through this gateway; with
// --wait, polls the cluster view (this gateway's, which the drained member's announcement
// reaches within a watch's latency) until NODE is drained.
int DrainNode(const Config& config, const std::vector<std::string>& args) {
  const std::string& node = args[2];
  bool wait = false;
  long seconds = 3600;
  for (std::size_t i = 3; i < args.size(); ++i) {
    if (args[i] != "--wait" || wait) {
      return Usage();
    }
    wait = true;
    if (i + 1 < args.size()) {
      char* end = nullptr;
      seconds = std::strtol(args[i + 1].c_str(), &end, 10);
      if (end == args[i + 1].c_str() || *end != '\0' || seconds <= 0) {
        return Usage();
      }
      ++i;
    }
  }
  const int rc = Call(config, http::verb::post, "/_strata/admin/cluster/drain",
                      "node=" + strata::auth::UriEncode(node, true));
  if (rc != 0 || !wait) {
    return rc;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string last;
  for (;;) {
    std::optional<std::string> state;
    const int polled = Call(config, http::verb::get, "/_strata/admin/cluster", "probe=false",
                            [&](const std::string& body) {
                              state = strata::admin::MemberStateOf(body, node);
                              return state ? 0 : Fail("no member " + node + " in: " + body);
                            });
    if (polled != 0) {
      return polled;
    }
    const std::string line = node + ": " + *state;
    if (line != last) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      last = line;
    }
    if (*state == "drained") {
      return 0;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Fail(node + " is not drained after " + std::to_string(seconds) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// Polls job `id` until it ends, printing a line whenever its progress changes.
int WaitForJob(const Config& config, std::uint64_t id) {
  std::string last;
  for (;;) {
    std::optional<strata::admin::JobProgress> job;
    const int rc = Call(config, http::verb::get, "/_strata/admin/prefetch/" + std::to_string(id),
                        "", [&job](const std::string& body) {
                          job = strata::admin::ParseJobProgress(body);
                          return job ? 0 : Fail("not a prefetch job: " + body);
                        });
    if (rc != 0) {
      return rc;
    }
    const std::string line = strata::admin::ProgressLine(*job);
    if (line != last) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      last = line;
    }
    if (job->state != "running") {
      return job->state == "done" ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int Prefetch(const Config& config, const std::vector<std::string>& args) {
  const std::string jobs = "/_strata/admin/prefetch";
  if (args[1] == "list" && args.size() == 2) {
    return Call(config, http::verb::get, jobs, "");
  }
  if ((args[1] == "status" || args[1] == "cancel") && args.size() == 3) {
    return Call(config, args[1] == "status" ? http::verb::get : http::verb::delete_,
                jobs + "/" + strata::auth::UriEncode(args[2], true), "");
  }
  if (args[1] != "start" || args.size() < 3) {
    return Usage();
  }
  std::string query = "bucket=" + strata::auth::UriEncode(args[2], true);
  bool wait = false;
  bool prefix_given = false;
  for (std::size_t i = 3; i < args.size(); ++i) {
    if (args[i] == "--wait") {
      wait = true;
    } else if (args[i] == "--budget" && i + 1 < args.size()) {
      query += "&budget=" + strata::auth::UriEncode(args[++i], true);
    } else if (!prefix_given && !args[i].starts_with("--")) {
      query += "&prefix=" + strata::auth::UriEncode(args[i], true);
      prefix_given = true;
    } else {
      return Usage();
    }
  }
  std::optional<strata::admin::JobProgress> started;
  const int rc = Call(config, http::verb::post, jobs, query, [&](const std::string& body) {
    std::printf("%s\n", body.c_str());
    std::fflush(stdout);
    started = strata::admin::ParseJobProgress(body);
    return started ? 0 : Fail("not a prefetch job: " + body);
  });
  if (rc != 0 || !wait) {
    return rc;
  }
  return WaitForJob(config, started->id);
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      args.push_back(arg);
    }
  }
  auto config = config_path.empty()
                    ? strata::ParseConfig(strata::EmbeddedDefaultConfig(), "<embedded>")
                    : strata::LoadConfigFile(config_path);
  if (!config.ok()) {
    return Fail(config.error().message);
  }
  if (args.size() >= 2 && args[0] == "user") {
    if (args[1] == "list" && args.size() == 2) {
      return Call(*config, http::verb::get, "/_strata/admin/users", "");
    }
    if (args[1] == "create") {
      bool admin = false;
      std::string name;
      for (std::size_t i = 2; i < args.size(); ++i) {
        if (args[i] == "--admin") {
          admin = true;
        } else if (name.empty()) {
          name = args[i];
        } else {
          return Usage();
        }
      }
      if (name.empty()) {
        name = NewAccessKey();
      }
      return Call(*config, http::verb::put, "/_strata/admin/users/" + name,
                  admin ? "admin=true" : "");
    }
    if (args[1] == "delete" && args.size() == 3) {
      return Call(*config, http::verb::delete_, "/_strata/admin/users/" + args[2], "");
    }
    // Key rotation: a new key beside the old ones, then the old one removed.
    if (args[1] == "key" && args.size() == 4 && args[2] == "add") {
      return Call(*config, http::verb::put, "/_strata/admin/users/" + args[3] + "/keys", "");
    }
    if (args[1] == "key" && args.size() == 5 && args[2] == "remove") {
      return Call(*config, http::verb::delete_,
                  "/_strata/admin/users/" + args[3] + "/keys/" + args[4], "");
    }
    if (args[1] == "admin" && args.size() == 4 && (args[3] == "true" || args[3] == "false")) {
      return Call(*config, http::verb::put, "/_strata/admin/users/" + args[2] + "/admin",
                  "value=" + args[3]);
    }
  }
  if ((args.size() == 3 || args.size() == 4) && args[0] == "evict") {
    std::string query = "bucket=" + strata::auth::UriEncode(args[1], true) +
                        "&key=" + strata::auth::UriEncode(args[2], true);
    if (args.size() == 4) {
      query += "&versionId=" + strata::auth::UriEncode(args[3], true);
    }
    return Call(*config, http::verb::post, "/_strata/admin/evict", query);
  }
  if (!args.empty() && args[0] == "usage") {
    if (args.size() == 2 && args[1] == "--json") {
      return Call(*config, http::verb::get, "/_strata/admin/usage", "");
    }
    if (args.size() != 1) {
      return Usage();
    }
    return Call(*config, http::verb::get, "/_strata/admin/usage", "", [](const std::string& body) {
      auto table = strata::admin::UsageTable(body);
      if (!table) {
        return Fail("the server's usage report is not the expected JSON: " + body);
      }
      std::fputs(table->c_str(), stdout);
      return 0;
    });
  }
  if (args.size() >= 2 && args[0] == "prefetch") {
    return Prefetch(*config, args);
  }
  if (args.size() == 1 && args[0] == "writeback") {
    return Call(*config, http::verb::get, "/_strata/admin/writeback", "");
  }
  if (args.size() >= 2 && args[0] == "cluster" && args[1] == "status") {
    if (args.size() == 3 && args[2] == "--json") {
      return Call(*config, http::verb::get, "/_strata/admin/cluster", "");
    }
    if (args.size() != 2) {
      return Usage();
    }
    return Call(*config, http::verb::get, "/_strata/admin/cluster", "",
                [](const std::string& body) {
                  auto table = strata::admin::ClusterTable(body);
                  if (!table) {
                    return Fail("the server's cluster view is not the expected JSON: " + body);
                  }
                  std::fputs(table->c_str(), stdout);
                  return 0;
                });
  }
  if (args.size() >= 3 && args[0] == "cluster" && args[1] == "drain") {
    return DrainNode(*config, args);
  }
  if (args.size() == 2 && args[0] == "scrub" && args[1] == "status") {
    return Call(*config, http::verb::get, "/_strata/admin/scrub", "");
  }
  if (args.size() >= 2 && args[0] == "scrub" && args[1] == "start") {
    auto digits = [](const std::string& v) {
      return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
    };
    std::string wait = "0";
    if (args.size() >= 3 && args[2] == "--wait") {
      wait = "3600";
      if (args.size() == 4 && digits(args[3])) {
        wait = args[3];
      } else if (args.size() != 3) {
        return Usage();
      }
    } else if (args.size() != 2) {
      return Usage();
    }
    return Call(*config, http::verb::post, "/_strata/admin/scrub", "wait=" + wait);
  }
  if (!args.empty() && args[0] == "flush") {
    std::string timeout = "60";
    if (args.size() == 3 && args[1] == "--timeout" && !args[2].empty() &&
        args[2].find_first_not_of("0123456789") == std::string::npos) {
      timeout = args[2];
    } else if (args.size() != 1) {
      return Usage();
    }
    return Call(*config, http::verb::post, "/_strata/admin/flush", "timeout=" + timeout);
  }
  return Usage();
}
