package tail

import (
	"path/filepath"
	"testing"
)

// BenchmarkSavePositions: the cost of one positions write (create, write,
// rename), which bounds the tailer at CommitEvery 1.
func BenchmarkSavePositions(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pos.json")
	pos := map[string]position{}
	for i := range 4 {
		k := "2049:" + string(rune('0'+i))
		pos[k] = position{DevIno: k, Path: "/var/spool/torque/server_logs/2026112" + string(rune('0'+i)), Offset: 123456}
	}
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "fsync"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := savePositions(path, pos, sync); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
