package packaging

import (
	"path"
	"strings"

	"github.com/klauspost/compress/flate"
)

// level is the deflate level of compressible data. klauspost/compress level 5 comes within about
// 1% of gzip -6 (what tar -czf uses) at several times its speed, and chunks are compressed in
// parallel; level 4 is a quarter faster but 2% larger.
const level = 5

// Sampling: before spending a full deflate on a chunk of a large file, compress a few slices of it
// at level 1 and look at the ratio.
const (
	sampleSlices = 4
	sampleSlice  = 8 << 10
	// A chunk of a file of a known compressed format is deflated only when its sample shrinks
	// below this ratio (an uncompressed .pak, say); any other chunk is stored only when its
	// sample does not shrink below autoRatio.
	storeRatio = 0.90
	autoRatio  = 0.98
	// Files smaller than this are deflated along with their neighbours, whatever they hold.
	smallFile = 64 << 10
)

// compressedExt lists extensions of formats that are compressed already: game packages (Unreal
// .pak and IoStore containers), images, audio, video, archives.
var compressedExt = map[string]bool{
	".pak": true, ".ucas": true, ".utoc": true, ".obb": true,
	".png": true, ".jpg": true, ".jpeg": true, ".webp": true, ".ktx2": true, ".basis": true,
	".ogg": true, ".opus": true, ".mp3": true, ".m4a": true, ".aac": true, ".flac": true,
	".wem": true, ".bnk": true,
	".mp4": true, ".m4v": true, ".mov": true, ".mkv": true, ".webm": true, ".bik": true,
	".bk2": true, ".usm": true,
	".zip": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true, ".zst": true,
	".lz4": true, ".br": true, ".7z": true, ".rar": true, ".cab": true, ".jar": true,
	".apk": true, ".aab": true, ".ipa": true,
}

// hintFor returns how the content of a regular file named name of size bytes is handled.
func hintFor(name string, size int64) hint {
	switch {
	case size < smallFile:
		return hintDeflate
	case compressedExt[strings.ToLower(path.Ext(name))]:
		return hintStore
	default:
		return hintAuto
	}
}

// compressor is one worker's deflate state.
type compressor struct {
	fw     *flate.Writer
	sample *flate.Writer
	sbuf   countWriter
	sin    []byte
}

func newCompressor(lvl int) *compressor {
	c := &compressor{sin: make([]byte, 0, sampleSlices*sampleSlice)}
	c.fw, _ = flate.NewWriter(nil, lvl) // the levels used here are valid
	c.sample, _ = flate.NewWriter(nil, flate.BestSpeed)
	return c
}

// encode fills ch.out with the deflated chunk, or sets ch.stored.
func (c *compressor) encode(ch *chunk) {
	switch ch.hint {
	case hintStore:
		if c.sampleRatio(ch.in) >= storeRatio {
			ch.stored = true
			return
		}
	case hintAuto:
		if c.sampleRatio(ch.in) >= autoRatio {
			ch.stored = true
			return
		}
	}
	ch.out.Reset()
	c.fw.ResetDict(&ch.out, ch.dict)
	// Writes into a bytes.Buffer do not fail.
	_, _ = c.fw.Write(ch.in)
	_ = c.fw.Flush() // sync flush: ends byte-aligned, not final
	if ch.out.Len() >= storedSize(len(ch.in)) {
		ch.stored = true
	}
}

// sampleRatio estimates how well in compresses from a few evenly spaced slices of it.
func (c *compressor) sampleRatio(in []byte) float64 {
	s := c.sin[:0]
	if len(in) <= cap(s) {
		s = in
	} else {
		step := (len(in) - sampleSlice) / (sampleSlices - 1)
		for i := range sampleSlices {
			s = append(s, in[i*step:i*step+sampleSlice]...)
		}
	}
	if len(s) == 0 {
		return 1
	}
	c.sbuf = 0
	c.sample.Reset(&c.sbuf)
	_, _ = c.sample.Write(s)
	_ = c.sample.Close()
	return float64(c.sbuf) / float64(len(s))
}

// countWriter counts and discards.
type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) {
	*w += countWriter(len(p))
	return len(p), nil
}
