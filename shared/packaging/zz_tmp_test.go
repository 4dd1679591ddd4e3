package packaging

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func BenchmarkZZTree(b *testing.B) {
	for range 2 {
		for _, l := range []int{4, 5} {
			level = l
			t0 := time.Now()
			f, _ := os.Create("/tmp/kilntree/out.tar.gz")
			res, err := TarGz(b.Context(), "/tmp/kilntree/MyGame-Linux-Shipping", "MyGame-Linux-Shipping", f)
			f.Close()
			fmt.Println(l, res.Size, float64(res.Size)/1219636999, err, time.Since(t0))
		}
	}
}
