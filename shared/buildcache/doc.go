// Package buildcache keeps the warm-build caches of Unreal projects: the compiled objects in
// <project>/Intermediate and the local derived data cache in <project>/DerivedDataCache (see
// DefaultDirs). A host restores the newest matching cache before a build and saves one after a
// successful build.
//
// # Keys
//
// A Key (org, project, ref, platform, engine version) says which builds share a cache.
// Key.Prefix is "caches/<org>/<project>/<hash of ref, platform, engine>/", so different refs,
// platforms or engine versions never share a prefix, and OrgPrefix(org) = "caches/<org>/" holds
// every cache of an org. One saved cache is the object ObjectKey(key, buildID) =
// "<prefix><buildID>.tar.zst", named after the build that saved it.
//
// # Archives
//
// Write streams a cache archive (a tar of the listed directories' regular files and directories,
// with permission bits and modification times to the nanosecond, compressed with zstd) into any
// io.Writer; Read extracts one from any io.Reader, replacing the directories, refusing anything
// that would land outside them, and removing them again on any error. Symlinks are not kept:
// Write skips them (Stats.Skipped) and Read refuses link entries. Both stream with bounded memory,
// so a host that only has presigned URLs can Write into a PUT or Read from a GET itself.
//
// # The cache service
//
// Cache works on a Store (an artifacts.Store that can List by prefix, as fsartifacts and
// s3artifacts can):
//
//	c, _ := buildcache.New(store, nil)           // nil: DefaultDirs
//	e, st, err := c.Restore(ctx, key, projectDir) // err: build cold (ErrNoCache, or why)
//	... build ...
//	e, st, err = c.Save(ctx, key, buildID, projectDir) // then removes older caches of key
//	removed, err := c.Evict(ctx, org, capBytes, e.ObjectKey)
//
// For a remote host: the server finds Latest and presigns a GET of its ObjectKey (the host runs
// Read on the body), or presigns a PUT of ObjectKey(key, buildID) (the host runs Write into it)
// and, once the host reports success, calls Saved and Evict. Usage reports an org's bytes and
// count; DeleteProject removes a project's caches.
package buildcache
