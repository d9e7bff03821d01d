package tail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// headLen is how many leading bytes identify a file's content: when they
// change under the same inode, the file was rewritten in place.
const headLen = 64

// entry is a file found by listing the directory.
type entry struct {
	name, path string
	devIno     string
	size       int64
	mtime      time.Time
}

// tracked is a file being followed.
type tracked struct {
	pos  position
	path string
	f    *os.File
	// checked is the size and mtime at which this process last read the
	// file to its end: a closed file still so needs no reopening.
	checkedSize  int64
	checkedMtime time.Time
}

func (tr *tracked) key() string { return tr.pos.DevIno + ":" + strconv.Itoa(tr.pos.Gen) }

func (tr *tracked) close() {
	if tr.f != nil {
		tr.f.Close()
		tr.f = nil
	}
}

// list returns the matching files, oldest first: by day, then for one day
// the highest roll suffix first and the live file (no suffix) last.
func (t *Tailer) list() ([]entry, error) {
	des, err := os.ReadDir(t.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("tail %s: %w", t.cfg.Dir, err)
	}
	if t.afterReadDir != nil {
		t.afterReadDir()
	}
	var out []entry
	for _, de := range des {
		if !t.cfg.Match.MatchString(de.Name()) || compressed(de.Name()) {
			continue
		}
		p := filepath.Join(t.cfg.Dir, de.Name())
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // vanished or not a file: the next pass sees the truth
		}
		out = append(out, entry{name: de.Name(), path: p, devIno: devIno(fi), size: fi.Size(), mtime: fi.ModTime()})
	}
	sort.SliceStable(out, func(i, j int) bool { return older(out[i].name, out[j].name) })
	return out, nil
}

func older(a, b string) bool {
	ab, as := splitRoll(a)
	bb, bs := splitRoll(b)
	if ab != bb {
		return ab < bb
	}
	return as > bs // .2 before .1 before the live file (suffix 0)
}

// splitRoll splits "20261122.vm.2" into the live name "20261122.vm" and
// the roll number 2; a name without a numeric last part is live (0).
func splitRoll(name string) (string, int) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, 0
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n <= 0 {
		return name, 0
	}
	return name[:i], n
}

func devIno(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "path:" + fi.Name()
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10)
}

// drainVanished reads to the end the files that are open but no longer in
// the directory (deleted, or renamed to a name that does not match), then
// stops following them. Their positions stay, by dev:ino, for
// forgetAfter listings: a file can miss one listing without being gone
// (log_roll renames F to F.1 between ReadDir and Stat), and when its inode
// reappears it goes on from its offset instead of from 0.
func (t *Tailer) drainVanished(ctx context.Context, listed []entry) error {
	present := make(map[string]bool, len(listed))
	for _, e := range listed {
		present[e.devIno] = true
	}
	for _, k := range sortedKeys(t.files) {
		tr := t.files[k]
		if present[k] {
			continue
		}
		if tr.f != nil {
			if err := t.readLines(ctx, tr); err != nil {
				return err
			}
		}
		tr.close()
		delete(t.files, k)
		t.saved[k], t.missed[k] = tr.pos, 1
		t.dirty = true
		t.stats.FilesClosed.Add(1)
	}
	return nil
}

func sortedKeys(m map[string]*tracked) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]].path < m[keys[j]].path })
	return keys
}

// closeIdle keeps descriptors only for the newest KeepOpen files.
func (t *Tailer) closeIdle(listed []entry) {
	for i, e := range listed {
		if i >= len(listed)-t.cfg.KeepOpen {
			break
		}
		if tr := t.files[e.devIno]; tr != nil {
			tr.close()
		}
	}
}

// follow reads one listed file from its recorded offset.
func (t *Tailer) follow(ctx context.Context, e entry) error {
	tr := t.files[e.devIno]
	if tr == nil {
		tr = t.adopt(e)
	}
	tr.path, tr.pos.Path = e.path, e.path
	if tr.f == nil && e.size == tr.checkedSize && e.mtime.Equal(tr.checkedMtime) && e.size == tr.pos.Offset {
		return nil // closed, read to its end and untouched since
	}
	if err := t.open(tr); err != nil {
		t.stats.OpenErrors.Add(1)
		return nil // gone between list and open: the next pass sees it
	}
	if err := t.checkReplaced(tr); err != nil {
		return err
	}
	if err := t.readLines(ctx, tr); err != nil {
		return err
	}
	tr.checkedSize, tr.checkedMtime = e.size, e.mtime
	return nil
}

// adopt starts tracking a file not seen before in this process.
func (t *Tailer) adopt(e entry) *tracked {
	tr := &tracked{path: e.path, pos: position{DevIno: e.devIno, Path: e.path}}
	if p, ok := t.saved[e.devIno]; ok {
		tr.pos = p
		tr.pos.Path = e.path
		delete(t.saved, e.devIno)
	} else if t.firstPass && (t.cfg.Start == StartEnd || (t.cfg.Start == StartSavedOrEnd && !t.hadPositions)) {
		tr.pos.Offset = -1 // resolved to the last complete line on open
	}
	t.files[e.devIno] = tr
	t.dirty = true
	t.stats.FilesTracked.Add(1)
	return tr
}

func (t *Tailer) open(tr *tracked) error {
	if tr.f != nil {
		return nil
	}
	f, err := os.Open(tr.path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil || devIno(fi) != tr.pos.DevIno {
		f.Close()
		return fmt.Errorf("tail %s: replaced while opening", tr.path)
	}
	tr.f = f
	if tr.pos.Offset < 0 {
		end, err := lastLineEnd(f, fi.Size())
		if err != nil {
			return err
		}
		tr.pos.Offset = end
	}
	return nil
}

// checkReplaced detects truncation (size below the offset) and in-place
// rewrites (the leading bytes changed): the file then starts again at 0
// under a new generation, so its LineIDs never collide with the old ones.
func (t *Tailer) checkReplaced(tr *tracked) error {
	fi, err := tr.f.Stat()
	if err != nil {
		return fmt.Errorf("tail %s: %w", tr.path, err)
	}
	size := fi.Size()
	head, n, err := readHead(tr.f, size)
	if err != nil {
		return fmt.Errorf("tail %s: %w", tr.path, err)
	}
	switch {
	case size < tr.pos.Offset:
		t.stats.Truncations.Add(1)
	case tr.pos.HeadN > 0 && (n < tr.pos.HeadN || headHash(head[:tr.pos.HeadN]) != tr.pos.Head):
		t.stats.Replaced.Add(1)
	default:
		if n > tr.pos.HeadN {
			tr.pos.Head, tr.pos.HeadN, t.dirty = headHash(head), n, true
		}
		return nil
	}
	tr.pos.Gen++
	tr.pos.Offset, tr.pos.Head, tr.pos.HeadN = 0, "", 0
	t.dirty = true
	return nil
}

func readHead(f *os.File, size int64) ([]byte, int, error) {
	n := int(min(size, headLen))
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, 0, err
	}
	return buf, n, nil
}

func headHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// lastLineEnd is the offset just after the last newline before size.
func lastLineEnd(f *os.File, size int64) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(0, end-chunk)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0, err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// compressed reports names that an admin's log rotation compressed: their
// lines were read before (or are not text).
func compressed(name string) bool {
	for _, ext := range []string{".gz", ".bz2", ".xz", ".zst", ".Z", ".lz4"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
