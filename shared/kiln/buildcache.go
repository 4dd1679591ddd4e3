package kiln

// CacheState says whether a build started from a build cache: the compiled objects
// (Intermediate/) and derived data (DerivedDataCache/) a previous build of the same project,
// branch or stream, platform and engine version left.
type CacheState string

const (
	// CacheNone: the build's host has not looked for a cache yet (or the build never ran).
	CacheNone CacheState = ""
	// CacheWarm: the build started from the cache another build saved.
	CacheWarm CacheState = "warm"
	// CacheCold: the build started without a cache, for the reason the build records.
	CacheCold CacheState = "cold"
)

// Why a build started cold, as the build records it (CacheReason).
const (
	CacheReasonClean   = "a clean build was asked for"
	CacheReasonNone    = "no build of this branch, platform and engine version has saved a cache yet"
	CacheReasonRestore = "the cache could not be restored" // followed by ": <why>"
)
