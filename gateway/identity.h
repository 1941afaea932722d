// How S3 names strata's users: in policies (an IAM user ARN), as owners in XML (a
// canonical id and a display name). Pure functions; thread-safe.
//
// A user's name is the name its access keys are recorded under (a user made before names
// were is named as its first key); its canonical id is derived from the name, so every
// gateway of a cluster computes the same one without storing it, and it outlives the
// rotation of the user's keys.
#pragma once

#include <string>
#include <string_view>

#include "auth/credential_store.h"
#include "gateway/xml.h"

namespace strata::gateway {

// A user's name: its keys' user, or the key itself for a key without one.
std::string_view UserName(const auth::Credential& user);
// How a policy names a strata user: "arn:aws:iam:::user/<name>" (an ARN without an
// account, as Ceph RGW names the users of its default tenant).
std::string UserArn(std::string_view user_name);
// The canonical id S3 shows for a user: 64 lower-case hex digits, a hash of its name.
std::string CanonicalUserId(std::string_view user_name);
// A user's ARN and canonical id together, as a policy's evaluation needs both for every
// request: the last user's, kept per thread (valid until the thread's next call).
struct UserIds {
  std::string name;
  std::string arn;
  std::string canonical_id;
};
const UserIds& IdsOf(std::string_view user_name);

// <element><ID>canonical id</ID><DisplayName>name</DisplayName></element>, as S3 writes an
// Owner or an Initiator.
void WriteOwner(XmlWriter& xml, std::string_view element, std::string_view user_name);

}  // namespace strata::gateway
