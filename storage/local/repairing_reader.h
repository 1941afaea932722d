// Read repair (private to storage/): an ObjectReader over a local copy that, when a chunk
// turns out damaged, has the copy replaced by a verified one (CopyRepairer) and goes on
// reading the repaired copy at the same offset, so its caller (a GET that has sent part
// of the body already) never sees anything but the object's bytes.
#pragma once

#include <memory>
#include <variant>

#include "common/error.h"
#include "metadata/records.h"
#include "storage/integrity.h"
#include "storage/object_store.h"

namespace strata::storage {

class LocalObjectStore;

// `opened`: the reader of the local copy, or the kCorruption its opening found (a damaged
// trailer), which the first ReadAsync repairs. `store` and `repairer` outlive the reader.
std::unique_ptr<ObjectReader> MakeRepairingReader(
    LocalObjectStore& store, CopyRepairer& repairer, metadata::ObjectRecord record,
    std::variant<std::unique_ptr<ObjectReader>, Error> opened);

}  // namespace strata::storage
