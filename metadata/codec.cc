#include "metadata/codec.h"

#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace strata::metadata {

void Encoder::PutVarint(std::uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void Encoder::PutSignedVarint(std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  PutVarint((u << 1) ^ (v < 0 ? ~std::uint64_t{0} : 0));
}

void Encoder::PutString(std::string_view s) {
  PutVarint(s.size());
  out_.append(s);
}

void Encoder::PutBigEndian64(std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

bool Decoder::GetByte(std::uint8_t* b) {
  if (in_.empty()) {
    return false;
  }
  *b = static_cast<std::uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

bool Decoder::GetVarint(std::uint64_t* v) {
  std::uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in_.empty()) {
      in_ = {};
      return false;
    }
    const auto byte = static_cast<std::uint8_t>(in_[0]);
    in_.remove_prefix(1);
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (shift == 63 && byte > 1) {
      in_ = {};
      return false;
    }
    result |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  in_ = {};
  return false;
}

bool Decoder::GetSignedVarint(std::int64_t* v) {
  std::uint64_t u = 0;
  if (!GetVarint(&u)) {
    return false;
  }
  *v = static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return true;
}

bool Decoder::GetString(std::string* s) {
  std::uint64_t len = 0;
  if (!GetVarint(&len) || len > in_.size()) {
    in_ = {};
    return false;
  }
  s->assign(in_.data(), static_cast<std::size_t>(len));
  in_.remove_prefix(static_cast<std::size_t>(len));
  return true;
}

bool Decoder::GetBigEndian64(std::uint64_t* v) {
  if (in_.size() < 8) {
    in_ = {};
    return false;
  }
  std::uint64_t result = 0;
  for (int i = 0; i < 8; ++i) {
    result = (result << 8) | static_cast<std::uint8_t>(in_[i]);
  }
  in_.remove_prefix(8);
  *v = result;
  return true;
}

bool Decoder::GetCount(std::size_t min_item_bytes, std::size_t* count) {
  std::uint64_t n = 0;
  if (!GetVarint(&n)) {
    return false;
  }
  if (min_item_bytes > 0 && n > in_.size() / min_item_bytes) {
    in_ = {};
    return false;
  }
  *count = static_cast<std::size_t>(n);
  return true;
}

namespace {

Error Corrupt(std::string_view what) {
  return Error(ErrorCode::kCorruption, "corrupt " + std::string(what) + " record");
}

// Format version check: anything from 1 up to `current` is readable.
bool GetFormat(Decoder& d, std::uint8_t current) {
  std::uint8_t format = 0;
  return d.GetByte(&format) && format >= 1 && format <= current;
}

void PutPairs(Encoder& e, const std::vector<std::pair<std::string, std::string>>& pairs) {
  e.PutVarint(pairs.size());
  for (const auto& [k, v] : pairs) {
    e.PutString(k);
    e.PutString(v);
  }
}

bool GetPairs(Decoder& d, std::vector<std::pair<std::string, std::string>>* pairs) {
  std::size_t n = 0;
  if (!d.GetCount(2, &n)) {
    return false;
  }
  pairs->clear();
  pairs->reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string k;
    std::string v;
    if (!d.GetString(&k) || !d.GetString(&v)) {
      return false;
    }
    pairs->emplace_back(std::move(k), std::move(v));
  }
  return true;
}

// An ACL: its grants, each (grantee kind, user, permission).
void PutAcl(Encoder& e, const Acl& acl) {
  e.PutVarint(acl.size());
  for (const auto& grant : acl) {
    e.PutByte(static_cast<std::uint8_t>(grant.grantee));
    e.PutString(grant.user);
    e.PutByte(static_cast<std::uint8_t>(grant.permission));
  }
}

bool GetAcl(Decoder& d, Acl* acl) {
  std::size_t count = 0;
  if (!d.GetCount(3, &count)) {
    return false;
  }
  acl->resize(count);
  for (auto& grant : *acl) {
    std::uint8_t grantee = 0;
    std::uint8_t permission = 0;
    if (!d.GetByte(&grantee) || grantee > static_cast<std::uint8_t>(AclGrantee::kLogDelivery) ||
        !d.GetString(&grant.user) || !d.GetByte(&permission) ||
        permission > static_cast<std::uint8_t>(AclPermission::kWriteAcp)) {
      return false;
    }
    grant.grantee = static_cast<AclGrantee>(grantee);
    grant.permission = static_cast<AclPermission>(permission);
  }
  return true;
}

// Optional values: a presence byte, then the value (a zigzag varint for signed numbers).
template <typename T>
void PutOptional(Encoder& e, const std::optional<T>& v) {
  e.PutByte(v ? 1 : 0);
  if (v && std::is_signed_v<T>) {
    e.PutSignedVarint(static_cast<std::int64_t>(*v));
  } else if (v) {
    e.PutVarint(static_cast<std::uint64_t>(*v));
  }
}

template <typename T>
bool GetOptional(Decoder& d, std::optional<T>* v) {
  std::uint8_t present = 0;
  if (!d.GetByte(&present) || present > 1) {
    return false;
  }
  v->reset();
  if (present == 0) {
    return true;
  }
  if constexpr (std::is_signed_v<T>) {
    std::int64_t value = 0;
    if (!d.GetSignedVarint(&value)) {
      return false;
    }
    *v = value;
  } else {
    std::uint64_t value = 0;
    if (!d.GetVarint(&value)) {
      return false;
    }
    *v = value;
  }
  return true;
}

void PutRule(Encoder& e, const LifecycleRule& r) {
  e.PutString(r.id);
  e.PutByte(r.enabled ? 1 : 0);
  e.PutByte(static_cast<std::uint8_t>(r.filter.form));
  e.PutByte(r.filter.prefix ? 1 : 0);
  e.PutString(r.filter.prefix.value_or(""));
  PutPairs(e, r.filter.tags);
  PutOptional(e, r.filter.size_greater_than);
  PutOptional(e, r.filter.size_less_than);
  e.PutVarint(r.transitions.size());
  for (const auto& t : r.transitions) {
    PutOptional(e, t.days);
    PutOptional(e, t.date_ms);
    e.PutString(t.storage_class);
  }
  e.PutVarint(r.noncurrent_transitions.size());
  for (const auto& t : r.noncurrent_transitions) {
    e.PutSignedVarint(t.noncurrent_days);
    PutOptional(e, t.newer_noncurrent_versions);
    e.PutString(t.storage_class);
  }
  PutOptional(e, r.expiration_days);
  PutOptional(e, r.expiration_date_ms);
  e.PutByte(r.expired_object_delete_marker ? 1 : 0);
  PutOptional(e, r.noncurrent_expiration_days);
  PutOptional(e, r.noncurrent_newer_versions);
  PutOptional(e, r.abort_incomplete_days);
}

bool GetFlag(Decoder& d, bool* flag) {
  std::uint8_t b = 0;
  if (!d.GetByte(&b) || b > 1) {
    return false;
  }
  *flag = b == 1;
  return true;
}

bool GetRule(Decoder& d, LifecycleRule* r) {
  std::uint8_t form = 0;
  bool has_prefix = false;
  std::string prefix;
  if (!d.GetString(&r->id) || !GetFlag(d, &r->enabled) || !d.GetByte(&form) ||
      form > static_cast<std::uint8_t>(LifecycleFilter::Form::kAnd) || !GetFlag(d, &has_prefix) ||
      !d.GetString(&prefix) || !GetPairs(d, &r->filter.tags) ||
      !GetOptional(d, &r->filter.size_greater_than) || !GetOptional(d, &r->filter.size_less_than)) {
    return false;
  }
  r->filter.form = static_cast<LifecycleFilter::Form>(form);
  if (has_prefix) {
    r->filter.prefix = std::move(prefix);
  }
  std::size_t count = 0;
  if (!d.GetCount(3, &count)) {
    return false;
  }
  r->transitions.resize(count);
  for (auto& t : r->transitions) {
    if (!GetOptional(d, &t.days) || !GetOptional(d, &t.date_ms) || !d.GetString(&t.storage_class)) {
      return false;
    }
  }
  if (!d.GetCount(3, &count)) {
    return false;
  }
  r->noncurrent_transitions.resize(count);
  for (auto& t : r->noncurrent_transitions) {
    if (!d.GetSignedVarint(&t.noncurrent_days) || !GetOptional(d, &t.newer_noncurrent_versions) ||
        !d.GetString(&t.storage_class)) {
      return false;
    }
  }
  return GetOptional(d, &r->expiration_days) && GetOptional(d, &r->expiration_date_ms) &&
         GetFlag(d, &r->expired_object_delete_marker) &&
         GetOptional(d, &r->noncurrent_expiration_days) &&
         GetOptional(d, &r->noncurrent_newer_versions) && GetOptional(d, &r->abort_incomplete_days);
}

bool GetRules(Decoder& d, std::vector<LifecycleRule>* rules) {
  std::size_t count = 0;
  if (!d.GetCount(16, &count)) {
    return false;
  }
  rules->resize(count);
  for (auto& rule : *rules) {
    if (!GetRule(d, &rule)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string EncodeBucket(const BucketRecord& bucket) {
  Encoder e;
  e.PutByte(kBucketFormat);
  e.PutString(bucket.name.view());
  e.PutString(bucket.owner);
  e.PutSignedVarint(bucket.created_ms);
  e.PutString(bucket.region);
  e.PutString(bucket.versioning);        // format 2
  PutPairs(e, bucket.tags);              // format 3
  e.PutString(bucket.upstream_tier);     // format 4
  e.PutString(bucket.upstream_bucket);   // format 4
  e.PutVarint(bucket.lifecycle.size());  // format 5
  for (const auto& rule : bucket.lifecycle) {
    PutRule(e, rule);
  }
  // Format 6: the access settings.
  e.PutString(bucket.access.policy.view());
  e.PutString(bucket.access.object_ownership);
  const auto& block = bucket.access.public_access_block;
  e.PutByte(!block ? 0
                   : 1 | (block->block_public_acls ? 2 : 0) | (block->ignore_public_acls ? 4 : 0) |
                         (block->block_public_policy ? 8 : 0) |
                         (block->restrict_public_buckets ? 16 : 0));
  e.PutString(bucket.access.cors.view());
  // Format 7: the ACL and the object lock configuration.
  PutAcl(e, bucket.access.acl);
  const auto& lock = bucket.access.object_lock;
  e.PutByte(lock.enabled ? 1 : 0);
  e.PutString(lock.default_mode);
  e.PutSignedVarint(lock.default_days);
  e.PutSignedVarint(lock.default_years);
  return std::move(e).Finish();
}

namespace {

bool GetText(Decoder& d, SharedText* text) {
  std::string s;
  if (!d.GetString(&s)) {
    return false;
  }
  *text = std::move(s);
  return true;
}

bool GetAccess(Decoder& d, BucketAccess* access) {
  std::uint8_t block = 0;
  if (!GetText(d, &access->policy) || !d.GetString(&access->object_ownership) ||
      !d.GetByte(&block) || block > 31) {
    return false;
  }
  if ((block & 1) != 0) {
    access->public_access_block =
        PublicAccessBlock{(block & 2) != 0, (block & 4) != 0, (block & 8) != 0, (block & 16) != 0};
  } else if (block != 0) {
    return false;
  }
  return GetText(d, &access->cors);
}

bool GetAclAndLock(Decoder& d, BucketAccess* access) {
  std::uint8_t enabled = 0;
  auto& lock = access->object_lock;
  if (!GetAcl(d, &access->acl) || !d.GetByte(&enabled) || enabled > 1 ||
      !d.GetString(&lock.default_mode) || !d.GetSignedVarint(&lock.default_days) ||
      !d.GetSignedVarint(&lock.default_years)) {
    return false;
  }
  lock.enabled = enabled == 1;
  return true;
}

}  // namespace

Result<BucketRecord> DecodeBucket(std::string_view bytes) {
  Decoder d(bytes);
  BucketRecord b;
  std::string name;
  std::uint8_t format = 0;
  if (!d.GetByte(&format) || format < 1 || format > kBucketFormat || !d.GetString(&name) ||
      !d.GetString(&b.owner) || !d.GetSignedVarint(&b.created_ms) || !d.GetString(&b.region) ||
      (format >= 2 && !d.GetString(&b.versioning)) || (format >= 3 && !GetPairs(d, &b.tags)) ||
      (format >= 4 && (!d.GetString(&b.upstream_tier) || !d.GetString(&b.upstream_bucket))) ||
      (format >= 5 && !GetRules(d, &b.lifecycle)) || (format >= 6 && !GetAccess(d, &b.access)) ||
      (format >= 7 && !GetAclAndLock(d, &b.access)) || !d.done()) {
    return Corrupt("bucket");
  }
  b.name = BucketName(std::move(name));
  if (format < 7) {  // recorded before ACLs: its owner's private one
    b.access.acl = {AclGrant{AclGrantee::kUser, b.owner, AclPermission::kFullControl}};
  }
  return b;
}

namespace {

void PutObjectFields(Encoder& e, const ObjectRecord& o) {
  e.PutString(o.version_id.view());
  e.PutVarint(o.size);
  e.PutString(o.etag);
  e.PutSignedVarint(o.last_modified_ms);
  e.PutString(o.content_type);
  PutPairs(e, o.system_metadata);
  PutPairs(e, o.user_metadata);
  e.PutString(o.storage_class);
  PutPairs(e, o.checksums);
  e.PutVarint(o.placements.size());
  for (const auto& p : o.placements) {
    e.PutString(p.tier);
    e.PutVarint(p.extents.size());
    for (const auto& extent : p.extents) {
      e.PutString(extent.location);
      e.PutVarint(extent.size);
    }
  }
  // Format 2 from here.
  e.PutByte(o.delete_marker ? 1 : 0);
  e.PutString(o.checksum_type);
  e.PutVarint(o.parts.size());
  for (const auto& part : o.parts) {
    e.PutVarint(part.number);
    e.PutVarint(part.size);
    PutPairs(e, part.checksums);
  }
  // Format 3 from here.
  PutPairs(e, o.tags);
  // Format 4.
  e.PutSignedVarint(o.restore_expiry_ms);
  e.PutByte(o.restore_ongoing ? 1 : 0);
  // Format 5.
  e.PutString(o.upload_id.view());
  // Format 6.
  e.PutString(o.owner);
  PutAcl(e, o.acl);
  e.PutString(o.retention_mode);
  e.PutSignedVarint(o.retain_until_ms);
  e.PutByte(o.legal_hold ? 1 : 0);
}

bool GetPlacements(Decoder& d, std::uint8_t format, std::uint64_t object_size,
                   std::vector<Placement>* placements) {
  std::size_t n = 0;
  if (!d.GetCount(2, &n)) {
    return false;
  }
  placements->reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Placement p;
    if (!d.GetString(&p.tier)) {
      return false;
    }
    if (format == 1) {  // one location holding the whole object
      Extent extent{"", object_size};
      if (!d.GetString(&extent.location)) {
        return false;
      }
      p.extents.push_back(std::move(extent));
    } else {
      std::size_t extents = 0;
      if (!d.GetCount(2, &extents)) {
        return false;
      }
      p.extents.reserve(extents);
      for (std::size_t j = 0; j < extents; ++j) {
        Extent extent;
        if (!d.GetString(&extent.location) || !d.GetVarint(&extent.size)) {
          return false;
        }
        p.extents.push_back(std::move(extent));
      }
    }
    placements->push_back(std::move(p));
  }
  return true;
}

bool GetParts(Decoder& d, std::vector<ObjectPart>* parts) {
  std::size_t n = 0;
  if (!d.GetCount(3, &n)) {
    return false;
  }
  parts->reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    ObjectPart part;
    std::uint64_t number = 0;
    if (!d.GetVarint(&number) || number > 0xffffffffu || !d.GetVarint(&part.size) ||
        !GetPairs(d, &part.checksums)) {
      return false;
    }
    part.number = static_cast<std::uint32_t>(number);
    parts->push_back(std::move(part));
  }
  return true;
}

bool GetObjectFields(Decoder& d, std::uint8_t format, ObjectRecord* o) {
  std::string version_id;
  if (!d.GetString(&version_id) || !d.GetVarint(&o->size) || !d.GetString(&o->etag) ||
      !d.GetSignedVarint(&o->last_modified_ms) || !d.GetString(&o->content_type) ||
      !GetPairs(d, &o->system_metadata) || !GetPairs(d, &o->user_metadata) ||
      !d.GetString(&o->storage_class) || !GetPairs(d, &o->checksums) ||
      !GetPlacements(d, format, o->size, &o->placements)) {
    return false;
  }
  o->version_id = VersionId(std::move(version_id));
  std::uint8_t marker = 0;
  if (format >= 2 && (!d.GetByte(&marker) || marker > 1 || !d.GetString(&o->checksum_type) ||
                      !GetParts(d, &o->parts))) {
    return false;
  }
  o->delete_marker = marker == 1;
  if (format >= 3 && !GetPairs(d, &o->tags)) {
    return false;
  }
  std::uint8_t ongoing = 0;
  if (format >= 4 &&
      (!d.GetSignedVarint(&o->restore_expiry_ms) || !d.GetByte(&ongoing) || ongoing > 1)) {
    return false;
  }
  o->restore_ongoing = ongoing == 1;
  std::string upload_id;
  if (format >= 5 && !d.GetString(&upload_id)) {
    return false;
  }
  o->upload_id = UploadId(std::move(upload_id));
  std::uint8_t hold = 0;
  if (format >= 6 &&
      (!d.GetString(&o->owner) || !GetAcl(d, &o->acl) || !d.GetString(&o->retention_mode) ||
       !d.GetSignedVarint(&o->retain_until_ms) || !d.GetByte(&hold) || hold > 1)) {
    return false;
  }
  o->legal_hold = hold == 1;
  return true;
}

}  // namespace

std::string EncodeObject(const ObjectRecord& o) {
  Encoder e;
  e.PutByte(kObjectFormat);
  PutObjectFields(e, o);
  return std::move(e).Finish();
}

Result<ObjectRecord> DecodeObject(std::string_view bytes) {
  Decoder d(bytes);
  ObjectRecord o;
  std::uint8_t format = 0;
  if (!d.GetByte(&format) || format < 1 || format > kObjectFormat ||
      !GetObjectFields(d, format, &o) || !d.done()) {
    return Corrupt("object");
  }
  return o;
}

std::string EncodeUpload(const UploadRecord& u) {
  Encoder e;
  e.PutByte(kUploadFormat);
  e.PutString(u.upload_id.view());
  e.PutSignedVarint(u.initiated_ms);
  e.PutString(u.owner);
  e.PutString(u.checksum_algorithm);
  e.PutString(u.checksum_type);
  e.PutString(u.object.bucket.view());
  e.PutString(u.object.key.view());
  e.PutByte(kObjectFormat);
  PutObjectFields(e, u.object);
  return std::move(e).Finish();
}

Result<UploadRecord> DecodeUpload(std::string_view bytes) {
  Decoder d(bytes);
  UploadRecord u;
  std::string upload_id;
  std::string bucket;
  std::string key;
  std::uint8_t object_format = 0;
  if (!GetFormat(d, kUploadFormat) || !d.GetString(&upload_id) ||
      !d.GetSignedVarint(&u.initiated_ms) || !d.GetString(&u.owner) ||
      !d.GetString(&u.checksum_algorithm) || !d.GetString(&u.checksum_type) ||
      !d.GetString(&bucket) || !d.GetString(&key) || !d.GetByte(&object_format) ||
      object_format < 1 || object_format > kObjectFormat ||
      !GetObjectFields(d, object_format, &u.object) || !d.done()) {
    return Corrupt("upload");
  }
  u.upload_id = UploadId(std::move(upload_id));
  u.object.bucket = BucketName(std::move(bucket));
  u.object.key = ObjectKey(std::move(key));
  return u;
}

std::string EncodePart(const PartRecord& p) {
  Encoder e;
  e.PutByte(kPartFormat);
  e.PutVarint(p.number);
  e.PutVarint(p.size);
  e.PutString(p.etag);
  e.PutSignedVarint(p.last_modified_ms);
  PutPairs(e, p.checksums);
  e.PutString(p.tier);
  e.PutString(p.location);
  return std::move(e).Finish();
}

Result<PartRecord> DecodePart(std::string_view bytes) {
  Decoder d(bytes);
  PartRecord p;
  std::uint64_t number = 0;
  if (!GetFormat(d, kPartFormat) || !d.GetVarint(&number) || number > 0xffffffffu ||
      !d.GetVarint(&p.size) || !d.GetString(&p.etag) || !d.GetSignedVarint(&p.last_modified_ms) ||
      !GetPairs(d, &p.checksums) || !d.GetString(&p.tier) || !d.GetString(&p.location) ||
      !d.done()) {
    return Corrupt("part");
  }
  p.number = static_cast<std::uint32_t>(number);
  return p;
}

std::string EncodeWriteback(const WritebackItem& item) {
  Encoder e;
  e.PutByte(kWritebackFormat);
  e.PutVarint(item.sequence);
  e.PutSignedVarint(item.enqueued_ms);
  e.PutVarint(item.bytes);
  e.PutVarint(item.attempts);
  e.PutSignedVarint(item.retry_ms);
  e.PutString(item.last_error);
  e.PutVarint(item.upstream_deletes.size());
  for (const auto& id : item.upstream_deletes) {
    e.PutString(id);
  }
  return std::move(e).Finish();
}

Result<WritebackItem> DecodeWriteback(std::string_view bytes) {
  Decoder d(bytes);
  WritebackItem item;
  std::uint8_t format = 0;
  std::uint64_t attempts = 0;
  if (!d.GetByte(&format) || format < 1 || format > kWritebackFormat ||
      !d.GetVarint(&item.sequence) || !d.GetSignedVarint(&item.enqueued_ms) ||
      !d.GetVarint(&item.bytes) || !d.GetVarint(&attempts) || attempts > UINT32_MAX ||
      !d.GetSignedVarint(&item.retry_ms) || !d.GetString(&item.last_error)) {
    return Corrupt("write-back");
  }
  if (format >= 2) {
    std::uint64_t deletes = 0;
    if (!d.GetVarint(&deletes) || deletes > bytes.size()) {
      return Corrupt("write-back");
    }
    item.upstream_deletes.resize(deletes);
    for (auto& id : item.upstream_deletes) {
      if (!d.GetString(&id)) {
        return Corrupt("write-back");
      }
    }
  }
  if (!d.done()) {
    return Corrupt("write-back");
  }
  item.attempts = static_cast<std::uint32_t>(attempts);
  return item;
}

std::string EncodeUpstreamLocation(const UpstreamLocation& location) {
  if (location.version_id.empty()) {
    return location.etag;
  }
  return location.etag + '\n' + location.version_id;
}

UpstreamLocation DecodeUpstreamLocation(std::string_view location) {
  const auto newline = location.find('\n');
  if (newline == std::string_view::npos) {
    return {std::string(location), ""};
  }
  return {std::string(location.substr(0, newline)), std::string(location.substr(newline + 1))};
}

std::string EncodeUser(const UserRecord& u) {
  Encoder e;
  e.PutByte(kUserFormat);
  e.PutString(u.access_key);
  e.PutString(u.secret_key);
  e.PutByte(u.admin ? 1 : 0);
  e.PutSignedVarint(u.created_ms);
  e.PutString(u.user);  // format 2
  return std::move(e).Finish();
}

Result<UserRecord> DecodeUser(std::string_view bytes) {
  Decoder d(bytes);
  UserRecord u;
  std::uint8_t admin = 0;
  std::uint8_t format = 0;
  if (!d.GetByte(&format) || format < 1 || format > kUserFormat || !d.GetString(&u.access_key) ||
      !d.GetString(&u.secret_key) || !d.GetByte(&admin) || admin > 1 ||
      !d.GetSignedVarint(&u.created_ms) || (format >= 2 && !d.GetString(&u.user)) || !d.done()) {
    return Corrupt("user");
  }
  u.admin = admin == 1;
  if (u.user.empty()) {  // recorded before users had names: the key is its own user
    u.user = u.access_key;
  }
  return u;
}

namespace {

// A placement as an object record stores one (format 2 and later).
void PutPlacement(Encoder& e, const Placement& p) {
  e.PutString(p.tier);
  e.PutVarint(p.extents.size());
  for (const auto& extent : p.extents) {
    e.PutString(extent.location);
    e.PutVarint(extent.size);
  }
}

bool GetPlacement(Decoder& d, Placement* p) {
  std::size_t extents = 0;
  if (!d.GetString(&p->tier) || !d.GetCount(2, &extents)) {
    return false;
  }
  p->extents.resize(extents);
  for (auto& extent : p->extents) {
    if (!d.GetString(&extent.location) || !d.GetVarint(&extent.size)) {
      return false;
    }
  }
  return true;
}

void PutStrings(Encoder& e, const std::vector<std::string>& strings) {
  e.PutVarint(strings.size());
  for (const auto& s : strings) {
    e.PutString(s);
  }
}

bool GetStrings(Decoder& d, std::vector<std::string>* strings) {
  std::size_t n = 0;
  if (!d.GetCount(1, &n)) {
    return false;
  }
  strings->resize(n);
  for (auto& s : *strings) {
    if (!d.GetString(&s)) {
      return false;
    }
  }
  return true;
}

void PutOptionalString(Encoder& e, const std::optional<std::string>& s) {
  e.PutByte(s ? 1 : 0);
  if (s) {
    e.PutString(*s);
  }
}

bool GetOptionalString(Decoder& d, std::optional<std::string>* s) {
  bool present = false;
  if (!GetFlag(d, &present)) {
    return false;
  }
  s->reset();
  if (present) {
    s->emplace();
    return d.GetString(&**s);
  }
  return true;
}

// Each edit: its index in the VersionEdit variant, then its fields.
struct EditWriter {
  Encoder& e;
  void operator()(const AddPlacementFirst& edit) { PutPlacement(e, edit.placement); }
  void operator()(const ReplacePlacement& edit) {
    PutPlacement(e, edit.old_placement);
    PutPlacement(e, edit.new_placement);
  }
  void operator()(const RemovePlacementsOn& edit) { PutStrings(e, edit.tiers); }
  void operator()(const SetStorageClass& edit) { e.PutString(edit.storage_class); }
  void operator()(const SetRestoreState& edit) {
    e.PutSignedVarint(edit.expiry_ms);
    e.PutByte(edit.ongoing ? 1 : 0);
  }
};

bool GetEdit(Decoder& d, VersionEdit* edit) {
  std::uint8_t kind = 0;
  if (!d.GetByte(&kind)) {
    return false;
  }
  switch (kind) {
    case 0: {
      AddPlacementFirst add;
      if (!GetPlacement(d, &add.placement)) {
        return false;
      }
      *edit = std::move(add);
      return true;
    }
    case 1: {
      ReplacePlacement replace;
      if (!GetPlacement(d, &replace.old_placement) || !GetPlacement(d, &replace.new_placement)) {
        return false;
      }
      *edit = std::move(replace);
      return true;
    }
    case 2: {
      RemovePlacementsOn remove;
      if (!GetStrings(d, &remove.tiers)) {
        return false;
      }
      *edit = std::move(remove);
      return true;
    }
    case 3: {
      SetStorageClass set;
      if (!d.GetString(&set.storage_class)) {
        return false;
      }
      *edit = std::move(set);
      return true;
    }
    case 4: {
      SetRestoreState set;
      if (!d.GetSignedVarint(&set.expiry_ms) || !GetFlag(d, &set.ongoing)) {
        return false;
      }
      *edit = set;
      return true;
    }
    default:
      return false;  // an edit this version does not know
  }
}

}  // namespace

std::string EncodeVersionChange(const VersionChange& change) {
  Encoder e;
  e.PutByte(kVersionChangeFormat);
  e.PutString(change.version_id.view());
  e.PutString(change.etag);
  e.PutSignedVarint(change.last_modified_ms);
  PutOptionalString(e, change.requires_placement_on);
  PutStrings(e, change.refuses_placements_on);
  PutOptionalString(e, change.refuses_storage_class);
  e.PutByte(change.refuses_pinned ? 1 : 0);
  if (change.refuses_pinned) {
    e.PutString(change.refuses_pinned->storage_class);
    e.PutSignedVarint(change.refuses_pinned->now_ms);
  }
  e.PutVarint(change.edits.size());
  for (const auto& edit : change.edits) {
    e.PutByte(static_cast<std::uint8_t>(edit.index()));
    std::visit(EditWriter{e}, edit);
  }
  return std::move(e).Finish();
}

Result<VersionChange> DecodeVersionChange(std::string_view bytes) {
  Decoder d(bytes);
  VersionChange change;
  std::string version_id;
  bool pinned = false;
  if (!GetFormat(d, kVersionChangeFormat) || !d.GetString(&version_id) ||
      !d.GetString(&change.etag) || !d.GetSignedVarint(&change.last_modified_ms) ||
      !GetOptionalString(d, &change.requires_placement_on) ||
      !GetStrings(d, &change.refuses_placements_on) ||
      !GetOptionalString(d, &change.refuses_storage_class) || !GetFlag(d, &pinned)) {
    return Corrupt("version change");
  }
  change.version_id = VersionId(std::move(version_id));
  if (pinned) {
    VersionChange::Pin pin;
    if (!d.GetString(&pin.storage_class) || !d.GetSignedVarint(&pin.now_ms)) {
      return Corrupt("version change");
    }
    change.refuses_pinned = std::move(pin);
  }
  std::size_t edits = 0;
  if (!d.GetCount(2, &edits)) {
    return Corrupt("version change");
  }
  change.edits.resize(edits);
  for (auto& edit : change.edits) {
    if (!GetEdit(d, &edit)) {
      return Corrupt("version change");
    }
  }
  if (!d.done()) {
    return Corrupt("version change");
  }
  return change;
}

std::string EncodeUploadCompletion(const UploadCompletion& completion) {
  Encoder e;
  e.PutByte(kUploadCompletionFormat);
  e.PutString(completion.upload_id.view());
  e.PutByte(kObjectFormat);
  PutObjectFields(e, completion.object);
  e.PutVarint(completion.parts.size());
  for (const auto& part : completion.parts) {
    e.PutVarint(part.number);
    e.PutString(part.tier);
    e.PutString(part.location);
  }
  return std::move(e).Finish();
}

Result<UploadCompletion> DecodeUploadCompletion(std::string_view bytes) {
  Decoder d(bytes);
  UploadCompletion completion;
  std::string upload_id;
  std::uint8_t object_format = 0;
  std::size_t parts = 0;
  if (!GetFormat(d, kUploadCompletionFormat) || !d.GetString(&upload_id) ||
      !d.GetByte(&object_format) || object_format < 1 || object_format > kObjectFormat ||
      !GetObjectFields(d, object_format, &completion.object) || !d.GetCount(3, &parts)) {
    return Corrupt("upload completion");
  }
  completion.upload_id = UploadId(std::move(upload_id));
  completion.parts.resize(parts);
  for (auto& part : completion.parts) {
    std::uint64_t number = 0;
    if (!d.GetVarint(&number) || number > 0xffffffffu || !d.GetString(&part.tier) ||
        !d.GetString(&part.location)) {
      return Corrupt("upload completion");
    }
    part.number = static_cast<std::uint32_t>(number);
  }
  if (!d.done()) {
    return Corrupt("upload completion");
  }
  return completion;
}

}  // namespace strata::metadata
