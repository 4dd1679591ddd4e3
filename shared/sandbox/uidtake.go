package sandbox

// Take holds a free uid of the range (the zero range is DefaultUIDs) for something other than a
// build step that must not share a uid with one, such as a build host kiln aws-local runs as the
// buildspec's run-as user: the same in-process and cross-process locks as the steps' uids, so no
// step of any kiln on the machine gets it while it is held. release gives it back (once).
func (r UIDRange) Take() (uid int, release func(), err error) {
	return r.orDefault().take()
}
