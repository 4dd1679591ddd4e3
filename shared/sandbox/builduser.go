package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// asBuildUser makes the step run as a build uid of its own when kiln runs as root: it holds a
// free uid of uids until the step's Done, gives that uid the jail's writable directories (not
// its protected paths), sets the command's credential to it (uid and gid, no supplementary
// groups) and starts the command where reach (the directories it opens at their own paths) is
// reachable by that uid. Every process of the uid is killed at the step's Done, before the uid
// goes back, so nothing of one build runs beside the next that gets it (what a kiln that died
// left running, the next start stops: runner.KillOrphans). When kiln is not root the step runs as kiln's own user, as it is.
func asBuildUser(s *Step, uids UIDRange, j Jail, reach []string) error {
	if os.Geteuid() != 0 {
		s.HostUID = os.Geteuid()
		return nil
	}
	uid, release, err := uids.orDefault().take()
	if err != nil {
		return err
	}
	s.onDone(func() {
		_ = killUID(uid)
		release()
	})
	s.HostUID = uid
	if err := giveWritable(j, uid); err != nil {
		return err
	}
	setCredential(s.Cmd, uid)
	reach = slices.Clone(reach)
	s.wrapStart(func(next func() error) error { return startReachable(uid, reach, next) })
	return nil
}

// jailDirs are the host paths a step opens at their own paths.
func jailDirs(j Jail, more ...[]string) []string {
	var dirs []string
	for _, d := range slices.Concat(append(more, j.ReadOnly, j.Writable, j.Protected)...) {
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs
}
