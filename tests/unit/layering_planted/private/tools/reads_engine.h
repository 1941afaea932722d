// Planted: tools/ reaching into storage's private engine/ folder.
#include "storage/engine/tier_caches.h"
