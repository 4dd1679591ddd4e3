package buildlog_test

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/buildlog/logstoretest"
)

func TestFilesContract(t *testing.T) {
	logstoretest.Run(t, func(t *testing.T) (logstoretest.Store, func() logstoretest.Store) {
		dir := t.TempDir()
		open := func() logstoretest.Store {
			f, err := buildlog.NewFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		return open(), open
	})
}
