package tail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// position is what is remembered of one file.
type position struct {
	Key    string `json:"key"`     // stable id: dev:ino:generation
	Path   string `json:"path"`    // last path seen (informational)
	Offset int64  `json:"offset"`  // end of the last handled line
	Head   string `json:"head"`    // hash of the first HeadLen bytes
	HeadN  int    `json:"head_n"`  // how many bytes Head covers
	Gen    int    `json:"gen"`     // bumped when the content was replaced
	DevIno string `json:"dev_ino"` // device:inode
}

type positionsFile struct {
	Version int        `json:"version"`
	Files   []position `json:"files"`
}

const positionsVersion = 1

// errUnusable marks a positions file whose content cannot be used:
// corrupt, or written by another version. It is kept aside (setAside) and
// reading starts as without one; a file that cannot be read at all stays
// an error.
var errUnusable = errors.New("unusable positions file")

// loadPositions reads the positions file; a missing file is empty (and
// found false).
func loadPositions(path string) (pos map[string]position, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]position{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("positions %s: %w", path, err)
	}
	var pf positionsFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return nil, true, fmt.Errorf("positions %s: %w: %w", path, errUnusable, err)
	}
	if pf.Version != positionsVersion {
		return nil, true, fmt.Errorf("positions %s: %w: version %d, want %d", path, errUnusable, pf.Version, positionsVersion)
	}
	out := make(map[string]position, len(pf.Files))
	for _, p := range pf.Files {
		if p.DevIno == "" || p.Offset < 0 {
			return nil, true, fmt.Errorf("positions %s: %w: bad entry for %q (dev:ino %q, offset %d)", path, errUnusable, p.Path, p.DevIno, p.Offset)
		}
		out[p.DevIno] = p
	}
	return out, true, nil
}

// setAside renames an unusable positions file to path.bad (replacing an
// older one) and returns that name.
func setAside(path string) (string, error) {
	kept := path + ".bad"
	if err := os.Rename(path, kept); err != nil {
		return "", fmt.Errorf("positions %s: keeping it aside: %w", path, err)
	}
	return kept, nil
}

// savePositions writes the positions atomically: a temp file in the same
// directory, optionally fsynced, renamed over the old one.
func savePositions(path string, pos map[string]position, sync bool) error {
	pf := positionsFile{Version: positionsVersion, Files: make([]position, 0, len(pos))}
	for _, p := range pos {
		pf.Files = append(pf.Files, p)
	}
	sort.Slice(pf.Files, func(i, j int) bool { return pf.Files[i].DevIno < pf.Files[j].DevIno })
	data, err := json.Marshal(pf)
	if err != nil {
		return fmt.Errorf("positions %s: %w", path, err)
	}
	tmp := path + ".tmp" // one Tailer per positions file
	if err := writeFile(tmp, data, sync); err != nil {
		return fmt.Errorf("positions %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("positions %s: %w", path, err)
	}
	if sync {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// writeFile writes a new file readable by its owner only (the positions
// name the server's logs and their layout); a file left over from a crash
// is replaced, never reused with its old mode.
func writeFile(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		if err = os.Remove(path); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
