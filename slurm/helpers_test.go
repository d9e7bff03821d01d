package slurm

import (
	"io"
	"strconv"
	"strings"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func strconvID(id int64) string { return strconv.FormatInt(id, 10) }
