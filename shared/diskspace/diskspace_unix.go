//go:build unix

package diskspace

import "golang.org/x/sys/unix"

func of(path string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Space{}, err
	}
	bs := int64(st.Bsize) //nolint:unconvert // its type differs between systems
	return Space{Free: int64(st.Bavail) * bs, Total: int64(st.Blocks) * bs}, nil
}
