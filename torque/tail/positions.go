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

// loadPositions reads the positions file; a missing file is empty.
func loadPositions(path string) (map[string]position, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]position{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("positions %s: %w", path, err)
	}
	var pf positionsFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return nil, fmt.Errorf("positions %s: %w", path, err)
	}
	if pf.Version != positionsVersion {
		return nil, fmt.Errorf("positions %s: version %d, want %d", path, pf.Version, positionsVersion)
	}
	out := make(map[string]position, len(pf.Files))
	for _, p := range pf.Files {
		if p.DevIno == "" || p.Offset < 0 {
			return nil, fmt.Errorf("positions %s: bad entry %+v", path, p)
		}
		out[p.DevIno] = p
	}
	return out, nil
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

func writeFile(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
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
