package runner

import (
	"errors"
	"io/fs"
	"path"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// openProjectDir opens the directory of the .uproject (uproject, slash-separated, relative to
// the checkout) without following links: the build cache's root, where kiln saves, restores and
// clears Intermediate/ and DerivedDataCache/ with its own privileges. A project directory that
// is a symbolic link, or lies under one (a link committed to the repository, or left by a build),
// is a failure that says so. A missing one gives nil and no error: the build step then fails on
// the missing .uproject, as for any checkout without it.
func openProjectDir(checkout, uproject string) (*nofollow.Dir, error) {
	rel := path.Dir(uproject)
	if !fs.ValidPath(rel) {
		rel = "." // not a path inside the checkout: the build step refuses it
	}
	ws, err := nofollow.Open(checkout)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	d, err := ws.OpenDir(rel)
	switch {
	case errors.Is(err, nofollow.ErrSymlink):
		return nil, fail("the project directory %s is a symbolic link, or lies under one, in the checkout: kiln does not build "+
			"through symbolic links (they could lead into another workspace); make it a real directory in the repository", rel)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, nofollow.ErrNotDir):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return d, nil
}
