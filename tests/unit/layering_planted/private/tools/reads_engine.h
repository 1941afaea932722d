// Planted: tools/ reaching into storage's private engine/ folder.
#include "storage/engine/cache_policy.h"
