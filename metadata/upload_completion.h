// UploadCompletion: CompleteMultipartUpload as data the index applies under the key's lock
// (ObjectIndex::CompleteUpload), so the cluster can send it to whichever node holds the
// key's partition (metadata/codec.h encodes it). Storage reads the upload and its parts,
// builds the object by S3's rules (storage/multipart.h) without any lock, and hands the
// index the result plus the parts it was built from; the index checks, under the lock,
// that those parts are still the ones stored, so a part uploaded again with the same
// number between the read and the commit can never leave the object pointing at bytes
// that are gone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ids.h"
#include "metadata/records.h"

namespace strata::metadata {

// A stored part the object was built from, as the builder read it: its data file.
struct CompletionPart {
  std::uint32_t number = 0;
  std::string tier = {};
  std::string location = {};
};

struct UploadCompletion {
  UploadId upload_id = {};
  // The version the completion makes; its bucket and key are the call's.
  ObjectRecord object = {};
  // Every part whose bytes `object` uses, as read. Parts the upload holds beyond these are
  // removed with it and handed back as unused (their bytes are freed by the caller).
  std::vector<CompletionPart> parts = {};
};

}  // namespace strata::metadata
