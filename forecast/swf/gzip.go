package swf

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

// Unzipped is r's content, gunzipped when it starts with gzip's magic
// number (whatever the file is called); gz says whether it did. A trace
// reader takes what it returns.
func Unzipped(r io.Reader) (_ io.Reader, gz bool, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, false, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, fmt.Errorf("gzip: %w", err)
	}
	return z, true, nil
}
