package diskspace

import "golang.org/x/sys/windows"

func of(path string) (Space, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return Space{}, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return Space{}, err
	}
	return Space{Free: int64(free), Total: int64(total)}, nil
}
