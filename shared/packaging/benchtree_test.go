package packaging

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generateStagedBuild writes a staged Unreal build of about 1.5 GB under dir, resembling a real
// one: 1 GB of .pak/.ucas containers (random: their assets are compressed already), 300 MB of
// executables and debug data (compressible, about as much as real ones), and 5,000 small config,
// text and JSON files in nested directories. It is deterministic. div divides the sizes of the
// containers and executables (1: the full 1.5 GB); the 5,000 small files stay.
func generateStagedBuild(b *testing.B, dir string, div int64) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	paks := []struct {
		name string
		size int64
	}{
		{"Game/Content/Paks/pakchunk0-Linux.pak", 560 << 20},
		{"Game/Content/Paks/pakchunk1-Linux.pak", 240 << 20},
		{"Game/Content/Paks/global.ucas", 160 << 20},
		{"Game/Content/Paks/pakchunk2-Linux.pak", 64 << 20},
	}
	for i, p := range paks {
		writeGenerated(b, dir, p.name, p.size/div, func(w *bufio.Writer, n int64) {
			r := rand.NewChaCha8([32]byte{byte(i), 7})
			buf := make([]byte, 1<<20)
			for ; n > 0; n -= int64(len(buf)) {
				_, _ = r.Read(buf)
				_, _ = w.Write(buf[:min(n, int64(len(buf)))])
			}
		})
	}
	bins := []struct {
		name string
		size int64
	}{
		{"Game/Binaries/Linux/Game-Linux-Shipping", 120 << 20},
		{"Game/Binaries/Linux/Game-Linux-Shipping.debug", 110 << 20},
		{"Game/Binaries/Linux/libsteam_api.so", 20 << 20},
		{"Engine/Binaries/Linux/libEOSSDK-Linux-Shipping.so", 30 << 20},
		{"Engine/Binaries/ThirdParty/PhysX3/Linux/libPhysX3.so", 20 << 20},
	}
	for _, bin := range bins {
		writeGenerated(b, dir, bin.name, bin.size/div, func(w *bufio.Writer, n int64) { machineCode(w, n, rng) })
	}
	words := strings.Fields(`Engine Game Script Renderer Audio Niagara Material Texture Mesh Actor Component
		World Level Streaming Shader Cache Enabled Disabled True False Default Quality Scalability Bloom
		Lumen Nanite Input Action Mapping Key Gamepad Mouse Player Controller Character Pawn Widget`)
	for i := range 5000 {
		ext := []string{".ini", ".json", ".txt", ".uplugin", ".xml"}[i%5]
		name := fmt.Sprintf("Engine/Plugins/P%02d/Mod%02d/Config/%s_%04d%s", i%37, i%13, words[i%len(words)], i, ext)
		size := int64(200 + rng.IntN(12000))
		writeGenerated(b, dir, name, size, func(w *bufio.Writer, n int64) {
			for n > 0 {
				line := fmt.Sprintf("%s.%s=%s %d\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(1000))
				_, _ = w.WriteString(line[:min(int64(len(line)), n)])
				n -= int64(len(line))
			}
		})
	}
}

// machineCode writes n bytes that look like x86-64 code and its data to a compressor: a few
// thousand recurring instruction sequences with random immediates and addresses between them,
// and runs of symbol names. gzip -6 shrinks it to about 40%, like a real shipping binary.
func machineCode(w *bufio.Writer, n int64, rng *rand.Rand) {
	seqs := make([][]byte, 2048)
	for i := range seqs {
		seqs[i] = make([]byte, 2+rng.IntN(12))
		for j := range seqs[i] {
			seqs[i][j] = byte(rng.IntN(256))
		}
	}
	syms := strings.Fields(`_ZN7UObject _ZN6AActor _ZNK10FString _ZN12UWorld __cxa_throw _ZN9FMemory6Malloc
		_ZN14FPlatformMisc _ZN11UGameplay _ZN8FVector _ZN10FRotator _ZN9UMaterial _ZN16FRenderResource`)
	var tmp [8]byte
	for written := int64(0); written < n; {
		switch r := rng.IntN(100); {
		case r < 82: // an instruction sequence, picked with a skew towards common ones
			s := seqs[int(float64(len(seqs))*rng.Float64()*rng.Float64())]
			written += int64(len(s))
			_, _ = w.Write(s)
		case r < 93: // an immediate or a relative address
			k := 1 + rng.IntN(4)
			for j := range k {
				tmp[j] = byte(rng.IntN(256))
			}
			written += int64(k)
			_, _ = w.Write(tmp[:k])
		default: // a symbol name
			s := syms[rng.IntN(len(syms))] + fmt.Sprint(rng.IntN(5000)) + "\x00"
			written += int64(len(s))
			_, _ = w.WriteString(s)
		}
	}
}

func writeGenerated(b *testing.B, dir, name string, size int64, gen func(w *bufio.Writer, n int64)) {
	b.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	gen(w, size)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // generators may overshoot by a few bytes
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
